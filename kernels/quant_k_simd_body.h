/* The K-quant dot products of kernels/quant_k.h, one body for AVX2 and AVX-512 VNNI. The including file
 * supplies qk_scaled_dot(acc, u, s, sc): acc plus the products of 32 unsigned codes u and 32 signed
 * activation codes s, each 2 consecutive ones summed (vpmaddubsw: at most 2 x 63 x 127, no saturation),
 * times the int16 scale of their lane in sc, each two such pairs into an int32 lane, exact. A superblock's
 * lanes add in int32 (at most 3.8e6 for Q4_K, 6.4e7 for Q5_K, 3.3e7 for Q6_K: no overflow), then one FMA by
 * d x d8; the mins (Q4_K, Q5_K) and the -32 (Q6_K) come from x's bsums, outside the vectors. Then the same
 * integers as quant_k_dot_ref; only the f32 sums differ. */
#include <immintrin.h>
#include <string.h>

#include "kernels/quant.h"
#include "kernels/quant_dequant.h"
#include "kernels/quant_k.h"
#include "kernels/quant_k_ops.h"
#include "kernels/quant_k_q6_codes.h"

static inline float qk_hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline __m256i qk_load(const void *p) {
    return _mm256_loadu_si256((const __m256i *)p);
}

/* int16 lane j (j < 8) of each 128-bit half of v in every lane of it: one vpshufb */
static inline __m256i qk_broadcast16(__m256i v, int j) {
    return _mm256_shuffle_epi8(v, _mm256_set1_epi16((short)(0x0100 + 0x0202 * j)));
}

/* x[n] as Q8_K (quant_k.h quant_k_quantize_act), the scalar loop's every bit: the same f32 products, and
 * vcvtps2dq rounds to nearest even as lrintf does in the default mode. |x| x 127 / max|x| rounds to at most
 * 127, so the saturating packs clamp nothing a finite row holds. Each group's sum of 16 codes from the
 * int32 lanes before the packs: three vphaddd and one add give four groups' sums. */
static inline __m128i qk_group_sums4(const __m256i s[4]) {
    const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(s[0], s[1]), _mm256_hadd_epi32(s[2], s[3]));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

static void qk_quantize_act(struct quant_block_q8_k *dst, const float *x, size_t n) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7); /* undoes the packs' lane split */
    for (size_t b = 0; b < n / QUANT_QK_K; b++) {
        const float *xb = x + b * QUANT_QK_K;
        __m256 m0 = _mm256_setzero_ps(), m1 = _mm256_setzero_ps();
        for (int i = 0; i < QUANT_QK_K; i += 16) { /* a NaN in x is dropped, as fmaxf drops it */
            m0 = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(xb + i)), m0);
            m1 = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(xb + i + 8)), m1);
        }
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(_mm256_max_ps(m0, m1)),
                              _mm256_extractf128_ps(_mm256_max_ps(m0, m1), 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        const float amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
        const float inv = amax > 0 ? 127.0f / amax : 0.0f;
        dst[b].d = amax / 127.0f;
        const __m256 vinv = _mm256_set1_ps(inv);
        __m128i sums[4];
        for (int q = 0; q < 4; q++) { /* 64 codes: four groups of 16 */
            __m256i v[8], s[4];
            for (int k = 0; k < 8; k++)
                v[k] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xb + 64 * q + 8 * k), vinv));
            for (int g = 0; g < 4; g++) s[g] = _mm256_add_epi32(v[2 * g], v[2 * g + 1]);
            sums[q] = qk_group_sums4(s);
            for (int h = 0; h < 2; h++) {
                const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(v[4 * h], v[4 * h + 1]),
                                                     _mm256_packs_epi32(v[4 * h + 2], v[4 * h + 3]));
                _mm256_storeu_si256((__m256i *)(void *)(dst[b].qs + 64 * q + 32 * h),
                                    _mm256_permutevar8x32_epi32(p, order));
            }
        }
        _mm_storeu_si128((__m128i *)(void *)dst[b].bsums, _mm_packs_epi32(sums[0], sums[1]));
        _mm_storeu_si128((__m128i *)(void *)(dst[b].bsums + 8), _mm_packs_epi32(sums[2], sums[3]));
    }
}

/* A superblock's eight 6-bit scales (bytes 0-7 of the result) and mins (bytes 8-15) from its 12 packed
 * bytes, four at a time in 32-bit words (the layout of quant_q4_k_scale_min) */
static inline __m128i qk_scales_mins(const uint8_t packed[12]) {
    uint32_t u[3];
    memcpy(u, packed, sizeof u);
    const uint32_t sc_lo = u[0] & 0x3f3f3f3fu, m_lo = u[1] & 0x3f3f3f3fu;
    const uint32_t sc_hi = (u[2] & 0x0f0f0f0fu) | ((u[0] >> 2) & 0x30303030u);
    const uint32_t m_hi = ((u[2] >> 4) & 0x0f0f0f0fu) | ((u[1] >> 2) & 0x30303030u);
    return _mm_setr_epi32((int)sc_lo, (int)sc_hi, (int)m_lo, (int)m_hi);
}

