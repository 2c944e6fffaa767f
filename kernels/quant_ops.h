/* quant_ops: the per-ISA table of the block matvec (kernels/quant.h's formats; one body,
 * kernels/quant_simd_body.h, over each ISA's block dot product). kernels.c picks the table for the active
 * ISA, as it does kernel_ops. Internal to kernels/ and its tests. */
#ifndef FR_QUANT_OPS_H
#define FR_QUANT_OPS_H

#include <stdint.h>

struct quant_block_q8_0; /* kernels/quant.h */
struct quant_block_q4_0;
struct quant_act;

struct quant_ops {
    /* y[r] (+)= row r . x over nb blocks from block blk0 of a; rows of nb blocks in memory order
     * (kernels/quant.h): w starts on a group, and rows % QUANT_GROUP_ROWS rows at the end are the
     * matrix's last (so a team's chunks start on multiples of QUANT_GROUP_ROWS rows and only the last one
     * ends off a group). */
    void (*matvec_q8_0)(float *y, const struct quant_block_q8_0 *w, const struct quant_act *a, int blk0,
                        int rows, int nb, int add);
    void (*matvec_q4_0)(float *y, const struct quant_block_q4_0 *w, const struct quant_act *a, int blk0,
                        int rows, int nb, int add);
    /* The same, the chunk's row groups two at a time side by side (two streams a core), the same bits;
     * NULL where the ISA has no such loop. kernels.c takes them on the L2 prefetch profile (Zen 5), where
     * a core streams faster from two places (docs/tuning/quant-matvec.md). */
    void (*matvec_q8_0_pairs)(float *y, const struct quant_block_q8_0 *w, const struct quant_act *a, int blk0,
                              int rows, int nb, int add);
    void (*matvec_q4_0_pairs)(float *y, const struct quant_block_q4_0 *w, const struct quant_act *a, int blk0,
                              int rows, int nb, int add);
    /* x's nb blocks quantised (kernels/quant.h's quant_act_quantize_by), bit for bit as the plain loop */
    void (*act_blocks)(int8_t *qs, float *d, int32_t *c4, const float *x, int nb);
    const char *name, *pairs_name; /* the loops, for kernel_quant_describe (pairs_name NULL: none) */
};

extern const struct quant_ops quant_ops_scalar;
extern const struct quant_ops quant_ops_avx2;
extern const struct quant_ops quant_ops_avx512; /* AVX-512 VNNI: vpdpbusd, a group on 512-bit vectors */

#endif
