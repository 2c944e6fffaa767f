/* Qwen3 weights: the sizes table, the one allocation carved from it, and deterministic synthetic values.
 * The synthetic values come from a counter-based hash of (seed, tensor, element), so every element is
 * computed independently and the OpenMP fill is bit-identical for any thread count.
 * Checked in tests/test_weights.c: sizes against the parameter count and hand-computed group sizes,
 * tied/untied aliasing, alignment, determinism, value ranges, and the memory refusal. */
#include "model/weights.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/huge_map.h"
#include "kernels/matvec_kquant.h"
#include "kernels/quant.h"
#include "kernels/quant_k.h"

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
    if (fr_dtype_is_quant(t)) return mul_size(rows, fr_dtype_bytes(t, cols), out) ? -1 : 0;
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

/* The parts a projection fuses, in row order, and its columns. */
static int matrix_parts(const struct qwen3_config *c, enum qwen3_matrix m, enum wpart parts[3], int rows[3],
                        int *cols) {
    const int q = c->n_heads * c->head_dim, kv = c->n_kv_heads * c->head_dim;
    switch (m) {
    case QWEN3_MAT_QKV:
        parts[0] = WPART_Q, parts[1] = WPART_K, parts[2] = WPART_V;
        rows[0] = q, rows[1] = kv, rows[2] = kv, *cols = c->hidden;
        return 3;
    case QWEN3_MAT_O:
        parts[0] = WPART_O, rows[0] = c->hidden, *cols = q;
        return 1;
    case QWEN3_MAT_GATE_UP:
        parts[0] = WPART_GATE, parts[1] = WPART_UP;
        rows[0] = rows[1] = c->intermediate, *cols = c->hidden;
        return 2;
    default:
        parts[0] = WPART_DOWN, rows[0] = c->hidden, *cols = c->intermediate;
        return 1;
    }
}

/* The runs of projection m for a layer of the given part types, their pointers offsets from base, and the
 * bytes they take with the alignment between them; -1 on overflow. */
static int matrix_layout(const struct qwen3_config *c, const enum fr_dtype types[WPART_COUNT],
                         enum qwen3_matrix m, unsigned char *base, struct qwen3_run runs[QWEN3_MAX_RUNS],
                         int *n_runs, size_t *bytes) {
    enum wpart parts[3];
    int rows[3], cols, n = 0, row = 0;
    const int n_parts = matrix_parts(c, m, parts, rows, &cols);
    size_t off = 0;
    for (int i = 0; i < n_parts; i++) {
        const enum fr_dtype t = types[parts[i]];
        if (n > 0 && runs[n - 1].type == t) {
            runs[n - 1].rows += rows[i];
        } else {
            runs[n++] = (struct qwen3_run){NULL, t, row, rows[i], cols, 0};
        }
        row += rows[i];
    }
    for (int i = 0; i < n; i++) {
        size_t b;
        runs[i].pw = col_panel_width(runs[i].type, cols);
        runs[i].w = base ? base + off : NULL;
        if (tensor_bytes((size_t)runs[i].rows, (size_t)cols, runs[i].type, &b)) return -1;
        if (i + 1 < n) {
            if (add_aligned(&off, b)) return -1;
        } else if (off > SIZE_MAX - b) {
            return -1;
        } else {
            off += b;
        }
    }
    *n_runs = n, *bytes = off;
    return 0;
}

/* Whether a matrix of type t can have `cols` columns; else the reason. */
static const char *cols_refusal(enum fr_dtype t, int cols) {
    const char *why = NULL;
    if (fr_dtype_is_kquant(t)) return matvec_kquant_check_cols(t, cols, &why) ? why : NULL;
    if (fr_dtype_is_block(t) && cols % 32 != 0) return "a Q8_0 or Q4_0 matrix needs a multiple of 32 columns";
    return quant_check_cols(t, cols, &why) ? why : NULL;
}

