/* The vector loop bodies of the kernels, written once over a small set of vector primitives and included by
 * kernels_avx2.c and kernels_avx512.c, which define before including it:
 *   VW (f32 lanes), vf (vector type), vf_zero/set1/loadu/storeu/add/sub/mul/div/max/fmadd/fmsub,
 *   vf_hsum/vf_hmax (horizontal), vf_any_gt (whether any lane is greater, or unordered), vf_load_bf16 (VW
 *   bf16 widened exactly), vf_load_bf16_pairs (2 * VW bf16 as two vectors, the even elements and the odd
 *   ones, widened exactly), vf_load_bf16_pairs_once (the same from one load, for attention),
 *   vf_store_bf16 (round to nearest even), vf_load_part/vf_load_bf16_part (first n < VW elements, rest 0),
 *   vf_store_part/vf_store_bf16_part, vf_min/fnmadd/round (to nearest), vf_scale_exp2 (p * 2^n, NaN x
 *   passed through), KFN(name) (ISA-suffixed name), KOPS_TABLE (the kernel_ops table to define) and the
 *   tuning constants ATT_NV, ATT_SPLIT_SUMS, MV_WIDE_ROWS and MV_SOLO_L2_BYTES;
 *   optionally KOPS_MATVEC_BF16 (the table's bf16 matvec, when it is not this file's loop) and
 *   KOPS_MATVEC_BF16_SOLO (the one of a run of one thread, when it is not KOPS_MATVEC_BF16).
 * Not a header of its own: it defines static functions and one table in the including file. */
#include <immintrin.h>
#include <math.h>

#include "kernels/team.h"
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernel_ops.h"

#define KF_ALWAYS_INLINE static inline __attribute__((always_inline))

/* exp(x): n = round(x log2 e), r = x - n ln 2 in two FMA steps (Cody-Waite), exp(r) by Cephes' degree-6
 * polynomial on |r| <= ln2/2, then scaled by 2^n (vf_scale_exp2, per ISA). Max relative error vs
 * double-precision exp: 1.999 * 2^-24 (1.19e-7), measured over every f32 input in [-87.3, 88.7] (all normal
 * results); bounded in tests/test_kernels_elementwise.c (vexp_relative_error_every_isa, VEXP_MAX_REL_U). */
KF_ALWAYS_INLINE vf vf_exp(vf x) {
    vf xc = vf_min(vf_max(x, vf_set1(-104.0f)), vf_set1(89.0f));
    vf n = vf_round(vf_mul(xc, vf_set1(1.44269504088896341f)));
    vf r = vf_fnmadd(n, vf_set1(0.693359375f), xc);
    r = vf_fnmadd(n, vf_set1(-2.12194440e-4f), r);
    vf p = vf_set1(1.9875691500e-4f);
    p = vf_fmadd(p, r, vf_set1(1.3981999507e-3f));
    p = vf_fmadd(p, r, vf_set1(8.3334519073e-3f));
    p = vf_fmadd(p, r, vf_set1(4.1665795894e-2f));
    p = vf_fmadd(p, r, vf_set1(1.6666665459e-1f));
    p = vf_fmadd(p, r, vf_set1(5.0000001201e-1f));
    p = vf_fmadd(p, vf_mul(r, r), vf_add(r, vf_set1(1.0f)));
    return vf_scale_exp2(p, n, x);
}

/* ---- matvec ----
 * Memory-bound: each weight is used once, so the loop is built to keep DRAM busy, not the FMA units. Each
 * row is one sequential stream, prefetched into L1 MV_PF_BYTES ahead of where it is read, running on into
 * the next row (a chunk's rows are contiguous). bf16 weights are read 2 * VW at a time as even/odd pairs
 * (vf_load_bf16_pairs: a shift or a mask per vector, no widening shuffle) into two accumulators, against x
 * split once per call into its even elements and its odd ones (mv_split_x).
 * Measured with a harness that alternates each variant with the read ceiling's kernel on 1 GiB of huge
 * pages (Zen 4 VM, 13 alternations, medians of matvec / read GB/s, bf16, 1024 and 3072 columns):
 *   128 bytes per iteration into four accumulators, x split per 2 * VW columns (the loop before this one):
 *     AVX-512 0.84 / 0.83 on one thread, 0.99 / 0.91 on two; AVX2 0.78 / 0.77, 0.84 / 0.96;
 *   one pair of vectors (2 * VW weights) per iteration, x split in halves (this loop):
 *     AVX-512 0.95 / 0.86 on one thread, 1.02 / 0.95 on two; AVX2 0.98 / 0.95, 0.98 / 1.01.
 * The AVX2 two-thread run at 1024 columns read at 50 GB/s: there the old loop was computation-bound on the
 * core. Two or four rows at a time, widening loads, L2 prefetch and L1 prefetch 2 or 6 KiB ahead all
 * measured lower; the pairs matter on one thread (AVX-512 0.86 / 0.77 with widening loads). */
#define MV_PF_BYTES 4096
/* bf16 weights in a 64-byte line */
#define MV_LINE_BF16 32
/* Columns split per pass (mv_split_x's stack buffer: 64 KiB); wider matrices go in several passes. */
#define MV_SPLIT_COLS 16384

KF_ALWAYS_INLINE vf mv_load_w(const void *w, size_t i, int bf16) {
    return bf16 ? vf_load_bf16((const uint16_t *)w + i) : vf_loadu((const float *)w + i);
}

KF_ALWAYS_INLINE vf mv_load_w_part(const void *w, size_t i, int n, int bf16) {
    return bf16 ? vf_load_bf16_part((const uint16_t *)w + i, n) : vf_load_part((const float *)w + i, n);
}

/* Columns of x that mv_split_x splits: n rounded down to whole pairs of vectors. */
KF_ALWAYS_INLINE int mv_split_cols(int n) {
    return n - n % (2 * VW);
}

/* The first mv_split_cols(n) elements of x, split: the even ones to xe, the odd ones to xo (halves of that
 * length), the order vf_load_bf16_pairs gives the weights in. */
KF_ALWAYS_INLINE void mv_split_x(float *xe, float *xo, const float *x, int n) {
    for (int j = 0; j < mv_split_cols(n) / 2; j++) xe[j] = x[2 * j], xo[j] = x[2 * j + 1];
}

/* Rows wider than MV_WIDE_COLS: their x (4 bytes a column, split or not) no longer stays in the 32 KiB L1
 * beside the weights streaming into it, and every x load went to L2 (rows of 6144 and 9728 columns,
 * Qwen3-1.7B's and 4B's down_proj, ran at 0.46-0.52 of the read on one thread and 0.55-0.70 on two; rows
 * of x capped at 8-16 KiB ran at 0.92-0.97). So their weights are prefetched into L2 only,
 * MV_WIDE_PF_BYTES ahead, and on AVX-512 MV_WIDE_ROWS = 4 rows share each x load. Harness as above, 6144 /
 * 9728 columns, medians of 5 alternations: AVX-512 four rows 0.87 / 0.85 on one thread, 1.02 / 0.96 on
 * two (one row 0.86 / 0.62 and 0.88 / 0.87); AVX2 one row 0.98 / 0.97 and 0.95 / 0.99 (four rows
 * 0.83 / 0.81 and 0.93 / 0.98). Cutting rows into column panels that fit L1 measured worse (0.37-0.42
 * on one thread): in this VM a plain read of 4 KiB pieces at a row's stride runs at 0.40 of a sequential
 * one. On the Zen 5 VM (the L2 prefetch profile, public matvec over 0.8 GiB of matrices alternated with the
 * read, medians of 5-9) wide rows still lose: 6144 columns 0.72-0.83 of the read, 9728 0.67-0.77, 12288
 * 0.65-0.72, against 0.91-0.96 at 3072 and 4096, one thread and two, AVX2 and AVX-512 alike; one row at a
 * time through mv_dot_row_bf16_l2 instead measured 0.75 at 6144 and 0.59 at 9728, its prefetch at 4, 16 or
 * 24 KiB no better than 8. What costs is reading x from L2: a harness alternating variants with the read
 * in one process (Zen 5 VM, AVX2, two threads, 28 matrices each, rows in static halves, medians of 5) ran
 * that loop at 0.60-0.81 of the read (0.95 once) at 6144 and 9728 columns, and at 0.82-0.99 with every x load
 * pointed into x's first 2 KiB (a wrong product, kept as a bound). Keeping x in L1 by other means measured
 * lower: two or four rows sharing each x load 0.41-0.50, column panels of 1024 to 4864 columns at the rows'
 * stride 0.27-0.64, x's even and odd halves interleaved by 16 columns or prefetched into L1 256-512 bytes
 * ahead, or the weights prefetched into L1 non-temporally, 0.59-0.71. Nor is it the arithmetic: from L2 (512
 * KiB of weights, one thread) this wide path runs at 26-29 GB/s at 6144 and 9728 columns (its one pair of
 * sums is a chain) and mv_dot_row_bf16_l2 at 46-51, but from DRAM, alternated in one process through the
 * public matvec (two threads, medians of 7-9), the L2 loop read 0.72-0.77 / 0.57-0.59 of the read at 6144 /
 * 9728 columns against this path's 0.69-0.74 / 0.65-0.66. So the model's layer matrices wider than 2048
 * columns are stored as column panels (col_panels.h) and never reach this path; it serves row-major callers.
 */
#define MV_WIDE_COLS     4096
#define MV_WIDE_PF_BYTES 8192

