/* Q8_0 and Q4_0 GGUF files against code we did not write: tests/fixtures/gguf/tiny-q8_0.gguf and
 * tiny-q4_0.gguf were quantised by llama.cpp's gguf-py, and tiny-q*_0-ref.gguf hold in f32 what gguf-py's
 * own dequantiser makes of those blocks (scripts/fixtures/make_gguf_fixtures.py). Read as q8_0/q4_0 weights
 * and dequantised by kernels/quant.c, every matrix must equal that reference exactly (a block's values,
 * f16 scale times a small integer, are exact in f32). Then the file's type against --dtype, a file mixing
 * types (llama.cpp's Q8_0 embedding in a Q4_0 file; a Q6_K one, tiny256-q4_0-q6_k.gguf, whose blocks
 * gguf-py dequantised into its -ref.gguf), and malformed quantised tensors, each refused in one line. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/quant.h"
#include "kernels/quant_dequant.h"
#include "model/decode.h"
#include "model/file_map.h"
#include "model/gguf.h"
#include "model/gguf_qwen3.h"
#include "model/gguf_write.h"
#include "model/weights_file.h"
#include "tests/cli_run.h"
#include "tests/gguf_testutil.h"

/* A row-major [rows][cols] matrix of w (the tiny model's matrices are all narrower than a column panel), read
 * row by row from its memory order (kernels/quant.h), against ref's f32 copy of it: exactly equal. */
static void expect_matrix_eq(const void *q, enum fr_dtype t, const float *ref, size_t rows, size_t cols,
                             const char *what) {
    size_t n = rows * cols;
    float *got = malloc(n * sizeof *got);
    cr_assert_not_null(got);
    for (size_t r = 0; r < rows; r++)
        quant_matrix_dequantize(got + r * cols, t, q, (int)rows, (int)cols, (int)r, 0, (int)cols);
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (got[i] != ref[i]) bad++, first = first < n ? first : i;
    cr_expect_eq(bad, 0, "%s (%s): %zu of %zu values differ from gguf-py's, first at %zu: %g vs %g", what,
                 fr_dtype_name(t), bad, n, first, first < n ? got[first] : 0.0, first < n ? ref[first] : 0.0);
    free(got);
}

static void expect_reads_as_reference(const char *file, const char *ref_file, enum fr_dtype t) {
    struct qwen3_config c = gt_config_of(file);
    char note[256];
    enum fr_dtype got_t = gt_wtype(file, FR_DTYPE_BF16, false, note, sizeof note);
    cr_expect_eq(got_t, t, "%s runs in %s", file, fr_dtype_name(got_t));
    cr_expect_str_eq(note, "");
    struct qwen3_weights w, r;
    gt_load_as(file, t, &w);
    gt_load_as(ref_file, FR_DTYPE_F32, &r);
    size_t h = (size_t)c.hidden, inter = (size_t)c.intermediate;
    size_t q_dim = (size_t)(c.n_heads * c.head_dim), qkv = q_dim + 2 * (size_t)(c.n_kv_heads * c.head_dim);
    expect_matrix_eq(w.embed, t, r.embed, (size_t)c.vocab, h, "token_embd");
    for (int l = 0; l < c.n_layers; l++) {
        const struct qwen3_layer_weights *a = &w.layers[l], *b = &r.layers[l];
        expect_matrix_eq(a->qkv, t, b->qkv, qkv, h, "attn_q/k/v");
        expect_matrix_eq(a->o, t, b->o, h, q_dim, "attn_output");
        expect_matrix_eq(a->gate_up, t, b->gate_up, 2 * inter, h, "ffn_gate/up");
        expect_matrix_eq(a->down, t, b->down, h, inter, "ffn_down");
        /* norms stay f32 (1 + k/128: bf16 values, so the bf16 rounding of a quantised model keeps them) */
        cr_expect_eq(memcmp(a->attn_norm, b->attn_norm, h * 4), 0, "layer %d attn_norm", l);
        cr_expect_eq(memcmp(a->q_norm, b->q_norm, (size_t)c.head_dim * 4), 0, "layer %d q_norm", l);
    }
    cr_expect_eq(memcmp(w.final_norm, r.final_norm, h * 4), 0);
    qwen3_weights_free(&w);
    qwen3_weights_free(&r);
}

