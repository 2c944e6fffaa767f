/* gemm_ops: the per-ISA inner loop of gemm (kernels/gemm.h). kernels/gemm.c owns dispatch, blocking and
 * OpenMP; each entry is a single-threaded loop over the panel it is given. The AVX2 and AVX-512 entries are
 * kernels/gemm_body.h compiled in kernels_avx2.c and kernels_avx512.c over their vector primitives. Internal
 * to kernels/ and its tests. */
#ifndef FR_GEMM_OPS_H
#define FR_GEMM_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/dtype.h"

struct gemm_ops {
    int mr, nb; /* register tile: weight rows x batch rows per inner loop */
    /* Panel of `rows` weight rows (row stride ldw elements) by `batch` X rows (stride ldx) over kc columns:
     * y[b * ldy + r] = (accumulate ? y[b * ldy + r] : 0) + sum_{k < kc} w[r * ldw + k] * x[b * ldx + k]. */
    void (*panel_bf16)(float *y, size_t ldy, const uint16_t *w, size_t ldw, const float *x, size_t ldx,
                       int rows, int batch, int kc, int accumulate);
    void (*panel_f32)(float *y, size_t ldy, const float *w, size_t ldw, const float *x, size_t ldx, int rows,
                      int batch, int kc, int accumulate);
};

extern const struct gemm_ops gemm_ops_avx2;

/* Batch rows one pass over a chunk's panels takes at most (kernels/gemm.c): a prompt's hundreds of rows go
 * through a chunk in passes of this many, so that the column blocks can stay long (the L2 holds one pass's X
 * rows over the block, gemm_plan_kc) and each register tile sums many columns before its horizontal sums;
 * the chunk's weights, read from memory by the first pass, come from L2 in the others (a block format's
 * tile, dequantised once, from its thread's buffer). 64 is the batch sweep's largest B, which thus runs as
 * one pass. */
#define GEMM_SUB_BATCH 64

/* ops->panel_f32 over columns [c0, c0 + kc) of `rows` rows of a panel of Q8_0 / Q4_0 weights (gemm_quant.c):
 * w at the rows' first one, column 0, in memory order (kernels/quant.h: on a row group, and rows %
 * QUANT_GROUP_ROWS rows are the panel's last), ldw weights a row, c0 and kc multiples of 32; x at column c0;
 * dequantised a tile at a time, each tile then taken by the batch in passes of GEMM_SUB_BATCH rows. */
void gemm_quant_panel(const struct gemm_ops *ops, float *y, size_t ldy, const void *w, enum fr_dtype t,
                      int ldw, int c0, const float *x, size_t ldx, int rows, int batch, int kc,
                      int accumulate);
extern const struct gemm_ops gemm_ops_avx512;

#endif
