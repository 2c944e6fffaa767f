/* The cost of prompt processing (model/cost.h cost_prefill): n prompt tokens through every block in one pass.
 * Every figure is built from cost.c's batch-1 formulas, so the two models cannot disagree about a block:
 * - per-token blocks (the embedding gather, the norms, RoPE, the KV append, SwiGLU): cost_block summed over
 *   the rows, row i at context depth + i, n calls a layer;
 * - the layers' four matrices: cost_step_batch's rules for B = n (one GEMM a layer reads the weights once,
 *   FLOPs and activations n times, and dequantises into f32: no int8 work when n > 1);
 * - attention: the rows' batch-1 FLOPs and exps (the useful causal work), K and V read as the kernel's tiles
 *   read them (kernels/attention_prefill.h), one call a layer;
 * - final_norm, lm_head and the sampler: once, for the last position.
 * Bytes use the two-level model of cost_block without caches: matrix weights and KV reads from DRAM, every
 * other byte in L2. Pinned by tests/test_cost_prefill.c (by hand for a small config; n = 1 is cost_step). */
#include <string.h>

#include "kernels/attention_prefill.h"
#include "model/cost.h"

enum prefill_rule {
    PREFILL_ROWS, /* once per prompt row */
    PREFILL_GEMM, /* a layer matrix: one GEMM over all rows */
    PREFILL_ONCE, /* the last row only */
};

/* From the block table: a layer's matrix is a GEMM; a step block other than the embedding gather (one row
 * per token) runs once; everything else once per row. */
static enum prefill_rule prefill_rule(enum block_id id) {
    const struct block_desc *d = &block_table()[id];
    if (d->reads_weights && d->scope == BLOCK_SCOPE_LAYER) return PREFILL_GEMM;
    if (d->scope == BLOCK_SCOPE_STEP && id != BLOCK_EMBED) return PREFILL_ONCE;
    return PREFILL_ROWS;
}

/* Block id over rows at contexts depth, ..., depth + n - 1, summed (n >= 1; flags from the first row). */
static void prefill_rows(const struct qwen3_config *c, const struct cost_opts *o, enum block_id id, long n,
                         long depth, enum sampler_variant sampler, struct block_cost *out) {
    cost_block(c, o, id, depth, sampler, out);
    for (long i = 1; i < n; i++) {
        struct block_cost row;
        cost_block(c, o, id, depth + i, sampler, &row);
        cost_block_add(out, &row);
    }
}

/* The tiled kernel reads K and V once per query tile, not per row, and is one call a layer. */
static void prefill_attention_reads(const struct qwen3_config *c, const struct cost_opts *o, long n,
                                    long depth, struct block_cost *b) {
    struct block_cost first;
    cost_block(c, o, BLOCK_ATTENTION, depth, SAMPLER_VARIANT_GREEDY, &first);
    b->kv_read_bytes = prefill_attention_kv_positions(depth, n) * cost_kv_bytes_per_position(c, o->kv);
    b->kernel_calls = first.kernel_calls, b->forks = first.forks, b->barriers = first.barriers;
}

/* The two-level split of cost_block without caches: DRAM = matrix weights + KV reads, the rest in L2. */
static void prefill_levels(struct block_cost *b) {
    b->bytes = b->weight_bytes + b->kv_read_bytes + b->kv_write_bytes + b->act_bytes;
    b->dram_bytes = (block_table()[b->id].reads_weights ? b->weight_bytes : 0) + b->kv_read_bytes;
    b->cache_bytes = b->bytes - b->dram_bytes;
    memset(b->level_bytes, 0, sizeof b->level_bytes);
    b->level_bytes[COST_LEVEL_DRAM] = b->dram_bytes;
    b->level_bytes[COST_LEVEL_L2] = b->cache_bytes;
}

void cost_prefill(const struct qwen3_config *c, const struct cost_opts *o, long n, long depth,
                  enum sampler_variant sampler, struct prefill_cost *out) {
    memset(out, 0, sizeof *out);
    out->prompt_len = n, out->depth = depth;
    if (n < 1) return;
    struct step_cost gemm; /* the matrices of a batch of n rows at depth (their cost has no context term) */
    cost_step_batch(c, o, depth, (int)n, sampler, &gemm);
    for (int i = 0; i < BLOCK_COUNT; i++) {
        const enum block_id id = (enum block_id)i;
        struct block_cost *b = &out->blocks[i];
        switch (prefill_rule(id)) {
        case PREFILL_GEMM:
            *b = gemm.blocks[i];
            break;
        case PREFILL_ONCE:
            cost_block(c, o, id, depth + n - 1, sampler, b);
            break;
        case PREFILL_ROWS:
            prefill_rows(c, o, id, n, depth, sampler, b);
            break;
        }
        if (id == BLOCK_ATTENTION) prefill_attention_reads(c, o, n, depth, b);
        prefill_levels(b);
        cost_block_add(&out->total, b);
    }
}
