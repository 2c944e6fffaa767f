/* Layer: kernels/ (bottom of the include graph).
 * The K-quants' superblocks in ggml-common.h's byte layout (block_q4_K, block_q5_K, block_q6_K, block_q8_K;
 * our own code), below kernels/quant_k.h so that the per-ISA loops (quant_k_ops.h) can read the fields
 * without including the module that picks them. The meaning of every bit: kernels/quant_dequant.c. */
#ifndef FR_QUANT_K_BLOCKS_H
#define FR_QUANT_K_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#define QUANT_QK_K 256

/* The order is kept: other modules index tables by it */
enum quant_k_type { QUANT_K_Q4_K, QUANT_K_Q6_K, QUANT_K_Q5_K, QUANT_K_COUNT };

/* w = d * sc[j] * q - dmin * m[j] for sub-block j of 32; codes of sub-blocks 2c and 2c + 1 share
 * qs[32c .. 32c + 31] as low and high nibbles */
struct quant_block_q4_k {
    uint16_t d, dmin;   /* f16 */
    uint8_t scales[12]; /* sc[0..7] and m[0..7], 6 bits each (kernels/quant_dequant.h quant_q4_k_scale_min) */
    uint8_t qs[QUANT_QK_K / 2];
};
/* As Q4_K with a fifth bit: q in [0, 31], its low 4 bits in qs as Q4_K's, bit j of qh[l] the fifth bit of
 * weight l of sub-block j */
struct quant_block_q5_k {
    uint16_t d, dmin;   /* f16 */
    uint8_t scales[12]; /* packed as Q4_K's */
    uint8_t qh[QUANT_QK_K / 8];
    uint8_t qs[QUANT_QK_K / 2];
};
/* w = d * scales[g] * (q - 32), q in [0, 63]: low 4 bits in ql, high 2 in qh, one scale a 16 weights */
struct quant_block_q6_k {
    uint8_t ql[QUANT_QK_K / 2];
    uint8_t qh[QUANT_QK_K / 4];
    int8_t scales[QUANT_QK_K / 16];
    uint16_t d; /* f16 */
};
struct quant_block_q8_k {
    float d;
    int8_t qs[QUANT_QK_K];
    int16_t bsums[QUANT_QK_K / 16];
};
_Static_assert(sizeof(struct quant_block_q4_k) == 144, "Q4_K superblock is 144 bytes");
_Static_assert(sizeof(struct quant_block_q5_k) == 176, "Q5_K superblock is 176 bytes");
_Static_assert(sizeof(struct quant_block_q6_k) == 210, "Q6_K superblock is 210 bytes");

/* Q4_K and Q6_K rows in memory, in groups of 8 (kernels/quant_k_layout.c): a group superblock holds
 * superblock b of 8 rows in the bytes those 8 take in the file, each 32-byte vector 4 weights (byte 4r + t)
 * of each row, so the matvec sums 8 rows at once with each x code loaded once. The last rows % 8 rows, and
 * Q5_K's, stay in file order. Q4_K: qs vector i holds weight 4i + t in its low nibbles, 128 + 4i + t in its
 * high ones; scales[k][r] is bytes 4k..4k+3 of row r's packed scales. Q6_K: codes[i] is the low nibbles of
 * weights 4i + t | 128 + 4i + t, of 64 + 4i + t | 192 + 4i + t, then their high bit pairs (bits 0-1 .. 6-7),
 * side by side so the loop reads one stream (docs/tuning/kquant.md); scales[k] holds each row's scales
 * 4k, 4k + 2, 4k + 1, 4k + 3, so a 16-bit lane's even and odd bytes pair with consecutive x group sums. */
#define QUANT_K_GROUP_ROWS 8
struct quant_group_q4_k {
    uint16_t d[QUANT_K_GROUP_ROWS], dmin[QUANT_K_GROUP_ROWS];
    uint32_t scales[3][QUANT_K_GROUP_ROWS];
    uint8_t qs[QUANT_K_GROUP_ROWS * QUANT_QK_K / 2];
};
struct quant_group_q6_k {
    uint16_t d[QUANT_K_GROUP_ROWS];
    int8_t scales[4][4 * QUANT_K_GROUP_ROWS];
    uint8_t codes[QUANT_QK_K / 16][3][4 * QUANT_K_GROUP_ROWS];
};
_Static_assert(sizeof(struct quant_group_q4_k) == 8 * 144, "a Q4_K group superblock is 8 superblocks' bytes");
_Static_assert(sizeof(struct quant_group_q6_k) == 8 * 210, "a Q6_K group superblock is 8 superblocks' bytes");

/* Superblock b of a Q4_K or Q5_K row, its fields by name: the two formats differ only by Q5_K's qh, so one
 * loop serves both, and with t a constant the compiler drops the fifth bit's work from Q4_K's (qh NULL). */
struct quant_k45_view {
    uint16_t d, dmin;
    const uint8_t *scales, *qh, *qs;
};

static inline struct quant_k45_view quant_k45_at(enum quant_k_type t, const void *row, size_t b) {
    if (t == QUANT_K_Q5_K) {
        const struct quant_block_q5_k *w = (const struct quant_block_q5_k *)row + b;
        return (struct quant_k45_view){w->d, w->dmin, w->scales, w->qh, w->qs};
    }
    const struct quant_block_q4_k *w = (const struct quant_block_q4_k *)row + b;
    return (struct quant_k45_view){w->d, w->dmin, w->scales, NULL, w->qs};
}

#endif
