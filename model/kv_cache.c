/* The KV cache: two allocations (K and V) of [layer][position][n_kv_heads][head_dim] and a seeded fill.
 * Checked in tests/test_kv_cache.c (sizes, addressing, fill determinism and range) and through the decode
 * step, whose cached keys and values tests/test_decode.c compares with a naive reference. */
#include "model/kv_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/huge_map.h"
#include "model/weights.h"

size_t kv_cache_bytes(const struct qwen3_config *cfg, int max_pos, enum fr_dtype type) {
    if (max_pos <= 0 || cfg->n_layers <= 0 || cfg->n_kv_heads <= 0 || cfg->head_dim <= 0) return 0;
    size_t n = fr_dtype_size(type) * 2;
    const size_t dims[] = {(size_t)cfg->n_layers, (size_t)max_pos, (size_t)cfg->n_kv_heads,
                           (size_t)cfg->head_dim};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (__builtin_mul_overflow(n, dims[i], &n)) return 0;
    return n;
}

int kv_cache_alloc(struct kv_cache *kv, const struct qwen3_config *cfg, int max_pos, enum fr_dtype type,
                   struct fr_err *err) {
    memset(kv, 0, sizeof *kv);
    size_t total = kv_cache_bytes(cfg, max_pos, type);
    if (total == 0) return fr_err_set(err, "KV cache for %d positions: bad shape or size overflow", max_pos);
    char what[128];
    snprintf(what, sizeof what, "a %s KV cache for %d positions", fr_dtype_name(type), max_pos);
    if (qwen3_mem_check(total, what, err)) return -1;
    size_t half = total / 2;
    /* huge pages, as the weights: attention streams K and V as the matvecs stream the weights */
    void *k = huge_map_alloc(half), *v = k ? huge_map_alloc(half) : NULL;
    if (!v) {
        huge_map_free(k, half);
        return fr_err_set(err, "cannot map %zu bytes for the KV cache", total);
    }
    kv->type = type;
    kv->n_layers = cfg->n_layers;
    kv->max_pos = max_pos;
    kv->n_kv_heads = cfg->n_kv_heads;
    kv->head_dim = cfg->head_dim;
    kv->pos_bytes = (size_t)cfg->n_kv_heads * (size_t)cfg->head_dim * fr_dtype_size(type);
    kv->layer_bytes = kv->pos_bytes * (size_t)max_pos;
    kv->k = k;
    kv->v = v;
    return 0;
}

void kv_cache_free(struct kv_cache *kv) {
    huge_map_free(kv->k, kv->layer_bytes * (size_t)kv->n_layers);
    huge_map_free(kv->v, kv->layer_bytes * (size_t)kv->n_layers);
    memset(kv, 0, sizeof *kv);
}

static void *at(void *base, const struct kv_cache *kv, int layer, int pos) {
    return (unsigned char *)base + (size_t)layer * kv->layer_bytes + (size_t)pos * kv->pos_bytes;
}

void *kv_cache_k(const struct kv_cache *kv, int layer, int pos) {
    return at(kv->k, kv, layer, pos);
}
void *kv_cache_v(const struct kv_cache *kv, int layer, int pos) {
    return at(kv->v, kv, layer, pos);
}

void kv_cache_fill_random(struct kv_cache *kv, int depth, uint64_t seed) {
    if (depth > kv->max_pos) depth = kv->max_pos;
    if (depth <= 0) return;
    size_t n = (size_t)depth * (size_t)kv->n_kv_heads * (size_t)kv->head_dim;
    for (int l = 0; l < kv->n_layers; l++) {
        qwen3_fill_uniform(kv_cache_k(kv, l, 0), kv->type, n, 1.0f, seed, 2 * (uint64_t)l);
        qwen3_fill_uniform(kv_cache_v(kv, l, 0), kv->type, n, 1.0f, seed, 2 * (uint64_t)l + 1);
    }
}
