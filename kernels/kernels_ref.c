/* The _ref twins of the kernels: plain scalar C, no SIMD intrinsics, no threads, double accumulation.
 * They define what the optimized kernels compute; tests/test_kernels_*.c check them in turn against
 * double-precision formulas written in the tests (RoPE, attention) and hand-computed values. */
#include <math.h>
#include <stdlib.h>

#include "kernels/col_panels.h"
#include "kernels/kernels.h"
#include "kernels/matvec_kquant.h"
#include "kernels/quant.h"
#include "kernels/quant_k.h"

static double ref_load(const void *base, enum fr_dtype t, size_t i) {
    return t == FR_DTYPE_BF16 ? (double)bf16_to_f32(((const uint16_t *)base)[i])
                              : (double)((const float *)base)[i];
}

void matvec_ref_panels(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
                       int panel_cols) {
    if (fr_dtype_is_kquant(wtype)) { /* memory order, each row read back in file order; x as the kernel's */
        const enum quant_k_type kt = matvec_kquant_type(wtype);
        const int nb = cols / QUANT_QK_K;
        struct quant_block_q8_k *xq = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *xq);
        unsigned char *row = malloc(quant_k_row_bytes(kt, (size_t)cols) + 1);
        if (!xq || !row) abort(); /* a reference for tests: no caller can carry on without it */
        quant_k_quantize_act(xq, x, (size_t)cols);
        for (int r = 0; r < rows; r++) {
            quant_k_matrix_row(row, kt, w, rows, cols, r);
            y[r] = (float)quant_k_dot_ref(kt, row, xq, nb);
        }
        free(xq), free(row);
        return;
    }
    if (fr_dtype_is_block(wtype)) { /* panel by panel, each a row-major block matrix */
        for (int p = 0; p < col_panel_count(cols, panel_cols); p++)
            quant_matvec_ref(
                y, (const unsigned char *)w + fr_dtype_bytes(wtype, col_panel_start(rows, panel_cols, p)),
                wtype, x + (size_t)p * (size_t)panel_cols, rows, col_panel_cols(cols, panel_cols, p), p > 0);
        return;
    }
    for (int r = 0; r < rows; r++) {
        double acc = 0.0;
        for (int c = 0; c < cols; c++)
            acc += ref_load(w, wtype, col_panel_index(rows, cols, panel_cols, r, c)) * x[c];
        y[r] = (float)acc;
    }
}

void matvec_ref(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols) {
    matvec_ref_panels(y, w, wtype, x, rows, cols, cols > 0 ? cols : 1);
}

void rmsnorm_ref(float *out, const float *x, const float *w, int n, float eps) {
    if (n <= 0) return;
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    double s = 1.0 / sqrt(ss / n + (double)eps);
    for (int i = 0; i < n; i++) out[i] = (float)(x[i] * s * w[i]);
}

void rmsnorm_heads_ref(float *x, const float *w, int n_heads, int head_dim, float eps) {
    for (int h = 0; h < n_heads; h++) {
        float *v = x + (size_t)h * (size_t)head_dim;
        rmsnorm_ref(v, v, w, head_dim, eps);
    }
}

void swiglu_ref(float *out, const float *gate, const float *up, int n) {
    for (int i = 0; i < n; i++) {
        double g = gate[i];
        out[i] = (float)(g / (1.0 + exp(-g)) * up[i]);
    }
}

void rope_apply_ref(float *x, int n_heads, int head_dim, int pos, double theta) {
    int half = head_dim / 2;
    for (int h = 0; h < n_heads; h++) {
        float *v = x + (size_t)h * (size_t)head_dim;
        for (int i = 0; i < half; i++) {
            double angle = (double)pos * pow(theta, -2.0 * (double)i / (double)head_dim);
            double c = cos(angle), s = sin(angle), a = v[i], b = v[i + half];
            v[i] = (float)(a * c - b * s);
            v[i + half] = (float)(b * c + a * s);
        }
    }
}

/* Scores in double, stored f32 in scratch; softmax in double from those; output summed in double. */
void attention_ref(float *out, const float *q, const void *k_cache, const void *v_cache, enum fr_dtype kvtype,
                   int n_pos, size_t head_stride, int n_heads, int n_kv_heads, int head_dim, float *scratch) {
    int group = n_heads / n_kv_heads;
    double scale = 1.0 / sqrt((double)head_dim);
    for (int h = 0; h < n_heads; h++) {
        int kh = h / group;
        const float *qh = q + (size_t)h * (size_t)head_dim;
        float *s = scratch + (size_t)h * (size_t)n_pos;
        double mx = -INFINITY;
        for (int p = 0; p < n_pos; p++) {
            size_t base = (size_t)kh * head_stride + (size_t)p * (size_t)head_dim;
            double acc = 0.0;
            for (int d = 0; d < head_dim; d++) acc += qh[d] * ref_load(k_cache, kvtype, base + (size_t)d);
            s[p] = (float)(acc * scale);
            if (s[p] > mx) mx = s[p];
        }
        double sum = 0.0;
        for (int p = 0; p < n_pos; p++) sum += exp(s[p] - mx);
        for (int p = 0; p < n_pos; p++) s[p] = (float)(exp(s[p] - mx) / sum);
        for (int d = 0; d < head_dim; d++) {
            double acc = 0.0;
            for (int p = 0; p < n_pos; p++) {
                size_t base = (size_t)kh * head_stride + (size_t)p * (size_t)head_dim;
                acc += (double)s[p] * ref_load(v_cache, kvtype, base + (size_t)d);
            }
            out[(size_t)h * (size_t)head_dim + (size_t)d] = (float)acc;
        }
    }
}
