/* kv_cache: the keys and values of every layer for positions [0, max_pos), bf16 (default) or f32.
 * Layout per layer [position][n_kv_heads][head_dim], the layout kernels/kernels.h's attention() reads, so
 * one layer's first n positions are one contiguous block. */
#ifndef FR_KV_CACHE_H
#define FR_KV_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/dtype.h"
#include "kernels/fr_err.h"
#include "model/config.h"

struct kv_cache {
    enum fr_dtype type;
    int n_layers, max_pos, n_kv_heads, head_dim;
    size_t pos_bytes;   /* one position of one layer: n_kv_heads * head_dim elements */
    size_t layer_bytes; /* max_pos * pos_bytes */
    void *k;            /* [n_layers][max_pos][n_kv_heads][head_dim] */
    void *v;            /* [n_layers][max_pos][n_kv_heads][head_dim] */
};

/* Sizes the cache for max_pos positions of cfg's layers and KV heads (max_pos >= 1). Refuses up front,
 * naming the bytes, when K and V together exceed MemAvailable. On failure *kv is left empty. */
int kv_cache_alloc(struct kv_cache *kv, const struct qwen3_config *cfg, int max_pos, enum fr_dtype type,
                   struct fr_err *err);
void kv_cache_free(struct kv_cache *kv);

/* Bytes K and V need together for max_pos positions; 0 on overflow or a bad shape. */
size_t kv_cache_bytes(const struct qwen3_config *cfg, int max_pos, enum fr_dtype type);

/* Start of position pos of one layer (pos in [0, max_pos]; pos == max_pos is the end of the layer). */
void *kv_cache_k(const struct kv_cache *kv, int layer, int pos);
void *kv_cache_v(const struct kv_cache *kv, int layer, int pos);

/* Fills positions [0, depth) of every layer with deterministic values uniform in [-1, 1), as if depth
 * tokens had been decoded: lets a benchmark start a step at context depth without decoding up to it. */
void kv_cache_fill_random(struct kv_cache *kv, int depth, uint64_t seed);

#endif
