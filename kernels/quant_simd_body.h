/* The block matvec loops of kernels/quant.h, one body for AVX2 and AVX-512 VNNI: the file that includes it
 * supplies qv_offset(const int32_t *c), the act's offset for one block as a vector, and the block dot
 * products of one row's block against x's block (xv) on 256-bit vectors,
 *   qv_dot_q8_0(const int8_t *w, __m256i xv, __m256i off) and qv_dot_q4_0(const uint8_t *w, __m256i xv,
 *   __m256i off), each 8 int32 lanes that sum to the block's exact integer dot product,
 * which the rows after a matrix's last whole group take, and for the row groups (kernels/quant.h)
 *   qv_group_matvec_q8_0 and qv_group_matvec_q4_0(float *y, const unsigned char *g, const int8_t *xq,
 *   const float *xd, const int32_t *xc, int nb, int add),
 * one group's QUANT_GROUP_ROWS sums into y (added to it with add) from the group at g over x's nb blocks
 * (their codes, scales and offsets). */
#include <immintrin.h>

#include "kernels/quant.h"
#include "kernels/quant_ops.h"

static inline float qv_hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* The 16 bytes' low nibbles (elements 0-15) in the low half, high nibbles (16-31) in the high half: one
 * 128-bit broadcast load, one variable shift of the high half's dwords (the bits it moves across bytes are
 * masked off). */
static inline __m256i qv_nibbles(const uint8_t *w) {
    __m256i q = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)w));
    q = _mm256_srlv_epi32(q, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4));
    return _mm256_and_si256(q, _mm256_set1_epi8(0x0f));
}

/* An f16 scale in every lane. */
static inline __m256 qv_f16_broadcast(const uint16_t *d) {
    return _mm256_cvtph_ps(_mm_set1_epi16((short)*d));
}

/* One row's step over block b: the integer dot product in f32, times x's scale, then the FMA by the row's
 * scale. */
#define QV_ROW_STEP(ACC, DOT, B, XV, OFF, DX)                                                                \
    ACC = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(DOT((B)->qs, XV, OFF)), DX),                      \
                          qv_f16_broadcast(&(B)->d), ACC)

/* The rows after a matrix's last whole group, one at a time (at most QUANT_GROUP_ROWS - 1 of them, and none
 * in the shipped models). */
#define QV_ROWS(NAME, BLOCK, DOT)                                                                            \
    static void NAME(float *y, const struct BLOCK *w, const struct quant_act *a, int blk0, int rows, int nb, \
                     int add) {                                                                              \
        const int8_t *xq = a->qs + (size_t)blk0 * QUANT_BLOCK;                                               \
        for (int r = 0; r < rows; r++) {                                                                     \
            const struct BLOCK *row = w + (size_t)r * (size_t)nb;                                            \
            __m256 acc = _mm256_setzero_ps();                                                                \
            for (int k = 0; k < nb; k++) {                                                                   \
                const __m256i xv =                                                                           \
                    _mm256_loadu_si256((const __m256i *)(const void *)(xq + k * QUANT_BLOCK));               \
                QV_ROW_STEP(acc, DOT, row + k, xv, qv_offset(a->c4 + blk0 + k),                              \
                            _mm256_set1_ps(a->d[blk0 + k]));                                                 \
            }                                                                                                \
            float v = qv_hsum(acc);                                                                          \
            y[r] = add ? y[r] + v : v;                                                                       \
        }                                                                                                    \
    }

/* A block matrix in memory order (kernels/quant.h): the grouped rows one group at a time (the ISA's
 * GROUP), then the rows past the last whole group (ROWS). w starts on a group, and those rows are the
 * matrix's last (kernels/quant_ops.h). QV_MATVEC_PAIRS first takes the chunk's G groups two at a time
 * (the ISA's PAIR: group i beside group i + G/2, two streams a core), the last of an odd G alone. */
