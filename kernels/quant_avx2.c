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

/* Half h's eight f16 scales of a block column at col, times x's scale dx. */
static inline __m256 qv_half_scales(const unsigned char *col, int h, __m256 dx) {
    return _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(col + 16 * h))), dx);
}

/* A group's sixteen sums, two halves, into y (added to it with add). */
static inline void qv_store_group(float *y, __m256 acc0, __m256 acc1, int add) {
    if (add) {
        acc0 = _mm256_add_ps(acc0, _mm256_loadu_ps(y));
        acc1 = _mm256_add_ps(acc1, _mm256_loadu_ps(y + 8));
    }
    _mm256_storeu_ps(y, acc0);
    _mm256_storeu_ps(y + 8, acc1);
}

/* Eight rows of a Q4_0 group's block column (kernels/quant.h), lane j row j: each quad's 32 bytes met by x's
 * four matching bytes, one broadcast dword for the low nibbles (elements 4q..4q+3) and one for the high
 * ones (16+4q..); the sums exact, c4 included. The eight vpmaddubsw pairs add up in int16 without
 * saturating: each is at most 2 x 15 x 127, eight of them 30480. */
static inline __m256i qv_half_dot_q4_0(const unsigned char *codes, const int8_t *xb, int32_t c4) {
    const __m256i m = _mm256_set1_epi8(0x0f);
    __m256i s = _mm256_setzero_si256();
    for (int q = 0; q < 4; q++) {
        const __m256i v =
            _mm256_loadu_si256((const __m256i *)(const void *)(codes + 4 * QUANT_GROUP_ROWS * q));
        int32_t xl, xh;
        memcpy(&xl, xb + 4 * q, 4);
        memcpy(&xh, xb + QUANT_BLOCK / 2 + 4 * q, 4);
        s = _mm256_add_epi16(s, _mm256_maddubs_epi16(_mm256_and_si256(v, m), _mm256_set1_epi32(xl)));
        s = _mm256_add_epi16(
            s, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(v, 4), m), _mm256_set1_epi32(xh)));
    }
    return _mm256_add_epi32(_mm256_madd_epi16(s, _mm256_set1_epi16(1)), _mm256_set1_epi32(c4));
}

/* One Q4_0 group as two halves of eight rows, one after the other in each block column: both halves at
 * once kept too many vectors live for AVX2's sixteen registers (the compiler spilled). */
static inline void qv_group_matvec_q4_0(float *y, const unsigned char *g, const int8_t *xq, const float *xd,
                                        const int32_t *xc, int nb, int add) {
    _Static_assert(QUANT_GROUP_ROWS == 16, "two 256-bit vectors hold a group");
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int k = 0; k < nb; k++) {
        const unsigned char *col = g + (size_t)k * QUANT_Q4_0_GROUP_BYTES,
                            *codes = col + 2 * QUANT_GROUP_ROWS;
        const int8_t *xb = xq + (size_t)k * QUANT_BLOCK;
        const __m256 dx = _mm256_set1_ps(xd[k]);
        const __m256i s0 = qv_half_dot_q4_0(codes, xb, xc[k]);
        const __m256 d0 = qv_half_scales(col, 0, dx);
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s0), d0, acc0);
        const __m256i s1 = qv_half_dot_q4_0(codes + 32, xb, xc[k]);
        const __m256 d1 = qv_half_scales(col, 1, dx);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s1), d1, acc1);
    }
    qv_store_group(y, acc0, acc1, add);
}

/* One Q8_0 group as two halves of eight rows, eight quads a block column: |w| times x with w's sign, as the
 * lone rows' blocks (no pair saturates: |w|, |x| <= 127), each quad's pairs summed into int32 at once (two
 * quads' pairs could pass int16's range). */
static inline void qv_group_matvec_q8_0(float *y, const unsigned char *g, const int8_t *xq, const float *xd,
                                        const int32_t *xc, int nb, int add) {
    _Static_assert(QUANT_GROUP_ROWS == 16, "two 256-bit vectors hold a group");
    (void)xc; /* |w| times x needs no offset */
    const __m256i ones = _mm256_set1_epi16(1);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int k = 0; k < nb; k++) {
        const unsigned char *col = g + (size_t)k * QUANT_Q8_0_GROUP_BYTES,
                            *codes = col + 2 * QUANT_GROUP_ROWS;
        const int8_t *xb = xq + (size_t)k * QUANT_BLOCK;
        __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
        for (int q = 0; q < QUANT_BLOCK / 4; q++) {
            const unsigned char *quad = codes + 4 * QUANT_GROUP_ROWS * q;
            const __m256i v0 = _mm256_loadu_si256((const __m256i *)(const void *)quad);
            const __m256i v1 = _mm256_loadu_si256((const __m256i *)(const void *)(quad + 32));
            int32_t xw;
            memcpy(&xw, xb + 4 * q, 4);
            const __m256i bx = _mm256_set1_epi32(xw);
            s0 = _mm256_add_epi32(
                s0, _mm256_madd_epi16(
                        _mm256_maddubs_epi16(_mm256_sign_epi8(v0, v0), _mm256_sign_epi8(bx, v0)), ones));
            s1 = _mm256_add_epi32(
                s1, _mm256_madd_epi16(
                        _mm256_maddubs_epi16(_mm256_sign_epi8(v1, v1), _mm256_sign_epi8(bx, v1)), ones));
        }
        const __m256 dx = _mm256_set1_ps(xd[k]);
        const __m256 d0 = qv_half_scales(col, 0, dx);
        const __m256 d1 = qv_half_scales(col, 1, dx);
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s0), d0, acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s1), d1, acc1);
    }
    qv_store_group(y, acc0, acc1, add);
}

#include "kernels/quant_simd_body.h"

const struct quant_ops quant_ops_avx2 = {.matvec_q8_0 = qv_matvec_q8_0,
                                         .matvec_q4_0 = qv_matvec_q4_0,
                                         .act_blocks = qv_act_blocks,
                                         .name = "AVX2 (vpmaddubsw)"};
