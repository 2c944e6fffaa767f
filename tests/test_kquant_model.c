/* Models whose matrices each have their own format (model/weight_formats.h), K-quants among them, on a
 * config whose rows are whole superblocks: the K-quant matvec and GEMM (kernels/matvec_kquant.h) against
 * their references, the runs a mixed projection is stored as, and a decode in each set of formats against
 * the f32 decode of the same weights dequantised (the difference is x's Q8_K rounding, bounded below). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/gemm.h"
#include "kernels/matvec_kquant.h"
#include "kernels/quant.h"
#include "kernels/team.h"
#include "model/cost.h"
#include "model/decode.h"
#include "model/weight_mix.h"
#include "tests/model_fixtures.h"

/* hidden 256, intermediate 512, 3 layers, 4 heads of 64 (q_dim 256), 2 KV heads, vocab 300, tied */
static struct qwen3_config tiny256(void) {
    static const int shape[9] = {256, 512, 3, 4, 2, 64, 300, 64, 1};
    return fixture_config("tiny256", shape, 10000.0);
}

static float uniform(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / 8388608.0f - 1.0f;
}

/* The matvec and a batch of 5 through gemm, on every ISA the CPU has, against the references: the matvec's
 * (x quantised to Q8_K as the kernel's is: equal to float rounding) and the f32 product of the dequantised
 * weights (within x's Q8_K rounding: a step of max|x| / 127 a superblock, an error of standard deviation
 * sqrt(512 / 3 / 12) / 127 = 0.03 over a row of 512 weights uniform in [-1, 1]; 0.15 is five of them). */
Test(kquant_model, matvec_and_gemm_match_references) {
    const int rows = 70, cols = 512, batch = 5;
    const enum fr_dtype types[] = {FR_DTYPE_Q4_K, FR_DTYPE_Q5_K, FR_DTYPE_Q6_K};
    float *w = malloc((size_t)rows * cols * sizeof *w), *x = malloc((size_t)batch * cols * sizeof *x);
    float *y = malloc((size_t)batch * rows * sizeof *y), *ref = malloc((size_t)batch * rows * sizeof *ref);
    cr_assert(w && x && y && ref);
    unsigned s = 5;
    for (int i = 0; i < rows * cols; i++) w[i] = uniform(&s);
    for (int i = 0; i < batch * cols; i++) x[i] = uniform(&s);
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        const enum fr_dtype t = types[k];
        unsigned char *q = malloc(fr_dtype_bytes(t, (size_t)rows * cols));
        cr_assert(q);
        for (int r = 0; r < rows; r++)
            quant_k_quantize_row(q + fr_dtype_bytes(t, (size_t)r * cols), matvec_kquant_type(t), w + r * cols,
                                 (size_t)cols);
        quant_k_matrix_pack(q, matvec_kquant_type(t), rows, cols); /* memory order: 8 groups, 6 rows after */
        for (int isa = KERNEL_ISA_SCALAR; isa <= (int)kernel_isa_best(); isa++) {
            kernel_isa_force((enum kernel_isa)isa);
            const char *why = NULL;
            matvec_ref(ref, q, t, x, rows, cols);
            cr_assert_eq(
                gemm(y, rows, q, t, x, cols, 1, rows, cols, cols, NULL, MATVEC_BACKEND_FORGE, 2, &why), 0,
                "%s", why);
            for (int r = 0; r < rows; r++)
                cr_expect_leq(fabsf(y[r] - ref[r]), 1e-4f * (1 + fabsf(ref[r])), "%s %s row %d: %g vs %g",
                              fr_dtype_name(t), kernel_isa_name((enum kernel_isa)isa), r, y[r], ref[r]);
            gemm_ref(ref, rows, q, t, x, cols, batch, rows, cols, cols);
            cr_assert_eq(
                gemm(y, rows, q, t, x, cols, batch, rows, cols, cols, NULL, MATVEC_BACKEND_FORGE, 2, &why), 0,
                "%s", why);
            for (int i = 0; i < batch * rows; i++)
                cr_expect_leq(fabsf(y[i] - ref[i]), 0.15f + 0.01f * fabsf(ref[i]), "%s gemm %d: %g vs %g",
                              fr_dtype_name(t), i, y[i], ref[i]);
        }
        kernel_isa_force(KERNEL_ISA_COUNT);
        free(q);
    }
    const char *why = NULL;
    cr_expect_neq(
        gemm(y, rows, w, FR_DTYPE_Q4_K, x, 96, 1, rows, 96, 96, NULL, MATVEC_BACKEND_FORGE, 1, &why), 0);
    cr_expect(why && strstr(why, "256"), "%s", why ? why : "");
    cr_expect_eq(matvec_backend_available(MATVEC_BACKEND_OPENBLAS, FR_DTYPE_Q6_K, &why), false);
    free(w), free(x), free(y), free(ref);
}

