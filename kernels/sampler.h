/* The sampler: turns one row of logits into one token id, the last step of a decode iteration.
 * Semantics (identical on every machine and instruction set):
 *   temperature 0 -> greedy: index of the largest logit, lowest index on ties.
 *   temperature > 0 -> p = softmax((x - max) / temperature) in f32, then top-p, then a seeded draw.
 *   top-p: sort by p descending (id ascending on ties); prefix_k = f32(double cumsum through k) - p_k in f32;
 *   keep k when it is first or prefix_k < top_p; renormalize by the kept mass summed in double in id order
 *   (each kept p divided by that sum rounded to f32). top_p >= 1 returns the probabilities unchanged.
 *   draw: Philox4x32-10 (key = seed, counter = step) -> u in [0, 1) -> inverse CDF in token-id order
 *   (double sums per 16-token block, then token by token inside the block that crosses u * total).
 * Kernels never allocate or print; callers pass scratch. Errors come back as one-line messages in fr_err. */
#ifndef FR_SAMPLER_H
#define FR_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/dtype.h"
#include "kernels/fr_err.h"
#include "kernels/kernels.h"       /* enum kernel_isa */
#include "kernels/sampler_split.h" /* SAMPLER_SPLIT_MIN */
#include "kernels/sampler_topp.h"  /* the top-p filter */

struct sampler_params {
    float temperature; /* 0 = greedy; > 0 samples */
    float top_p;       /* in [0, 1]; 1 = no filter */
    uint64_t seed;     /* Philox key */
};

/* 0 if temperature >= 0 and top_p in [0, 1] (neither NaN); else -1 with a message. */
int sampler_check_params(const struct sampler_params *p, struct fr_err *err);

/* Bytes of scratch sampler_pick needs for a row of `vocab` logits (probabilities + top-p work space). */
size_t sampler_scratch_bytes(int vocab);

/* Picks the token for decode step `step` from f32 logits[vocab]; greedy when temperature == 0. The softmax
 * runs on up to `threads` threads (the run's; sampler_softmax). Returns 0 and sets *token, or -1 with a
 * message (bad parameters, NaN / +inf in the row, all -inf). */
int sampler_pick(const float *logits, int vocab, const struct sampler_params *p, uint64_t step, void *scratch,
                 int threads, int *token, struct fr_err *err);
/* The same for a row of f32 or bf16 logits. */
int sampler_pick_row(const void *row, enum fr_dtype dtype, int vocab, const struct sampler_params *p,
                     uint64_t step, void *scratch, int threads, int *token, struct fr_err *err);

/* ---- the pieces, exposed for tests, verify and the benchmark ---- */

/* Index of the largest value, lowest index on ties; -1 with a message on NaN / +inf / all -inf. */
int sampler_argmax(const void *row, enum fr_dtype dtype, int n, int *index, struct fr_err *err);
int sampler_argmax_ref(const void *row, enum fr_dtype dtype, int n, int *index, struct fr_err *err);

/* probs[n] = softmax((row - max) / temperature), temperature > 0. Same checks as sampler_argmax.
 * Every instruction-set path and every thread count gives bit-identical output: the exp below, 16 double
 * partial sums (lane i % 16) in each of 8 fixed parts of the row, added part by part and reduced in a fixed
 * tree, and each exp times the f32 reciprocal of that sum. The max and the exp passes run on up to `threads`
 * threads (sampler_softmax_threads); sampler_pick's top-p filter and draw run on the calling thread. */
int sampler_softmax(float *probs, const void *row, enum fr_dtype dtype, int n, float temperature, int threads,
                    struct fr_err *err);
/* The threads a softmax of n tokens runs on if called now with `threads`: 1 below SAMPLER_SOFTMAX_SPLIT_MIN
 * tokens or inside a parallel region, else threads, at most the processors and 8. One fork a call when
 * more. */
#define SAMPLER_SOFTMAX_SPLIT_MIN SAMPLER_SPLIT_MIN
int sampler_softmax_threads(int n, int threads);
/* Plain scalar twin: libm expf and a double sum; agrees with sampler_softmax to a few ulp. */
int sampler_softmax_ref(float *probs, const void *row, enum fr_dtype dtype, int n, float temperature,
                        struct fr_err *err);

/* The exp used by the softmax, for x <= 0 (what the softmax feeds it); 0 below -104 (exp(-104) rounds to
 * 0 in f32). Max error against double-precision exp: below SAMPLER_EXP_MAX_ULP ulp where the result is
 * normal and 1 subnormal step (2^-149) below FLT_MIN. Over every f32 in [-104, 0] it measured 0.982 ulp
 * (at x = -81.39479) and 0.750 steps; tests/test_sampler.c and `verify` re-check a strided sweep. */
#define SAMPLER_EXP_MAX_ULP 1
float sampler_exp(float x);

/* y[i] = sampler_exp(x[i]) for x[n] <= 0 with the active instruction set's pass (the same bits on every
 * set): the softmax's exp alone, as the sampler runs it, for the sampler's exp roof (roofline/ceilings.c). */
void sampler_exp_row(float *y, const float *x, int n);

/* 0 if probs[n] is a usable distribution (finite, >= 0, not all 0); else -1 naming the first bad index. */
int sampler_check_probs(const float *probs, int n, struct fr_err *err);

/* Philox4x32-10 (Salmon et al., SC'11): one block of four 32-bit outputs. */
void sampler_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]);
/* u in [0, 1) with 53 random bits from Philox4x32-10(key = seed, counter = {step lo, step hi, 0, 0}). */
double sampler_uniform(uint64_t seed, uint64_t step);
/* Inverse CDF in token-id order, vectorizable and the same on every instruction set: total = the double
 * sum, in block order, of 16-token block sums (pairwise: p[j] + p[j+8], then halves); the block whose
 * running sum first exceeds u * total is walked token by token (double) and the first positive token
 * whose running sum exceeds u * total is drawn; if rounding keeps them short, the block's last positive
 * token. Never a zero-probability token (the end of the CDF is guarded). -1 if no entry is positive. */
int sampler_draw(const float *probs, int n, double u);

/* Instruction set of the row passes: AVX-512 (F/BW/VL/DQ), else AVX2, else scalar; every path gives the
 * same bits. sampler_isa_force pins one for tests and benchmarks (-1 if the CPU lacks it;
 * KERNEL_ISA_COUNT = back to the best). */
enum kernel_isa sampler_isa_best(void);
enum kernel_isa sampler_isa_active(void);
int sampler_isa_force(enum kernel_isa isa);
const char *sampler_isa_name(enum kernel_isa isa);

/* The ISA self-check (kernels/sampler_check.c): every row pass of `isa` against the scalar passes on
 * row[n] of logits (softmax at `temperature`, then the filter's and the draw's passes on the result), bit
 * for bit. Returns the number of outputs that differ (0: all equal) and names the first differing pass
 * in *first; -1 if the CPU lacks isa. work: sampler_check_work_bytes(n) bytes, 8-byte aligned. */
size_t sampler_check_work_bytes(int n);
int sampler_isa_compare(enum kernel_isa isa, const float *row, int n, float temperature, void *work,
                        const char **first);

#endif
