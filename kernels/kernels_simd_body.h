/* The vector loop bodies of the kernels, written once over a small set of vector primitives and included by
 * kernels_avx2.c and kernels_avx512.c, which define before including it:
 *   VW (f32 lanes), vf (vector type), vf_zero/set1/loadu/storeu/add/sub/mul/div/max/fmadd/fmsub,
 *   vf_hsum/vf_hmax (horizontal), vf_load_bf16 (VW bf16 widened exactly), vf_store_bf16 (round to nearest
 *   even), vf_load_part/vf_load_bf16_part (first n < VW elements, rest 0), vf_store_part/vf_store_bf16_part,
 *   vf_exp, KFN(name) (ISA-suffixed name) and KOPS_TABLE (the kernel_ops table to define).
 * Not a header of its own: it defines static functions and one table in the including file. */
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_ops.h"

#define KF_ALWAYS_INLINE static inline __attribute__((always_inline))

/* ---- matvec ----
 * Memory-bound: each weight is used once, so the loop is built to keep DRAM busy, not the FMA units.
 * Four rows at a time share every x load, each row has two accumulators (eight independent FMA chains),
 * and the four rows are four sequential streams the hardware prefetchers follow. */

KF_ALWAYS_INLINE vf mv_load_w(const void *w, size_t i, int bf16) {
    return bf16 ? vf_load_bf16((const uint16_t *)w + i) : vf_loadu((const float *)w + i);
}

KF_ALWAYS_INLINE vf mv_load_w_part(const void *w, size_t i, int n, int bf16) {
    return bf16 ? vf_load_bf16_part((const uint16_t *)w + i, n) : vf_load_part((const float *)w + i, n);
}

KF_ALWAYS_INLINE void mv_rows4(float *y, const void *w, const float *x, size_t r, int cols, int bf16) {
    size_t c0 = r * (size_t)cols, c1 = c0 + (size_t)cols, c2 = c1 + (size_t)cols, c3 = c2 + (size_t)cols;
    vf a0 = vf_zero(), a1 = vf_zero(), a2 = vf_zero(), a3 = vf_zero();
    vf b0 = vf_zero(), b1 = vf_zero(), b2 = vf_zero(), b3 = vf_zero();
    int c = 0;
    for (; c + 2 * VW <= cols; c += 2 * VW) {
        vf x0 = vf_loadu(x + c), x1 = vf_loadu(x + c + VW);
        a0 = vf_fmadd(mv_load_w(w, c0 + (size_t)c, bf16), x0, a0);
        a1 = vf_fmadd(mv_load_w(w, c1 + (size_t)c, bf16), x0, a1);
        a2 = vf_fmadd(mv_load_w(w, c2 + (size_t)c, bf16), x0, a2);
        a3 = vf_fmadd(mv_load_w(w, c3 + (size_t)c, bf16), x0, a3);
        b0 = vf_fmadd(mv_load_w(w, c0 + (size_t)c + VW, bf16), x1, b0);
        b1 = vf_fmadd(mv_load_w(w, c1 + (size_t)c + VW, bf16), x1, b1);
        b2 = vf_fmadd(mv_load_w(w, c2 + (size_t)c + VW, bf16), x1, b2);
        b3 = vf_fmadd(mv_load_w(w, c3 + (size_t)c + VW, bf16), x1, b3);
    }
    for (; c < cols; c += VW) {
        int n = cols - c < VW ? cols - c : VW;
        vf x0 = vf_load_part(x + c, n);
        a0 = vf_fmadd(mv_load_w_part(w, c0 + (size_t)c, n, bf16), x0, a0);
        a1 = vf_fmadd(mv_load_w_part(w, c1 + (size_t)c, n, bf16), x0, a1);
        a2 = vf_fmadd(mv_load_w_part(w, c2 + (size_t)c, n, bf16), x0, a2);
        a3 = vf_fmadd(mv_load_w_part(w, c3 + (size_t)c, n, bf16), x0, a3);
    }
    y[r] = vf_hsum(vf_add(a0, b0));
    y[r + 1] = vf_hsum(vf_add(a1, b1));
    y[r + 2] = vf_hsum(vf_add(a2, b2));
    y[r + 3] = vf_hsum(vf_add(a3, b3));
}

