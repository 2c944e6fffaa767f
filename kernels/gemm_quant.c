/* The batch's GEMM over Q8_0 / Q4_0 weights (kernels/gemm.h with a block weight type): each tile of at most
 * GEMM_QUANT_TILE_ROWS rows and GEMM_QUANT_TILE_COLS columns is dequantised into the thread's f32 buffer,
 * then multiplied by the active ISA's f32 panel loop (gemm_ops.h) against every batch row, in passes of
 * GEMM_SUB_BATCH rows; the weights are
 * read once for the whole batch, and x stays f32 (unlike the matvec, which quantises it). Checked against
 * gemm_ref (the dequantised weights' product in double) on odd shapes in tests/test_quant_gemm.c. */
#include "kernels/gemm_ops.h"
#include "kernels/quant.h"

#define GEMM_QUANT_TILE_ROWS 16
#define GEMM_QUANT_TILE_COLS 1024

/* 64 KiB a thread: the tile stays in L2 while the batch's rows pass over it */
static _Thread_local float quant_tile[GEMM_QUANT_TILE_ROWS * GEMM_QUANT_TILE_COLS];

void gemm_quant_panel(const struct gemm_ops *ops, float *y, size_t ldy, const void *w, enum fr_dtype t,
                      int ldw, int c0, const float *x, size_t ldx, int rows, int batch, int kc,
                      int accumulate) {
    for (int k0 = 0; k0 < kc; k0 += GEMM_QUANT_TILE_COLS) {
        int kn = kc - k0 < GEMM_QUANT_TILE_COLS ? kc - k0 : GEMM_QUANT_TILE_COLS;
        for (int r0 = 0; r0 < rows; r0 += GEMM_QUANT_TILE_ROWS) {
            int rn = rows - r0 < GEMM_QUANT_TILE_ROWS ? rows - r0 : GEMM_QUANT_TILE_ROWS;
            for (int r = 0; r < rn; r++)
                quant_matrix_dequantize(quant_tile + (size_t)r * (size_t)kn, t, w, rows, ldw, r0 + r, c0 + k0,
                                        kn);
            for (int b0 = 0; b0 < batch; b0 += GEMM_SUB_BATCH)
                ops->panel_f32(
                    y + (size_t)b0 * ldy + r0, ldy, quant_tile, (size_t)kn, x + (size_t)b0 * ldx + k0, ldx,
                    rn, batch - b0 < GEMM_SUB_BATCH ? batch - b0 : GEMM_SUB_BATCH, kn, accumulate || k0 > 0);
        }
    }
}