Test(gguf_quant, q8_0_reads_as_gguf_py_dequantises) {
    expect_reads_as_reference(FIX "tiny-q8_0.gguf", FIX "tiny-q8_0-ref.gguf", FR_DTYPE_Q8_0);
}

Test(gguf_quant, q4_0_reads_as_gguf_py_dequantises) {
    expect_reads_as_reference(FIX "tiny-q4_0.gguf", FIX "tiny-q4_0-ref.gguf", FR_DTYPE_Q4_0);
}

/* The quantised file decodes like the f32 decode of its own dequantised values, within what quantising x
 * to 8 bits a block moves (tests/test_quant_model.c bounds the same at 3 % of the largest logit). */
Test(gguf_quant, decode_close_to_the_dequantised_f32_decode, .timeout = 60) {
    static const char *const files[][2] = {{FIX "tiny-q8_0.gguf", FIX "tiny-q8_0-ref.gguf"},
                                           {FIX "tiny-q4_0.gguf", FIX "tiny-q4_0-ref.gguf"}};
    static const enum fr_dtype types[] = {FR_DTYPE_Q8_0, FR_DTYPE_Q4_0};
    static const int prompt[] = {72, 101, 108, 260, 298};
    for (int f = 0; f < 2; f++) {
        float gap = gt_decode_gap(files[f][0], types[f], files[f][1], prompt, 5);
        cr_expect(gap <= 0.03f, "%s: logits differ by %g of the largest", files[f][0], (double)gap);
    }
}

/* llama.cpp keeps a Q4_0 file's embedding in another type (Q8_0 where its rows are no multiple of 256): it is
 * requantised to Q4_0 at load and said so; the layers keep their blocks byte for byte. */
/* A [rows][cols] Q4_0 matrix at q (memory order), requantised at load from the f32 values want: within Q4_0's
 * step (max|w| / 8 a block, a whole one at the clamped end) of them, plus the bf16 rounding of the values and
 * the f16 scale's error, each well under max|w| / 256. */
static void expect_requantised_q4_0(const void *q, const float *want, int rows, int cols) {
    const size_t n = (size_t)rows * (size_t)cols;
    float *got = malloc(n * sizeof *got);
    cr_assert_not_null(got);
    for (int r = 0; r < rows; r++)
        quant_matrix_dequantize(got + (size_t)r * (size_t)cols, FR_DTYPE_Q4_0, q, rows, cols, r, 0, cols);
    for (size_t b = 0; b < n; b += QUANT_BLOCK) {
        float amax = 0, worst = 0;
        for (size_t i = b; i < b + QUANT_BLOCK; i++) {
            amax = fmaxf(amax, fabsf(want[i]));
            worst = fmaxf(worst, fabsf(got[i] - want[i]));
        }
        cr_expect(worst <= amax / 8 + amax / 256, "embedding block %zu: off by %g, step %g", b / QUANT_BLOCK,
                  worst, amax / 8);
    }
    free(got);
}

