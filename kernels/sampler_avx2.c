/* The sampler's row passes on AVX2: the 16-lane primitives of sampler_simd_body.h, each 16-lane value a pair
 * of 8-lane registers (lanes 0-7, 8-15). The passes themselves are the body, shared with AVX-512; bit
 * identity with sampler_scalar.c is checked in tests/test_sampler*.c and by `verify` (sampler.simd). */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

typedef struct {
    __m256 a, b;
} sv;
typedef struct {
    __m256i a, b;
} svi;
typedef struct {
    __m256i a, b; /* all-ones lanes */
} svm;
typedef struct {
    __m256d d0, d1, d2, d3; /* lanes 0-3, 4-7, 8-11, 12-15 */
} sd16;

#define SP_INLINE static inline __attribute__((always_inline))

SP_INLINE sv sv_load(const float *p) {
    return (sv){_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)};
}
/* bf16 is the high half of an f32: zero-extend to 32 bits and shift up */
SP_INLINE sv sv_load_bf16(const uint16_t *p) {
    const __m128i *h = (const __m128i *)(const void *)p;
    return (sv){_mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(h)), 16)),
                _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(h + 1)), 16))};
}
SP_INLINE void sv_store(float *p, sv v) {
    _mm256_storeu_ps(p, v.a);
    _mm256_storeu_ps(p + 8, v.b);
}
SP_INLINE sv sv_set1(float f) {
    return (sv){_mm256_set1_ps(f), _mm256_set1_ps(f)};
}
#define SV_BINARY(name, op)                                                                                  \
    SP_INLINE sv name(sv x, sv y) {                                                                          \
        return (sv){op(x.a, y.a), op(x.b, y.b)};                                                             \
    }
SV_BINARY(sv_add, _mm256_add_ps)
SV_BINARY(sv_sub, _mm256_sub_ps)
SV_BINARY(sv_mul, _mm256_mul_ps)
SV_BINARY(sv_div, _mm256_div_ps)
SV_BINARY(sv_max, _mm256_max_ps)

SP_INLINE sv sv_keep(sv v, svm m) {
    return (sv){_mm256_and_ps(v.a, _mm256_castsi256_ps(m.a)), _mm256_and_ps(v.b, _mm256_castsi256_ps(m.b))};
}
SP_INLINE sv sv_round(sv v) {
    return (sv){_mm256_round_ps(v.a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                _mm256_round_ps(v.b, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
/* y * 2^n for integral n in [-151, 0] as (y * 2^n1) * 2^n2, n1 = floor(n / 2), both factors normal: the
 * first product is exact, the second rounds once, as sampler_exp does (its split differs, its result
 * cannot: y * 2^n rounded once) */
SP_INLINE __m256 exp2_scale8(__m256 y, __m256 n) {
    __m256i ni = _mm256_cvttps_epi32(n), bias = _mm256_set1_epi32(127);
    __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(y, s1), s2);
}
SP_INLINE sv sv_exp2_scale(sv y, sv n, svm live) {
    return sv_keep((sv){exp2_scale8(y.a, n.a), exp2_scale8(y.b, n.b)}, live);
}

/* n >= -126 and y * 2^n normal: one multiply by 2^n, exact */
SP_INLINE __m256 exp2_scale_normal8(__m256 y, __m256 n) {
    __m256i e = _mm256_add_epi32(_mm256_cvttps_epi32(n), _mm256_set1_epi32(127));
    return _mm256_mul_ps(y, _mm256_castsi256_ps(_mm256_slli_epi32(e, 23)));
}
SP_INLINE sv sv_exp2_scale_normal(sv y, sv n) {
    return (sv){exp2_scale_normal8(y.a, n.a), exp2_scale_normal8(y.b, n.b)};
}

#define SV_CMP(name, pred)                                                                                   \
    SP_INLINE svm name(sv x, sv y) {                                                                         \
        return (svm){_mm256_castps_si256(_mm256_cmp_ps(x.a, y.a, pred)),                                     \
                     _mm256_castps_si256(_mm256_cmp_ps(x.b, y.b, pred))};                                    \
    }
SV_CMP(sv_cmp_ge, _CMP_GE_OQ)
SV_CMP(sv_cmp_gt, _CMP_GT_OQ)
SV_CMP(sv_cmp_eq, _CMP_EQ_OQ)
SP_INLINE svm sv_bad(sv v) { /* !(v < +inf): NaN or +inf */
    return (svm){_mm256_castps_si256(_mm256_cmp_ps(v.a, _mm256_set1_ps(INFINITY), _CMP_NLT_UQ)),
                 _mm256_castps_si256(_mm256_cmp_ps(v.b, _mm256_set1_ps(INFINITY), _CMP_NLT_UQ))};
}
SP_INLINE svi sv_keys(sv v) {
    __m256i s = _mm256_set1_epi32(0x7fffffff);
    return (svi){_mm256_and_si256(_mm256_castps_si256(v.a), s),
                 _mm256_and_si256(_mm256_castps_si256(v.b), s)};
}
SP_INLINE float sv_reduce_max(sv v) {
    __m256 m = _mm256_max_ps(v.a, v.b);
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
}
/* the level masses in 8 lanes: both halves of a block go to one register (fewer registers live in the exp
 * pass, which has 16); out-of-mask lanes add +0, which leaves a sum of values >= 0 as it is */
typedef __m256 sl;
SP_INLINE sl sl_zero(void) {
    return _mm256_setzero_ps();
}
SP_INLINE sl sl_add_where(sl acc, sv v, svm m) {
    acc = _mm256_add_ps(acc, _mm256_and_ps(v.a, _mm256_castsi256_ps(m.a)));
    return _mm256_add_ps(acc, _mm256_and_ps(v.b, _mm256_castsi256_ps(m.b)));
}
SP_INLINE float sl_reduce(sl t) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
/* sampler_block_sum16's order: (p[j] + p[j+8]) in 8 double lanes, then halves */
SP_INLINE double sv_block_sum16(sv v) {
    __m256d lo = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v.a)),
                               _mm256_cvtps_pd(_mm256_castps256_ps128(v.b)));
    __m256d hi = _mm256_add_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(v.a, 1)),
                               _mm256_cvtps_pd(_mm256_extractf128_ps(v.b, 1)));
    __m256d t = _mm256_add_pd(lo, hi);
    __m128d u = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
    return _mm_cvtsd_f64(_mm_add_sd(u, _mm_unpackhi_pd(u, u)));
}

