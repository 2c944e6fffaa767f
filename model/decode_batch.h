/* Layer: model/ (includes kernels/ only).
 * decode_batch: B independent sequences advancing one token each per step, in lockstep, each with its own KV
 * cache and position. The per-token blocks (embed, norms, RoPE, KV append, attention, SwiGLU, the sampler)
 * run per sequence through decode_block_run on that sequence's decode_state, the same code as the
 * single-sequence step; the projections and the LM head run once for the whole batch as a GEMM
 * (kernels/gemm.h), so each weight is read once per step for all B tokens. The states' activation buffers
 * are the rows of [batch][dim] arrays owned here, which is what lets one GEMM read every sequence's input
 * and write every sequence's output in place. B = 1 is exactly decode_step. Checked in
 * tests/test_decode_batch.c: each sequence's logits against the single-sequence step's. */
#ifndef FR_DECODE_BATCH_H
#define FR_DECODE_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "model/decode.h"

struct decode_batch {
    int batch;                /* sequences a step advances: the first `batch` of `capacity` */
    int capacity;             /* sequences set up */
    struct decode_state *seq; /* [batch]: sequence s's KV cache, tables, and rows s of the arrays below */
    struct decode_rows rows;  /* [batch][hidden], [batch][q_dim + 2 kv_dim], ... [batch][vocab], owned */
    int n_init;               /* states set up so far (for freeing after a failed init) */
};

/* Activation rows for `rows` tokens, each array [rows][dim], the logits [logit_rows][vocab] (a prefill keeps
 * one row of logits, the last position's). Zeroed. Returns -1 (nothing left allocated) when out of memory. */
int decode_rows_alloc(struct decode_rows *r, const struct qwen3_config *cfg, int rows, int logit_rows);
void decode_rows_free(struct decode_rows *r);
/* The rows of token `row` of `all` (the logits of row logit_row): what one state's buffers are. */
void decode_rows_at(const struct decode_rows *all, const struct qwen3_config *cfg, int row, int logit_row,
                    struct decode_rows *out);

/* Bytes a batch needs beyond the weights: every sequence's KV cache for max_pos positions, activation rows,
 * RoPE tables, attention and sampler scratch. 0 on overflow. */
size_t decode_batch_bytes(const struct qwen3_config *cfg, int batch, int max_pos, enum fr_dtype kvtype);

/* Sets up `batch` sequences over weights w (borrowed), each with a KV cache of kvtype for max_pos positions,
 * projections on `backend` and `threads` threads planned for the cache sizes blk (may be NULL). Refuses up
 * front, naming the bytes, when decode_batch_bytes exceeds MemAvailable; fails like decode_state_init
 * otherwise, and when the backend cannot run a GEMM of w's dtype. On failure the batch is left freed. */
int decode_batch_init(struct decode_batch *bt, const struct qwen3_weights *w, int batch, int max_pos,
                      enum fr_dtype kvtype, enum matvec_backend backend, int threads,
                      const struct gemm_blocking *blk, struct fr_err *err);
void decode_batch_free(struct decode_batch *bt);

/* Steps advance the first `batch` sequences only (1 <= batch <= capacity), so a sweep over batch sizes sets
 * up and fills its caches once. Returns -1 with err set outside that range. */
int decode_batch_set_active(struct decode_batch *bt, int batch, struct fr_err *err);

/* Rebinds every sequence to weights w of the same shape on `backend` (the KV caches are kept), e.g. to run
 * the same caches on f32 weights with OpenBLAS. Fails when the shape differs or the backend cannot run a
 * GEMM of w's dtype at the capacity. */
int decode_batch_set_weights(struct decode_batch *bt, const struct qwen3_weights *w,
                             enum matvec_backend backend, struct fr_err *err);

/* One step: sequence s takes tokens[s] at position pos[s]; logits of s in bt->seq[s].logits. The observer
 * (may be NULL) sees begin/end once around each block for the whole batch. */
int decode_batch_step(struct decode_batch *bt, const int *tokens, const int *pos,
                      const struct decode_observer *obs, struct fr_err *err);

/* Samples one token per sequence from its logits (sequence s draws from the stream of seed + s at `step`),
 * bracketed once by the observer as BLOCK_SAMPLER. */
int decode_batch_sample(struct decode_batch *bt, const struct sampler_params *params, uint64_t step,
                        const struct decode_observer *obs, int *tokens, struct fr_err *err);

#endif
