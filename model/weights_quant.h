/* A block-format copy (Q8_0, Q4_0) of a bf16 model's weights, quantised in memory: what the load path does
 * for synthetic weights and checkpoints (model/weights.c, model/weights_file.c), from weights already
 * loaded, so that a comparison of formats reads or synthesises the bf16 weights once. Checked in
 * tests/test_quant_fidelity.c: from synthetic bf16 weights it gives the synthetic Q8_0 and Q4_0 weights bit
 * for bit. */
#ifndef FR_WEIGHTS_QUANT_H
#define FR_WEIGHTS_QUANT_H

#include "kernels/fr_err.h"
#include "model/weights.h"

/* dst (allocated with qwen3_weights_alloc for src's config in a block format) = src (bf16) quantised: every
 * matrix and the embedding a block at a time in storage order (the column panels are whole blocks, so the
 * blocks are the ones the load path makes), the f32 norms copied. Fails on a type or shape mismatch. */
int qwen3_weights_quantize(struct qwen3_weights *dst, const struct qwen3_weights *src, struct fr_err *err);

#endif
