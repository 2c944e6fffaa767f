/* quant_k_ops: the per-ISA dot products of kernels/quant_k.h's formats against Q8_K activations; quant_k.c
 * picks the active ISA's. Internal to kernels/ and its tests. */
#ifndef FR_QUANT_K_OPS_H
#define FR_QUANT_K_OPS_H

#include "kernels/quant_k_blocks.h"

struct quant_k_ops {
    /* row . x over nb superblocks */
    float (*dot_q4_k)(const struct quant_block_q4_k *w, const struct quant_block_q8_k *x, int nb);
    float (*dot_q6_k)(const struct quant_block_q6_k *w, const struct quant_block_q8_k *x, int nb);
    float (*dot_q5_k)(const struct quant_block_q5_k *w, const struct quant_block_q8_k *x, int nb);
    /* y[0..7] = the 8 rows of a group in memory order (kernels/quant_k_blocks.h) . x; NULL would read the
     * group a row at a time (quant_k_matrix_row) */
    void (*group_q4_k)(float *y, const struct quant_group_q4_k *g, const struct quant_block_q8_k *x, int nb);
    void (*group_q6_k)(float *y, const struct quant_group_q6_k *g, const struct quant_block_q8_k *x, int nb);
    /* x[n] (n a multiple of 256) as Q8_K, bit for bit the scalar quant_k_quantize_act's */
    void (*quantize_act)(struct quant_block_q8_k *dst, const float *x, size_t n);
    const char *name;
};

extern const struct quant_k_ops quant_k_ops_scalar;
extern const struct quant_k_ops quant_k_ops_avx2;
extern const struct quant_k_ops quant_k_ops_avx512; /* AVX-512 VNNI's vpdpwssd on 256-bit vectors */

#endif