KF_ALWAYS_INLINE void mv_row1(float *y, const void *w, const float *x, size_t r, int cols, int bf16) {
    size_t c0 = r * (size_t)cols;
    vf a0 = vf_zero(), b0 = vf_zero();
    int c = 0;
    for (; c + 2 * VW <= cols; c += 2 * VW) {
        a0 = vf_fmadd(mv_load_w(w, c0 + (size_t)c, bf16), vf_loadu(x + c), a0);
        b0 = vf_fmadd(mv_load_w(w, c0 + (size_t)c + VW, bf16), vf_loadu(x + c + VW), b0);
    }
    for (; c < cols; c += VW) {
        int n = cols - c < VW ? cols - c : VW;
        a0 = vf_fmadd(mv_load_w_part(w, c0 + (size_t)c, n, bf16), vf_load_part(x + c, n), a0);
    }
    y[r] = vf_hsum(vf_add(a0, b0));
}

KF_ALWAYS_INLINE void mv_rows(float *y, const void *w, const float *x, int rows, int cols, int bf16) {
    int r = 0;
    for (; r + 4 <= rows; r += 4) mv_rows4(y, w, x, (size_t)r, cols, bf16);
    for (; r < rows; r++) mv_row1(y, w, x, (size_t)r, cols, bf16);
}

static void KFN(matvec_bf16)(float *y, const uint16_t *w, const float *x, int rows, int cols) {
    mv_rows(y, w, x, rows, cols, 1);
}

static void KFN(matvec_f32)(float *y, const float *w, const float *x, int rows, int cols) {
    mv_rows(y, w, x, rows, cols, 0);
}

/* ---- norms and elementwise ---- */

static float KFN(sum_squares)(const float *x, int n) {
    vf a = vf_zero(), b = vf_zero();
    int i = 0;
    for (; i + 2 * VW <= n; i += 2 * VW) {
        vf u = vf_loadu(x + i), v = vf_loadu(x + i + VW);
        a = vf_fmadd(u, u, a);
        b = vf_fmadd(v, v, b);
    }
    for (; i < n; i += VW) {
        vf u = vf_load_part(x + i, n - i < VW ? n - i : VW);
        a = vf_fmadd(u, u, a);
    }
    return vf_hsum(vf_add(a, b));
}

static void KFN(scale_mul)(float *out, const float *x, const float *w, float s, int n) {
    vf vs = vf_set1(s);
    int i = 0;
    for (; i + VW <= n; i += VW) vf_storeu(out + i, vf_mul(vf_mul(vf_loadu(x + i), vs), vf_loadu(w + i)));
    if (i < n) {
        int m = n - i;
        vf_store_part(out + i, vf_mul(vf_mul(vf_load_part(x + i, m), vs), vf_load_part(w + i, m)), m);
    }
}

static void KFN(vec_add)(float *y, const float *x, int n) {
    int i = 0;
    for (; i + VW <= n; i += VW) vf_storeu(y + i, vf_add(vf_loadu(y + i), vf_loadu(x + i)));
    if (i < n) vf_store_part(y + i, vf_add(vf_load_part(y + i, n - i), vf_load_part(x + i, n - i)), n - i);
}

KF_ALWAYS_INLINE vf swiglu_v(vf g, vf u) {
    vf e = vf_exp(vf_sub(vf_zero(), g));
    return vf_mul(vf_div(g, vf_add(vf_set1(1.0f), e)), u);
}

static void KFN(swiglu)(float *out, const float *gate, const float *up, int n) {
    int i = 0;
    for (; i + VW <= n; i += VW) vf_storeu(out + i, swiglu_v(vf_loadu(gate + i), vf_loadu(up + i)));
    if (i < n) vf_store_part(out + i, swiglu_v(vf_load_part(gate + i, n - i), vf_load_part(up + i, n - i)), n - i);
}

static void KFN(vexp)(float *y, const float *x, int n) {
    int i = 0;
    for (; i + VW <= n; i += VW) vf_storeu(y + i, vf_exp(vf_loadu(x + i)));
    if (i < n) vf_store_part(y + i, vf_exp(vf_load_part(x + i, n - i)), n - i);
}

static void KFN(bf16_to_f32)(float *dst, const uint16_t *src, int n) {
    int i = 0;
    for (; i + VW <= n; i += VW) vf_storeu(dst + i, vf_load_bf16(src + i));
    if (i < n) vf_store_part(dst + i, vf_load_bf16_part(src + i, n - i), n - i);
}

