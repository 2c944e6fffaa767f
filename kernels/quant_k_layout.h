/* Layer: kernels/ (bottom of the include graph).
 * The memory order of K-quant matrices (kernels/quant_k_blocks.h, quant_group_*): rows in groups of 8 for
 * the matvec, and each row back in the file's order for every other reader. Below kernels/quant_k.h, which
 * reads matrices through it. */
#ifndef FR_QUANT_K_LAYOUT_H
#define FR_QUANT_K_LAYOUT_H

#include "kernels/quant_k_blocks.h"

/* The memory order of a [rows][cols] matrix of format t (kernels/quant_k_blocks.h): rows in groups of
 * QUANT_K_GROUP_ROWS but the last rows % 8 (and all of Q5_K's, which stay in file order). */
int quant_k_grouped_rows(enum quant_k_type t, int rows);
/* A whole matrix (cols at most QUANT_ACT_MAX_COLS) from file order to memory order, in place, and back;
 * not while another thread reads it. */
void quant_k_matrix_pack(void *m, enum quant_k_type t, int rows, int cols);
void quant_k_matrix_unpack(void *m, enum quant_k_type t, int rows, int cols);
/* Row r of a matrix in memory order, in file order (cols / 256 superblocks into dst). */
void quant_k_matrix_row(void *dst, enum quant_k_type t, const void *m, int rows, int cols, int r);

#endif