SP_INLINE svi svi_set1(int32_t x) {
    return (svi){_mm256_set1_epi32(x), _mm256_set1_epi32(x)};
}
SP_INLINE svi svi_iota(void) {
    return (svi){_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15)};
}
SP_INLINE svi svi_add(svi x, svi y) {
    return (svi){_mm256_add_epi32(x.a, y.a), _mm256_add_epi32(x.b, y.b)};
}
SP_INLINE svm svi_gt(svi x, svi y) {
    return (svm){_mm256_cmpgt_epi32(x.a, y.a), _mm256_cmpgt_epi32(x.b, y.b)};
}
SP_INLINE svm svi_eq(svi x, svi y) {
    return (svm){_mm256_cmpeq_epi32(x.a, y.a), _mm256_cmpeq_epi32(x.b, y.b)};
}
SP_INLINE svi svi_blend(svi x, svi y, svm m) {
    return (svi){_mm256_blendv_epi8(x.a, y.a, m.a), _mm256_blendv_epi8(x.b, y.b, m.b)};
}
SP_INLINE svi svi_shr20(svi x) { /* logical */
    return (svi){_mm256_srli_epi32(x.a, 20), _mm256_srli_epi32(x.b, 20)};
}
SP_INLINE svi svi_and(svi x, svi y) {
    return (svi){_mm256_and_si256(x.a, y.a), _mm256_and_si256(x.b, y.b)};
}
SP_INLINE svi svi_add_where(svi acc, svi x, svm m) { /* acc + x in m's lanes */
    return (svi){_mm256_add_epi32(acc.a, _mm256_and_si256(x.a, m.a)),
                 _mm256_add_epi32(acc.b, _mm256_and_si256(x.b, m.b))};
}
SP_INLINE svi svi_load(const uint32_t *p) {
    return (svi){_mm256_loadu_si256((const __m256i *)(const void *)p),
                 _mm256_loadu_si256((const __m256i *)(const void *)(p + 8))};
}
SP_INLINE void svi_store(int32_t *p, svi v) {
    _mm256_storeu_si256((__m256i *)(void *)p, v.a);
    _mm256_storeu_si256((__m256i *)(void *)(p + 8), v.b);
}

