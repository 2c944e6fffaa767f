/* The column-panel layout (kernels/col_panels.h): the widths the layers' matrices get, and that the stored
 * index of W[r][c] is a one-to-one map of the matrix onto its storage, panel by panel. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "kernels/col_panels.h"

Test(col_panels, widths_of_the_models_matrices) {
    /* row-major up to COL_PANEL_MAX_COLS */
    cr_expect_eq(col_panel_width(64), 64);
    cr_expect_eq(col_panel_width(1024), 1024);
    cr_expect_eq(col_panel_width(2048), 2048);
    /* the fewest panels of at most 2048, equal to a multiple of 64 */
    cr_expect_eq(col_panel_width(2049), 1088); /* 1088 + 961 */
    cr_expect_eq(col_panel_width(2560), 1280); /* Qwen3-4B qkv, gate_up: 2 x 1280 */
    cr_expect_eq(col_panel_width(3072), 1536); /* Qwen3-0.6B down_proj: 2 x 1536 */
    cr_expect_eq(col_panel_width(4096), 2048); /* Qwen3-4B o_proj */
    cr_expect_eq(col_panel_width(6144), 2048); /* Qwen3-1.7B down_proj: 3 x 2048 */
    cr_expect_eq(col_panel_width(9728), 1984); /* Qwen3-4B down_proj: 4 x 1984 + 1792 */
    cr_expect_eq(col_panel_count(9728, 1984), 5);
    cr_expect_eq(col_panel_cols(9728, 1984, 4), 1792);
    for (int cols = 2049; cols <= 20000; cols += 97) {
        int pw = col_panel_width(cols), n = col_panel_count(cols, pw);
        cr_expect(pw <= COL_PANEL_MAX_COLS && pw % COL_PANEL_ALIGN_COLS == 0, "cols %d: width %d", cols, pw);
        cr_expect_eq(n, (cols + COL_PANEL_MAX_COLS - 1) / COL_PANEL_MAX_COLS, "cols %d: %d panels", cols, n);
        cr_expect(col_panel_cols(cols, pw, n - 1) >= 1, "cols %d: an empty last panel", cols);
    }
}

/* Every element lands once, inside the matrix, and each panel's rows are contiguous runs of its width. */
static void check_layout(int rows, int cols, int pw) {
    size_t n = (size_t)rows * (size_t)cols;
    unsigned char *hit = calloc(n, 1);
    cr_assert_not_null(hit);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            size_t i = col_panel_index(rows, cols, pw, r, c);
            cr_assert_lt(i, n, "%dx%d in panels of %d: W[%d][%d] at %zu", rows, cols, pw, r, c, i);
            cr_expect_eq(hit[i], 0, "%dx%d in panels of %d: W[%d][%d] lands on a used slot", rows, cols, pw,
                         r, c);
            hit[i] = 1;
            int p = c / pw;
            cr_expect_eq(i, col_panel_start(rows, pw, p) + (size_t)r * (size_t)col_panel_cols(cols, pw, p) +
                                (size_t)(c - p * pw));
        }
    free(hit);
}

Test(col_panels, index_is_one_to_one) {
    check_layout(7, 33, 33);  /* row-major */
    check_layout(7, 33, 100); /* wider than the matrix: row-major */
    check_layout(5, 129, 64); /* 64 + 64 + 1 */
    check_layout(3, 3072, col_panel_width(3072));
    check_layout(2, 9728, col_panel_width(9728));
    /* row-major is the plain index */
    cr_expect_eq(col_panel_index(7, 33, 33, 4, 5), (size_t)4 * 33 + 5);
}