/* One core reading on its own is held back by the misses it can keep in flight, not by DRAM; on AVX2 a
 * matvec run by a team of one also prefetches its rows into L2 MV_SOLO_L2_BYTES beyond the L1 prefetch
 * (0: never). Public matvec() on 1 GiB alternated with the read (Zen 4 VM, 1024 / 3072 columns, three
 * runs of 5 alternations, medians): AVX2 one thread 0.89-0.91 / 0.82-0.83 -> 0.92-0.96 / 0.82-0.94 of
 * the read. With two threads, where DRAM is the limit, the same prefetch cost about 0.04 at 1024 columns
 * (0.91-0.95 against 0.95-0.99), so teams keep the plain loop. AVX-512 measured lower with it, one thread
 * 0.77-0.83 against 0.87-0.92 at 1024 columns, for distances of 8 to 24 KiB alike. */

/* y[k] = row k . x for the nr (a constant, <= MV_WIDE_ROWS) rows of n bf16 weights from w, `stride`
 * weights apart (xe, xo: x split by mv_split_x). The prefetch runs ahead of the last row's reads, nr lines
 * per nr lines read, so over these rows it walks the next nr rows (past w's end: only prefetched): into L1
 * MV_PF_BYTES ahead (and with `solo`, a constant, into L2 MV_SOLO_L2_BYTES beyond that), or with `wide` (a
 * constant) into L2 MV_WIDE_PF_BYTES ahead. */
KF_ALWAYS_INLINE void mv_dot_rows_bf16(float *y, const uint16_t *w, size_t stride, const float *x,
                                       const float *xe, const float *xo, int n, const int nr, const int wide,
                                       const int solo) {
    vf a[MV_WIDE_ROWS], b[MV_WIDE_ROWS];
    for (int k = 0; k < nr; k++) a[k] = vf_zero(), b[k] = vf_zero();
    uintptr_t pf = (uintptr_t)(w + (size_t)(nr - 1) * stride) + (wide ? MV_WIDE_PF_BYTES : MV_PF_BYTES);
    int c = 0;
    for (; c + 2 * VW <= n; c += 2 * VW, pf += (size_t)nr * 4 * VW) { /* 4 * VW bytes a row */
        for (size_t j = 0; j < (size_t)nr * 4 * VW; j += 64) {
            if (wide)
                _mm_prefetch((const char *)(pf + j), _MM_HINT_T1);
            else
                _mm_prefetch((const char *)(pf + j), _MM_HINT_T0);
            if (solo) _mm_prefetch((const char *)(pf + j + MV_SOLO_L2_BYTES), _MM_HINT_T1);
        }
        vf x0 = vf_loadu(xe + c / 2), x1 = vf_loadu(xo + c / 2);
        for (int k = 0; k < nr; k++) {
            vf e, o;
            vf_load_bf16_pairs(w + (size_t)k * stride + (size_t)c, &e, &o);
            a[k] = vf_fmadd(e, x0, a[k]);
            b[k] = vf_fmadd(o, x1, b[k]);
        }
    }
    for (; c < n; c += VW) {
        int m = n - c < VW ? n - c : VW;
        vf xv = vf_load_part(x + c, m);
        for (int k = 0; k < nr; k++)
            a[k] = vf_fmadd(mv_load_w_part(w + (size_t)k * stride, (size_t)c, m, 1), xv, a[k]);
    }
    for (int k = 0; k < nr; k++) y[k] = vf_hsum(vf_add(a[k], b[k]));
}

/* The dot product of one row of n f32 weights at wr with x: 128 bytes per iteration into four accumulators.
 */
KF_ALWAYS_INLINE float mv_dot_f32(const float *wr, const float *x, int n) {
    vf acc[4] = {vf_zero(), vf_zero(), vf_zero(), vf_zero()};
    uintptr_t pf = (uintptr_t)wr + MV_PF_BYTES; /* may lie past w's end: only prefetched */
    int c = 0;
    for (; c + 32 <= n; c += 32, pf += 128) {
        _mm_prefetch((const char *)pf, _MM_HINT_T0);
        _mm_prefetch((const char *)(pf + 64), _MM_HINT_T0);
        for (int u = 0; u < 32 / VW; u++)
            acc[u % 4] = vf_fmadd(vf_loadu(wr + c + u * VW), vf_loadu(x + c + u * VW), acc[u % 4]);
    }
    for (; c < n; c += VW) {
        int m = n - c < VW ? n - c : VW;
        acc[0] = vf_fmadd(vf_load_part(wr + c, m), vf_load_part(x + c, m), acc[0]);
    }
    return vf_hsum(vf_add(vf_add(acc[0], acc[1]), vf_add(acc[2], acc[3])));
}

/* The loop of the CPUs whose cores stream faster from prefetches into L2 than into L1
 * (kernel_prefetch_active(), kernels.c: AMD family 1Ah, Zen 5) until two rows at once replaced it
 * (mv_dot_row_pair_bf16, below); it still takes a chunk's odd last row. One row of n bf16 weights at w with x
 * (split: xe, xo), two pairs of vectors per iteration into two pairs of sums (so that no FMA waits on the one
 * before: one row's single pair of sums is a chain that one core at 4 cycles a step would hold to about one
 * line in 8 cycles), each of its lines prefetched once into L2, MV_L2_PF_BYTES ahead. Public matvec on 1 GiB
 * alternated with the read (Zen 5 VM, AVX2, medians of 5 alternations, two runs), 1024 x 1024 / 1024 x 3072 /
 * 4096 x 1024, one thread: the L1 loop with its solo L2 prefetch 0.68-0.75 / 0.72-0.78 / -, without it 0.84 /
 * 0.80-0.82 / -, this loop 0.92-0.93 / 0.91-0.97 / 0.94-0.97; two threads: the L1 loop 0.75-0.77 / 0.77 /
 * 0.84-0.85, this one 0.79-0.81 / 0.84 / 0.88-0.92. The same loop prefetching into L1 measured 0.84-0.87 on
 * one thread, one pair of sums with the L2 prefetch 0.82-0.86, four pairs no better than two. It prefetches
 * MV_L2_PF_BYTES ahead: when DRAM is fast, 4 KiB is too short a lead for two cores. Alternated in one process
 * (Zen 5 VM, AVX2, the read at 45-60 GB/s on two threads, medians of 7), 4 -> 8 KiB on two threads: 4096 x
 * 1024 0.83 -> 0.88-0.90 of the read, 2048 x 1024 0.82 -> 0.87, 6144 x 1024 0.90 -> 0.97, 151936 x 1024 0.95
 * -> 0.99, 1024 x 3072 0.80-0.82 either way; one thread 0.91-0.95 -> 0.95-0.96 (4096 x 1024, 151936 x 1024);
 * 12 and 16 KiB no better than 8. Again against AVX2's read without software prefetch at 54-72 GB/s on two
 * threads (Qwen3-0.6B's step matvecs, alternated, medians of 7-9), as a fraction of this loop's rate: no
 * prefetch 0.78-1.00, 4 KiB 0.74-1.00, 16 KiB 0.88-0.98, a line in two or four 0.91-0.95, a burst over each
 * chunk's first 4 or 8 KiB besides 0.93-1.01. This loop ran at 0.84-0.95 of that read, the LM head alone (one
 * call) 0.87-1.00, o_proj alone (4 MiB a call) 0.79-0.88. */
/* How far this loop stays below the read depends on how fast the read is. A harness alternating loop shapes
 * with AVX2's read without software prefetch (Zen 5 VM, two threads, 28 matrices of 6144 x 1024 in static
 * halves, each repetition binned by the read's rate, 70-750 repetitions a bin, six runs) ran this loop at
 * 0.93-1.03 of the read below 50 GB/s, 0.85-0.92 at 50-60 GB/s and 0.80-0.85 at 60 GB/s and above. Two sets
 * of eight full runs the same morning agree: two-thread steps at 94-102 % of paired reads of 34-41 GB/s,
 * 66-86 % of ones of 61-75 GB/s. In the fast bin: the read kernel itself over the same weights in the same
 * halves 0.86-0.95, over its own array in the same shape 0.95 (so which pages are read moves a few
 * hundredths, beyond this code's reach); loads split into even and odd halves and added, no x, 0.81-0.92;
 * split and FMAs against x kept in registers (a wrong product, as a bound) 0.84-0.86, against x loaded
 * 0.81-0.83, and no shape beat this loop there: 8 sums over 256 bytes an iteration 0.81-0.83, two rows at a
 * time sharing x's loads 0.50-0.65, the AVX-512 loop of this shape 0.09-0.14 below it in the same process
 * with its prefetch 4 to 32 KiB ahead or none, though from L2 that loop ran at 62-65 GB/s on one core against
 * this one's 41-43 (its 512-bit loads: see kernels_avx512.c, matvec_bf16_l2_avx512).
 * Taken apart the next day, 512-bit arithmetic on 256-bit loads in the same harness, two sets of 3-5 runs
 * (fractions of the read; two threads at 63-68 GB/s, 18-156 repetitions / one core at 25-32 GB/s, 59-75):
 * rows read and summed with nothing else 0.89-0.98 / 0.99-1.12, split into even and odd halves first
 * 0.89-0.97 / 0.97-1.08, FMAs against x held in registers (a wrong product, as a bound) 0.88-0.95 /
 * 0.97-1.07, against x loaded 0.84-0.89 / 0.89-1.05, this loop 0.82-0.85 / 0.87-0.99. So the split and the
 * FMAs cost at most a few hundredths, x's loads 0.04-0.08, and the rest of the gap is reading the weights
 * row by row, matrix by matrix, which no loop shape removes. AVX512_BF16's vdpbf16ps (one core, four runs,
 * per-run medians): x in three bf16 terms (exact to fp32's 24 bits) 0.82-0.91 against this loop's 0.91-0.95,
 * two terms 0.86-0.91; only x rounded to one bf16 term (llama.cpp's way, an error up to 3.5e-4 of sum |w x|
 * on random rows) ran faster, 0.91-0.98, and that changes the product. Nor does sharing x's loads through
 * the layout: rows stored interleaved, 16 or 32 columns of each of four rows in turn (one sequential stream,
 * each x load serving four rows), against this loop on the same 28 matrices of 6144 x 1024 in static halves
 * (Zen 5 VM, AVX2, medians of 16-30 alternations with the read without software prefetch), two threads at
 * 72-74 GB/s: this loop 1.00 / 0.92 of the read in two runs, four rows by 16 columns 0.99 / 0.89, by 32
 * 0.99 / 0.89, two rows by 16 0.98 / 0.90; one thread at 38 GB/s: 0.96, 0.92, 0.94, 0.94. */
