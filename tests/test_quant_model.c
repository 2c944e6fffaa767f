/* Q8_0 and Q4_0 models (kernels/quant.h) on the tiny config: the cost model's bytes and FLOPs counted by
 * hand, the weights' sizes and the refusal of columns that are not whole blocks, the decode step's spans
 * against the cost model's DRAM bytes, and a decode in each format against the f32 decode of the same
 * weights dequantised (the difference is x's quantisation to 8 bits a 32-block, bounded below). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/quant.h"
#include "kernels/team.h"
#include "model/cost.h"
#include "model/decode.h"
#include "tests/model_fixtures.h"

/* The tiny config: hidden 64, intermediate 96, 2 layers, 4 heads of 32, 2 KV heads, vocab 257, tied.
 * Per layer: qkv (128 + 64 + 64) x 64 = 16384 weights, o 64 x 128 = 8192, gate_up 192 x 64 = 12288, down
 * 64 x 96 = 6144; the LM head 257 x 64 = 16448; a Q8_0 block is 34 bytes, a Q4_0 one 18, a block 32
 * weights. */
Test(quant_model, cost_bytes_by_hand) {
    struct qwen3_config c = fixture_tiny_config();
    struct cost_opts q8 = {FR_DTYPE_Q8_0, FR_DTYPE_BF16, NULL}, q4 = {FR_DTYPE_Q4_0, FR_DTYPE_BF16, NULL};
    struct step_cost s;
    cost_step(&c, &q8, 0, SAMPLER_VARIANT_GREEDY, &s);
    cr_expect_eq(s.blocks[BLOCK_QKV_PROJ].weight_bytes, 2 * 17408.0); /* 512 blocks x 34, 2 layers */
    cr_expect_eq(s.blocks[BLOCK_O_PROJ].weight_bytes, 2 * 8704.0);
    cr_expect_eq(s.blocks[BLOCK_GATE_UP_PROJ].weight_bytes, 2 * 13056.0);
    cr_expect_eq(s.blocks[BLOCK_DOWN_PROJ].weight_bytes, 2 * 6528.0);
    cr_expect_eq(s.blocks[BLOCK_LM_HEAD].weight_bytes, 17476.0); /* 514 blocks */
    cr_expect_eq(s.blocks[BLOCK_EMBED].weight_bytes, 68.0);      /* one row: 2 blocks */
    /* norms stay f32: (64 + 64 + 32 + 32) x 4 x 2 layers + the final 64 x 4 */
    cr_expect_eq(s.total.weight_bytes, 2 * 45696.0 + 17476 + 68 + 1792);
    cost_step(&c, &q4, 0, SAMPLER_VARIANT_GREEDY, &s);
    cr_expect_eq(s.blocks[BLOCK_QKV_PROJ].weight_bytes, 2 * 9216.0);
    cr_expect_eq(s.blocks[BLOCK_DOWN_PROJ].weight_bytes, 2 * 3456.0);
    cr_expect_eq(s.blocks[BLOCK_LM_HEAD].weight_bytes, 9252.0);
    cr_expect_eq(s.blocks[BLOCK_EMBED].weight_bytes, 36.0);
    cr_expect_eq(s.blocks[BLOCK_LM_HEAD].dram_bytes, 9252.0);
    /* FLOPs: 2 a weight, x quantised (2 cols + 2 cols / 32), 3 a weight block; qkv 32768 + 128 + 4 + 1536 */
    cr_expect_eq(s.blocks[BLOCK_QKV_PROJ].flops, 2 * 34436.0);
    /* down: 12288 + 192 + 6 + 576, plus the residual add's 64 */
    cr_expect_eq(s.blocks[BLOCK_DOWN_PROJ].flops, 2 * 13126.0);
    /* the embedding row dequantised: a multiply a weight */
    cr_expect_eq(s.blocks[BLOCK_EMBED].flops, 64.0);
    /* bf16 keeps its figures: 2 a weight */
    struct cost_opts bf = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    cost_step(&c, &bf, 0, SAMPLER_VARIANT_GREEDY, &s);
    cr_expect_eq(s.blocks[BLOCK_QKV_PROJ].flops, 2 * 32768.0);
    cr_expect_eq(s.blocks[BLOCK_QKV_PROJ].weight_bytes, 2 * 32768.0);
}

