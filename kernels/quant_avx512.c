/* The AVX-512 VNNI loops of the quantised matvec (kernels/quant_simd_body.h's): vpdpbusd multiplies
 * unsigned by signed bytes and adds each 4 products into an int32 lane. The row groups run on 512-bit
 * vectors, a lane a row (below). The rows after a matrix's last group take 256-bit vectors, one 32-weight
 * block each, through the body's one-row loop shared with AVX2: Q4_0's codes are unsigned already (+8), the
 * block's sum starting from its offset c4; Q8_0 multiplies |w| by x with w's sign into a zeroed sum. Chosen
 * at run time only where the CPU has AVX512_VNNI (quant.c). Checked against quant_matvec_ref and the AVX2
 * loops' bits in tests/test_quant.c. */
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

/* One Q4_0 block column of a group (kernels/quant.h) added to acc: lane j of a 512-bit vector is row j, so a
 * block column is four code loads of 64 bytes, each met by x's four matching bytes as one broadcast dword:
 * the low nibbles (masked) with elements 4q..4q+3, the high ones masked in place (16 times the code, still a
 * byte) with 16+4q.. Then the block's sum is 16 lo + hi in int32, exact, and every term of acc 16 times the
 * plain one, which the multiply by 1/16 at the end of the group undoes exactly (a power of two; only a
 * subnormal partial sum could round otherwise): the same bits as AVX2's loop. Sixteen rows in 512 bits ran
 * 1.84-1.86x eight rows in 256 bits (one thread, in L2); the format roof went 328-334 -> 464-475 GFLOP/s on
 * two threads (docs/tuning/quant-matvec.md). */
static inline __m512 qv_col_q4_0(__m512 acc, const unsigned char *col, const int8_t *xb, int32_t xc,
                                 float xd) {
    const __m512i lo_mask = _mm512_set1_epi8(0x0f), hi_mask = _mm512_set1_epi8((char)0xf0);
    const unsigned char *codes = col + 2 * QUANT_GROUP_ROWS;
    __m512i lo = _mm512_set1_epi32(xc), hi = _mm512_setzero_si512();
    for (int q = 0; q < 4; q++) {
        const __m512i v = _mm512_loadu_si512(codes + 4 * QUANT_GROUP_ROWS * q);
        int32_t xl, xh;
        memcpy(&xl, xb + 4 * q, 4);
        memcpy(&xh, xb + QUANT_BLOCK / 2 + 4 * q, 4);
        lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(v, lo_mask), _mm512_set1_epi32(xl));
        hi = _mm512_dpbusd_epi32(hi, _mm512_and_si512(v, hi_mask), _mm512_set1_epi32(xh));
    }
    const __m512i s = _mm512_add_epi32(_mm512_slli_epi32(lo, 4), hi);
    const __m512 d = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)col)),
                                   _mm512_set1_ps(xd));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), d, acc);
}

/* One Q8_0 block column of a group added to acc: lane j is row j again, eight quads of 64 code bytes.
 * vpdpbusd wants one side unsigned: each code is taken as w + 128 (one xor), and the block's sum starts
 * from -128 sum(x), 16 times the act's offset (-8 sum(x)); exact, since vpdpbusd adds into int32 without
 * saturating. The even and odd quads go into two chains. The same bits as AVX2's loop. */
static inline __m512 qv_col_q8_0(__m512 acc, const unsigned char *col, const int8_t *xb, int32_t xc,
                                 float xd) {
    const __m512i flip = _mm512_set1_epi8((char)0x80);
    const unsigned char *codes = col + 2 * QUANT_GROUP_ROWS;
    __m512i even = _mm512_set1_epi32(16 * xc), odd = _mm512_setzero_si512();
    for (int q = 0; q < QUANT_BLOCK / 4; q += 2) {
        const __m512i v0 = _mm512_loadu_si512(codes + 4 * QUANT_GROUP_ROWS * q);
        const __m512i v1 = _mm512_loadu_si512(codes + 4 * QUANT_GROUP_ROWS * (q + 1));
        int32_t x0, x1;
        memcpy(&x0, xb + 4 * q, 4);
        memcpy(&x1, xb + 4 * q + 4, 4);
        even = _mm512_dpbusd_epi32(even, _mm512_xor_si512(v0, flip), _mm512_set1_epi32(x0));
        odd = _mm512_dpbusd_epi32(odd, _mm512_xor_si512(v1, flip), _mm512_set1_epi32(x1));
    }
    const __m512 d = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)col)),
                                   _mm512_set1_ps(xd));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(even, odd)), d, acc);
}