#define MV_L2_PF_BYTES 8192
KF_ALWAYS_INLINE float mv_dot_row_bf16_l2(const uint16_t *w, const float *x, const float *xe, const float *xo,
                                          int n) {
    vf a0 = vf_zero(), b0 = vf_zero(), a1 = vf_zero(), b1 = vf_zero();
    uintptr_t pf = (uintptr_t)w + MV_L2_PF_BYTES; /* may lie past w's end: only prefetched */
    int c = 0;
    for (; c + 4 * VW <= n; c += 4 * VW, pf += 8 * VW) { /* 8 * VW bytes */
        for (size_t j = 0; j < 8 * VW; j += 64) _mm_prefetch((const char *)(pf + j), _MM_HINT_T1);
        vf e0, o0, e1, o1;
        vf_load_bf16_pairs(w + c, &e0, &o0);
        vf_load_bf16_pairs(w + c + 2 * VW, &e1, &o1);
        a0 = vf_fmadd(e0, vf_loadu(xe + c / 2), a0), b0 = vf_fmadd(o0, vf_loadu(xo + c / 2), b0);
        a1 = vf_fmadd(e1, vf_loadu(xe + c / 2 + VW), a1), b1 = vf_fmadd(o1, vf_loadu(xo + c / 2 + VW), b1);
    }
    for (; c + 2 * VW <= n; c += 2 * VW) {
        vf e0, o0;
        vf_load_bf16_pairs(w + c, &e0, &o0);
        a0 = vf_fmadd(e0, vf_loadu(xe + c / 2), a0), b0 = vf_fmadd(o0, vf_loadu(xo + c / 2), b0);
    }
    for (; c < n; c += VW) {
        int m = n - c < VW ? n - c : VW;
        a0 = vf_fmadd(mv_load_w_part(w, (size_t)c, m, 1), vf_load_part(x + c, m), a0);
    }
    return vf_hsum(vf_add(vf_add(a0, b0), vf_add(a1, b1)));
}

/* Two rows of n bf16 weights, at w and v, with x (split: xe, xo) into ya and yb: one row from each half of
 * a chunk, so that the core streams from two places at once, each x load serving both rows; with pf (a
 * constant) each row's lines are also prefetched into L1 MV_PF_BYTES ahead, a line of each row per 64 bytes
 * read (see mv_rows_bf16 for when). One core of the Zen 5 VM keeps more lines in flight over two streams
 * than over one (roofline/ceilings_kernels.h, the two-stream read). A harness alternating loop shapes with
 * AVX2's read without software prefetch (28 matrices of 6144 x 1024, rows in static halves or in chunks of 2
 * MiB as matvec cuts them, medians of 9, three runs): one thread 0.84-0.91 of the read for the public matvec
 * with mv_dot_row_bf16_l2, 1.01-1.15 for this loop (without pf); two threads 0.79-0.91 against 0.96-1.16.
 * The same pairs with mv_dot_row_bf16_l2's prefetch 8 KiB ahead in each row read 0.91-0.97, whole rows
 * taken from the two halves in turn 0.60, three rows from three thirds 0.94-1.01, four from four quarters
 * 0.33-0.39, two adjacent rows from each half (four rows a step, two streams) 0.56-0.58, and this loop
 * unrolled to 64 columns (eight sums) 0.99-1.05, no better. The public matvec with this loop, in the same
 * harness: 1.00-1.01 on one thread, 0.92-0.94 on two. In full runs of Qwen3-0.6B alternated with the build
 * before it (two threads, two rounds, AVX2 and AVX-512) the five matvec blocks read 62-77 GB/s against
 * 56-67. `decode` (64 tokens) alternated with that build, eight pairs per ISA and thread count: the pairs'
 * medians 1.02-1.04 on two threads (15 of 16 pairs faster) and on one (11 of 16). The gain is where DRAM is
 * fast: in full runs whose paired read was 41-47 GB/s the old loop's blocks read 97-108 % of it. Without
 * pf this loop read 0.86-0.98 of the read kernel run over the same rows in the same chunks (a second
 * harness, 1024 to 2048 columns, 11-31 alternations), and no change to the loop's own work closed that:
 * pointer increments in place of the indexed loads, eight sums, or on AVX-512 256-bit loads widened into zmm
 * FMAs against x in order read from 0.07 below to 0.05 above it, none ahead in every run. */
/* One step of mv_dot_row_pair_bf16: columns [c, c + 2 * VW) of both rows into their sums. */
KF_ALWAYS_INLINE void mv_pair_step(const uint16_t *w, const uint16_t *v, const float *xe, const float *xo,
                                   int c, vf *a0, vf *b0, vf *a1, vf *b1) {
    vf x0 = vf_loadu(xe + c / 2), x1 = vf_loadu(xo + c / 2), e, o;
    vf_load_bf16_pairs(w + c, &e, &o);
    *a0 = vf_fmadd(e, x0, *a0), *b0 = vf_fmadd(o, x1, *b0);
    vf_load_bf16_pairs(v + c, &e, &o);
    *a1 = vf_fmadd(e, x0, *a1), *b1 = vf_fmadd(o, x1, *b1);
}

KF_ALWAYS_INLINE void mv_dot_row_pair_bf16(float *ya, float *yb, const uint16_t *w, const uint16_t *v,
                                           const float *x, const float *xe, const float *xo, int n,
                                           const int pf) {
    vf a0 = vf_zero(), b0 = vf_zero(), a1 = vf_zero(), b1 = vf_zero();
    int c = 0;
    for (; pf && c + MV_LINE_BF16 <= n; c += MV_LINE_BF16) {
        _mm_prefetch((const char *)(w + c) + MV_PF_BYTES, _MM_HINT_T0);
        _mm_prefetch((const char *)(v + c) + MV_PF_BYTES, _MM_HINT_T0);
        for (int k = c; k < c + MV_LINE_BF16; k += 2 * VW) mv_pair_step(w, v, xe, xo, k, &a0, &b0, &a1, &b1);
    }
    for (; c + 2 * VW <= n; c += 2 * VW) mv_pair_step(w, v, xe, xo, c, &a0, &b0, &a1, &b1);
    for (; c < n; c += VW) {
        int m = n - c < VW ? n - c : VW;
        vf xv = vf_load_part(x + c, m);
        a0 = vf_fmadd(mv_load_w_part(w, (size_t)c, m, 1), xv, a0);
        a1 = vf_fmadd(mv_load_w_part(v, (size_t)c, m, 1), xv, a1);
    }
    *ya = vf_hsum(vf_add(a0, b0));
    *yb = vf_hsum(vf_add(a1, b1));
}

/* In a team, the row pairs of mv_rows_bf16 that start within this many bytes of each half of a chunk
 * prefetch into L1 (mv_dot_row_pair_bf16's pf): each chunk starts two new streams, and the hardware
 * prefetchers take a while to follow them. `decode` of Qwen3-0.6B (64 tokens, greedy) alternated in one
 * binary (Zen 5 VM, four rounds of 5-6 per setting, medians of the ratios to no prefetch, pairs faster):
 * two threads AVX2 1.018 (6 of 6), 1.030 (3/6), AVX-512 1.053 (4/6), 1.018 (5/6); one thread AVX2 0.966
 * (1/5), 1.005 (3/5), AVX-512 0.998 (2/5), so a team of one does not. The first 32 KiB instead: two threads
 * 0.989-1.036. Every pair prefetching flipped with the DRAM's state: two threads AVX2 1.050 (8/8) and 1.052
 * (8/8) in some sittings, 0.952 (2/6) and 0.986 (2/6) in others, one thread 0.962-1.087; the harness (public
 * matvec in a kernel team, two threads, reads at 52-56 GB/s, 1024 x 2048, 6144 x 1024 and a quarter of the
 * LM head's shape, 37984 x 1024): the ramp 1.06 / 1.10 / 1.19 of the read, no prefetch 1.00 / 1.10 / 1.16,
 * every pair 0.96 / 1.00 / 1.08. Every pair prefetching at other distances lost where DRAM was fast: 1 KiB
 * ahead 0.885 (0 of 6 faster), 2 KiB 0.965 (1/6), 8 KiB 0.946 (1/6). Measured again with the steps
 * alternated one by one inside one decode run (300 tokens at 51-55 tokens/s, 150 pairs): the ramp 1.002-1.012
 * times as fast as none in six runs of six (AVX2 and AVX-512), ramps of 4, 16 and 32 KiB within 0.0075 of
 * this one's speed either way. */
#define MV_PAIR_RAMP_BYTES 8192

