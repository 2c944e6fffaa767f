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
 * - per level (cache-aware roofline): see struct block_cost; the working sets are per call as the kernels
 *   touch them (attention keeps its scores one 16-position block per thread at a time, the sampler
 *   alternates between the logits row and its probabilities row).
 * - exps: one per score (attention), per gate value (swiglu), per logit (sampler chain); the softmax
 *   rescales between position blocks are left out (a lower-order term; the prediction stays a bound).
 * - kernel calls, forks and team barriers: as model/decode.c makes them (matvec forks when kernels say it
 *   opens a team; each column panel of a layer matrix after the first is one more call; on the step's
 *   kernel team each panel's work-share ends at the team's barrier, and attention meets it once or twice).
 * Pinned by tests/test_cost.c to figures computed by hand from Qwen3-0.6B's config and, per level, for a
 * small config. */
#include "model/cost.h"

#include <math.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/kernels.h"
#include "kernels/sampler.h" /* SAMPLER_SOFTMAX_SPLIT_MIN */

/* Positions of one attention score block per thread (kernels/kernel_ops.h KERNEL_ATT_BLOCK). */
#define COST_ATT_BLOCK 16

static const char *const level_names[COST_LEVEL_COUNT] = {"DRAM", "L1", "L2", "L3"};

const char *cost_level_name(enum cost_level l) {
    return (unsigned)l < COST_LEVEL_COUNT ? level_names[l] : "?";
}

/* The fastest level that holds ws bytes; DRAM when none does. Unknown capacities (m NULL): L2. */
static enum cost_level level_for(const struct cost_caches *m, double ws) {
    if (!m) return COST_LEVEL_L2;
    for (int l = 0; l < 3; l++)
        if (m->bytes[l] > 0 && ws <= m->bytes[l]) return (enum cost_level)(COST_LEVEL_L1 + l);
    return COST_LEVEL_DRAM;
}

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

/* Bytes per weight: 34 / 32 for Q8_0, 18 / 32 for Q4_0, 144 / 256 for Q4_K (scales and mins counted),
 * exact. */
static double weight_size(enum fr_dtype t) {
    return fr_dtype_weight_bytes(t);
}

/* y[rows] = W x: 2 FLOPs per weight, rows*cols weights, read x once, write y once. A block format (Q8_0,
 * Q4_0) adds its dequantisation work: x quantised per 32-block (per element a multiply by 1/d and an add
 * into the code sum, per block d = max/127 and 1/d: 2 cols + 2 cols / 32), and per weight block the product
 * of the two scales and its multiply-add into the row's sum (3 a block); the 2 per weight are then integer
 * multiply-adds (kernels/quant.h). */
static void matvec_cost(struct block_cost *b, double rows, double cols, enum fr_dtype t) {
    b->flops = 2 * rows * cols;
    if (fr_dtype_is_block(t)) {
        b->flops += 2 * cols + 2 * cols / 32 + 3 * rows * cols / 32;
    } else if (fr_dtype_is_kquant(t)) {
        /* x to Q8_K (as a 32-block's, per 256: d, 1/d) and its sums per 16; per weight sub-block (32 for
         * Q4_K and Q5_K, 16 for Q6_K) its scale's multiply into the integer sum and the add, and Q4_K's and
         * Q5_K's min through the sums (3 a sub-block in all); per superblock the two f16 scales (2) */
        const double sub = t == FR_DTYPE_Q6_K ? 16 : 32;
        b->flops += 2 * cols + 2 * cols / 256 + cols / 16 + 3 * rows * cols / sub + 2 * rows * cols / 256;
    }
    if (fr_dtype_is_quant(t)) {
        b->quant_weights = b->quant_type_weights[t] = rows * cols;
        b->quant_flops = b->quant_type_flops[t] = b->flops;
    }
    b->wtypes = 1u << t;
    b->weight_bytes = rows * cols * weight_size(t);
    b->act_bytes = 4 * (cols + rows);
}

