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
