/* The files people download, against llama.cpp's own tools: tests/fixtures/gguf/tiny-k-*.gguf were written
 * by llama.cpp's llama-quantize (Q4_K_M, Q5_K_M, Q6_K, and Q4_1 with Q5_0/Q5_1 tensors) from a random bf16
 * model, and tiny-k-*-ref.gguf hold in f32 what gguf-py's numpy dequantisers make of every tensor
 * (scripts/fixtures/make_kquant_fixtures.sh). Checked: our dequantisers (kernels/quant_dequant.c) give
 * gguf-py's values bit for bit; the files load through the loader in Q8_0 (no K-quant kernels yet, #67) and
 * say their mix, counted here from the file's own index; a decode stays within the Q8_0 requantisation's
 * measured bound of the f32 reference's decode, a bound a flipped scale bit breaks; and malformed copies
 * are refused in one line, exit status 2. */
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
#include "model/weights_file.h"
#include "tests/cli_run.h"
#include "tests/gguf_testutil.h"

static const struct {
    const char *file, *ref, *ftype; /* ftype: general.file_type as llama.h names it */
} fixtures[] = {
    {FIX "tiny-k-q4_k_m.gguf", FIX "tiny-k-q4_k_m-ref.gguf", "q4_k_m"},
    {FIX "tiny-k-q5_k_m.gguf", FIX "tiny-k-q5_k_m-ref.gguf", "q5_k_m"},
    {FIX "tiny-k-q6_k.gguf", FIX "tiny-k-q6_k-ref.gguf", "q6_k"},
    {FIX "tiny-k-q4_1-mix.gguf", FIX "tiny-k-q4_1-mix-ref.gguf", "q4_1"},
};
#define N_FIXTURES (sizeof fixtures / sizeof fixtures[0])

/* ggml's type numbers of the formats no kernel runs, in kernels/quant_dequant.h's order */
static const uint32_t file_only_ggml[QUANT_FILE_COUNT] = {
    [QUANT_FILE_Q4_1] = 3,  [QUANT_FILE_Q5_0] = 6,  [QUANT_FILE_Q5_1] = 7,
    [QUANT_FILE_Q4_K] = 12, [QUANT_FILE_Q5_K] = 13, [QUANT_FILE_Q6_K] = 14};

static int file_only(uint32_t ggml) {
    for (int t = 0; t < QUANT_FILE_COUNT; t++)
        if (file_only_ggml[t] == ggml) return t;
    return -1;
}

struct mapped {
    struct file_map m;
    struct gguf_file g;
};

static void map_parse(const char *path, struct mapped *f) {
    struct fr_err err = {{0}};
    cr_assert_eq(file_map_open(path, 4, &f->m, &err), 0, "%s (run from the repository root)", err.msg);
    cr_assert_eq(gguf_parse(f->m.data, f->m.len, path, &f->g, &err), 0, "%s", err.msg);
}

static void unmap(struct mapped *f) {
    gguf_free(&f->g);
    file_map_close(&f->m);
}

static char *tensor_name(const struct gguf_tensor *t, char *buf) {
    memcpy(buf, t->name, t->name_len);
    buf[t->name_len] = '\0';
    return buf;
}

