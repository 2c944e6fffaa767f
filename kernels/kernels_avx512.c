/* The AVX-512 (F, BW, VL, DQ) inner loops: 16 f32 lanes, masked loads for the tails. The loop bodies are
 * kernels_simd_body.h, shared with AVX2; this file supplies its vector primitives. AVX512_BF16 dot products
 * are not used: they would round x to bf16 too, so bf16 is widened exactly (zero-extend, shift into the f32
 * high half). Checked against the _ref twins in tests/test_kernels_*.c. */
#include <immintrin.h>
#include <stdint.h>

#define VW 16
typedef __m512 vf;

#define vf_zero()         _mm512_setzero_ps()
#define vf_set1(s)        _mm512_set1_ps(s)
#define vf_loadu(p)       _mm512_loadu_ps(p)
#define vf_storeu(p, v)   _mm512_storeu_ps((p), (v))
#define vf_add(a, b)      _mm512_add_ps((a), (b))
#define vf_sub(a, b)      _mm512_sub_ps((a), (b))
#define vf_mul(a, b)      _mm512_mul_ps((a), (b))
#define vf_div(a, b)      _mm512_div_ps((a), (b))
#define vf_max(a, b)      _mm512_max_ps((a), (b))
#define vf_fmadd(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define vf_fmsub(a, b, c) _mm512_fmsub_ps((a), (b), (c))
#define vf_hsum(v)        _mm512_reduce_add_ps(v)
#define vf_hmax(v)        _mm512_reduce_max_ps(v)
#define vf_fold256(v)     _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps((v), 1))

/* attention: dims per register-accumulated chunk, in vectors (2 heads x 8 of the 32 zmm registers) */
#define ATT_NV 8

static inline __mmask16 tail_mask(int n) {
    return (__mmask16)((1u << n) - 1u);
}

/* bf16 is the high half of an f32: zero-extend 16 halves to 32 bits and shift them up. */
static inline vf vf_load_bf16(const uint16_t *p) {
    __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(h, 16));
}

static inline vf vf_load_part(const float *p, int n) {
    return _mm512_maskz_loadu_ps(tail_mask(n), p);
}

static inline vf vf_load_bf16_part(const uint16_t *p, int n) {
    __m512i h = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(tail_mask(n), p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(h, 16));
}

static inline void vf_store_part(float *p, vf v, int n) {
    _mm512_mask_storeu_ps(p, tail_mask(n), v);
}

/* Round to nearest even as bf16_from_f32 does, NaN made quiet; then narrow 32 -> 16 bits. */
static inline __m256i bf16_round(vf v) {
    __m512i u = _mm512_castps_si512(v);
    __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
    __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x0040));
    return _mm512_cvtepi32_epi16(r);
}

static inline void vf_store_bf16(uint16_t *p, vf v) {
    _mm256_storeu_si256((__m256i *)(void *)p, bf16_round(v));
}

static inline void vf_store_bf16_part(uint16_t *p, vf v, int n) {
    _mm256_mask_storeu_epi16(p, tail_mask(n), bf16_round(v));
}

/* exp(x): n = round(x log2 e), r = x - n ln 2 in two FMA steps (Cody-Waite), exp(r) by Cephes' degree-6
 * polynomial on |r| <= ln2/2, scaled by 2^n with vscalefps, which overflows to +inf and underflows
 * through the subnormals to 0 exactly as the true result does. NaN is passed through. Max relative error
 * vs double-precision exp: 1.999 * 2^-24 (1.19e-7), measured over every f32
 * input in [-87.3, 88.7] (all normal results); bounded in tests/test_kernels_elementwise.c
 * (vexp_relative_error_every_isa, VEXP_MAX_REL_U). */
static inline vf vf_exp(vf x) {
    vf xc = _mm512_min_ps(_mm512_max_ps(x, vf_set1(-104.0f)), vf_set1(89.0f));
    vf n = _mm512_roundscale_ps(vf_mul(xc, vf_set1(1.44269504088896341f)),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    vf r = _mm512_fnmadd_ps(n, vf_set1(0.693359375f), xc);
    r = _mm512_fnmadd_ps(n, vf_set1(-2.12194440e-4f), r);
    vf p = vf_set1(1.9875691500e-4f);
    p = vf_fmadd(p, r, vf_set1(1.3981999507e-3f));
    p = vf_fmadd(p, r, vf_set1(8.3334519073e-3f));
    p = vf_fmadd(p, r, vf_set1(4.1665795894e-2f));
    p = vf_fmadd(p, r, vf_set1(1.6666665459e-1f));
    p = vf_fmadd(p, r, vf_set1(5.0000001201e-1f));
    p = vf_fmadd(p, vf_mul(r, r), vf_add(r, vf_set1(1.0f)));
    vf e = _mm512_scalef_ps(p, n);
    return _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

#define KFN(name)  name##_avx512
#define KOPS_TABLE kernel_ops_avx512
#include "kernels/kernels_simd_body.h"
