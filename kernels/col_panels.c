/* col_panel_width: the panel layout's one decision (see col_panels.h). */
#include "kernels/col_panels.h"

/* Bytes of x that 32 columns of a matvec over weights of type t read: f32 x, or a block format's 32 int8
 * codes, its f32 scale and its int32 sum (kernels/quant.h's quant_act). */
static int x_bytes_per_block(enum fr_dtype t) {
    return fr_dtype_is_block(t) ? 32 + 4 + 4 : 32 * 4;
}

int col_panel_max_cols(enum fr_dtype t) {
    return COL_PANEL_X_BYTES * 32 / x_bytes_per_block(t);
}

int col_panel_width(enum fr_dtype t, int cols) {
    const int most = col_panel_max_cols(t);
    if (cols <= most) return cols;
    int n = (cols + most - 1) / most;
    int w = (cols + n - 1) / n;
    return (w + COL_PANEL_ALIGN_COLS - 1) / COL_PANEL_ALIGN_COLS * COL_PANEL_ALIGN_COLS;
}
