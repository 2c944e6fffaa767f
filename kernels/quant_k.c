/* Q4_K, Q5_K and Q6_K: layouts, our quantisers, the Q8_K activations, the reference and scalar dot products
 * and the matvec driver (see quant_k.h); the SIMD dot products are in quant_k_avx2.c and quant_k_avx512.c. */
#include "kernels/quant_k.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/quant_dequant.h"
#include "kernels/quant_k_ops.h"

/* Each format's superblock bytes, name, and the file format whose (gguf-py-equal) dequantiser it uses */
static const struct {
    size_t bytes;
    const char *name;
    enum quant_file_type file;
} formats[] = {
    [QUANT_K_Q4_K] = {sizeof(struct quant_block_q4_k), "q4_k", QUANT_FILE_Q4_K},
    [QUANT_K_Q6_K] = {sizeof(struct quant_block_q6_k), "q6_k", QUANT_FILE_Q6_K},
    [QUANT_K_Q5_K] = {sizeof(struct quant_block_q5_k), "q5_k", QUANT_FILE_Q5_K},
};
_Static_assert(sizeof formats / sizeof formats[0] == QUANT_K_COUNT, "one entry per K-quant format");

size_t quant_k_row_bytes(enum quant_k_type t, size_t n) {
    return n / QUANT_QK_K * formats[t].bytes;
}

const char *quant_k_name(enum quant_k_type t) {
    return (unsigned)t < QUANT_K_COUNT ? formats[t].name : "unknown";
}

static void pack_scale_min(uint8_t scales[12], const int sc[8], const int m[8]) {
    for (int j = 0; j < 4; j++) {
        scales[j] = (uint8_t)(sc[j] | (sc[j + 4] >> 4) << 6);
        scales[j + 4] = (uint8_t)(m[j] | (m[j + 4] >> 4) << 6);
        scales[j + 8] = (uint8_t)((sc[j + 4] & 0xf) | (m[j + 4] & 0xf) << 4);
    }
}

static int clamp_int(long v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : (int)v;
}

/* Q4_K's and Q5_K's superblock, codes in [0, nmax] (15 or 31), one a byte in q for the caller to pack:
 * sub-block j's range, x ~ s * q + lo with lo <= 0 (stored as the min -lo) */
static void k45_block(uint16_t *d16, uint16_t *dmin16, uint8_t scales[12], uint8_t q[QUANT_QK_K],
                      const float *x, int nmax) {
    float s[8], mn[8], smax = 0, mmax = 0;
    for (int j = 0; j < 8; j++) {
        float lo = 0, hi = 0;
        for (int l = 0; l < 32; l++) lo = fminf(lo, x[32 * j + l]), hi = fmaxf(hi, x[32 * j + l]);
        s[j] = (hi - lo) / (float)nmax, mn[j] = -lo;
        smax = fmaxf(smax, s[j]), mmax = fmaxf(mmax, mn[j]);
    }
    *d16 = quant_f16_from_f32(smax / 63.0f), *dmin16 = quant_f16_from_f32(mmax / 63.0f);
    const float dq = quant_f16_to_f32(*d16), dminq = quant_f16_to_f32(*dmin16);
    int sc[8], m[8];
    for (int j = 0; j < 8; j++) {
        sc[j] = dq > 0 ? clamp_int(lrintf(s[j] / dq), 0, 63) : 0;
        m[j] = dminq > 0 ? clamp_int(lrintf(mn[j] / dminq), 0, 63) : 0;
    }
    pack_scale_min(scales, sc, m);
    for (int j = 0; j < 8; j++) {
        const float step = dq * (float)sc[j], off = dminq * (float)m[j];
        for (int l = 0; l < 32; l++)
            q[32 * j + l] =
                (uint8_t)(step > 0 ? clamp_int(lrintf((x[32 * j + l] + off) / step), 0, nmax) : 0);
    }
}

