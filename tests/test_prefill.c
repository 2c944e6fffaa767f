/* Prompt processing (model/prefill.h) against token-by-token decode on a tiny Qwen3-shaped model: the same
 * prompt fed one token at a time through decode_step must leave the same KV cache at every position and the
 * same last-position logits. The two sum the projections in another f32 order (GEMM against matvec) and
 * attention's softmax in another order (tiles against flash-decoding), so values agree within a tolerance:
 * model/prefill_check.h states them (the logits against the largest one's magnitude, each cached row within
 * one bf16 step or 1e-4 of its largest value).
 * Also: depth > 0 (a prefill after a prefill), prompts of 1 token and of lengths no tile divides, decoding on
 * from the prefilled state, and the refusals. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/team.h"
#include "model/prefill_check.h"
#include "tests/model_fixtures.h"

static void setup_weights(struct qwen3_weights *w, const struct qwen3_config *c, enum fr_dtype wt) {
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc(w, c, wt, &err), 0, "%s", err.msg);
    qwen3_weights_init_synthetic(w, 4321);
}

/* Prefills `depth` tokens, then n more after them, and checks both against decode_step token by token. */
static void check_prefill(enum fr_dtype wt, enum fr_dtype kvt, enum matvec_backend be, int depth, int n) {
    struct qwen3_config c = fixture_tiny_config();
    c.max_context = 256; /* room for prompts past one GEMM pass of 64 rows */
    struct qwen3_weights w;
    setup_weights(&w, &c, wt);
    struct fr_err err = {{0}};
    const struct gemm_blocking blk = {.l1d_bytes = 1024,
                                      .l2_bytes = 4096}; /* column blocks at this size too */
    struct prefill_check_result res;
    cr_assert_eq(prefill_check_against_steps(&w, kvt, be, kernel_team_procs(), depth, n, &blk, &res, &err), 0,
                 "%s", err.msg);
    cr_expect_gt(res.logits_scale, 0.05, "logits degenerate");
    cr_expect_leq(res.logits_err, res.tolerance * res.logits_scale,
                  "%s weights %s KV depth %d n %d: logits off by %.3g (largest %.3g)", fr_dtype_name(wt),
                  fr_dtype_name(kvt), depth, n, res.logits_err, res.logits_scale);
    cr_expect_eq(res.kv_values, (long)c.n_layers * c.n_kv_heads * 2 * (depth + n) * c.head_dim);
    cr_expect_eq(res.kv_mismatches, 0, "depth %d n %d: KV cache differs", depth, n);
    cr_expect_leq(res.next_err, res.tolerance, "decode after the prefill: off by %.3g", res.next_err);
    cr_expect(prefill_check_passed(&res));
    qwen3_weights_free(&w);
}

Test(prefill, matches_token_by_token_bf16) {
    check_prefill(FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, 0, 37); /* 37: no tile divides it */
}

Test(prefill, matches_token_by_token_f32_kv_after_depth) {
    check_prefill(FR_DTYPE_BF16, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, 9, 41);
}

Test(prefill, matches_token_by_token_openblas_f32) {
    check_prefill(FR_DTYPE_F32, FR_DTYPE_F32, MATVEC_BACKEND_OPENBLAS, 3, 33);
}

Test(prefill, prompts_past_one_gemm_pass) {
    check_prefill(FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, 7, 150);
}

/* Q8_0 weights: the prefill's GEMM multiplies the dequantised weights by f32 activations, the decode step's
 * matvec quantises the activations to 8 bits a block first (docs/quantization.md), so the two differ by that
 * rounding: measured 1.5 % of the largest logit at 130 tokens on the tiny model; held to 5 %. */
Test(prefill, q8_0_within_the_steps_activation_rounding) {
    struct qwen3_config c = fixture_tiny_config();
    c.max_context = 256;
    struct qwen3_weights w;
    setup_weights(&w, &c, FR_DTYPE_Q8_0);
    struct fr_err err = {{0}};
    struct prefill_check_result res;
    cr_assert_eq(prefill_check_against_steps(&w, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, kernel_team_procs(), 0,
                                             130, NULL, &res, &err),
                 0, "%s", err.msg);
    cr_expect_gt(res.logits_scale, 0.05, "logits degenerate");
    cr_expect_leq(res.logits_err, 0.05 * res.logits_scale, "logits off by %.3g of %.3g", res.logits_err,
                  res.logits_scale);
    cr_expect_gt(res.logits_err, 1e-5 * res.logits_scale,
                 "no activation rounding seen: the steps did not quantise");
    qwen3_weights_free(&w);
}

Test(prefill, one_token_is_one_decode_step) {
    check_prefill(FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, 0, 1);
    check_prefill(FR_DTYPE_BF16, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, 17, 1);
}

Test(prefill, every_isa_path) {
    for (int isa = 0; isa < KERNEL_ISA_COUNT; isa++) {
        if (kernel_isa_force((enum kernel_isa)isa) != 0) continue;
        check_prefill(FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, 4, 30);
    }
    kernel_isa_force(KERNEL_ISA_COUNT);
}

Test(prefill, refusals_name_the_limit) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w;
    setup_weights(&w, &c, FR_DTYPE_BF16);
    struct prefill_state p;
    struct fr_err err = {{0}};
    cr_assert_eq(prefill_init(&p, &w, 16, 8, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, 1, NULL, &err), 0, "%s",
                 err.msg);
    int tokens[16] = {0};
    cr_expect_eq(prefill_run(&p, tokens, 9, 0, NULL, &err), -1);
    cr_expect(strstr(err.msg, "1 to 8") != NULL, "%s", err.msg);
    cr_expect_eq(prefill_run(&p, tokens, 8, 9, NULL, &err), -1);
    cr_expect(strstr(err.msg, "needs 17 positions; the context holds 16") != NULL, "%s", err.msg);
    tokens[3] = c.vocab;
    cr_expect_eq(prefill_run(&p, tokens, 4, 0, NULL, &err), -1);
    cr_expect(strstr(err.msg, "outside the vocabulary") != NULL, "%s", err.msg);
    cr_expect_eq(prefill_run(&p, tokens, 0, 0, NULL, &err), -1);
    prefill_free(&p);
    cr_expect_eq(prefill_init(&p, &w, 16, 0, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, 1, NULL, &err), -1);
    qwen3_weights_free(&w);
}