Test(quant_model, sizes_and_refusal) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weight_sizes sz;
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_sizes(&c, FR_DTYPE_Q4_0, &sz, &err), 0, "%s", err.msg);
    cr_expect_eq(sz.qkv_bytes, 9216);
    cr_expect_eq(sz.embed_bytes, 9252);
    c.hidden = 80; /* 2.5 blocks a row */
    cr_expect_neq(qwen3_weights_sizes(&c, FR_DTYPE_Q8_0, &sz, &err), 0);
    cr_expect(strstr(err.msg, "multiple of 32") != NULL, "%s", err.msg);
    cr_expect_eq(qwen3_weights_sizes(&c, FR_DTYPE_BF16, &sz, &err), 0, "bf16 takes any width");
    c.hidden = 65536; /* wider than the matvec's x buffer (and a row group's packing buffer) */
    cr_expect_neq(qwen3_weights_sizes(&c, FR_DTYPE_Q4_0, &sz, &err), 0);
    cr_expect(strstr(err.msg, "more than 32768 columns") != NULL, "%s", err.msg);
    cr_expect(strchr(err.msg, '\n') == NULL, "one line: %s", err.msg);
    cr_expect_neq(qwen3_weights_sizes(&c, FR_DTYPE_Q8_0, &sz, &err), 0, "Q8_0 rows are grouped too");
    cr_expect(strstr(err.msg, "more than 32768 columns") != NULL, "%s", err.msg);
}

static void setup(struct qwen3_weights *w, struct decode_state *st, const struct qwen3_config *c,
                  enum fr_dtype t) {
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc(w, c, t, &err), 0, "%s", err.msg);
    qwen3_weights_init_synthetic(w, 7);
    cr_assert_eq(decode_state_init(st, w, 8, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, kernel_team_procs(), &err),
                 0, "%s", err.msg);
}

Test(quant_model, spans_are_the_cost_models_dram_bytes) {
    struct qwen3_config c = fixture_tiny_config();
    for (int t = FR_DTYPE_Q8_0; t <= FR_DTYPE_Q4_0; t++) {
        struct qwen3_weights w;
        struct decode_state st;
        setup(&w, &st, &c, (enum fr_dtype)t);
        const struct cost_opts co = {(enum fr_dtype)t, FR_DTYPE_F32, NULL};
        for (int b = 0; b < BLOCK_COUNT; b++) {
            struct block_cost bc;
            cost_block(&c, &co, (enum block_id)b, 3, SAMPLER_VARIANT_GREEDY, &bc);
            struct mem_span spans[64];
            int n = decode_block_spans(&st, (enum block_id)b, 3, spans, 64);
            double bytes = 0;
            for (int i = 0; i < n && i < 64; i++) bytes += (double)spans[i].bytes;
            cr_expect_eq(bytes, bc.dram_bytes, "%s %s: spans %.0f, cost %.0f", fr_dtype_name(t),
                         block_name((enum block_id)b), bytes, bc.dram_bytes);
        }
        decode_state_free(&st);
        qwen3_weights_free(&w);
    }
}

/* A [rows][cols] matrix of q's type in memory order (kernels/quant.h), in panels of pq, into f32 in panels
 * of pf (the two formats' layouts differ where x's bytes a column do, kernels/col_panels.h): each panel a
 * file-order copy (unpacked), dequantised, then every weight moved to its place in f's layout. */
static void dequantise_matrix(float *f, const void *q, enum fr_dtype t, int rows, int cols, int pq, int pf) {
    for (int p = 0; p < col_panel_count(cols, pq); p++) {
        const int np = col_panel_cols(cols, pq, p);
        const size_t n = (size_t)rows * (size_t)np, start = col_panel_start(rows, pq, p);
        unsigned char *copy = malloc(fr_dtype_bytes(t, n));
        float *panel = malloc(n * sizeof *panel);
        cr_assert(copy && panel);
        memcpy(copy, (const unsigned char *)q + fr_dtype_bytes(t, start), fr_dtype_bytes(t, n));
        quant_matrix_unpack(copy, t, rows, np);
        quant_dequantize_row(panel, t, copy, n);
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < np; c++)
                f[col_panel_index(rows, cols, pf, r, p * pq + c)] = panel[(size_t)r * (size_t)np + (size_t)c];
        free(panel);
        free(copy);
    }
}

/* A layer matrix of q's type from its layout into the f32 model's. */
static void dequantise_layer_matrix(float *f, const void *q, enum fr_dtype t, int rows, int cols) {
    dequantise_matrix(f, q, t, rows, cols, col_panel_width(t, cols), col_panel_width(FR_DTYPE_F32, cols));
}

/* Every matrix of q (the embedding included) dequantised into f32 weights of the same layout; the norms
 * copied. */
