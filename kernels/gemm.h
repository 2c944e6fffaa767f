/* Layer: kernels/ (bottom of the include graph).
 * gemm: the batch's matvecs in one pass over the weights. Y[b][r] = sum_c W[r][c] X[b][c] for b < batch:
 * W [rows][cols] (row-major or as column panels) in bf16 or f32, X [batch][ldx] and Y [batch][ldy] f32, f32
 * accumulation. With batch = 1 it is exactly matvec() (same code path); with batch > 1 every weight is read
 * once for all batch rows, so the work turns from memory-bound towards compute-bound as the batch grows.
 * Blocking: the column range is cut into blocks of kc so that one tile of weight rows and one tile of X rows
 * stay in L1 while the tile is consumed, and the batch's X rows of one block stay in L2 while every weight
 * row of the block passes; the cache sizes come from the caller (hwloc in roofline/topology.h), kernels never
 * ask. Threads: OpenMP over output rows, like matvec (same calling modes). Checked against gemm_ref on odd
 * shapes for every ISA in tests/test_kernels_gemm.c. */
#ifndef FR_GEMM_H
#define FR_GEMM_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/kernels.h"

/* Per-core cache sizes the blocking is planned for; 0 takes 32 KiB L1d and 512 KiB L2. */
struct gemm_blocking {
    size_t l1d_bytes;
    size_t l2_bytes;
};

/* Columns per block for this shape, weight type and blocking on the active ISA (exposed for the tests); a
 * matrix in column panels is planned with its panel width as cols. */
int gemm_block_cols(int batch, int cols, enum fr_dtype wtype, const struct gemm_blocking *blk);

/* Y = X W^T as above, W stored as column panels of panel_cols columns (kernels/col_panels.h; panel_cols >=
 * cols: row-major; < 1 refused); ldx >= cols, ldy >= rows. Backend MATVEC_BACKEND_OPENBLAS: cblas_sgemm for
 * f32 weights (batch > 1; batch 1 is its sgemv), bf16 refused (this needs cblas_sbgemm, which not every
 * OpenBLAS exports; Debian 12's 0.3.21 does not). The sgemm runs on the OpenMP team, not on OpenBLAS's own
 * pool: chunks of rows handed out dynamically, one single-threaded sgemm each (OpenBLAS set to one thread for
 * the call and restored after); called inside a parallel region, one thread makes one whole call. Returns -1
 * (and sets *why when non-NULL) when the backend cannot run it. Outside a parallel region it opens one of
 * `threads` threads (the run's), as matvec does. Backend MATVEC_BACKEND_ONEDNN: oneDNN's matmul
 * (kernels/gemm_onednn.h), bf16 and f32 weights at any batch, X rounded to bf16 for bf16 weights. */
int gemm(float *y, int ldy, const void *w, enum fr_dtype wtype, const float *x, int ldx, int batch, int rows,
         int cols, int panel_cols, const struct gemm_blocking *blk, enum matvec_backend backend, int threads,
         const char **why);
bool gemm_backend_available(enum matvec_backend backend, enum fr_dtype wtype, int batch, const char **why);
/* The plain reference: matvec_ref_panels for each batch row (double accumulation). */
void gemm_ref(float *y, int ldy, const void *w, enum fr_dtype wtype, const float *x, int ldx, int batch,
              int rows, int cols, int panel_cols);

#endif