/* t's quantised work += b's (totals and per type) and its types. */
static void quant_add(struct block_cost *t, const struct block_cost *b) {
    t->quant_weights += b->quant_weights;
    t->quant_flops += b->quant_flops;
    for (int k = 0; k < FR_DTYPE_COUNT; k++) {
        t->quant_type_weights[k] += b->quant_type_weights[k];
        t->quant_type_flops[k] += b->quant_type_flops[k];
    }
    t->wtypes |= b->wtypes;
}

/* b's quantised work times mul / div (totals and per type; mul or div 1 leaves the other's rounding alone).
 */
static void quant_scale(struct block_cost *b, double mul, double div) {
    b->quant_weights = b->quant_weights * mul / div;
    b->quant_flops = b->quant_flops * mul / div;
    for (int k = 0; k < FR_DTYPE_COUNT; k++) {
        b->quant_type_weights[k] = b->quant_type_weights[k] * mul / div;
        b->quant_type_flops[k] = b->quant_type_flops[k] * mul / div;
    }
}

void cost_block_format(const struct block_cost *b, enum fr_dtype kv, char *buf, size_t len) {
    if (!len) return;
    buf[0] = '\0';
    size_t used = 0;
    for (int t = 0; t < FR_DTYPE_COUNT; t++)
        if (b->wtypes & (1u << t)) {
            int n =
                snprintf(buf + used, len - used, "%s%s", used ? "+" : "", fr_dtype_name((enum fr_dtype)t));
            if (n < 0 || (size_t)n >= len - used) return; /* truncated: buf holds what fit */
            used += (size_t)n;
        }
    if (!used)
        snprintf(buf, len, "%s",
                 fr_dtype_name(b->kv_read_bytes > 0 || b->kv_write_bytes > 0 ? kv : FR_DTYPE_F32));
}

/* A layer projection over its parts (q, k, v; gate, up; o; down), each a matvec in its own type, averaged
 * over the layers so that the caller's count of calls makes the sum; without formats one matvec in t. */
static void layer_matvec_cost(struct block_cost *b, const struct qwen3_config *c, const struct cost_opts *o,
                              const enum wpart *parts, const double *rows, int n, double cols) {
    double all_rows = 0;
    for (int i = 0; i < n; i++) all_rows += rows[i];
    if (!o->formats) {
        matvec_cost(b, all_rows, cols, o->weights);
        return;
    }
    struct block_cost sum = {0};
    for (int l = 0; l < c->n_layers && l < o->formats->n_layers; l++)
        for (int i = 0; i < n; i++) {
            struct block_cost p = {0};
            matvec_cost(&p, rows[i], cols, o->formats->layer[l][parts[i]]);
            sum.flops += p.flops, sum.weight_bytes += p.weight_bytes;
            quant_add(&sum, &p);
        }
    const double layers = c->n_layers > 0 ? c->n_layers : 1;
    b->flops = sum.flops / layers, b->weight_bytes = sum.weight_bytes / layers;
    quant_scale(&sum, 1, layers);
    quant_add(b, &sum);
    b->act_bytes = 4 * (cols + all_rows);
}

/* Passes over the vocabulary row, as kernels/sampler.c's sampler_pick makes them:
 * greedy: one read pass (the max and its first index together). chain: the softmax reads the logits twice
 * (max; exp and sum, writing the exp values); the fast top-p's first pass reads them, writes the
 * probabilities (times the reciprocal sum) and collects the candidates above its pre-filter level, its last
 * pass reads the probabilities and writes the filtered, renormalized row with the draw's block sums. That
 * is 4 reads and 3 writes of vocab f32. Left out so the prediction stays a lower bound: the histogram's
 * gather of the candidates and the cut bin's tokens (data-dependent: a few tokens on a peaked row, most of
 * the row on a flat one), and the draw's walk over the block sums and through one block. FLOPs per token:
 * subtract, scale, exp, add (softmax), the normalizing and the renormalizing multiplies: 6. */
