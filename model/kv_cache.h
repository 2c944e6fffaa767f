/* kv_cache: the keys and values of every layer for positions [0, max_pos), bf16 (default) or f32.
 * Layout per layer head-major, [n_kv_heads][max_pos][head_dim], the layout kernels/kernels.h's attention()
 * reads: one KV head's first n positions are one contiguous run, which attention streams like a matvec
 * streams a weight row (position-major rows interleave the heads, and the hardware prefetchers then do
 * little for one head's rows). The heads lie head_bytes apart: their rows, and from 64 KiB of rows a head a
 * little more, so that each head starts at another offset of a 4 KiB page (kv_cache.c). */
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
    size_t row_bytes;   /* one position of one KV head: head_dim elements */
    size_t head_bytes;  /* one KV head of one layer to the next: max_pos rows, padded (kv_cache.c) */
    size_t layer_bytes; /* n_kv_heads * head_bytes */
    void *k;            /* [n_layers][n_kv_heads][max_pos][head_dim], heads head_bytes apart */
    void *v;            /* the same for the values */
};

/* Sizes the cache for max_pos positions of cfg's layers and KV heads (max_pos >= 1). Refuses up front,
 * naming the bytes, when K and V together exceed MemAvailable. On failure *kv is left empty. */
int kv_cache_alloc(struct kv_cache *kv, const struct qwen3_config *cfg, int max_pos, enum fr_dtype type,
                   struct fr_err *err);
void kv_cache_free(struct kv_cache *kv);

/* Bytes K and V hold together for max_pos positions (the allocation adds at most 4.25 KiB a head and layer
 * of padding, kv_cache.c); 0 on overflow or a bad shape. */
size_t kv_cache_bytes(const struct qwen3_config *cfg, int max_pos, enum fr_dtype type);

/* Row of position pos of KV head `head` of one layer (pos in [0, max_pos]; pos == max_pos is the end of the
 * head's rows). kv_cache_k(kv, layer, 0, 0) is the layer's start, what attention() takes. */
void *kv_cache_k(const struct kv_cache *kv, int layer, int head, int pos);
void *kv_cache_v(const struct kv_cache *kv, int layer, int head, int pos);

/* Elements from one KV head's rows to the next: attention()'s head_stride. */
size_t kv_cache_head_stride(const struct kv_cache *kv);

/* Stores position pos of one layer: k and v [n_kv_heads][head_dim] f32, converted to the cache's type. */
void kv_cache_store(struct kv_cache *kv, int layer, int pos, const float *k, const float *v);

/* Copies positions [p0, p1) of every layer and KV head from src to dst, caches of the same shape and type
 * (their max_pos may differ; p1 <= both); nothing when p1 <= p0. */
void kv_cache_copy(struct kv_cache *dst, const struct kv_cache *src, int p0, int p1);

/* Fills positions [0, depth) of every layer with deterministic values uniform in [-1, 1), as if depth
 * tokens had been decoded: lets a benchmark start a step at context depth without decoding up to it. */
void kv_cache_fill_random(struct kv_cache *kv, int depth, uint64_t seed);

#endif
