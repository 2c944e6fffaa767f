/* The vector loop bodies of the kernels, written once over a small set of vector primitives and included by
 * kernels_avx2.c and kernels_avx512.c, which define before including it:
 *   VW (f32 lanes), vf (vector type), vf_zero/set1/loadu/storeu/add/sub/mul/div/max/fmadd/fmsub,
 *   vf_hsum/vf_hmax (horizontal), vf_any_gt (whether any lane is greater, or unordered), vf_load_bf16 (VW
 *   bf16 widened exactly), vf_load_bf16_pairs (2 * VW bf16 as two vectors, the even elements and the odd
 *   ones, widened exactly), vf_load_bf16_pairs_once (the same from one load, for attention),
 *   vf_store_bf16 (round to nearest even), vf_load_part/vf_load_bf16_part (first n < VW elements, rest 0),
 *   vf_store_part/vf_store_bf16_part, vf_min/fnmadd/round (to nearest), vf_scale_exp2 (p * 2^n, NaN x
 *   passed through), KFN(name) (ISA-suffixed name), KOPS_TABLE (the kernel_ops table to define) and the
 *   tuning constants ATT_NV, ATT_SPLIT_SUMS, MV_WIDE_ROWS and MV_SOLO_L2_BYTES; optionally KOPS_MATVEC_BF16
 *   (the table's bf16 matvec, when not this file's loop) and KOPS_MATVEC_BF16_SOLO (a one-thread run's).
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

/* ---- matvec ---- Memory-bound: each weight is used once, so the loop is built to keep DRAM busy, not the
 * FMA units. Each row is one sequential stream, prefetched into L1 MV_PF_BYTES ahead of where it is read,
 * running on into the next row (a chunk's rows are contiguous). bf16 weights are read 2 * VW at a time as
 * even/odd pairs (vf_load_bf16_pairs: a shift or a mask per vector, no widening shuffle) into two
 * accumulators, against x split once per call into its even elements and its odd ones (mv_split_x): of the
 * loop shapes and prefetch distances tried on the Zen 4 VM this one read closest to the read kernel
 * (docs/tuning/matvec.md, "The L1 loop"). */
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
 * beside the weights streaming into it, and every x load goes to L2. So their weights are prefetched into L2
 * only, MV_WIDE_PF_BYTES ahead, and on AVX-512 MV_WIDE_ROWS = 4 rows share each x load. No loop shape tried
 * brought these rows near the read (0.6-0.8 of it on the Zen 5 VM), so the model's layer matrices wider than
 * 2048 columns are stored as column panels (col_panels.h) and never reach this path; it serves row-major
 * callers (docs/tuning/matvec.md, "Wide rows"). */
#define MV_WIDE_COLS     4096
#define MV_WIDE_PF_BYTES 8192

/* One core reading on its own is held back by the misses it can keep in flight, not by DRAM; on AVX2 a matvec
 * run by a team of one also prefetches its rows into L2 MV_SOLO_L2_BYTES beyond the L1 prefetch (0: never).
 * Teams keep the plain loop, where DRAM is the limit and the prefetch cost about 4 %, and AVX-512 read lower
 * with it (docs/tuning/matvec.md, "The solo L2 prefetch"). */

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
 * line in 8 cycles), each of its lines prefetched once into L2, MV_L2_PF_BYTES ahead: when DRAM is fast, 4
 * KiB is too short a lead for two cores. How far this loop stays below the read, and why no loop shape
 * removes the rest: docs/tuning/matvec.md, "The L2 loop". */
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

/* Two rows of n bf16 weights, at w and v, with x (split: xe, xo) into ya and yb: one row from each half of a
 * chunk, so that the core streams from two places at once, each x load serving both rows; with pf (a
 * constant) each row's lines are also prefetched into L1 MV_PF_BYTES ahead, a line of each row per 64 bytes
 * read (see mv_rows_bf16 for when). One core of the Zen 5 VM keeps more lines in flight over two streams than
 * over one (roofline/ceilings_kernels.h, the two-stream read): this loop read 1.01-1.15 of the read on one
 * thread where one row at a time read 0.84-0.91 (docs/tuning/matvec.md, "The pair loop"). */
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

