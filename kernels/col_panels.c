/* col_panel_width: the panel layout's one decision (see col_panels.h). */
#include "kernels/col_panels.h"

int col_panel_width(int cols) {
    if (cols <= COL_PANEL_MAX_COLS) return cols;
    int n = (cols + COL_PANEL_MAX_COLS - 1) / COL_PANEL_MAX_COLS;
    int w = (cols + n - 1) / n;
    return (w + COL_PANEL_ALIGN_COLS - 1) / COL_PANEL_ALIGN_COLS * COL_PANEL_ALIGN_COLS;
}
