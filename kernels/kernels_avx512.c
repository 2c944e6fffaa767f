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
/* attention: the score tile's odd elements in sums of their own, 16 in all (kernels_simd_body.h score_tile).
 * Two chained FMAs a step into 8 sums kept the FMA pipes waiting on their 4-cycle latency. Zen 5 VM, one
 * thread, alternated in one process, best of 9 on each vCPU: from L2 (one KV head, 1024 positions), group
 * of 4 32.0-32.9 -> 33.7-35.0 GB/s and group of 2 50.2 / 51.7 -> 53.5 / 55.4; from DRAM (Qwen3-4B's heads,
 * 36 layers, medians of 5) 0.90 / 0.92 -> 0.98 / 0.95 of the read at 1024 / 4096 positions. On AVX2 the 16
 * sums do not fit beside q and K in 16 registers: from L2 20.0 -> 17.0 GB/s (group of 4). */
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
 * attention loops. The matvec's loops keep gcc's second load (the mask's memory operand): they run on the L1
 * prefetch profile (Zen 4; Zen 5 takes the AVX2 loop), where one load was not measured. An earlier run of
 * attention alone at 16384 positions, one thread, read 0.75-0.77 of the read with one load against 0.82-0.88
 * with two (Qwen3-0.6B's heads); one load against two, alternated in one process this time (Zen 5
 * VM, medians of 5-7, fraction of the read at 1024 / 4096 / 16384 positions, with head_dim 128 a constant,
 * attn_partial): Qwen3-4B's heads (32 / 8) two threads 0.63 / 0.69 / 0.75 -> 0.73 / 0.80 / 0.87, one
 * thread 0.81 / 0.87 / 0.84 -> 0.98 / 0.97 / 0.98; Qwen3-0.6B's heads (16 / 8) two threads 0.87 / 0.86 /
 * 0.82 -> 0.89 / 0.93 / 0.85, one thread 1.06 / 1.05 / 0.93 -> 1.08 / 1.03 / 0.91. From L2 (1024 positions
 * of one KV head, one thread, best of 9): group 4 25.0 -> 30.7 GB/s with one load, 34.3 with the constant
 * head_dim as well; group 2 42.0 -> 47.8: the score loop's step of 4 rows held 16 FMAs and 12 loads of 64
 * bytes, and the loads, not the FMAs, bounded it. */
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
 * faster with it than with any 512-bit loop tried. Public matvec() on 1 GiB alternated with the read, one
 * thread, Zen 4 VM, four runs of 5: 1024 / 3072 columns 0.93-0.99 / 0.90-0.92 of the read against
 * 0.86-0.92 / 0.85-0.86 for this file's loop (which with an L2 prefetch 8-24 KiB on read 0.75-0.83, two rows
 * at a time 0.67-0.83); 9728 columns 0.83 against 0.74. Teams keep the 512-bit loop (0.98-0.99 on two). */
static void matvec_bf16_solo_avx512(float *y, const uint16_t *w, const float *x, int rows, int cols,
                                    int add) {
    /* Chosen by the run's thread count (matvec's `threads`), not the size of the region this call is in: a
     * matvec then gives the same bits in a kernel team, in its own region and serially (the block timings
     * rely on it), and a run with --threads 1 still takes the AVX2 loop. */
    kernel_ops_avx2.matvec_bf16(y, w, x, rows, cols, add);
}

/* On the CPUs that stream through L2 (Zen 5) every team runs the AVX2 loop: public matvec alternated with the
 * read (Zen 5 VM, two threads, medians of 5, two runs), 1024 x 2048 / 4096 x 1024 / 4096 x 2048: the AVX2
 * L2 loop 0.86-0.92 / 0.87-0.93 / 0.90-0.92 of the AVX-512 read, this file's loop 0.79-0.81 / 0.82-0.83 / -
 * with the L1 prefetch and 0.74-0.75 / 0.79-0.81 / 0.79-0.80 as the L2 loop (128 bytes an iteration).
 * Measured again against AVX2's read without software prefetch (Qwen3-0.6B's step matvecs, medians of 9,
 * alternated): this file's L2 loop 40.3-40.5 GB/s against 45.8 on two threads (the read 54.2), 20.1-21.1
 * against 24.6-25.2 on one (the read 29.4).
 * On that VM 512-bit loads that stream from DRAM without an L1 prefetch read slowly. Rows of 1024 bf16 read
 * and summed, alternated with AVX2's read in one process (three runs each): one core, 512-bit loads
 * 0.50-0.61 of the read, two 256-bit halves inserted into a zmm 0.84-0.92, 256-bit loads and sums 0.86-0.89;
 * two threads 0.64-1.00 against 1.02-1.17 for the halves. A 512-bit loop on 256-bit loads (8 sums of 32
 * columns, no software prefetch) as this table's L2 matvec measured within 0.03 of the AVX2 loop in the
 * engine (each projection block over all layers and whole steps, alternated with each other and the read,
 * medians of 7-9 of the ratio): Qwen3-0.6B two threads at a 75 GB/s read 0.97-1.04 a block and 1.01 the
 * step, one thread 0.97-1.01 and 0.99, Qwen3-1.7B two threads at 54 GB/s 1.01-1.03 and 1.03. So the AVX2
 * loop stays. The attention loops, which prefetch into L1 as well, read faster with 512-bit loads than with
 * halves (attention alone, two threads: Qwen3-0.6B at 1024 / 4096 positions 0.89 / 0.94-0.96 of the read
 * against 0.85 / 0.88-0.90, Qwen3-4B at 4096 0.76 against 0.59). These figures are of the one-row AVX2
 * loop; the AVX2 loop called now reads two rows side by side (kernels_simd_body.h, mv_dot_row_pair_bf16), and
 * a 512-bit form of that pair loop has not been measured. */
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
