/* The analytic cost model: FLOPs and bytes of every block of one decode step at batch 1, from the config.
 * Bytes are what the kernels actually stream, split by kind; the formulas are in cost.c, one per block,
 * and `forge-roofline predict` prints every term so a reviewer can audit them. */
#ifndef FR_COST_H
#define FR_COST_H

#include <stdint.h>

#include "kernels/dtype.h"
#include "model/blocks.h"
#include "model/config.h"

struct cost_opts {
    enum fr_dtype weights; /* matrices and the embedding; norm weights are f32 (widened at load) */
    enum fr_dtype kv;      /* KV cache element type */
};

/* One block over one decode step (all its calls). Counts are exact integers held in doubles (< 2^53). */
struct block_cost {
    enum block_id id;
    int calls; /* per step: 1 or n_layers */
    double flops;
    double weight_bytes;   /* weights read */
    double kv_read_bytes;  /* KV cache read */
    double kv_write_bytes; /* KV cache written */
    double act_bytes;      /* activations read + written (f32) */
    double bytes;          /* sum of the four */
    /* The same bytes split by where the real step finds them: matrix weights (blocks that read weights)
     * and KV reads stream from DRAM; norm weights, the new K and V, and activations stay in cache. */
    double dram_bytes;
    double cache_bytes;
};

/* Sampler variants: what the sampler block costs in passes over the logits row. */
enum sampler_variant {
    SAMPLER_VARIANT_GREEDY, /* argmax */
    SAMPLER_VARIANT_CHAIN,  /* softmax(logits / T) -> fast top-p -> seeded draw */
    SAMPLER_VARIANT_COUNT
};
const char *cost_sampler_variant_name(enum sampler_variant v);

struct step_cost {
    long context; /* tokens already cached (T); the step attends over T + 1 positions */
    struct block_cost blocks[BLOCK_COUNT];
    struct block_cost total; /* the sum over blocks (id and calls unused) */
};

/* Cost of one block over a step at context T (sampler: the given variant). */
void cost_block(const struct qwen3_config *cfg, const struct cost_opts *opts, enum block_id id, long context,
                enum sampler_variant sampler, struct block_cost *out);
/* Cost of a whole step: every block, summed. */
void cost_step(const struct qwen3_config *cfg, const struct cost_opts *opts, long context,
               enum sampler_variant sampler, struct step_cost *out);
/* Parameters counted from the block table's weight reads (an independent path to qwen3_param_count). */
uint64_t cost_params_from_blocks(const struct qwen3_config *cfg);
/* KV bytes one cached position adds to each step's reads (all layers, K and V). */
double cost_kv_bytes_per_position(const struct qwen3_config *cfg, enum fr_dtype kv);
/* Arithmetic intensity, FLOPs per byte (0 when bytes are 0). */
double cost_intensity(double flops, double bytes);

#endif
