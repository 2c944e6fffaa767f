/* Layer: model/ (config, cost model, weights, KV cache, the step) includes kernels/ only.
 * decode_state: one Qwen3 decode step composed from the kernels of kernels/kernels.h, block by block in the
 * order of model/blocks.h. The step knows nothing of timers or counters: a harness that wants them passes a
 * decode_observer, whose begin/end bracket every block. Call the step from one thread: it runs its blocks on
 * one kernel team of the OpenMP threads (decode_runs_team), or the kernels spread their own work. */
#ifndef FR_DECODE_H
#define FR_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/fr_err.h"
#include "kernels/gemm.h"
#include "kernels/kernels.h"
#include "kernels/mem_span.h"
#include "kernels/sampler.h"
#include "model/blocks.h"
#include "model/config.h"
#include "model/kv_cache.h"
#include "model/weights.h"

/* layer is -1 for the once-per-step blocks (embed, final_norm, lm_head, sampler). */
struct decode_observer {
    void (*begin)(void *ctx, enum block_id b, int layer);
    void (*end)(void *ctx, enum block_id b, int layer);
    void *ctx;
};

struct decode_state {
    struct qwen3_config cfg;       /* shape (a copy of the weights' config) */
    const struct qwen3_weights *w; /* borrowed: several states may share one set of weights */
    struct kv_cache kv;            /* owned: [layer][n_kv_heads][max_pos][head_dim] K and V */
    enum matvec_backend backend;   /* forge kernels or OpenBLAS for every matvec */
    int threads;                   /* the run's threads (--threads): the step's team and every kernel's */
    int max_pos;                   /* positions the cache and rope tables hold */
    int q_dim, kv_dim;             /* n_heads * head_dim, n_kv_heads * head_dim */
    float eps;                     /* rms_norm_eps */

    /* activations of the current position */
    float *x;       /* [hidden] residual stream */
    float *xb;      /* [hidden] RMSNorm output feeding a projection (and the LM head) */
    float *qkv;     /* [q_dim + 2 * kv_dim]: q heads, then k heads, then v heads */
    float *att;     /* [q_dim] attention output, one head_dim vector per query head */
    float *proj;    /* [hidden] o_proj or down_proj output before the residual add */
    float *gate_up; /* [2 * intermediate]: gate, then up */
    float *hb;      /* [intermediate] silu(gate) * up */
    float *logits;  /* [vocab] */

    float *rope_cos;       /* [max_pos][head_dim / 2] */
    float *rope_sin;       /* [max_pos][head_dim / 2] */
    float *att_scratch;    /* [n_heads][max_pos] attention scores */
    void *sampler_scratch; /* sampler_scratch_bytes(vocab) */

    /* inputs and outputs of the blocks that take no position or layer */
    int token;                            /* BLOCK_EMBED's input token */
    struct sampler_params sampler_params; /* BLOCK_SAMPLER's parameters */
    const float *sample_logits;           /* [vocab] the row BLOCK_SAMPLER reads; NULL: logits. The full run
                                             points it at a fixed prompt's logits so that every timed sampler
                                             call sees the model's own distribution */
    uint64_t sample_step;                 /* BLOCK_SAMPLER's step counter (the draw's stream) */
    int sampled_token;                    /* BLOCK_SAMPLER's output */

    struct fr_err err; /* why the last decode_block_run failed */

    struct gemm_blocking
        blocking;      /* cache sizes the projections' GEMM plans for (batched steps); 0: defaults */
    int rows_borrowed; /* x .. logits point into a batch's rows (decode_state_init_rows) */
};

/* Activation buffers a caller provides instead of the state's own: a batch of states whose rows are the
 * rows of [batch][dim] arrays, so that one GEMM serves the whole batch (model/decode_batch.h). */
struct decode_rows {
    float *x, *xb, *qkv, *att, *proj, *gate_up, *hb, *logits;
};

/* Sets up a state for weights w (kept by pointer), a KV cache of kvtype for max_pos positions, the matvec
 * backend and the run's thread count (at least 1). Fails with a one-line message on a bad shape (heads not a
 * multiple of KV heads, odd head_dim), max_pos outside [1, max_context], a backend that cannot run w's dtype,
 * or too little memory. On failure the state is left freed. */
int decode_state_init(struct decode_state *st, const struct qwen3_weights *w, int max_pos,
                      enum fr_dtype kvtype, enum matvec_backend backend, int threads, struct fr_err *err);
