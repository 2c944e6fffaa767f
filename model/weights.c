/* Qwen3 weights: the sizes table, the one allocation carved from it, and deterministic synthetic values.
 * The synthetic values come from a counter-based hash of (seed, tensor, element), so every element is
 * computed independently and the OpenMP fill is bit-identical for any thread count.
 * Checked in tests/test_weights.c: sizes against the parameter count and hand-computed group sizes,
 * tied/untied aliasing, alignment, determinism, value ranges, and the memory refusal. */
#include "model/weights.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/huge_map.h"
#include "kernels/quant.h"

#define WEIGHTS_ALIGN_BYTES 64

/* Stream ids: one per tensor, so no two tensors share a random sequence. */
enum {
    STREAM_EMBED = 1,
    STREAM_LM_HEAD,
    STREAM_FINAL_NORM,
    STREAM_LAYER_BASE = 16, /* + layer * 16 + one of the per-layer kinds below */
};
enum { KIND_ATTN_NORM, KIND_QKV, KIND_Q_NORM, KIND_K_NORM, KIND_O, KIND_MLP_NORM, KIND_GATE_UP, KIND_DOWN };

static uint64_t mix64(uint64_t z) {
    /* splitmix64's finalizer: a bijection on 64 bits with full avalanche */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t stream_key(uint64_t seed, uint64_t stream) {
    return mix64(mix64(seed) ^ (stream * 0x9e3779b97f4a7c15ull));
}

/* Uniform in [-1, 1) with 24 random bits: exact in f32. */
static inline float key_uniform(uint64_t key, uint64_t i) {
    uint64_t h = mix64(key + i * 0x9e3779b97f4a7c15ull);
    return (float)(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

static int mul_size(size_t a, size_t b, size_t *out) {
    return __builtin_mul_overflow(a, b, out) ? -1 : 0;
}

/* bytes of a [rows][cols] matrix of type t (whole blocks a row for a block format), failing on overflow */
static int tensor_bytes(size_t rows, size_t cols, enum fr_dtype t, size_t *out) {
    size_t n;
    if (fr_dtype_is_block(t)) return mul_size(rows, fr_dtype_bytes(t, cols), out) ? -1 : 0;
    if (mul_size(rows, cols, &n) || mul_size(n, fr_dtype_size(t), out)) return -1;
    return 0;
}

static size_t align_up(size_t n) {
    return (n + WEIGHTS_ALIGN_BYTES - 1) & ~(size_t)(WEIGHTS_ALIGN_BYTES - 1);
}

/* Adds n bytes, aligned, to the running total; fails on overflow. */
static int add_aligned(size_t *total, size_t n) {
    if (n > SIZE_MAX - WEIGHTS_ALIGN_BYTES) return -1;
    size_t a = align_up(n);
    if (*total > SIZE_MAX - a) return -1;
    *total += a;
    return 0;
}

int qwen3_weights_sizes(const struct qwen3_config *cfg, enum fr_dtype wtype, struct qwen3_weight_sizes *sz,
                        struct fr_err *err) {
    memset(sz, 0, sizeof *sz);
    if (cfg->hidden <= 0 || cfg->intermediate <= 0 || cfg->n_layers <= 0 || cfg->n_heads <= 0 ||
        cfg->n_kv_heads <= 0 || cfg->head_dim <= 0 || cfg->vocab <= 0)
        return fr_err_set(err, "model '%s': every size must be positive", cfg->name);
    size_t f = sizeof(float);
    size_t hidden = (size_t)cfg->hidden, inter = (size_t)cfg->intermediate, hd = (size_t)cfg->head_dim;
    size_t q_dim = (size_t)cfg->n_heads * hd, kv_dim = (size_t)cfg->n_kv_heads * hd;
    const enum fr_dtype el = wtype;
    if (fr_dtype_is_block(wtype) && (hidden % 32 || inter % 32 || q_dim % 32))
        return fr_err_set(err,
                          "model '%s': %s weights need every matrix's columns a multiple of 32 (hidden %zu, "
                          "intermediate %zu, heads x head_dim %zu)",
                          cfg->name, fr_dtype_name(wtype), hidden, inter, q_dim);
    const char *why = NULL;
    if (quant_check_cols(wtype, cfg->hidden, &why) || quant_check_cols(wtype, cfg->intermediate, &why) ||
        quant_check_cols(wtype, (int)q_dim, &why))
        return fr_err_set(err, "model '%s': %s (hidden %zu, intermediate %zu, heads x head_dim %zu)",
                          cfg->name, why, hidden, inter, q_dim);
    int bad = 0;
    bad |= tensor_bytes((size_t)cfg->vocab, hidden, el, &sz->embed_bytes);
    sz->lm_head_bytes = sz->embed_bytes;
    sz->lm_head_own_bytes = cfg->tied_embeddings ? 0 : sz->embed_bytes;
    sz->final_norm_bytes = hidden * f;
    sz->attn_norm_bytes = hidden * f;
    bad |= tensor_bytes(q_dim + 2 * kv_dim, hidden, el, &sz->qkv_bytes);
    sz->qk_norm_bytes = 2 * hd * f;
    bad |= tensor_bytes(hidden, q_dim, el, &sz->o_bytes);
    sz->mlp_norm_bytes = hidden * f;
    bad |= tensor_bytes(2 * inter, hidden, el, &sz->gate_up_bytes);
    bad |= tensor_bytes(hidden, inter, el, &sz->down_bytes);
    if (bad) return fr_err_set(err, "model '%s': tensor sizes overflow", cfg->name);

    const size_t layer_parts[] = {sz->attn_norm_bytes, sz->qkv_bytes,     hd * f,        hd * f, sz->o_bytes,
                                  sz->mlp_norm_bytes,  sz->gate_up_bytes, sz->down_bytes};
    size_t layer = 0, layer_aligned = 0;
    for (size_t i = 0; i < sizeof layer_parts / sizeof layer_parts[0]; i++) {
        if (layer > SIZE_MAX - layer_parts[i] || add_aligned(&layer_aligned, layer_parts[i]))
            return fr_err_set(err, "model '%s': layer size overflows", cfg->name);
        layer += layer_parts[i];
    }
    sz->layer_bytes = layer;
    size_t total = 0, all_layers;
    if (add_aligned(&total, sz->embed_bytes) || add_aligned(&total, sz->lm_head_own_bytes) ||
        add_aligned(&total, sz->final_norm_bytes) ||
        mul_size(layer_aligned, (size_t)cfg->n_layers, &all_layers) || total > SIZE_MAX - all_layers)
        return fr_err_set(err, "model '%s': total weight size overflows", cfg->name);
    sz->total_bytes = total + all_layers;
    return 0;
}

int qwen3_mem_check(size_t need_bytes, const char *what, struct fr_err *err) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long avail_kib = 0;
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &avail_kib) == 1) {
            found = 1;
            break;
        }
    fclose(f);
    if (!found) return 0;
    unsigned long long avail_bytes = avail_kib * 1024ull;
    if ((unsigned long long)need_bytes > avail_bytes)
        return fr_err_set(err, "%s needs %zu bytes (%.2f GB) but only %llu bytes (%.2f GB) are available",
                          what, need_bytes, (double)need_bytes / 1e9, avail_bytes, (double)avail_bytes / 1e9);
    return 0;
}

