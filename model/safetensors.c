/* Safetensors loader for Qwen3 checkpoints. The header is parsed with cJSON; each tensor name maps to one
 * slot of an expected-tensor table built from the config (fused q/k/v and gate/up rows included), and every
 * dtype, shape and offset range is checked against that table and the data size before anything is copied.
 * Checked in tests/test_safetensors.c: BF16 and F32 files written by the test load to the same logits as
 * the synthetic weights they came from, and each malformed case fails with the tensor's name; fuzzed by
 * tests/fuzz/fuzz_safetensors.c. */
#include "model/safetensors.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/col_panels.h"
#include "kernels/quant.h"

/* The safetensors format caps its header at 100 MB; a larger length is a corrupt file, not a big model. */
#define ST_MAX_HEADER_BYTES (100u * 1000u * 1000u)

enum st_part {
    PART_Q,
    PART_K,
    PART_V,
    PART_O,
    PART_Q_NORM,
    PART_K_NORM,
    PART_GATE,
    PART_UP,
    PART_DOWN,
    PART_ATTN_NORM,
    PART_MLP_NORM,
    PART_LAYER_COUNT,
    /* the per-model tensors, after the per-layer ones */
    PART_EMBED = PART_LAYER_COUNT,
    PART_FINAL_NORM,
    PART_LM_HEAD,
};

static const char *const layer_suffix[PART_LAYER_COUNT] = {
    [PART_Q] = "self_attn.q_proj.weight",
    [PART_K] = "self_attn.k_proj.weight",
    [PART_V] = "self_attn.v_proj.weight",
    [PART_O] = "self_attn.o_proj.weight",
    [PART_Q_NORM] = "self_attn.q_norm.weight",
    [PART_K_NORM] = "self_attn.k_norm.weight",
    [PART_GATE] = "mlp.gate_proj.weight",
    [PART_UP] = "mlp.up_proj.weight",
    [PART_DOWN] = "mlp.down_proj.weight",
    [PART_ATTN_NORM] = "input_layernorm.weight",
    [PART_MLP_NORM] = "post_attention_layernorm.weight",
};

enum st_dtype { ST_BF16, ST_F32 };

/* One tensor the config calls for, and what the header said about it. */
struct st_slot {
    enum st_part part;
    int layer; /* -1 for per-model tensors */
    int ndim;  /* 1 or 2 */
    uint64_t dims[2];
    int seen;
    enum st_dtype dtype;
    uint64_t begin, end; /* data_offsets, relative to the start of the data */
};

struct st_ctx {
    const struct qwen3_config *cfg;
    const char *file;
    struct st_slot *slots; /* 3 per-model slots, then PART_LAYER_COUNT per layer */
    int n_slots;
    struct fr_err *err;
};

static void slot_name(const struct st_slot *s, char *buf, size_t len) {
    if (s->part == PART_EMBED)
        snprintf(buf, len, "model.embed_tokens.weight");
    else if (s->part == PART_FINAL_NORM)
        snprintf(buf, len, "model.norm.weight");
    else if (s->part == PART_LM_HEAD)
        snprintf(buf, len, "lm_head.weight");
    else
        snprintf(buf, len, "model.layers.%d.%s", s->layer, layer_suffix[s->part]);
}

static void slot_set(struct st_slot *s, enum st_part part, int layer, uint64_t rows, uint64_t cols) {
    memset(s, 0, sizeof *s);
    s->part = part;
    s->layer = layer;
    s->ndim = cols ? 2 : 1;
    s->dims[0] = rows;
    s->dims[1] = cols;
}

