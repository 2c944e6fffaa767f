/* The scalar (baseline x86-64) inner loops of the kernels: plain C in f32, the path a CPU without AVX2
 * runs. Checked against the _ref twins in kernels_ref.c by tests/test_kernels_*.c like every other ISA. */
#include <math.h>

#include "kernels/dtype.h"
#include "kernels/kernel_ops.h"

/* Four independent f32 sums per row so the loop is not one long chain of dependent adds. */
static void matvec_bf16_scalar(float *y, const uint16_t *w, const float *x, int rows, int cols) {
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
        y[r] = (a0 + a1) + (a2 + a3);
    }
}

static void matvec_f32_scalar(float *y, const float *w, const float *x, int rows, int cols) {
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
        y[r] = (a0 + a1) + (a2 + a3);
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

static void softmax_scalar(float *s, int n) {
    float mx = s[0];
    for (int i = 1; i < n; i++) mx = s[i] > mx ? s[i] : mx;
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        s[i] = expf(s[i] - mx);
        sum += s[i];
    }
    float inv = 1.0f / sum;
    for (int i = 0; i < n; i++) s[i] *= inv;
}

static float kv_at(const void *base, int kv_bf16, size_t idx) {
    return kv_bf16 ? bf16_to_f32(((const uint16_t *)base)[idx]) : ((const float *)base)[idx];
}

static void attn_scores_scalar(float *s, size_t s_stride, const float *q, const void *k, int kv_bf16, int p0,
                               int p1, int n_kv, int group, int head_dim, float scale) {
    for (int p = p0; p < p1; p++) {
        for (int kh = 0; kh < n_kv; kh++) {
            size_t base = ((size_t)p * (size_t)n_kv + (size_t)kh) * (size_t)head_dim;
            for (int g = 0; g < group; g++) {
                int h = kh * group + g;
                const float *qh = q + (size_t)h * (size_t)head_dim;
                float acc = 0.0f;
                for (int d = 0; d < head_dim; d++) acc += qh[d] * kv_at(k, kv_bf16, base + (size_t)d);
                s[(size_t)h * s_stride + (size_t)p] = acc * scale;
            }
        }
    }
}

static void attn_values_scalar(float *out, const float *prob, size_t p_stride, const void *v, int kv_bf16,
                               int n_pos, int n_kv, int group, int head_dim, int k0, int k1, int d0, int d1) {
    for (int kh = k0; kh < k1; kh++)
        for (int g = 0; g < group; g++) {
            float *o = out + (size_t)(kh * group + g) * (size_t)head_dim;
            for (int d = d0; d < d1; d++) o[d] = 0.0f;
        }
    for (int p = 0; p < n_pos; p++) {
        for (int kh = k0; kh < k1; kh++) {
            size_t base = ((size_t)p * (size_t)n_kv + (size_t)kh) * (size_t)head_dim;
            for (int g = 0; g < group; g++) {
                int h = kh * group + g;
                float pr = prob[(size_t)h * p_stride + (size_t)p];
                float *o = out + (size_t)h * (size_t)head_dim;
                for (int d = d0; d < d1; d++) o[d] += pr * kv_at(v, kv_bf16, base + (size_t)d);
            }
        }
    }
}

const struct kernel_ops kernel_ops_scalar = {
    .matvec_bf16 = matvec_bf16_scalar,
    .matvec_f32 = matvec_f32_scalar,
    .sum_squares = sum_squares_scalar,
    .scale_mul = scale_mul_scalar,
    .vec_add = vec_add_scalar,
    .swiglu = swiglu_scalar,
    .vexp = vexp_scalar,
    .bf16_to_f32 = bf16_to_f32_scalar,
    .f32_to_bf16 = f32_to_bf16_scalar,
    .rope_apply = rope_apply_scalar,
    .softmax = softmax_scalar,
    .attn_scores = attn_scores_scalar,
    .attn_values = attn_values_scalar,
};