Test(gguf_quant, mixed_file_converts_the_embedding_and_says_so) {
    struct qwen3_config c = gt_config_of(FIX "tiny-q4_0-mixed.gguf");
    struct fr_err err = {{0}};
    enum fr_dtype t;
    char note[256];
    cr_assert_eq(
        weights_file_wtype(FIX "tiny-q4_0-mixed.gguf", &c, FR_DTYPE_BF16, false, &t, note, sizeof note, &err),
        0, "%s", err.msg);
    cr_expect_eq(t, FR_DTYPE_Q4_0);
    cr_expect_str_eq(note, "file q4_0 mix: 14 q4_0 (+ embedding q8_0); runs per tensor as the file holds it "
                           "(q8_0 1, q4_0 14)");
    struct qwen3_weights m, pure, ref8;
    gt_load_as(FIX "tiny-q4_0-mixed.gguf", FR_DTYPE_Q4_0, &m);
    gt_load_as(FIX "tiny-q4_0.gguf", FR_DTYPE_Q4_0, &pure);
    gt_load_as(FIX "tiny-q8_0-ref.gguf", FR_DTYPE_F32, &ref8);
    size_t h = (size_t)c.hidden;
    size_t qkv = (size_t)((c.n_heads + 2 * c.n_kv_heads) * c.head_dim) * h;
    for (int l = 0; l < c.n_layers; l++) {
        cr_expect_eq(memcmp(m.layers[l].qkv, pure.layers[l].qkv, fr_dtype_bytes(FR_DTYPE_Q4_0, qkv)), 0);
        cr_expect_eq(memcmp(m.layers[l].down, pure.layers[l].down,
                            fr_dtype_bytes(FR_DTYPE_Q4_0, h * (size_t)c.intermediate)),
                     0);
    }
    /* the embedding: gguf-py's Q8_0 values, requantised */
    expect_requantised_q4_0(m.embed, ref8.embed, c.vocab, c.hidden);
    qwen3_weights_free(&m);
    qwen3_weights_free(&pure);
    qwen3_weights_free(&ref8);
}

/* --dtype must be the file's type or left out; weights of another type cannot take the file's blocks. */
Test(gguf_quant, dtype_mismatch_refused) {
    struct qwen3_config c = gt_config_of(FIX "tiny-q8_0.gguf");
    struct fr_err err = {{0}};
    enum fr_dtype t;
    cr_expect_neq(weights_file_wtype(FIX "tiny-q8_0.gguf", &c, FR_DTYPE_Q4_0, true, &t, NULL, 0, &err), 0);
    cr_expect(strstr(err.msg, "holds q8_0 matrices") && strstr(err.msg, "--dtype q4_0"), "%s", err.msg);
    cr_expect_eq(weights_file_wtype(FIX "tiny-q8_0.gguf", &c, FR_DTYPE_Q8_0, true, &t, NULL, 0, &err), 0);
    /* an element-type file runs in whatever --dtype says */
    cr_expect_eq(weights_file_wtype(FIX "tiny-bf16.gguf", &c, FR_DTYPE_Q4_0, true, &t, NULL, 0, &err), 0);
    cr_expect_eq(t, FR_DTYPE_Q4_0);
    struct qwen3_weights w;
    cr_assert_eq(qwen3_weights_alloc(&w, &c, FR_DTYPE_BF16, &err), 0, "%s", err.msg);
    cr_expect_neq(weights_file_load(FIX "tiny-q8_0.gguf", &w, &err), 0);
    cr_expect(strstr(err.msg, "holds q8_0 matrices") != NULL, "%s", err.msg);
    qwen3_weights_free(&w);
    const char *bad[] = {
        "decode --weights " FIX "tiny-q8_0.gguf --dtype bf16 --prompt-ids 1 --max-new 1",
        "decode --weights " FIX "tiny-q4_0.gguf --dtype q8_0 --prompt-ids 1 --max-new 1",
        "--weights " FIX "tiny-q4_0.gguf --dtype f32 --quick",
    };
    cli_expect_usage_errors(1, bad, sizeof bad / sizeof bad[0]);
}

/* --- malformed quantised tensors, made by editing tiny-q8_0.gguf --- */

/* Parses, checks the config and the tensors of buf[0, len); expects a one-line failure naming want1 and
 * want2. */
