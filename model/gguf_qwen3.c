/* Qwen3 config and weights from GGUF metadata and tensors. Key names are llama.cpp's (gguf-py's Keys with
 * the architecture "qwen3"); its Qwen3 converter permutes no rows (conversion/qwen.py), so a GGUF tensor's
 * rows are the Hugging Face tensor's rows and dims {cols, rows} list them fastest-first. Checked in
 * tests/test_gguf.c on files gguf-py wrote (tests/fixtures/gguf/) and on malformed ones. */
#include "model/gguf_qwen3.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/weight_slots.h"

/* The same bound config.c puts on every dimension. */
#define GGUF_QWEN3_MAX_DIM (1u << 24)

static int get_dim(const struct gguf_file *g, const char *key, int *out, struct fr_err *err) {
    uint64_t v;
    if (gguf_get_uint(g, key, &v, err)) return -1;
    if (v < 1 || v > GGUF_QWEN3_MAX_DIM)
        return fr_err_set(err, "%s: metadata '%s' must be in [1, %u], is %llu", g->path, key,
                          GGUF_QWEN3_MAX_DIM, (unsigned long long)v);
    *out = (int)v;
    return 0;
}

static int get_positive(const struct gguf_file *g, const char *key, double *out, struct fr_err *err) {
    if (gguf_get_float(g, key, out, err)) return -1;
    if (!isfinite(*out) || *out <= 0)
        return fr_err_set(err, "%s: metadata '%s' must be a positive number, is %g", g->path, key, *out);
    return 0;
}

static void name_from_path(const char *path, char *name, size_t len) {
    const char *slash = strrchr(path, '/');
    snprintf(name, len, "%s", slash ? slash + 1 : path);
    size_t n = strlen(name);
    if (n > 5 && strcmp(name + n - 5, ".gguf") == 0) name[n - 5] = '\0';
}

int gguf_qwen3_config(const struct gguf_file *g, struct qwen3_config *cfg, struct fr_err *err) {
    memset(cfg, 0, sizeof *cfg);
    const char *arch;
    size_t arch_n;
    if (gguf_get_string(g, "general.architecture", &arch, &arch_n, err)) return -1;
    if (arch_n != 5 || memcmp(arch, "qwen3", 5) != 0) {
        char buf[40];
        return fr_err_set(err, "%s: metadata 'general.architecture' is '%s', expected 'qwen3'", g->path,
                          fr_err_printable(arch, arch_n, buf, sizeof buf));
    }
    int value_dim = 0;
    if (get_dim(g, "qwen3.block_count", &cfg->n_layers, err) ||
        get_dim(g, "qwen3.context_length", &cfg->max_context, err) ||
        get_dim(g, "qwen3.embedding_length", &cfg->hidden, err) ||
        get_dim(g, "qwen3.feed_forward_length", &cfg->intermediate, err) ||
        get_dim(g, "qwen3.attention.head_count", &cfg->n_heads, err) ||
        get_dim(g, "qwen3.attention.head_count_kv", &cfg->n_kv_heads, err) ||
        get_dim(g, "qwen3.attention.key_length", &cfg->head_dim, err) ||
        get_positive(g, "qwen3.rope.freq_base", &cfg->rope_theta, err) ||
        get_positive(g, "qwen3.attention.layer_norm_rms_epsilon", &cfg->rms_eps, err))
        return -1;
    /* each layer has 11 tensors: a block count the index cannot hold is refused before any table is sized
     * by it */
    if ((uint64_t)cfg->n_layers > g->n_tensors / 11)
        return fr_err_set(err, "%s: metadata 'qwen3.block_count' %d needs %d tensors, the file has %llu",
                          g->path, cfg->n_layers, 11 * cfg->n_layers, (unsigned long long)g->n_tensors);
    /* the step uses one head_dim for V as for K */
    if (gguf_find_kv(g, "qwen3.attention.value_length")) {
        if (get_dim(g, "qwen3.attention.value_length", &value_dim, err)) return -1;
        if (value_dim != cfg->head_dim)
            return fr_err_set(err,
                              "%s: metadata 'qwen3.attention.value_length' %d differs from key_length %d",
                              g->path, value_dim, cfg->head_dim);
    }
    /* the vocabulary is the tokenizer's; a file without one is sized by its embedding */
    const struct gguf_kv *tokens = gguf_find_kv(g, "tokenizer.ggml.tokens");
    uint64_t vocab;
    if (tokens) {
        if (!gguf_get_array(g, "tokenizer.ggml.tokens", GGUF_VTYPE_STRING, err)) return -1;
        vocab = tokens->n;
    } else {
        const struct gguf_tensor *e = gguf_find_tensor(g, "token_embd.weight");
        if (!e || e->ndim != 2)
            return fr_err_set(err,
                              "%s: no 'tokenizer.ggml.tokens' and no 2-D 'token_embd.weight' to size the "
                              "vocabulary",
                              g->path);
        vocab = e->dims[1];
    }
    if (vocab < 1 || vocab > GGUF_QWEN3_MAX_DIM)
        return fr_err_set(err, "%s: vocabulary of %llu tokens is outside [1, %u]", g->path,
                          (unsigned long long)vocab, GGUF_QWEN3_MAX_DIM);
    cfg->vocab = (int)vocab;
    cfg->tied_embeddings = gguf_find_tensor(g, "output.weight") == NULL;
    snprintf(cfg->path, sizeof cfg->path, "%s", g->path);
    name_from_path(g->path, cfg->name, sizeof cfg->name);
    return qwen3_config_check(cfg, g->path, err);
}