/* Hands out the next aligned piece of the allocation. */
static void *carve(unsigned char **cursor, size_t n) {
    void *p = *cursor;
    *cursor += align_up(n);
    return p;
}

int qwen3_weights_alloc(struct qwen3_weights *w, const struct qwen3_config *cfg, enum fr_dtype wtype,
                        struct fr_err *err) {
    memset(w, 0, sizeof *w);
    struct qwen3_weight_sizes sz;
    if (qwen3_weights_sizes(cfg, wtype, &sz, err)) return -1;
    char what[128];
    snprintf(what, sizeof what, "model '%s' with %s weights", cfg->name, fr_dtype_name(wtype));
    if (qwen3_mem_check(sz.total_bytes, what, err)) return -1;

    /* Anonymous pages: zero-filled lazily, and eligible for transparent huge pages, which spare the TLB
     * when a step streams the whole model. */
    void *base = huge_map_alloc(sz.total_bytes);
    if (!base) return fr_err_set(err, "%s: cannot map %zu bytes for the weights", cfg->name, sz.total_bytes);
    w->layers = calloc((size_t)cfg->n_layers, sizeof *w->layers);
    if (!w->layers) {
        huge_map_free(base, sz.total_bytes);
        return fr_err_set(err, "%s: out of memory for the layer table", cfg->name);
    }
    w->cfg = *cfg;
    w->wtype = wtype;
    w->base = base;
    w->total_bytes = sz.total_bytes;

    size_t hd_bytes = (size_t)cfg->head_dim * sizeof(float);
    unsigned char *cur = base;
    w->embed = carve(&cur, sz.embed_bytes);
    w->lm_head_own = cfg->tied_embeddings ? NULL : carve(&cur, sz.lm_head_own_bytes);
    w->lm_head = cfg->tied_embeddings ? w->embed : w->lm_head_own;
    w->final_norm = carve(&cur, sz.final_norm_bytes);
    for (int l = 0; l < cfg->n_layers; l++) {
        struct qwen3_layer_weights *L = &w->layers[l];
        L->attn_norm = carve(&cur, sz.attn_norm_bytes);
        L->qkv = carve(&cur, sz.qkv_bytes);
        L->q_norm = carve(&cur, hd_bytes);
        L->k_norm = carve(&cur, hd_bytes);
        L->o = carve(&cur, sz.o_bytes);
        L->mlp_norm = carve(&cur, sz.mlp_norm_bytes);
        L->gate_up = carve(&cur, sz.gate_up_bytes);
        L->down = carve(&cur, sz.down_bytes);
    }
    return 0;
}

