/* Layer: kernels/ (bottom of the include graph).
 * Rewriting a matrix's rows in place between the file's order and groups of rows (kernels/quant.h's block
 * matrices, kernels/quant_k_layout.h's K-quant ones): each group holds `rows` rows of nb blocks of
 * block_bytes, where those rows lie in the file; put writes block k of row j (file order) into the group,
 * get reads it back. */
#ifndef FR_ROW_GROUPS_H
#define FR_ROW_GROUPS_H

#include <stddef.h>

struct row_groups {
    int groups, rows, nb;
    size_t block_bytes;
    void (*put)(unsigned char *group, const unsigned char *blk, int k, int j, const void *ctx);
    void (*get)(unsigned char *blk, const unsigned char *group, int k, int j, const void *ctx);
    const void *ctx;
};

/* The largest group: 16 rows of 32768 Q8_0 weights (the widest rows a quantised matrix may have) */
#define ROW_GROUPS_MAX_BYTES ((size_t)16 * (32768 / 32) * 34)

/* m from file order into groups (pack 1), or back (0); not while another thread reads it. */
void row_groups_convert(void *m, const struct row_groups *g, int pack);

#endif
