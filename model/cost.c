/* Per-block FLOPs and bytes of one Qwen3 decode step. Conventions, stated once:
 * - a multiply-add is 2 FLOPs; exp, division and rsqrt count 1 each; comparisons are not FLOPs;
 * - activations are f32 and counted once per read and once per write at the block's boundary;
 * - norm weights are f32 (widened at load); matrices and the embedding use the weight dtype;
 * - the embedding is a one-row gather; the tied LM head streams the whole embedding matrix;
 * - attention at context T reads T + 1 cached positions of K and V for every KV head, once per KV head (the
 *   query heads of a group share the stream). Its scores (n_heads x (T+1) f32, one position block at a time
 *   in scratch) are touched five times, as the vector paths of kernels/ make them: written (q.k), read for
 *   the block max, read and overwritten by exp, read for the weighted sum of V.
 * - a projection into the residual stream (o_proj, down_proj) writes its matvec result, then the add reads
 *   it and the residual and writes the residual: 4 x hidden f32 besides the matvec's input.
 * - for prediction the bytes are also split by where the real step finds them: matrix weights and KV reads
 *   come from DRAM (they are far larger than the caches and read once per step); norm weights, the new K
 *   and V and the activations are cache-resident.
 * Pinned by tests/test_cost.c to figures computed by hand from Qwen3-0.6B's config. */
#include "model/cost.h"

#include <string.h>

static const char *const sampler_names[SAMPLER_VARIANT_COUNT] = {"greedy", "chain"};

const char *cost_sampler_variant_name(enum sampler_variant v) {
    return (unsigned)v < SAMPLER_VARIANT_COUNT ? sampler_names[v] : "?";
}

double cost_intensity(double flops, double bytes) {
    return bytes > 0 ? flops / bytes : 0;
}

double cost_kv_bytes_per_position(const struct qwen3_config *c, enum fr_dtype kv) {
    return 2.0 * c->n_layers * c->n_kv_heads * c->head_dim * (double)fr_dtype_size(kv);
}

/* RMSNorm over n: sum of squares (2n), rsqrt (1), scale by inv and weight (2n). */
static void norm_cost(struct block_cost *b, double n) {
    b->flops = 4 * n + 1;
    b->weight_bytes = 4 * n;
    b->act_bytes = 4 * (n + n);
}

/* y[rows] = W x: 2 FLOPs per weight, rows*cols weights, read x once, write y once. */
static void matvec_cost(struct block_cost *b, double rows, double cols, double wsize) {
    b->flops = 2 * rows * cols;
    b->weight_bytes = rows * cols * wsize;
    b->act_bytes = 4 * (cols + rows);
}

/* Passes over the vocabulary row, as kernels/sampler.c's sampler_pick makes them:
 * greedy: one read pass (the max; finding its index rereads the row up to it, data-dependent). chain: the
 * softmax reads the logits twice (max; exp and sum, writing p) and normalizes p in place while measuring the
 * top-p pre-filter levels (read, write); the fast top-p reads p once to collect the candidates above the
 * pre-filter level and once more to write the filtered, renormalized row and the draw's block sums (read,
 * write). That is 5 reads and 3 writes of vocab f32. The draw then walks the block sums from token 0 to the
 * block that crosses u * total: a data-dependent part of one more read (about half on average), left out so
 * the prediction stays a lower bound. FLOPs per token: subtract, scale, exp, add (softmax), the normalizing
 * and the renormalizing multiplies: 6. */
static void sampler_cost(struct block_cost *b, double vocab, enum sampler_variant v) {
    if (v == SAMPLER_VARIANT_GREEDY) {
        b->flops = 0;
        b->act_bytes = 4 * vocab;
    } else {
        b->flops = 6 * vocab;
        b->act_bytes = 4 * vocab * (5 + 3);
    }
}

