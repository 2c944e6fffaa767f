/* The KV cache: two allocations (K and V) of [layer][n_kv_heads][position][head_dim] and a seeded fill.
 * Checked in tests/test_kv_cache.c (sizes, addressing, fill determinism and range) and through the decode
 * step, whose cached keys and values tests/test_decode.c compares with a naive reference. */
#include "model/kv_cache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernels/huge_map.h"
#include "kernels/kernels.h"
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

/* One KV head's rows start KV_HEAD_SKEW bytes further into a 4 KiB page than the head before's: its
 * max_pos rows rounded up to whole pages, plus the skew (heads of fewer than KV_SKEW_MIN_BYTES stay packed:
 * a short cache would spread a step's new rows over a page each, and attention does not split them). Two
 * threads streaming two heads' K and V rows at once (attention's split, one head a thread) then never read
 * the same offset of their pages at the same time. Attention alone over 28 layers from DRAM, Qwen3-0.6B's
 * heads, 4096 positions, two threads (Zen 5 VM, medians of 9): heads 16384 or 16400 positions apart (whole
 * pages) 0.72-0.76 of the read on AVX2 and AVX-512, 16385 apart (256 bytes on) 0.83-0.86. A synthetic read of
 * two streams a thread alternating in 4 KiB blocks, as attention's K and V: 47-49 GB/s with the threads'
 * streams at the same page offsets, 58-66 with them 64 to 1024 bytes apart; one stream a thread reads the
 * same either way. */
#define KV_PAGE_BYTES     4096
#define KV_HEAD_SKEW      256
#define KV_SKEW_MIN_BYTES (64 * 1024)

/* Bytes of one of K and V: n_layers x n_kv_heads heads of head_bytes; 0 on overflow. */
static size_t kv_half_bytes(const struct qwen3_config *cfg, size_t row_bytes, int max_pos,
                            size_t *head_bytes) {
    size_t rows, half;
    if (__builtin_mul_overflow(row_bytes, (size_t)max_pos, &rows) || rows > SIZE_MAX - 2 * KV_PAGE_BYTES)
        return 0;
    *head_bytes = rows < KV_SKEW_MIN_BYTES
                      ? rows
                      : (rows + KV_PAGE_BYTES - 1) / KV_PAGE_BYTES * KV_PAGE_BYTES + KV_HEAD_SKEW;
    if (__builtin_mul_overflow(*head_bytes, (size_t)cfg->n_kv_heads, &half) ||
        __builtin_mul_overflow(half, (size_t)cfg->n_layers, &half))
        return 0;
    return half;
}

int kv_cache_alloc(struct kv_cache *kv, const struct qwen3_config *cfg, int max_pos, enum fr_dtype type,
                   struct fr_err *err) {
    memset(kv, 0, sizeof *kv);
    size_t row_bytes = (size_t)cfg->head_dim * fr_dtype_size(type), head_bytes = 0;
    /* kv_cache_bytes refuses a bad shape (and a data size that overflows) first */
    size_t half =
        kv_cache_bytes(cfg, max_pos, type) ? kv_half_bytes(cfg, row_bytes, max_pos, &head_bytes) : 0;
    if (half == 0 || half > SIZE_MAX / 2)
        return fr_err_set(err, "KV cache for %d positions: bad shape or size overflow", max_pos);
    char what[128];
    snprintf(what, sizeof what, "a %s KV cache for %d positions", fr_dtype_name(type), max_pos);
    if (qwen3_mem_check(2 * half, what, err)) return -1;
    /* huge pages, as the weights: attention streams K and V as the matvecs stream the weights */
    void *k = huge_map_alloc(half), *v = k ? huge_map_alloc(half) : NULL;
    if (!v) {
        huge_map_free(k, half);
        return fr_err_set(err, "cannot map %zu bytes for the KV cache", 2 * half);
    }
    kv->type = type;
    kv->n_layers = cfg->n_layers;
    kv->max_pos = max_pos;
    kv->n_kv_heads = cfg->n_kv_heads;
    kv->head_dim = cfg->head_dim;
    kv->row_bytes = row_bytes;
    kv->head_bytes = head_bytes;
    kv->layer_bytes = kv->head_bytes * (size_t)cfg->n_kv_heads;
    kv->k = k;
    kv->v = v;
    return 0;
}