static void KFN(f32_to_bf16)(uint16_t *dst, const float *src, int n) {
    int i = 0;
    for (; i + VW <= n; i += VW) vf_store_bf16(dst + i, vf_loadu(src + i));
    if (i < n) vf_store_bf16_part(dst + i, vf_load_part(src + i, n - i), n - i);
}

/* x[i], x[i + half] -> (x[i] c - x[i + half] s, x[i + half] c + x[i] s) */
static void KFN(rope_apply)(float *x, const float *cos_t, const float *sin_t, int n_heads, int head_dim) {
    int half = head_dim / 2;
    for (int h = 0; h < n_heads; h++) {
        float *lo = x + (size_t)h * (size_t)head_dim, *hi = lo + half;
        int i = 0;
        for (; i + VW <= half; i += VW) {
            vf a = vf_loadu(lo + i), b = vf_loadu(hi + i), c = vf_loadu(cos_t + i), s = vf_loadu(sin_t + i);
            vf_storeu(lo + i, vf_fmsub(a, c, vf_mul(b, s)));
            vf_storeu(hi + i, vf_fmadd(b, c, vf_mul(a, s)));
        }
        for (; i < half; i++) {
            float a = lo[i], b = hi[i];
            lo[i] = a * cos_t[i] - b * sin_t[i];
            hi[i] = b * cos_t[i] + a * sin_t[i];
        }
    }
}

/* ---- attention ---- */

static void KFN(softmax)(float *s, int n) {
    vf m = vf_set1(s[0]);
    int i = 0;
    for (; i + VW <= n; i += VW) m = vf_max(m, vf_loadu(s + i));
    for (; i < n; i++) m = vf_max(m, vf_set1(s[i]));
    vf mx = vf_set1(vf_hmax(m)), sum = vf_zero();
    for (i = 0; i + VW <= n; i += VW) {
        vf e = vf_exp(vf_sub(vf_loadu(s + i), mx));
        vf_storeu(s + i, e);
        sum = vf_add(sum, e);
    }
    if (i < n) {
        /* the padded lanes hold exp(0 - max); only the first n - i are stored and summed */
        vf e = vf_exp(vf_sub(vf_load_part(s + i, n - i), mx));
        vf_store_part(s + i, e, n - i);
        sum = vf_add(sum, vf_load_part(s + i, n - i));
    }
    vf inv = vf_set1(1.0f / vf_hsum(sum));
    for (i = 0; i + VW <= n; i += VW) vf_storeu(s + i, vf_mul(vf_loadu(s + i), inv));
    if (i < n) vf_store_part(s + i, vf_mul(vf_load_part(s + i, n - i), inv), n - i);
}

/* q . k for two query heads sharing one K row (k read once), and for one. */
KF_ALWAYS_INLINE void dot2_kv(const float *q0, const float *q1, const void *k, size_t kb, int d, int bf16,
                              float *s0, float *s1) {
    vf a0 = vf_zero(), a1 = vf_zero();
    int i = 0;
    for (; i + VW <= d; i += VW) {
        vf kv = mv_load_w(k, kb + (size_t)i, bf16);
        a0 = vf_fmadd(vf_loadu(q0 + i), kv, a0);
        a1 = vf_fmadd(vf_loadu(q1 + i), kv, a1);
    }
    if (i < d) {
        vf kv = mv_load_w_part(k, kb + (size_t)i, d - i, bf16);
        a0 = vf_fmadd(vf_load_part(q0 + i, d - i), kv, a0);
        a1 = vf_fmadd(vf_load_part(q1 + i, d - i), kv, a1);
    }
    *s0 = vf_hsum(a0);
    *s1 = vf_hsum(a1);
}

KF_ALWAYS_INLINE float dot1_kv(const float *q0, const void *k, size_t kb, int d, int bf16) {
    vf a0 = vf_zero();
    int i = 0;
    for (; i + VW <= d; i += VW) a0 = vf_fmadd(vf_loadu(q0 + i), mv_load_w(k, kb + (size_t)i, bf16), a0);
    if (i < d) a0 = vf_fmadd(vf_load_part(q0 + i, d - i), mv_load_w_part(k, kb + (size_t)i, d - i, bf16), a0);
    return vf_hsum(a0);
}

