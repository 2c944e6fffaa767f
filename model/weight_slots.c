/* The Qwen3 tensor table shared by the checkpoint loaders: names in Hugging Face's and llama.cpp's GGUF
 * spelling, the shapes the config calls for, completeness and overlap checks, and the one copy from the
 * mapped file into the weights' allocation (column panels for the wide layer matrices, model/weights.h).
 * Checked through both loaders: tests/test_safetensors.c and tests/test_gguf.c load files written by other
 * code and decode them to the logits of the weights they came from. */
#include "model/weight_slots.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/matvec_kquant.h"
#include "kernels/quant.h"
#include "kernels/quant_k.h"

static const char *const hf_suffix[WSLOT_LAYER_COUNT] = {
    [WSLOT_Q] = "self_attn.q_proj.weight",
    [WSLOT_K] = "self_attn.k_proj.weight",
    [WSLOT_V] = "self_attn.v_proj.weight",
    [WSLOT_O] = "self_attn.o_proj.weight",
    [WSLOT_Q_NORM] = "self_attn.q_norm.weight",
    [WSLOT_K_NORM] = "self_attn.k_norm.weight",
    [WSLOT_GATE] = "mlp.gate_proj.weight",
    [WSLOT_UP] = "mlp.up_proj.weight",
    [WSLOT_DOWN] = "mlp.down_proj.weight",
    [WSLOT_ATTN_NORM] = "input_layernorm.weight",
    [WSLOT_MLP_NORM] = "post_attention_layernorm.weight",
};

/* llama.cpp's gguf-py tensor map (MODEL_ARCH.QWEN3 in gguf/constants.py) */
static const char *const gguf_suffix[WSLOT_LAYER_COUNT] = {
    [WSLOT_Q] = "attn_q.weight",           [WSLOT_K] = "attn_k.weight",
    [WSLOT_V] = "attn_v.weight",           [WSLOT_O] = "attn_output.weight",
    [WSLOT_Q_NORM] = "attn_q_norm.weight", [WSLOT_K_NORM] = "attn_k_norm.weight",
    [WSLOT_GATE] = "ffn_gate.weight",      [WSLOT_UP] = "ffn_up.weight",
    [WSLOT_DOWN] = "ffn_down.weight",      [WSLOT_ATTN_NORM] = "attn_norm.weight",
    [WSLOT_MLP_NORM] = "ffn_norm.weight",
};

struct naming {
    const char *embed, *final_norm, *lm_head, *layer_prefix;
    const char *const *suffix;
};

static const struct naming namings[] = {
    [WSLOT_NAMES_HF] = {"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight", "model.layers.",
                        hf_suffix},
    [WSLOT_NAMES_GGUF] = {"token_embd.weight", "output_norm.weight", "output.weight", "blk.", gguf_suffix},
};

static void slot_set(struct wslot *s, enum wslot_part part, int layer, uint64_t rows, uint64_t cols) {
    memset(s, 0, sizeof *s);
    s->part = part;
    s->layer = layer;
    s->ndim = cols ? 2 : 1;
    s->dims[0] = rows;
    s->dims[1] = cols;
}

