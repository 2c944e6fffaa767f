/* The sampler's row passes on AVX-512 (F/BW/VL/DQ): the 16-lane primitives of sampler_simd_body.h on one
 * register each, masks as __mmask16. The passes themselves are the body, shared with AVX2; bit identity
 * with sampler_scalar.c is checked in tests/test_sampler*.c and by `verify` (sampler.simd). */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

typedef __m512 sv;
typedef __m512i svi;
typedef __mmask16 svm;
typedef struct {
    __m512d lo, hi; /* lanes 0-7, 8-15 */
} sd16;

#define SP_INLINE static inline __attribute__((always_inline))

SP_INLINE sv sv_load(const float *p) {
    return _mm512_loadu_ps(p);
}
/* bf16 is the high half of an f32: zero-extend to 32 bits and shift up */
SP_INLINE sv sv_load_bf16(const uint16_t *p) {
    __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
#define sv_store(p, v) _mm512_storeu_ps((p), (v))
#define sv_set1(f)     _mm512_set1_ps(f)
#define sv_add(x, y)   _mm512_add_ps((x), (y))
#define sv_sub(x, y)   _mm512_sub_ps((x), (y))
#define sv_mul(x, y)   _mm512_mul_ps((x), (y))
#define sv_div(x, y)   _mm512_div_ps((x), (y))
#define sv_max(x, y)   _mm512_max_ps((x), (y))
#define sv_keep(v, m)  _mm512_maskz_mov_ps((m), (v))
/* equals the scalar (x + 1.5 * 2^23) - 1.5 * 2^23 for |x| < 2^22 */
#define sv_round(v) _mm512_roundscale_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
/* scalef rounds y * 2^n once, as the scalar's exact-then-rounded pair of factors does */
#define sv_exp2_scale(y, n, live)  _mm512_maskz_scalef_ps((live), (y), (n))
#define sv_exp2_scale_normal(y, n) _mm512_scalef_ps((y), (n))
#define sv_cmp_ge(x, y)            _mm512_cmp_ps_mask((x), (y), _CMP_GE_OQ)
#define sv_cmp_gt(x, y)            _mm512_cmp_ps_mask((x), (y), _CMP_GT_OQ)
#define sv_cmp_eq(x, y)            _mm512_cmp_ps_mask((x), (y), _CMP_EQ_OQ)
#define sv_bad(v)                  _mm512_cmp_ps_mask((v), _mm512_set1_ps(INFINITY), _CMP_NLT_UQ)
#define sv_keys(v)                 _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff))
#define sv_reduce_max(v)           _mm512_reduce_max_ps(v) /* max is exact in any order */
/* the level masses (a guide) */
typedef __m512 sl;
#define sl_zero()               _mm512_setzero_ps()
#define sl_add_where(acc, v, m) _mm512_mask_add_ps((acc), (m), (acc), (v))
#define sl_reduce(acc)          _mm512_reduce_add_ps(acc)
/* sampler_block_sum16's order: (p[j] + p[j+8]) in 8 double lanes, then halves */
SP_INLINE double sv_block_sum16(sv v) {
    __m512d s = _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)),
                              _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
    __m256d t = _mm256_add_pd(_mm512_castpd512_pd256(s), _mm512_extractf64x4_pd(s, 1));
    __m128d u = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
    return _mm_cvtsd_f64(_mm_add_sd(u, _mm_unpackhi_pd(u, u)));
}

#define svi_set1(x)              _mm512_set1_epi32(x)
#define svi_iota()               _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#define svi_add(x, y)            _mm512_add_epi32((x), (y))
#define svi_gt(x, y)             _mm512_cmpgt_epi32_mask((x), (y))
#define svi_eq(x, y)             _mm512_cmpeq_epi32_mask((x), (y))
#define svi_blend(x, y, m)       _mm512_mask_mov_epi32((x), (m), (y))
#define svi_store(p, v)          _mm512_storeu_si512((p), (v))
#define svi_load(p)              _mm512_loadu_si512((p))
#define svi_shr20(x)             _mm512_srli_epi32((x), 20) /* logical */
#define svi_and(x, y)            _mm512_and_si512((x), (y))
#define svi_add_where(acc, x, m) _mm512_mask_add_epi32((acc), (m), (acc), (x)) /* acc + x in m's lanes */
/* compress in a register and store all 16 lanes (the ids arrays have 16 spare entries): a compress
 * straight to memory is microcoded and slow on some cores (Zen 4) */
SP_INLINE int svi_compress(uint32_t *dst, svm m, svi v) {
    _mm512_storeu_si512(dst, _mm512_maskz_compress_epi32(m, v));
    return __builtin_popcount((unsigned)m);
}

#define svm_all()        ((__mmask16)0xffff)
#define svm_none()       ((__mmask16)0)
#define svm_and(x, y)    ((__mmask16)((x) & (y)))
#define svm_or(x, y)     ((__mmask16)((x) | (y)))
#define svm_andnot(x, y) ((__mmask16)(~(x) & (y)))
#define svm_bits(m)      ((unsigned)(m))

SP_INLINE sd16 sd16_load(const double *p) {
    return (sd16){_mm512_loadu_pd(p), _mm512_loadu_pd(p + 8)};
}
SP_INLINE void sd16_store(double *p, sd16 s) {
    _mm512_storeu_pd(p, s.lo);
    _mm512_storeu_pd(p + 8, s.hi);
}
SP_INLINE void sd16_add(sd16 *s, sv v) {
    s->lo = _mm512_add_pd(s->lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    s->hi = _mm512_add_pd(s->hi, _mm512_cvtps_pd(_mm512_extractf32x8_ps(v, 1)));
}

#define SFN(name)  name##_avx512
#define SOPS_TABLE sampler_ops_avx512
#include "kernels/sampler_simd_body.h"
