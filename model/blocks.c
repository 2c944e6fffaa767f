/* The block table, in decode order: the one list that the cost model, the timings, the report and the plots
 * share. */
#include "model/blocks.h"

#include <assert.h>
#include <string.h>

static const struct block_desc blocks[] = {
    {BLOCK_EMBED, "embed", BLOCK_SCOPE_STEP, 0, "gather one embedding row, widen to f32"},
    {BLOCK_ATTN_NORM, "attn_norm", BLOCK_SCOPE_LAYER, 0, "RMSNorm over hidden"},
    {BLOCK_QKV_PROJ, "qkv_proj", BLOCK_SCOPE_LAYER, 1, "matvec hidden -> q, k, v"},
    {BLOCK_QK_NORM, "qk_norm", BLOCK_SCOPE_LAYER, 0, "RMSNorm over each q and k head"},
    {BLOCK_ROPE, "rope", BLOCK_SCOPE_LAYER, 0, "rotate q and k at position T"},
    {BLOCK_KV_APPEND, "kv_append", BLOCK_SCOPE_LAYER, 0, "write k, v of position T into the cache"},
    {BLOCK_ATTENTION, "attention", BLOCK_SCOPE_LAYER, 0, "GQA over T+1 cached positions"},
    {BLOCK_O_PROJ, "o_proj", BLOCK_SCOPE_LAYER, 1, "matvec heads*head_dim -> hidden, residual add"},
    {BLOCK_MLP_NORM, "mlp_norm", BLOCK_SCOPE_LAYER, 0, "RMSNorm over hidden"},
    {BLOCK_GATE_UP_PROJ, "gate_up_proj", BLOCK_SCOPE_LAYER, 1, "matvec hidden -> 2 x intermediate"},
    {BLOCK_SWIGLU, "swiglu", BLOCK_SCOPE_LAYER, 0, "silu(gate) * up"},
    {BLOCK_DOWN_PROJ, "down_proj", BLOCK_SCOPE_LAYER, 1, "matvec intermediate -> hidden, residual add"},
    {BLOCK_FINAL_NORM, "final_norm", BLOCK_SCOPE_STEP, 0, "RMSNorm over hidden"},
    {BLOCK_LM_HEAD, "lm_head", BLOCK_SCOPE_STEP, 1, "matvec hidden -> vocab logits"},
    {BLOCK_SAMPLER, "sampler", BLOCK_SCOPE_STEP, 0, "softmax(logits/T) -> top-p -> seeded draw"},
};
static_assert(sizeof blocks / sizeof blocks[0] == BLOCK_COUNT, "block table out of step with enum block_id");

const struct block_desc *block_table(void) {
    return blocks;
}

const char *block_name(enum block_id id) {
    return (unsigned)id < BLOCK_COUNT ? blocks[id].name : "?";
}

const struct block_desc *block_by_name(const char *name) {
    for (int i = 0; i < BLOCK_COUNT; i++)
        if (strcmp(blocks[i].name, name) == 0) return &blocks[i];
    return NULL;
}