static void expect_fail(const unsigned char *buf, size_t len, const char *want1, const char *want2) {
    struct gguf_file g;
    struct fr_err err = {{0}};
    struct qwen3_config c;
    struct gguf_qwen3_types t;
    int rc = gguf_parse(buf, len, "bad.gguf", &g, &err);
    if (rc == 0) {
        rc = gguf_qwen3_config(&g, &c, &err);
        if (rc == 0) rc = gguf_qwen3_types(&g, &c, &t, &err);
        gguf_free(&g);
    }
    cr_expect_neq(rc, 0, "accepted a file that should fail with '%s'", want1);
    cr_expect(strchr(err.msg, '\n') == NULL, "message '%s' spans lines", err.msg);
    cr_expect(strstr(err.msg, "bad.gguf") && strstr(err.msg, want1), "message '%s' lacks '%s'", err.msg,
              want1);
    if (want2) cr_expect(strstr(err.msg, want2) != NULL, "message '%s' lacks '%s'", err.msg, want2);
}

/* The byte offset of a tensor's ndim field (after its name) in the index. */
static size_t info_off(const unsigned char *buf, size_t len, const char *name) {
    struct gguf_file g;
    struct fr_err err = {{0}};
    cr_assert_eq(gguf_parse(buf, len, "t.gguf", &g, &err), 0, "%s", err.msg);
    const struct gguf_tensor *t = gguf_find_tensor(&g, name);
    cr_assert_not_null(t, "%s", name);
    size_t off = (size_t)((const unsigned char *)t->name - buf) + t->name_len;
    gguf_free(&g);
    return off;
}

static void put_u32(unsigned char *p, uint32_t v) {
    memcpy(p, &v, 4);
}
static void put_u64(unsigned char *p, uint64_t v) {
    memcpy(p, &v, 8);
}

Test(gguf_quant, malformed_quantised_tensors) {
    size_t len;
    unsigned char *buf = gt_copy_of(FIX "tiny-q8_0.gguf", &len), *e = malloc(len);
    /* truncated: the last tensor's blocks run past the end */
    for (size_t cut = 1; cut <= 34; cut += 33)
        expect_fail(buf, len - cut, "run past the end of the data", NULL);
    /* rows that are not whole blocks: 16 columns of q8_0 */
    size_t q = info_off(buf, len, "blk.1.attn_q.weight"); /* ndim (4), dims (8 each), type (4), offset */
    memcpy(e, buf, len);
    put_u64(e + q + 4, 16);
    expect_fail(e, len, "first dimension 16 is not a multiple of q8_0's block of 32", "blk.1.attn_q.weight");
    /* 64 columns where the config has 32: the blocks no longer match the model */
    memcpy(e, buf, len);
    put_u64(e + q + 4, 64);
    put_u64(e + q + 12, 32);
    expect_fail(e, len, "dims [64, 32], expected [32, 64]", "blk.1.attn_q.weight");
    /* (a layer matrix in q4_0 among q8_0 ones is read: a file runs its formats per tensor) */
    /* a type the loader does not read (q8_1: 36 bytes a block, so its rows are halved to stay inside the
     * tensor's bytes), and a quantised norm */
    memcpy(e, buf, len);
    put_u32(e + q + 20, 9);
    put_u64(e + q + 12, 32);
    expect_fail(e, len,
                "type q8_1 is not read (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k)",
                "blk.1.attn_q.weight");
    size_t nrm = info_off(buf, len, "blk.0.attn_norm.weight");
    memcpy(e, buf, len);
    put_u32(e + nrm + 4 + 8, GGUF_GGML_Q8_0);
    expect_fail(e, len, "type q8_0 is not read for a norm", "blk.0.attn_norm.weight");
    /* through the CLI: one line, exit status 2 */
    char path[] = "/tmp/fr-test-q8-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, buf, len - 40), (ssize_t)(len - 40));
    close(fd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "decode --weights %s --prompt-ids 1 --max-new 1", path);
    const char *bad[] = {cmd};
    cli_expect_usage_errors(1, bad, 1);
    remove(path);
    free(e);
    free(buf);
}