void qwen3_weights_free(struct qwen3_weights *w) {
    huge_map_free(w->base, w->total_bytes);
    free(w->layers);
    memset(w, 0, sizeof *w);
}

/* One block of a block-format fill: the bf16 model's values u(key, from), u(key, from + 1), .. scaled and
 * rounded to bf16, quantised into dst at element `at`. */
static void fill_block(void *dst, enum fr_dtype t, size_t at, float scale, uint64_t key, size_t from) {
    float v[QUANT_BLOCK];
    for (size_t i = 0; i < QUANT_BLOCK; i++)
        v[i] = bf16_to_f32(bf16_from_f32(scale * key_uniform(key, from + i)));
    quant_quantize_row((unsigned char *)dst + fr_dtype_bytes(t, at), t, v, QUANT_BLOCK);
}

void qwen3_fill_uniform(void *dst, enum fr_dtype t, size_t n, float scale, uint64_t seed, uint64_t stream) {
    uint64_t key = stream_key(seed, stream);
    if (fr_dtype_is_block(t)) { /* the bf16 model's values, quantised a block at a time */
#pragma omp parallel for schedule(static)
        for (size_t k = 0; k < n / QUANT_BLOCK; k++)
            fill_block(dst, t, k * QUANT_BLOCK, scale, key, k * QUANT_BLOCK);
    } else if (t == FR_DTYPE_BF16) {
        uint16_t *d = dst;
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) d[i] = bf16_from_f32(scale * key_uniform(key, i));
    } else {
        float *d = dst;
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; i++) d[i] = scale * key_uniform(key, i);
    }
}

struct qwen3_block_map qwen3_layer_block_map(enum fr_dtype t, int rows, int cols) {
    return (struct qwen3_block_map){rows, cols, col_panel_width(FR_DTYPE_BF16, cols),
                                    col_panel_width(t, cols)};
}

long qwen3_block_count(const struct qwen3_block_map *m) {
    return (long)m->rows * (m->cols / QUANT_BLOCK);
}

void qwen3_block_at(const struct qwen3_block_map *m, long i, size_t *from, size_t *to) {
    const int nb = m->cols / QUANT_BLOCK, r = (int)(i / nb), c = (int)(i % nb) * QUANT_BLOCK;
    *from = col_panel_index(m->rows, m->cols, m->pw_from, r, c);
    *to = col_panel_index(m->rows, m->cols, m->pw_to, r, c);
}

/* A layer matrix [rows][cols], stored in type t's column panels (model/weights.h). Its values are u at the
 * element's place in bf16's layout (f32 has the same panels), so that every type holds the same matrix:
 * filling a block format's wider panels in their own stored order made the Q8_0/Q4_0 model a different one
 * from bf16's wherever the two layouts part (down_proj of Qwen3-0.6B, 15767db to 103fde3). */
static void fill_layer_matrix(void *dst, enum fr_dtype t, int rows, int cols, float scale, uint64_t seed,
                              uint64_t stream) {
    if (!fr_dtype_is_block(t)) {
        qwen3_fill_uniform(dst, t, (size_t)rows * (size_t)cols, scale, seed, stream);
        return;
    }
    const uint64_t key = stream_key(seed, stream);
    const struct qwen3_block_map m = qwen3_layer_block_map(t, rows, cols);
    const long n = qwen3_block_count(&m);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        size_t from, to;
        qwen3_block_at(&m, i, &from, &to);
        fill_block(dst, t, to, scale, key, from);
    }
}