int gguf_qwen3_check_config(const struct qwen3_config *f, const struct qwen3_config *m, struct fr_err *err) {
    struct {
        const char *key;
        long file, model;
    } ints[] = {{"qwen3.block_count", f->n_layers, m->n_layers},
                {"qwen3.embedding_length", f->hidden, m->hidden},
                {"qwen3.feed_forward_length", f->intermediate, m->intermediate},
                {"qwen3.attention.head_count", f->n_heads, m->n_heads},
                {"qwen3.attention.head_count_kv", f->n_kv_heads, m->n_kv_heads},
                {"qwen3.attention.key_length", f->head_dim, m->head_dim},
                {"tokenizer.ggml.tokens (vocabulary)", f->vocab, m->vocab},
                {"qwen3.context_length", f->max_context, m->max_context}};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (ints[i].file != ints[i].model)
            return fr_err_set(err, "%s: metadata '%s' is %ld, model '%s' (%s) has %ld", f->path, ints[i].key,
                              ints[i].file, m->name, m->path, ints[i].model);
    /* the file stores these as float32: compare at that precision */
    if ((float)f->rope_theta != (float)m->rope_theta)
        return fr_err_set(err, "%s: metadata 'qwen3.rope.freq_base' is %g, model '%s' has %g", f->path,
                          f->rope_theta, m->name, m->rope_theta);
    if ((float)f->rms_eps != (float)m->rms_eps)
        return fr_err_set(err,
                          "%s: metadata 'qwen3.attention.layer_norm_rms_epsilon' is %g, model '%s' has %g",
                          f->path, f->rms_eps, m->name, m->rms_eps);
    return 0;
}

/* The ggml types read, and the slot type each is read as. */
static const struct {
    uint32_t ggml;
    enum wslot_dtype slot;
} read_types[] = {{GGUF_GGML_F32, WSLOT_F32},   {GGUF_GGML_F16, WSLOT_F16},   {GGUF_GGML_BF16, WSLOT_BF16},
                  {GGUF_GGML_Q8_0, WSLOT_Q8_0}, {GGUF_GGML_Q4_0, WSLOT_Q4_0}, {GGUF_GGML_Q4_1, WSLOT_Q4_1},
                  {GGUF_GGML_Q5_0, WSLOT_Q5_0}, {GGUF_GGML_Q5_1, WSLOT_Q5_1}, {GGUF_GGML_Q4_K, WSLOT_Q4_K},
                  {GGUF_GGML_Q5_K, WSLOT_Q5_K}, {GGUF_GGML_Q6_K, WSLOT_Q6_K}};

/* A format no kernel runs is converted through its f16 scales: a NaN or infinite one would turn a whole
 * block into NaNs (or into codes of an infinite scale) without a word, so it is refused naming the block. */
