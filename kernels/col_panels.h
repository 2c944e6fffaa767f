/* Layer: kernels/ (bottom of the include graph).
 * Column panels: the stored layout of wide weight matrices. A matrix W[rows][cols] stored with panel width pw
 * is cut into col_panel_count(cols, pw) panels of pw columns (the last one may be narrower); panel p holds
 * columns [p * pw, p * pw + its width) of every row as a row-major [rows][width] block, and the panels follow
 * each other. pw >= cols is plain row-major: one panel.
 * Why: a matvec streams each panel as one contiguous run while its slice of x (4 bytes a column of f32) stays
 * in L1. Rows of 3072 to 9728 columns read whole lose to x's loads from L2. Alternated with the read in one
 * process (Zen 5 VM, two threads, 2048-column panels summed in turn, medians of 9-11), row-major against
 * panels: 1024 x 3072 0.82 -> 0.94 (AVX2) and 0.90 -> 0.96 (AVX-512) of the read, 2560 x 4096 0.86 -> 0.93
 * and 0.89 -> 0.91, 2048 x 6144 0.76 -> 0.92 and 0.76 -> 0.95, 2560 x 9728 0.73 -> 0.88 and 0.70 -> 0.92;
 * one thread 2048 x 6144 0.79 -> 0.95 and 0.75 -> 0.99. Rows of 2048 columns or fewer gained nothing. */
#ifndef FR_COL_PANELS_H
#define FR_COL_PANELS_H

#include <stddef.h>

#include "kernels/dtype.h"

/* The layers' projection matrices are stored as panels where a whole row's slice of x would pass this many
 * bytes: 2048 columns of f32 x (bf16 and f32 weights); 6553 of a block format's x (its int8 codes with one
 * f32 scale and one int32 sum a block of 32: 1.25 bytes a column), so that Qwen3-0.6B's Q4_0 and Q8_0
 * down_proj (3072 columns) is one panel: read so it took 0.944x the time of two panels (Q4_0, AVX-512;
 * docs/tuning/quant-matvec.md, "Kept: block formats' panels by x's bytes"). */
#define COL_PANEL_X_BYTES 8192
/* Panel widths are whole multiples of this many columns (128 bytes of bf16: every panel's rows start on
 * the same 64-byte phase as the matrix's; whole blocks of a block format). */
#define COL_PANEL_ALIGN_COLS 64

/* The widest panel whose slice of x for weights of type t stays within COL_PANEL_X_BYTES. */
int col_panel_max_cols(enum fr_dtype t);
/* The panel width a layer matrix of type t and `cols` columns is stored with: cols itself up to
 * col_panel_max_cols(t), else the fewest panels of at most that width, as equal as COL_PANEL_ALIGN_COLS
 * allows. */
int col_panel_width(enum fr_dtype t, int cols);

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
