/* Quantising a loaded bf16 model into Q8_0 or Q4_0 (weights_quant.h). Each block is widened from bf16 and
 * quantised by kernels/quant.c's quant_quantize_row, as qwen3_fill_uniform and the checkpoint loaders do,
 * so the result equals the weights the load path makes from the same bf16 values. */
#include "model/weights_quant.h"

#include <string.h>

#include "kernels/quant.h"

/* A bf16 matrix into block type t, each block placed by the map (model/weights.h: from bf16's layout to
 * t's), a block at a time over the OpenMP threads. */
static void quantize_matrix(void *dst, enum fr_dtype t, const uint16_t *src, struct qwen3_block_map m) {
    const long n = qwen3_block_count(&m);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        size_t from, to;
        qwen3_block_at(&m, i, &from, &to);
        float v[QUANT_BLOCK];
        for (int k = 0; k < QUANT_BLOCK; k++) v[k] = bf16_to_f32(src[from + (size_t)k]);
        quant_quantize_row((unsigned char *)dst + fr_dtype_bytes(t, to), t, v, QUANT_BLOCK);
    }
}

/* A layer matrix, each type in its own column panels (model/weights.h). */
static void quantize_layer_matrix(void *dst, enum fr_dtype t, const uint16_t *src, int rows, int cols) {
    quantize_matrix(dst, t, src, qwen3_layer_block_map(t, rows, cols));
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
    const int h = c->hidden, inter = c->intermediate, hd = c->head_dim;
    const int q = c->n_heads * hd, kv = c->n_kv_heads * hd;
    /* the embedding and an untied lm_head are row-major in every type: one panel of h columns */
    const struct qwen3_block_map rowmajor = {c->vocab, h, h, h};
    quantize_matrix(dst->embed, t, src->embed, rowmajor);
    if (src->lm_head_own) quantize_matrix(dst->lm_head_own, t, src->lm_head_own, rowmajor);
    memcpy(dst->final_norm, src->final_norm, (size_t)h * sizeof(float));
    for (int l = 0; l < c->n_layers; l++) {
        const struct qwen3_layer_weights *a = &src->layers[l];
        struct qwen3_layer_weights *b = &dst->layers[l];
        quantize_layer_matrix(b->qkv, t, a->qkv, q + 2 * kv, h);
        quantize_layer_matrix(b->o, t, a->o, h, q);
        quantize_layer_matrix(b->gate_up, t, a->gate_up, 2 * inter, h);
        quantize_layer_matrix(b->down, t, a->down, h, inter);
        memcpy(b->attn_norm, a->attn_norm, (size_t)h * sizeof(float));
        memcpy(b->q_norm, a->q_norm, (size_t)hd * sizeof(float));
        memcpy(b->k_norm, a->k_norm, (size_t)hd * sizeof(float));
        memcpy(b->mlp_norm, a->mlp_norm, (size_t)h * sizeof(float));
    }
    qwen3_weights_pack(dst);
    return 0;
}
