/* Q6_K's 6-bit codes from two vectors of low nibbles and one of high bit pairs, for the row loop
 * (quant_k_simd_body.h) and the group loop (quant_k_group_body.h), which lay them out alike: the low
 * nibbles of la and lb, then their high nibbles, each with its bit pair of h (bits 0-1, 2-3, 4-5, 6-7)
 * moved to bits 4-5. A 16-bit shift brings the other byte's bits in only outside the masks. */
#ifndef FR_QUANT_K_Q6_CODES_H
#define FR_QUANT_K_Q6_CODES_H

#include <immintrin.h>

static inline void qk_q6_codes(__m256i c[4], __m256i la, __m256i lb, __m256i h) {
    const __m256i m4 = _mm256_set1_epi8(0x0f), m30 = _mm256_set1_epi8(0x30);
    c[0] = _mm256_or_si256(_mm256_and_si256(la, m4), _mm256_and_si256(_mm256_slli_epi16(h, 4), m30));
    c[1] = _mm256_or_si256(_mm256_and_si256(lb, m4), _mm256_and_si256(_mm256_slli_epi16(h, 2), m30));
    c[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(la, 4), m4), _mm256_and_si256(h, m30));
    c[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lb, 4), m4),
                           _mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
}

#endif
