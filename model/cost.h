/* The analytic cost model: FLOPs and bytes of every block of one decode step at batch 1, from the config.
 * Bytes are what the kernels actually stream, split by kind; the formulas are in cost.c, one per block,
 * and `forge-roofline predict` prints every term so a reviewer can audit them. */
#ifndef FR_COST_H
#define FR_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/dtype.h"
#include "model/blocks.h"
#include "model/config.h"
#include "model/weight_formats.h"

/* Memory levels a block's bytes are charged to, in the order of roofline/roofline.h's terms. */
enum cost_level { COST_LEVEL_DRAM, COST_LEVEL_L1, COST_LEVEL_L2, COST_LEVEL_L3, COST_LEVEL_COUNT };
const char *cost_level_name(enum cost_level l); /* "DRAM", "L1", "L2", "L3" */

struct cost_opts {
    enum fr_dtype weights; /* matrices and the embedding; norm weights are f32 (widened at load) */
    enum fr_dtype kv;      /* KV cache element type */
    /* each matrix's own type (model/weight_formats.h), NULL: every one `weights`. A block's bytes and FLOPs
     * are then summed over its layers' own types, and its quantised work kept per type (block_cost
     * quant_type_weights), each type priced on its own measured roof */
    const struct weight_formats *formats;
};

/* The machine the per-level split is for. */
struct cost_caches {
    /* Capacity of the cache levels one core sees, from hwloc: L1d and L2 of one core (private), the whole
     * L3 instance (shared). A level of 0 is absent. */
    double bytes[3];
    int threads;    /* the team a parallel block runs on (0: 1) */
    bool step_team; /* the step runs on one kernel team (model/decode.h decode_runs_team): a parallel
                     * block's call meets the team at a barrier instead of opening a region (a fork) */
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
    /* The cache-aware split (cost_level order): matrix weights and KV reads from DRAM; every other byte at
     * the fastest level whose capacity holds its working set: the activations one call touches (per
     * thread for a block that runs on the team), and the small weights (norm vectors, the embedding row)
     * and the new K and V of all the step's calls together (one set per layer, all live in a repetition).
     * A working set larger than the L3 is charged to DRAM. Sums to `bytes`. */
    double level_bytes[COST_LEVEL_COUNT];
    double exps;         /* exponentials: softmax (attention, sampler), SiLU (swiglu) */
    double kernel_calls; /* kernel calls per step that open no parallel region */
    double forks;        /* kernel calls per step that open an OpenMP parallel region */
    double barriers;     /* barriers of the step's kernel team met inside its calls per step (a matvec's
                          * work-share a column panel, attention's syncs); 0 off a team */
    int parallel;        /* runs on the whole team (matvec, attention): all-threads ceilings apply */
    int sampler_exp;     /* its exps are the sampler's own exp (sampler_exp_row), not the kernels' vexp */
    int exps_parallel;   /* its exps run on the whole team (the sampler's softmax): all-threads exp ceiling */
    /* A quantised matrix (Q8_0, Q4_0, a K-quant) at batch 1: its weights, and the part of flops its matvec
     * does (2 a weight plus the dequantisation), which runs on the format's own measured roof (roofline.h
     * ROOFLINE_TERM_INT8), not the f32 FMA's. 0 otherwise, and in a batch of a block format (its GEMM works
     * in f32). The totals, then the same per type (indexed by enum fr_dtype, summing to the totals): a
     * mixed model's Q6_K layers run on Q6_K's roof, its Q4_K layers on Q4_K's. */
    double quant_weights, quant_flops;
    double quant_type_weights[FR_DTYPE_COUNT], quant_type_flops[FR_DTYPE_COUNT];
    /* The types of the matrices (the embedding row) the block reads, bit 1u << t for enum fr_dtype t; 0 for
     * a block that reads none. cost_block_format names them. */
    unsigned wtypes;
};

/* The format a block ran in, as report.md, blocks.csv and run.json name it: its matrices' types in enum
 * order joined by '+' ("bf16", "q4_k", "q4_k+q6_k" for a mixed block); for a block that reads no matrix the
 * type of what it streams: the KV cache's (kv) for one that reads or writes the cache (attention,
 * kv_append), "f32" for the rest (activations, norm weights). Writes at most len bytes, NUL included. */
