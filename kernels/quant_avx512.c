/* The AVX-512 VNNI block dot products of the quantised matvec (kernels/quant_simd_body.h's loops):
 * vpdpbusd (AVX512_VNNI with AVX512VL, on 256-bit vectors: one 32-weight block a vector) multiplies
 * unsigned by signed bytes and adds each 4 products into an int32 lane. Q4_0's codes are unsigned already
 * (+8): the block's sum starts from its offset correction c4. Q8_0 multiplies |w| by x with w's sign, as
 * AVX2's loop does, into a zeroed sum: from DRAM that read 0.96 of the read on one thread where the +128
 * codes with a -128 sum(x) start read 0.84 (docs/tuning/quant-matvec.md). Chosen at run time only where
 * the CPU has AVX512_VNNI (quant.c).
 * Checked against quant_matvec_ref in tests/test_quant.c. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/quant.h"
#include "kernels/quant_ops.h"

/* The offset c in lane 0, the other lanes 0 (vpdpbusd's starting sums): one load. */
static inline __m256i qv_offset(const int32_t *c) {
    return _mm256_zextsi128_si256(_mm_cvtsi32_si128(*c));
}

static inline __m256i qv_nibbles(const uint8_t *w);

static inline __m256i qv_dot_q8_0(const int8_t *w, __m256i xv, __m256i off) {
    (void)off; /* |w| times x needs no offset */
    __m256i wv = _mm256_loadu_si256((const __m256i *)(const void *)w);
    return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(wv, wv), _mm256_sign_epi8(xv, wv));
}

static inline __m256i qv_dot_q4_0(const uint8_t *w, __m256i xv, __m256i off) {
    return _mm256_dpbusd_epi32(off, qv_nibbles(w), xv);
}

/* Lane j gathers row j's four codes of a quad; x's matching four bytes are one broadcast dword. The low
 * nibbles meet x's elements 4q..4q+3, the high ones 16+4q..16+4q+3, in two chains. */
static inline __m256i qv_group_dot(const unsigned char *codes, const int8_t *xb, int32_t c4) {
    const __m256i m = _mm256_set1_epi8(0x0f);
    __m256i lo = _mm256_set1_epi32(c4), hi = _mm256_setzero_si256();
    for (int q = 0; q < 4; q++) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(codes + 32 * q));
        int32_t xl, xh;
        memcpy(&xl, xb + 4 * q, 4);
        memcpy(&xh, xb + QUANT_BLOCK / 2 + 4 * q, 4);
        lo = _mm256_dpbusd_epi32(lo, _mm256_and_si256(v, m), _mm256_set1_epi32(xl));
        hi = _mm256_dpbusd_epi32(hi, _mm256_and_si256(_mm256_srli_epi16(v, 4), m), _mm256_set1_epi32(xh));
    }
    return _mm256_add_epi32(lo, hi);
}

#include "kernels/quant_simd_body.h"

const struct quant_ops quant_ops_avx512 = {.matvec_q8_0 = qv_matvec_q8_0,
                                           .matvec_q4_0 = qv_matvec_q4_0,
                                           .act_blocks = qv_act_blocks,
                                           .name = "AVX-512 VNNI (vpdpbusd)"};
