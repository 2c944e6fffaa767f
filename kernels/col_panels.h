/* Layer: kernels/ (bottom of the include graph).
 * Column panels: the stored layout of wide weight matrices. A matrix W[rows][cols] stored with panel width pw
 * is cut into col_panel_count(cols, pw) panels of pw columns (the last one may be narrower); panel p holds
 * columns [p * pw, p * pw + its width) of every row as a row-major [rows][width] block, and the panels follow
 * each other. pw >= cols is plain row-major: one panel.
 * Why: a matvec streams each panel as one contiguous run while its slice of x (4 bytes a column) stays in
 * L1. Rows of 3072 to 9728 columns read whole lose to x's loads from L2. Alternated with the read in one
 * process (Zen 5 VM, two threads, 2048-column panels summed in turn, medians of 9-11), row-major against
 * panels: 1024 x 3072 0.82 -> 0.94 (AVX2) and 0.90 -> 0.96 (AVX-512) of the read, 2560 x 4096 0.86 -> 0.93
 * and 0.89 -> 0.91, 2048 x 6144 0.76 -> 0.92 and 0.76 -> 0.95, 2560 x 9728 0.73 -> 0.88 and 0.70 -> 0.92;
 * one thread 2048 x 6144 0.79 -> 0.95 and 0.75 -> 0.99. Rows of 2048 columns or fewer gained nothing. */
#ifndef FR_COL_PANELS_H
#define FR_COL_PANELS_H

#include <stddef.h>

/* The layers' projection matrices wider than this many columns are stored as panels. */
#define COL_PANEL_MAX_COLS 2048
/* Panel widths are whole multiples of this many columns (128 bytes of bf16: every panel's rows start on
 * the same 64-byte phase as the matrix's). */
#define COL_PANEL_ALIGN_COLS 64

/* The panel width a layer matrix of `cols` columns is stored with: cols itself up to COL_PANEL_MAX_COLS,
 * else the fewest panels of at most that width, as equal as COL_PANEL_ALIGN_COLS allows. */
int col_panel_width(int cols);

/* Panels of a matrix of cols columns at width pw (>= 1). */
static inline int col_panel_count(int cols, int pw) {
    return cols <= pw ? 1 : (cols + pw - 1) / pw;
}

/* Columns of panel p. */
static inline int col_panel_cols(int cols, int pw, int p) {
    int left = cols - p * pw;
    return left < pw ? left : pw;
}

/* Element offset of panel p's first weight in a matrix of `rows` rows. */
static inline size_t col_panel_start(int rows, int pw, int p) {
    return (size_t)rows * (size_t)pw * (size_t)p;
}

/* Element offset of W[r][c] in the stored layout. */
static inline size_t col_panel_index(int rows, int cols, int pw, int r, int c) {
    int p = c / pw;
    return col_panel_start(rows, pw, p) + (size_t)r * (size_t)col_panel_cols(cols, pw, p) +
           (size_t)(c - p * pw);
}

#endif