static int build_slots(struct st_ctx *c) {
    const struct qwen3_config *cfg = c->cfg;
    uint64_t hidden = (uint64_t)cfg->hidden, inter = (uint64_t)cfg->intermediate,
             hd = (uint64_t)cfg->head_dim;
    uint64_t q_dim = (uint64_t)cfg->n_heads * hd, kv_dim = (uint64_t)cfg->n_kv_heads * hd;
    c->n_slots = 3 + PART_LAYER_COUNT * cfg->n_layers;
    c->slots = calloc((size_t)c->n_slots, sizeof *c->slots);
    if (!c->slots) return fr_err_set(c->err, "%s: out of memory for the tensor table", c->file);
    slot_set(&c->slots[0], PART_EMBED, -1, (uint64_t)cfg->vocab, hidden);
    slot_set(&c->slots[1], PART_FINAL_NORM, -1, hidden, 0);
    slot_set(&c->slots[2], PART_LM_HEAD, -1, (uint64_t)cfg->vocab, hidden);
    for (int l = 0; l < cfg->n_layers; l++) {
        struct st_slot *s = &c->slots[3 + PART_LAYER_COUNT * l];
        slot_set(&s[PART_Q], PART_Q, l, q_dim, hidden);
        slot_set(&s[PART_K], PART_K, l, kv_dim, hidden);
        slot_set(&s[PART_V], PART_V, l, kv_dim, hidden);
        slot_set(&s[PART_O], PART_O, l, hidden, q_dim);
        slot_set(&s[PART_Q_NORM], PART_Q_NORM, l, hd, 0);
        slot_set(&s[PART_K_NORM], PART_K_NORM, l, hd, 0);
        slot_set(&s[PART_GATE], PART_GATE, l, inter, hidden);
        slot_set(&s[PART_UP], PART_UP, l, inter, hidden);
        slot_set(&s[PART_DOWN], PART_DOWN, l, hidden, inter);
        slot_set(&s[PART_ATTN_NORM], PART_ATTN_NORM, l, hidden, 0);
        slot_set(&s[PART_MLP_NORM], PART_MLP_NORM, l, hidden, 0);
    }
    return 0;
}

/* Maps a tensor name to its slot, or NULL for a name the config does not call for. Layer numbers must be
 * canonical decimal ("07" is not layer 7) so two names can never reach the same slot. */
static struct st_slot *slot_find(struct st_ctx *c, const char *name) {
    if (strcmp(name, "model.embed_tokens.weight") == 0) return &c->slots[0];
    if (strcmp(name, "model.norm.weight") == 0) return &c->slots[1];
    if (strcmp(name, "lm_head.weight") == 0) return &c->slots[2];
    static const char prefix[] = "model.layers.";
    if (strncmp(name, prefix, sizeof prefix - 1) != 0) return NULL;
    const char *p = name + sizeof prefix - 1;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9')) return NULL;
    long layer = 0;
    while (*p >= '0' && *p <= '9') {
        layer = layer * 10 + (*p++ - '0');
        if (layer >= c->cfg->n_layers) return NULL;
    }
    if (*p++ != '.') return NULL;
    for (int k = 0; k < PART_LAYER_COUNT; k++)
        if (strcmp(p, layer_suffix[k]) == 0) return &c->slots[3 + PART_LAYER_COUNT * layer + k];
    return NULL;
}

/* A JSON number that is a non-negative integer exactly representable in a double. */
static int json_u64(const cJSON *v, uint64_t *out) {
    if (!cJSON_IsNumber(v)) return -1;
    double d = v->valuedouble;
    if (!(d >= 0.0) || d > 9007199254740992.0 || d != (double)(uint64_t)d) return -1;
    *out = (uint64_t)d;
    return 0;
}

static void format_shape(char *buf, size_t len, const uint64_t *dims, int ndim) {
    size_t off = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < ndim && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%llu", i ? ", " : "", (unsigned long long)dims[i]);
    if (off < len) snprintf(buf + off, len - off, "]");
}

/* A header string made safe for a one-line message: printable ASCII kept, anything else '?', truncated. */
static const char *printable(const char *s, char *buf, size_t len) {
    size_t i = 0;
    for (; s[i] && i + 1 < len; i++) buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (s[i] && len > 4)
        memcpy(buf + len - 4, "...", 4);
    else
        buf[i] = '\0';
    return buf;
}

