/* Layer: model/ (includes kernels/ only).
 * prefill_check: a prefill against the same tokens fed one at a time through decode_step, on the same
 * weights: what `forge-roofline verify` (prefill.vs_steps) and tests/test_prefill.c both hold prompt
 * processing to. The two orders of summation differ (GEMM against matvec, attention tiles against
 * flash-decoding), so equality is to a tolerance, stated with the figures. */
#ifndef FR_PREFILL_CHECK_H
#define FR_PREFILL_CHECK_H

#include "model/prefill.h"

/* Largest |prefill - steps| of the last position's logits over the largest |logit| of the steps. With an f32
 * cache the two differ by summation order alone: 4.6e-7 to 8.7e-7 measured (Zen 5, scalar, AVX2 and AVX-512,
 * head_dim 128); with a bf16 cache a K or V value rounded to the other neighbour in one order moves the
 * attention after it: 6.5e-6 to 1.1e-4 measured. Each tolerance is about ten times the worst seen. */
#define PREFILL_CHECK_TOL_F32_KV  1e-5
#define PREFILL_CHECK_TOL_BF16_KV 1e-3

struct prefill_check_result {
    double logits_err;   /* largest |prefill - steps| over the last position's logits */
    double logits_scale; /* largest |logit| of the steps' */
    long kv_values;      /* cached K and V values compared (positions [0, depth + n), every layer and head) */
    long kv_mismatches;  /* of them: bf16 more than one step apart, f32 beyond 1e-5 + 1e-4 relative */
    double tolerance;    /* the KV type's: PREFILL_CHECK_TOL_* */
    double next_err; /* one decode step after both, from the prefilled cache: its logits' largest error over
                      * their largest magnitude */
};

/* Prefills `depth` tokens, then n more after them, on a prefill state of capacity n (and depth, if larger)
 * and, on a second state, decode_step over the same tokens one by one; compares as above. Returns 0, or -1
 * with err set (a refusal of either state, a failed step). */
int prefill_check_against_steps(const struct qwen3_weights *w, enum fr_dtype kvtype,
                                enum matvec_backend backend, int threads, int depth, int n,
                                const struct gemm_blocking *blk, struct prefill_check_result *out,
                                struct fr_err *err);

/* Whether the result is within the stated tolerances. */
bool prefill_check_passed(const struct prefill_check_result *r);

#endif
