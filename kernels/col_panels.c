/* col_panel_width: the panel layout's one decision (see col_panels.h). */
#include "kernels/col_panels.h"

#include "kernels/quant.h"

/* Bytes of x that QUANT_BLOCK columns of a matvec over weights of type t read: f32 x, or a block format's
 * quantised x as kernels/quant.h's quant_act holds it (a code a column, a scale and a sum a block), so the
 * two stay one definition. */
static int x_bytes_per_block(enum fr_dtype t) {
    const struct quant_act a = {0};
    return fr_dtype_is_block(t) ? (int)(QUANT_BLOCK * sizeof *a.qs + sizeof *a.d + sizeof *a.c4)
                                : (int)(QUANT_BLOCK * sizeof(float));
}

int col_panel_max_cols(enum fr_dtype t) {
    return COL_PANEL_X_BYTES * QUANT_BLOCK / x_bytes_per_block(t);
}

int col_panel_width(enum fr_dtype t, int cols) {
    if (fr_dtype_is_kquant(t)) return cols; /* row-major: a superblock's scales cover 256 columns */
    const int most = col_panel_max_cols(t);
    if (cols <= most) return cols;
    int n = (cols + most - 1) / most;
    int w = (cols + n - 1) / n;
    return (w + COL_PANEL_ALIGN_COLS - 1) / COL_PANEL_ALIGN_COLS * COL_PANEL_ALIGN_COLS;
}
