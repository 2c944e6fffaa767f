/* The in-memory layout of block matrices (kernels/quant.h): their row groups, packed from and unpacked to
 * the file's row order, and the block reader the row readers go through (quant_matrix_dequantize, quant.c).
 * Checked in tests/test_quant_layout.c (pack then unpack gives back the bytes; every block read back from a
 * packed matrix, tails and one-group matrices included). */
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/quant.h"
#include "kernels/row_groups.h"

_Static_assert(ROW_GROUPS_MAX_BYTES >=
                   QUANT_GROUP_ROWS * (QUANT_ACT_MAX_COLS / QUANT_BLOCK) * sizeof(struct quant_block_q8_0),
               "a group of the widest block rows fits the scratch");

int quant_grouped_rows(enum fr_dtype t, int rows) {
    return fr_dtype_is_block(t) && rows > 0 ? rows - rows % QUANT_GROUP_ROWS : 0;
}

/* Offsets in a group of blocks of bb bytes, block column k, row j of the group: its scale, and its code
 * bytes 4 at a time (quad q). */
static size_t col_scale(size_t bb, int k, int j) {
    return (size_t)k * QUANT_GROUP_ROWS * bb + 2 * (size_t)j;
}
static size_t col_codes(size_t bb, int k, int j, int quad) {
    return (size_t)k * QUANT_GROUP_ROWS * bb + 2 * QUANT_GROUP_ROWS + (size_t)quad * 4 * QUANT_GROUP_ROWS +
           4 * (size_t)j;
}

/* Row j's block k of the group at g, into blk in file order (scale, then the code bytes); and back. */
static void group_block_get(unsigned char *blk, size_t bb, const unsigned char *g, int k, int j) {
    memcpy(blk, g + col_scale(bb, k, j), 2);
    for (int q = 0; q < (int)(bb - 2) / 4; q++) memcpy(blk + 2 + 4 * q, g + col_codes(bb, k, j, q), 4);
}
static void group_block_put(unsigned char *g, size_t bb, const unsigned char *blk, int k, int j) {
    memcpy(g + col_scale(bb, k, j), blk, 2);
    for (int q = 0; q < (int)(bb - 2) / 4; q++) memcpy(g + col_codes(bb, k, j, q), blk + 2 + 4 * q, 4);
}

static void block_put(unsigned char *g, const unsigned char *blk, int k, int j, const void *bb) {
    group_block_put(g, *(const size_t *)bb, blk, k, j);
}
static void block_get(unsigned char *blk, const unsigned char *g, int k, int j, const void *bb) {
    group_block_get(blk, *(const size_t *)bb, g, k, j);
}

static void matrix_convert(void *m, enum fr_dtype t, int rows, int cols, int pack) {
    const size_t bb = fr_dtype_bytes(t, QUANT_BLOCK);
    const struct row_groups g = {quant_grouped_rows(t, rows) / QUANT_GROUP_ROWS,
                                 QUANT_GROUP_ROWS,
                                 cols / QUANT_BLOCK,
                                 bb,
                                 block_put,
                                 block_get,
                                 &bb};
    row_groups_convert(m, &g, pack);
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
    group_block_get(blk, bytes,
                    (const unsigned char *)m +
                        (size_t)(r / QUANT_GROUP_ROWS) * QUANT_GROUP_ROWS * bytes * (size_t)nb,
                    k, r % QUANT_GROUP_ROWS);
}