static int check_scales(const struct gguf_file *g, const struct gguf_tensor *gt, enum wslot_dtype d,
                        const char *name, struct fr_err *err) {
    enum quant_file_type ft;
    if (!wslot_dtype_file_only(d, &ft)) return 0;
    const struct quant_file_format *f = quant_file_format(ft);
    size_t block;
    int field;
    uint16_t h;
    if (quant_file_check_scales(ft, g->buf + g->data_off + gt->offset, gt->bytes / (size_t)f->bytes, &block,
                                &field, &h) == 0)
        return 0;
    return fr_err_set(err, "%s: tensor '%s': %s %s %zu's scale '%s' is %s (f16 0x%04x)", g->path, name,
                      f->name, f->block == 256 ? "super-block" : "block", block, f->scales[field].name,
                      (h & 0x3ff) ? "NaN" : "infinite", h);
}

/* Checks one tensor of the index against its slot and records it. */
static int check_tensor(struct wslot_table *t, const struct gguf_file *g, const struct gguf_tensor *gt,
                        struct fr_err *err) {
    char name[72], tbuf[24];
    memcpy(name, gt->name, gt->name_len); /* the parser caps names at 63 bytes and refuses NULs */
    name[gt->name_len] = '\0';
    struct wslot *s = wslot_find(t, name);
    char shown[72]; /* a name no slot knows may hold any byte but NUL: made printable for the message */
    if (!s)
        return fr_err_set(err, "%s: unexpected tensor '%s' for model '%s'", g->path,
                          fr_err_printable(name, gt->name_len, shown, sizeof shown), t->cfg->name);
    if (s->seen) return fr_err_set(err, "%s: tensor '%s' appears twice", g->path, name);
    size_t k = 0, n_read = sizeof read_types / sizeof read_types[0];
    while (k < n_read && read_types[k].ggml != gt->type) k++;
    if (k == n_read)
        return fr_err_set(
            err,
            "%s: tensor '%s': type %s is not read (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, "
            "q4_k, q5_k, q6_k)",
            g->path, name, gguf_ggml_type_name(gt->type, tbuf, sizeof tbuf));
    s->dtype = read_types[k].slot;
    if (s->ndim == 1 && s->dtype != WSLOT_F32 && s->dtype != WSLOT_F16 && s->dtype != WSLOT_BF16)
        return fr_err_set(err, "%s: tensor '%s': type %s is not read for a norm (f32, f16 or bf16)", g->path,
                          name, gguf_ggml_type_name(gt->type, tbuf, sizeof tbuf));
    /* GGUF lists dims fastest-first: a [rows][cols] matrix is {cols, rows} */
    uint64_t want[2] = {s->ndim == 2 ? s->dims[1] : s->dims[0], s->dims[0]};
    char ws[64], gs[96];
    wslot_format_shape(ws, sizeof ws, want, s->ndim);
    if ((int)gt->ndim != s->ndim || gt->dims[0] != want[0] || (s->ndim == 2 && gt->dims[1] != want[1])) {
        wslot_format_shape(gs, sizeof gs, gt->dims, (int)gt->ndim);
        return fr_err_set(err, "%s: tensor '%s': dims %s, expected %s (fastest first) for model '%s'",
                          g->path, name, gs, ws, t->cfg->name);
    }
    if (check_scales(g, gt, s->dtype, name, err)) return -1;
    s->begin = gt->offset;
    s->end = gt->offset + gt->bytes;
    s->seen = 1;
    return 0;
}

/* The slot table of the file's tensors, checked against cfg and complete. */
static int fill_table(struct wslot_table *t, const struct gguf_file *g, const struct qwen3_config *cfg,
                      struct fr_err *err) {
    int rc = wslot_table_init(t, cfg, WSLOT_NAMES_GGUF, g->path, err);
    for (uint64_t i = 0; rc == 0 && i < g->n_tensors; i++) rc = check_tensor(t, g, &g->tensors[i], err);
    if (rc == 0) rc = wslot_check_complete(t, g->path, err);
    return rc;
}

/* A type the kernels run as it is (q8_0, q4_0), or one converted through f32 at load. */
static bool slot_is_block(enum wslot_dtype d) {
    return d == WSLOT_Q8_0 || d == WSLOT_Q4_0 || wslot_dtype_file_only(d, NULL);
}