int qwen3_weights_sizes_formats(const struct qwen3_config *cfg, const struct weight_formats *fm,
                                struct qwen3_weight_sizes *sz, struct fr_err *err) {
    memset(sz, 0, sizeof *sz);
    if (cfg->hidden <= 0 || cfg->intermediate <= 0 || cfg->n_layers <= 0 || cfg->n_heads <= 0 ||
        cfg->n_kv_heads <= 0 || cfg->head_dim <= 0 || cfg->vocab <= 0)
        return fr_err_set(err, "model '%s': every size must be positive", cfg->name);
    const long long q_dim = (long long)cfg->n_heads * cfg->head_dim,
                    kv_dim = (long long)cfg->n_kv_heads * cfg->head_dim;
    if (q_dim + 2 * kv_dim > INT_MAX || 2LL * cfg->intermediate > INT_MAX) /* the fused matrices' rows */
        return fr_err_set(err, "model '%s': tensor sizes overflow", cfg->name);
    if (fm->n_layers != cfg->n_layers)
        return fr_err_set(err, "model '%s': formats for %d layers, the model has %d", cfg->name, fm->n_layers,
                          cfg->n_layers);
    size_t f = sizeof(float);
    size_t hidden = (size_t)cfg->hidden, hd = (size_t)cfg->head_dim;
    const char *why;
    if ((why = cols_refusal(fm->embed, cfg->hidden)) || (why = cols_refusal(fm->lm_head, cfg->hidden)))
        return fr_err_set(err, "model '%s': token_embd in %s: %s (hidden %zu)", cfg->name,
                          fr_dtype_name(fm->embed), why, hidden);
    for (int l = 0; l < cfg->n_layers; l++)
        for (int m = 0; m < QWEN3_MAT_COUNT; m++) {
            enum wpart parts[3];
            int rows[3], cols;
            const int n = matrix_parts(cfg, (enum qwen3_matrix)m, parts, rows, &cols);
            for (int i = 0; i < n; i++)
                if ((why = cols_refusal(fm->layer[l][parts[i]], cols)))
                    return fr_err_set(err, "model '%s': blk.%d.%s in %s: %s (%d columns)", cfg->name, l,
                                      wpart_name(parts[i]), fr_dtype_name(fm->layer[l][parts[i]]), why, cols);
        }
    int bad = 0;
    bad |= tensor_bytes((size_t)cfg->vocab, hidden, fm->embed, &sz->embed_bytes);
    size_t lm_bytes = 0;
    bad |= tensor_bytes((size_t)cfg->vocab, hidden, fm->lm_head, &lm_bytes);
    if (bad) return fr_err_set(err, "model '%s': tensor sizes overflow", cfg->name);
    sz->lm_head_bytes = cfg->tied_embeddings ? sz->embed_bytes : lm_bytes;
    sz->lm_head_own_bytes = cfg->tied_embeddings ? 0 : lm_bytes;
    sz->final_norm_bytes = hidden * f;
    sz->attn_norm_bytes = hidden * f;
    sz->qk_norm_bytes = 2 * hd * f;
    sz->mlp_norm_bytes = hidden * f;
    size_t total = 0;
    if (add_aligned(&total, sz->embed_bytes) || add_aligned(&total, sz->lm_head_own_bytes) ||
        add_aligned(&total, sz->final_norm_bytes))
        return fr_err_set(err, "model '%s': total weight size overflows", cfg->name);
    for (int l = 0; l < cfg->n_layers; l++) {
        size_t mb[QWEN3_MAT_COUNT];
        for (int m = 0; m < QWEN3_MAT_COUNT; m++) {
            struct qwen3_run runs[QWEN3_MAX_RUNS];
            int n;
            if (matrix_layout(cfg, fm->layer[l], (enum qwen3_matrix)m, NULL, runs, &n, &mb[m]))
                return fr_err_set(err, "model '%s': tensor sizes overflow", cfg->name);
        }
        if (l == 0) {
            sz->qkv_bytes = mb[QWEN3_MAT_QKV], sz->o_bytes = mb[QWEN3_MAT_O];
            sz->gate_up_bytes = mb[QWEN3_MAT_GATE_UP], sz->down_bytes = mb[QWEN3_MAT_DOWN];
        }
        const size_t layer_parts[] = {
            sz->attn_norm_bytes,   mb[QWEN3_MAT_QKV], hd * f, hd * f, mb[QWEN3_MAT_O], sz->mlp_norm_bytes,
            mb[QWEN3_MAT_GATE_UP], mb[QWEN3_MAT_DOWN]};
        size_t layer = 0;
        for (size_t i = 0; i < sizeof layer_parts / sizeof layer_parts[0]; i++) {
            if (layer > SIZE_MAX - layer_parts[i] || add_aligned(&total, layer_parts[i]))
                return fr_err_set(err, "model '%s': total weight size overflows", cfg->name);
            layer += layer_parts[i];
        }
        if (l == 0) sz->layer_bytes = layer;
    }
    sz->total_bytes = total;
    return 0;
}

