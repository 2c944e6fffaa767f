/* Quantising a loaded bf16 model into its quantised formats (weights_quant.h). Each block is widened from
 * bf16 and quantised by qwen3_run_store, as the synthetic fill does, so the result equals the weights the
 * load path makes from the same bf16 values. */
#include "model/weights_quant.h"

#include <string.h>

#include "kernels/col_panels.h"

/* The embedding or an untied LM head: row-major in every type. */
static void quantize_rowmajor(void *dst, enum fr_dtype t, const uint16_t *src, const struct qwen3_config *c) {
    const struct qwen3_run run = {dst, t, 0, c->vocab, c->hidden, c->hidden};
    const struct qwen3_values v = {src, 0, 0, c->vocab, c->hidden};
    qwen3_run_store(&run, &v);
}

int qwen3_weights_quantize(struct qwen3_weights *dst, const struct qwen3_weights *src, struct fr_err *err) {
    const struct qwen3_config *c = &src->cfg;
    if (src->wtype != FR_DTYPE_BF16 || !weight_formats_is_uniform(&src->formats, NULL) ||
        !fr_dtype_is_quant(dst->wtype))
        return fr_err_set(err, "quantise: %s weights into %s: only bf16 into a quantised type",
                          fr_dtype_name(src->wtype), fr_dtype_name(dst->wtype));
    const struct qwen3_config *d = &dst->cfg;
    if (d->hidden != c->hidden || d->intermediate != c->intermediate || d->n_layers != c->n_layers ||
        d->n_heads != c->n_heads || d->n_kv_heads != c->n_kv_heads || d->head_dim != c->head_dim ||
        d->vocab != c->vocab || d->tied_embeddings != c->tied_embeddings)
        return fr_err_set(err, "quantise: the two weight sets were allocated for different configs");
    const int h = c->hidden, inter = c->intermediate, hd = c->head_dim;
    const int q = c->n_heads * hd, kv = c->n_kv_heads * hd;
    quantize_rowmajor(dst->embed, dst->formats.embed, src->embed, c);
    if (src->lm_head_own) quantize_rowmajor(dst->lm_head_own, dst->formats.lm_head, src->lm_head_own, c);
    memcpy(dst->final_norm, src->final_norm, (size_t)h * sizeof(float));
    const int rows[QWEN3_MAT_COUNT] = {q + 2 * kv, h, 2 * inter, h};
    for (int l = 0; l < c->n_layers; l++) {
        const struct qwen3_layer_weights *a = &src->layers[l];
        struct qwen3_layer_weights *b = &dst->layers[l];
        const uint16_t *from[QWEN3_MAT_COUNT] = {a->qkv, a->o, a->gate_up, a->down};
        for (int m = 0; m < QWEN3_MAT_COUNT; m++) { /* each run from its rows' place in bf16's layout */
            struct qwen3_run runs[QWEN3_MAX_RUNS];
            const int n = qwen3_matrix_runs(dst, l, (enum qwen3_matrix)m, runs);
            const struct qwen3_values v = {from[m], 0, 0, rows[m],
                                           col_panel_width(FR_DTYPE_BF16, runs[0].cols)};
            for (int i = 0; i < n; i++) qwen3_run_store(&runs[i], &v);
        }
        memcpy(b->attn_norm, a->attn_norm, (size_t)h * sizeof(float));
        memcpy(b->q_norm, a->q_norm, (size_t)hd * sizeof(float));
        memcpy(b->k_norm, a->k_norm, (size_t)hd * sizeof(float));
        memcpy(b->mlp_norm, a->mlp_norm, (size_t)h * sizeof(float));
    }
    qwen3_weights_pack(dst);
    return 0;
}
