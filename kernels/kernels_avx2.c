/* The AVX2 + FMA inner loops: 8 f32 lanes; tails go through a small zero-padded stack buffer. The loop
 * bodies are kernels_simd_body.h, shared with AVX-512; this file supplies its vector primitives.
 * Checked against the _ref twins in tests/test_kernels_*.c. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "kernels/kernel_ops.h"

#define VW 8
typedef __m256 vf;

#define vf_zero()         _mm256_setzero_ps()
#define vf_set1(s)        _mm256_set1_ps(s)
#define vf_loadu(p)       _mm256_loadu_ps(p)
#define vf_storeu(p, v)   _mm256_storeu_ps((p), (v))
#define vf_add(a, b)      _mm256_add_ps((a), (b))
#define vf_sub(a, b)      _mm256_sub_ps((a), (b))
#define vf_mul(a, b)      _mm256_mul_ps((a), (b))
#define vf_div(a, b)      _mm256_div_ps((a), (b))
#define vf_max(a, b)      _mm256_max_ps((a), (b))
#define vf_fmadd(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define vf_fmsub(a, b, c) _mm256_fmsub_ps((a), (b), (c))
#define vf_fold256(v)     (v)

/* whether a lane of a is greater than b's or unordered (a NaN) */
#define vf_any_gt(a, b) (_mm256_movemask_ps(_mm256_cmp_ps((a), (b), _CMP_NLE_UQ)) != 0)

/* attention: dims per register-accumulated chunk, in vectors (2 heads x 4 of the 16 ymm registers) */
#define ATT_NV 4
/* attention: one score sum per head and position, not 16 (kernels_avx512.c: they would spill here) */
#define ATT_SPLIT_SUMS 0
/* matvec rows wider than MV_WIDE_COLS: rows sharing each x load (see kernels_simd_body.h) */
#define MV_WIDE_ROWS 1
/* a team of one: L2 prefetch beyond the L1 one, in bytes (see kernels_simd_body.h) */
#define MV_SOLO_L2_BYTES 12288

static inline float vf_hsum(vf v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline float vf_hmax(vf v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* bf16 is the high half of an f32: zero-extend 8 halves to 32 bits and shift them up. */
static inline vf vf_load_bf16(const uint16_t *p) {
    __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
}

/* 16 bf16 as the 8 even elements (shifted up) and the 8 odd ones (already in the high halves, masked). The
 * 32 bytes are loaded once: left to itself gcc loads them again as the mask's memory operand, and the loads,
 * not the arithmetic, bound the matvec from cache (kf_one_load). Attention's loads are the same (see
 * kernels_avx512.c's vf_load_bf16_pairs_once). */
static inline void vf_load_bf16_pairs(const uint16_t *p, vf *even, vf *odd) {
    __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)p);
    kf_one_load(x);
    *even = _mm256_castsi256_ps(_mm256_slli_epi32(x, 16));
    *odd = _mm256_castsi256_ps(_mm256_and_si256(x, _mm256_set1_epi32((int)0xffff0000u)));
}
/* attention's single-load pairs: these already are */
#define vf_load_bf16_pairs_once vf_load_bf16_pairs

static inline vf vf_load_part(const float *p, int n) {
    float b[VW] = {0};
    memcpy(b, p, (size_t)n * sizeof *p);
    return _mm256_loadu_ps(b);
}

static inline vf vf_load_bf16_part(const uint16_t *p, int n) {
    uint16_t b[VW] = {0};
    memcpy(b, p, (size_t)n * sizeof *p);
    return vf_load_bf16(b);
}

static inline void vf_store_part(float *p, vf v, int n) {
    float b[VW];
    _mm256_storeu_ps(b, v);
    memcpy(p, b, (size_t)n * sizeof *p);
}

/* Round to nearest even as bf16_from_f32 does, NaN made quiet; then narrow 32 -> 16 bits. */
static inline __m128i bf16_round(vf v) {
    __m256i u = _mm256_castps_si256(v);
    __m256i hi = _mm256_srli_epi32(u, 16);
    __m256i lsb = _mm256_and_si256(hi, _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
    __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(hi, _mm256_set1_epi32(0x0040)), nan);
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

static inline void vf_store_bf16(uint16_t *p, vf v) {
    _mm_storeu_si128((__m128i *)(void *)p, bf16_round(v));
}

static inline void vf_store_bf16_part(uint16_t *p, vf v, int n) {
    uint16_t b[VW];
    _mm_storeu_si128((__m128i *)(void *)b, bf16_round(v));
    memcpy(p, b, (size_t)n * sizeof *p);
}

#define vf_min(a, b)       _mm256_min_ps((a), (b))
#define vf_fnmadd(a, b, c) _mm256_fnmadd_ps((a), (b), (c))
#define vf_round(v)        _mm256_round_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* p * 2^n for integral n in [-151, 129], as 2^(n/2) * 2^(n - n/2) so that both factors are normal numbers:
 * the product overflows to +inf and underflows through the subnormals to 0 as the true result does; lanes
 * where x is NaN return x. */
static inline vf vf_scale_exp2(vf p, vf n, vf x) {
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    vf s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
    vf s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
    vf e = vf_mul(vf_mul(p, s1), s2);
    return _mm256_blendv_ps(e, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

#define KFN(name)  name##_avx2
#define KOPS_TABLE kernel_ops_avx2
#include "kernels/kernels_simd_body.h"

/* the gemm inner loop over the same primitives: 4 x 3 accumulators of the 16 ymm registers */
#define GEMM_NB 3
#include "kernels/gemm_body.h"
