/* K-quant matrices in memory order (kernels/quant_k_blocks.h, quant_k_group_*): rows in groups of 8, and
 * back to the file's order. Checked in tests/test_quant_k.c (pack then unpack gives back the bytes; every
 * row read back from a packed matrix, tails included). */
#include "kernels/quant_k_layout.h"

#include <string.h>

#include "kernels/quant.h"
#include "kernels/row_groups.h"

_Static_assert(ROW_GROUPS_MAX_BYTES >=
                   QUANT_K_GROUP_ROWS * (QUANT_ACT_MAX_COLS / QUANT_QK_K) * sizeof(struct quant_block_q6_k),
               "a group of the widest K-quant rows fits the scratch");

int quant_k_grouped_rows(enum quant_k_type t, int rows) {
    if (t == QUANT_K_Q5_K || rows <= 0) return 0;
    return rows - rows % QUANT_K_GROUP_ROWS;
}

/* Q4_K's weight e in its file superblock: sub-blocks 2c and 2c + 1 share qs[32c..] as low and high nibbles */
static size_t q4_k_file_at(int e, int *shift) {
    *shift = 4 * ((e / 32) & 1);
    return 32 * (size_t)(e / 64) + (size_t)(e % 32);
}

static void q4_k_put(struct quant_group_q4_k *g, const struct quant_block_q4_k *b, int r) {
    g->d[r] = b->d, g->dmin[r] = b->dmin;
    for (int k = 0; k < 3; k++) memcpy(&g->scales[k][r], b->scales + 4 * k, 4);
    for (int e = 0; e < QUANT_QK_K; e++) {
        int fs, gs;
        const size_t from = q4_k_file_at(e, &fs); /* each shift is set before it is read */
        const int q = b->qs[from] >> fs & 0xf;
        uint8_t *at = g->qs + quant_group_nibble_at(e, r, &gs);
        *at = (uint8_t)((*at & ~(0xf << gs)) | q << gs);
    }
}

static void q4_k_get(struct quant_block_q4_k *b, const struct quant_group_q4_k *g, int r) {
    b->d = g->d[r], b->dmin = g->dmin[r];
    for (int k = 0; k < 3; k++) memcpy(b->scales + 4 * k, &g->scales[k][r], 4);
    memset(b->qs, 0, sizeof b->qs);
    for (int e = 0; e < QUANT_QK_K; e++) {
        int fs, gs;
        const size_t from = quant_group_nibble_at(e, r, &gs), to = q4_k_file_at(e, &fs);
        b->qs[to] |= (uint8_t)((g->qs[from] >> gs & 0xf) << fs);
    }
}

/* Q6_K's weight e in its file superblock: within each half of 128, ql's low nibbles hold weights 0-63 and
 * the high ones 64-127; qh's bit pair j / 32 of byte j % 32 the high 2 bits */
static size_t q6_k_file_ql(int e, int *shift) {
    const int j = e % 128;
    *shift = j < 64 ? 0 : 4;
    return 64 * (size_t)(e / 128) + (size_t)(j % 64);
}
static size_t q6_k_file_qh(int e, int *shift) {
    const int j = e % 128;
    *shift = 2 * (j / 32);
    return 32 * (size_t)(e / 128) + (size_t)(j % 32);
}
static void q6_k_put(struct quant_group_q6_k *g, const struct quant_block_q6_k *b, int r) {
    g->d[r] = b->d;
    for (int s = 0; s < 16; s++) g->scales[s / 4][quant_group_q6_k_scale_at(s, r)] = b->scales[s];
    for (int e = 0; e < QUANT_QK_K; e++) {
        int fl, fh, gl, gh;
        const size_t at_l = q6_k_file_ql(e, &fl), at_h = q6_k_file_qh(e, &fh);
        const int lo = b->ql[at_l] >> fl & 0xf, hi = b->qh[at_h] >> fh & 3;
        uint8_t *codes = &g->codes[0][0][0];
        uint8_t *l = codes + quant_group_q6_k_ql_at(e, r, &gl),
                *h = codes + quant_group_q6_k_qh_at(e, r, &gh);
        *l = (uint8_t)((*l & ~(0xf << gl)) | lo << gl);
        *h = (uint8_t)((*h & ~(3 << gh)) | hi << gh);
    }
}

