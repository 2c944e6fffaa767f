/* The AVX-512 (F, BW, VL, DQ) inner loops: 16 f32 lanes, masked loads for the tails. The loop bodies are
 * kernels_simd_body.h, shared with AVX2; this file supplies its vector primitives. AVX512_BF16 dot products
 * are not used: they would round x to bf16 too, so bf16 is widened exactly (zero-extend, shift into the f32
 * high half). Checked against the _ref twins in tests/test_kernels_*.c. */
#include <immintrin.h>
#include <stdint.h>

#include "kernels/kernel_ops.h"

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

/* whether a lane of a is greater than b's or unordered (a NaN) */
#define vf_any_gt(a, b) (_mm512_cmp_ps_mask((a), (b), _CMP_NLE_UQ) != 0)

/* attention: dims per register-accumulated chunk, in vectors (2 heads x 8 of the 32 zmm registers) */
#define ATT_NV 8
/* attention: the score tile's odd elements in sums of their own, 16 in all (kernels_simd_body.h score_tile):
 * two chained FMAs a step into 8 sums kept the FMA pipes waiting on their 4-cycle latency. AVX2 keeps 8,
 * since 16 sums do not fit beside q and K in its 16 registers (docs/tuning/attention.md, "Score and values
 * tiles"). */
#define ATT_SPLIT_SUMS 1
/* matvec rows wider than MV_WIDE_COLS: rows sharing each x load (see kernels_simd_body.h) */
#define MV_WIDE_ROWS 4
/* a team of one: L2 prefetch beyond the L1 one, in bytes (see kernels_simd_body.h) */
#define MV_SOLO_L2_BYTES 0

static inline __mmask16 tail_mask(int n) {
    return (__mmask16)((1u << n) - 1u);
}

/* bf16 is the high half of an f32: zero-extend 16 halves to 32 bits and shift them up. */
static inline vf vf_load_bf16(const uint16_t *p) {
    __m512i h = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(h, 16));
}

/* The 32 bf16 in x as the 16 even elements (shifted up) and the 16 odd ones (already in the high halves,
 * masked). */
static inline void vf_split_bf16_pairs(__m512i x, vf *even, vf *odd) {
    *even = _mm512_castsi512_ps(_mm512_slli_epi32(x, 16));
    *odd = _mm512_castsi512_ps(_mm512_and_si512(x, _mm512_set1_epi32((int)0xffff0000u)));
}

/* 32 bf16 from p, split so (gcc loads them again as the mask's memory operand). */
static inline void vf_load_bf16_pairs(const uint16_t *p, vf *even, vf *odd) {
    vf_split_bf16_pairs(_mm512_loadu_si512((const void *)p), even, odd);
}

/* The same with the 64 bytes loaded once (kf_one_load's barrier; "v": any of the 32 registers), for the
 * attention loops, whose score step of 4 rows was bound by its loads, not its FMAs. The matvec's loops keep
 * gcc's second load (the mask's memory operand): they run on the L1 prefetch profile (Zen 4; Zen 5 takes the
 * AVX2 loop), where one load was not measured (docs/tuning/attention.md, "One load on AVX-512"). */
static inline void vf_load_bf16_pairs_once(const uint16_t *p, vf *even, vf *odd) {
    __m512i x = _mm512_loadu_si512((const void *)p);
    __asm__("" : "+v"(x));
    vf_split_bf16_pairs(x, even, odd);
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

#define vf_min(a, b)       _mm512_min_ps((a), (b))
#define vf_fnmadd(a, b, c) _mm512_fnmadd_ps((a), (b), (c))
#define vf_round(v)        _mm512_roundscale_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* p * 2^n with vscalefps, which overflows to +inf and underflows through the subnormals to 0 exactly as the
 * true result does; lanes where x is NaN return x. */
static inline vf vf_scale_exp2(vf p, vf n, vf x) {
    vf e = _mm512_scalef_ps(p, n);
    return _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x);
}

/* A run of one thread runs the AVX2 bf16 matvec, with its L2 prefetch (MV_SOLO_L2_BYTES): one core alone read
 * faster with it than with any 512-bit loop tried; teams keep the 512-bit loop (docs/tuning/matvec.md,
 * "AVX-512 on one thread"). */
static void matvec_bf16_solo_avx512(float *y, const uint16_t *w, const float *x, int rows, int cols,
                                    int add) {
    /* Chosen by the run's thread count (matvec's `threads`), not the size of the region this call is in: a
     * matvec then gives the same bits in a kernel team, in its own region and serially (the block timings
     * rely on it), and a run with --threads 1 still takes the AVX2 loop. */
    kernel_ops_avx2.matvec_bf16(y, w, x, rows, cols, add);
}

/* On the CPUs that stream through L2 (Zen 5) every team runs the AVX2 loop: there 512-bit loads that stream
 * from DRAM without an L1 prefetch read slowly, and no 512-bit loop measured faster than AVX2's in the
 * engine; a 512-bit form of the two-row pair loop has not been measured (docs/tuning/matvec.md, "AVX-512 on
 * the L2 profile"). */
static void matvec_bf16_l2_avx512(float *y, const uint16_t *w, const float *x, int rows, int cols, int add) {
    kernel_ops_avx2.matvec_bf16_l2(y, w, x, rows, cols, add);
}

#define KFN(name)             name##_avx512
#define KOPS_TABLE            kernel_ops_avx512
#define KOPS_MATVEC_BF16_SOLO matvec_bf16_solo_avx512
#define KOPS_MATVEC_BF16_L2   matvec_bf16_l2_avx512
#include "kernels/kernels_simd_body.h"

/* the gemm inner loop over the same primitives: 4 x 6 accumulators of the 32 zmm registers */
#define GEMM_NB 6
#include "kernels/gemm_body.h"