static void sampler_cost(struct block_cost *b, double vocab, enum sampler_variant v) {
    if (v == SAMPLER_VARIANT_GREEDY) {
        b->flops = 0;
        b->act_bytes = 4 * vocab;
    } else {
        b->flops = 6 * vocab;
        b->act_bytes = 4 * vocab * (4 + 3);
    }
}

void cost_block(const struct qwen3_config *c, const struct cost_opts *o, enum block_id id, long context,
                enum sampler_variant sampler, struct block_cost *out) {
    cost_block_on(c, o, NULL, id, context, sampler, out);
}

/* Column panels block id's matrix of type t is stored in (model/weights.h, kernels/col_panels.h): the
 * layers' projections by their width, the LM head and every other block 1. */
static int block_panels(const struct qwen3_config *c, enum fr_dtype t, enum block_id id) {
    int cols = 0;
    switch (id) {
    case BLOCK_QKV_PROJ:
    case BLOCK_GATE_UP_PROJ:
        cols = c->hidden;
        break;
    case BLOCK_O_PROJ:
        cols = c->n_heads * c->head_dim;
        break;
    case BLOCK_DOWN_PROJ:
        cols = c->intermediate;
        break;
    default:
        return 1;
    }
    return col_panel_count(cols, col_panel_width(t, cols));
}

