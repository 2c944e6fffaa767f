/* Layer: kernels/ (bottom of the include graph).
 * prefill_attention: causal GQA attention of a whole prompt at once, for prompt processing (model/prefill.h).
 * Query row i of n sits at position p0 + i and attends over KV positions [0, p0 + i]. The work is cut into
 * tiles of PREFILL_ATT_TILE_Q query positions x the query heads of one KV head (a GQA group), each consuming
 * the KV head's rows in blocks of PREFILL_ATT_TILE_K positions with an online softmax (running max and sum,
 * the output rescaled when the max grows), so no score matrix larger than one tile's (group x TILE_Q x
 * TILE_K floats) ever exists, whatever n is. One tile reads its KV head's rows [0, last position of the tile]
 * once: K and V are read once per query tile, not once per query row as token-by-token decode does. The
 * tile's block of K is widened to f32 once and then serves all group x TILE_Q queries, which is what turns
 * attention from the decode step's memory-bound matvec into a compute-bound small GEMM. */
#ifndef FR_ATTENTION_PREFILL_H
#define FR_ATTENTION_PREFILL_H

#include <stddef.h>

#include "kernels/dtype.h"

/* Query positions per tile: group 2 (Qwen3-0.6B) x 32 = 64 query rows against one 64-position K block keep
 * the tile's scores (16 KiB), its output (32 KiB at head_dim 128) and the widened K and V blocks (64 KiB) in
 * L2. The cost model's KV reads follow these tiles (model/cost.h cost_prefill). */
#define PREFILL_ATT_TILE_Q 32
#define PREFILL_ATT_TILE_K 64

/* out + i * ldo: [n_heads][head_dim] for query row i; q + i * ldq: [n_heads][head_dim]. K and V head-major
 * of kvtype (bf16 or f32), as kernels.h's attention() reads them: KV head j's rows from k_cache + j *
 * head_stride elements, positions [0, p0 + n) already stored. Scores scaled by 1/sqrt(head_dim), softmax in
 * f32. Tiles are handed out dynamically over at most `threads` OpenMP threads (called outside a parallel
 * region; inside one, the calling thread does all). head_dim at most 256. Returns 0, or -1 when the threads'
 * scratch cannot be allocated (out is then undefined). */
int prefill_attention(float *out, size_t ldo, const float *q, size_t ldq, const void *k_cache,
                      const void *v_cache, enum fr_dtype kvtype, int p0, int n, size_t head_stride,
                      int n_heads, int n_kv_heads, int head_dim, int threads);

/* KV positions the tiles read per KV head and layer (K and V each): sum over tiles of p0 + the tile's last
 * row + 1. The cost model's KV bytes (kept beside the kernel so the two cannot drift). */
double prefill_attention_kv_positions(long p0, long n);

#endif
