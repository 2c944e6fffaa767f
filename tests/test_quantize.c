/* `forge-roofline quantize` and the GGUF writer behind it: a written file reads back to the weights it was
 * written from, blocks byte for byte (column panels and an untied LM head included), keeps its source's
 * metadata, and decodes to the same logits, bit for bit, as load-time quantisation (`--dtype`) of the same
 * source, for GGUF, safetensors and synthetic sources. Then its bad input, refused in one line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/file_map.h"
#include "model/gguf.h"
#include "model/gguf_qwen3_write.h"
#include "model/weights_file.h"
#include "tests/cli_run.h"
#include "tests/model_fixtures.h"

#define FIX "tests/fixtures/gguf/"

static void tmp_path(char *path, size_t len, const char *tag) {
    snprintf(path, len, "/tmp/fr-test-quantize-%d-%s", (int)getpid(), tag);
}

/* Writes w, loads the file back into weights of w's type and expects every byte of the allocation equal. */
static void expect_round_trip(const struct qwen3_weights *w, const char *tag) {
    char path[128];
    tmp_path(path, sizeof path, tag);
    struct fr_err err = {{0}};
    cr_assert_eq(gguf_qwen3_write(path, w, NULL, &err), 0, "%s", err.msg);
    struct qwen3_config c;
    cr_assert_eq(weights_file_config(path, NULL, &c, &err), 0, "%s", err.msg);
    cr_expect_eq(c.tied_embeddings, w->cfg.tied_embeddings);
    struct qwen3_weights back;
    cr_assert_eq(qwen3_weights_alloc(&back, &c, w->wtype, &err), 0, "%s", err.msg);
    cr_assert_eq(weights_file_load(path, &back, &err), 0, "%s", err.msg);
    cr_assert_eq(back.total_bytes, w->total_bytes);
    cr_expect_eq(memcmp(back.base, w->base, w->total_bytes), 0, "%s: weights read back differ", tag);
    qwen3_weights_free(&back);
    remove(path);
}

/* Synthetic weights in each block type on a config with column panels (down's 2112 columns) and an
 * untied LM head, and the tiny tied one. */
Test(quantize, writer_round_trip_with_panels_and_lm_head, .timeout = 60) {
    static const int panelled[9] = {64, 2112, 2, 4, 2, 32, 100, 64, 0};
    struct qwen3_config cfgs[2] = {fixture_config("panels", panelled, 10000.0), fixture_tiny_config()};
    static const enum fr_dtype types[] = {FR_DTYPE_Q8_0, FR_DTYPE_Q4_0, FR_DTYPE_BF16};
    for (int c = 0; c < 2; c++)
        for (int t = 0; t < 3; t++) {
            struct qwen3_weights w;
            struct fr_err err = {{0}};
            cr_assert_eq(qwen3_weights_alloc(&w, &cfgs[c], types[t], &err), 0, "%s", err.msg);
            qwen3_weights_init_synthetic(&w, 7);
            char tag[48];
            snprintf(tag, sizeof tag, "%s-%s.gguf", cfgs[c].name, fr_dtype_name(types[t]));
            expect_round_trip(&w, tag);
            qwen3_weights_free(&w);
        }
}

static int kv_bytes_eq(const struct gguf_file *a, const struct gguf_kv *x, const struct gguf_file *b,
                       const struct gguf_kv *y) {
    size_t xs = (size_t)((const unsigned char *)x->key - a->buf) - 8,
           ys = (size_t)((const unsigned char *)y->key - b->buf) - 8;
    return x->end - xs == y->end - ys && memcmp(a->buf + xs, b->buf + ys, x->end - xs) == 0;
}

/* A GGUF source's metadata (tokenizer included) is kept pair for pair; general.file_type says the type. */
Test(quantize, keeps_the_source_metadata, .timeout = 60) {
    char out[128], cmd[256];
    tmp_path(out, sizeof out, "meta.gguf");
    static struct cli_result r;
    snprintf(cmd, sizeof cmd, "quantize --weights " FIX "tiny-bf16.gguf --dtype q4_0 --out %s", out);
    cli_run(&r, 1, cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "matrices q4_0") != NULL, "%s", r.err);
    struct file_map ms, mo;
    struct fr_err err = {{0}};
    struct gguf_file src, dst;
    cr_assert_eq(file_map_open(FIX "tiny-bf16.gguf", 4, &ms, &err), 0, "%s", err.msg);
    cr_assert_eq(file_map_open(out, 4, &mo, &err), 0, "%s", err.msg);
    cr_assert_eq(gguf_parse(ms.data, ms.len, "src", &src, &err), 0, "%s", err.msg);
    cr_assert_eq(gguf_parse(mo.data, mo.len, "out", &dst, &err), 0, "%s", err.msg);
    cr_expect_eq(dst.n_kv, src.n_kv + 1); /* general.quantization_version added */
    for (uint64_t i = 0; i < src.n_kv; i++) {
        const struct gguf_kv *k = &src.kv[i];
        char key[96];
        snprintf(key, sizeof key, "%.*s", (int)k->key_len, k->key);
        const struct gguf_kv *o = gguf_find_kv(&dst, key);
        cr_assert_not_null(o, "%s lost", key);
        if (strcmp(key, "general.file_type") != 0)
            cr_expect(kv_bytes_eq(&src, k, &dst, o), "%s changed", key);
    }
    uint64_t ft, qv;
    cr_expect_eq(gguf_get_uint(&dst, "general.file_type", &ft, &err), 0);
    cr_expect_eq(ft, 2); /* LLAMA_FTYPE_MOSTLY_Q4_0 */
    cr_expect_eq(gguf_get_uint(&dst, "general.quantization_version", &qv, &err), 0);
    cr_expect_eq(qv, 2);
    cr_expect_eq(dst.n_tensors, src.n_tensors);
    for (uint64_t i = 0; i < dst.n_tensors; i++) {
        const struct gguf_tensor *t = &dst.tensors[i];
        cr_expect_eq(t->type, t->ndim == 2 ? (uint32_t)GGUF_GGML_Q4_0 : (uint32_t)GGUF_GGML_F32, "%.*s",
                     (int)t->name_len, t->name);
    }
    gguf_free(&src);
    gguf_free(&dst);
    file_map_close(&ms);
    file_map_close(&mo);
    remove(out);
}