/* Checks one header entry against its slot and the data size, and records it. */
static int check_entry(struct st_ctx *c, const cJSON *e, uint64_t data_bytes) {
    char name_buf[128], dtype_buf[40];
    struct st_slot *s = slot_find(c, e->string);
    /* a known name is printable already; an unknown one may hold any byte */
    const char *name = printable(e->string, name_buf, sizeof name_buf);
    if (!s)
        return fr_err_set(c->err, "%s: unexpected tensor '%s' for model '%s'", c->file, name, c->cfg->name);
    if (s->seen) return fr_err_set(c->err, "%s: tensor '%s' appears twice in the header", c->file, name);
    if (!cJSON_IsObject(e))
        return fr_err_set(c->err, "%s: tensor '%s': entry is not a JSON object", c->file, name);

    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    if (!cJSON_IsString(dt)) return fr_err_set(c->err, "%s: tensor '%s': missing dtype", c->file, name);
    if (strcmp(dt->valuestring, "BF16") == 0)
        s->dtype = ST_BF16;
    else if (strcmp(dt->valuestring, "F32") == 0)
        s->dtype = ST_F32;
    else
        return fr_err_set(c->err, "%s: tensor '%s': unsupported dtype '%s' (BF16 or F32)", c->file, name,
                          printable(dt->valuestring, dtype_buf, sizeof dtype_buf));

    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    if (!cJSON_IsArray(shape)) return fr_err_set(c->err, "%s: tensor '%s': missing shape", c->file, name);
    int ndim = cJSON_GetArraySize(shape);
    uint64_t dims[2] = {0, 0};
    char want[64], got[64];
    format_shape(want, sizeof want, s->dims, s->ndim);
    if (ndim != s->ndim)
        return fr_err_set(c->err, "%s: tensor '%s': shape has %d dimensions, expected %s", c->file, name,
                          ndim, want);
    for (int i = 0; i < ndim; i++)
        if (json_u64(cJSON_GetArrayItem(shape, i), &dims[i]))
            return fr_err_set(c->err, "%s: tensor '%s': shape entry %d is not a non-negative integer",
                              c->file, name, i);
    if (dims[0] != s->dims[0] || dims[1] != s->dims[1]) {
        format_shape(got, sizeof got, dims, ndim);
        return fr_err_set(c->err, "%s: tensor '%s': shape %s, expected %s for model '%s'", c->file, name, got,
                          want, c->cfg->name);
    }

    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    uint64_t b, end;
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 || json_u64(cJSON_GetArrayItem(offs, 0), &b) ||
        json_u64(cJSON_GetArrayItem(offs, 1), &end))
        return fr_err_set(c->err, "%s: tensor '%s': data_offsets must be two non-negative integers", c->file,
                          name);
    uint64_t need;
    if (__builtin_mul_overflow(s->dims[0], s->ndim == 2 ? s->dims[1] : 1, &need) ||
        __builtin_mul_overflow(need, s->dtype == ST_BF16 ? 2u : 4u, &need))
        return fr_err_set(c->err, "%s: tensor '%s': size overflows", c->file, name);
    if (b > end || end > data_bytes)
        return fr_err_set(c->err, "%s: tensor '%s': data_offsets [%llu, %llu] outside the %llu data bytes",
                          c->file, name, (unsigned long long)b, (unsigned long long)end,
                          (unsigned long long)data_bytes);
    if (end - b != need)
        return fr_err_set(c->err,
                          "%s: tensor '%s': data_offsets span %llu bytes, its shape and dtype need %llu",
                          c->file, name, (unsigned long long)(end - b), (unsigned long long)need);
    s->begin = b;
    s->end = end;
    s->seen = 1;
    return 0;
}