/* Q4_K and Q5_K (kernels/quant_k_ops.h quant_k45_view; t a constant at each caller). Q5_K's fifth bits:
 * sub-block j's at bit j of qh[l], so chunk c's two sub-blocks take bits 0 and 1 of qh >> 2c to bit 4 (a
 * 16-bit shift brings the next byte's bits in only above bit 1, which the masks drop) */
static inline __attribute__((always_inline)) float qk_dot_k45(enum quant_k_type t, const void *row,
                                                              const struct quant_block_q8_k *x, int nb) {
    const __m256i low4 = _mm256_set1_epi8(0x0f), bit4 = _mm256_set1_epi8(0x10);
    __m256 acc = _mm256_setzero_ps(), mins = _mm256_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const struct quant_k45_view w = quant_k45_at(t, row, (size_t)b);
        const __m128i sm = qk_scales_mins(w.scales);
        /* mins: m[j] x (bsums[2j] + bsums[2j + 1]), eight int32 lanes */
        const __m256i pairs = _mm256_madd_epi16(qk_load(x[b].bsums), _mm256_set1_epi16(1));
        const __m256i msum = _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_srli_si128(sm, 8)), pairs);
        /* the eight scales as int16 in both 128-bit halves, once a superblock */
        const __m256i sc16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm));
        __m256i fifth = w.qh ? qk_load(w.qh) : _mm256_setzero_si256();
        /* two sums, even and odd sub-blocks, so that each waits on half the chain of dependent adds */
        __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
        for (int c = 0; c < 4; c++) {
            const __m256i q = qk_load(w.qs + 32 * c);
            __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
            if (w.qh) {
                lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_slli_epi16(fifth, 4), bit4));
                hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_slli_epi16(fifth, 3), bit4));
                fifth = _mm256_srli_epi16(fifth, 2);
            }
            even = qk_scaled_dot(even, lo, qk_load(x[b].qs + 64 * c), qk_broadcast16(sc16, 2 * c));
            odd = qk_scaled_dot(odd, hi, qk_load(x[b].qs + 64 * c + 32), qk_broadcast16(sc16, 2 * c + 1));
        }
        const __m256i isum = _mm256_add_epi32(even, odd);
        const float d8 = x[b].d;
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d8 * _cvtsh_ss(w.d)), acc);
        mins = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(d8 * _cvtsh_ss(w.dmin)), mins);
    }
    return qk_hsum(_mm256_sub_ps(acc, mins));
}

static float qk_dot_q4_k(const struct quant_block_q4_k *w, const struct quant_block_q8_k *x, int nb) {
    return qk_dot_k45(QUANT_K_Q4_K, w, x, nb);
}

static float qk_dot_q5_k(const struct quant_block_q5_k *w, const struct quant_block_q8_k *x, int nb) {
    return qk_dot_k45(QUANT_K_Q5_K, w, x, nb);
}

/* The four 32-code runs of one half (128 weights): ql's low or high nibbles with qh's bit pair 0-1, 2-3,
 * 4-5 or 6-7 moved to bits 4-5 (one shift and a mask: a 16-bit shift brings the other byte's bits only
 * outside the mask); each run covers two 16-weight groups. The -32 of every code is taken out once a
 * superblock, in the int32 lanes: 32 x (scales . bsums), one vpmaddwd over the sixteen groups. */
static float qk_dot_q6_k(const struct quant_block_q6_k *w, const struct quant_block_q8_k *x, int nb) {
    /* run k's two groups: scale 2k in the low 128 bits, 2k + 1 in the high ones */
    __m256i pick[4];
    for (int k = 0; k < 4; k++)
        pick[k] = _mm256_setr_m128i(_mm_set1_epi16((short)(0x0100 + 0x0202 * 2 * k)),
                                    _mm_set1_epi16((short)(0x0100 + 0x0202 * (2 * k + 1))));
    __m256 acc = _mm256_setzero_ps();
    for (int b = 0; b < nb; b++) {
        const __m128i sc_all = _mm_loadu_si128((const __m128i *)(const void *)w[b].scales);
        const __m256i offs = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc_all), qk_load(x[b].bsums));
        __m256i sums[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()}; /* two chains, as Q4_K's */
        for (int h = 0; h < 2; h++) {
            /* the half's eight scales as int16 in both 128-bit halves, for vpshufb to pick a pair from */
            const __m256i sc8 =
                _mm256_broadcastsi128_si256(_mm_cvtepi8_epi16(h ? _mm_srli_si128(sc_all, 8) : sc_all));
            const __m256i ql0 = qk_load(w[b].ql + 64 * h), ql1 = qk_load(w[b].ql + 64 * h + 32);
            const __m256i qh = qk_load(w[b].qh + 32 * h);
            __m256i codes[4];
            qk_q6_codes(codes, ql0, ql1, qh);
            for (int k = 0; k < 4; k++)
                sums[k & 1] = qk_scaled_dot(sums[k & 1], codes[k], qk_load(x[b].qs + 128 * h + 32 * k),
                                            _mm256_shuffle_epi8(sc8, pick[k]));
        }
        const __m256i isum = _mm256_sub_epi32(_mm256_add_epi32(sums[0], sums[1]), _mm256_slli_epi32(offs, 5));
        const float dd = x[b].d * _cvtsh_ss(w[b].d);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(dd), acc);
    }
    return qk_hsum(acc);
}