/* quantize then decode the file, against decode of the source with --dtype: the same logits, bit for bit. */
static void expect_same_logits(const char *source_args, const char *dtype, const char *tag) {
    char out[128], la[128], lb[128], cmd[512];
    tmp_path(out, sizeof out, tag);
    tmp_path(la, sizeof la, "a.f32");
    tmp_path(lb, sizeof lb, "b.f32");
    static struct cli_result r, a, b;
    snprintf(cmd, sizeof cmd, "quantize %s --dtype %s --out %s", source_args, dtype, out);
    cli_run(&r, 1, cmd);
    cr_assert_eq(r.status, 0, "%s: %s", cmd, r.err);
    snprintf(cmd, sizeof cmd, "decode --weights %s --prompt-ids 72,101,108,60 --max-new 6 --logits-out %s",
             out, la);
    cli_run(&a, 1, cmd);
    cr_assert_eq(a.status, 0, "%s: %s", cmd, a.err);
    snprintf(cmd, sizeof cmd, "decode %s --dtype %s --prompt-ids 72,101,108,60 --max-new 6 --logits-out %s",
             source_args, dtype, lb);
    cli_run(&b, 1, cmd);
    cr_assert_eq(b.status, 0, "%s: %s", cmd, b.err);
    cr_expect_str_eq(a.out, b.out, "%s: generated ids differ", tag);
    struct file_map fa, fb;
    struct fr_err err = {{0}};
    cr_assert_eq(file_map_open(la, 4, &fa, &err), 0, "%s", err.msg);
    cr_assert_eq(file_map_open(lb, 4, &fb, &err), 0, "%s", err.msg);
    cr_expect(fa.len == fb.len && memcmp(fa.data, fb.data, fa.len) == 0, "%s: logits differ", tag);
    file_map_close(&fa);
    file_map_close(&fb);
    remove(out);
    remove(la);
    remove(lb);
}

Test(quantize, decodes_as_load_time_quantisation, .timeout = 120) {
    expect_same_logits("--weights " FIX "tiny-bf16.gguf", "q8_0", "gguf-q8.gguf");
    expect_same_logits("--weights " FIX "tiny-f16-untied.gguf", "q4_0", "gguf-q4-untied.gguf");
    expect_same_logits("--model " FIX "config.json --weights " FIX "tiny-bf16.safetensors", "q4_0",
                       "st-q4.gguf");
    expect_same_logits("--model tests/fixtures/tiny-qwen3", "q8_0", "synthetic-q8.gguf");
}

Test(quantize, bad_input_refused, .timeout = 60) {
    const char *bad[] = {
        "quantize --weights " FIX "tiny-q8_0.gguf --dtype q4_0 --out /tmp/fr-never.gguf",
        "quantize --weights " FIX "tiny-bf16.gguf --dtype bf16 --out /tmp/fr-never.gguf",
        "quantize --weights " FIX "tiny-bf16.gguf --dtype q8_0",
        "quantize --weights " FIX "tiny-bf16.gguf --out /tmp/fr-never.gguf",
        "quantize --dtype q8_0 --out /tmp/fr-never.gguf",
        "quantize --weights " FIX "tiny-bf16.gguf --dtype q8_0 --out " FIX "tiny-bf16.gguf",
        "quantize --weights " FIX "tiny-bf16.safetensors --dtype q8_0 --out /tmp/fr-never.gguf",
    };
    cli_expect_usage_errors(1, bad, sizeof bad / sizeof bad[0]);
    cr_expect_neq(access("/tmp/fr-never.gguf", F_OK), 0, "a refused command wrote its --out");
    /* a directory that does not exist: a failed write (exit 1) leaves nothing */
    static struct cli_result r;
    cli_run(&r, 1, "quantize --weights " FIX "tiny-bf16.gguf --dtype q8_0 --out /nonexistent/dir/x.gguf");
    cr_expect_eq(r.status, 1, "%s", r.err);
    cr_expect(strstr(r.err, "/nonexistent/dir/x.gguf") != NULL, "%s", r.err);
}