/* y[r] (+)= the dot products of `rows` rows' n weights from w (row stride `cols`) with x: + when add. Rows
 * wider than MV_WIDE_COLS go MV_WIDE_ROWS at a time with the L2 prefetch, the rest with `l2` (a constant)
 * in pairs, row k with row k + rows / 2 (mv_dot_row_pair_bf16, the first MV_PAIR_RAMP_BYTES of each half
 * prefetched in a team), else one at a time with the L1 prefetch (and the solo L2 prefetch in a team of
 * one). */
KF_ALWAYS_INLINE void mv_rows_bf16(float *y, const uint16_t *w, size_t cols, const float *x, const float *xe,
                                   const float *xo, int rows, int n, int add, const int l2) {
    const int wide = n > MV_WIDE_COLS, solo = MV_SOLO_L2_BYTES > 0 && kernel_team_size() == 1;
    int r = 0;
    float d[MV_WIDE_ROWS];
    if (l2 && !wide) { /* row k with row k + half, the odd row left over alone */
        const int half = rows / 2;
        int ramp = kernel_team_size() > 1 ? (MV_PAIR_RAMP_BYTES + 2 * n - 1) / (2 * n) : 0;
        ramp = ramp < half ? ramp : half;
        for (int k = 0; k < half; k++) {
            float da, db;
            const uint16_t *wa = w + (size_t)k * cols, *wb = w + (size_t)(k + half) * cols;
            if (k < ramp)
                mv_dot_row_pair_bf16(&da, &db, wa, wb, x, xe, xo, n, 1);
            else
                mv_dot_row_pair_bf16(&da, &db, wa, wb, x, xe, xo, n, 0);
            y[k] = add ? y[k] + da : da;
            y[k + half] = add ? y[k + half] + db : db;
        }
        r = 2 * half;
    }
    for (; wide && r + MV_WIDE_ROWS <= rows; r += MV_WIDE_ROWS) {
        mv_dot_rows_bf16(d, w + (size_t)r * cols, cols, x, xe, xo, n, MV_WIDE_ROWS, 1, 0);
        for (int k = 0; k < MV_WIDE_ROWS; k++) y[r + k] = add ? y[r + k] + d[k] : d[k];
    }
    for (; r < rows; r++) {
        if (wide)
            mv_dot_rows_bf16(d, w + (size_t)r * cols, cols, x, xe, xo, n, 1, 1, 0);
        else if (l2)
            d[0] = mv_dot_row_bf16_l2(w + (size_t)r * cols, x, xe, xo, n);
        else if (solo)
            mv_dot_rows_bf16(d, w + (size_t)r * cols, cols, x, xe, xo, n, 1, 0, 1);
        else
            mv_dot_rows_bf16(d, w + (size_t)r * cols, cols, x, xe, xo, n, 1, 0, 0);
        y[r] = add ? y[r] + d[0] : d[0];
    }
}

KF_ALWAYS_INLINE void mv_bf16(float *y, const uint16_t *w, const float *x, int rows, int cols, int add,
                              const int l2) {
    float xe[MV_SPLIT_COLS / 2], xo[MV_SPLIT_COLS / 2];
    for (int c0 = 0; c0 < cols; c0 += MV_SPLIT_COLS) {
        int n = cols - c0 < MV_SPLIT_COLS ? cols - c0 : MV_SPLIT_COLS;
        mv_split_x(xe, xo, x + c0, n);
        mv_rows_bf16(y, w + c0, (size_t)cols, x + c0, xe, xo, rows, n, add || c0 > 0, l2);
    }
}

static void KFN(matvec_bf16)(float *y, const uint16_t *w, const float *x, int rows, int cols, int add) {
    mv_bf16(y, w, x, rows, cols, add, 0);
}

/* The table's bf16 matvec of the CPUs that stream through L2: this file's loop unless the including file
 * names another (KOPS_MATVEC_BF16_L2). */
#ifndef KOPS_MATVEC_BF16_L2
static void KFN(matvec_bf16_l2)(float *y, const uint16_t *w, const float *x, int rows, int cols, int add) {
    mv_bf16(y, w, x, rows, cols, add, 1);
}
#define KOPS_MATVEC_BF16_L2 KFN(matvec_bf16_l2)
#endif

static void KFN(matvec_f32)(float *y, const float *w, const float *x, int rows, int cols, int add) {
    for (int r = 0; r < rows; r++) {
        float d = mv_dot_f32(w + (size_t)r * (size_t)cols, x, cols);
        y[r] = add ? y[r] + d : d;
    }
}

/* ---- norms and elementwise ---- */

static float KFN(sum_squares)(const float *x, int n) {
    vf a = vf_zero(), b = vf_zero();
    int i = 0;
    for (; i + 2 * VW <= n; i += 2 * VW) {
        vf u = vf_loadu(x + i), v = vf_loadu(x + i + VW);
        a = vf_fmadd(u, u, a);
        b = vf_fmadd(v, v, b);
    }
    for (; i < n; i += VW) {
        vf u = vf_load_part(x + i, n - i < VW ? n - i : VW);
        a = vf_fmadd(u, u, a);
    }
    return vf_hsum(vf_add(a, b));
}

static void KFN(scale_mul)(float *out, const float *x, const float *w, float s, int n) {
    vf vs = vf_set1(s);
    int i = 0;
    for (; i + VW <= n; i += VW) vf_storeu(out + i, vf_mul(vf_mul(vf_loadu(x + i), vs), vf_loadu(w + i)));
    if (i < n) {
        int m = n - i;
        vf_store_part(out + i, vf_mul(vf_mul(vf_load_part(x + i, m), vs), vf_load_part(w + i, m)), m);
    }
}

static void KFN(vec_add)(float *y, const float *x, int n) {
    int i = 0;
    for (; i + VW <= n; i += VW) vf_storeu(y + i, vf_add(vf_loadu(y + i), vf_loadu(x + i)));
    if (i < n) vf_store_part(y + i, vf_add(vf_load_part(y + i, n - i), vf_load_part(x + i, n - i)), n - i);
}

KF_ALWAYS_INLINE vf swiglu_v(vf g, vf u) {
    vf e = vf_exp(vf_sub(vf_zero(), g));
    return vf_mul(vf_div(g, vf_add(vf_set1(1.0f), e)), u);
}

static void KFN(swiglu)(float *out, const float *gate, const float *up, int n) {
    int i = 0;
    for (; i + VW <= n; i += VW) vf_storeu(out + i, swiglu_v(vf_loadu(gate + i), vf_loadu(up + i)));
    if (i < n)
        vf_store_part(out + i, swiglu_v(vf_load_part(gate + i, n - i), vf_load_part(up + i, n - i)), n - i);
}

static void KFN(vexp)(float *y, const float *x, int n) {
    int i = 0;
    for (; i + VW <= n; i += VW) vf_storeu(y + i, vf_exp(vf_loadu(x + i)));
    if (i < n) vf_store_part(y + i, vf_exp(vf_load_part(x + i, n - i)), n - i);
}

static void KFN(bf16_to_f32)(float *dst, const uint16_t *src, int n) {
    int i = 0;
    for (; i + VW <= n; i += VW) vf_storeu(dst + i, vf_load_bf16(src + i));
    if (i < n) vf_store_part(dst + i, vf_load_bf16_part(src + i, n - i), n - i);
}

static void KFN(f32_to_bf16)(uint16_t *dst, const float *src, int n) {
    int i = 0;
    for (; i + VW <= n; i += VW) vf_store_bf16(dst + i, vf_loadu(src + i));
    if (i < n) vf_store_bf16_part(dst + i, vf_load_part(src + i, n - i), n - i);
}

/* x[i], x[i + half] -> (x[i] c - x[i + half] s, x[i + half] c + x[i] s) */
static void KFN(rope_apply)(float *x, const float *cos_t, const float *sin_t, int n_heads, int head_dim) {
    int half = head_dim / 2;
    for (int h = 0; h < n_heads; h++) {
        float *lo = x + (size_t)h * (size_t)head_dim, *hi = lo + half;
        int i = 0;
        for (; i + VW <= half; i += VW) {
            vf a = vf_loadu(lo + i), b = vf_loadu(hi + i), c = vf_loadu(cos_t + i), s = vf_loadu(sin_t + i);
            vf_storeu(lo + i, vf_fmsub(a, c, vf_mul(b, s)));
            vf_storeu(hi + i, vf_fmadd(b, c, vf_mul(a, s)));
        }
        for (; i < half; i++) {
            float a = lo[i], b = hi[i];
            lo[i] = a * cos_t[i] - b * sin_t[i];
            hi[i] = b * cos_t[i] + a * sin_t[i];
        }
    }
}

/* ---- attention ---- */

/* Sums of eight vectors, lane i of the result = sum of x_i's lanes: a tree of hadds instead of eight separate
 * horizontal reductions (about a third of the shuffles). */
KF_ALWAYS_INLINE __m256 hsum8(vf x0, vf x1, vf x2, vf x3, vf x4, vf x5, vf x6, vf x7) {
    __m256 h01 = _mm256_hadd_ps(vf_fold256(x0), vf_fold256(x1)),
           h23 = _mm256_hadd_ps(vf_fold256(x2), vf_fold256(x3));
    __m256 h45 = _mm256_hadd_ps(vf_fold256(x4), vf_fold256(x5)),
           h67 = _mm256_hadd_ps(vf_fold256(x6), vf_fold256(x7));
    __m256 h0123 = _mm256_hadd_ps(h01, h23), h4567 = _mm256_hadd_ps(h45, h67);
    return _mm256_add_ps(_mm256_permute2f128_ps(h0123, h4567, 0x20),
                         _mm256_permute2f128_ps(h0123, h4567, 0x31));
}