/* In a team, the row pairs of mv_rows_bf16 that start within this many bytes of each half of a chunk prefetch
 * into L1 (mv_dot_row_pair_bf16's pf): each chunk starts two new streams, and the hardware prefetchers take a
 * while to follow them. On two threads of the Zen 5 VM decode ran 1.002-1.053 times as fast with this ramp; a
 * team of one does not take it, and every pair prefetching lost where DRAM was fast (docs/tuning/matvec.md,
 * "The pair ramp"). */
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
 * two blocks (8 KiB of each of K and V at head_dim 128, bf16) on the L1 prefetch profile, one on the L2
 * profile (docs/tuning/attention.md, "Far prefetch distance"). */

/* Prefetches `bytes` bytes from `at` into L2, one line at a time. */
KF_ALWAYS_INLINE void pf_l2(uintptr_t at, size_t bytes) {
    for (size_t l = 0; l < bytes; l += 64) _mm_prefetch((const char *)(at + l), _MM_HINT_T1);
}

/* The same into L1, for what the next few microseconds read. */
KF_ALWAYS_INLINE void pf_l1(uintptr_t at, size_t bytes) {
    for (size_t l = 0; l < bytes; l += 64) _mm_prefetch((const char *)(at + l), _MM_HINT_T0);
}

/* The attention loops' `bf16` argument: 0 = f32 K and V, 1 = bf16 widened VW at a time, ATT_PAIRS = bf16 read
 * 2 * VW at a time as even and odd elements (vf_load_bf16_pairs: one integer op each instead of a widening
 * shuffle and a shift). Dot products do not care about order, so in pairs mode q arrives split per head (its
 * even elements, then its odd ones) and the outputs accumulate split the same way; attn_partial_t splits q
 * and puts the outputs back in order. Needs head_dim a multiple of 2 * VW. The split costs no FMA slot. These
 * loops do not overlap their arithmetic with their reads: from DRAM attention reads about 1 / (1 + f) of the
 * read, f = its FMA term / its DRAM term, and the report calls the block co-bound (report_roofs.c). The
 * layouts, fusions, exps and prefetches tried against that: docs/tuning/attention.md, "What bounds
 * attention". */
#define ATT_PAIRS 2

/* What a four-row tile of K or V prefetches along with its arithmetic: the same tile of the far block into L2
 * at l2 (0: none) and of the rows ATT_L1_AHEAD bytes on into L1 at l1 (0: none). */
struct att_tpf {
    uintptr_t l2, l1;
};

/* Prefetches the part of a tile of 4 rows of d elements of es bytes that the chunk of elements [i, i + step)
 * of each row stands for: its share, 4 * step elements, of the tile's bytes (the rows are contiguous, so the
 * shares cover the tile; the last one may reach past it, which a prefetch may). One or a few lines at a time,
 * between the chunks' arithmetic, rather than the whole tile at once: alone on a core the attention loops
 * read DRAM faster so (docs/tuning/attention.md, "Spread prefetches"). */
KF_ALWAYS_INLINE void tile_pf(const struct att_tpf *pf, int i, int step, size_t es) {
    size_t at = 4 * (size_t)i * es, bytes = 4 * (size_t)step * es;
    if (pf->l2) pf_l2(pf->l2 + at, bytes);
    if (pf->l1) pf_l1(pf->l1 + at, bytes);
}

/* Scores of one or two query heads (nh) against four consecutive positions. kb: element index of the first K
 * row; ks: elements between positions; pf: the prefetches to spread over its chunks (tile_pf). In pairs mode
 * each sum takes two FMAs in a row an iteration, the even elements' and the odd ones', unless ATT_SPLIT_SUMS
 * gives the odd ones sums of their own (ao0-ao7), added in at the end. Breaking the chain otherwise measured
 * slower (docs/tuning/attention.md, "Score and values tiles"). */
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
 * compare per vector where it cost a horizontal max, and no horizontal sum (figures:
 * docs/tuning/attention.md). */
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
 * fraction of their bytes taken in address order, [off * np, (off + bytes) * np), bytes at a time, one piece
 * per position p. The passes' shares cover the blocks (each pass starts where the last one ended), as
 * tile_pf's do a tile's. Address order rather than the pass's own slice of each row (lines 256 bytes apart on
 * AVX2, whose passes take 64 bytes of a row at head_dim 128), which read slower (docs/tuning/attention.md, "V
 * prefetch order"). bytes == 0: nothing (the later head pairs). */
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
         * tested at every position, which read faster (docs/tuning/attention.md, "V prefetch order"). */
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
     * the next range (docs/tuning/attention.md, "Far prefetch distance"). */
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
