/* llama.cpp's tensor mixes for Qwen3 (weight_mix.h), from llama-quantize's rules as src/llama-quant.cpp
 * states them (llama_tensor_get_type), for the dense models and file types below, no importance matrix and
 * no --tensor-type overrides. Checked in tests/test_weight_mix.c against the files llama-quantize wrote. */
#include "model/weight_mix.h"

#include <stdio.h>
#include <string.h>

static const char *const mix_names[WEIGHT_MIX_COUNT] = {"q4_k_m", "q5_k_m", "q6_k", "q4_0"};

const char *weight_mix_name(enum weight_mix m) {
    return (unsigned)m < WEIGHT_MIX_COUNT ? mix_names[m] : "?";
}

int weight_mix_parse(const char *s, enum weight_mix *m) {
    for (int i = 0; i < WEIGHT_MIX_COUNT; i++)
        if (strcmp(s, mix_names[i]) == 0) {
            *m = (enum weight_mix)i;
            return 0;
        }
    return -1;
}

/* The file type's own type, which every tensor no rule names takes. */
static enum wslot_dtype base_type(enum weight_mix m) {
    switch (m) {
    case WEIGHT_MIX_Q4_K_M:
        return WSLOT_Q4_K;
    case WEIGHT_MIX_Q5_K_M:
        return WSLOT_Q5_K;
    case WEIGHT_MIX_Q6_K:
        return WSLOT_Q6_K;
    default:
        return WSLOT_Q4_0;
    }
}

/* llama.cpp's choice of the layers that keep more bits in the _M mixes: the first and last eighth, and every
 * third layer between. */
static bool use_more_bits(int i, int n) {
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

/* A row length (ggml's ne[0]) that is no whole superblock takes a 32-block type instead. */
static enum wslot_dtype fallback(enum wslot_dtype t, int cols) {
    if (cols % 256 == 0) return t;
    return t == WSLOT_Q4_K ? WSLOT_Q5_0 : t == WSLOT_Q5_K ? WSLOT_Q5_1 : t == WSLOT_Q6_K ? WSLOT_Q8_0 : t;
}

static int part_cols(const struct qwen3_config *c, enum wpart p) {
    return p == WPART_O ? c->n_heads * c->head_dim : p == WPART_DOWN ? c->intermediate : c->hidden;
}

enum wslot_dtype weight_mix_file_type(enum weight_mix m, const struct qwen3_config *c, int layer,
                                      enum wpart p) {
    const bool m_mix = m == WEIGHT_MIX_Q4_K_M || m == WEIGHT_MIX_Q5_K_M;
    /* the output matrix, and a tied model's embedding, which is it: Q6_K where its rows take superblocks,
     * else Q8_0 (no fallback after) */
    if (layer == WEIGHT_MIX_OUTPUT || (layer == WEIGHT_MIX_TOKEN_EMBD && c->tied_embeddings))
        return c->hidden % 256 == 0 ? WSLOT_Q6_K : WSLOT_Q8_0;
    enum wslot_dtype t = base_type(m);
    if (layer == WEIGHT_MIX_TOKEN_EMBD) return fallback(t, c->hidden);
    /* attn_v is counted over the attention layers, ffn_down over the layers: one count for a dense model */
    if (m_mix && (p == WPART_V || p == WPART_DOWN) && use_more_bits(layer, c->n_layers)) t = WSLOT_Q6_K;
    return fallback(t, part_cols(c, p));
}

/* The type our kernels run a file type in, or -1 with the reason when none does. */
static int run_type(enum wslot_dtype t, enum fr_dtype *out) {
    if (!wslot_dtype_runs(t)) return -1;
    *out = wslot_dtype_wtype(t);
    return 0;
}

int weight_mix_formats(enum weight_mix m, const struct qwen3_config *c, struct weight_formats *out,
                       struct fr_err *err) {
    if (c->n_layers > WFMT_MAX_LAYERS)
        return fr_err_set(err, "%s: %d layers, at most %d", weight_mix_name(m), c->n_layers, WFMT_MAX_LAYERS);
    weight_formats_uniform(out, c->n_layers, FR_DTYPE_Q8_0);
    char name[48];
    for (int l = WEIGHT_MIX_OUTPUT; l < c->n_layers; l++)
        for (int p = 0; p < (l < 0 ? 1 : WPART_COUNT); p++) {
            if (l == WEIGHT_MIX_OUTPUT && c->tied_embeddings) continue;
            const enum wslot_dtype t = weight_mix_file_type(m, c, l, (enum wpart)p);
            enum fr_dtype r;
            if (run_type(t, &r) != 0) {
                if (l >= 0)
                    snprintf(name, sizeof name, "blk.%d.%s.weight", l, wpart_name((enum wpart)p));
                else
                    snprintf(name, sizeof name, "%s",
                             l == WEIGHT_MIX_OUTPUT ? "output.weight" : "token_embd.weight");
                return fr_err_set(
                    err, "%s for model '%s': %s takes %s (%d columns), which this build does not run",
                    weight_mix_name(m), c->name, name, wslot_dtype_name(t),
                    l >= 0 ? part_cols(c, (enum wpart)p) : c->hidden);
            }
            if (l == WEIGHT_MIX_OUTPUT)
                out->lm_head = r;
            else if (l == WEIGHT_MIX_TOKEN_EMBD)
                out->embed = r;
            else
                out->layer[l][p] = r;
        }
    if (c->tied_embeddings) out->lm_head = out->embed;
    return 0;
}