/* Codes of sub-blocks 2c and 2c + 1 share qs[32c .. 32c + 31] as low and high nibbles; Q5_K's fifth bit of
 * sub-block j goes to bit j of qh[l] */
static void k45_pack(uint8_t qs[QUANT_QK_K / 2], uint8_t *qh, const uint8_t q[QUANT_QK_K]) {
    for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++)
            qs[32 * c + l] = (uint8_t)((q[64 * c + l] & 0xf) | (q[64 * c + 32 + l] & 0xf) << 4);
    if (!qh) return;
    memset(qh, 0, QUANT_QK_K / 8);
    for (int j = 0; j < 8; j++)
        for (int l = 0; l < 32; l++) qh[l] |= (uint8_t)((q[32 * j + l] >> 4) << j);
}

static void q4_k_block(struct quant_block_q4_k *b, const float *x) {
    uint8_t q[QUANT_QK_K];
    k45_block(&b->d, &b->dmin, b->scales, q, x, 15);
    k45_pack(b->qs, NULL, q);
}

static void q5_k_block(struct quant_block_q5_k *b, const float *x) {
    uint8_t q[QUANT_QK_K];
    k45_block(&b->d, &b->dmin, b->scales, q, x, 31);
    k45_pack(b->qs, b->qh, q);
}

/* Group g's largest magnitude over -32 as its scale (codes in [-32, 31]), the scales as int8 of d */
static void q6_k_block(struct quant_block_q6_k *b, const float *x) {
    float s[16], amax = 0;
    for (int g = 0; g < 16; g++) {
        float big = 0;
        for (int l = 0; l < 16; l++)
            if (fabsf(x[16 * g + l]) > fabsf(big)) big = x[16 * g + l];
        s[g] = big / -32.0f;
        amax = fmaxf(amax, fabsf(s[g]));
    }
    b->d = quant_f16_from_f32(amax / 127.0f);
    const float dq = quant_f16_to_f32(b->d);
    memset(b->ql, 0, sizeof b->ql);
    memset(b->qh, 0, sizeof b->qh);
    for (int g = 0; g < 16; g++) {
        b->scales[g] = (int8_t)(dq > 0 ? clamp_int(lrintf(s[g] / dq), -127, 127) : 0);
        const float step = dq * (float)b->scales[g];
        for (int l = 0; l < 16; l++) {
            const int e = 16 * g + l, half = e / 128, j = e % 128;
            const int q = (step != 0 ? clamp_int(lrintf(x[e] / step), -32, 31) : 0) + 32;
            b->ql[half * 64 + j % 64] |= (uint8_t)((q & 0xf) << (j < 64 ? 0 : 4));
            b->qh[half * 32 + j % 32] |= (uint8_t)((q >> 4) << (2 * (j / 32)));
        }
    }
}

void quant_k_quantize_row(void *dst, enum quant_k_type t, const float *src, size_t n) {
    for (size_t b = 0; b < n / QUANT_QK_K; b++) {
        if (t == QUANT_K_Q4_K)
            q4_k_block((struct quant_block_q4_k *)dst + b, src + b * QUANT_QK_K);
        else if (t == QUANT_K_Q5_K)
            q5_k_block((struct quant_block_q5_k *)dst + b, src + b * QUANT_QK_K);
        else
            q6_k_block((struct quant_block_q6_k *)dst + b, src + b * QUANT_QK_K);
    }
}

void quant_k_dequantize_row(float *dst, enum quant_k_type t, const void *src, size_t n) {
    quant_dequantize_file(dst, formats[t].file, src, n);
}

static void quantize_act_scalar(struct quant_block_q8_k *dst, const float *x, size_t n) {
    for (size_t b = 0; b < n / QUANT_QK_K; b++) {
        const float *xb = x + b * QUANT_QK_K;
        float amax = 0;
        for (int i = 0; i < QUANT_QK_K; i++) amax = fmaxf(amax, fabsf(xb[i]));
        const float d = amax / 127.0f, inv = amax > 0 ? 127.0f / amax : 0.0f;
        dst[b].d = d;
        for (int g = 0; g < QUANT_QK_K / 16; g++) {
            int sum = 0;
            for (int l = 0; l < 16; l++) {
                int q = clamp_int(lrintf(xb[16 * g + l] * inv), -127, 127);
                dst[b].qs[16 * g + l] = (int8_t)q;
                sum += q;
            }
            dst[b].bsums[g] = (int16_t)sum;
        }
    }
}

