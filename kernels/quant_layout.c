/* The in-memory layout of block matrices (kernels/quant.h): Q4_0's row groups, packed from and unpacked to
 * the file's row order, and the block reader the row readers go through (quant_matrix_dequantize, quant.c).
 * Checked in tests/test_quant_layout.c (pack then unpack gives back the bytes; every block read back from a
 * packed matrix, tails and one-group matrices included). */
#include <pthread.h>
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

/* Where row j's (of its group) bytes of block column k go: its scale, and its 16 code bytes 4 at a time. */
static size_t col_scale(int k, int j) {
    return (size_t)k * QUANT_Q4_0_GROUP_BYTES + 2 * (size_t)j;
}
static size_t col_codes(int k, int j, int quad) {
    return (size_t)k * QUANT_Q4_0_GROUP_BYTES + 2 * QUANT_Q4_0_GROUP + (size_t)quad * 4 * QUANT_Q4_0_GROUP +
           4 * (size_t)j;
}

/* dst (a group in memory order) from src (the same group's 8 rows in file order), or back. */
static void group_convert(unsigned char *dst, const unsigned char *src, int nb, int unpack) {
    for (int j = 0; j < QUANT_Q4_0_GROUP; j++)
        for (int k = 0; k < nb; k++) {
            size_t row_at = ((size_t)j * (size_t)nb + (size_t)k) * sizeof(struct quant_block_q4_0);
            if (unpack) {
                memcpy(dst + row_at, src + col_scale(k, j), 2);
                for (int q = 0; q < 4; q++) memcpy(dst + row_at + 2 + 4 * q, src + col_codes(k, j, q), 4);
            } else {
                memcpy(dst + col_scale(k, j), src + row_at, 2);
                for (int q = 0; q < 4; q++) memcpy(dst + col_codes(k, j, q), src + row_at + 2 + 4 * q, 4);
            }
        }
}

static void matrix_convert(void *m, enum fr_dtype t, int rows, int cols, int unpack) {
    const int groups = quant_grouped_rows(t, rows) / QUANT_Q4_0_GROUP, nb = cols / QUANT_BLOCK;
    const size_t group_bytes = (size_t)QUANT_Q4_0_GROUP_BYTES * (size_t)nb;
    if (groups == 0) return;
    pthread_mutex_lock(&group_lock);
    for (int g = 0; g < groups; g++) {
        unsigned char *at = (unsigned char *)m + (size_t)g * group_bytes;
        memcpy(group_scratch, at, group_bytes);
        group_convert(at, group_scratch, nb, unpack);
    }
    pthread_mutex_unlock(&group_lock);
}

void quant_matrix_pack(void *m, enum fr_dtype t, int rows, int cols) {
    matrix_convert(m, t, rows, cols, 0);
}

void quant_matrix_unpack(void *m, enum fr_dtype t, int rows, int cols) {
    matrix_convert(m, t, rows, cols, 1);
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
    const unsigned char *g =
        (const unsigned char *)m + (size_t)(r / QUANT_Q4_0_GROUP) * QUANT_Q4_0_GROUP_BYTES * (size_t)nb;
    unsigned char *out = blk;
    const int j = r % QUANT_Q4_0_GROUP;
    memcpy(out, g + col_scale(k, j), 2);
    for (int q = 0; q < 4; q++) memcpy(out + 2 + 4 * q, g + col_codes(k, j, q), 4);
}
