/* Layer: model/ (includes kernels/ only).
 * prefill: prompt processing, the phase before decode. n prompt tokens at positions [depth, depth + n) go
 * through every layer in one pass: the projections as GEMMs over the n rows (kernels/gemm.h, each matrix read
 * once for the whole prompt, as decode_batch's sequences share one), causal attention over the prompt by
 * tiles (kernels/attention_prefill.h), the per-token blocks row by row on the single-sequence code
 * (decode_block_run), spread over the threads, and the KV cache written for all n positions. Only the last
 * position goes through final_norm and the LM head, as engines do: its logits are the only ones sampled.
 * The state is one decode_state whose activation buffers are [capacity][dim] arrays, so that after a
 * prefill the same state decodes on (decode_step on row 0's buffers, the cache filled to depth + n).
 * Checked in tests/test_prefill.c against feeding the same tokens one by one through decode_step. */
#ifndef FR_PREFILL_H
#define FR_PREFILL_H

#include <stdint.h>

#include "model/decode.h"

struct prefill_state {
    struct decode_state st;  /* the sequence: its KV cache, tables, sampler scratch; buffers are rows 0 */
    struct decode_rows rows; /* [capacity][dim] arrays, owned; logits one row (the last position's) */
    int capacity;            /* prompt tokens one call can take */
};

/* Sets up a prefill of up to `capacity` tokens over weights w (borrowed), a KV cache of kvtype for max_pos
 * positions, projections on `backend` with `threads` threads, planned for the caches blk (may be NULL).
 * Fails with a one-line message when the backend cannot run w's GEMM at that many rows, on a bad shape, or
 * when the buffers do not fit in MemAvailable. On failure the state is left freed. */
int prefill_init(struct prefill_state *p, const struct qwen3_weights *w, int max_pos, int capacity,
                 enum fr_dtype kvtype, enum matvec_backend backend, int threads,
                 const struct gemm_blocking *blk, struct fr_err *err);
void prefill_free(struct prefill_state *p);

/* Bytes the state needs beyond the weights; 0 on overflow. */
size_t prefill_bytes(const struct qwen3_config *cfg, int max_pos, int capacity, enum fr_dtype kvtype);

/* Prefills tokens[0, n) at positions [depth, depth + n): the cache holds positions [0, depth) already (a
 * previous prefill or decode, or kv_cache_fill_random). Logits of the last position in p->st.logits. The
 * observer (may be NULL) sees begin/end once around each block of each layer, for all rows. Refuses in one
 * line: n outside [1, capacity], depth < 0, depth + n beyond the cache, a token outside the vocabulary. */
int prefill_run(struct prefill_state *p, const int *tokens, int n, int depth,
                const struct decode_observer *obs, struct fr_err *err);

#endif