/* The file's own mix, for a file whose layer matrices hold a format no kernel runs: general.file_type's
 * name, the layer matrices counted per type (most first), then the matrices outside the layers. */
static void describe_mix(const struct wslot_table *t, const struct gguf_file *g,
                         struct gguf_qwen3_types *out) {
    int count[WSLOT_DTYPE_COUNT] = {0};
    for (int i = 0; i < t->n_slots; i++) {
        const struct wslot *s = &t->slots[i];
        if (s->seen && s->layer >= 0 && wslot_part_is_layer_matrix(s->part)) count[s->dtype]++;
    }
    char fbuf[32];
    uint64_t ftype;
    struct fr_err ignored;
    const bool named =
        gguf_find_kv(g, "general.file_type") && gguf_get_uint(g, "general.file_type", &ftype, &ignored) == 0;
    size_t off = (size_t)snprintf(out->mix, sizeof out->mix,
                                  "file %s%smix:", named ? gguf_file_type_name(ftype, fbuf, sizeof fbuf) : "",
                                  named ? " " : "");
    for (int listed = 0;; listed++) {
        int best = -1;
        for (int d = 0; d < WSLOT_DTYPE_COUNT; d++)
            if (count[d] && (best < 0 || count[d] > count[best])) best = d;
        if (best < 0) break;
        if (listed == 0) snprintf(out->layer_type, sizeof out->layer_type, "%s", wslot_dtype_name(best));
        if (off < sizeof out->mix)
            off += (size_t)snprintf(out->mix + off, sizeof out->mix - off, "%s %d %s", listed ? "," : "",
                                    count[best], wslot_dtype_name(best));
        count[best] = 0;
    }
    for (int i = 0; i < t->n_slots; i++) {
        const struct wslot *s = &t->slots[i];
        if (!s->seen || s->layer >= 0 || s->ndim != 2) continue;
        if (s->part == WSLOT_LM_HEAD && t->cfg->tied_embeddings) continue; /* checked, never loaded */
        if (off < sizeof out->mix)
            off += (size_t)snprintf(
                out->mix + off, sizeof out->mix - off, "%s%s %s", s->part == WSLOT_EMBED ? " (+ " : ", ",
                s->part == WSLOT_EMBED ? "embedding" : "output", wslot_dtype_name(s->dtype));
    }
    if (off < sizeof out->mix) snprintf(out->mix + off, sizeof out->mix - off, ")");
}

/* The type a matrix runs in when nothing asks for another: a quantised type a kernel runs stays; a format no
 * kernel runs becomes q8_0; an element type in a quantised file takes the layers' commonest run type. */
static enum fr_dtype native_type(enum wslot_dtype d, enum fr_dtype layers) {
    if (wslot_dtype_runs(d) && d != WSLOT_BF16 && d != WSLOT_F16 && d != WSLOT_F32)
        return wslot_dtype_wtype(d);
    return wslot_dtype_file_only(d, NULL) ? FR_DTYPE_Q8_0 : layers;
}

