/* Quantising a loaded bf16 model into Q8_0 or Q4_0 (weights_quant.h). Each block is widened from bf16 and
 * quantised by kernels/quant.c's quant_quantize_row, as qwen3_fill_uniform and the checkpoint loaders do,
 * so the result equals the weights the load path makes from the same bf16 values. */
#include "model/weights_quant.h"

#include <string.h>

#include "kernels/quant.h"

/* n bf16 values (n a multiple of 32) into block type t, a block at a time over the OpenMP threads. */
static void quantize_tensor(void *dst, enum fr_dtype t, const uint16_t *src, size_t n) {
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < n / QUANT_BLOCK; k++) {
        float v[QUANT_BLOCK];
        for (size_t i = 0; i < QUANT_BLOCK; i++) v[i] = bf16_to_f32(src[k * QUANT_BLOCK + i]);
        quant_quantize_row((unsigned char *)dst + fr_dtype_bytes(t, k * QUANT_BLOCK), t, v, QUANT_BLOCK);
    }
}

int qwen3_weights_quantize(struct qwen3_weights *dst, const struct qwen3_weights *src, struct fr_err *err) {
    const struct qwen3_config *c = &src->cfg;
    if (src->wtype != FR_DTYPE_BF16 || !fr_dtype_is_block(dst->wtype))
        return fr_err_set(err, "quantise: %s weights into %s: only bf16 into q8_0 or q4_0",
                          fr_dtype_name(src->wtype), fr_dtype_name(dst->wtype));
    const struct qwen3_config *d = &dst->cfg;
    if (d->hidden != c->hidden || d->intermediate != c->intermediate || d->n_layers != c->n_layers ||
        d->n_heads != c->n_heads || d->n_kv_heads != c->n_kv_heads || d->head_dim != c->head_dim ||
        d->vocab != c->vocab || d->tied_embeddings != c->tied_embeddings)
        return fr_err_set(err, "quantise: the two weight sets were allocated for different configs");
    const enum fr_dtype t = dst->wtype;
    const size_t h = (size_t)c->hidden, inter = (size_t)c->intermediate, hd = (size_t)c->head_dim;
    const size_t q = (size_t)c->n_heads * hd, kv = (size_t)c->n_kv_heads * hd;
    quantize_tensor(dst->embed, t, src->embed, (size_t)c->vocab * h);
    if (src->lm_head_own) quantize_tensor(dst->lm_head_own, t, src->lm_head_own, (size_t)c->vocab * h);
    memcpy(dst->final_norm, src->final_norm, h * sizeof(float));
    for (int l = 0; l < c->n_layers; l++) {
        const struct qwen3_layer_weights *a = &src->layers[l];
        struct qwen3_layer_weights *b = &dst->layers[l];
        quantize_tensor(b->qkv, t, a->qkv, (q + 2 * kv) * h);
        quantize_tensor(b->o, t, a->o, h * q);
        quantize_tensor(b->gate_up, t, a->gate_up, 2 * inter * h);
        quantize_tensor(b->down, t, a->down, h * inter);
        memcpy(b->attn_norm, a->attn_norm, h * sizeof(float));
        memcpy(b->q_norm, a->q_norm, hd * sizeof(float));
        memcpy(b->k_norm, a->k_norm, hd * sizeof(float));
        memcpy(b->mlp_norm, a->mlp_norm, h * sizeof(float));
    }
    qwen3_weights_pack(dst);
    return 0;
}