/* A group's sixteen sums into y: Q4_0's terms carry the factor 16 (qv_col_q4_0), Q8_0's none. */
static inline void qv_group_store(float *y, __m512 acc, float unit, int add) {
    acc = _mm512_mul_ps(acc, _mm512_set1_ps(unit));
    if (add) acc = _mm512_add_ps(acc, _mm512_loadu_ps(y));
    _mm512_storeu_ps(y, acc);
}

/* The group loops of kernels/quant_simd_body.h: one group, block column by block column; and two groups
 * side by side, a block column of each in turn (two streams a core, and one set of x's broadcasts for both),
 * each row's sum in the same order as the one-group loop's, so both give the same bits. */
#define QV_GROUP_LOOPS(FMT, GROUP_BYTES, UNIT)                                                               \
    static inline void qv_group_matvec_##FMT(float *y, const unsigned char *g, const int8_t *xq,             \
                                             const float *xd, const int32_t *xc, int nb, int add) {          \
        _Static_assert(QUANT_GROUP_ROWS == 16, "one 512-bit vector holds a group");                          \
        __m512 acc = _mm512_setzero_ps();                                                                    \
        for (int k = 0; k < nb; k++)                                                                         \
            acc = qv_col_##FMT(acc, g + (size_t)k * (GROUP_BYTES), xq + (size_t)k * QUANT_BLOCK, xc[k],      \
                               xd[k]);                                                                       \
        qv_group_store(y, acc, UNIT, add);                                                                   \
    }                                                                                                        \
    static inline void qv_group_pair_matvec_##FMT(float *y0, const unsigned char *g0, float *y1,             \
                                                  const unsigned char *g1, const int8_t *xq,                 \
                                                  const float *xd, const int32_t *xc, int nb, int add) {     \
        __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();                                       \
        for (int k = 0; k < nb; k++) {                                                                       \
            const size_t at = (size_t)k * (GROUP_BYTES);                                                     \
            const int8_t *xb = xq + (size_t)k * QUANT_BLOCK;                                                 \
            acc0 = qv_col_##FMT(acc0, g0 + at, xb, xc[k], xd[k]);                                            \
            acc1 = qv_col_##FMT(acc1, g1 + at, xb, xc[k], xd[k]);                                            \
        }                                                                                                    \
        qv_group_store(y0, acc0, UNIT, add);                                                                 \
        qv_group_store(y1, acc1, UNIT, add);                                                                 \
    }

QV_GROUP_LOOPS(q4_0, QUANT_Q4_0_GROUP_BYTES, 1.0f / 16)
QV_GROUP_LOOPS(q8_0, QUANT_Q8_0_GROUP_BYTES, 1.0f)
#define QV_GROUP_PAIRS 1

#include "kernels/quant_simd_body.h"

const struct quant_ops quant_ops_avx512 = {.matvec_q8_0 = qv_matvec_q8_0,
                                           .matvec_q4_0 = qv_matvec_q4_0,
                                           .matvec_q8_0_pairs = qv_matvec_q8_0_pairs,
                                           .matvec_q4_0_pairs = qv_matvec_q4_0_pairs,
                                           .act_blocks = qv_act_blocks,
                                           .name = "AVX-512 VNNI (vpdpbusd)",
                                           .pairs_name =
                                               "AVX-512 VNNI (vpdpbusd), two row groups side by side"};