/* --- llama.cpp's Q6_K embedding in a Q4_0 file (tiny256: rows of 256, one superblock) --- */

/* The file's Q6_K blocks, dequantised here, against what gguf-py's dequantiser made of them (the reference
 * file's f32 embedding): exactly equal, as d * scale * (q - 32) is in f32 on both sides. */
Test(gguf_quant, q6_k_dequantises_as_gguf_py) {
    size_t len;
    unsigned char *buf = gt_copy_of(FIX "tiny256-q4_0-q6_k.gguf", &len);
    struct gguf_file g;
    struct fr_err err = {{0}};
    cr_assert_eq(gguf_parse(buf, len, "t.gguf", &g, &err), 0, "%s", err.msg);
    const struct gguf_tensor *t = gguf_find_tensor(&g, "token_embd.weight");
    cr_assert_not_null(t);
    cr_assert_eq(t->type, GGUF_GGML_Q6_K);
    struct qwen3_config c = gt_config_of(FIX "tiny256-q4_0-q6_k.gguf");
    struct qwen3_weights r;
    gt_load_as(FIX "tiny256-q4_0-q6_k-ref.gguf", FR_DTYPE_F32, &r);
    size_t n = (size_t)c.vocab * (size_t)c.hidden, bad = 0;
    float *got = malloc(n * sizeof *got);
    cr_assert_not_null(got);
    quant_dequantize_file(got, QUANT_FILE_Q6_K, g.buf + g.data_off + t->offset, n);
    const float *want = r.embed;
    for (size_t i = 0; i < n; i++) bad += got[i] != want[i];
    cr_expect_eq(bad, 0, "%zu of %zu values differ from gguf-py's", bad, n);
    free(got);
    gguf_free(&g);
    free(buf);
    qwen3_weights_free(&r);
}

/* The file runs in q4_0 and says that its embedding was converted; the layers are the file's blocks, the
 * embedding is gguf-py's Q6_K values requantised (within Q4_0's step of them). */
Test(gguf_quant, q6_k_embedding_converts_and_says_so) {
    const char *file = FIX "tiny256-q4_0-q6_k.gguf";
    struct qwen3_config c = gt_config_of(file);
    struct fr_err err = {{0}};
    enum fr_dtype t;
    char note[256];
    cr_assert_eq(weights_file_wtype(file, &c, FR_DTYPE_BF16, false, &t, note, sizeof note, &err), 0, "%s",
                 err.msg);
    cr_expect_eq(t, FR_DTYPE_Q4_0);
    cr_expect_str_eq(note, "file q4_0 mix: 7 q4_0 (+ embedding q6_k); runs per tensor as the file holds it "
                           "(q4_0 7, q6_k 1)");
    struct qwen3_weights m, r;
    gt_load_as(file, FR_DTYPE_Q4_0, &m);
    gt_load_as(FIX "tiny256-q4_0-q6_k-ref.gguf", FR_DTYPE_F32, &r);
    size_t h = (size_t)c.hidden, q_dim = (size_t)(c.n_heads * c.head_dim);
    size_t qkv = q_dim + 2 * (size_t)(c.n_kv_heads * c.head_dim);
    expect_matrix_eq(m.layers[0].qkv, FR_DTYPE_Q4_0, r.layers[0].qkv, qkv, h, "attn_q/k/v");
    expect_matrix_eq(m.layers[0].down, FR_DTYPE_Q4_0, r.layers[0].down, h, (size_t)c.intermediate,
                     "ffn_down");
    expect_requantised_q4_0(m.embed, r.embed, c.vocab, c.hidden);
    qwen3_weights_free(&m);
    qwen3_weights_free(&r);
}

