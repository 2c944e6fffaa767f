/* The in-memory layout of block matrices (kernels/quant.h): Q4_0's row groups, packed from and unpacked to
 * the file's row order, and the block reader the row readers go through (quant_matrix_dequantize, quant.c).
 * Checked in tests/test_quant_layout.c (pack then unpack gives back the bytes; every block read back from a
 * packed matrix, tails and one-group matrices included). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/quant.h"

/* One group's bytes in file order while it is rewritten in place: the widest rows a block matrix may have
 * (quant_check_cols). Packing happens at load time, one matrix at a time, so one buffer and a lock do. */
static unsigned char
    group_scratch[QUANT_Q4_0_GROUP * (QUANT_ACT_MAX_COLS / QUANT_BLOCK) * sizeof(struct quant_block_q4_0)];
static pthread_mutex_t group_lock = PTHREAD_MUTEX_INITIALIZER;

int quant_grouped_rows(enum fr_dtype t, int rows) {
    return t == FR_DTYPE_Q4_0 && rows > 0 ? rows - rows % QUANT_Q4_0_GROUP : 0;
}

/* Offsets in a group, block column k, row j of the group: its scale, and its 16 code bytes 4 at a time. */
static size_t col_scale(int k, int j) {
    return (size_t)k * QUANT_Q4_0_GROUP_BYTES + 2 * (size_t)j;
}
static size_t col_codes(int k, int j, int quad) {
    return (size_t)k * QUANT_Q4_0_GROUP_BYTES + 2 * QUANT_Q4_0_GROUP + (size_t)quad * 4 * QUANT_Q4_0_GROUP +
           4 * (size_t)j;
}

/* Row j's block k of the group at g, into blk in file order (scale, then 16 code bytes); and back. */
static void group_block_get(unsigned char *blk, const unsigned char *g, int k, int j) {
    memcpy(blk, g + col_scale(k, j), 2);
    for (int q = 0; q < 4; q++) memcpy(blk + 2 + 4 * q, g + col_codes(k, j, q), 4);
}
static void group_block_put(unsigned char *g, const unsigned char *blk, int k, int j) {
    memcpy(g + col_scale(k, j), blk, 2);
    for (int q = 0; q < 4; q++) memcpy(g + col_codes(k, j, q), blk + 2 + 4 * q, 4);
}

static void matrix_convert(void *m, enum fr_dtype t, int rows, int cols, int pack) {
    const int groups = quant_grouped_rows(t, rows) / QUANT_Q4_0_GROUP, nb = cols / QUANT_BLOCK;
    const size_t group_bytes = (size_t)QUANT_Q4_0_GROUP_BYTES * (size_t)nb;
    if (groups == 0) return;
    if (group_bytes > sizeof group_scratch) { /* every caller checks cols first (quant_check_cols) */
        fprintf(stderr, "forge-roofline: internal error: a Q4_0 matrix of %d columns packed (at most %d)\n",
                cols, QUANT_ACT_MAX_COLS);
        abort();
    }
    pthread_mutex_lock(&group_lock);
    for (int g = 0; g < groups; g++) {
        unsigned char *at = (unsigned char *)m + (size_t)g * group_bytes;
        memcpy(group_scratch, at, group_bytes); /* the group in its present order */
        for (int j = 0; j < QUANT_Q4_0_GROUP; j++)
            for (int k = 0; k < nb; k++) {
                const size_t in_file = ((size_t)j * (size_t)nb + (size_t)k) * sizeof(struct quant_block_q4_0);
                if (pack)
                    group_block_put(at, group_scratch + in_file, k, j);
                else
                    group_block_get(at + in_file, group_scratch, k, j);
            }
    }
    pthread_mutex_unlock(&group_lock);
}

void quant_matrix_pack(void *m, enum fr_dtype t, int rows, int cols) {
    matrix_convert(m, t, rows, cols, 1);
}

void quant_matrix_unpack(void *m, enum fr_dtype t, int rows, int cols) {
    matrix_convert(m, t, rows, cols, 0);
}

void quant_panels_pack(void *m, enum fr_dtype t, int rows, int cols, int pw) {
    for (int p = 0; p < col_panel_count(cols, pw); p++)
        quant_matrix_pack((unsigned char *)m + fr_dtype_bytes(t, col_panel_start(rows, pw, p)), t, rows,
                          col_panel_cols(cols, pw, p));
}

void quant_matrix_block(void *blk, enum fr_dtype t, const void *m, int rows, int cols, int r, int k) {
    const int nb = cols / QUANT_BLOCK;
    const size_t bytes = fr_dtype_bytes(t, QUANT_BLOCK), at = (size_t)r * (size_t)nb + (size_t)k;
    if (r >= quant_grouped_rows(t, rows)) { /* file order */
        memcpy(blk, (const unsigned char *)m + at * bytes, bytes);
        return;
    }
    group_block_get(
        blk, (const unsigned char *)m + (size_t)(r / QUANT_Q4_0_GROUP) * QUANT_Q4_0_GROUP_BYTES * (size_t)nb,
        k, r % QUANT_Q4_0_GROUP);
}