/* (a) Every tensor of every fixture, dequantised here, against gguf-py's f32 values: the same bits. */
Test(gguf_kquant, dequantises_as_gguf_py_bit_for_bit) {
    int seen[QUANT_FILE_COUNT] = {0};
    for (size_t f = 0; f < N_FIXTURES; f++) {
        struct mapped q, r;
        map_parse(fixtures[f].file, &q);
        map_parse(fixtures[f].ref, &r);
        cr_expect_eq(q.g.n_tensors, r.g.n_tensors);
        for (uint64_t i = 0; i < q.g.n_tensors; i++) {
            const struct gguf_tensor *t = &q.g.tensors[i];
            char name[72];
            const struct gguf_tensor *rt = gguf_find_tensor(&r.g, tensor_name(t, name));
            cr_assert(rt && rt->type == GGUF_GGML_F32, "%s: %s has no f32 reference", fixtures[f].ref, name);
            size_t n = (size_t)(rt->bytes / 4);
            float *got = malloc(n * sizeof *got);
            cr_assert_not_null(got);
            const unsigned char *src = q.g.buf + q.g.data_off + t->offset;
            int ft = file_only(t->type);
            if (ft >= 0) {
                quant_dequantize_file(got, (enum quant_file_type)ft, src, n);
                seen[ft]++;
            } else if (t->type == GGUF_GGML_Q8_0) {
                quant_dequantize_row(got, FR_DTYPE_Q8_0, src, n);
            } else {
                cr_assert_eq(t->type, GGUF_GGML_F32, "%s: %s", fixtures[f].file, name);
                memcpy(got, src, n * 4);
            }
            const unsigned char *want = r.g.buf + r.g.data_off + rt->offset;
            size_t bad = 0, first = 0;
            for (size_t k = 0; k < n; k++)
                if (memcmp(got + k, want + 4 * k, 4) != 0 && bad++ == 0) first = k;
            float w0;
            memcpy(&w0, want + 4 * first, 4);
            cr_expect_eq(bad, 0,
                         "%s: %s: %zu of %zu values differ from gguf-py's, first at %zu: %.9g vs %.9g",
                         fixtures[f].file, name, bad, n, first, (double)got[first], (double)w0);
            free(got);
        }
        unmap(&q);
        unmap(&r);
    }
    for (int t = 0; t < QUANT_FILE_COUNT; t++)
        cr_expect(seen[t] > 0, "no fixture holds a %s tensor", quant_file_format(t)->name);
}

/* (b) Each file opens in q8_0 by default and its note names the mix: the layer matrices' count per type as
 * the file's index has them (counted here, not by the loader), the embedding's type, the run's type and why;
 * the full loader path then gives matrices within Q8_0's step of gguf-py's values. */
static void expect_mix_named(const char *file, const char *ftype, const char *note) {
    struct mapped q;
    map_parse(file, &q);
    int count[64] = {0}, total = 0;
    uint32_t embed_type = 0;
    for (uint64_t i = 0; i < q.g.n_tensors; i++) {
        const struct gguf_tensor *t = &q.g.tensors[i];
        char name[72];
        tensor_name(t, name);
        if (strcmp(name, "token_embd.weight") == 0) embed_type = t->type;
        if (strncmp(name, "blk.", 4) == 0 && t->ndim == 2 && t->type < 64) count[t->type]++, total++;
    }
    cr_expect_eq(total, 14, "%s: %d layer matrices", file, total);
    char want[96], tbuf[24];
    snprintf(want, sizeof want, "file %s mix: ", ftype);
    cr_expect(strncmp(note, want, strlen(want)) == 0, "%s: note '%s' lacks '%s'", file, note, want);
    for (uint32_t ty = 0; ty < 64; ty++) {
        if (!count[ty]) continue;
        char a[48], b[48];
        snprintf(a, sizeof a, ": %d %s", count[ty], gguf_ggml_type_name(ty, tbuf, sizeof tbuf));
        snprintf(b, sizeof b, ", %d %s", count[ty], gguf_ggml_type_name(ty, tbuf, sizeof tbuf));
        cr_expect(strstr(note, a) || strstr(note, b), "%s: note '%s' does not count %d %s", file, note,
                  count[ty], gguf_ggml_type_name(ty, tbuf, sizeof tbuf));
    }
    snprintf(want, sizeof want, "(+ embedding %s)", gguf_ggml_type_name(embed_type, tbuf, sizeof tbuf));
    cr_expect(strstr(note, want), "%s: note '%s' lacks '%s'", file, note, want);
    cr_expect(strstr(note, "; runs per tensor"), "%s: note '%s'", file, note);
    unmap(&q);
}

/* A [rows][cols] Q8_0 matrix in memory order against the f32 values it was converted from (exactly, with
 * no bf16 rounding between): per block of 32, within half a step (max|w| / 254) plus the f16 scale's error
 * (127 codes times d 2^-11: max|w| / 2048), given max|w| / 1024. */