static int cmp_slot_begin(const void *a, const void *b) {
    const struct st_slot *x = *(const struct st_slot *const *)a, *y = *(const struct st_slot *const *)b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Every required tensor present, and no two byte ranges sharing a byte. */
static int check_complete(struct st_ctx *c) {
    char name[128], other[128];
    struct st_slot **seen = malloc((size_t)c->n_slots * sizeof(struct st_slot *));
    if (!seen) return fr_err_set(c->err, "%s: out of memory", c->file);
    int n = 0;
    for (int i = 0; i < c->n_slots; i++) {
        struct st_slot *s = &c->slots[i];
        int optional = s->part == PART_LM_HEAD && c->cfg->tied_embeddings;
        if (!s->seen && !optional) {
            slot_name(s, name, sizeof name);
            free(seen);
            return fr_err_set(c->err, "%s: missing tensor '%s'", c->file, name);
        }
        if (s->seen) seen[n++] = s;
    }
    qsort(seen, (size_t)n, sizeof(struct st_slot *), cmp_slot_begin);
    for (int i = 1; i < n; i++)
        if (seen[i]->begin < seen[i - 1]->end) {
            slot_name(seen[i - 1], other, sizeof other);
            slot_name(seen[i], name, sizeof name);
            free(seen);
            return fr_err_set(c->err, "%s: tensor '%s' overlaps tensor '%s' in the data", c->file, name,
                              other);
        }
    free(seen);
    return 0;
}

static float read_src(const unsigned char *src, enum st_dtype t, size_t i) {
    if (t == ST_BF16) {
        uint16_t h;
        memcpy(&h, src + 2 * i, 2); /* little-endian file on a little-endian host */
        return bf16_to_f32(h);
    }
    float f;
    memcpy(&f, src + 4 * i, 4);
    return f;
}

/* Converts a run of n elements from the file into dst of type dt. round_bf16 rounds f32 destinations to bf16
 * values: a bf16 model's norms, stored widened. */
static void convert_run(void *dst, enum fr_dtype dt, const unsigned char *src, enum st_dtype st, size_t n,
                        int round_bf16) {
    if (fr_dtype_is_block(dt)) { /* the values as bf16, quantised a block at a time (n: whole blocks) */
        for (size_t k = 0; k < n / QUANT_BLOCK; k++) {
            float v[QUANT_BLOCK];
            for (size_t i = 0; i < QUANT_BLOCK; i++)
                v[i] = bf16_to_f32(bf16_from_f32(read_src(src, st, k * QUANT_BLOCK + i)));
            quant_quantize_row((unsigned char *)dst + fr_dtype_bytes(dt, k * QUANT_BLOCK), dt, v,
                               QUANT_BLOCK);
        }
    } else if (round_bf16 && st == ST_F32 && dt == FR_DTYPE_F32) {
        float *d = dst;
        for (size_t i = 0; i < n; i++) d[i] = bf16_to_f32(bf16_from_f32(read_src(src, st, i)));
    } else if (st == ST_BF16 && dt == FR_DTYPE_BF16) {
        memcpy(dst, src, 2 * n);
    } else if (st == ST_F32 && dt == FR_DTYPE_F32) {
        memcpy(dst, src, 4 * n);
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
struct st_dest {
    void *base;
    enum fr_dtype dt;
    int rows, cols, row0, pw;
};

/* Copies the tensor's n_rows rows from the file into its destination, converting. */
static void copy_tensor(const struct st_dest *d, const unsigned char *src, enum st_dtype st, int n_rows,
                        int round_bf16) {
    size_t src_el = st == ST_BF16 ? 2 : 4;
    int panels = col_panel_count(d->cols, d->pw);
#pragma omp parallel for schedule(static)
    for (int r = 0; r < n_rows; r++)
        for (int p = 0; p < panels; p++) {
            int c0 = p * d->pw;
            size_t at = col_panel_index(d->rows, d->cols, d->pw, d->row0 + r, c0);
            convert_run((unsigned char *)d->base + fr_dtype_bytes(d->dt, at), d->dt,
                        src + ((size_t)r * (size_t)d->cols + (size_t)c0) * src_el, st,
                        (size_t)col_panel_cols(d->cols, d->pw, p), round_bf16);
        }
}

/* Where a slot's data goes in w (a layer's projection matrices in column panels, see model/weights.h); false
 * for a tied model's lm_head.weight. */
static bool slot_dest(const struct st_slot *s, struct qwen3_weights *w, struct st_dest *d) {
    const struct qwen3_config *cfg = &w->cfg;
    int inter = cfg->intermediate;
    int q_dim = cfg->n_heads * cfg->head_dim, kv_dim = cfg->n_kv_heads * cfg->head_dim;
    int n = (int)s->dims[0], cols = s->ndim == 2 ? (int)s->dims[1] : n;
    *d = (struct st_dest){.dt = w->wtype, .rows = s->ndim == 2 ? n : 1, .cols = cols, .pw = cols};
    if (s->part == PART_EMBED) return (d->base = w->embed) != NULL;
    if (s->part == PART_LM_HEAD) return (d->base = w->lm_head_own) != NULL;
    if (s->part == PART_FINAL_NORM) {
        d->dt = FR_DTYPE_F32;
        return (d->base = w->final_norm) != NULL;
    }
    struct qwen3_layer_weights *L = &w->layers[s->layer];
    switch (s->part) {
    case PART_Q:
    case PART_K:
    case PART_V:
        d->base = L->qkv, d->rows = q_dim + 2 * kv_dim;
        d->row0 = s->part == PART_Q ? 0 : s->part == PART_K ? q_dim : q_dim + kv_dim;
        break;
    case PART_O:
        d->base = L->o;
        break;
    case PART_GATE:
    case PART_UP:
        d->base = L->gate_up, d->rows = 2 * inter, d->row0 = s->part == PART_GATE ? 0 : inter;
        break;
    case PART_DOWN:
        d->base = L->down;
        break;
    default:
        d->dt = FR_DTYPE_F32;
        d->base = s->part == PART_Q_NORM      ? L->q_norm
                  : s->part == PART_K_NORM    ? L->k_norm
                  : s->part == PART_ATTN_NORM ? L->attn_norm
                                              : L->mlp_norm;
        return true;
    }
    d->pw = col_panel_width(cols);
    return true;
}

int safetensors_load_buffer(const void *data, size_t len, const char *name, const struct qwen3_config *cfg,
                            struct qwen3_weights *w, struct fr_err *err) {
    const unsigned char *bytes = data;
    if (w) cfg = &w->cfg; /* the shape the destination was carved for is the one to check against */
    if (len < 8)
        return fr_err_set(err, "%s: truncated: %zu bytes, shorter than the 8-byte header length", name, len);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | bytes[i];
    if (hlen > len - 8)
        return fr_err_set(err, "%s: header length %llu runs past the end of the file (%zu bytes)", name,
                          (unsigned long long)hlen, len);
    if (hlen > ST_MAX_HEADER_BYTES)
        return fr_err_set(err, "%s: header length %llu exceeds the format's 100 MB limit", name,
                          (unsigned long long)hlen);
    cJSON *root = cJSON_ParseWithLength((const char *)bytes + 8, (size_t)hlen);
    if (!root) return fr_err_set(err, "%s: header is not valid JSON", name);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return fr_err_set(err, "%s: header is not a JSON object", name);
    }
    struct st_ctx c = {.cfg = cfg, .file = name, .err = err};
    int rc = build_slots(&c);
    uint64_t data_bytes = (uint64_t)(len - 8 - (size_t)hlen);
    for (const cJSON *e = root->child; rc == 0 && e; e = e->next) {
        if (!e->string)
            rc = fr_err_set(err, "%s: header entry without a name", name);
        else if (strcmp(e->string, "__metadata__") == 0)
            continue;
        else
            rc = check_entry(&c, e, data_bytes);
    }
    cJSON_Delete(root);
    if (rc == 0) rc = check_complete(&c);
    if (rc == 0 && w) {
        const unsigned char *base = bytes + 8 + hlen;
        for (int i = 0; i < c.n_slots; i++) {
            const struct st_slot *s = &c.slots[i];
            struct st_dest d;
            if (s->seen && slot_dest(s, w, &d))
                copy_tensor(&d, base + s->begin, s->dtype, s->ndim == 2 ? (int)s->dims[0] : 1,
                            w->wtype != FR_DTYPE_F32);
        }
    }
    free(c.slots);
    return rc;
}

int safetensors_load(const char *path, struct qwen3_weights *w, struct fr_err *err) {
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; the check below refuses it */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return fr_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fr_err_set(err, "%s: not a regular file", path);
    }
    size_t len = (size_t)st.st_size;
    if (len < 8) {
        close(fd);
        return fr_err_set(err, "%s: truncated: %zu bytes, shorter than the 8-byte header length", path, len);
    }
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return fr_err_set(err, "%s: cannot map %zu bytes: %s", path, len, strerror(errno));
    madvise(map, len, MADV_SEQUENTIAL);
    int rc = safetensors_load_buffer(map, len, path, &w->cfg, w, err);
    munmap(map, len);
    return rc;
}