/* f32 norm weights in [0.9, 1.1]: near one, as trained RMSNorm gains mostly are, but not all equal so a
 * test can tell a skipped or misplaced norm from a correct one. A bf16 model's norms hold bf16 values
 * (widened), as a bf16 checkpoint's do. */
static void fill_norm(float *dst, enum fr_dtype t, size_t n, uint64_t seed, uint64_t stream) {
    uint64_t key = stream_key(seed, stream);
    for (size_t i = 0; i < n; i++) {
        float v = 1.0f + 0.1f * key_uniform(key, i);
        dst[i] = t != FR_DTYPE_F32 ? bf16_to_f32(bf16_from_f32(v)) : v;
    }
}

void qwen3_weights_init_synthetic(struct qwen3_weights *w, uint64_t seed) {
    const struct qwen3_config *c = &w->cfg;
    size_t hidden = (size_t)c->hidden, inter = (size_t)c->intermediate, hd = (size_t)c->head_dim;
    size_t q_dim = (size_t)c->n_heads * hd, kv_dim = (size_t)c->n_kv_heads * hd;
    /* +-1/sqrt(cols) keeps each matvec output near the RMS of its (normalized) input, so the residual
     * stream stays in range over all layers. */
    float s_hidden = 1.0f / sqrtf((float)hidden), s_q = 1.0f / sqrtf((float)q_dim);
    float s_inter = 1.0f / sqrtf((float)inter);
    qwen3_fill_uniform(w->embed, w->wtype, (size_t)c->vocab * hidden, s_hidden, seed, STREAM_EMBED);
    if (w->lm_head_own)
        qwen3_fill_uniform(w->lm_head_own, w->wtype, (size_t)c->vocab * hidden, s_hidden, seed,
                           STREAM_LM_HEAD);
    fill_norm(w->final_norm, w->wtype, hidden, seed, STREAM_FINAL_NORM);
    for (int l = 0; l < c->n_layers; l++) {
        struct qwen3_layer_weights *L = &w->layers[l];
        uint64_t s = STREAM_LAYER_BASE + (uint64_t)l * 16;
        fill_norm(L->attn_norm, w->wtype, hidden, seed, s + KIND_ATTN_NORM);
        fill_layer_matrix(L->qkv, w->wtype, (int)(q_dim + 2 * kv_dim), (int)hidden, s_hidden, seed,
                          s + KIND_QKV);
        fill_norm(L->q_norm, w->wtype, hd, seed, s + KIND_Q_NORM);
        fill_norm(L->k_norm, w->wtype, hd, seed, s + KIND_K_NORM);
        fill_layer_matrix(L->o, w->wtype, (int)hidden, (int)q_dim, s_q, seed, s + KIND_O);
        fill_norm(L->mlp_norm, w->wtype, hidden, seed, s + KIND_MLP_NORM);
        fill_layer_matrix(L->gate_up, w->wtype, (int)(2 * inter), (int)hidden, s_hidden, seed,
                          s + KIND_GATE_UP);
        fill_layer_matrix(L->down, w->wtype, (int)hidden, (int)inter, s_inter, seed, s + KIND_DOWN);
    }
    qwen3_weights_pack(w);
}

void qwen3_weights_pack(struct qwen3_weights *w) {
    const struct qwen3_config *c = &w->cfg;
    const enum fr_dtype t = w->wtype;
    const int q_dim = c->n_heads * c->head_dim, kv_dim = c->n_kv_heads * c->head_dim;
    if (!fr_dtype_is_block(t)) return;
    quant_panels_pack(w->embed, t, c->vocab, c->hidden, c->hidden);
    if (w->lm_head_own) quant_panels_pack(w->lm_head_own, t, c->vocab, c->hidden, c->hidden);
    for (int l = 0; l < c->n_layers; l++) {
        struct qwen3_layer_weights *L = &w->layers[l];
        quant_panels_pack(L->qkv, t, q_dim + 2 * kv_dim, c->hidden, col_panel_width(t, c->hidden));
        quant_panels_pack(L->o, t, c->hidden, q_dim, col_panel_width(t, q_dim));
        quant_panels_pack(L->gate_up, t, 2 * c->intermediate, c->hidden, col_panel_width(t, c->hidden));
        quant_panels_pack(L->down, t, c->hidden, c->intermediate, col_panel_width(t, c->intermediate));
    }
}