int wslot_table_init(struct wslot_table *t, const struct qwen3_config *cfg, enum wslot_names names,
                     const char *file, struct fr_err *err) {
    uint64_t hidden = (uint64_t)cfg->hidden, inter = (uint64_t)cfg->intermediate,
             hd = (uint64_t)cfg->head_dim;
    uint64_t q_dim = (uint64_t)cfg->n_heads * hd, kv_dim = (uint64_t)cfg->n_kv_heads * hd;
    t->cfg = cfg;
    t->names = names;
    t->n_slots = 3 + WSLOT_LAYER_COUNT * cfg->n_layers;
    t->slots = calloc((size_t)t->n_slots, sizeof *t->slots);
    if (!t->slots) return fr_err_set(err, "%s: out of memory for the tensor table", file);
    slot_set(&t->slots[0], WSLOT_EMBED, -1, (uint64_t)cfg->vocab, hidden);
    slot_set(&t->slots[1], WSLOT_FINAL_NORM, -1, hidden, 0);
    slot_set(&t->slots[2], WSLOT_LM_HEAD, -1, (uint64_t)cfg->vocab, hidden);
    for (int l = 0; l < cfg->n_layers; l++) {
        struct wslot *s = &t->slots[3 + WSLOT_LAYER_COUNT * l];
        slot_set(&s[WSLOT_Q], WSLOT_Q, l, q_dim, hidden);
        slot_set(&s[WSLOT_K], WSLOT_K, l, kv_dim, hidden);
        slot_set(&s[WSLOT_V], WSLOT_V, l, kv_dim, hidden);
        slot_set(&s[WSLOT_O], WSLOT_O, l, hidden, q_dim);
        slot_set(&s[WSLOT_Q_NORM], WSLOT_Q_NORM, l, hd, 0);
        slot_set(&s[WSLOT_K_NORM], WSLOT_K_NORM, l, hd, 0);
        slot_set(&s[WSLOT_GATE], WSLOT_GATE, l, inter, hidden);
        slot_set(&s[WSLOT_UP], WSLOT_UP, l, inter, hidden);
        slot_set(&s[WSLOT_DOWN], WSLOT_DOWN, l, hidden, inter);
        slot_set(&s[WSLOT_ATTN_NORM], WSLOT_ATTN_NORM, l, hidden, 0);
        slot_set(&s[WSLOT_MLP_NORM], WSLOT_MLP_NORM, l, hidden, 0);
    }
    return 0;
}

void wslot_table_free(struct wslot_table *t) {
    free(t->slots);
    t->slots = NULL;
    t->n_slots = 0;
}

void wslot_name(const struct wslot_table *t, const struct wslot *s, char *buf, size_t len) {
    const struct naming *nm = &namings[t->names];
    if (s->part == WSLOT_EMBED)
        snprintf(buf, len, "%s", nm->embed);
    else if (s->part == WSLOT_FINAL_NORM)
        snprintf(buf, len, "%s", nm->final_norm);
    else if (s->part == WSLOT_LM_HEAD)
        snprintf(buf, len, "%s", nm->lm_head);
    else
        snprintf(buf, len, "%s%d.%s", nm->layer_prefix, s->layer, nm->suffix[s->part]);
}

struct wslot *wslot_find(struct wslot_table *t, const char *name) {
    const struct naming *nm = &namings[t->names];
    if (strcmp(name, nm->embed) == 0) return &t->slots[0];
    if (strcmp(name, nm->final_norm) == 0) return &t->slots[1];
    if (strcmp(name, nm->lm_head) == 0) return &t->slots[2];
    size_t plen = strlen(nm->layer_prefix);
    if (strncmp(name, nm->layer_prefix, plen) != 0) return NULL;
    const char *p = name + plen;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9')) return NULL;
    long layer = 0;
    while (*p >= '0' && *p <= '9') {
        layer = layer * 10 + (*p++ - '0');
        if (layer >= t->cfg->n_layers) return NULL;
    }
    if (*p++ != '.') return NULL;
    for (int k = 0; k < WSLOT_LAYER_COUNT; k++)
        if (strcmp(p, nm->suffix[k]) == 0) return &t->slots[3 + WSLOT_LAYER_COUNT * layer + k];
    return NULL;
}

_Static_assert(WSLOT_Q6_K - WSLOT_Q4_1 == QUANT_FILE_Q6_K - QUANT_FILE_Q4_1 && QUANT_FILE_Q4_1 == 0 &&
                   WSLOT_DTYPE_COUNT == WSLOT_Q4_1 + QUANT_FILE_COUNT,
               "the file-only types follow kernels/quant_dequant.h's order");

bool wslot_dtype_file_only(enum wslot_dtype d, enum quant_file_type *t) {
    if (d < WSLOT_Q4_1) return false;
    if (t) *t = (enum quant_file_type)(d - WSLOT_Q4_1);
    return true;
}

const char *wslot_dtype_name(enum wslot_dtype d) {
    static const char *const names[WSLOT_Q4_1] = {[WSLOT_BF16] = "bf16",
                                                  [WSLOT_F16] = "f16",
                                                  [WSLOT_F32] = "f32",
                                                  [WSLOT_Q8_0] = "q8_0",
                                                  [WSLOT_Q4_0] = "q4_0"};
    enum quant_file_type t;
    return wslot_dtype_file_only(d, &t) ? quant_file_format(t)->name : names[d];
}

