/* The block matvec loops of kernels/quant.h, one body for AVX2 and AVX-512 VNNI: the file that includes it
 * supplies the block dot products on 256-bit vectors,
 *   qv_dot_q8_0(const int8_t *w, const int8_t *x, const int32_t *c128) and
 *   qv_dot_q4_0(const uint8_t *w, const int8_t *x, const int32_t *c4),
 * each 8 int32 lanes that sum to the block's exact integer dot product (the codes' offsets taken off by the
 * act's c4 / c128 where the loop multiplies unsigned codes), and QV_NAME. A block's lanes are converted to
 * f32 and added in with one FMA by the product of the two scales; two sums break the FMA chain. */
#include <immintrin.h>

#include "kernels/quant.h"
#include "kernels/quant_ops.h"

/* Bytes ahead of the block being read that each step prefetches into L1 (about one line a step). */
#define QV_PF_BYTES 1024

static inline float qv_hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#define QV_MATVEC(NAME, BLOCK, DOT, CORR)                                                                    \
    static void NAME(float *y, const struct BLOCK *w, const struct quant_act *a, int blk0, int rows, int nb, \
                     int add) {                                                                              \
        const int8_t *xq = a->qs + (size_t)blk0 * QUANT_BLOCK;                                               \
        const float *xd = a->d + blk0;                                                                       \
        const int32_t *xc = a->CORR + blk0;                                                                  \
        for (int r = 0; r < rows; r++) {                                                                     \
            const struct BLOCK *row = w + (size_t)r * (size_t)nb;                                            \
            __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();                                   \
            int k = 0;                                                                                       \
            for (; k + 2 <= nb; k += 2) {                                                                    \
                _mm_prefetch((const char *)(row + k) + QV_PF_BYTES, _MM_HINT_T0);                            \
                __m256i s0 = DOT(row[k].qs, xq + (size_t)k * QUANT_BLOCK, xc + k);                           \
                __m256i s1 = DOT(row[k + 1].qs, xq + (size_t)(k + 1) * QUANT_BLOCK, xc + k + 1);             \
                acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s0), _mm256_set1_ps(_cvtsh_ss(row[k].d) * xd[k]),  \
                                       acc0);                                                                \
                acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s1),                                               \
                                       _mm256_set1_ps(_cvtsh_ss(row[k + 1].d) * xd[k + 1]), acc1);           \
            }                                                                                                \
            if (k < nb) {                                                                                    \
                __m256i s0 = DOT(row[k].qs, xq + (size_t)k * QUANT_BLOCK, xc + k);                           \
                acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s0), _mm256_set1_ps(_cvtsh_ss(row[k].d) * xd[k]),  \
                                       acc0);                                                                \
            }                                                                                                \
            float v = qv_hsum(_mm256_add_ps(acc0, acc1));                                                    \
            y[r] = add ? y[r] + v : v;                                                                       \
        }                                                                                                    \
    }

QV_MATVEC(qv_matvec_q8_0, quant_block_q8_0, qv_dot_q8_0, c128)
QV_MATVEC(qv_matvec_q4_0, quant_block_q4_0, qv_dot_q4_0, c4)