static void expect_requantised_q8_0(const void *q, const float *want, int rows, int cols, const char *what) {
    float got[256];
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c += QUANT_BLOCK) {
            quant_matrix_dequantize(got, FR_DTYPE_Q8_0, q, rows, cols, r, c, QUANT_BLOCK);
            const float *w = want + (size_t)r * (size_t)cols + (size_t)c;
            float amax = 0, worst = 0;
            for (int i = 0; i < QUANT_BLOCK; i++) amax = fmaxf(amax, fabsf(w[i]));
            for (int i = 0; i < QUANT_BLOCK; i++) worst = fmaxf(worst, fabsf(got[i] - w[i]));
            cr_assert(worst <= amax * (1.0f / 254 + 1.0f / 1024), "%s row %d block %d: off by %g of %g", what,
                      r, c / QUANT_BLOCK, (double)worst, (double)amax);
        }
}

/* Without --dtype a file runs per tensor (its Q4_K and Q6_K as they are: checked in decode_native below);
 * with --dtype q8_0 every matrix is requantised from the file's exact values. */
Test(gguf_kquant, loads_in_q8_0_and_names_the_mix) {
    for (size_t f = 0; f < N_FIXTURES; f++) {
        const char *file = fixtures[f].file;
        struct qwen3_config c = gt_config_of(file);
        char note[384];
        (void)gt_wtype(file, FR_DTYPE_BF16, false, note, sizeof note);
        expect_mix_named(file, fixtures[f].ftype, note);
        struct qwen3_weights w, r;
        gt_load_as(file, FR_DTYPE_Q8_0, &w);
        gt_load_as(fixtures[f].ref, FR_DTYPE_F32, &r);
        int h = c.hidden, qkv = (c.n_heads + 2 * c.n_kv_heads) * c.head_dim, q_dim = c.n_heads * c.head_dim;
        expect_requantised_q8_0(w.embed, r.embed, c.vocab, h, "token_embd");
        for (int l = 0; l < c.n_layers; l++) {
            expect_requantised_q8_0(w.layers[l].qkv, r.layers[l].qkv, qkv, h, "attn_q/k/v");
            expect_requantised_q8_0(w.layers[l].o, r.layers[l].o, h, q_dim, "attn_output");
            expect_requantised_q8_0(w.layers[l].gate_up, r.layers[l].gate_up, 2 * c.intermediate, h,
                                    "ffn_gate/up");
            expect_requantised_q8_0(w.layers[l].down, r.layers[l].down, h, c.intermediate, "ffn_down");
        }
        qwen3_weights_free(&w);
        qwen3_weights_free(&r);
    }
}

/* --dtype, where given, is the run's type instead: bf16 holds gguf-py's values rounded to bf16. */
Test(gguf_kquant, dtype_given_is_the_run_type) {
    const char *file = fixtures[0].file;
    struct qwen3_config c = gt_config_of(file);
    char note[384];
    cr_expect_eq(gt_wtype(file, FR_DTYPE_BF16, true, note, sizeof note), FR_DTYPE_BF16);
    cr_expect(strstr(note, "runs in bf16") && strstr(note, "counts bf16's bytes"), "%s", note);
    struct qwen3_weights w, r;
    gt_load_as(file, FR_DTYPE_BF16, &w);
    gt_load_as(fixtures[0].ref, FR_DTYPE_F32, &r);
    size_t n = (size_t)c.vocab * (size_t)c.hidden, bad = 0;
    const uint16_t *e = w.embed;
    for (size_t i = 0; i < n; i++) bad += e[i] != bf16_from_f32(((const float *)r.embed)[i]);
    cr_expect_eq(bad, 0, "%zu of %zu embedding values are not gguf-py's rounded to bf16", bad, n);
    qwen3_weights_free(&w);
    qwen3_weights_free(&r);
    struct cli_result res;
    cli_run(&res, 1, "decode --weights " FIX "tiny-k-q4_k_m.gguf --dtype q4_0 --prompt-ids 1,2 --max-new 2");
    cr_expect_eq(res.status, 0, "%s", res.err);
    cr_expect(strstr(res.err, "decode: file q4_k_m mix: ") && strstr(res.err, "runs in q4_0"), "%s", res.err);
}