size_t wslot_dtype_bytes(enum wslot_dtype d, size_t n) {
    enum quant_file_type t;
    if (wslot_dtype_file_only(d, &t)) {
        const struct quant_file_format *f = quant_file_format(t);
        return n / (size_t)f->block * (size_t)f->bytes;
    }
    return d == WSLOT_Q8_0   ? fr_dtype_bytes(FR_DTYPE_Q8_0, n)
           : d == WSLOT_Q4_0 ? fr_dtype_bytes(FR_DTYPE_Q4_0, n)
           : d == WSLOT_F32  ? 4 * n
                             : 2 * n;
}

enum fr_dtype wslot_dtype_wtype(enum wslot_dtype d) {
    switch (d) {
    case WSLOT_Q8_0:
        return FR_DTYPE_Q8_0;
    case WSLOT_Q4_0:
        return FR_DTYPE_Q4_0;
    case WSLOT_BF16:
        return FR_DTYPE_BF16;
    case WSLOT_Q4_K:
        return FR_DTYPE_Q4_K;
    case WSLOT_Q5_K:
        return FR_DTYPE_Q5_K;
    case WSLOT_Q6_K:
        return FR_DTYPE_Q6_K;
    case WSLOT_F16:
    case WSLOT_F32:
        return FR_DTYPE_F32;
    default: /* Q4_1, Q5_0, Q5_1: no kernel runs them, converted at load */
        return FR_DTYPE_Q8_0;
    }
}

bool wslot_dtype_runs(enum wslot_dtype d) {
    return !wslot_dtype_file_only(d, NULL) || d == WSLOT_Q4_K || d == WSLOT_Q5_K || d == WSLOT_Q6_K;
}

bool wslot_part_is_layer_matrix(enum wslot_part p) {
    return p == WSLOT_Q || p == WSLOT_K || p == WSLOT_V || p == WSLOT_O || p == WSLOT_GATE || p == WSLOT_UP ||
           p == WSLOT_DOWN;
}

void wslot_format_shape(char *buf, size_t len, const uint64_t *dims, int ndim) {
    size_t off = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < ndim && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
    if (off < len) snprintf(buf + off, len - off, "]");
}