/* Q6_K code e of a superblock, in [0, 63] (its -32 is applied by the callers) */
static int q6_k_code(const struct quant_block_q6_k *b, int e) {
    const int half = e / 128, j = e % 128;
    const int lo = b->ql[half * 64 + j % 64] >> (j < 64 ? 0 : 4) & 0xf;
    const int hi = b->qh[half * 32 + j % 32] >> (2 * (j / 32)) & 3;
    return lo | hi << 4;
}

/* A Q4_K or Q5_K superblock's exact integer sums: sum_j sc[j] (codes . x's codes) over sub-blocks j of 32,
 * and sum_j m[j] (x's codes summed over sub-block j, from its bsums) */
static void k45_sums(const struct quant_k45_view *w, const struct quant_block_q8_k *xb, long *dots,
                     long *mins) {
    *dots = 0, *mins = 0;
    for (int j = 0; j < 8; j++) {
        int sc, m;
        quant_q4_k_scale_min(w->scales, j, &sc, &m);
        long dot = 0;
        for (int l = 0; l < 32; l++) {
            int q = w->qs[32 * (j / 2) + l] >> (4 * (j % 2)) & 0xf;
            if (w->qh) q |= (w->qh[l] >> j & 1) << 4;
            dot += (long)q * xb->qs[32 * j + l];
        }
        *dots += sc * dot;
        *mins += (long)m * (xb->bsums[2 * j] + xb->bsums[2 * j + 1]);
    }
}

double quant_k_dot_ref(enum quant_k_type t, const void *row, const struct quant_block_q8_k *x, int nb) {
    double total = 0;
    for (int b = 0; b < nb; b++) {
        const struct quant_block_q8_k *xb = x + b;
        if (t != QUANT_K_Q6_K) {
            const struct quant_k45_view w = quant_k45_at(t, row, (size_t)b);
            long dots, mins;
            k45_sums(&w, xb, &dots, &mins);
            total += (double)xb->d * ((double)quant_f16_to_f32(w.d) * (double)dots -
                                      (double)quant_f16_to_f32(w.dmin) * (double)mins);
        } else {
            const struct quant_block_q6_k *w = (const struct quant_block_q6_k *)row + b;
            long dots = 0;
            for (int g = 0; g < 16; g++) {
                long dot = 0;
                for (int l = 0; l < 16; l++)
                    dot += (long)(q6_k_code(w, 16 * g + l) - 32) * xb->qs[16 * g + l];
                dots += w->scales[g] * dot;
            }
            total += (double)xb->d * (double)quant_f16_to_f32(w->d) * (double)dots;
        }
    }
    return total;
}

/* The scalar loops: the reference's integer sums, combined in f32 as the SIMD loops do */
static float dot_k45_scalar(enum quant_k_type t, const void *row, const struct quant_block_q8_k *x, int nb) {
    float total = 0;
    for (int b = 0; b < nb; b++) {
        const struct quant_k45_view w = quant_k45_at(t, row, (size_t)b);
        long dots, mins;
        k45_sums(&w, &x[b], &dots, &mins);
        total += x[b].d * (quant_f16_to_f32(w.d) * (float)dots - quant_f16_to_f32(w.dmin) * (float)mins);
    }
    return total;
}

static float dot_q4_k_scalar(const struct quant_block_q4_k *w, const struct quant_block_q8_k *x, int nb) {
    return dot_k45_scalar(QUANT_K_Q4_K, w, x, nb);
}

static float dot_q5_k_scalar(const struct quant_block_q5_k *w, const struct quant_block_q8_k *x, int nb) {
    return dot_k45_scalar(QUANT_K_Q5_K, w, x, nb);
}