void decode_state_free(struct decode_state *st);
/* The same, with the activation buffers of `rows` (sized as decode_state's, borrowed: never freed here). */
int decode_state_init_rows(struct decode_state *st, const struct qwen3_weights *w, int max_pos,
                           enum fr_dtype kvtype, enum matvec_backend backend, int threads,
                           const struct decode_rows *rows, struct fr_err *err);

/* A projection block (qkv_proj, o_proj, gate_up_proj, down_proj, lm_head) on a state's buffers: its weight
 * matrix [rows][cols], input [cols] and output [rows]; residual: the output is then added into x. */
struct decode_projection {
    const float *in;
    float *out;
    int rows, cols;
    int residual;
    int n_runs; /* the matrix's runs of rows of one type (model/weights.h), each a matvec of its own */
    struct qwen3_run runs[QWEN3_MAX_RUNS];
};
/* Fills p for block b at `layer`; returns -1 when b is not a projection block. */
int decode_projection_of(const struct decode_state *st, enum block_id b, int layer,
                         struct decode_projection *p);
/* Runs projection block b for `batch` states whose buffers are consecutive rows of [batch][dim] arrays
 * starting at st's (batch 1: st alone, the matvec of today's step). Returns 0, or -1 with st->err set. */
int decode_projection_run(struct decode_state *st, enum block_id b, int layer, int batch);
/* Whether backend runs every matrix type of w; else *why (naming the type) and false. */
bool decode_backend_runs(enum matvec_backend backend, const struct qwen3_weights *w, int batch, char *why,
                         size_t len);

/* Runs ONE block on the state's buffers: layer in [0, n_layers) for per-layer blocks (ignored for the
 * others), pos in [0, max_pos) for rope, kv_append and attention (attention reads positions [0, pos]).
 * BLOCK_EMBED reads st->token, BLOCK_SAMPLER st->sampler_params and st->sample_step. Returns 0, or -1
 * with the reason in st->err (bad layer, position or token; a sampler error). */
int decode_block_run(struct decode_state *st, enum block_id b, int layer, int pos);

/* Runs block b as one step does: once for each layer (per-layer blocks) or once, at position pos; on the
 * step's kernel team when the step runs on one (decode_runs_team). Returns 0, or -1 with st->err set. */
int decode_block_layers(struct decode_state *st, enum block_id b, int pos);

/* A copy of the activation rows of the current position (x, xb, qkv, att, proj, gate_up, hb; not the
 * logits, which no block updates in place). A block timed alone runs over and over on one state, and the
 * in-place blocks (qk_norm, rope, the residual adds) would each take their own last output as input: 200
 * repetitions of qk_norm multiply q by the same norm gains 200 times over and push most of q and k below
 * FLT_MIN, where Intel cores take a microcode assist per operation (docs/tuning/block-inputs.md). Restoring
 * the copy before every repetition gives each one the same inputs, as every layer of a step has. */
struct decode_activations {
    float *buf; /* [n] the rows, in the order above */
    size_t n;
};
/* Copies the state's rows into a (allocated here). Returns -1 with st->err set on allocation failure. */
int decode_activations_save(struct decode_state *st, struct decode_activations *a);
void decode_activations_restore(struct decode_state *st, const struct decode_activations *a);
void decode_activations_free(struct decode_activations *a);

/* Where block b streams from memory in one step at position pos, one span per contiguous run: each layer's
 * matrix of a projection (the LM head's one), each layer's and KV head's K rows and V rows [0, pos] for
 * attention; none for the other blocks. Writes the first `max` spans to out (NULL when max is 0) and
 * returns how many there are; their bytes add up to the cost model's DRAM bytes of the block. */
int decode_block_spans(const struct decode_state *st, enum block_id b, int pos, struct mem_span *out,
                       int max);

/* Whether the step runs its blocks on one kernel team (kernels/team.h): the forge backend on two threads or
 * more, no more than the processors it may run on. One fork and join a step, the projections and attention
 * splitting their work over the team and meeting at its spin barrier, the other blocks on thread 0. Called
 * from inside a parallel region, the step runs on the calling thread as before. */
bool decode_runs_team(enum matvec_backend backend, int threads);

/* One token at position pos through embed, every layer and the LM head; logits in st->logits. The
 * observer (may be NULL) sees begin/end around every block, always on the calling thread. */
int decode_step(struct decode_state *st, int token, int pos, const struct decode_observer *obs,
                struct fr_err *err);

/* Picks the next token from st->logits with sampler_pick (greedy when temperature is 0), bracketed by the
 * observer as BLOCK_SAMPLER. */
int decode_sample(struct decode_state *st, const struct sampler_params *params, uint64_t step,
                  const struct decode_observer *obs, int *token, struct fr_err *err);

#endif