/* (c) The decode of each file in q8_0 against its f32 reference's (tests/gguf_testutil.h). */
static const int kq_prompt[] = {1, 7, 30, 12, 5, 19};
static float decode_gap(const char *file, const char *ref) {
    return gt_decode_gap(file, FR_DTYPE_Q8_0, ref, kq_prompt, 6);
}

/* Measured on the four fixtures: 0.55-1.07 % of the largest logit (Q8_0's requantisation of the weights and
 * x quantised to 8 bits a block in the matvec, the larger part); the bound leaves about twice the largest,
 * and one scale bit flipped in one matrix's super-blocks (below) moves them by 3.6 %. */
#define KQUANT_LOGIT_TOL 0.02f

/* Run per tensor, Q4_K and Q6_K as the file holds them (the rest in Q8_0), the gap is x's quantisation
 * (Q8_K per 256, Q8_0 per 32) and Q8_0's requantisation of the tensors no kernel runs as held: within the
 * same bound (logged). */
Test(gguf_kquant, decode_native_within_the_bound, .timeout = 60) {
    for (size_t f = 0; f < N_FIXTURES; f++) {
        float gap = gt_decode_gap(fixtures[f].file, FR_DTYPE_COUNT, fixtures[f].ref, kq_prompt, 6);
        cr_log_info("%s per tensor: logits within %.3g of the largest", fixtures[f].file, (double)gap);
        cr_expect(gap <= KQUANT_LOGIT_TOL, "%s: logits differ by %.3g of the largest, bound %.3g",
                  fixtures[f].file, (double)gap, (double)KQUANT_LOGIT_TOL);
    }
}

Test(gguf_kquant, decode_within_the_q8_0_bound, .timeout = 60) {
    for (size_t f = 0; f < N_FIXTURES; f++) {
        float gap = decode_gap(fixtures[f].file, fixtures[f].ref);
        cr_log_info("%s: logits within %.3g of the largest", fixtures[f].file, (double)gap);
        cr_expect(gap <= KQUANT_LOGIT_TOL, "%s: logits differ by %.3g of the largest, bound %.3g",
                  fixtures[f].file, (double)gap, (double)KQUANT_LOGIT_TOL);
    }
}

/* ---- copies of a fixture, edited ---- */

static void write_temp(char *path, const unsigned char *buf, size_t len) {
    int fd = mkstemps(path, 5);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, buf, len), (ssize_t)len);
    close(fd);
}

/* A tensor of buf's index: its data's offset in buf and the offset of its ndim field (after its name). */
static const struct gguf_tensor *find(const unsigned char *buf, size_t len, const char *name, size_t *data,
                                      size_t *info) {
    static struct gguf_file g;
    static struct gguf_tensor t;
    struct fr_err err = {{0}};
    cr_assert_eq(gguf_parse(buf, len, "t.gguf", &g, &err), 0, "%s", err.msg);
    const struct gguf_tensor *p = gguf_find_tensor(&g, name);
    cr_assert_not_null(p, "%s", name);
    t = *p;
    *data = g.data_off + (size_t)t.offset;
    if (info) *info = (size_t)((const unsigned char *)t.name - buf) + t.name_len;
    gguf_free(&g);
    return &t;
}

/* The tolerance fails on a broken dequantiser: bit 6 of each Q4_K super-block's first scale byte is the top
 * of sub-block 4's 6-bit scale (the packing's hardest part); flipped in every super-block of layer 0's
 * ffn_gate, the decode against the unedited reference leaves the bound. */
Test(gguf_kquant, bound_catches_a_flipped_scale_bit, .timeout = 60) {
    size_t len, at;
    unsigned char *buf = gt_copy_of(fixtures[0].file, &len);
    const struct gguf_tensor *t = find(buf, len, "blk.0.ffn_gate.weight", &at, NULL);
    cr_assert_eq(t->type, GGUF_GGML_Q4_K);
    for (uint64_t b = 0; b < t->bytes / 144; b++) buf[at + 144 * b + 4] ^= 1u << 6;
    char path[] = "/tmp/fr-kquant-flip-XXXXXX.gguf";
    write_temp(path, buf, len);
    float gap = decode_gap(path, fixtures[0].ref);
    cr_log_info("a flipped scale bit: logits off by %.3g of the largest", (double)gap);
    cr_expect(gap > KQUANT_LOGIT_TOL, "a flipped scale bit moved the logits by only %.3g", (double)gap);
    remove(path);
    free(buf);
}