static float dot_q6_k_scalar(const struct quant_block_q6_k *w, const struct quant_block_q8_k *x, int nb) {
    float total = 0;
    for (int b = 0; b < nb; b++) {
        int dots = 0;
        for (int g = 0; g < 16; g++) {
            int dot = 0;
            for (int l = 0; l < 16; l++) dot += (q6_k_code(&w[b], 16 * g + l) - 32) * x[b].qs[16 * g + l];
            dots += w[b].scales[g] * dot;
        }
        total += x[b].d * quant_f16_to_f32(w[b].d) * (float)dots;
    }
    return total;
}

/* The scalar loops over a group of 8 rows (kernels/quant_k_layout.h), each row's codes read in place: the
 * row loops' integer sums and f32 combination */
static void group_q4_k_scalar(float *y, const struct quant_group_q4_k *g, const struct quant_block_q8_k *x,
                              int nb) {
    for (int r = 0; r < QUANT_K_GROUP_ROWS; r++) {
        float total = 0;
        for (int b = 0; b < nb; b++) {
            const struct quant_group_q4_k *B = g + b;
            uint8_t scales[12];
            for (int k = 0; k < 3; k++) memcpy(scales + 4 * k, &B->scales[k][r], 4);
            long dots = 0, mins = 0;
            for (int j = 0; j < 8; j++) {
                int sc, m;
                quant_q4_k_scale_min(scales, j, &sc, &m);
                long dot = 0;
                for (int e = 32 * j; e < 32 * j + 32; e++) {
                    int shift;
                    const size_t at = quant_group_nibble_at(e, r, &shift);
                    dot += (long)(B->qs[at] >> shift & 0xf) * x[b].qs[e];
                }
                dots += sc * dot;
                mins += (long)m * (x[b].bsums[2 * j] + x[b].bsums[2 * j + 1]);
            }
            total += x[b].d *
                     (quant_f16_to_f32(B->d[r]) * (float)dots - quant_f16_to_f32(B->dmin[r]) * (float)mins);
        }
        y[r] = total;
    }
}

static void group_q6_k_scalar(float *y, const struct quant_group_q6_k *g, const struct quant_block_q8_k *x,
                              int nb) {
    for (int r = 0; r < QUANT_K_GROUP_ROWS; r++) {
        float total = 0;
        for (int b = 0; b < nb; b++) {
            const struct quant_group_q6_k *B = g + b;
            const uint8_t *codes = &B->codes[0][0][0];
            int dots = 0;
            for (int s = 0; s < 16; s++) {
                int dot = 0;
                for (int e = 16 * s; e < 16 * s + 16; e++) {
                    int sl, sh;
                    const size_t lo = quant_group_q6_k_ql_at(e, r, &sl),
                                 hi = quant_group_q6_k_qh_at(e, r, &sh);
                    dot += (((codes[lo] >> sl & 0xf) | (codes[hi] >> sh & 3) << 4) - 32) * x[b].qs[e];
                }
                dots += B->scales[s / 4][quant_group_q6_k_scale_at(s, r)] * dot;
            }
            total += x[b].d * quant_f16_to_f32(B->d[r]) * (float)dots;
        }
        y[r] = total;
    }
}

const struct quant_k_ops quant_k_ops_scalar = {dot_q4_k_scalar,   dot_q6_k_scalar,   dot_q5_k_scalar,
                                               group_q4_k_scalar, group_q6_k_scalar, quantize_act_scalar,
                                               "scalar"};

/* AVX-512 takes VNNI's loop where the CPU has it, else AVX2's, as the Q8_0/Q4_0 matvec does */
static const struct quant_k_ops *ops_active(void) {
    switch (kernel_isa_active()) {
    case KERNEL_ISA_AVX512:
        return kernel_has_avx512_vnni() ? &quant_k_ops_avx512 : &quant_k_ops_avx2;
    case KERNEL_ISA_AVX2:
        return &quant_k_ops_avx2;
    default:
        return &quant_k_ops_scalar;
    }
}

