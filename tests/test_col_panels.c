/* The column-panel layout (kernels/col_panels.h): the widths the layers' matrices get, and that the stored
 * index of W[r][c] is a one-to-one map of the matrix onto its storage, panel by panel. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "kernels/col_panels.h"

Test(col_panels, widths_of_the_models_matrices) {
    /* row-major up to 2048 columns of f32 x */
    cr_expect_eq(col_panel_width(FR_DTYPE_BF16, 64), 64);
    cr_expect_eq(col_panel_width(FR_DTYPE_BF16, 1024), 1024);
    cr_expect_eq(col_panel_width(FR_DTYPE_BF16, 2048), 2048);
    /* the fewest panels of at most 2048, equal to a multiple of 64 */
    cr_expect_eq(col_panel_width(FR_DTYPE_BF16, 2049), 1088); /* 1088 + 961 */
    cr_expect_eq(col_panel_width(FR_DTYPE_BF16, 2560), 1280); /* Qwen3-4B qkv, gate_up: 2 x 1280 */
    cr_expect_eq(col_panel_width(FR_DTYPE_BF16, 3072), 1536); /* Qwen3-0.6B down_proj: 2 x 1536 */
    cr_expect_eq(col_panel_width(FR_DTYPE_BF16, 4096), 2048); /* Qwen3-4B o_proj */
    cr_expect_eq(col_panel_width(FR_DTYPE_BF16, 6144), 2048); /* Qwen3-1.7B down_proj: 3 x 2048 */
    cr_expect_eq(col_panel_width(FR_DTYPE_BF16, 9728), 1984); /* Qwen3-4B down_proj: 4 x 1984 + 1792 */
    cr_expect_eq(col_panel_count(9728, 1984), 5);
    cr_expect_eq(col_panel_cols(9728, 1984, 4), 1792);
    for (int cols = 2049; cols <= 20000; cols += 97) {
        int pw = col_panel_width(FR_DTYPE_BF16, cols), n = col_panel_count(cols, pw);
        cr_expect(pw <= 2048 && pw % COL_PANEL_ALIGN_COLS == 0, "cols %d: width %d", cols, pw);
        cr_expect_eq(n, (cols + 2047) / 2048, "cols %d: %d panels", cols, n);
        cr_expect(col_panel_cols(cols, pw, n - 1) >= 1, "cols %d: an empty last panel", cols);
    }
}

/* A block format's x is 1.25 bytes a column (int8 codes, an f32 scale and an int32 sum a block of 32), so
 * its panels are up to 6553 columns wide: every matrix of Qwen3-0.6B and -1.7B is one panel, Qwen3-4B's and
 * -8B's down_proj two. f32 weights panel as bf16's (the same f32 x). */
Test(col_panels, widths_of_block_formats) {
    cr_expect_eq(col_panel_max_cols(FR_DTYPE_BF16), 2048);
    cr_expect_eq(col_panel_max_cols(FR_DTYPE_F32), 2048);
    cr_expect_eq(col_panel_max_cols(FR_DTYPE_Q8_0), 6553); /* 8192 bytes / 1.25 */
    cr_expect_eq(col_panel_max_cols(FR_DTYPE_Q4_0), 6553);
    cr_expect_eq(col_panel_width(FR_DTYPE_F32, 3072), 1536);
    cr_expect_eq(col_panel_width(FR_DTYPE_Q4_0, 3072), 3072);  /* Qwen3-0.6B down_proj: one panel */
    cr_expect_eq(col_panel_width(FR_DTYPE_Q8_0, 6144), 6144);  /* Qwen3-1.7B down_proj */
    cr_expect_eq(col_panel_width(FR_DTYPE_Q4_0, 9728), 4864);  /* Qwen3-4B down_proj: 2 x 4864 */
    cr_expect_eq(col_panel_width(FR_DTYPE_Q8_0, 12288), 6144); /* Qwen3-8B down_proj: 2 x 6144 */
    for (int cols = 6560; cols <= 40000; cols += 32 * 7) {
        int pw = col_panel_width(FR_DTYPE_Q4_0, cols), n = col_panel_count(cols, pw);
        cr_expect(pw % 32 == 0, "cols %d: width %d is not whole blocks", cols, pw);
        cr_expect_eq(n, (cols + 6552) / 6553, "cols %d: %d panels", cols, n);
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
    check_layout(3, 3072, col_panel_width(FR_DTYPE_BF16, 3072));
    check_layout(2, 9728, col_panel_width(FR_DTYPE_BF16, 9728));
    /* row-major is the plain index */
    cr_expect_eq(col_panel_index(7, 33, 33, 4, 5), (size_t)4 * 33 + 5);
}
