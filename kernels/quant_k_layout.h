/* Layer: kernels/ (bottom of the include graph).
 * The memory order of K-quant matrices (kernels/quant_k_blocks.h, quant_group_*): rows in groups of 8 for
 * the matvec, and each row back in the file's order for every other reader. Below kernels/quant_k.h, which
 * reads matrices through it. */
#ifndef FR_QUANT_K_LAYOUT_H
#define FR_QUANT_K_LAYOUT_H

#include <stddef.h>

#include "kernels/quant_k_blocks.h"

/* Where weight e (0..255) of row r lies in a group superblock, and its bits' shift there:
 * - Q4_K's code (and Q6_K's low 4 bits): vectors of 4 weights of each row, 0-127 in the low nibbles,
 *   128-255 in the high ones (qs, or codes[][0..1] as Q6_K's quant_group_q6_k_ql_at places them);
 * - Q6_K: its low 4 bits in vector 0 or 1 of step (e % 64) / 4, its high 2 in vector 2, bit pair e / 64;
 *   row r's scale s at byte quant_group_q6_k_scale_at(s, r) of scales[s / 4]. */
static inline size_t quant_group_nibble_at(int e, int r, int *shift) {
    *shift = e < 128 ? 0 : 4;
    const int w = e % 128;
    return 32 * (size_t)(w / 4) + 4 * (size_t)r + (size_t)(w % 4);
}
static inline size_t quant_group_q6_k_ql_at(int e, int r, int *shift) {
    const int w = e % 128;
    *shift = e < 128 ? 0 : 4;
    return 96 * (size_t)(w % 64 / 4) + 32 * (size_t)(w / 64) + 4 * (size_t)r + (size_t)(w % 4);
}
static inline size_t quant_group_q6_k_qh_at(int e, int r, int *shift) {
    const int w = e % 64;
    *shift = 2 * (e / 64);
    return 96 * (size_t)(w / 4) + 64 + 4 * (size_t)r + (size_t)(w % 4);
}
static inline size_t quant_group_q6_k_scale_at(int s, int r) {
    static const int slot[4] = {0, 2, 1, 3}; /* the order 0, 2, 1, 3 within the row's four */
    return 4 * (size_t)r + (size_t)slot[s % 4];
}

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