/* How far ahead the attention loops prefetch into L2 is the caller's pf_blocks (kernels.c attn_pf_blocks):
 * two blocks (8 KiB of each of K and V at head_dim 128, bf16) on the L1 prefetch profile. Attention alone,
 * Qwen3-0.6B's heads at 1024 positions, alternated with the read (Zen 4 VM, three runs): one block
 * 0.58-0.72 (AVX2) and 0.83-0.90 (AVX-512) of the read, two 0.80-0.85 and 0.88-0.90, four or eight no
 * better than two. On Zen 5 (the L2 profile) one block reads faster. */

/* Prefetches `bytes` bytes from `at` into L2, one line at a time. */
KF_ALWAYS_INLINE void pf_l2(uintptr_t at, size_t bytes) {
    for (size_t l = 0; l < bytes; l += 64) _mm_prefetch((const char *)(at + l), _MM_HINT_T1);
}

/* The same into L1, for what the next few microseconds read. */
KF_ALWAYS_INLINE void pf_l1(uintptr_t at, size_t bytes) {
    for (size_t l = 0; l < bytes; l += 64) _mm_prefetch((const char *)(at + l), _MM_HINT_T0);
}

/* The attention loops' `bf16` argument: 0 = f32 K and V, 1 = bf16 widened VW at a time, ATT_PAIRS = bf16
 * read 2 * VW at a time as even and odd elements (vf_load_bf16_pairs: one integer op each instead of a
 * widening shuffle and a shift). Dot products do not care about order, so in pairs mode q arrives split per
 * head (its even elements, then its odd ones) and the outputs accumulate split the same way; attn_partial_t
 * splits q and puts the outputs back in order. Needs head_dim a multiple of 2 * VW.
 * The split costs no FMA slot: on the Zen 5 VM (one core), 6 to 12 shifts, ands or unpacks beside 20
 * ymm FMAs into 10 independent sums took 3.05-3.11 ns against 3.09 for the FMAs alone. An FMA there takes 4
 * cycles, and 8 independent sums (the AVX2 score and values tiles) kept the pipes about 90 % busy:
 * 0.162-0.171 ns an FMA against 0.146-0.155 with 10 to 24 sums, ymm and zmm alike. So the floor of a group of
 * 4 at head_dim 128 is its FMAs: 128 a position on AVX2 (64 cycles), 64 on AVX-512. From L2 the two ran
 * at 19.7 and 35.0 GB/s (one KV head, 1024 positions, one thread), the AVX2 rate below one core's DRAM read
 * (about 27 GB/s).
 * Where a position's time goes (same VM, one thread, AVX2, Qwen3-0.6B's group of 2, two KV heads at 512
 * positions in L2, each phase timed alone by leaving the others out): scores 6.2 ns, values 5.8, softmax
 * 1.7, all three 13.9. The phases add up, none hides behind another. The tiles alone run at 0.17-0.18 ns an
 * FMA (about 1.6 a cycle) where the peak is 0.14. Measured no faster: each K and V row split once for four
 * heads (tiles of four heads, 2 or 4 rows, one or two pairs of vectors; group of 4 from L2, AVX2 17.8-18.0
 * -> 15.4-17.6 GB/s, AVX-512 30.4 -> 27.1-31.0); a product and an add in place of each chained FMA (scores:
 * AVX2 1-9 % slower, AVX-512 within 2 %; values 8-13 % slower); the next block's scores before this block's
 * values, so that its softmax overlaps them (from L2 +3-6 % at a group of 2, +0-1 % at 4; from DRAM, 11
 * alternations, two rounds: AVX2 on one thread at 1024 positions 0.82 / 0.80 -> 0.86 / 0.94 of the read, at
 * 4096 1.01 / 0.74 -> 0.94 / 0.74, two threads within 0.02, AVX-512 at a group of 4 on two threads 0.66 /
 * 0.71 -> 0.62 / 0.64; whole decode steps of Qwen3-0.6B at 1024 positions within 0.03 either way).
 * Nor, on AVX2 (Zen 5 VM, Qwen3-0.6B's group of 2, alternated in one sitting, medians): score tiles of three
 * positions with the odd elements in sums of their own, 12 sums (q as the FMAs' memory operands, else gcc
 * spills three sums), from L2 on one thread 33.7 -> 32.7 GB/s (six alternations; 34 -> 30.6 with the
 * spills); the softmax fused into the score tiles (each tile's 8 scores exponentiated at once, the max raised
 * and what was summed rescaled only when a score passes it), from L2 26.0 -> 22.3 GB/s (three alternations
 * on one core; 13.8 -> 12.0 at a group of 4); an exp for the softmax's x <= 0 without vf_exp's upper clamp
 * and split scaling (16 instructions against 28), from L2 36.1 -> 36.7 GB/s, from DRAM within the runs'
 * spread. Yet the softmax is what stands between these loops and the read on AVX2: left out altogether (a
 * wrong result, as a bound) attention ran 34 -> 42 GB/s from L2 and, from DRAM on two threads with the heads
 * skewed as kv_cache.c lays them out, 0.67-0.89 -> 0.90-0.93 of the read (1024 and 4096 positions, three
 * alternations, reads at 51-68 GB/s); with the read at 41-51 GB/s the same loop already read 0.90-1.02 of it,
 * so the softmax costs where DRAM outruns the two cores. Not through the code's size (block_softmax out of
 * line, from L2 38.5 -> 38.4 GB/s) nor store forwarding (its loads as the two 128-bit halves the score tiles
 * store, 38.7 -> 38.9). With every head at the same page offset instead, attention read 0.64-0.72 and
 * leaving the softmax out moved it little: the pages set the pace there (kv_cache.c). Each
 * block's K and V side by side (one stream a head) read 0.85-0.95 of the read against 0.90-1.01 for the
 * skewed heads (three alternations, AVX2 and AVX-512, reads at 30-37 GB/s); blocks of 64 to 1024 positions
 * (each thread on its own heads, unskewed) 0.50-0.65 against 0.61-0.74 for 16. The next block's scores and
 * softmax before this block's values (above), measured again with the skew, two threads, 1024 and 4096
 * positions, three alternations: AVX2 at a group of 2 0.64-0.70 -> 0.67-0.74, but AVX-512 0.84-0.93 ->
 * 0.76-0.90 and AVX2 at a group of 4 0.42-0.56 -> 0.42-0.55; pipelined at AVX2's group of 2 alone, a second
 * set (four alternations, 1024 to 16384 positions) 0.54-0.75 -> 0.56-0.75, the pairs from -17 to +3 %.
 * The softmax's exp by Estrin's scheme (four FMAs deep after r instead of six), two threads, skewed heads,
 * 15 alternations: reads at 78-81 GB/s 0.620 / 0.747 -> 0.620 / 0.758 (1024 / 4096 positions), with the
 * softmax left out 0.637 / 0.776; reads at 39 GB/s (4096 positions) 0.97-1.01 all three. So at fast reads the
 * AVX2 loops are held by their FMAs (237 MFLOP a step at 1024 positions, 66-74 % of the DRAM term at 231
 * GFLOP/s), and the report calls the block co-bound (report_roofs.c). Two KV heads at once, a block of each
 * in turn (one thread, Qwen3-0.6B's heads over 28 layers from DRAM, nine alternations): AVX2 at 1024 / 4096
 * positions 0.89 / 0.91 -> 0.50 / 0.49 of the read, AVX-512 at 4096 1.04 -> 0.85. Streams taken in turn 4
 * KiB at a time lose, as whole matvec rows taken in turn did; the matvec gained from two rows read side by
 * side (mv_dot_row_pair_bf16); here that would be two heads' K rows in one score tile and their V rows in
 * one values tile, or one block's values fused with the next block's scores. Not worth building: a
 * synthetic of the same loads, splits and FMAs (AVX-512, two threads, Qwen3-0.6B's KV cache at 1024 and
 * 4096 positions, no softmax) read block b's V rows beside block b + 1's K rows at 0.93-0.97 of the rate
 * of K and V taken in turn (four runs), and all heads' rows side by side (a token-major layout, a thread
 * on each half of the positions) no faster either (0.70 of the read against 0.75-0.78).
 * What the figures above come to: the loops do not overlap their arithmetic with their reads. Attention
 * alone from DRAM reads about 1 / (1 + f) of the read, f = the FMA term / the DRAM term = (FLOPs per
 * byte) x (read GB/s) / (FMA GFLOP/s): Qwen3-0.6B's heads (2 FLOPs a byte) at 1024 positions AVX2 0.65-0.71
 * and AVX-512 0.71-0.85 with reads at 49-79 GB/s in five sittings (the sum predicts 0.60-0.70 and
 * 0.75-0.83; a sixth, where everything ran slow, 0.52 and 0.64), Qwen3-4B's (4 FLOPs a byte) AVX2 0.48
 * and AVX-512 0.68 at 61-64 GB/s (predicted 0.49 and 0.66; Zen 5 VM, two threads, FMA 233 GFLOP/s on ymm
 * and twice that on zmm). So at a read of 80 GB/s AVX2 cannot pass 0.73 of the read at a group of 4 even
 * with full overlap. Prefetches do not buy the overlap: none at all read 0.36-0.47 against 0.71-0.94; L1
 * prefetches 8 KiB ahead instead of ATT_L1_AHEAD's 4, and prefetches into L2 (T1) 4 KiB ahead instead of
 * into L1, read the same; 12 KiB ahead 0.04-0.07 lower; in the synthetic, L2 prefetches 8-32 KiB ahead
 * besides the L1 ones 0.71-0.76 against 0.90. */