void kv_cache_free(struct kv_cache *kv) {
    huge_map_free(kv->k, kv->layer_bytes * (size_t)kv->n_layers);
    huge_map_free(kv->v, kv->layer_bytes * (size_t)kv->n_layers);
    memset(kv, 0, sizeof *kv);
}

static void *at(void *base, const struct kv_cache *kv, int layer, int head, int pos) {
    return (unsigned char *)base + (size_t)layer * kv->layer_bytes + (size_t)head * kv->head_bytes +
           (size_t)pos * kv->row_bytes;
}

void *kv_cache_k(const struct kv_cache *kv, int layer, int head, int pos) {
    return at(kv->k, kv, layer, head, pos);
}
void *kv_cache_v(const struct kv_cache *kv, int layer, int head, int pos) {
    return at(kv->v, kv, layer, head, pos);
}

size_t kv_cache_head_stride(const struct kv_cache *kv) {
    return kv->head_bytes / fr_dtype_size(kv->type);
}

/* The rows a step appends lie a head's stride apart, each in a page of its own and cold (in a VM every page
 * first costs a nested page walk). One load from each row starts all the walks and misses at once instead of
 * each store waiting for its own; the prefetches then fetch the rows' other lines. The loads also keep this
 * function from being prefetches alone: GCC 12 deduces such a function pure and deletes its calls, as it did
 * here from f97bd2e to aa784d8. kv_append in steps of Qwen3-0.6B at context 1 with a 16385-position cache,
 * a read between steps (Zen 5 VM, medians of 15-25, variants alternated in one process): no prefetch
 * 83-204 µs a step, prefetches alone 48-63, loads and prefetches 42-54; at context 4096, 157 -> 51. */
static void kv_cache_touch_rows(const struct kv_cache *kv, int layer, int pos) {
    for (int h = 0; h < kv->n_kv_heads; h++) {
        (void)*(volatile const char *)kv_cache_k(kv, layer, h, pos);
        (void)*(volatile const char *)kv_cache_v(kv, layer, h, pos);
    }
    for (int h = 0; h < kv->n_kv_heads; h++) {
        const char *k = kv_cache_k(kv, layer, h, pos), *v = kv_cache_v(kv, layer, h, pos);
        for (size_t b = 64; b < kv->row_bytes; b += 64) {
            __builtin_prefetch(k + b, 1);
            __builtin_prefetch(v + b, 1);
        }
    }
}

void kv_cache_store(struct kv_cache *kv, int layer, int pos, const float *k, const float *v) {
    kv_cache_touch_rows(kv, layer, pos);
    for (int h = 0; h < kv->n_kv_heads; h++) {
        size_t off = (size_t)h * (size_t)kv->head_dim;
        kv_store(kv_cache_k(kv, layer, h, pos), kv->type, k + off, kv->head_dim);
        kv_store(kv_cache_v(kv, layer, h, pos), kv->type, v + off, kv->head_dim);
    }
}

void kv_cache_copy(struct kv_cache *dst, const struct kv_cache *src, int p0, int p1) {
    if (p1 <= p0) return;
    size_t n = (size_t)(p1 - p0) * src->row_bytes;
    for (int l = 0; l < src->n_layers; l++)
        for (int h = 0; h < src->n_kv_heads; h++) {
            memcpy(kv_cache_k(dst, l, h, p0), kv_cache_k(src, l, h, p0), n);
            memcpy(kv_cache_v(dst, l, h, p0), kv_cache_v(src, l, h, p0), n);
        }
}

/* Each layer's and head's K and V rows get their own stream of the seed, so a deeper fill extends a
 * shallower one. */
void kv_cache_fill_random(struct kv_cache *kv, int depth, uint64_t seed) {
    if (depth > kv->max_pos) depth = kv->max_pos;
    if (depth <= 0) return;
    size_t n = (size_t)depth * (size_t)kv->head_dim;
    for (int l = 0; l < kv->n_layers; l++)
        for (int h = 0; h < kv->n_kv_heads; h++) {
            uint64_t stream = 2 * ((uint64_t)l * (uint64_t)kv->n_kv_heads + (uint64_t)h);
            qwen3_fill_uniform(kv_cache_k(kv, l, h, 0), kv->type, n, 1.0f, seed, stream);
            qwen3_fill_uniform(kv_cache_v(kv, l, h, 0), kv->type, n, 1.0f, seed, stream + 1);
        }
}