#define COST_FORMAT_LEN 32 /* the longest name, every quantised type: "q8_0+q4_0+q4_k+q5_k+q6_k" (25) */
void cost_block_format(const struct block_cost *b, enum fr_dtype kv, char *buf, size_t len);

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
/* The same with the per-level split for a machine's caches. cost_block and cost_step pass NULL: capacities
 * unknown, every cache-resident byte is charged to L2 (the two-level model) and no block runs on a team. */
void cost_block_on(const struct qwen3_config *cfg, const struct cost_opts *opts, const struct cost_caches *m,
                   enum block_id id, long context, enum sampler_variant sampler, struct block_cost *out);
void cost_step_on(const struct qwen3_config *cfg, const struct cost_opts *opts, const struct cost_caches *m,
                  long context, enum sampler_variant sampler, struct step_cost *out);
/* t += b, every count summed (id, calls and the flags left as they are): a step's or a prompt's total. */
void cost_block_add(struct block_cost *t, const struct block_cost *b);

/* Cost of one batched step: `batch` sequences advance one token each at context T (model/decode_batch.h).
 * Every per-token figure is multiplied by batch, except the matrix weights (qkv, o, gate_up, down, LM head):
 * the batch's GEMM reads them once per step, whatever the batch. batch 1 is cost_step. */
void cost_step_batch(const struct qwen3_config *cfg, const struct cost_opts *opts, long context, int batch,
                     enum sampler_variant sampler, struct step_cost *out);
/* The same with the per-level split for a machine's caches (cost_step_on's rules, per sequence: each
 * per-token block call touches one sequence's rows, so its working set is B = 1's; the level bytes scale with
 * B except the matrices' one DRAM stream). m NULL: cost_step_batch. */
void cost_step_batch_on(const struct qwen3_config *cfg, const struct cost_opts *opts,
                        const struct cost_caches *m, long context, int batch, enum sampler_variant sampler,
                        struct step_cost *out);

/* The predicted ridge batch: the batch size at which the compute roof and the memory roof of a batched step
 * (projections_only: of its projection blocks alone, the GEMMs, whose bytes are the weights) cross, for peak
 * FLOP/s peak_gflops, DRAM read bandwidth bw_gbs and cache bandwidth cache_gbs (the two-level memory time of
 * roofline_predicted_split_s: DRAM bytes / bw + cache-resident bytes / cache_gbs). Both times are linear in
 * the batch, mem(B) = m0 + m1 B and compute(B) = c1 B, so the ridge is m0 / (c1 - m1); INFINITY when c1 <= m1
 * (the per-sequence bytes alone, KV reads mostly, keep the step memory-bound at any batch). */
double cost_batch_ridge(const struct qwen3_config *cfg, const struct cost_opts *opts, long context,
                        enum sampler_variant sampler, int projections_only, double peak_gflops, double bw_gbs,
                        double cache_gbs);
/* The totals of a batched step's projection blocks (those that read a weight matrix) alone. */
void cost_batch_projections(const struct qwen3_config *cfg, const struct cost_opts *opts, long context,
                            int batch, struct block_cost *out);

/* Prompt processing (model/prefill.h): n prompt tokens at positions [depth, depth + n) through every block in
 * one pass, the LM head and the sampler for the last position only (as engines do: only its logits are
 * sampled). The per-token blocks cost their batch-1 figures summed over the n rows, each at its own context
 * depth + i; the layers' four matrices are read once for all n rows (one GEMM each), their FLOPs and
 * activations n times; attention counts the causal FLOPs a row at position p does over p + 1 positions (the
 * masked part of the diagonal tiles that the kernel also computes is not counted), and reads K and V as its
 * tiles do (kernels/attention_prefill.h prefill_attention_kv_positions), writing n new rows; final_norm,
 * lm_head and the sampler run once. n = 1 is cost_step at context depth. */
struct prefill_cost {
    long prompt_len, depth;
    struct block_cost blocks[BLOCK_COUNT];
    struct block_cost total; /* the sum over blocks (id and calls unused) */
};
void cost_prefill(const struct qwen3_config *cfg, const struct cost_opts *opts, long prompt_len, long depth,
                  enum sampler_variant sampler, struct prefill_cost *out);

/* Parameters counted from the block table's weight reads (an independent path to qwen3_param_count). */
uint64_t cost_params_from_blocks(const struct qwen3_config *cfg);
/* KV bytes one cached position adds to each step's reads (all layers, K and V). */
double cost_kv_bytes_per_position(const struct qwen3_config *cfg, enum fr_dtype kv);
/* Arithmetic intensity, FLOPs per byte (0 when bytes are 0). */
double cost_intensity(double flops, double bytes);

#endif