/* Q4_K everywhere but v and down of layer 1, which are Q6_K and Q8_0, and the embedding, Q6_K. */
static void mixed_formats(struct weight_formats *f, const struct qwen3_config *c) {
    weight_formats_uniform(f, c->n_layers, FR_DTYPE_Q4_K);
    f->embed = f->lm_head = FR_DTYPE_Q6_K;
    f->layer[1][WPART_V] = FR_DTYPE_Q6_K;
    f->layer[1][WPART_DOWN] = FR_DTYPE_Q8_0;
    f->layer[2][WPART_K] = FR_DTYPE_BF16;
}

Test(kquant_model, runs_of_a_mixed_projection) {
    struct qwen3_config c = tiny256();
    struct weight_formats f;
    mixed_formats(&f, &c);
    struct qwen3_weights w;
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc_formats(&w, &c, &f, &err), 0, "%s", err.msg);
    struct qwen3_run runs[QWEN3_MAX_RUNS];
    cr_expect_eq(qwen3_matrix_runs(&w, 0, QWEN3_MAT_QKV, runs), 1, "one type: the fused matrix");
    cr_expect_eq(runs[0].rows, 256 + 2 * 128);
    cr_expect_eq(qwen3_matrix_runs(&w, 1, QWEN3_MAT_QKV, runs), 2);
    cr_expect(runs[0].type == FR_DTYPE_Q4_K && runs[0].rows == 384 && runs[1].row0 == 384);
    cr_expect(runs[1].type == FR_DTYPE_Q6_K && runs[1].rows == 128);
    cr_expect_eq((const char *)runs[1].w - (const char *)runs[0].w, 384 * 144,
                 "q and k: 384 rows of one superblock");
    cr_expect_eq(qwen3_matrix_runs(&w, 2, QWEN3_MAT_QKV, runs), 3);
    cr_expect(runs[1].type == FR_DTYPE_BF16 && runs[1].row0 == 256 && runs[2].type == FR_DTYPE_Q4_K);
    struct qwen3_run run;
    qwen3_part_run(&w, 2, WPART_V, &run);
    cr_expect_eq(run.row0, 384);
    char name[96];
    qwen3_weights_formats_name(&w, name, sizeof name);
    cr_expect_str_eq(name, "bf16 1, q8_0 1, q4_k 18, q6_k 2");
    qwen3_weights_free(&w);
    c.hidden = 320; /* 1.25 superblocks */
    cr_expect_neq(qwen3_weights_alloc_formats(&w, &c, &f, &err), 0);
    cr_expect(strstr(err.msg, "token_embd in q6_k") && strstr(err.msg, "256"), "%s", err.msg);
}

/* Every matrix of q dequantised into f32 weights w (row-major: every width here is within one f32 panel). */
static void dequantise_into(struct qwen3_weights *f, const struct qwen3_weights *q) {
    const struct qwen3_config *c = &q->cfg;
    const int h = c->hidden;
    for (int r = 0; r < c->vocab; r++)
        quant_k_matrix_dequantize_row((float *)f->embed + (size_t)r * h, matvec_kquant_type(q->formats.embed),
                                      q->embed, c->vocab, h, r);
    memcpy(f->final_norm, q->final_norm, (size_t)h * sizeof(float));
    for (int l = 0; l < c->n_layers; l++) {
        const struct qwen3_layer_weights *a = &q->layers[l];
        struct qwen3_layer_weights *b = &f->layers[l];
        float *dst[QWEN3_MAT_COUNT] = {b->qkv, b->o, b->gate_up, b->down};
        for (int m = 0; m < QWEN3_MAT_COUNT; m++) {
            struct qwen3_run runs[QWEN3_MAX_RUNS];
            const int n = qwen3_matrix_runs(q, l, (enum qwen3_matrix)m, runs);
            for (int i = 0; i < n; i++)
                for (int r = 0; r < runs[i].rows; r++) {
                    float *row = dst[m] + (size_t)(runs[i].row0 + r) * (size_t)runs[i].cols;
                    const int cols = runs[i].cols;
                    cr_assert_eq(col_panel_width(FR_DTYPE_F32, cols), cols);
                    if (fr_dtype_is_kquant(runs[i].type))
                        quant_k_matrix_dequantize_row(row, matvec_kquant_type(runs[i].type), runs[i].w,
                                                      runs[i].rows, cols, r);
                    else if (fr_dtype_is_block(runs[i].type))
                        quant_matrix_dequantize(row, runs[i].type, runs[i].w, runs[i].rows, cols, r, 0, cols);
                    else
                        for (int k = 0; k < cols; k++)
                            row[k] = bf16_to_f32(((const uint16_t *)runs[i].w)[(size_t)r * cols + k]);
                }
        }
        memcpy(b->attn_norm, a->attn_norm, (size_t)h * sizeof(float));
        memcpy(b->mlp_norm, a->mlp_norm, (size_t)h * sizeof(float));
        memcpy(b->q_norm, a->q_norm, (size_t)c->head_dim * sizeof(float));
        memcpy(b->k_norm, a->k_norm, (size_t)c->head_dim * sizeof(float));
    }
}