void quant_k_quantize_act(struct quant_block_q8_k *dst, const float *x, size_t n) {
    ops_active()->quantize_act(dst, x, n);
}

const char *quant_k_describe(void) {
    return ops_active()->name;
}

static float row_dot(const struct quant_k_ops *ops, enum quant_k_type t, const void *row,
                     const struct quant_block_q8_k *x, int nb) {
    return t == QUANT_K_Q4_K   ? ops->dot_q4_k(row, x, nb)
           : t == QUANT_K_Q5_K ? ops->dot_q5_k(row, x, nb)
                               : ops->dot_q6_k(row, x, nb);
}

/* A row of a matrix in memory order back in file order (quant_k_matrix_dequantize_row, and an ISA without
 * a group loop): the widest row's bytes, per thread */
static _Thread_local unsigned char
    row_scratch[QUANT_ACT_MAX_COLS / QUANT_QK_K * sizeof(struct quant_block_q6_k)];

void quant_k_matrix_dequantize_row(float *dst, enum quant_k_type t, const void *m, int rows, int cols,
                                   int r) {
    quant_k_matrix_row(row_scratch, t, m, rows, cols, r);
    quant_k_dequantize_row(dst, t, row_scratch, (size_t)cols);
}

void quant_k_matvec_rows(float *y, const void *w, enum quant_k_type t, const struct quant_block_q8_k *x,
                         int nb, int rows, int r0, int r1) {
    const struct quant_k_ops *ops = ops_active();
    const size_t rb = quant_k_row_bytes(t, (size_t)nb * QUANT_QK_K);
    const int grouped = quant_k_grouped_rows(t, rows);
    int r = r0;
    for (; r < r1 && r < grouped; r += QUANT_K_GROUP_ROWS) {
        const unsigned char *g = (const unsigned char *)w + (size_t)r * rb;
        if (t == QUANT_K_Q4_K && ops->group_q4_k) {
            ops->group_q4_k(y + r, (const void *)g, x, nb);
        } else if (t == QUANT_K_Q6_K && ops->group_q6_k) {
            ops->group_q6_k(y + r, (const void *)g, x, nb);
        } else {
            for (int k = r; k < r + QUANT_K_GROUP_ROWS; k++) {
                quant_k_matrix_row(row_scratch, t, w, rows, nb * QUANT_QK_K, k);
                y[k] = row_dot(ops, t, row_scratch, x, nb);
            }
        }
    }
    for (; r < r1; r++) y[r] = row_dot(ops, t, (const unsigned char *)w + (size_t)r * rb, x, nb);
}

int quant_k_matvec(float *y, const void *w, enum quant_k_type t, const float *x, int rows, int cols,
                   int threads) {
    if (cols <= 0 || cols % QUANT_QK_K != 0) return -1;
    const int nb = cols / QUANT_QK_K;
    struct quant_block_q8_k *xq = malloc((size_t)nb * sizeof *xq);
    if (!xq) return -1;
    quant_k_quantize_act(xq, x, (size_t)cols);
#pragma omp parallel num_threads(threads > 0 ? threads : 1)
    {
        const int n = omp_get_num_threads(), i = omp_get_thread_num();
        /* whole groups to each thread (quant_k_matvec_rows' bounds) */
        const int units = (rows + QUANT_K_GROUP_ROWS - 1) / QUANT_K_GROUP_ROWS;
        const int u0 = (int)((long)units * i / n), u1 = (int)((long)units * (i + 1) / n);
        const int r0 = u0 * QUANT_K_GROUP_ROWS,
                  r1 = u1 * QUANT_K_GROUP_ROWS < rows ? u1 * QUANT_K_GROUP_ROWS : rows;
        if (r0 < r1) quant_k_matvec_rows(y, w, t, xq, nb, rows, r0, r1);
    }
    free(xq);
    return 0;
}
