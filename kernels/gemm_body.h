/* The gemm inner loop (kernels/gemm_ops.h), written once over the vector primitives of kernels_simd_body.h
 * and included after it by kernels_avx2.c and kernels_avx512.c, which define GEMM_NB (batch rows per
 * register tile) before including it; it defines static functions and the table gemm_ops_<isa> there.
 * Register tile: GEMM_MR weight rows x nb X rows, one vector accumulator each, summed along the columns
 * (where both W and X are contiguous): per VW columns GEMM_MR weight loads (bf16 widened exactly) and nb X
 * loads feed GEMM_MR * nb FMAs. AVX-512 holds 4 x 6 accumulators + 6 X + 1 W in its 32 registers, AVX2 4 x 3
 * + 3 + 1 in 16; hsum8 reduces them at the end of the panel's column block. The first batch tile of each row
 * tile prefetches the next row tile into L2 at the pace it consumes its own, as matvec does, so small batches
 * still stream the weights at DRAM speed. No AVX512_BF16 dot products: vdpbf16ps would round X to bf16 as
 * well, an error of 2^-9 per product, far outside the f32-activation tolerance the reference is held to. */
#ifndef GEMM_NB
#error "define GEMM_NB before including kernels/gemm_body.h"
#endif

#include "kernels/gemm_ops.h"

#define GEMM_MR     4
#define GEMM_NB_MAX 6

/* One register tile over kc columns: rows [0, mr) of w by rows [0, nb) of x into y[j * ldy + i]. */
KF_ALWAYS_INLINE void gm_tile(float *y, size_t ldy, const void *w, size_t ldw, const float *x, size_t ldx,
                              int kc, int bf16, int accumulate, int prefetch, const int mr, const int nb) {
    vf acc[GEMM_MR][GEMM_NB_MAX];
    const size_t es = bf16 ? 2 : 4;
#pragma GCC unroll 4
    for (int i = 0; i < mr; i++)
#pragma GCC unroll 6
        for (int j = 0; j < nb; j++) acc[i][j] = vf_zero();
    /* the next row tile, mr rows on: may lie past w's end, it is only prefetched */
    const uintptr_t pf = (uintptr_t)w + (size_t)mr * ldw * es;
    int k = 0;
    for (; k + VW <= kc; k += VW) {
        if (prefetch)
#pragma GCC unroll 4
            for (int i = 0; i < mr; i++)
                _mm_prefetch((const char *)(pf + ((size_t)i * ldw + (size_t)k) * es), _MM_HINT_T1);
        vf xv[GEMM_NB_MAX];
#pragma GCC unroll 6
        for (int j = 0; j < nb; j++) xv[j] = vf_loadu(x + (size_t)j * ldx + (size_t)k);
#pragma GCC unroll 4
        for (int i = 0; i < mr; i++) {
            vf wv = mv_load_w(w, (size_t)i * ldw + (size_t)k, bf16);
#pragma GCC unroll 6
            for (int j = 0; j < nb; j++) acc[i][j] = vf_fmadd(wv, xv[j], acc[i][j]);
        }
    }
    if (k < kc) {
        int n = kc - k;
        vf xv[GEMM_NB_MAX];
#pragma GCC unroll 6
        for (int j = 0; j < nb; j++) xv[j] = vf_load_part(x + (size_t)j * ldx + (size_t)k, n);
#pragma GCC unroll 4
        for (int i = 0; i < mr; i++) {
            vf wv = mv_load_w_part(w, (size_t)i * ldw + (size_t)k, n, bf16);
#pragma GCC unroll 6
            for (int j = 0; j < nb; j++) acc[i][j] = vf_fmadd(wv, xv[j], acc[i][j]);
        }
    }
    /* acc[i][j] -> sums[j * mr + i], eight horizontal sums at a time */
    float sums[GEMM_MR * GEMM_NB_MAX + 8];
    const int n_acc = mr * nb;
#pragma GCC unroll 3
    for (int g = 0; g < n_acc; g += 8) {
        vf t[8];
#pragma GCC unroll 8
        for (int u = 0; u < 8; u++) t[u] = g + u < n_acc ? acc[(g + u) % mr][(g + u) / mr] : vf_zero();
        _mm256_storeu_ps(sums + g, hsum8(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7]));
    }
#pragma GCC unroll 6
    for (int j = 0; j < nb; j++)
#pragma GCC unroll 4
        for (int i = 0; i < mr; i++) {
            float *o = y + (size_t)j * ldy + (size_t)i;
            *o = accumulate ? *o + sums[j * mr + i] : sums[j * mr + i];
        }
}

/* The batch tiles of one row tile: whole tiles of GEMM_NB, then the rest with a tile of its own size. */
KF_ALWAYS_INLINE void gm_row_tile(float *y, size_t ldy, const void *w, size_t ldw, const float *x, size_t ldx,
                                  int batch, int kc, int bf16, int accumulate, const int mr) {
    int b = 0;
    for (; b + GEMM_NB <= batch; b += GEMM_NB)
        gm_tile(y + (size_t)b * ldy, ldy, w, ldw, x + (size_t)b * ldx, ldx, kc, bf16, accumulate, b == 0, mr,
                GEMM_NB);
    float *yb = y + (size_t)b * ldy;
    const float *xb = x + (size_t)b * ldx;
    const int pf = b == 0;
    switch (batch - b) {
#define GM_REST(N)                                                                                           \
    case N:                                                                                                  \
        if (N < GEMM_NB) gm_tile(yb, ldy, w, ldw, xb, ldx, kc, bf16, accumulate, pf, mr, N);                 \
        break;
        GM_REST(1)
        GM_REST(2)
        GM_REST(3)
        GM_REST(4)
        GM_REST(5)
#undef GM_REST
    default:
        break;
    }
}

KF_ALWAYS_INLINE void gm_panel(float *y, size_t ldy, const void *w, size_t ldw, const float *x, size_t ldx,
                               int rows, int batch, int kc, int accumulate, int bf16) {
    const size_t es = bf16 ? 2 : 4;
    int r = 0;
    for (; r + GEMM_MR <= rows; r += GEMM_MR)
        gm_row_tile(y + r, ldy, (const char *)w + (size_t)r * ldw * es, ldw, x, ldx, batch, kc, bf16,
                    accumulate, GEMM_MR);
    for (; r < rows; r++)
        gm_row_tile(y + r, ldy, (const char *)w + (size_t)r * ldw * es, ldw, x, ldx, batch, kc, bf16,
                    accumulate, 1);
}

static void KFN(gemm_panel_bf16)(float *y, size_t ldy, const uint16_t *w, size_t ldw, const float *x,
                                 size_t ldx, int rows, int batch, int kc, int accumulate) {
    gm_panel(y, ldy, w, ldw, x, ldx, rows, batch, kc, accumulate, 1);
}

static void KFN(gemm_panel_f32)(float *y, size_t ldy, const float *w, size_t ldw, const float *x, size_t ldx,
                                int rows, int batch, int kc, int accumulate) {
    gm_panel(y, ldy, w, ldw, x, ldx, rows, batch, kc, accumulate, 0);
}

const struct gemm_ops KFN(gemm_ops) = {
    .mr = GEMM_MR,
    .nb = GEMM_NB,
    .panel_bf16 = KFN(gemm_panel_bf16),
    .panel_f32 = KFN(gemm_panel_f32),
};