#define QV_MATVEC_BODY(BLOCK, GROUP, ROWS, PAIR_LOOP)                                                        \
    {                                                                                                        \
        const int grouped = rows - rows % QUANT_GROUP_ROWS, G = grouped / QUANT_GROUP_ROWS;                  \
        const size_t gb = sizeof(struct BLOCK) * (size_t)nb * QUANT_GROUP_ROWS;                              \
        const unsigned char *g = (const unsigned char *)(const void *)w;                                     \
        const int8_t *xq = a->qs + (size_t)blk0 * QUANT_BLOCK;                                               \
        int i = 0;                                                                                           \
        PAIR_LOOP;                                                                                           \
        for (; i < G; i++)                                                                                   \
            GROUP(y + i * QUANT_GROUP_ROWS, g + (size_t)i * gb, xq, a->d + blk0, a->c4 + blk0, nb, add);     \
        if (grouped < rows)                                                                                  \
            ROWS(y + grouped, (const struct BLOCK *)(const void *)(g + (size_t)G * gb), a, blk0,             \
                 rows - grouped, nb, add);                                                                   \
    }
#define QV_NO_PAIRS (void)0
#define QV_PAIRS_OF(PAIR)                                                                                    \
    for (; i < G / 2; i++)                                                                                   \
        PAIR(y + i * QUANT_GROUP_ROWS, g + (size_t)i * gb, y + (i + G / 2) * QUANT_GROUP_ROWS,               \
             g + (size_t)(i + G / 2) * gb, xq, a->d + blk0, a->c4 + blk0, nb, add);                          \
    i = G - G % 2
#define QV_MATVEC(NAME, BLOCK, GROUP, ROWS)                                                                  \
    static void NAME(float *y, const struct BLOCK *w, const struct quant_act *a, int blk0, int rows, int nb, \
                     int add) QV_MATVEC_BODY(BLOCK, GROUP, ROWS, QV_NO_PAIRS)
#define QV_MATVEC_PAIRS(NAME, BLOCK, GROUP, PAIR, ROWS)                                                      \
    static void NAME(float *y, const struct BLOCK *w, const struct quant_act *a, int blk0, int rows, int nb, \
                     int add) QV_MATVEC_BODY(BLOCK, GROUP, ROWS, QV_PAIRS_OF(PAIR))

/* x's blocks as act_block (quant.c) quantises them, 8 floats a vector: max|x| over the block (max is exact in
 * any order), the same scalar d and 1/d, each x * (1/d) rounded to nearest even (vroundps, as the plain
 * loop's magic-number rounding), packed to int8 in order; the sum from the int32 codes. */
static void qv_act_blocks(int8_t *qs, float *d, int32_t *c4, const float *x, int nb) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    for (int k = 0; k < nb; k++, x += QUANT_BLOCK, qs += QUANT_BLOCK) {
        __m256 v[4], m = _mm256_setzero_ps();
        for (int i = 0; i < 4; i++) {
            v[i] = _mm256_loadu_ps(x + 8 * i);
            m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[i]));
        }
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        const float amax = _mm_cvtss_f32(h), dk = amax / 127.0f, id = dk != 0.0f ? 1.0f / dk : 0.0f;
        const __m256 vid = _mm256_set1_ps(id);
        __m256i q[4];
        for (int i = 0; i < 4; i++)
            q[i] = _mm256_cvtps_epi32(
                _mm256_round_ps(_mm256_mul_ps(v[i], vid), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        /* packs work per 128-bit lane: the dwords come out as 0 2 4 6 1 3 5 7 of the wanted order */
        __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        b = _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)(void *)qs, b);
        __m256i s = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
        d[k] = dk;
        c4[k] = -8 * _mm_cvtsi128_si32(s4);
    }
}

QV_ROWS(qv_rows_q8_0, quant_block_q8_0, qv_dot_q8_0)
QV_ROWS(qv_rows_q4_0, quant_block_q4_0, qv_dot_q4_0)
QV_MATVEC(qv_matvec_q8_0, quant_block_q8_0, qv_group_matvec_q8_0, qv_rows_q8_0)
QV_MATVEC(qv_matvec_q4_0, quant_block_q4_0, qv_group_matvec_q4_0, qv_rows_q4_0)
#ifdef QV_GROUP_PAIRS /* the ISA's two-group loops (qv_group_pair_matvec_*) */
QV_MATVEC_PAIRS(qv_matvec_q8_0_pairs, quant_block_q8_0, qv_group_matvec_q8_0, qv_group_pair_matvec_q8_0,
                qv_rows_q8_0)
QV_MATVEC_PAIRS(qv_matvec_q4_0_pairs, quant_block_q4_0, qv_group_matvec_q4_0, qv_group_pair_matvec_q4_0,
                qv_rows_q4_0)
#endif
