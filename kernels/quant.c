/* The block formats of kernels/quant.h: f16 scales, quantise and dequantise, the activations' quantisation,
 * the scalar loops of the block matvec (quant_ops.h; kernels.c picks the active ISA's table) and the
 * reference. Checked in tests/test_quant.c (round trips within each format's bound, hand-made blocks, every
 * ISA's matvec against quant_matvec_ref and the dequantised weights' f32 product). */
#include "kernels/quant.h"

#include <string.h>

#include "kernels/quant_ops.h"

float quant_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
    if (e == 0x1f) {
        u = sign | 0x7f800000u | (m << 13); /* inf, NaN */
    } else if (e == 0) {
        float f = (float)m * 5.9604644775390625e-8f; /* subnormal: m * 2^-24, exact */
        memcpy(&u, &f, sizeof u);
        u |= sign;
    } else {
        u = sign | ((e + 112u) << 23) | (m << 13); /* rebias 15 -> 127 */
    }
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t quant_f16_from_f32(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);  /* NaN stays NaN */
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* 65520 and up round to inf */
    if (ax < 0x38800000u) {                                   /* below 2^-14: a subnormal f16 */
        float a;
        memcpy(&a, &ax, sizeof a);
        float r = a * 16777216.0f;                              /* in units of 2^-24, exact */
        uint32_t m = (uint32_t)((r + 8388608.0f) - 8388608.0f); /* nearest even; 1024 is the least normal */
        return (uint16_t)(sign | m);
    }
    uint32_t r = ax + 0xfffu + ((ax >> 13) & 1u) - 0x38000000u; /* nearest even, rebias 127 -> 15 */
    return (uint16_t)(sign | (r >> 13));
}

int quant_check_cols(enum fr_dtype t, int cols, const char **why) {
    if (!fr_dtype_is_block(t)) return 0;
    if (cols % QUANT_BLOCK != 0) {
        if (why) *why = "a Q8_0 or Q4_0 matrix needs a multiple of 32 columns (whole blocks)";
        return -1;
    }
    if (cols > QUANT_ACT_MAX_COLS) {
        if (why) *why = "a Q8_0 or Q4_0 matrix of more than 32768 columns (the matvec's x buffer)";
        return -1;
    }
    return 0;
}

/* 1.5 * 2^23: (t + it) - it rounds t (|t| < 2^22) to nearest even in plain f32 arithmetic, which the
 * compiler vectorises (no libm call). */
#define QUANT_ROUND_MAGIC 12582912.0f

static inline float round_even(float t) {
    float r = t + QUANT_ROUND_MAGIC;
    return r - QUANT_ROUND_MAGIC;
}

/* llama.cpp's roundf: to nearest, halves away from zero. t - r is exact here (|t| <= 127.5), so a tie is
 * seen exactly and moved one step out. */
static inline float round_away(float t) {
    float r = round_even(t);
    float diff = t - r;
    return diff == 0.5f || diff == -0.5f ? t + (t < 0 ? -0.5f : 0.5f) : r;
}

static void quantize_q8_0(struct quant_block_q8_0 *b, const float *x) {
    float amax = 0.0f;
    for (int i = 0; i < QUANT_BLOCK; i++) {
        float a = x[i] < 0 ? -x[i] : x[i];
        amax = a > amax ? a : amax;
    }
    float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    b->d = quant_f16_from_f32(d);
    for (int i = 0; i < QUANT_BLOCK; i++) b->qs[i] = (int8_t)(int)round_away(x[i] * id);
}

/* d = m / -8 for the value m of largest magnitude, so m itself is code 0 exactly; the opposite end, +8 d,
 * is clamped to code 15 (7 d), as llama.cpp's quantize_row_q4_0_ref does. */
static void quantize_q4_0(struct quant_block_q4_0 *b, const float *x) {
    float amax = 0.0f, m = 0.0f;
    for (int i = 0; i < QUANT_BLOCK; i++) {
        float a = x[i] < 0 ? -x[i] : x[i];
        if (a > amax) amax = a, m = x[i];
    }
    float d = m / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    b->d = quant_f16_from_f32(d);
    for (int i = 0; i < QUANT_BLOCK / 2; i++) {
        int lo = (int)(x[i] * id + 8.5f), hi = (int)(x[i + QUANT_BLOCK / 2] * id + 8.5f);
        lo = lo < 0 ? 0 : lo > 15 ? 15 : lo;
        hi = hi < 0 ? 0 : hi > 15 ? 15 : hi;
        b->qs[i] = (uint8_t)(lo | hi << 4);
    }
}