KF_ALWAYS_INLINE void attn_scores_t(float *s, size_t ss, const float *q, const void *k, int bf16, int p0, int p1,
                                    int n_kv, int group, int d, float scale) {
    for (int p = p0; p < p1; p++) {
        for (int kh = 0; kh < n_kv; kh++) {
            size_t kb = ((size_t)p * (size_t)n_kv + (size_t)kh) * (size_t)d;
            int h = kh * group, h1 = h + group;
            for (; h + 2 <= h1; h += 2) {
                float s0, s1;
                dot2_kv(q + (size_t)h * (size_t)d, q + (size_t)(h + 1) * (size_t)d, k, kb, d, bf16, &s0, &s1);
                s[(size_t)h * ss + (size_t)p] = s0 * scale;
                s[(size_t)(h + 1) * ss + (size_t)p] = s1 * scale;
            }
            if (h < h1) s[(size_t)h * ss + (size_t)p] = dot1_kv(q + (size_t)h * (size_t)d, k, kb, d, bf16) * scale;
        }
    }
}

static void KFN(attn_scores)(float *s, size_t ss, const float *q, const void *k, int kv_bf16, int p0, int p1,
                             int n_kv, int group, int head_dim, float scale) {
    if (kv_bf16)
        attn_scores_t(s, ss, q, k, 1, p0, p1, n_kv, group, head_dim, scale);
    else
        attn_scores_t(s, ss, q, k, 0, p0, p1, n_kv, group, head_dim, scale);
}

/* out[h][d0:d1] += prob[h][p] * V[p][kh][d0:d1], positions in order so V streams sequentially; the
 * accumulating rows of out stay in L1. */
KF_ALWAYS_INLINE void attn_values_t(float *out, const float *prob, size_t ps, const void *v, int bf16, int n_pos,
                                    int n_kv, int group, int d, int k0, int k1, int d0, int d1) {
    for (int kh = k0; kh < k1; kh++)
        for (int h = kh * group; h < (kh + 1) * group; h++)
            for (int i = d0; i < d1; i++) out[(size_t)h * (size_t)d + (size_t)i] = 0.0f;
    for (int p = 0; p < n_pos; p++) {
        for (int kh = k0; kh < k1; kh++) {
            size_t vb = ((size_t)p * (size_t)n_kv + (size_t)kh) * (size_t)d;
            for (int h = kh * group; h < (kh + 1) * group; h++) {
                vf pr = vf_set1(prob[(size_t)h * ps + (size_t)p]);
                float *o = out + (size_t)h * (size_t)d;
                int i = d0;
                for (; i + VW <= d1; i += VW)
                    vf_storeu(o + i, vf_fmadd(pr, mv_load_w(v, vb + (size_t)i, bf16), vf_loadu(o + i)));
                if (i < d1) {
                    int m = d1 - i;
                    vf_store_part(o + i, vf_fmadd(pr, mv_load_w_part(v, vb + (size_t)i, m, bf16), vf_load_part(o + i, m)),
                                  m);
                }
            }
        }
    }
}

static void KFN(attn_values)(float *out, const float *prob, size_t ps, const void *v, int kv_bf16, int n_pos,
                             int n_kv, int group, int head_dim, int k0, int k1, int d0, int d1) {
    if (kv_bf16)
        attn_values_t(out, prob, ps, v, 1, n_pos, n_kv, group, head_dim, k0, k1, d0, d1);
    else
        attn_values_t(out, prob, ps, v, 0, n_pos, n_kv, group, head_dim, k0, k1, d0, d1);
}

const struct kernel_ops KOPS_TABLE = {
    .matvec_bf16 = KFN(matvec_bf16),
    .matvec_f32 = KFN(matvec_f32),
    .sum_squares = KFN(sum_squares),
    .scale_mul = KFN(scale_mul),
    .vec_add = KFN(vec_add),
    .swiglu = KFN(swiglu),
    .vexp = KFN(vexp),
    .bf16_to_f32 = KFN(bf16_to_f32),
    .f32_to_bf16 = KFN(f32_to_bf16),
    .rope_apply = KFN(rope_apply),
    .softmax = KFN(softmax),
    .attn_scores = KFN(attn_scores),
    .attn_values = KFN(attn_values),
};