/* Left-packing 8 lanes: for each 8-bit mask, the indices of its set bits as bytes, lowest first. */
#define POPC8(m)                                                                                             \
    (((m)&1) + ((m) >> 1 & 1) + ((m) >> 2 & 1) + ((m) >> 3 & 1) + ((m) >> 4 & 1) + ((m) >> 5 & 1) +          \
     ((m) >> 6 & 1) + ((m) >> 7 & 1))
#define PK(m, k)  (((m) >> (k)&1) ? (uint64_t)(k) << (8 * POPC8((m) & ((1u << (k)) - 1))) : 0)
#define PACK(m)   (PK(m, 0) | PK(m, 1) | PK(m, 2) | PK(m, 3) | PK(m, 4) | PK(m, 5) | PK(m, 6) | PK(m, 7))
#define PACK4(m)  PACK(m), PACK((m) + 1), PACK((m) + 2), PACK((m) + 3)
#define PACK16(m) PACK4(m), PACK4((m) + 4), PACK4((m) + 8), PACK4((m) + 12)
#define PACK64(m) PACK16(m), PACK16((m) + 16), PACK16((m) + 32), PACK16((m) + 48)
static const uint64_t pack_lut[256] = {PACK64(0u), PACK64(64u), PACK64(128u), PACK64(192u)};

SP_INLINE int compress8(uint32_t *dst, unsigned bits, __m256i v) {
    __m256i perm = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long)pack_lut[bits]));
    _mm256_storeu_si256((__m256i *)(void *)dst, _mm256_permutevar8x32_epi32(v, perm));
    return __builtin_popcount(bits);
}
SP_INLINE unsigned svm_bits(svm m) {
    return (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m.a)) |
           (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m.b)) << 8;
}
/* A block whose 16 lanes are all kept (a flat row's first pass keeps every token) is stored as it is, not
 * permuted: faster on AVX2's flat rows; AVX-512's compress is one instruction already, and the same test in
 * the shared body slowed it (docs/tuning/sampler.md, "svi_compress"). */
SP_INLINE int svi_compress(uint32_t *dst, svm m, svi v) {
    unsigned bits = svm_bits(m);
    if (bits == 0xffffu) {
        _mm256_storeu_si256((__m256i *)(void *)dst, v.a);
        _mm256_storeu_si256((__m256i *)(void *)(dst + 8), v.b);
        return 16;
    }
    int k = compress8(dst, bits & 0xffu, v.a);
    return k + compress8(dst + k, bits >> 8, v.b);
}

SP_INLINE svm svm_all(void) {
    return (svm){_mm256_set1_epi32(-1), _mm256_set1_epi32(-1)};
}
SP_INLINE svm svm_none(void) {
    return (svm){_mm256_setzero_si256(), _mm256_setzero_si256()};
}
SP_INLINE svm svm_and(svm x, svm y) {
    return (svm){_mm256_and_si256(x.a, y.a), _mm256_and_si256(x.b, y.b)};
}
SP_INLINE svm svm_or(svm x, svm y) {
    return (svm){_mm256_or_si256(x.a, y.a), _mm256_or_si256(x.b, y.b)};
}
SP_INLINE svm svm_andnot(svm x, svm y) {
    return (svm){_mm256_andnot_si256(x.a, y.a), _mm256_andnot_si256(x.b, y.b)};
}

SP_INLINE sd16 sd16_load(const double *p) {
    return (sd16){_mm256_loadu_pd(p), _mm256_loadu_pd(p + 4), _mm256_loadu_pd(p + 8),
                  _mm256_loadu_pd(p + 12)};
}
SP_INLINE void sd16_store(double *p, sd16 s) {
    _mm256_storeu_pd(p, s.d0);
    _mm256_storeu_pd(p + 4, s.d1);
    _mm256_storeu_pd(p + 8, s.d2);
    _mm256_storeu_pd(p + 12, s.d3);
}
SP_INLINE void sd16_add(sd16 *s, sv v) {
    s->d0 = _mm256_add_pd(s->d0, _mm256_cvtps_pd(_mm256_castps256_ps128(v.a)));
    s->d1 = _mm256_add_pd(s->d1, _mm256_cvtps_pd(_mm256_extractf128_ps(v.a, 1)));
    s->d2 = _mm256_add_pd(s->d2, _mm256_cvtps_pd(_mm256_castps256_ps128(v.b)));
    s->d3 = _mm256_add_pd(s->d3, _mm256_cvtps_pd(_mm256_extractf128_ps(v.b, 1)));
}

#define SFN(name)  name##_avx2
#define SOPS_TABLE sampler_ops_avx2
#include "kernels/sampler_simd_body.h"