static int cmp_slot_begin(const void *a, const void *b) {
    const struct wslot *x = *(const struct wslot *const *)a, *y = *(const struct wslot *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

int wslot_check_complete(const struct wslot_table *t, const char *file, struct fr_err *err) {
    char name[128], other[128];
    struct wslot **seen = malloc((size_t)t->n_slots * sizeof(struct wslot *));
    if (!seen) return fr_err_set(err, "%s: out of memory", file);
    int n = 0;
    for (int i = 0; i < t->n_slots; i++) {
        struct wslot *s = &t->slots[i];
        int optional = s->part == WSLOT_LM_HEAD && t->cfg->tied_embeddings;
        if (!s->seen && !optional) {
            wslot_name(t, s, name, sizeof name);
            free(seen);
            return fr_err_set(err, "%s: missing tensor '%s'", file, name);
        }
        if (s->seen) seen[n++] = s;
    }
    qsort(seen, (size_t)n, sizeof(struct wslot *), cmp_slot_begin);
    for (int i = 1; i < n; i++)
        if (seen[i]->begin < seen[i - 1]->end) {
            wslot_name(t, seen[i - 1], other, sizeof other);
            wslot_name(t, seen[i], name, sizeof name);
            free(seen);
            return fr_err_set(err, "%s: tensor '%s' overlaps tensor '%s' in the data", file, name, other);
        }
    free(seen);
    return 0;
}

static float read_src(const unsigned char *src, enum wslot_dtype t, size_t i) {
    if (t != WSLOT_F32) {
        uint16_t h;
        memcpy(&h, src + 2 * i, 2); /* little-endian file on a little-endian host */
        return t == WSLOT_BF16 ? bf16_to_f32(h) : quant_f16_to_f32(h); /* every f16 is an f32, exactly */
    }
    float f;
    memcpy(&f, src + 4 * i, 4);
    return f;
}

static bool same_layout(enum wslot_dtype st, enum fr_dtype dt) {
    return (st == WSLOT_BF16 && dt == FR_DTYPE_BF16) || (st == WSLOT_F32 && dt == FR_DTYPE_F32) ||
           (st == WSLOT_Q8_0 && dt == FR_DTYPE_Q8_0) || (st == WSLOT_Q4_0 && dt == FR_DTYPE_Q4_0) ||
           (st == WSLOT_Q4_K && dt == FR_DTYPE_Q4_K) || (st == WSLOT_Q5_K && dt == FR_DTYPE_Q5_K) ||
           (st == WSLOT_Q6_K && dt == FR_DTYPE_Q6_K);
}

/* A run with a block type on either side (n whole blocks), one block at a time through f32: dequantised
 * (exact), rounded to bf16 values where the destination is a block type (a block model is the bf16 model
 * quantised) or a bf16 model's widened norm, then stored. */
static void convert_blocks(unsigned char *dst, enum fr_dtype dt, const unsigned char *src,
                           enum wslot_dtype st, size_t n, int round_bf16) {
    for (size_t k = 0; k < n; k += QUANT_BLOCK) {
        float v[QUANT_BLOCK];
        if (st == WSLOT_Q8_0 || st == WSLOT_Q4_0)
            quant_dequantize_row(v, wslot_dtype_wtype(st), src + wslot_dtype_bytes(st, k), QUANT_BLOCK);
        else
            for (size_t i = 0; i < QUANT_BLOCK; i++) v[i] = read_src(src, st, k + i);
        if (fr_dtype_is_block(dt) || (round_bf16 && dt == FR_DTYPE_F32))
            for (size_t i = 0; i < QUANT_BLOCK; i++) v[i] = bf16_to_f32(bf16_from_f32(v[i]));
        if (fr_dtype_is_block(dt))
            quant_quantize_row(dst + fr_dtype_bytes(dt, k), dt, v, QUANT_BLOCK);
        else if (dt == FR_DTYPE_BF16)
            for (size_t i = 0; i < QUANT_BLOCK; i++) ((uint16_t *)(void *)dst)[k + i] = bf16_from_f32(v[i]);
        else
            memcpy(dst + 4 * k, v, sizeof v);
    }
}

/* Converts a run of n elements from the file into dst of type dt. round_bf16 rounds f32 destinations to bf16
 * values: a bf16 model's norms, stored widened. */
static void convert_run(void *dst, enum fr_dtype dt, const unsigned char *src, enum wslot_dtype st, size_t n,
                        int round_bf16) {
    if (same_layout(st, dt) && !(round_bf16 && dt == FR_DTYPE_F32)) {
        memcpy(dst, src, fr_dtype_bytes(dt, n)); /* a block tensor of the model's type keeps its blocks */
    } else if (fr_dtype_is_block(dt) || st == WSLOT_Q8_0 || st == WSLOT_Q4_0) {
        convert_blocks(dst, dt, src, st, n, round_bf16);
    } else if (round_bf16 && dt == FR_DTYPE_F32) {
        float *d = dst;
        for (size_t i = 0; i < n; i++) d[i] = bf16_to_f32(bf16_from_f32(read_src(src, st, i)));
    } else if (dt == FR_DTYPE_BF16) {
        uint16_t *d = dst;
        for (size_t i = 0; i < n; i++) d[i] = bf16_from_f32(read_src(src, st, i));
    } else {
        float *d = dst;
        for (size_t i = 0; i < n; i++) d[i] = read_src(src, st, i);
    }
}

/* Where a tensor goes: its row r is row row0 + r of a [rows][cols] matrix of type dt at base, stored as
 * column panels of pw columns (kernels/col_panels.h; pw = cols: row-major). A one-dimensional tensor is one
 * row. */
struct wslot_dest {
    void *base;
    enum fr_dtype dt;
    int rows, cols, row0, pw;
};

/* Converts elements [first, first + n) of a row in a file-only format t (whole blocks) into dst of type dt,
 * a block at a time through f32: a column panel may start inside a Q4_K/Q5_K/Q6_K superblock. first and n
 * are multiples of 32 where dt is a block type (its panels are whole blocks). A block dt is quantised from
 * the exact f32 values, not from them rounded to bf16 as a bf16 model's are: no bf16 model stands behind
 * such a file, and the rounding would double Q8_0's requantisation error (2^-8 against 1/254 of max|w|). */
static void convert_file_run(unsigned char *dst, enum fr_dtype dt, const unsigned char *row,
                             enum quant_file_type t, size_t first, size_t n, int round_bf16) {
    const struct quant_file_format *f = quant_file_format(t);
    const size_t blk = (size_t)f->block;
    float v[256];
    for (size_t done = 0; done < n;) {
        size_t e = first + done, in = e % blk, take = blk - in;
        if (take > n - done) take = n - done;
        quant_dequantize_file(v, t, row + e / blk * (size_t)f->bytes, blk);
        if (fr_dtype_is_block(dt))
            quant_quantize_row(dst + fr_dtype_bytes(dt, done), dt, v + in, take);
        else
            convert_run(dst + fr_dtype_bytes(dt, done), dt, (const unsigned char *)(v + in), WSLOT_F32, take,
                        round_bf16);
        done += take;
    }
}

/* One row of cols weights into a K-quant row dst of type dt: its blocks copied where the file holds dt,
 * else through f32 (a file-only format's exact values, any other type's rounded to bf16 values, as a block
 * format is quantised from them) and quantised by our K-quant quantiser. */
static void convert_kquant_row(unsigned char *dst, enum fr_dtype dt, const unsigned char *row,
                               enum wslot_dtype st, size_t cols) {
    if (same_layout(st, dt)) {
        memcpy(dst, row, fr_dtype_bytes(dt, cols));
        return;
    }
    float *v = malloc(cols * sizeof *v);
    if (!v) abort(); /* the load has no error path once the table is checked; a row of floats */
    enum quant_file_type ft;
    if (wslot_dtype_file_only(st, &ft))
        convert_file_run((unsigned char *)v, FR_DTYPE_F32, row, ft, 0, cols, 0);
    else
        convert_run(v, FR_DTYPE_F32, row, st, cols, 1);
    quant_k_quantize_row(dst, matvec_kquant_type(dt), v, cols);
    free(v);
}

/* Copies the tensor's n_rows rows from the file into its destination, converting. */
static void copy_tensor(const struct wslot_dest *d, const unsigned char *src, enum wslot_dtype st, int n_rows,
                        int round_bf16) {
    int panels = col_panel_count(d->cols, d->pw);
    if (fr_dtype_is_kquant(d->dt)) { /* row-major (kernels/col_panels.h) */
#pragma omp parallel for schedule(static)
        for (int r = 0; r < n_rows; r++)
            convert_kquant_row(
                (unsigned char *)d->base + fr_dtype_bytes(d->dt, (size_t)(d->row0 + r) * (size_t)d->cols),
                d->dt, src + wslot_dtype_bytes(st, (size_t)r * (size_t)d->cols), st, (size_t)d->cols);
        return;
    }
#pragma omp parallel for schedule(static)
    for (int r = 0; r < n_rows; r++)
        for (int p = 0; p < panels; p++) {
            int c0 = p * d->pw;
            size_t at = col_panel_index(d->rows, d->cols, d->pw, d->row0 + r, c0),
                   n = (size_t)col_panel_cols(d->cols, d->pw, p);
            enum quant_file_type ft;
            unsigned char *to = (unsigned char *)d->base + fr_dtype_bytes(d->dt, at);
            if (wslot_dtype_file_only(st, &ft))
                convert_file_run(to, d->dt, src + wslot_dtype_bytes(st, (size_t)r * (size_t)d->cols), ft,
                                 (size_t)c0, n, round_bf16);
            else
                convert_run(to, d->dt, src + wslot_dtype_bytes(st, (size_t)r * (size_t)d->cols + (size_t)c0),
                            st, n, round_bf16);
        }
}

/* Where a slot's data goes in w (a layer's projection matrices in column panels, see model/weights.h); false
 * for a tied model's LM head. */
static bool slot_dest(const struct wslot *s, const struct qwen3_weights *w, struct wslot_dest *d) {
    const struct qwen3_config *cfg = &w->cfg;
    int n = (int)s->dims[0], cols = s->ndim == 2 ? (int)s->dims[1] : n;
    *d = (struct wslot_dest){.dt = w->formats.embed, .rows = s->ndim == 2 ? n : 1, .cols = cols, .pw = cols};
    if (s->part == WSLOT_EMBED) return (d->base = w->embed) != NULL;
    d->dt = w->formats.lm_head;
    if (s->part == WSLOT_LM_HEAD) return (d->base = w->lm_head_own) != NULL;
    if (s->part == WSLOT_FINAL_NORM) {
        d->dt = FR_DTYPE_F32;
        return (d->base = w->final_norm) != NULL;
    }
    struct qwen3_layer_weights *L = &w->layers[s->layer];
    if (!wslot_part_is_layer_matrix(s->part)) {
        d->dt = FR_DTYPE_F32;
        d->base = s->part == WSLOT_Q_NORM      ? L->q_norm
                  : s->part == WSLOT_K_NORM    ? L->k_norm
                  : s->part == WSLOT_ATTN_NORM ? L->attn_norm
                                               : L->mlp_norm;
        return true;
    }
    /* its rows within the run of its type (model/weights.h) */
    const enum wpart p = wslot_wpart(s->part);
    struct qwen3_run run;
    qwen3_part_run(w, s->layer, p, &run);
    d->base = run.w, d->dt = run.type, d->rows = run.rows, d->pw = run.pw;
    d->row0 = qwen3_part_row0(cfg, p) - run.row0;
    return true;
}

enum wpart wslot_wpart(enum wslot_part p) {
    switch (p) {
    case WSLOT_K:
        return WPART_K;
    case WSLOT_V:
        return WPART_V;
    case WSLOT_O:
        return WPART_O;
    case WSLOT_GATE:
        return WPART_GATE;
    case WSLOT_UP:
        return WPART_UP;
    case WSLOT_DOWN:
        return WPART_DOWN;
    default:
        return WPART_Q;
    }
}

void wslot_copy_all(const struct wslot_table *t, const unsigned char *data, struct qwen3_weights *w) {
    for (int i = 0; i < t->n_slots; i++) {
        const struct wslot *s = &t->slots[i];
        struct wslot_dest d;
        if (s->seen && slot_dest(s, w, &d))
            copy_tensor(&d, data + s->begin, s->dtype, s->ndim == 2 ? (int)s->dims[0] : 1,
                        w->wtype != FR_DTYPE_F32);
    }
    qwen3_weights_pack(w);
}

enum fr_dtype wslot_export_type(const struct wslot *s, const struct qwen3_weights *w) {
    struct wslot_dest d;
    if (s->ndim != 2) return FR_DTYPE_F32;
    return slot_dest(s, w, &d) ? d.dt : w->formats.lm_head;
}

size_t wslot_export_bytes(const struct wslot *s, const struct qwen3_weights *w) {
    size_t n = (size_t)s->dims[0] * (size_t)(s->ndim == 2 ? s->dims[1] : 1);
    return fr_dtype_bytes(wslot_export_type(s, w), n);
}

int wslot_export(const struct wslot *s, const struct qwen3_weights *w, unsigned char *out) {
    struct wslot_dest d;
    if (!slot_dest(s, w, &d)) return -1;
    int panels = col_panel_count(d.cols, d.pw), n_rows = s->ndim == 2 ? (int)s->dims[0] : 1;
    for (int r = 0; r < n_rows; r++)
        for (int p = 0; p < panels; p++) {
            int c0 = p * d.pw, np = col_panel_cols(d.cols, d.pw, p);
            unsigned char *to = out + fr_dtype_bytes(d.dt, (size_t)r * (size_t)d.cols + (size_t)c0);
            if (fr_dtype_is_kquant(d.dt)) { /* row-major in groups of 8 rows (kernels/quant_k.h) */
                quant_k_matrix_row(to, matvec_kquant_type(d.dt), d.base, d.rows, d.cols, d.row0 + r);
                continue;
            }
            if (fr_dtype_is_block(d.dt)) { /* back to the file's order a block at a time (kernels/quant.h) */
                const void *panel =
                    (const unsigned char *)d.base + fr_dtype_bytes(d.dt, col_panel_start(d.rows, d.pw, p));
                for (int k = 0; k < np / QUANT_BLOCK; k++)
                    quant_matrix_block(to + fr_dtype_bytes(d.dt, (size_t)k * QUANT_BLOCK), d.dt, panel,
                                       d.rows, np, d.row0 + r, k);
                continue;
            }
            size_t at = col_panel_index(d.rows, d.cols, d.pw, d.row0 + r, c0);
            memcpy(to, (const unsigned char *)d.base + fr_dtype_bytes(d.dt, at),
                   fr_dtype_bytes(d.dt, (size_t)np));
        }
    return 0;
}