/* Six steps, and a prefill of the same tokens; the logits within 5 % of the largest |logit| of the f32
 * decode of the dequantised weights. Why 5 %: x moves by at most half a step of max|x| / 127 a superblock
 * (0.4 % of its largest element, as Q8_0's per 32, but over 256 the largest is further from the typical),
 * over ten matvecs on this path; measured below 2 % (logged). The quantised decode must differ at all. */
static void check_formats(const struct weight_formats *f, const char *what) {
    struct qwen3_config c = tiny256();
    struct qwen3_weights wq, wf;
    struct decode_state sq, sf;
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc_formats(&wq, &c, f, &err), 0, "%s", err.msg);
    qwen3_weights_init_synthetic(&wq, 11);
    cr_assert_eq(qwen3_weights_alloc(&wf, &c, FR_DTYPE_F32, &err), 0, "%s", err.msg);
    dequantise_into(&wf, &wq);
    cr_assert_eq(
        decode_state_init(&sq, &wq, 8, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, kernel_team_procs(), &err), 0,
        "%s", err.msg);
    cr_assert_eq(
        decode_state_init(&sf, &wf, 8, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, kernel_team_procs(), &err), 0,
        "%s", err.msg);
    const int tokens[] = {3, 200, 17, 299, 0, 3};
    for (int pos = 0; pos < 6; pos++) {
        cr_assert_eq(decode_step(&sq, tokens[pos], pos, NULL, &err), 0, "%s", err.msg);
        cr_assert_eq(decode_step(&sf, tokens[pos], pos, NULL, &err), 0, "%s", err.msg);
        double max_ref = 0, max_err = 0;
        for (int i = 0; i < c.vocab; i++) {
            max_ref = fmax(max_ref, fabs(sf.logits[i]));
            max_err = fmax(max_err, fabs(sq.logits[i] - sf.logits[i]));
        }
        cr_expect_gt(max_ref, 0.05, "logits degenerate");
        cr_expect_leq(max_err, 0.05 * max_ref, "%s pos %d: max error %.3g of max |logit| %.3g", what, pos,
                      max_err, max_ref);
        cr_expect_gt(max_err, 0.0, "%s pos %d: x was not quantised?", what, pos);
        cr_log_info("%s pos %d: max |logit error| %.3f %% of max |logit|", what, pos,
                    100 * max_err / max_ref);
    }
    decode_state_free(&sq);
    decode_state_free(&sf);
    qwen3_weights_free(&wq);
    qwen3_weights_free(&wf);
}

Test(kquant_model, decode_matches_dequantised_f32) {
    struct qwen3_config c = tiny256();
    struct weight_formats f;
    weight_formats_uniform(&f, c.n_layers, FR_DTYPE_Q4_K);
    check_formats(&f, "q4_k");
    weight_formats_uniform(&f, c.n_layers, FR_DTYPE_Q6_K);
    check_formats(&f, "q6_k");
    struct fr_err err = {{0}};
    cr_assert_eq(weight_mix_formats(WEIGHT_MIX_Q5_K_M, &c, &f, &err), 0, "%s", err.msg);
    cr_expect_gt(weight_formats_count(&f, FR_DTYPE_Q5_K), 0);
    check_formats(&f, "q5_k_m");
    mixed_formats(&f, &c);
    check_formats(&f, "mixed");
}

/* The cost model's DRAM bytes per block, priced per tensor, against the step's own spans (the runs' bytes
 * as the weights hold them): two counts of one thing by different paths. */
Test(kquant_model, cost_bytes_are_the_spans) {
    struct qwen3_config c = tiny256();
    struct weight_formats f;
    mixed_formats(&f, &c);
    struct qwen3_weights w;
    struct decode_state st;
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc_formats(&w, &c, &f, &err), 0, "%s", err.msg);
    qwen3_weights_init_synthetic(&w, 3);
    cr_assert_eq(decode_state_init(&st, &w, 8, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, 1, &err), 0, "%s",
                 err.msg);
    const struct cost_opts co = {w.wtype, FR_DTYPE_F32, &w.formats};
    for (int b = 0; b < BLOCK_COUNT; b++) {
        struct block_cost bc;
        cost_block(&c, &co, (enum block_id)b, 3, SAMPLER_VARIANT_GREEDY, &bc);
        struct mem_span spans[64];
        const int n = decode_block_spans(&st, (enum block_id)b, 3, spans, 64);
        double bytes = 0;
        for (int i = 0; i < n && i < 64; i++) bytes += (double)spans[i].bytes;
        cr_expect(fabs(bytes - bc.dram_bytes) <= 1e-6 * bytes, "%s: spans %.0f, cost %.0f",
                  block_name((enum block_id)b), bytes, bc.dram_bytes);
    }
    /* the embedding row in Q6_K: 210 bytes a superblock */
    struct block_cost e;
    cost_block(&c, &co, BLOCK_EMBED, 0, SAMPLER_VARIANT_GREEDY, &e);
    cr_expect_eq(e.weight_bytes, 210.0);
    decode_state_free(&st);
    qwen3_weights_free(&w);
}
