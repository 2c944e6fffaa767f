/* kernel_ops: the per-ISA table of inner loops behind the public kernels of kernels.h. kernels.c owns
 * dispatch, OpenMP work splitting and argument shapes; each table entry is a single-threaded loop over the
 * range it is given. One table per ISA: scalar (kernels_scalar.c), AVX2+FMA (kernels_avx2.c), AVX-512
 * (kernels_avx512.c). Internal to kernels/ and its tests. */
#ifndef FR_KERNEL_OPS_H
#define FR_KERNEL_OPS_H

#include <stddef.h>
#include <stdint.h>

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
    /* In place: s[i] = exp(s[i] - max s) / sum; returns nothing, n >= 1. */
    void (*softmax)(float *s, int n);
    /* Attention scores for positions [p0, p1): for every KV head k and each of its `group` query heads
     * h = k * group + g, s[h * s_stride + p] = scale * (q[h] . K[p][k]). K is [n_pos][n_kv][head_dim],
     * bf16 (kv_bf16 != 0) or f32. */
    void (*attn_scores)(float *s, size_t s_stride, const float *q, const void *k, int kv_bf16, int p0, int p1,
                        int n_kv, int group, int head_dim, float scale);
    /* Weighted V for KV heads [k0, k1) and dims [d0, d1) of each: out[h][d] = sum_p prob[h][p] * V[p][k][d]
     * over p in [0, n_pos), for the `group` query heads of each KV head (out is overwritten). */
    void (*attn_values)(float *out, const float *prob, size_t p_stride, const void *v, int kv_bf16, int n_pos,
                        int n_kv, int group, int head_dim, int k0, int k1, int d0, int d1);
};

extern const struct kernel_ops kernel_ops_scalar;
extern const struct kernel_ops kernel_ops_avx2;
extern const struct kernel_ops kernel_ops_avx512;

/* The table of the active ISA (kernel_isa_active()). */
const struct kernel_ops *kernel_ops_active(void);

/* y[i] = exp(x[i]) with the active ISA's vector exp; exposed so tests can bound its error. */
void kernel_vexp(float *y, const float *x, int n);

#endif
