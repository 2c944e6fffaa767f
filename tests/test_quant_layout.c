/* kernels/quant.h's memory order of block matrices: Q4_0's row groups. Packing then unpacking gives back
 * the file's bytes; every block and every row read from a packed matrix (groups, the rows after the last
 * group, one-group and group-less matrices, column panels) equals the file order's; the embedding lookup
 * reads its row from a packed table; a packed group holds what the layout says, checked on hand-placed
 * bytes. */
#include <criterion/criterion.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels_test_util.h"

static const int layout_rows[] = {1, 7, 15, 16, 17, 32, 37, 45};

Test(quant_layout, pack_unpack_and_every_block) {
    struct test_rng rng = {41};
    enum { C = 96 }; /* 3 blocks a row */
    for (int t = FR_DTYPE_Q8_0; t <= FR_DTYPE_Q4_0; t++)
        for (size_t i = 0; i < sizeof layout_rows / sizeof layout_rows[0]; i++) {
            const int R = layout_rows[i];
            const size_t bytes = fr_dtype_bytes((enum fr_dtype)t, (size_t)R * C);
            unsigned char *file = test_alloc(bytes), *mem = test_alloc(bytes);
            for (size_t b = 0; b < bytes; b++) file[b] = (unsigned char)test_rng_next(&rng);
            memcpy(mem, file, bytes);
            quant_matrix_pack(mem, (enum fr_dtype)t, R, C);
            const int grouped = quant_grouped_rows((enum fr_dtype)t, R);
            cr_expect_eq(grouped, R - R % 16, "%d rows", R);
            if (grouped) /* a group's bytes moved (the first row's second block is not where it was) */
                cr_expect_neq(memcmp(mem, file, bytes), 0, "%s %d rows packed", fr_dtype_name(t), R);
            const size_t bb = fr_dtype_bytes((enum fr_dtype)t, QUANT_BLOCK);
            for (int r = 0; r < R; r++)
                for (int k = 0; k < C / QUANT_BLOCK; k++) {
                    unsigned char blk[34];
                    quant_matrix_block(blk, (enum fr_dtype)t, mem, R, C, r, k);
                    cr_expect_eq(memcmp(blk, file + ((size_t)r * (C / QUANT_BLOCK) + (size_t)k) * bb, bb), 0,
                                 "%s %d rows: block %d of row %d", fr_dtype_name(t), R, k, r);
                }
            quant_matrix_unpack(mem, (enum fr_dtype)t, R, C);
            cr_expect_eq(memcmp(mem, file, bytes), 0, "%s %d rows: unpack(pack) is the file",
                         fr_dtype_name(t), R);
            free(file), free(mem);
        }
}

/* Row 17's block 1 of a 32-row, 64-column matrix, placed by hand: group 1, row 1 in it, block column 1.
 * Groups of 16 rows: a block column is 16 scales (32 bytes), then quads of 64 code bytes, four for Q4_0
 * (288 bytes a column), eight for Q8_0 (544). */
static void check_hand_placed(enum fr_dtype t, size_t column_bytes) {
    enum { R = 32, C = 64, NB = C / QUANT_BLOCK };
    const size_t bb = fr_dtype_bytes(t, QUANT_BLOCK), codes = bb - 2;
    unsigned char *file = test_alloc(bb * R * NB);
    memset(file, 0, bb * R * NB);
    unsigned char *b = file + (17 * NB + 1) * bb;
    b[0] = 0xcd, b[1] = 0xab;
    for (size_t i = 0; i < codes; i++) b[2 + i] = (unsigned char)(0x10 + i);
    quant_matrix_pack(file, t, R, C);
    const unsigned char *col = file + column_bytes * NB /* group 1 */ + column_bytes /* block column 1 */;
    cr_expect_eq(col[2] | col[3] << 8, 0xabcd, "%s: row 1's scale at bytes 2-3", fr_dtype_name(t));
    for (size_t q = 0; q < codes / 4; q++)
        for (size_t i = 0; i < 4; i++)
            cr_expect_eq(col[32 + 64 * q + 4 + i], 0x10 + 4 * q + i, "%s: quad %zu byte %zu of row 1",
                         fr_dtype_name(t), q, i);
    free(file);
}

Test(quant_layout, group_bytes_where_the_layout_says) {
    check_hand_placed(FR_DTYPE_Q4_0, 288);
    check_hand_placed(FR_DTYPE_Q8_0, 544);
}

Test(quant_layout, rows_and_embedding_from_packed_panels) {
    struct test_rng rng = {43};
    enum { R = 21, C = 192, PW = 64 };
    float wf[R * C], file_row[C], row[C];
    test_fill(&rng, wf, (size_t)R * C, -1.0f, 1.0f);
    for (int t = FR_DTYPE_Q8_0; t <= FR_DTYPE_Q4_0; t++) {
        unsigned char *w = test_alloc(fr_dtype_bytes((enum fr_dtype)t, (size_t)R * C));
        unsigned char *flat = test_alloc(fr_dtype_bytes((enum fr_dtype)t, (size_t)R * C));
        for (int p = 0; p < C / PW; p++)
            for (int r = 0; r < R; r++)
                quant_quantize_row(w + fr_dtype_bytes((enum fr_dtype)t, (size_t)R * PW * p + (size_t)r * PW),
                                   (enum fr_dtype)t, wf + (size_t)r * C + (size_t)p * PW, PW);
        quant_quantize_row(flat, (enum fr_dtype)t, wf, (size_t)R * C); /* one panel: the embedding's shape */
        quant_panels_pack(w, (enum fr_dtype)t, R, C, PW);
        for (int r = 0; r < R; r++) {
            quant_dequantize_row(
                file_row, (enum fr_dtype)t,
                (const unsigned char *)flat + fr_dtype_bytes((enum fr_dtype)t, (size_t)r * C), C);
            for (int p = 0; p < C / PW; p++) {
                const void *panel = w + fr_dtype_bytes((enum fr_dtype)t, (size_t)R * PW * p);
                quant_matrix_dequantize(row + p * PW, (enum fr_dtype)t, panel, R, PW, r, 0, PW);
            }
            cr_expect_eq(memcmp(row, file_row, sizeof row), 0, "%s row %d from packed panels",
                         fr_dtype_name(t), r);
        }
        float *file_rows = test_alloc(sizeof wf);
        quant_dequantize_row(file_rows, (enum fr_dtype)t, flat, (size_t)R * C); /* before packing */
        quant_matrix_pack(flat, (enum fr_dtype)t, R, C);
        FOR_EACH_ISA(isa) {
            for (int tok = 0; tok < R; tok += 4) {
                embed_gather(row, flat, (enum fr_dtype)t, R, tok, C);
                cr_expect_eq(memcmp(row, file_rows + (size_t)tok * C, sizeof row), 0, "%s embed token %d %s",
                             fr_dtype_name(t), tok, kernel_isa_name(isa));
            }
        }
        free(file_rows);
        free(w), free(flat);
    }
}