int qwen3_weights_sizes(const struct qwen3_config *cfg, enum fr_dtype wtype, struct qwen3_weight_sizes *sz,
                        struct fr_err *err) {
    struct weight_formats fm;
    if (cfg->n_layers > WFMT_MAX_LAYERS)
        return fr_err_set(err, "model '%s': %d layers, at most %d", cfg->name, cfg->n_layers,
                          WFMT_MAX_LAYERS);
    weight_formats_uniform(&fm, cfg->n_layers, wtype);
    return qwen3_weights_sizes_formats(cfg, &fm, sz, err);
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

int qwen3_weights_alloc_formats(struct qwen3_weights *w, const struct qwen3_config *cfg,
                                const struct weight_formats *fm, struct fr_err *err) {
    memset(w, 0, sizeof *w);
    struct qwen3_weight_sizes sz;
    if (qwen3_weights_sizes_formats(cfg, fm, &sz, err)) return -1;
    char what[256], names[96];
    enum fr_dtype common;
    const bool uniform = weight_formats_is_uniform(fm, &common);
    if (uniform)
        snprintf(names, sizeof names, "%s", fr_dtype_name(common));
    else
        weight_formats_describe(fm, names, sizeof names);
    snprintf(what, sizeof what, "model '%s' with %s weights", cfg->name, names);
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
    w->wtype = common;
    w->formats = *fm;
    if (cfg->tied_embeddings) w->formats.lm_head = fm->embed;
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
        size_t mb[QWEN3_MAT_COUNT];
        for (int m = 0; m < QWEN3_MAT_COUNT; m++) {
            struct qwen3_run runs[QWEN3_MAX_RUNS];
            int n;
            (void)matrix_layout(cfg, fm->layer[l], (enum qwen3_matrix)m, NULL, runs, &n, &mb[m]); /* sized */
        }
        L->attn_norm = carve(&cur, sz.attn_norm_bytes);
        L->qkv = carve(&cur, mb[QWEN3_MAT_QKV]);
        L->q_norm = carve(&cur, hd_bytes);
        L->k_norm = carve(&cur, hd_bytes);
        L->o = carve(&cur, mb[QWEN3_MAT_O]);
        L->mlp_norm = carve(&cur, sz.mlp_norm_bytes);
        L->gate_up = carve(&cur, mb[QWEN3_MAT_GATE_UP]);
        L->down = carve(&cur, mb[QWEN3_MAT_DOWN]);
    }
    return 0;
}

int qwen3_weights_alloc(struct qwen3_weights *w, const struct qwen3_config *cfg, enum fr_dtype wtype,
                        struct fr_err *err) {
    struct weight_formats fm;
    memset(w, 0, sizeof *w);
    if (cfg->n_layers > WFMT_MAX_LAYERS)
        return fr_err_set(err, "model '%s': %d layers, at most %d", cfg->name, cfg->n_layers,
                          WFMT_MAX_LAYERS);
    weight_formats_uniform(&fm, cfg->n_layers, wtype);
    return qwen3_weights_alloc_formats(w, cfg, &fm, err);
}

static void *layer_matrix(const struct qwen3_layer_weights *L, enum qwen3_matrix m) {
    return m == QWEN3_MAT_QKV       ? L->qkv
           : m == QWEN3_MAT_O       ? L->o
           : m == QWEN3_MAT_GATE_UP ? L->gate_up
                                    : L->down;
}

int qwen3_matrix_runs(const struct qwen3_weights *w, int layer, enum qwen3_matrix m,
                      struct qwen3_run runs[QWEN3_MAX_RUNS]) {
    int n = 0;
    size_t bytes;
    (void)matrix_layout(&w->cfg, w->formats.layer[layer], m, layer_matrix(&w->layers[layer], m), runs, &n,
                        &bytes); /* sized at allocation */
    return n;
}

enum qwen3_matrix qwen3_part_matrix(enum wpart p) {
    return p <= WPART_V    ? QWEN3_MAT_QKV
           : p == WPART_O  ? QWEN3_MAT_O
           : p <= WPART_UP ? QWEN3_MAT_GATE_UP
                           : QWEN3_MAT_DOWN;
}