#define ATT_PAIRS 2

/* What a four-row tile of K or V prefetches along with its arithmetic: the same tile of the far block into L2
 * at l2 (0: none) and of the rows ATT_L1_AHEAD bytes on into L1 at l1 (0: none). */
struct att_tpf {
    uintptr_t l2, l1;
};

/* Prefetches the part of a tile of 4 rows of d elements of es bytes that the chunk of elements [i, i + step)
 * of each row stands for: its share, 4 * step elements, of the tile's bytes (the rows are contiguous, so the
 * shares cover the tile; the last one may reach past it, which a prefetch may). One or a few lines at a
 * time, between the chunks' arithmetic, rather than the whole tile at once: alone on a core the attention
 * loops read DRAM faster so (Zen 4 VM, quick runs --threads 1 --isa avx2 alternated with the bursts, the K
 * and V prefetches both spread this way: attention block at context 1024 70-71 -> 78 % of its paired read,
 * steps at context 16384 82-84 -> 87-91 %). */
KF_ALWAYS_INLINE void tile_pf(const struct att_tpf *pf, int i, int step, size_t es) {
    size_t at = 4 * (size_t)i * es, bytes = 4 * (size_t)step * es;
    if (pf->l2) pf_l2(pf->l2 + at, bytes);
    if (pf->l1) pf_l1(pf->l1 + at, bytes);
}

/* Scores of one or two query heads (nh) against four consecutive positions. kb: element index of the first
 * K row; ks: elements between positions; pf: the prefetches to spread over its chunks (tile_pf). In pairs
 * mode each sum takes two FMAs in a row an iteration, the even elements' and the odd ones', unless
 * ATT_SPLIT_SUMS gives the odd ones sums of their own (ao0-ao7), added in at the end. Breaking the chain
 * otherwise (a product and an FMA, then one add to the sum) measured slower from L2 (Zen 5 VM, Qwen3-0.6B's
 * heads at 256 positions, one thread: AVX2 33.0 -> 32.3 GB/s, AVX-512 44.4 -> 41.0), as did summing two
 * positions a step in values_tile (30.5 on AVX2). */
KF_ALWAYS_INLINE void score_tile(float *s0, float *s1, const float *q0, const float *q1, const void *k,
                                 size_t kb, size_t ks, int d, int bf16, float scale, const int nh,
                                 const struct att_tpf *pf) {
    const size_t es = bf16 ? 2 : 4;
    vf a0 = vf_zero(), a1 = vf_zero(), a2 = vf_zero(), a3 = vf_zero();
    vf a4 = vf_zero(), a5 = vf_zero(), a6 = vf_zero(), a7 = vf_zero();
    vf ao0 = vf_zero(), ao1 = vf_zero(), ao2 = vf_zero(), ao3 = vf_zero();
    vf ao4 = vf_zero(), ao5 = vf_zero(), ao6 = vf_zero(), ao7 = vf_zero();
    for (int i = 0; bf16 == ATT_PAIRS && i < d; i += 2 * VW) {
        const uint16_t *kr = (const uint16_t *)k + kb + (size_t)i;
        int j = i / 2, half = d / 2;
        vf qe = vf_loadu(q0 + j), qo = vf_loadu(q0 + half + j), qe1 = qe, qo1 = qo;
        if (nh == 2) qe1 = vf_loadu(q1 + j), qo1 = vf_loadu(q1 + half + j);
        tile_pf(pf, i, 2 * VW, es);
#define KPAIR(r, A, B, AO, BO)                                                                               \
    do {                                                                                                     \
        vf e, o;                                                                                             \
        vf_load_bf16_pairs_once(kr + (r)*ks, &e, &o);                                                        \
        if (ATT_SPLIT_SUMS) {                                                                                \
            A = vf_fmadd(qe, e, A), AO = vf_fmadd(qo, o, AO);                                                \
            if (nh == 2) B = vf_fmadd(qe1, e, B), BO = vf_fmadd(qo1, o, BO);                                 \
        } else {                                                                                             \
            A = vf_fmadd(qo, o, vf_fmadd(qe, e, A));                                                         \
            if (nh == 2) B = vf_fmadd(qo1, o, vf_fmadd(qe1, e, B));                                          \
        }                                                                                                    \
    } while (0)
        KPAIR(0, a0, a4, ao0, ao4);
        KPAIR(1, a1, a5, ao1, ao5);
        KPAIR(2, a2, a6, ao2, ao6);
        KPAIR(3, a3, a7, ao3, ao7);
#undef KPAIR
    }
    for (int i = 0; bf16 != ATT_PAIRS && i < d; i += VW) {
        int n = d - i < VW ? d - i : VW;
        vf qa = n == VW ? vf_loadu(q0 + i) : vf_load_part(q0 + i, n);
        tile_pf(pf, i, VW, es);
#define KROW(j)                                                                                              \
    (n == VW ? mv_load_w(k, kb + (j)*ks + (size_t)i, bf16)                                                   \
             : mv_load_w_part(k, kb + (j)*ks + (size_t)i, n, bf16))
        vf k0 = KROW(0), k1 = KROW(1), k2 = KROW(2), k3 = KROW(3);
#undef KROW
        a0 = vf_fmadd(qa, k0, a0), a1 = vf_fmadd(qa, k1, a1);
        a2 = vf_fmadd(qa, k2, a2), a3 = vf_fmadd(qa, k3, a3);
        if (nh == 2) {
            vf qb = n == VW ? vf_loadu(q1 + i) : vf_load_part(q1 + i, n);
            a4 = vf_fmadd(qb, k0, a4), a5 = vf_fmadd(qb, k1, a5);
            a6 = vf_fmadd(qb, k2, a6), a7 = vf_fmadd(qb, k3, a7);
        }
    }
    if (ATT_SPLIT_SUMS && bf16 == ATT_PAIRS) {
        a0 = vf_add(a0, ao0), a1 = vf_add(a1, ao1), a2 = vf_add(a2, ao2), a3 = vf_add(a3, ao3);
        a4 = vf_add(a4, ao4), a5 = vf_add(a5, ao5), a6 = vf_add(a6, ao6), a7 = vf_add(a7, ao7);
    }
    __m256 r = _mm256_mul_ps(hsum8(a0, a1, a2, a3, a4, a5, a6, a7), _mm256_set1_ps(scale));
    _mm_storeu_ps(s0, _mm256_castps256_ps128(r));
    if (nh == 2) _mm_storeu_ps(s1, _mm256_extractf128_ps(r, 1));
}

/* q . k of one head and one position, for block tails. */
KF_ALWAYS_INLINE float dot1_kv(const float *q0, const void *k, size_t kb, int d, int bf16) {
    vf a0 = vf_zero();
    int i = 0;
    for (; bf16 == ATT_PAIRS && i < d; i += 2 * VW) {
        vf e, o;
        vf_load_bf16_pairs_once((const uint16_t *)k + kb + (size_t)i, &e, &o);
        a0 = vf_fmadd(vf_loadu(q0 + d / 2 + i / 2), o, vf_fmadd(vf_loadu(q0 + i / 2), e, a0));
    }
    for (; i + VW <= d; i += VW) a0 = vf_fmadd(vf_loadu(q0 + i), mv_load_w(k, kb + (size_t)i, bf16), a0);
    if (i < d) a0 = vf_fmadd(vf_load_part(q0 + i, d - i), mv_load_w_part(k, kb + (size_t)i, d - i, bf16), a0);
    return vf_hsum(a0);
}

/* How far ahead of the row being read the attention loops prefetch into L1, in bytes: as the matvec's
 * MV_PF_BYTES, K and V being sequential streams like a weight row. */
#define ATT_L1_AHEAD 4096

/* Scaled scores of positions [b0, b0 + np) of one KV head into s[h * ss + i] for its `group` query heads,
 * four positions at a time, so that K is read in address order. Meanwhile the first head pair's tiles
 * prefetch (tile_pf) np rows from pf on (the block pf_blocks blocks on; 0: none) into L2, so that the
 * prefetches interleave with the arithmetic (the hardware prefetchers stop at every 4 KiB page), and the rows
 * ATT_L1_AHEAD bytes on into L1 (at the range's end they may lie past it: only prefetched). */
KF_ALWAYS_INLINE void block_scores(float *s, size_t ss, const float *q, const void *k, int bf16, int b0,
                                   int np, int group, int d, float scale, uintptr_t pf) {
    const size_t es = bf16 ? 2 : 4, tile = 4 * (size_t)d * es;
    const struct att_tpf none = {0, 0};
    int i = 0;
    for (; i + 4 <= np; i += 4) {
        size_t kb = (size_t)(b0 + i) * (size_t)d;
        const struct att_tpf fetch = {.l2 = pf ? pf + (size_t)i / 4 * tile : 0,
                                      .l1 = (uintptr_t)k + kb * es + ATT_L1_AHEAD};
        for (int h = 0; h < group; h += 2) {
            const float *q0 = q + (size_t)h * (size_t)d;
            float *s0 = s + (size_t)h * ss + (size_t)i;
            const struct att_tpf *tpf = h == 0 ? &fetch : &none;
            if (h + 1 < group)
                score_tile(s0, s0 + ss, q0, q0 + d, k, kb, (size_t)d, d, bf16, scale, 2, tpf);
            else
                score_tile(s0, s0, q0, q0, k, kb, (size_t)d, d, bf16, scale, 1, tpf);
        }
    }
    for (; i < np; i++)
        for (int h = 0; h < group; h++) {
            size_t kb = (size_t)(b0 + i) * (size_t)d;
            s[(size_t)h * ss + (size_t)i] = dot1_kv(q + (size_t)h * (size_t)d, k, kb, d, bf16) * scale;
        }
}

