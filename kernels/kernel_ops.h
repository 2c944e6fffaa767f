/* kernel_ops: the per-ISA table of inner loops behind the public kernels of kernels.h. kernels.c owns
 * dispatch, OpenMP work splitting and argument shapes; each table entry is a single-threaded loop over the
 * range it is given. One table per ISA: scalar (kernels_scalar.c), AVX2+FMA (kernels_avx2.c), AVX-512
 * (kernels_avx512.c). Internal to kernels/ and its tests. */
#ifndef FR_KERNEL_OPS_H
#define FR_KERNEL_OPS_H

#include <stddef.h>
#include <stdint.h>

/* Positions per block of the attention loops (see attn_partial). 16 rather than 64: the loops prefetch
 * ATT_PF_AHEAD blocks ahead, so a range starts with that many blocks fetched at once and ends with as many
 * computed with nothing left to fetch; with 64-position blocks a 256-position chunk (context 1024, two
 * threads) spent half its time on one or the other. The arithmetic is as fast with 16 (cache-resident
 * KV, Zen 4: within 3 %). */
#define KERNEL_ATT_BLOCK 16

struct kernel_ops {
    /* y[r] = W[r][:] . x for r in [0, rows); W row-major with row stride `cols`. */
    void (*matvec_bf16)(float *y, const uint16_t *w, const float *x, int rows, int cols);
    void (*matvec_f32)(float *y, const float *w, const float *x, int rows, int cols);
    /* sum of x[i]^2, f32 lanes added at the end */
    float (*sum_squares)(const float *x, int n);
    /* out[i] = x[i] * s * w[i] */
    void (*scale_mul)(float *out, const float *x, const float *w, float s, int n);
    void (*vec_add)(float *y, const float *x, int n);
    void (*swiglu)(float *out, const float *gate, const float *up, int n);
    /* y[i] = exp(x[i]); the vector paths' accuracy is stated where they define it */
    void (*vexp)(float *y, const float *x, int n);
    void (*bf16_to_f32)(float *dst, const uint16_t *src, int n);
    void (*f32_to_bf16)(uint16_t *dst, const float *src, int n); /* round to nearest even, NaN kept */
    void (*rope_apply)(float *x, const float *cos_t, const float *sin_t, int n_heads, int head_dim);
    /* Attention of all n_kv * group query heads over positions [p0, p1), flash-decoding style: blocks of at
     * most `pb` positions; per block the scaled scores go to sbuf[h * pb + i], then the running max m[h],
     * the running sum l[h] of exp(score - m[h]) and the unnormalized output o[h][:] (the exp-weighted sum
     * of V rows) are updated, rescaling by exp(m_old - m_new) when the max grows. Overwrites o
     * [n_kv * group][head_dim], m and l [n_kv * group]; the result is o[h] / l[h]. K and V are
     * [n_pos][n_kv][head_dim], bf16 (kv_bf16 != 0) or f32; each row is read from memory once.
     * Prefetching: the rows of the block ATT_PF_AHEAD blocks on are fetched while a block is computed; past
     * p1 that stream goes on into [next0, next1), the range the caller reads next (empty: none), and with
     * fetched != 0 the first blocks of [p0, p1) were fetched that way by the previous call (else they are
     * fetched all at once when it starts). */
    void (*attn_partial)(float *o, float *m, float *l, float *sbuf, int pb, const float *q, const void *k,
                         const void *v, int kv_bf16, int p0, int p1, int n_kv, int group, int head_dim,
                         float scale, int next0, int next1, int fetched);
};

extern const struct kernel_ops kernel_ops_scalar;
extern const struct kernel_ops kernel_ops_avx2;
extern const struct kernel_ops kernel_ops_avx512;

/* The table of the active ISA (kernel_isa_active()). */
const struct kernel_ops *kernel_ops_active(void);

/* kernel_vexp, the active ISA's vector exp, is declared in kernels.h (the exp ceiling times it). */

#endif