static void dequantise_model(struct qwen3_weights *f, const struct qwen3_weights *q) {
    const struct qwen3_config *c = &q->cfg;
    struct qwen3_weight_sizes sz;
    struct fr_err err;
    cr_assert_eq(qwen3_weights_sizes(c, FR_DTYPE_F32, &sz, &err), 0);
    const int h = c->hidden, q_dim = c->n_heads * c->head_dim, kv_dim = c->n_kv_heads * c->head_dim;
    const enum fr_dtype t = q->wtype;
    dequantise_matrix(f->embed, q->embed, t, c->vocab, h, h, h);
    memcpy(f->final_norm, q->final_norm, sz.final_norm_bytes);
    for (int l = 0; l < c->n_layers; l++) {
        const struct qwen3_layer_weights *a = &q->layers[l];
        struct qwen3_layer_weights *b = &f->layers[l];
        dequantise_layer_matrix(b->qkv, a->qkv, t, q_dim + 2 * kv_dim, h);
        dequantise_layer_matrix(b->o, a->o, t, h, q_dim);
        dequantise_layer_matrix(b->gate_up, a->gate_up, t, 2 * c->intermediate, h);
        dequantise_layer_matrix(b->down, a->down, t, h, c->intermediate);
        memcpy(b->attn_norm, a->attn_norm, sz.attn_norm_bytes);
        memcpy(b->mlp_norm, a->mlp_norm, sz.mlp_norm_bytes);
        memcpy(b->q_norm, a->q_norm, sz.qk_norm_bytes / 2);
        memcpy(b->k_norm, a->k_norm, sz.qk_norm_bytes / 2);
    }
}

/* Six steps; the logits of the quantised decode within 3 % of the largest |logit| of the f32 decode of the
 * same (dequantised) weights. Why 3 %: each matvec's x moves by at most half its block's step, amax / 254,
 * 0.4 % of the block's largest element, and seven matvecs lie on this path (two layers and the LM head);
 * measured 0.8-1.3 % for both formats (logged), so the bound leaves a factor of two or more. The quantised
 * decode must differ at all (x is quantised), which the last check says. */
static void check_decode_against_dequantised(const struct qwen3_config *c) {
    for (int t = FR_DTYPE_Q8_0; t <= FR_DTYPE_Q4_0; t++) {
        struct qwen3_weights wq, wf;
        struct decode_state sq, sf;
        struct fr_err err = {{0}};
        setup(&wq, &sq, c, (enum fr_dtype)t);
        cr_assert_eq(qwen3_weights_alloc(&wf, c, FR_DTYPE_F32, &err), 0, "%s", err.msg);
        dequantise_model(&wf, &wq);
        cr_assert_eq(
            decode_state_init(&sf, &wf, 8, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, kernel_team_procs(), &err), 0,
            "%s", err.msg);
        const int tokens[] = {3, 200, 17, 256, 0, 3};
        for (int pos = 0; pos < 6; pos++) {
            cr_assert_eq(decode_step(&sq, tokens[pos], pos, NULL, &err), 0, "%s", err.msg);
            cr_assert_eq(decode_step(&sf, tokens[pos], pos, NULL, &err), 0, "%s", err.msg);
            double max_ref = 0, max_err = 0;
            for (int i = 0; i < c->vocab; i++) {
                max_ref = fmax(max_ref, fabs(sf.logits[i]));
                max_err = fmax(max_err, fabs(sq.logits[i] - sf.logits[i]));
            }
            cr_expect_gt(max_ref, 0.05, "logits degenerate");
            cr_expect_leq(max_err, 0.03 * max_ref,
                          "%s, intermediate %d, pos %d: max error %.3g of max |logit| %.3g", fr_dtype_name(t),
                          c->intermediate, pos, max_err, max_ref);
            cr_expect_gt(max_err, 0.0, "%s pos %d: x was not quantised?", fr_dtype_name(t), pos);
            cr_log_info("%s, intermediate %d, pos %d: max |logit error| %.3g (%.3f %% of max |logit|)",
                        fr_dtype_name(t), c->intermediate, pos, max_err, 100 * max_err / max_ref);
        }
        decode_state_free(&sq);
        decode_state_free(&sf);
        qwen3_weights_free(&wq);
        qwen3_weights_free(&wf);
    }
}

Test(quant_model, decode_matches_dequantised_f32) {
    struct qwen3_config c = fixture_tiny_config();
    check_decode_against_dequantised(&c);
}

/* down_proj of 2112 columns: two panels in f32, one in a block format; of 6656: four in f32, two (3328
 * each) in a block format (kernels/col_panels.h). The decode reads each in its own layout. */
Test(quant_model, decode_matches_dequantised_f32_in_column_panels) {
    struct qwen3_config c = fixture_tiny_config();
    c.intermediate = 2112;
    cr_assert_eq(col_panel_count(c.intermediate, col_panel_width(FR_DTYPE_Q4_0, c.intermediate)), 1);
    cr_assert_eq(col_panel_count(c.intermediate, col_panel_width(FR_DTYPE_F32, c.intermediate)), 2);
    check_decode_against_dequantised(&c);
    c.intermediate = 6656;
    cr_assert_eq(col_panel_count(c.intermediate, col_panel_width(FR_DTYPE_Q8_0, c.intermediate)), 2);
    check_decode_against_dequantised(&c);
}