/* One head's block of scores s[0, np) against its running max *m, its sums so far *lv (kept lane by lane
 * and summed across once, at the range's end) and its output o[0, d): s[i] becomes exp(s[i] - m), added to
 * *lv. Only a block with a score above the max (or a NaN) finds its own max and, when that raises m, rescales
 * what was summed so far by exp(m_old - m_new); once the first blocks have set the max, a block costs one
 * compare per vector where it cost a horizontal max, and no horizontal sum (figures: attn_partial_t). */
KF_ALWAYS_INLINE void block_softmax(float *s, int np, float *m, vf *lv, float *o, int d) {
    vf vm = vf_set1(*m);
    int i = 0, over = 0;
    for (; i + VW <= np; i += VW) over |= vf_any_gt(vf_loadu(s + i), vm);
    for (; i < np; i++) over |= !(s[i] <= *m);
    if (over) {
        vf mv = vm;
        for (i = 0; i + VW <= np; i += VW) mv = vf_max(mv, vf_loadu(s + i));
        float mx = vf_hmax(mv);
        for (; i < np; i++) mx = s[i] > mx ? s[i] : mx;
        if (mx > *m) {
            float alpha = 0.0f; /* exp(-inf) on the first block */
            vf_store_part(&alpha, vf_exp(vf_set1(*m - mx)), 1);
            vf va = vf_set1(alpha);
            *lv = vf_mul(*lv, va);
            int j = 0;
            for (; j + VW <= d; j += VW) vf_storeu(o + j, vf_mul(vf_loadu(o + j), va));
            for (; j < d; j++) o[j] *= alpha;
            *m = mx;
        }
        vm = vf_set1(mx);
    }
    vf sum = *lv;
    for (i = 0; i + VW <= np; i += VW) {
        vf e = vf_exp(vf_sub(vf_loadu(s + i), vm));
        vf_storeu(s + i, e);
        sum = vf_add(sum, e);
    }
    if (i < np) {
        vf e = vf_exp(vf_sub(vf_load_part(s + i, np - i), vm));
        vf_store_part(s + i, e, np - i);
        sum = vf_add(sum, vf_load_part(s + i, np - i)); /* only the np - i real lanes */
    }
    *lv = sum;
}

/* What a pass over a block's V rows prefetches: the pass reads bytes [off, off + bytes) of each of its np
 * rows, and its share of the far block (l2; 0: none) and of the block ATT_L1_AHEAD bytes on (l1) is the same
 * fraction of their bytes taken in address order, [off * np, (off + bytes) * np), bytes at a time, one
 * piece per position p. The passes' shares cover the blocks (each pass starts where the last one ended), as
 * tile_pf's do a tile's. Address order rather than the pass's own slice of each row (lines 256 bytes apart
 * on AVX2, whose passes take 64 bytes of a row at head_dim 128): attention alone over 28 layers from DRAM,
 * AVX2, alternated in one process (Zen 5 VM, medians of 9, fraction of the read at 1024 / 4096 / 16384
 * positions), two threads 0.67 / 0.74 / 0.77 -> 0.73 / 0.79 / 0.83 and 0.77 / 0.96 / 0.70 -> 0.82-0.89 /
 * 1.01-1.03 / 0.76, one thread 0.70 / 0.87 -> 0.80 / 0.98 (AVX-512 reads a whole row a pass: no change).
 * bytes == 0: nothing (the later head pairs). */
struct att_vpf {
    uintptr_t l2, l1;
    size_t off, bytes;
};

KF_ALWAYS_INLINE void values_pf(const struct att_vpf *pf, int np, int p) {
    if (!pf->bytes) return;
    size_t at = pf->off * (size_t)np + (size_t)p * pf->bytes;
    if (pf->l2) pf_l2(pf->l2 + at, pf->bytes);
    pf_l1(pf->l1 + at, pf->bytes);
}

/* o0[j], o1[j] += sum over the block's np positions of pr0[p], pr1[p] times V row p, for nv vectors of
 * dims: the sums stay in registers across the block and touch out once per block. In pairs mode nv counts
 * pairs of vectors, the even sums go to o0[j] and the odd ones to o0[half + j] (likewise o1). */
