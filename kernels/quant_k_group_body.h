/* The K-quant matvec over a group of 8 rows in memory order (kernels/quant_k_blocks.h, quant_group_*), one
 * body for AVX2 and AVX-512 (which compiles the same 256-bit loop). A vector holds 4 weights of each of the
 * 8 rows, so x's 4 codes are broadcast once for 8 rows and each row's 32-bit lane gathers its own sums: no
 * reduction across lanes, and the scales of 8 rows are decoded by a few vector operations a superblock.
 * vpmaddubsw's int16 pairs add in int16 over at most 32 Q4_K weights (8 x 2 x 15 x 128 < 32768) or 8
 * Q6_K ones (4 x 63 x 128), then vpmaddwd by the scales into int32: the integers of quant_k_dot_ref. */
#include <immintrin.h>
#include <string.h>

#include "kernels/quant_k_blocks.h"
#include "kernels/quant_k_layout.h"
#include "kernels/quant_k_q6_codes.h"

static inline __m256i qkg_x4(const int8_t *p) { /* 4 x codes in every 32-bit lane */
    int32_t v;
    memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
}

static inline __m256i qkg_load(const void *p) {
    return _mm256_loadu_si256((const __m256i *)p);
}

/* A vpshufb index: in each 32-bit lane, the lane's bytes j and k as two int16 (zero-extended bytes when
 * hi is 0x80; byte pairs j, j + 1 and k, k + 1 when j + 1 and k + 1 are passed as hi) */
static inline __m256i qkg_pick(int j, int hj, int k, int hk) {
    const __m256i lane =
        _mm256_setr_epi32(0, 0x04040404, 0x08080808, 0x0c0c0c0c, 0, 0x04040404, 0x08080808, 0x0c0c0c0c);
    const __m256i idx =
        _mm256_set1_epi32((int)((unsigned)hk << 24 | (unsigned)k << 16 | (unsigned)hj << 8 | (unsigned)j));
    /* 0x80 (zero the byte) stays above 0x80 after the add: vpshufb looks at bit 7 only */
    return _mm256_add_epi8(idx, lane);
}

/* y[0..7] = the 8 rows of group g . x over nb superblocks */
static void qkg_q4_k(float *y, const struct quant_group_q4_k *g, const struct quant_block_q8_k *x, int nb) {
    const __m256i m4 = _mm256_set1_epi8(0x0f), m6 = _mm256_set1_epi8(0x3f), m30 = _mm256_set1_epi8(0x30);
    const __m256i low_byte = _mm256_set1_epi16(0x00ff);
    __m256i pick[4];
    for (int j = 0; j < 4; j++) pick[j] = qkg_pick(j, 0x80, j, 0x80);
    /* x's sub-block sums in the order the mins' even and odd bytes take them: 0, 2 | 1, 3 | 4, 6 | 5, 7 */
    const __m128i bs_order = _mm_setr_epi8(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
    __m256 acc = _mm256_setzero_ps(), macc = _mm256_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const struct quant_group_q4_k *B = g + b;
        const struct quant_block_q8_k *xb = x + b;
        /* the 8 rows' 6-bit scales and mins, as quant_q4_k_scale_min unpacks one row's */
        const __m256i w0 = qkg_load(B->scales[0]), w1 = qkg_load(B->scales[1]), w2 = qkg_load(B->scales[2]);
        const __m256i sc_lo = _mm256_and_si256(w0, m6), m_lo = _mm256_and_si256(w1, m6);
        const __m256i sc_hi =
            _mm256_or_si256(_mm256_and_si256(w2, m4), _mm256_and_si256(_mm256_srli_epi32(w0, 2), m30));
        const __m256i m_hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(w2, 4), m4),
                                             _mm256_and_si256(_mm256_srli_epi32(w1, 2), m30));
        __m256i isum = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) { /* sub-blocks j (low nibbles) and 4 + j (high) */
            __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
            for (int i = 8 * j; i < 8 * j + 8; i++) {
                const __m256i q = qkg_load(B->qs + 32 * i);
                lo = _mm256_add_epi16(lo,
                                      _mm256_maddubs_epi16(_mm256_and_si256(q, m4), qkg_x4(xb->qs + 4 * i)));
                hi = _mm256_add_epi16(hi, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4),
                                                               qkg_x4(xb->qs + 128 + 4 * i)));
            }
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(lo, _mm256_shuffle_epi8(sc_lo, pick[j])));
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(hi, _mm256_shuffle_epi8(sc_hi, pick[j])));
        }
        /* mins: each lane's even bytes (m0, m2) and odd ones (m1, m3) against x's sub-block sums */
        const __m128i bs =
            _mm_shuffle_epi8(_mm_hadd_epi16(_mm_loadu_si128((const __m128i *)(const void *)xb->bsums),
                                            _mm_loadu_si128((const __m128i *)(const void *)(xb->bsums + 8))),
                             bs_order);
        __m256i msum = _mm256_madd_epi16(_mm256_and_si256(m_lo, low_byte), _mm256_broadcastd_epi32(bs));
        msum = _mm256_add_epi32(msum, _mm256_madd_epi16(_mm256_srli_epi16(m_lo, 8),
                                                        _mm256_broadcastd_epi32(_mm_srli_si128(bs, 4))));
        msum = _mm256_add_epi32(msum, _mm256_madd_epi16(_mm256_and_si256(m_hi, low_byte),
                                                        _mm256_broadcastd_epi32(_mm_srli_si128(bs, 8))));
        msum = _mm256_add_epi32(msum, _mm256_madd_epi16(_mm256_srli_epi16(m_hi, 8),
                                                        _mm256_broadcastd_epi32(_mm_srli_si128(bs, 12))));
        const __m256 d8 = _mm256_set1_ps(xb->d);
        const __m256 dd =
            _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)B->d)), d8);
        const __m256 dm =
            _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)B->dmin)), d8);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), dd, acc);
        macc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), dm, macc);
    }
    _mm256_storeu_ps(y, _mm256_sub_ps(acc, macc));
}

