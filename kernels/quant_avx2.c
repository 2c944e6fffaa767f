/* The AVX2 block dot products of the quantised matvec (kernels/quant_simd_body.h's loops): vpmaddubsw
 * multiplies unsigned by signed bytes into int16 pairs, vpmaddwd sums those into int32 lanes. Q8_0 goes
 * through it as |w| times x with w's sign (no pair can saturate: |w| <= 128 and |x| <= 127, as
 * llama.cpp's AVX2 path does it); Q4_0's codes are already unsigned (0-15), their +8 taken off by c4 in
 * lane 0. Also the AVX-512 path of CPUs without VNNI. Checked against quant_matvec_ref in
 * tests/test_quant.c. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/quant.h"
#include "kernels/quant_ops.h"

/* The offset c in lane 0, the other lanes 0, added to the Q4_0 dot product's lanes. */
static inline __m256i qv_offset(const int32_t *c) {
    return _mm256_castsi128_si256(_mm_cvtsi32_si128(*c));
}

static inline __m256i qv_nibbles(const uint8_t *w);

static inline __m256i qv_dot_q8_0(const int8_t *w, __m256i xv, __m256i off) {
    (void)off; /* |w| times x needs no offset */
    __m256i wv = _mm256_loadu_si256((const __m256i *)(const void *)w);
    __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(xv, wv));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

static inline __m256i qv_dot_q4_0(const uint8_t *w, __m256i xv, __m256i off) {
    __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(qv_nibbles(w), xv), _mm256_set1_epi16(1));
    return _mm256_add_epi32(s, off);
}

/* Lane j gathers row j's four codes of a quad; x's matching four bytes are one broadcast dword. The eight
 * vpmaddubsw pairs add up in int16 without saturating: each is at most 2 x 15 x 127, eight of them 30480. */
static inline __m256i qv_group_dot(const unsigned char *codes, const int8_t *xb, int32_t c4) {
    const __m256i m = _mm256_set1_epi8(0x0f);
    __m256i s = _mm256_setzero_si256();
    for (int q = 0; q < 4; q++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(codes + 32 * q));
        int32_t xl, xh;
        memcpy(&xl, xb + 4 * q, 4);
        memcpy(&xh, xb + QUANT_BLOCK / 2 + 4 * q, 4);
        s = _mm256_add_epi16(s, _mm256_maddubs_epi16(_mm256_and_si256(v, m), _mm256_set1_epi32(xl)));
        s = _mm256_add_epi16(
            s, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), m), _mm256_set1_epi32(xh)));
    }
    return _mm256_add_epi32(_mm256_madd_epi16(s, _mm256_set1_epi16(1)), _mm256_set1_epi32(c4));
}

#include "kernels/quant_simd_body.h"

const struct quant_ops quant_ops_avx2 = {.matvec_q8_0 = qv_matvec_q8_0,
                                         .matvec_q4_0 = qv_matvec_q4_0,
                                         .act_blocks = qv_act_blocks,
                                         .name = "AVX2 (vpmaddubsw)"};