/* Q6_K is read for a matrix outside the layers only: a Q6_K norm is refused in one line naming it (its 210
 * bytes fit where its 1024 f32 bytes were). */
Test(gguf_quant, q6_k_norm_refused) {
    size_t len;
    unsigned char *buf = gt_copy_of(FIX "tiny256-q4_0-q6_k.gguf", &len);
    size_t nrm = info_off(buf, len, "blk.0.attn_norm.weight");
    put_u32(buf + nrm + 4 + 8, GGUF_GGML_Q6_K);
    expect_fail(buf, len, "type q6_k is not read for a norm", "blk.0.attn_norm.weight");
    free(buf);
}

/* A file whose layer matrices are all Q6_K (the tiny256 fixture rewritten with our GGUF writer: its metadata
 * copied, every matrix but the embedding made Q6_K blocks of zeros) runs in Q8_0, every matrix converted,
 * and says its mix (llama-quantize's own Q6_K file: tests/test_gguf_kquant.c). */
Test(gguf_quant, q6_k_layers_convert) {
    size_t len;
    unsigned char *buf = gt_copy_of(FIX "tiny256-q4_0-q6_k.gguf", &len);
    struct gguf_file g;
    struct fr_err err = {{0}};
    cr_assert_eq(gguf_parse(buf, len, "t.gguf", &g, &err), 0, "%s", err.msg);
    char path[] = "/tmp/fr-test-q6k-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    struct gguf_writer w;
    cr_assert_eq(gguf_write_open(&w, path, g.n_kv, g.n_tensors, &err), 0, "%s", err.msg);
    for (uint64_t i = 0; i < g.n_kv; i++) gguf_write_kv_copy(&w, &g, &g.kv[i]);
    uint64_t *bytes = calloc(g.n_tensors, sizeof *bytes); /* 0: the tensor's own bytes, copied */
    cr_assert_not_null(bytes);
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        const struct gguf_tensor *t = &g.tensors[i];
        char name[72];
        memcpy(name, t->name, t->name_len);
        name[t->name_len] = '\0';
        const int layer_matrix = t->ndim == 2 && strncmp(name, "blk.", 4) == 0;
        bytes[i] = layer_matrix ? t->dims[0] * t->dims[1] / 256 * 210 : 0;
        gguf_write_tensor_info(&w, name, t->ndim, t->dims, layer_matrix ? GGUF_GGML_Q6_K : t->type,
                               layer_matrix ? bytes[i] : t->bytes);
    }
    unsigned char *zeros = calloc(1, 1 << 20);
    cr_assert_not_null(zeros);
    for (uint64_t i = 0; i < g.n_tensors; i++) {
        const struct gguf_tensor *t = &g.tensors[i];
        if (bytes[i])
            gguf_write_tensor_data(&w, zeros, bytes[i]);
        else
            gguf_write_tensor_data(&w, g.buf + g.data_off + t->offset, t->bytes);
    }
    cr_assert_eq(gguf_write_close(&w, &err), 0, "%s", err.msg);
    size_t n;
    unsigned char *out = gt_copy_of(path, &n);
    struct gguf_file q;
    struct qwen3_config c;
    struct gguf_qwen3_types types;
    cr_assert_eq(gguf_parse(out, n, "q6.gguf", &q, &err), 0, "%s", err.msg);
    cr_assert_eq(gguf_qwen3_config(&q, &c, &err), 0, "%s", err.msg);
    cr_assert_eq(gguf_qwen3_types(&q, &c, &types, &err), 0, "%s", err.msg);
    cr_expect(types.quantised && !types.convert_all && !types.block && types.wtype == FR_DTYPE_Q6_K);
    cr_expect_str_eq(types.mix, "file q4_0 mix: 7 q6_k (+ embedding q6_k)");
    gguf_free(&q);
    remove(path);
    free(out), free(zeros), free(bytes);
    gguf_free(&g);
    free(buf);
}