void cost_block_on(const struct qwen3_config *c, const struct cost_opts *o, const struct cost_caches *m,
                   enum block_id id, long context, enum sampler_variant sampler, struct block_cost *out) {
    memset(out, 0, sizeof *out);
    const struct block_desc *d = &block_table()[id];
    const double h = c->hidden, hd = c->head_dim, I = c->intermediate, V = c->vocab;
    const double q = (double)c->n_heads * hd, kv = (double)c->n_kv_heads * hd;
    const double ks = (double)fr_dtype_size(o->kv);
    const enum fr_dtype wt = o->weights;
    const double n_pos = (double)context + 1;
    struct block_cost b = {0};
    /* per call: the activations' working set, kernel calls, forks, exps, whether it runs on the team */
    double act_ws = 0, kcalls = 0, forks = 0, barriers = 0, exps = 0;
    int parallel = 0, exps_parallel = 0;
    switch (id) {
    case BLOCK_EMBED: { /* one row, widened to f32 (a block format's dequantised: d * q, a multiply a weight)
                         */
        const enum fr_dtype et = o->formats ? o->formats->embed : wt;
        b.weight_bytes = h * weight_size(et);
        b.flops = fr_dtype_is_quant(et) ? h : 0;
        b.wtypes = 1u << et;
        b.act_bytes = 4 * h;
        act_ws = 4 * h, kcalls = 1;
        break;
    }
    case BLOCK_ATTN_NORM:
    case BLOCK_MLP_NORM:
    case BLOCK_FINAL_NORM:
        norm_cost(&b, h);
        act_ws = 8 * h, kcalls = 1; /* reads x, writes xb */
        break;
    case BLOCK_QKV_PROJ: {
        const enum wpart parts[] = {WPART_Q, WPART_K, WPART_V};
        const double rows[] = {q, kv, kv};
        layer_matvec_cost(&b, c, o, parts, rows, 3, h);
        act_ws = 4 * (h + q + 2 * kv);
        parallel = matvec_opens_team((int)(q + 2 * kv), (int)h);
        break;
    }
    case BLOCK_QK_NORM: /* every q and k head normed over head_dim, two f32 weight vectors */
        b.flops = 4 * (q + kv) + (c->n_heads + c->n_kv_heads);
        b.weight_bytes = 2 * 4 * hd;
        b.act_bytes = 4 * 2 * (q + kv);
        act_ws = 4 * (q + kv), kcalls = c->n_heads + c->n_kv_heads; /* in place; one rmsnorm per head */
        break;
    case BLOCK_ROPE: /* 3 FLOPs per element (2 mul + 1 add per output), reads the cos and sin tables */
        b.flops = 3 * (q + kv);
        b.act_bytes = 4 * 2 * (q + kv) + 4 * hd;
        act_ws = 4 * (q + kv) + 4 * hd, kcalls = 2; /* in place; q, then k */
        break;
    case BLOCK_KV_APPEND: /* read k and v in f32, write them in the cache type */
        b.kv_write_bytes = 2 * kv * ks;
        b.act_bytes = 4 * 2 * kv;
        act_ws = 8 * kv, kcalls = 2 * c->n_kv_heads; /* the cache is head-major: K and V per KV head */
        break;
    case BLOCK_ATTENTION: /* scores q.k (2 hd), softmax (sub, exp, add, scale: 4), weights . V (2 hd) */
        b.flops = c->n_heads * n_pos * (4 * hd + 4);
        b.kv_read_bytes = 2 * n_pos * kv * ks;
        b.act_bytes = 4 * (q + q) + 4 * 5 * c->n_heads * n_pos;
        act_ws = 4 * (q + q) + 4.0 * c->n_heads * COST_ATT_BLOCK, parallel = 1;
        exps = c->n_heads * n_pos;
        break;
    case BLOCK_O_PROJ: /* matvec (writes h) plus the residual add: read both h vectors, add h, write h */
    case BLOCK_DOWN_PROJ: {
        const double cols = id == BLOCK_O_PROJ ? q : I;
        const enum wpart part = id == BLOCK_O_PROJ ? WPART_O : WPART_DOWN;
        layer_matvec_cost(&b, c, o, &part, &h, 1, cols);
        b.flops += h;
        b.act_bytes += 4 * 3 * h;
        act_ws = 4 * (cols + 2 * h), kcalls = 1; /* the residual add is a call of its own */
        parallel = matvec_opens_team((int)h, (int)cols);
        break;
    }
    case BLOCK_GATE_UP_PROJ: {
        const enum wpart parts[] = {WPART_GATE, WPART_UP};
        const double rows[] = {I, I};
        layer_matvec_cost(&b, c, o, parts, rows, 2, h);
        act_ws = 4 * (h + 2 * I);
        parallel = matvec_opens_team((int)(2 * I), (int)h);
        break;
    }
    case BLOCK_SWIGLU: /* silu(g) * u = g / (1 + exp(-g)) * u: neg-exp, add, divide, multiply */
        b.flops = 4 * I;
        b.act_bytes = 4 * 3 * I;
        act_ws = 4 * 3 * I, kcalls = 1, exps = I;
        break;
    case BLOCK_LM_HEAD: /* tied: streams the embedding matrix; untied: lm_head.weight, same shape */
        matvec_cost(&b, V, h, o->formats ? o->formats->lm_head : wt);
        act_ws = 4 * (h + V);
        parallel = matvec_opens_team((int)V, (int)h);
        break;
    case BLOCK_SAMPLER:
        sampler_cost(&b, V, sampler);
        act_ws = sampler == SAMPLER_VARIANT_GREEDY ? 4 * V : 8 * V, kcalls = 1;
        exps = sampler == SAMPLER_VARIANT_GREEDY ? 0 : V;
        /* the softmax's passes (the exps) split over the team from SAMPLER_SOFTMAX_SPLIT_MIN tokens, in a
         * region of their own; the filter and the draw stay on one thread */
        exps_parallel = exps > 0 && m && m->threads > 1 && V >= SAMPLER_SOFTMAX_SPLIT_MIN;
        if (exps_parallel) forks = 1, kcalls = 0;
        break;
    case BLOCK_COUNT:
        break;
    }
    /* Every weight-reading block is one matvec, attention one call too: a fork when it opens a region of its
     * own, else a plain call (a team of one opens none; on the step's kernel team a call meets the team at
     * its barrier). A matrix stored as column panels is read one panel at a time, each panel after the
     * first one more work-share that ends at the team's barrier: a plain call. */
    if (d->reads_weights || id == BLOCK_ATTENTION) {
        if (parallel && !(m && (m->step_team || m->threads <= 1)))
            forks += 1;
        else
            kcalls += 1;
        /* on a team of two or more each work-share ends at the team's spin barrier, which costs more than a
         * call (ceilings.h CEILING_BARRIER) */
        if (parallel && m && m->step_team && m->threads > 1)
            barriers = id == BLOCK_ATTENTION
                           ? attention_team_syncs((int)n_pos, c->n_heads, c->n_kv_heads, c->head_dim)
                           : block_panels(c, o->weights, id);
        else
            kcalls += block_panels(c, o->weights, id) - 1;
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
    out->exps = exps * calls;
    quant_scale(&b, calls, 1);
    quant_add(out, &b);
    out->kernel_calls = kcalls * calls;
    out->forks = forks * calls;
    out->barriers = barriers * calls;
    out->parallel = parallel && m && m->threads > 1;
    out->sampler_exp = id == BLOCK_SAMPLER;
    out->exps_parallel = exps_parallel;
    const double team = out->parallel ? m->threads : 1;
    out->level_bytes[COST_LEVEL_DRAM] = out->dram_bytes;
    out->level_bytes[level_for(m, act_ws / team)] += out->act_bytes;
    if (!d->reads_weights) out->level_bytes[level_for(m, out->weight_bytes)] += out->weight_bytes;
    out->level_bytes[level_for(m, out->kv_write_bytes)] += out->kv_write_bytes;
}

/* t += b, every count (id, calls and parallel untouched). */
void cost_block_add(struct block_cost *t, const struct block_cost *b) {
    t->flops += b->flops;
    t->bytes += b->bytes;
    t->weight_bytes += b->weight_bytes;
    t->kv_read_bytes += b->kv_read_bytes;
    t->kv_write_bytes += b->kv_write_bytes;
    t->act_bytes += b->act_bytes;
    t->dram_bytes += b->dram_bytes;
    t->cache_bytes += b->cache_bytes;
    for (int l = 0; l < COST_LEVEL_COUNT; l++) t->level_bytes[l] += b->level_bytes[l];
    t->exps += b->exps;
    quant_add(t, b);
    t->kernel_calls += b->kernel_calls;
    t->forks += b->forks;
    t->barriers += b->barriers;
}

void cost_step(const struct qwen3_config *c, const struct cost_opts *o, long context,
               enum sampler_variant sampler, struct step_cost *out) {
    cost_step_on(c, o, NULL, context, sampler, out);
}

void cost_step_on(const struct qwen3_config *c, const struct cost_opts *o, const struct cost_caches *m,
                  long context, enum sampler_variant sampler, struct step_cost *out) {
    memset(out, 0, sizeof *out);
    out->context = context;
    for (int i = 0; i < BLOCK_COUNT; i++) {
        struct block_cost *b = &out->blocks[i];
        cost_block_on(c, o, m, (enum block_id)i, context, sampler, b);
        cost_block_add(&out->total, b);
    }
}

/* Per-level bytes of a batched block: everything B times except a matrix's weights, which stay one DRAM
 * stream (its per-token activations scale like every other block's). Working sets are not re-levelled. */
void cost_step_batch(const struct qwen3_config *c, const struct cost_opts *o, long context, int batch,
                     enum sampler_variant sampler, struct step_cost *out) {
    cost_step_batch_on(c, o, NULL, context, batch, sampler, out);
}

void cost_step_batch_on(const struct qwen3_config *c, const struct cost_opts *o, const struct cost_caches *m,
                        long context, int batch, enum sampler_variant sampler, struct step_cost *out) {
    /* a batched step (B > 1, model/decode_batch.c) runs on no kernel team: its GEMMs and attention calls
     * open regions of their own (forks), with no team barrier */
    struct cost_caches off_team;
    if (m && batch > 1) off_team = *m, off_team.step_team = false, m = &off_team;
    cost_step_on(c, o, m, context, sampler, out);
    const double nb = batch > 0 ? batch : 1;
    memset(&out->total, 0, sizeof out->total);
    for (int i = 0; i < BLOCK_COUNT; i++) {
        struct block_cost *b = &out->blocks[i];
        const int shared = block_table()[i].reads_weights; /* a matrix: read once for the whole batch */
        const double w = shared ? b->weight_bytes : 0;
        b->flops *= nb;
        b->weight_bytes = w + (b->weight_bytes - w) * nb;
        b->kv_read_bytes *= nb;
        b->kv_write_bytes *= nb;
        b->act_bytes *= nb;
        b->bytes = b->weight_bytes + b->kv_read_bytes + b->kv_write_bytes + b->act_bytes;
        b->dram_bytes = w + b->kv_read_bytes;
        b->cache_bytes = b->bytes - b->dram_bytes;
        for (int l = 0; l < COST_LEVEL_COUNT; l++) b->level_bytes[l] *= nb;
        b->level_bytes[COST_LEVEL_DRAM] -= w * (nb - 1);
        b->exps *= nb;
        /* the batch's GEMM dequantises a block format into f32; a K-quant's runs its dot product */
        if (nb > 1 && !fr_dtype_is_kquant(o->weights)) quant_scale(b, 0, 1);
        if (!shared) b->kernel_calls *= nb, b->forks *= nb, b->barriers *= nb; /* one GEMM call a batch */
        /* a GEMM (B > 1) walks the panels inside each row chunk: no work-share a panel */
        if (shared && nb > 1)
            b->kernel_calls -= (block_panels(c, o->weights, (enum block_id)i) - 1) * b->calls;
        cost_block_add(&out->total, b);
    }
}

void cost_batch_projections(const struct qwen3_config *c, const struct cost_opts *o, long context, int batch,
                            struct block_cost *out) {
    struct step_cost sc;
    cost_step_batch(c, o, context, batch, SAMPLER_VARIANT_GREEDY, &sc);
    memset(out, 0, sizeof *out);
    for (int i = 0; i < BLOCK_COUNT; i++)
        if (block_table()[i].reads_weights) cost_block_add(out, &sc.blocks[i]);
}

/* The step's (or its projections') totals at batch b. */
static void ridge_totals(const struct qwen3_config *c, const struct cost_opts *o, long context,
                         enum sampler_variant sampler, int projections_only, int b, struct block_cost *t) {
    struct step_cost sc;
    if (projections_only) {
        cost_batch_projections(c, o, context, b, t);
        return;
    }
    cost_step_batch(c, o, context, b, sampler, &sc);
    *t = sc.total;
}

double cost_batch_ridge(const struct qwen3_config *c, const struct cost_opts *o, long context,
                        enum sampler_variant sampler, int projections_only, double peak_gflops, double bw_gbs,
                        double cache_gbs) {
    struct block_cost one, two;
    ridge_totals(c, o, context, sampler, projections_only, 1, &one);
    ridge_totals(c, o, context, sampler, projections_only, 2, &two);
    double mem1 = one.dram_bytes / (bw_gbs * 1e9) + one.cache_bytes / (cache_gbs * 1e9);
    double mem2 = two.dram_bytes / (bw_gbs * 1e9) + two.cache_bytes / (cache_gbs * 1e9);
    double m1 = mem2 - mem1, m0 = mem1 - m1, c1 = one.flops / (peak_gflops * 1e9);
    return c1 > m1 ? m0 / (c1 - m1) : INFINITY;
}

uint64_t cost_params_from_blocks(const struct qwen3_config *c) {
    /* With f32 weights everywhere, weight bytes / 4 are weight elements read per step. The embed block reads
     * one row of the embedding; the embedding itself is a parameter whether or not the LM head reads it. */
    const struct cost_opts f32 = {FR_DTYPE_F32, FR_DTYPE_F32, NULL};
    uint64_t elements = 0;
    for (int i = 0; i < BLOCK_COUNT; i++) {
        struct block_cost b;
        cost_block(c, &f32, (enum block_id)i, 0, SAMPLER_VARIANT_GREEDY, &b);
        elements += (uint64_t)(b.weight_bytes / 4);
    }
    uint64_t embed_row = (uint64_t)c->hidden, embed = (uint64_t)c->vocab * (uint64_t)c->hidden;
    return elements - embed_row + (c->tied_embeddings ? 0 : embed);
}