/* (d) Bad input through the CLI: exit status 2, one line naming the file, the tensor and the field. */
static void expect_cli_refuses(const unsigned char *buf, size_t len, const char *tensor, const char *field) {
    char path[] = "/tmp/fr-kquant-bad-XXXXXX.gguf", cmd[160];
    write_temp(path, buf, len);
    snprintf(cmd, sizeof cmd, "decode --weights %s --prompt-ids 1 --max-new 1", path);
    struct cli_result r;
    cli_run(&r, 0, cmd);
    cr_expect_eq(r.status, 2, "%s: exit %d: %s", cmd, r.status, r.err);
    const char *nl = strchr(r.err, '\n');
    cr_expect(nl && nl[1] == '\0', "not one line: %s", r.err);
    cr_expect(strstr(r.err, path) && strstr(r.err, tensor) && strstr(r.err, field), "'%s' lacks '%s' or '%s'",
              r.err, tensor, field);
    remove(path);
}

Test(gguf_kquant, malformed_kquant_tensors_refused, .timeout = 60) {
    size_t len, at, info;
    unsigned char *buf = gt_copy_of(fixtures[0].file, &len), *e = malloc(len);
    cr_assert_not_null(e);
    /* a row of 128: not a multiple of the super-block (the same bytes as rows of 256) */
    const struct gguf_tensor *t = find(buf, len, "blk.0.attn_q.weight", &at, &info);
    cr_assert_eq(t->type, GGUF_GGML_Q4_K);
    memcpy(e, buf, len);
    uint64_t dims[2] = {128, 2 * t->dims[1]};
    memcpy(e + info + 4, dims, sizeof dims);
    expect_cli_refuses(e, len, "blk.0.attn_q.weight",
                       "first dimension 128 is not a multiple of q4_k's block");
    /* cut short: the file ends inside the last tensor's third super-block */
    uint64_t last_off = 0;
    char last[72] = "";
    {
        struct gguf_file g;
        struct fr_err err = {{0}};
        cr_assert_eq(gguf_parse(buf, len, "t.gguf", &g, &err), 0, "%s", err.msg);
        for (uint64_t i = 0; i < g.n_tensors; i++)
            if (g.tensors[i].offset >= last_off && g.tensors[i].type == GGUF_GGML_Q4_K)
                last_off = g.tensors[i].offset, tensor_name(&g.tensors[i], last);
        gguf_free(&g);
    }
    t = find(buf, len, last, &at, NULL);
    expect_cli_refuses(buf, at + 2 * 144 + 50, last, "its super-block 2 of");
    /* a d that is NaN and a dmin that is infinite */
    t = find(buf, len, "blk.1.ffn_up.weight", &at, NULL);
    cr_assert_eq(t->type, GGUF_GGML_Q4_K);
    memcpy(e, buf, len);
    e[at + 3 * 144] = 0x00, e[at + 3 * 144 + 1] = 0x7e;
    expect_cli_refuses(e, len, "blk.1.ffn_up.weight", "q4_k super-block 3's scale 'd' is NaN (f16 0x7e00)");
    memcpy(e, buf, len);
    e[at + 2] = 0x00, e[at + 3] = 0xfc;
    expect_cli_refuses(e, len, "blk.1.ffn_up.weight",
                       "super-block 0's scale 'dmin' is infinite (f16 0xfc00)");
    free(e);
    free(buf);
    /* a Q5_1 block's m that is NaN, in the Q4_1 mix */
    buf = gt_copy_of(fixtures[3].file, &len);
    t = find(buf, len, "blk.0.ffn_up.weight", &at, NULL);
    cr_assert_eq(t->type, GGUF_GGML_Q5_1);
    buf[at + 24 * 5 + 2] = 0x01, buf[at + 24 * 5 + 3] = 0x7c;
    expect_cli_refuses(buf, len, "blk.0.ffn_up.weight", "q5_1 block 5's scale 'm' is NaN");
    free(buf);
}