void cost_block(const struct qwen3_config *c, const struct cost_opts *o, enum block_id id, long context,
                enum sampler_variant sampler, struct block_cost *out) {
    memset(out, 0, sizeof *out);
    const struct block_desc *d = &block_table()[id];
    const double h = c->hidden, hd = c->head_dim, I = c->intermediate, V = c->vocab;
    const double q = (double)c->n_heads * hd, kv = (double)c->n_kv_heads * hd;
    const double ws = (double)fr_dtype_size(o->weights), ks = (double)fr_dtype_size(o->kv);
    const double n_pos = (double)context + 1;
    struct block_cost b = {0};
    switch (id) {
    case BLOCK_EMBED: /* one row, widened to f32 */
        b.weight_bytes = h * ws;
        b.act_bytes = 4 * h;
        break;
    case BLOCK_ATTN_NORM:
    case BLOCK_MLP_NORM:
    case BLOCK_FINAL_NORM:
        norm_cost(&b, h);
        break;
    case BLOCK_QKV_PROJ:
        matvec_cost(&b, q + 2 * kv, h, ws);
        break;
    case BLOCK_QK_NORM: /* every q and k head normed over head_dim, two f32 weight vectors */
        b.flops = 4 * (q + kv) + (c->n_heads + c->n_kv_heads);
        b.weight_bytes = 2 * 4 * hd;
        b.act_bytes = 4 * 2 * (q + kv);
        break;
    case BLOCK_ROPE: /* 3 FLOPs per element (2 mul + 1 add per output), reads the cos and sin tables */
        b.flops = 3 * (q + kv);
        b.act_bytes = 4 * 2 * (q + kv) + 4 * hd;
        break;
    case BLOCK_KV_APPEND: /* read k and v in f32, write them in the cache type */
        b.kv_write_bytes = 2 * kv * ks;
        b.act_bytes = 4 * 2 * kv;
        break;
    case BLOCK_ATTENTION: /* scores q.k (2 hd), softmax (sub, exp, add, scale: 4), weights . V (2 hd) */
        b.flops = c->n_heads * n_pos * (4 * hd + 4);
        b.kv_read_bytes = 2 * n_pos * kv * ks;
        b.act_bytes = 4 * (q + q) + 4 * 5 * c->n_heads * n_pos;
        break;
    case BLOCK_O_PROJ: /* matvec (writes h) plus the residual add: read both h vectors, add h, write h */
    case BLOCK_DOWN_PROJ:
        matvec_cost(&b, h, id == BLOCK_O_PROJ ? q : I, ws);
        b.flops += h;
        b.act_bytes += 4 * 3 * h;
        break;
    case BLOCK_GATE_UP_PROJ:
        matvec_cost(&b, 2 * I, h, ws);
        break;
    case BLOCK_SWIGLU: /* silu(g) * u = g / (1 + exp(-g)) * u: neg-exp, add, divide, multiply */
        b.flops = 4 * I;
        b.act_bytes = 4 * 3 * I;
        break;
    case BLOCK_LM_HEAD: /* tied: streams the embedding matrix; untied: lm_head.weight, same shape */
        matvec_cost(&b, V, h, ws);
        break;
    case BLOCK_SAMPLER:
        sampler_cost(&b, V, sampler);
        break;
    case BLOCK_COUNT:
        break;
    }
    const double calls = d->scope == BLOCK_SCOPE_LAYER ? c->n_layers : 1;
    out->id = id;
    out->calls = (int)calls;
    out->flops = b.flops * calls;
    out->weight_bytes = b.weight_bytes * calls;
    out->kv_read_bytes = b.kv_read_bytes * calls;
    out->kv_write_bytes = b.kv_write_bytes * calls;
    out->act_bytes = b.act_bytes * calls;
    out->bytes = out->weight_bytes + out->kv_read_bytes + out->kv_write_bytes + out->act_bytes;
    out->dram_bytes = (d->reads_weights ? out->weight_bytes : 0) + out->kv_read_bytes;
    out->cache_bytes = out->bytes - out->dram_bytes;
}

void cost_step(const struct qwen3_config *c, const struct cost_opts *o, long context,
               enum sampler_variant sampler, struct step_cost *out) {
    memset(out, 0, sizeof *out);
    out->context = context;
    for (int i = 0; i < BLOCK_COUNT; i++) {
        struct block_cost *b = &out->blocks[i];
        cost_block(c, o, (enum block_id)i, context, sampler, b);
        struct block_cost *t = &out->total;
        t->flops += b->flops;
        t->bytes += b->bytes;
        t->weight_bytes += b->weight_bytes;
        t->kv_read_bytes += b->kv_read_bytes;
        t->kv_write_bytes += b->kv_write_bytes;
        t->act_bytes += b->act_bytes;
        t->dram_bytes += b->dram_bytes;
        t->cache_bytes += b->cache_bytes;
    }
}

uint64_t cost_params_from_blocks(const struct qwen3_config *c) {
    /* With f32 weights everywhere, weight bytes / 4 are weight elements read per step. The embed block reads
     * one row of the embedding; the embedding itself is a parameter whether or not the LM head reads it. */
    const struct cost_opts f32 = {FR_DTYPE_F32, FR_DTYPE_F32};
    uint64_t elements = 0;
    for (int i = 0; i < BLOCK_COUNT; i++) {
        struct block_cost b;
        cost_block(c, &f32, (enum block_id)i, 0, SAMPLER_VARIANT_GREEDY, &b);
        elements += (uint64_t)(b.weight_bytes / 4);
    }
    uint64_t embed_row = (uint64_t)c->hidden, embed = (uint64_t)c->vocab * (uint64_t)c->hidden;
    return elements - embed_row + (c->tied_embeddings ? 0 : embed);
}