int qwen3_part_row0(const struct qwen3_config *c, enum wpart p) {
    const int q = c->n_heads * c->head_dim, kv = c->n_kv_heads * c->head_dim;
    return p == WPART_K ? q : p == WPART_V ? q + kv : p == WPART_UP ? c->intermediate : 0;
}

void qwen3_part_run(const struct qwen3_weights *w, int layer, enum wpart p, struct qwen3_run *run) {
    struct qwen3_run runs[QWEN3_MAX_RUNS];
    const int n = qwen3_matrix_runs(w, layer, qwen3_part_matrix(p), runs), row = qwen3_part_row0(&w->cfg, p);
    int i = 0;
    while (i + 1 < n && runs[i + 1].row0 <= row) i++;
    *run = runs[i];
}

void qwen3_weights_formats_name(const struct qwen3_weights *w, char *buf, size_t len) {
    if (weight_formats_is_uniform(&w->formats, NULL))
        snprintf(buf, len, "%s", fr_dtype_name(w->wtype));
    else
        weight_formats_describe(&w->formats, buf, len);
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
    if (fr_dtype_is_kquant(t)) { /* the bf16 model's values, a superblock at a time */
        const struct qwen3_run run = {dst, t, 0, (int)(n / QUANT_QK_K), QUANT_QK_K, QUANT_QK_K};
        const struct qwen3_values v = {NULL, key, scale, (int)(n / QUANT_QK_K), QUANT_QK_K};
        qwen3_run_store(&run, &v);
    } else if (fr_dtype_is_block(t)) { /* the bf16 model's values, quantised a block at a time */
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

/* Row r of a run, columns [c, c + n), from v: the value at the element's place in the bf16 layout. */
static void run_values(const struct qwen3_run *run, const struct qwen3_values *v, int r, int c, int n,
                       bool round, float *out) {
    for (int i = 0; i < n; i++) {
        const size_t at = col_panel_index(v->rows, run->cols, v->pw, run->row0 + r, c + i);
        const float x = v->bf16 ? bf16_to_f32(v->bf16[at]) : v->scale * key_uniform(v->key, at);
        out[i] = round && !v->bf16 ? bf16_to_f32(bf16_from_f32(x)) : x;
    }
}

void qwen3_run_store(const struct qwen3_run *run, const struct qwen3_values *v) {
    const enum fr_dtype t = run->type;
    const int cols = run->cols, step = (int)fr_dtype_block_elems(t) > 1 ? (int)fr_dtype_block_elems(t) : 256;
    const bool round = !(t == FR_DTYPE_F32 && !v->bf16);
#pragma omp parallel for schedule(static)
    for (int r = 0; r < run->rows; r++) {
        float x[QUANT_QK_K];
        for (int c = 0; c < cols; c += step) {
            const int n = cols - c < step ? cols - c : step;
            run_values(run, v, r, c, n, round, x);
            if (fr_dtype_is_kquant(t)) { /* row-major */
                quant_k_quantize_row((unsigned char *)run->w +
                                         fr_dtype_bytes(t, (size_t)r * (size_t)cols + c),
                                     matvec_kquant_type(t), x, (size_t)n);
            } else if (fr_dtype_is_block(t)) {
                const size_t at = col_panel_index(run->rows, cols, run->pw, r, c);
                quant_quantize_row((unsigned char *)run->w + fr_dtype_bytes(t, at), t, x, (size_t)n);
            } else {
                for (int i = 0; i < n; i++) {
                    const size_t at = col_panel_index(run->rows, cols, run->pw, r, c + i);
                    if (t == FR_DTYPE_BF16)
                        ((uint16_t *)run->w)[at] = bf16_from_f32(x[i]);
                    else
                        ((float *)run->w)[at] = x[i];
                }
            }
        }
    }
}

/* A layer projection, each run in its type's column panels (model/weights.h). Its values are u at the
 * element's place in bf16's layout (f32 has the same panels), so that every type holds the same matrix:
 * filling a block format's wider panels in their own stored order made the Q8_0/Q4_0 model a different one
 * from bf16's wherever the two layouts part (down_proj of Qwen3-0.6B, 15767db to 103fde3). */
static void fill_layer_matrix(const struct qwen3_weights *w, int layer, enum qwen3_matrix m, float scale,
                              uint64_t seed, uint64_t stream) {
    struct qwen3_run runs[QWEN3_MAX_RUNS];
    const int n = qwen3_matrix_runs(w, layer, m, runs);
    int rows = 0;
    for (int i = 0; i < n; i++) rows += runs[i].rows;
    if (n == 1 && !fr_dtype_is_quant(runs[0].type)) { /* the bf16 layout itself */
        qwen3_fill_uniform(runs[0].w, runs[0].type, (size_t)rows * (size_t)runs[0].cols, scale, seed, stream);
        return;
    }
    const struct qwen3_values v = {NULL, stream_key(seed, stream), scale, rows,
                                   col_panel_width(FR_DTYPE_BF16, runs[0].cols)};
    for (int i = 0; i < n; i++) qwen3_run_store(&runs[i], &v);
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

/* The norms' rounding follows the layers' type: a bf16 or quantised model's norms hold bf16 values. */
void qwen3_weights_init_synthetic(struct qwen3_weights *w, uint64_t seed) {
    const struct qwen3_config *c = &w->cfg;
    size_t hidden = (size_t)c->hidden, inter = (size_t)c->intermediate, hd = (size_t)c->head_dim;
    size_t q_dim = (size_t)c->n_heads * hd;
    /* +-1/sqrt(cols) keeps each matvec output near the RMS of its (normalized) input, so the residual
     * stream stays in range over all layers. */
    float s_hidden = 1.0f / sqrtf((float)hidden), s_q = 1.0f / sqrtf((float)q_dim);
    float s_inter = 1.0f / sqrtf((float)inter);
    qwen3_fill_uniform(w->embed, w->formats.embed, (size_t)c->vocab * hidden, s_hidden, seed, STREAM_EMBED);
    if (w->lm_head_own)
        qwen3_fill_uniform(w->lm_head_own, w->formats.lm_head, (size_t)c->vocab * hidden, s_hidden, seed,
                           STREAM_LM_HEAD);
    fill_norm(w->final_norm, w->wtype, hidden, seed, STREAM_FINAL_NORM);
    for (int l = 0; l < c->n_layers; l++) {
        struct qwen3_layer_weights *L = &w->layers[l];
        uint64_t s = STREAM_LAYER_BASE + (uint64_t)l * 16;
        fill_norm(L->attn_norm, w->wtype, hidden, seed, s + KIND_ATTN_NORM);
        fill_layer_matrix(w, l, QWEN3_MAT_QKV, s_hidden, seed, s + KIND_QKV);
        fill_norm(L->q_norm, w->wtype, hd, seed, s + KIND_Q_NORM);
        fill_norm(L->k_norm, w->wtype, hd, seed, s + KIND_K_NORM);
        fill_layer_matrix(w, l, QWEN3_MAT_O, s_q, seed, s + KIND_O);
        fill_norm(L->mlp_norm, w->wtype, hidden, seed, s + KIND_MLP_NORM);
        fill_layer_matrix(w, l, QWEN3_MAT_GATE_UP, s_hidden, seed, s + KIND_GATE_UP);
        fill_layer_matrix(w, l, QWEN3_MAT_DOWN, s_inter, seed, s + KIND_DOWN);
    }
    qwen3_weights_pack(w);
}

/* A block or K-quant matrix from file order into the kernels' (kernels/quant.h, kernels/quant_k.h) */
static void matrix_pack(void *m, enum fr_dtype t, int rows, int cols, int pw) {
    if (fr_dtype_is_block(t))
        quant_panels_pack(m, t, rows, cols, pw);
    else if (fr_dtype_is_kquant(t)) /* row-major, no panels */
        quant_k_matrix_pack(m, matvec_kquant_type(t), rows, cols);
}

void qwen3_weights_pack(struct qwen3_weights *w) {
    const struct qwen3_config *c = &w->cfg;
    matrix_pack(w->embed, w->formats.embed, c->vocab, c->hidden, c->hidden);
    if (w->lm_head_own) matrix_pack(w->lm_head_own, w->formats.lm_head, c->vocab, c->hidden, c->hidden);
    for (int l = 0; l < c->n_layers; l++)
        for (int m = 0; m < QWEN3_MAT_COUNT; m++) {
            struct qwen3_run runs[QWEN3_MAX_RUNS];
            const int n = qwen3_matrix_runs(w, l, (enum qwen3_matrix)m, runs);
            for (int i = 0; i < n; i++)
                matrix_pack(runs[i].w, runs[i].type, runs[i].rows, runs[i].cols, runs[i].pw);
        }
}
