/* kernel_ops: the per-ISA table of inner loops behind the public kernels of kernels.h. kernels.c owns
 * dispatch, OpenMP work splitting and argument shapes; each table entry is a single-threaded loop over the
 * range it is given. One table per ISA: scalar (kernels_scalar.c), AVX2+FMA (kernels_avx2.c), AVX-512
 * (kernels_avx512.c). Internal to kernels/ and its tests. */
#ifndef FR_KERNEL_OPS_H
#define FR_KERNEL_OPS_H

#include <stddef.h>
#include <stdint.h>

/* Keeps a loaded vector v in its register: makes it opaque to the compiler, which would otherwise load the
 * same bytes again as a later instruction's memory operand. Hot in L2 (Zen 5 VM, AVX2 L2 loop, 256 x 1024
 * bf16, one thread), the matvec ran 10.1 us with the second load and 8.3 us without: load-bound. */
#define kf_one_load(v) __asm__("" : "+x"(v))

/* Positions per block of the attention loops (see attn_partial): 4 KiB of one KV head's K rows at
 * head_dim 128, bf16. 16 rather than 64: the loops prefetch 1 or 2 blocks ahead (pf_blocks), so a range
 * starts with that many blocks fetched at once and ends with as many computed with nothing left to fetch,
 * which costs a short range more with longer blocks. 32 measured no better (attention alone at 1024
 * positions, Zen 4 VM: 0.82 / 0.86 of the read for 32 against 0.83 / 0.90 for 16, AVX2 / AVX-512; Zen 5
 * VM, AVX2: 13 % faster from L2, but from DRAM 0.57-0.58 against 0.50-0.62 on two threads and 0.68-0.69
 * against 0.70-0.71 on one, prefetching 16 or 32 positions ahead; again with the heads skewed as kv_cache.c
 * lays them out, AVX2, three alternations: from L2 on one core 36.7-37.5 -> 37.3-38.4 GB/s, from DRAM on two
 * threads at 1024 / 4096 positions 0.60-0.67 / 0.69-0.88 -> 0.54-0.67 / 0.57-0.69). */
#define KERNEL_ATT_BLOCK 16

/* Rows of one KV head over a range of positions: n rows of head_dim elements (bf16 or f32) from k and from v,
 * each right after the one before (the KV cache is head-major, see kernels.h's attention()). */
struct attn_rows {
    const void *k, *v;
    int n;
};

struct kernel_ops {
    /* y[r] = W[r][:] . x for r in [0, rows), or y[r] += it with `add`; W row-major with row stride `cols`. */
    void (*matvec_bf16)(float *y, const uint16_t *w, const float *x, int rows, int cols, int add);
    /* The same product by the loop of the CPUs that stream faster through L2 (kernel_prefetch_active()) */
    void (*matvec_bf16_l2)(float *y, const uint16_t *w, const float *x, int rows, int cols, int add);
    /* The same product by the loop a run of one thread (--threads 1) takes, in or out of any region */
    void (*matvec_bf16_solo)(float *y, const uint16_t *w, const float *x, int rows, int cols, int add);
    void (*matvec_f32)(float *y, const float *w, const float *x, int rows, int cols, int add);
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
    /* Attention of the `group` query heads q[group][head_dim] that share one KV head, over that head's rows
     * `cur`, flash-decoding style: blocks of at most `pb` positions; per block the scaled scores go to
     * sbuf[h * pb + i], then the running max m[h], the running sum l[h] of exp(score - m[h]) and the
     * unnormalized output o[h][:] (the exp-weighted sum of V rows) are updated, rescaling by
     * exp(m_old - m_new) when the max grows. Overwrites o[group][head_dim], m and l [group]; the result is
     * o[h] / l[h]. Each row is read from memory once, K and V each as one sequential stream.
     * Prefetching: the rows pf_blocks (>= 1) blocks on are fetched while a block is computed (the SIMD loops
     * fetch into L1 the rows ATT_L1_AHEAD bytes on as well, and leave out the L2 prefetch inside cur where
     * both are the same rows); past the end of cur that stream goes on into `next` (n == 0: none), the rows
     * the caller reads next, and with fetched != 0 the first blocks of cur were fetched that way by the
     * previous call (else they are fetched all at once when it starts). */
    void (*attn_partial)(float *o, float *m, float *l, float *sbuf, int pb, const float *q,
                         const struct attn_rows *cur, const struct attn_rows *next, int kv_bf16, int group,
                         int head_dim, float scale, int fetched, int pf_blocks);
};

extern const struct kernel_ops kernel_ops_scalar;
extern const struct kernel_ops kernel_ops_avx2;
extern const struct kernel_ops kernel_ops_avx512;

/* The table of the active ISA (kernel_isa_active()). */
const struct kernel_ops *kernel_ops_active(void);

/* kernel_vexp, the active ISA's vector exp, is declared in kernels.h (the exp ceiling times it). */

#endif