KF_ALWAYS_INLINE void values_tile(float *o0, float *o1, const float *pr0, const float *pr1, const void *v,
                                  size_t vb, size_t vs, int np, int bf16, const int nv, const int nh,
                                  const struct att_vpf *pf, size_t half) {
    vf a[ATT_NV], c[ATT_NV];
#pragma GCC unroll 8
    for (int j = 0; j < nv; j++) a[j] = vf_zero(), c[j] = vf_zero();
    if (bf16 == ATT_PAIRS) {
        vf ao[ATT_NV], co[ATT_NV];
#pragma GCC unroll 8
        for (int j = 0; j < nv; j++) ao[j] = vf_zero(), co[j] = vf_zero();
        /* The pass reads nv * 4 * VW bytes of each row and prefetches as many a position when it does
         * (att_vpf): a constant, and which prefetches it issues is settled once for the pass rather than
         * tested at every position (Qwen3-0.6B's heads at 128 positions from L2, Zen 5 VM, one thread,
         * alternated in one process: the whole attention 31.3 -> 33.7 GB/s on AVX2, 45.7 -> 47.4 on AVX-512).
         */
        const size_t slice = (size_t)nv * 4 * VW;
#define VPAIRS(FETCH)                                                                                        \
    for (int p = 0; p < np; p++) {                                                                           \
        vf w0 = vf_set1(pr0[p]), w1 = vf_set1(pr1[p]);                                                       \
        const uint16_t *vr = (const uint16_t *)v + vb + (size_t)p * vs;                                      \
        size_t at = pf->off * (size_t)np + (size_t)p * slice;                                                \
        (void)at;                                                                                            \
        FETCH;                                                                                               \
        _Pragma("GCC unroll 8") for (int j = 0; j < nv; j++) {                                               \
            vf e, o;                                                                                         \
            vf_load_bf16_pairs_once(vr + (size_t)j * 2 * VW, &e, &o);                                        \
            a[j] = vf_fmadd(w0, e, a[j]), ao[j] = vf_fmadd(w0, o, ao[j]);                                    \
            if (nh == 2) c[j] = vf_fmadd(w1, e, c[j]), co[j] = vf_fmadd(w1, o, co[j]);                       \
        }                                                                                                    \
    }
        if (!pf->bytes)
            VPAIRS((void)0)
        else if (!pf->l2)
            VPAIRS(pf_l1(pf->l1 + at, slice))
        else
            VPAIRS((pf_l2(pf->l2 + at, slice), pf_l1(pf->l1 + at, slice)))
#undef VPAIRS
#pragma GCC unroll 8
        for (int j = 0; j < nv; j++) {
            vf_storeu(o0 + j * VW, vf_add(vf_loadu(o0 + j * VW), a[j]));
            vf_storeu(o0 + half + j * VW, vf_add(vf_loadu(o0 + half + j * VW), ao[j]));
            if (nh == 2) {
                vf_storeu(o1 + j * VW, vf_add(vf_loadu(o1 + j * VW), c[j]));
                vf_storeu(o1 + half + j * VW, vf_add(vf_loadu(o1 + half + j * VW), co[j]));
            }
        }
        return;
    }
    for (int p = 0; p < np; p++) {
        vf w0 = vf_set1(pr0[p]), w1 = vf_set1(pr1[p]);
        size_t at = vb + (size_t)p * vs;
        values_pf(pf, np, p);
#pragma GCC unroll 8
        for (int j = 0; j < nv; j++) {
            vf x = mv_load_w(v, at + (size_t)j * VW, bf16);
            a[j] = vf_fmadd(w0, x, a[j]);
            if (nh == 2) c[j] = vf_fmadd(w1, x, c[j]);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < nv; j++) {
        vf_storeu(o0 + j * VW, vf_add(vf_loadu(o0 + j * VW), a[j]));
        if (nh == 2) vf_storeu(o1 + j * VW, vf_add(vf_loadu(o1 + j * VW), c[j]));
    }
}

/* Dims [d, d1) of one head pair over one block when they are fewer than a whole vector: through memory. */
KF_ALWAYS_INLINE void values_tail(float *o0, float *o1, const float *pr0, const float *pr1, const void *v,
                                  size_t vb, size_t vs, int np, int bf16, int m, int nh) {
    for (int p = 0; p < np; p++) {
        size_t at = vb + (size_t)p * vs;
        vf x = mv_load_w_part(v, at, m, bf16);
        vf_store_part(o0, vf_fmadd(vf_set1(pr0[p]), x, vf_load_part(o0, m)), m);
        if (nh == 2) vf_store_part(o1, vf_fmadd(vf_set1(pr1[p]), x, vf_load_part(o1, m)), m);
    }
}

/* o[h][:] += sum over positions [b0, b0 + np) of w[h * ws + i] times V rows, for the `group` query heads of
 * one KV head, by head pairs, dims in chunks of ATT_NV vectors summed in registers (then ATT_NV / 2, then
 * single vectors, then a partial one). The first head pair's passes read the block's V rows from memory, each
 * pass its slice of dims, and prefetch (struct att_vpf) their shares of the far block's rows from pf on (0:
 * none) into L2 and of the rows ATT_L1_AHEAD bytes on into L1, the last full pass's share counting the rest
 * of the row (the partial vector's dims); the other head pairs find the rows in L1. */
KF_ALWAYS_INLINE void block_values(float *o, const float *w, size_t ws, const void *v, int bf16, int b0,
                                   int np, int group, int d, uintptr_t pf_at) {
    const size_t es = bf16 ? 2 : 4, vs = (size_t)d, vb0 = (size_t)b0 * vs;
    struct att_vpf pf = {.l2 = pf_at, .l1 = (uintptr_t)v + vb0 * es + ATT_L1_AHEAD};
    for (int h = 0; h < group; h += 2) {
        int nh = h + 1 < group ? 2 : 1;
        const float *w0 = w + (size_t)h * ws, *w1 = w0 + (nh == 2 ? ws : 0);
        float *o0 = o + (size_t)h * (size_t)d, *o1 = o0 + (nh == 2 ? d : 0);
        int i = 0;
        const size_t half = (size_t)d / 2;
#define VTILE(NV)                                                                                            \
    do {                                                                                                     \
        int end = i + (NV) * (bf16 == ATT_PAIRS ? 2 : 1) * VW;                                               \
        pf.off = (size_t)i * es;                                                                             \
        pf.bytes = h == 0 ? (size_t)((end + VW > d ? d : end) - i) * es : 0;                                 \
        size_t oi = bf16 == ATT_PAIRS ? (size_t)i / 2 : (size_t)i;                                           \
        if (nh == 2)                                                                                         \
            values_tile(o0 + oi, o1 + oi, w0, w1, v, vb0 + (size_t)i, vs, np, bf16, NV, 2, &pf, half);       \
        else                                                                                                 \
            values_tile(o0 + oi, o1 + oi, w0, w1, v, vb0 + (size_t)i, vs, np, bf16, NV, 1, &pf, half);       \
    } while (0)
        if (bf16 == ATT_PAIRS) { /* d is a multiple of 2 * VW */
            for (; i + ATT_NV * VW <= d; i += ATT_NV * VW) VTILE(ATT_NV / 2);
            for (; i < d; i += 2 * VW) VTILE(1);
            continue;
        }
        for (; i + ATT_NV * VW <= d; i += ATT_NV * VW) VTILE(ATT_NV);
        for (; i + ATT_NV / 2 * VW <= d; i += ATT_NV / 2 * VW) VTILE(ATT_NV / 2);
        for (; i + VW <= d; i += VW) VTILE(1);
#undef VTILE
        if (i < d) values_tail(o0 + i, o1 + i, w0, w1, v, vb0 + (size_t)i, vs, np, bf16, d - i, nh);
    }
}

/* Where the L2 prefetch of the block at position `ahead` of cur (n rows of row_bytes from base) starts: in
 * cur, else as far into next's rows (next_base), else 0 (nothing left to fetch). */
KF_ALWAYS_INLINE uintptr_t att_pf_at(const void *base, const void *next_base, int ahead, int n, int next_n,
                                     size_t row_bytes) {
    if (ahead < n) return (uintptr_t)base + (size_t)ahead * row_bytes;
    return ahead - n < next_n ? (uintptr_t)next_base + (size_t)(ahead - n) * row_bytes : 0;
}

KF_ALWAYS_INLINE void attn_partial_t(float *o, float *m, float *l, float *sbuf, int pb, const float *q,
                                     const struct attn_rows *cur, const struct attn_rows *next, int bf16,
                                     int group, int d, float scale, int fetched, int pf_blocks) {
    vf lv[group]; /* each head's softmax sums, lane by lane */
    for (int h = 0; h < group; h++) {
        m[h] = -INFINITY;
        lv[h] = vf_zero();
    }
    for (size_t i = 0; i < (size_t)group * (size_t)d; i++) o[i] = 0.0f;
    const int half = d / 2;
    float qs[bf16 == ATT_PAIRS ? group * d : 1]; /* pairs mode: q of each head, even elements then odd */
    if (bf16 == ATT_PAIRS) {
        for (int h = 0; h < group; h++)
            for (int j = 0; j < half; j++) {
                qs[h * d + j] = q[h * d + 2 * j];
                qs[h * d + half + j] = q[h * d + 2 * j + 1];
            }
        q = qs;
    }
    /* Unless the previous range's last blocks did, the first pf_blocks blocks are not prefetched by the
     * loop below: fetch them now, all at once. */
    const size_t row_bytes = (size_t)d * (bf16 ? 2 : 4);
    const int n = cur->n, head = n < pf_blocks * pb ? n : pf_blocks * pb;
    if (!fetched) {
        pf_l2((uintptr_t)cur->k, (size_t)head * row_bytes);
        pf_l2((uintptr_t)cur->v, (size_t)head * row_bytes);
    }
    /* When the far block is the one the L1 prefetch reaches (one block ahead, blocks of ATT_L1_AHEAD bytes),
     * the L2 prefetch would fetch the same lines a second time: then it runs only past the range's end, into
     * the next range. This, block_softmax's compare before any horizontal max and values_tile's prefetch
     * settled per pass, against the loop before them, alternated in one process with it and with the read
     * (Zen 5 VM, Qwen3-0.6B's heads over 28 layers from DRAM, medians of three runs, fraction of the read at
     * 1024 / 4096 / 16384 positions): two threads AVX-512 0.68 / 0.72 / 0.72 -> 0.71 / 0.81 / 0.80, AVX2
     * 0.55 / 0.66 / 0.65 -> 0.60 / 0.65 / 0.66; one thread AVX-512 0.88 / 1.11 / 0.88 -> 0.89 / 1.10 / 0.98,
     * AVX2 0.78 / 0.95 / 0.81 -> 0.75 / 0.96 / 0.84 (above 1: one core's read kernel is slower than these
     * prefetched streams). From L2 (128 positions, one thread): AVX2 29.5 -> 33.7 GB/s, AVX-512 40.9 -> 47.4.
     */
    const int far_is_near = (size_t)pf_blocks * (size_t)pb * row_bytes == ATT_L1_AHEAD;
    for (int b0 = 0; b0 < n; b0 += pb) {
        int np = n - b0 < pb ? n - b0 : pb, ahead = b0 + pf_blocks * pb, far = !far_is_near || ahead >= n;
        block_scores(sbuf, (size_t)pb, q, cur->k, bf16, b0, np, group, d, scale,
                     far ? att_pf_at(cur->k, next->k, ahead, n, next->n, row_bytes) : 0);
        for (int h = 0; h < group; h++)
            block_softmax(sbuf + (size_t)h * (size_t)pb, np, m + h, lv + h, o + (size_t)h * (size_t)d, d);
        block_values(o, sbuf, (size_t)pb, cur->v, bf16, b0, np, group, d,
                     far ? att_pf_at(cur->v, next->v, ahead, n, next->n, row_bytes) : 0);
    }
    for (int h = 0; h < group; h++) l[h] = vf_hsum(lv[h]);
    if (bf16 == ATT_PAIRS) /* outputs back in order, head by head through qs (no longer needed) */
        for (int h = 0; h < group; h++) {
            float *oh = o + (size_t)h * (size_t)d, *tmp = qs + (size_t)h * (size_t)d;
            for (int j = 0; j < d; j++) tmp[j] = oh[j];
            for (int j = 0; j < half; j++) {
                oh[2 * j] = tmp[j];
                oh[2 * j + 1] = tmp[half + j];
            }
        }
}

static void KFN(attn_partial)(float *o, float *m, float *l, float *sbuf, int pb, const float *q,
                              const struct attn_rows *cur, const struct attn_rows *next, int kv_bf16,
                              int group, int head_dim, float scale, int fetched, int pf_blocks) {
    /* head_dim 128, every Qwen3 model's, as a constant for the loops: figures at kernels_avx512.c's
     * vf_load_bf16_pairs_once */
    if (kv_bf16 && head_dim == 128)
        attn_partial_t(o, m, l, sbuf, pb, q, cur, next, ATT_PAIRS, group, 128, scale, fetched, pf_blocks);
    else if (kv_bf16 && head_dim % (2 * VW) == 0)
        attn_partial_t(o, m, l, sbuf, pb, q, cur, next, ATT_PAIRS, group, head_dim, scale, fetched,
                       pf_blocks);
    else if (kv_bf16)
        attn_partial_t(o, m, l, sbuf, pb, q, cur, next, 1, group, head_dim, scale, fetched, pf_blocks);
    else
        attn_partial_t(o, m, l, sbuf, pb, q, cur, next, 0, group, head_dim, scale, fetched, pf_blocks);
}

/* The table's bf16 matvec: this file's loop unless the including file names another (KOPS_MATVEC_BF16). */
#ifndef KOPS_MATVEC_BF16
#define KOPS_MATVEC_BF16 KFN(matvec_bf16)
#endif
#ifndef KOPS_MATVEC_BF16_SOLO
#define KOPS_MATVEC_BF16_SOLO KOPS_MATVEC_BF16
#endif

const struct kernel_ops KOPS_TABLE = {
    .matvec_bf16 = KOPS_MATVEC_BF16,
    .matvec_bf16_l2 = KOPS_MATVEC_BF16_L2,
    .matvec_bf16_solo = KOPS_MATVEC_BF16_SOLO,
    .matvec_f32 = KFN(matvec_f32),
    .sum_squares = KFN(sum_squares),
    .scale_mul = KFN(scale_mul),
    .vec_add = KFN(vec_add),
    .swiglu = KFN(swiglu),
    .vexp = KFN(vexp),
    .bf16_to_f32 = KFN(bf16_to_f32),
    .f32_to_bf16 = KFN(f32_to_bf16),
    .rope_apply = KFN(rope_apply),
    .attn_partial = KFN(attn_partial),
};