void quant_quantize_row(void *dst, enum fr_dtype t, const float *src, size_t n) {
    for (size_t k = 0; k < n / QUANT_BLOCK; k++) {
        if (t == FR_DTYPE_Q8_0)
            quantize_q8_0((struct quant_block_q8_0 *)dst + k, src + k * QUANT_BLOCK);
        else
            quantize_q4_0((struct quant_block_q4_0 *)dst + k, src + k * QUANT_BLOCK);
    }
}

void quant_dequantize_row(float *dst, enum fr_dtype t, const void *src, size_t n) {
    for (size_t k = 0; k < n / QUANT_BLOCK; k++) {
        float *o = dst + k * QUANT_BLOCK;
        if (t == FR_DTYPE_Q8_0) {
            const struct quant_block_q8_0 *b = (const struct quant_block_q8_0 *)src + k;
            float d = quant_f16_to_f32(b->d);
            for (int i = 0; i < QUANT_BLOCK; i++) o[i] = d * (float)b->qs[i];
        } else {
            const struct quant_block_q4_0 *b = (const struct quant_block_q4_0 *)src + k;
            float d = quant_f16_to_f32(b->d);
            for (int i = 0; i < QUANT_BLOCK / 2; i++) {
                o[i] = d * (float)((b->qs[i] & 0xf) - 8);
                o[i + QUANT_BLOCK / 2] = d * (float)((b->qs[i] >> 4) - 8);
            }
        }
    }
}

/* A row's columns from a matrix in memory order (kernels/quant.h): grouped rows a block at a time. */
void quant_matrix_dequantize(float *dst, enum fr_dtype t, const void *m, int rows, int cols, int r, int c0,
                             int n) {
    if (r >= quant_grouped_rows(t, rows)) {
        quant_dequantize_row(
            dst, t, (const unsigned char *)m + fr_dtype_bytes(t, (size_t)r * (size_t)cols + (size_t)c0),
            (size_t)n);
        return;
    }
    for (int c = 0; c < n; c += QUANT_BLOCK) {
        union { /* either format's block */
            struct quant_block_q4_0 q4;
            struct quant_block_q8_0 q8;
        } b;
        quant_matrix_block(&b, t, m, rows, cols, r, (c0 + c) / QUANT_BLOCK);
        quant_dequantize_row(dst + c, t, &b, QUANT_BLOCK);
    }
}

/* ---- activations ---- */

/* One 32-block of x: codes q = round(x / d), d = max|x| / 127 (0: all codes 0), and sum(q). */
static void act_block(int8_t *q, float *d_out, int32_t *sum_out, const float *x) {
    float amax = 0.0f;
    for (int i = 0; i < QUANT_BLOCK; i++) {
        float a = x[i] < 0 ? -x[i] : x[i];
        amax = a > amax ? a : amax;
    }
    float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    int32_t sum = 0;
    for (int i = 0; i < QUANT_BLOCK; i++) {
        q[i] = (int8_t)(int)round_even(x[i] * id);
        sum += q[i];
    }
    *d_out = d;
    *sum_out = sum;
}

void quant_act_blocks_scalar(int8_t *qs, float *d, int32_t *c4, const float *x, int nb) {
    for (int k = 0; k < nb; k++) {
        int32_t s;
        act_block(qs + (size_t)k * QUANT_BLOCK, &d[k], &s, x + (size_t)k * QUANT_BLOCK);
        c4[k] = -8 * s;
    }
}

/* Each thread's quantised x: no allocation in the kernels, and no thread waits for another's copy (a
 * 3072-column x took 3.09 us in the plain loop, 0.75 in either SIMD one: Zen 4, one thread, hot, best of 20
 * x 1000). */
static _Thread_local struct {
    _Alignas(64) int8_t qs[QUANT_ACT_MAX_COLS];
    float d[QUANT_ACT_MAX_COLS / QUANT_BLOCK];
    int32_t c4[QUANT_ACT_MAX_COLS / QUANT_BLOCK];
    struct quant_act act;
} act_buf;

