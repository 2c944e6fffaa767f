/* forge-roofline tokenize / detokenize: Qwen3's tokenizer for scripts. tokenize prints the ids of --text (or
 * of stdin) comma-separated on one line, ready for decode --prompt-ids; detokenize writes the bytes of
 * --ids (or of stdin's list) to stdout as they are. The tokenizer comes from a GGUF file's metadata or a
 * tokenizer.json (--tokenizer FILE, or --weights FILE.gguf). Checked in tests/test_tokenizer.c. */
#include "bench/cli/cli.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tokenizer.h"

struct tok_args {
    const char *file, *text, *ids;
};

static int parse(int argc, char **argv, const char *cmd, const char *value_flag, struct tok_args *a,
                 int *help) {
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            *help = 1;
            return 0;
        }
        if (i + 1 >= argc) return cli_usage_error("%s: %s needs a value (try --help)", cmd, o);
        const char *v = argv[++i];
        if (strcmp(o, "--tokenizer") == 0 || strcmp(o, "--weights") == 0) {
            if (a->file) return cli_usage_error("%s: give one of --tokenizer and --weights", cmd);
            a->file = v;
        } else if (strcmp(o, value_flag) == 0) {
            *(strcmp(value_flag, "--text") == 0 ? &a->text : &a->ids) = v;
        } else {
            return cli_usage_error("%s: unknown option '%s' (try --help)", cmd, o);
        }
    }
    if (!a->file) return cli_usage_error("%s: --tokenizer FILE (tokenizer.json or .gguf) is required", cmd);
    return 0;
}

/* All of stdin into a malloc'd buffer. */
static char *read_stdin(size_t *len) {
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + n, 1, cap - n, stdin)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) free(buf);
            buf = nb, cap *= 2;
        }
    }
    if (buf) buf[n] = '\0';
    *len = n;
    return buf;
}

int cmd_tokenize(int argc, char **argv) {
    struct tok_args a;
    int help = 0, rc = parse(argc, argv, "tokenize", "--text", &a, &help);
    if (rc) return rc;
    if (help) {
        printf("usage: forge-roofline tokenize --tokenizer FILE [--text TEXT]\n"
               "  --tokenizer FILE  tokenizer.json, or a GGUF file's tokenizer (--weights FILE.gguf is the "
               "same)\n"
               "  --text TEXT       the text (default: all of stdin, bytes as they are)\n"
               "Prints the ids comma-separated on one line (decode --prompt-ids takes them).\n");
        return CLI_EXIT_OK;
    }
    struct tokenizer t;
    struct fr_err err = {{0}};
    if (tokenizer_load(&t, a.file, &err)) return cli_usage_error("tokenize: %s", err.msg);
    size_t len = a.text ? strlen(a.text) : 0;
    char *in = a.text ? NULL : read_stdin(&len);
    int *ids = NULL, n = 0;
    if (!a.text && !in)
        rc = cli_fail("tokenize: out of memory reading stdin");
    else if (tokenizer_encode(&t, a.text ? a.text : in, len, &ids, &n, &err))
        rc = cli_usage_error("tokenize: %s", err.msg);
    for (int i = 0; rc == 0 && i < n; i++) printf("%s%d", i ? "," : "", ids[i]);
    if (rc == 0) printf("\n");
    if (rc == 0 && fflush(stdout)) rc = cli_fail("tokenize: writing the ids failed");
    free(ids);
    free(in);
    tokenizer_free(&t);
    return rc;
}

int cmd_detokenize(int argc, char **argv) {
    struct tok_args a;
    int help = 0, rc = parse(argc, argv, "detokenize", "--ids", &a, &help);
    if (rc) return rc;
    if (help) {
        printf("usage: forge-roofline detokenize --tokenizer FILE [--ids 1,2,3]\n"
               "  --tokenizer FILE  tokenizer.json, or a GGUF file's tokenizer (--weights FILE.gguf is the "
               "same)\n"
               "  --ids LIST        comma-separated ids (default: the list on stdin)\n"
               "Writes the tokens' bytes to stdout as they are (added tokens as their text).\n");
        return CLI_EXIT_OK;
    }
    size_t len = 0;
    char *in = a.ids ? NULL : read_stdin(&len);
    const char *list = a.ids ? a.ids : in;
    if (!list) return cli_fail("detokenize: out of memory reading stdin");
    size_t cap = strlen(list) / 2 + 1;
    long *vals = malloc(sizeof *vals * cap);
    if (in) in[strcspn(in, "\r\n")] = '\0';
    int n = vals ? cli_parse_long_list(list, 0, INT_MAX, vals, (int)(cap < INT_MAX ? cap : INT_MAX)) : -1;
    struct tokenizer t = {0};
    struct fr_err err = {{0}};
    if (n < 0)
        rc = cli_usage_error("detokenize: '%.64s' is not a comma-separated list of ids >= 0", list);
    else if (tokenizer_load(&t, a.file, &err))
        rc = cli_usage_error("detokenize: %s", err.msg);
    /* every id is checked before a byte is written: no partial output */
    for (int i = 0; rc == 0 && i < n; i++) {
        size_t l;
        if (!tokenizer_piece(&t, (int)vals[i], &l))
            rc = cli_usage_error("detokenize: id %ld (position %d) has no token in %s (%d ids)", vals[i], i,
                                 a.file, t.n_vocab);
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        size_t l;
        const unsigned char *p = tokenizer_piece(&t, (int)vals[i], &l);
        fwrite(p, 1, l, stdout);
    }
    if (rc == 0 && fflush(stdout)) rc = cli_fail("detokenize: writing the text failed");
    tokenizer_free(&t);
    free(vals);
    free(in);
    return rc;
}