static void q6_k_get(struct quant_block_q6_k *b, const struct quant_group_q6_k *g, int r) {
    b->d = g->d[r];
    for (int s = 0; s < 16; s++) b->scales[s] = g->scales[s / 4][quant_group_q6_k_scale_at(s, r)];
    memset(b->ql, 0, sizeof b->ql), memset(b->qh, 0, sizeof b->qh);
    for (int e = 0; e < QUANT_QK_K; e++) {
        int fl, fh, gl, gh;
        const uint8_t *codes = &g->codes[0][0][0];
        const size_t from_l = quant_group_q6_k_ql_at(e, r, &gl), from_h = quant_group_q6_k_qh_at(e, r, &gh);
        const size_t to_l = q6_k_file_ql(e, &fl), to_h = q6_k_file_qh(e, &fh);
        b->ql[to_l] |= (uint8_t)((codes[from_l] >> gl & 0xf) << fl);
        b->qh[to_h] |= (uint8_t)((codes[from_h] >> gh & 3) << fh);
    }
}

static size_t superblock_bytes(enum quant_k_type t) {
    return t == QUANT_K_Q4_K   ? sizeof(struct quant_block_q4_k)
           : t == QUANT_K_Q6_K ? sizeof(struct quant_block_q6_k)
                               : sizeof(struct quant_block_q5_k);
}

/* Superblock b of row r (r % 8 of the group at g) into blk in file order, or from it (row_groups.h) */
static void group_get(unsigned char *blk, const unsigned char *g, int b, int r, const void *t) {
    if (*(const enum quant_k_type *)t == QUANT_K_Q4_K)
        q4_k_get((void *)blk, (const struct quant_group_q4_k *)(const void *)g + b, r);
    else
        q6_k_get((void *)blk, (const struct quant_group_q6_k *)(const void *)g + b, r);
}
static void group_put(unsigned char *g, const unsigned char *blk, int b, int r, const void *t) {
    if (*(const enum quant_k_type *)t == QUANT_K_Q4_K)
        q4_k_put((struct quant_group_q4_k *)(void *)g + b, (const void *)blk, r);
    else
        q6_k_put((struct quant_group_q6_k *)(void *)g + b, (const void *)blk, r);
}

static void matrix_convert(void *m, enum quant_k_type t, int rows, int cols, int pack) {
    const struct row_groups g = {quant_k_grouped_rows(t, rows) / QUANT_K_GROUP_ROWS,
                                 QUANT_K_GROUP_ROWS,
                                 cols / QUANT_QK_K,
                                 superblock_bytes(t),
                                 group_put,
                                 group_get,
                                 &t};
    row_groups_convert(m, &g, pack);
}

void quant_k_matrix_pack(void *m, enum quant_k_type t, int rows, int cols) {
    matrix_convert(m, t, rows, cols, 1);
}

void quant_k_matrix_unpack(void *m, enum quant_k_type t, int rows, int cols) {
    matrix_convert(m, t, rows, cols, 0);
}

void quant_k_matrix_row(void *dst, enum quant_k_type t, const void *m, int rows, int cols, int r) {
    const size_t rb = (size_t)(cols / QUANT_QK_K) * superblock_bytes(t);
    if (r >= quant_k_grouped_rows(t, rows)) { /* file order */
        memcpy(dst, (const unsigned char *)m + (size_t)r * rb, rb);
        return;
    }
    const unsigned char *g =
        (const unsigned char *)m + (size_t)(r / QUANT_K_GROUP_ROWS) * QUANT_K_GROUP_ROWS * rb;
    for (int b = 0; b < cols / QUANT_QK_K; b++)
        group_get((unsigned char *)dst + (size_t)b * superblock_bytes(t), g, b, r % QUANT_K_GROUP_ROWS, &t);
}