const struct quant_act *quant_act_quantize_by(const float *x, int n, quant_act_blocks_fn *blocks) {
    int nb = n / QUANT_BLOCK;
    blocks(act_buf.qs, act_buf.d, act_buf.c4, x, nb);
    act_buf.act = (struct quant_act){act_buf.qs, act_buf.d, act_buf.c4, nb * QUANT_BLOCK};
    return &act_buf.act;
}

const struct quant_act *quant_act_quantize(const float *x, int n) {
    return quant_act_quantize_by(x, n, quant_act_blocks_scalar);
}

/* ---- matvec ---- */

static int32_t dot_q8_0(const struct quant_block_q8_0 *b, const int8_t *x) {
    int32_t s = 0;
    for (int i = 0; i < QUANT_BLOCK; i++) s += b->qs[i] * x[i];
    return s;
}

static int32_t dot_q4_0(const struct quant_block_q4_0 *b, const int8_t *x) {
    int32_t s = 0;
    for (int i = 0; i < QUANT_BLOCK / 2; i++)
        s += ((b->qs[i] & 0xf) - 8) * x[i] + ((b->qs[i] >> 4) - 8) * x[i + QUANT_BLOCK / 2];
    return s;
}

/* w in memory order (kernels/quant.h), read a block at a time back in file order */
static void scalar_blocks(float *y, const void *w, enum fr_dtype t, const struct quant_act *a, int blk0,
                          int rows, int nb, int add) {
    for (int r = 0; r < rows; r++) {
        float acc = 0.0f;
        for (int k = 0; k < nb; k++) {
            union {
                struct quant_block_q4_0 q4;
                struct quant_block_q8_0 q8;
            } b;
            quant_matrix_block(&b, t, w, rows, nb * QUANT_BLOCK, r, k);
            const int8_t *xb = a->qs + (size_t)(blk0 + k) * QUANT_BLOCK;
            const int32_t s = t == FR_DTYPE_Q8_0 ? dot_q8_0(&b.q8, xb) : dot_q4_0(&b.q4, xb);
            acc += quant_f16_to_f32(t == FR_DTYPE_Q8_0 ? b.q8.d : b.q4.d) * a->d[blk0 + k] * (float)s;
        }
        y[r] = add ? y[r] + acc : acc;
    }
}

static void scalar_q8_0(float *y, const struct quant_block_q8_0 *w, const struct quant_act *a, int blk0,
                        int rows, int nb, int add) {
    scalar_blocks(y, w, FR_DTYPE_Q8_0, a, blk0, rows, nb, add);
}

static void scalar_q4_0(float *y, const struct quant_block_q4_0 *w, const struct quant_act *a, int blk0,
                        int rows, int nb, int add) {
    scalar_blocks(y, w, FR_DTYPE_Q4_0, a, blk0, rows, nb, add);
}

const struct quant_ops quant_ops_scalar = {.matvec_q8_0 = scalar_q8_0,
                                           .matvec_q4_0 = scalar_q4_0,
                                           .act_blocks = quant_act_blocks_scalar,
                                           .name = "scalar"};

void quant_matvec_ref(float *y, const void *w, enum fr_dtype t, const float *x, int rows, int cols, int add) {
    int nb = cols / QUANT_BLOCK;
    for (int r = 0; r < rows; r++) {
        double acc = 0.0;
        for (int k = 0; k < nb; k++) {
            int8_t q[QUANT_BLOCK];
            float dx;
            int32_t unused, s;
            act_block(q, &dx, &unused, x + (size_t)k * QUANT_BLOCK);
            float dw;
            if (t == FR_DTYPE_Q8_0) {
                struct quant_block_q8_0 b;
                quant_matrix_block(&b, t, w, rows, cols, r, k);
                dw = quant_f16_to_f32(b.d), s = dot_q8_0(&b, q);
            } else {
                struct quant_block_q4_0 b;
                quant_matrix_block(&b, t, w, rows, cols, r, k);
                dw = quant_f16_to_f32(b.d), s = dot_q4_0(&b, q);
            }
            acc += (double)dw * (double)dx * (double)s;
        }
        y[r] = add ? (float)((double)y[r] + acc) : (float)acc;
    }
}