/* Each matrix's run type in a quantised file (native_type), and the note of what the load converts. */
static void native_formats(const struct wslot_table *t, struct gguf_qwen3_types *out) {
    const struct qwen3_config *c = t->cfg;
    int count[FR_DTYPE_COUNT] = {0};
    for (int i = 0; i < t->n_slots; i++) {
        const struct wslot *s = &t->slots[i];
        if (s->seen && s->layer >= 0 && wslot_part_is_layer_matrix(s->part) &&
            fr_dtype_is_quant(native_type(s->dtype, FR_DTYPE_Q8_0)))
            count[native_type(s->dtype, FR_DTYPE_Q8_0)]++;
    }
    enum fr_dtype common = FR_DTYPE_Q8_0;
    for (int d = 0; d < FR_DTYPE_COUNT; d++)
        if (count[d] > count[common]) common = (enum fr_dtype)d;
    weight_formats_uniform(&out->formats, c->n_layers, common);
    int moved[WSLOT_DTYPE_COUNT][FR_DTYPE_COUNT] = {{0}};
    for (int i = 0; i < t->n_slots; i++) {
        const struct wslot *s = &t->slots[i];
        if (!s->seen || s->ndim != 2 || (s->layer >= 0 && !wslot_part_is_layer_matrix(s->part))) continue;
        if (s->part == WSLOT_LM_HEAD && c->tied_embeddings) continue; /* checked, never loaded */
        const enum fr_dtype run = native_type(s->dtype, common);
        if (s->part == WSLOT_EMBED)
            out->formats.embed = run;
        else if (s->part == WSLOT_LM_HEAD)
            out->formats.lm_head = run;
        else
            out->formats.layer[s->layer][wslot_wpart(s->part)] = run;
        if (!(wslot_dtype_runs(s->dtype) && (fr_dtype_is_quant(run) || wslot_dtype_wtype(s->dtype) == run)))
            moved[s->dtype][run]++;
    }
    size_t off = 0;
    for (int d = 0; d < WSLOT_DTYPE_COUNT; d++)
        for (int r = 0; r < FR_DTYPE_COUNT; r++)
            if (moved[d][r] && off < sizeof out->converted)
                off +=
                    (size_t)snprintf(out->converted + off, sizeof out->converted - off,
                                     "%s%d %s converted to %s", off ? ", " : "", moved[d][r],
                                     wslot_dtype_name((enum wslot_dtype)d), fr_dtype_name((enum fr_dtype)r));
    if (off && off < sizeof out->converted)
        snprintf(out->converted + off, sizeof out->converted - off, " at load (no kernel runs them as held)");
    if (c->tied_embeddings) out->formats.lm_head = out->formats.embed;
    out->wtype = common;
}

/* Whether any layer matrix is quantised; if so the file runs in its own types (native_formats), else the
 * element types convert to the run's one type as always. block: every layer matrix q8_0, or every one q4_0
 * (such a file loads only into weights of that type, or per tensor). */
static int table_types(const struct wslot_table *t, const struct gguf_file *g, struct gguf_qwen3_types *out,
                       struct fr_err *err) {
    (void)err;
    memset(out, 0, sizeof *out);
    const struct wslot *first = NULL;
    bool same = true;
    for (int i = 0; i < t->n_slots; i++) {
        const struct wslot *s = &t->slots[i];
        if (!s->seen || s->layer < 0 || !wslot_part_is_layer_matrix(s->part)) continue;
        if (wslot_dtype_file_only(s->dtype, NULL) && !wslot_dtype_runs(s->dtype)) out->convert_all = true;
        if (slot_is_block(s->dtype) || wslot_dtype_file_only(s->dtype, NULL)) out->quantised = true;
        if (!first) first = s;
        same = same && s->dtype == first->dtype;
    }
    out->block = first && same && (first->dtype == WSLOT_Q8_0 || first->dtype == WSLOT_Q4_0);
    snprintf(out->layer_type, sizeof out->layer_type, "%s", first ? wslot_dtype_name(first->dtype) : "none");
    if (out->quantised) {
        describe_mix(t, g, out);
        native_formats(t, out);
        return 0;
    }
    out->wtype = first ? wslot_dtype_wtype(first->dtype) : FR_DTYPE_BF16;
    return 0;
}

int gguf_qwen3_types(const struct gguf_file *g, const struct qwen3_config *cfg, struct gguf_qwen3_types *out,
                     struct fr_err *err) {
    struct wslot_table t;
    int rc = fill_table(&t, g, cfg, err);
    if (rc == 0) rc = table_types(&t, g, out, err);
    wslot_table_free(&t);
    return rc;
}

int gguf_qwen3_load(const struct gguf_file *g, const struct qwen3_config *cfg, struct qwen3_weights *w,
                    struct fr_err *err) {
    if (w) cfg = &w->cfg;
    struct wslot_table t;
    struct gguf_qwen3_types types;
    int rc = fill_table(&t, g, cfg, err);
    if (rc == 0) rc = table_types(&t, g, &types, err);
    if (rc == 0 && w && types.block && w->wtype != types.wtype)
        rc = fr_err_set(err, "%s: the file holds %s matrices; weights of type %s cannot take them", g->path,
                        types.layer_type, fr_dtype_name(w->wtype));
    if (rc == 0 && w) wslot_copy_all(&t, g->buf + g->data_off, w);
    wslot_table_free(&t);
    return rc;
}
