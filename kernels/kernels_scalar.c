/* The scalar (baseline x86-64) inner loops of the kernels: plain C in f32, the path a CPU without AVX2
 * runs. Checked against the _ref twins in kernels_ref.c by tests/test_kernels_*.c like every other ISA. */
#include <math.h>

#include "kernels/dtype.h"
#include "kernels/kernel_ops.h"

/* Four independent f32 sums per row so the loop is not one long chain of dependent adds. */
static void matvec_bf16_scalar(float *y, const uint16_t *w, const float *x, int rows, int cols, int add) {
    for (int r = 0; r < rows; r++) {
        const uint16_t *row = w + (size_t)r * (size_t)cols;
        float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
        int c = 0;
        for (; c + 4 <= cols; c += 4) {
            a0 += bf16_to_f32(row[c]) * x[c];
            a1 += bf16_to_f32(row[c + 1]) * x[c + 1];
            a2 += bf16_to_f32(row[c + 2]) * x[c + 2];
            a3 += bf16_to_f32(row[c + 3]) * x[c + 3];
        }
        for (; c < cols; c++) a0 += bf16_to_f32(row[c]) * x[c];
        y[r] = add ? y[r] + ((a0 + a1) + (a2 + a3)) : (a0 + a1) + (a2 + a3);
    }
}

static void matvec_f32_scalar(float *y, const float *w, const float *x, int rows, int cols, int add) {
    for (int r = 0; r < rows; r++) {
        const float *row = w + (size_t)r * (size_t)cols;
        float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f, a3 = 0.0f;
        int c = 0;
        for (; c + 4 <= cols; c += 4) {
            a0 += row[c] * x[c];
            a1 += row[c + 1] * x[c + 1];
            a2 += row[c + 2] * x[c + 2];
            a3 += row[c + 3] * x[c + 3];
        }
        for (; c < cols; c++) a0 += row[c] * x[c];
        y[r] = add ? y[r] + ((a0 + a1) + (a2 + a3)) : (a0 + a1) + (a2 + a3);
    }
}

static float sum_squares_scalar(const float *x, int n) {
    float a0 = 0.0f, a1 = 0.0f;
    int i = 0;
    for (; i + 2 <= n; i += 2) {
        a0 += x[i] * x[i];
        a1 += x[i + 1] * x[i + 1];
    }
    for (; i < n; i++) a0 += x[i] * x[i];
    return a0 + a1;
}

static void scale_mul_scalar(float *out, const float *x, const float *w, float s, int n) {
    for (int i = 0; i < n; i++) out[i] = x[i] * s * w[i];
}

static void vec_add_scalar(float *y, const float *x, int n) {
    for (int i = 0; i < n; i++) y[i] += x[i];
}

static void swiglu_scalar(float *out, const float *gate, const float *up, int n) {
    for (int i = 0; i < n; i++) out[i] = gate[i] / (1.0f + expf(-gate[i])) * up[i];
}

static void vexp_scalar(float *y, const float *x, int n) {
    for (int i = 0; i < n; i++) y[i] = expf(x[i]);
}

static void bf16_to_f32_scalar(float *dst, const uint16_t *src, int n) {
    for (int i = 0; i < n; i++) dst[i] = bf16_to_f32(src[i]);
}

static void f32_to_bf16_scalar(uint16_t *dst, const float *src, int n) {
    for (int i = 0; i < n; i++) dst[i] = bf16_from_f32(src[i]);
}

static void rope_apply_scalar(float *x, const float *cos_t, const float *sin_t, int n_heads, int head_dim) {
    int half = head_dim / 2;
    for (int h = 0; h < n_heads; h++) {
        float *v = x + (size_t)h * (size_t)head_dim;
        for (int i = 0; i < half; i++) {
            float a = v[i], b = v[i + half];
            v[i] = a * cos_t[i] - b * sin_t[i];
            v[i + half] = b * cos_t[i] + a * sin_t[i];
        }
    }
}

static float kv_at(const void *base, int kv_bf16, size_t idx) {
    return kv_bf16 ? bf16_to_f32(((const uint16_t *)base)[idx]) : ((const float *)base)[idx];
}

static void attn_partial_scalar(float *o, float *m, float *l, float *sbuf, int pb, const float *q,
                                const struct attn_rows *cur, const struct attn_rows *next, int kv_bf16,
                                int group, int head_dim, float scale, int fetched, int pf_blocks) {
    (void)next, (void)fetched, (void)pf_blocks; /* no prefetching here */
    size_t hd = (size_t)head_dim;
    for (int h = 0; h < group; h++) {
        m[h] = -INFINITY;
        l[h] = 0.0f;
        for (size_t d = 0; d < hd; d++) o[(size_t)h * hd + d] = 0.0f;
    }
    for (int b0 = 0; b0 < cur->n; b0 += pb) {
        int np = cur->n - b0 < pb ? cur->n - b0 : pb;
        for (int h = 0; h < group; h++) {
            const float *qh = q + (size_t)h * hd;
            float *s = sbuf + (size_t)h * (size_t)pb;
            float mx = m[h];
            for (int i = 0; i < np; i++) {
                size_t base = (size_t)(b0 + i) * hd;
                float acc = 0.0f;
                for (size_t d = 0; d < hd; d++) acc += qh[d] * kv_at(cur->k, kv_bf16, base + d);
                s[i] = acc * scale;
                mx = s[i] > mx ? s[i] : mx;
            }
            if (mx > m[h]) { /* the max grew: rescale what was summed against the old one */
                float alpha = expf(m[h] - mx);
                l[h] *= alpha;
                for (size_t d = 0; d < hd; d++) o[(size_t)h * hd + d] *= alpha;
                m[h] = mx;
            }
            for (int i = 0; i < np; i++) {
                s[i] = expf(s[i] - mx);
                l[h] += s[i];
            }
            float *oh = o + (size_t)h * hd;
            for (int i = 0; i < np; i++) {
                size_t base = (size_t)(b0 + i) * hd;
                for (size_t d = 0; d < hd; d++) oh[d] += s[i] * kv_at(cur->v, kv_bf16, base + d);
            }
        }
    }
}

const struct kernel_ops kernel_ops_scalar = {
    .matvec_bf16 = matvec_bf16_scalar,
    .matvec_bf16_l2 = matvec_bf16_scalar, /* no prefetch to choose */
    .matvec_bf16_solo = matvec_bf16_scalar,
    .matvec_f32 = matvec_f32_scalar,
    .sum_squares = sum_squares_scalar,
    .scale_mul = scale_mul_scalar,
    .vec_add = vec_add_scalar,
    .swiglu = swiglu_scalar,
    .vexp = vexp_scalar,
    .bf16_to_f32 = bf16_to_f32_scalar,
    .f32_to_bf16 = f32_to_bf16_scalar,
    .rope_apply = rope_apply_scalar,
    .attn_partial = attn_partial_scalar,
};
