/* The K-quant matrices (Q4_K, Q5_K, Q6_K: kernels/quant_k.h) under matvec and gemm (kernels.h, gemm.h):
 * rows row-major in file order, x quantised to Q8_K by each thread for itself, row chunks work-shared over
 * the current team as the other formats' are. The GEMM runs the matvec's dot product for every column of a
 * row while the row is in L1, so the weights stream once a call, whatever the batch. */
#ifndef FR_MATVEC_KQUANT_H
#define FR_MATVEC_KQUANT_H

#include "kernels/dtype.h"
#include "kernels/quant_k.h"

/* The kernels' K-quant type of t (a K-quant dtype). */
enum quant_k_type matvec_kquant_type(enum fr_dtype t);
/* 0 when a K-quant matrix can have `cols` columns (a multiple of 256, at most QUANT_ACT_MAX_COLS), else -1
 * with *why. */
int matvec_kquant_check_cols(enum fr_dtype t, int cols, const char **why);
/* y[b * ldy + r] = row r of w . x[b * ldx ..] for b < batch, on the current team (a kernel team's, else
 * the OpenMP team; a team of one outside any region). Ends with the team's barrier. */
void matvec_kquant_team(float *y, int ldy, const void *w, enum fr_dtype t, const float *x, int ldx, int batch,
                        int rows, int cols);
/* The same opening a region of `threads` when the matrix is worth it and no team is running. */
void matvec_kquant(float *y, int ldy, const void *w, enum fr_dtype t, const float *x, int ldx, int batch,
                   int rows, int cols, int threads);
/* The reference: each row dequantised, x in f32, summed in double (no Q8_K rounding). */
void matvec_kquant_ref(float *y, int ldy, const void *w, enum fr_dtype t, const float *x, int ldx, int batch,
                       int rows, int cols);

#endif