/* Q6_K: the -32 of every code taken out once a superblock in int32, as 32 x (scales . x's group sums): a
 * 16-bit lane's even bytes are scales 4k and 4k + 1, its odd ones 4k + 2 and 4k + 3 (quant_group_q6_k), so
 * each pairs with two consecutive sums. A step's four scale vectors are made where they are used (sixteen
 * kept for the whole superblock would not stay in 16 ymm registers). */
static void qkg_q6_k(float *y, const struct quant_group_q6_k *g, const struct quant_block_q8_k *x, int nb) {
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const struct quant_group_q6_k *B = g + b;
        const struct quant_block_q8_k *xb = x + b;
        __m256i offs = _mm256_setzero_si256();
        for (int k = 0; k < 4; k++) {
            const __m256i a = qkg_load(B->scales[k]);
            const __m256i ev = _mm256_srai_epi16(_mm256_slli_epi16(a, 8), 8), od = _mm256_srai_epi16(a, 8);
            offs = _mm256_add_epi32(offs, _mm256_madd_epi16(ev, qkg_x4((const int8_t *)(xb->bsums + 4 * k))));
            offs = _mm256_add_epi32(offs,
                                    _mm256_madd_epi16(od, qkg_x4((const int8_t *)(xb->bsums + 4 * k + 2))));
        }
        __m256i isum = _mm256_setzero_si256();
        for (int q = 0; q < 4; q++) { /* steps 4q..4q + 3: group 4n + q of each quarter n */
            const int slot = (int)quant_group_q6_k_scale_at(q, 0); /* row 0's byte: its lane's */
            const __m256i pick = qkg_pick(0x80, slot, 0x80, slot);
            for (int p = 0; p < 2; p++) { /* two steps' sums in int16, then by the scales */
                __m256i s[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                                _mm256_setzero_si256()};
                for (int i = 4 * q + 2 * p; i < 4 * q + 2 * p + 2; i++) {
                    const __m256i qa = qkg_load(B->codes[i][0]), qb = qkg_load(B->codes[i][1]);
                    const __m256i h = qkg_load(B->codes[i][2]);
                    __m256i c[4];
                    qk_q6_codes(c, qa, qb, h);
                    for (int n = 0; n < 4; n++)
                        s[n] = _mm256_add_epi16(s[n],
                                                _mm256_maddubs_epi16(c[n], qkg_x4(xb->qs + 64 * n + 4 * i)));
                }
                for (int n = 0; n < 4; n++) { /* row r's scale 4n + q as an int16 pair: byte to high, shift */
                    const __m256i sc =
                        _mm256_srai_epi16(_mm256_shuffle_epi8(qkg_load(B->scales[n]), pick), 8);
                    isum = _mm256_add_epi32(isum, _mm256_madd_epi16(s[n], sc));
                }
            }
        }
        isum = _mm256_sub_epi32(isum, _mm256_slli_epi32(offs, 5));
        const __m256 dd = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)B->d)),
                                        _mm256_set1_ps(xb->d));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), dd, acc);
    }
    _mm256_storeu_ps(y, acc);
}
