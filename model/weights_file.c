/* Weights files behind one interface: GGUF (config from its metadata, model/gguf_qwen3.h) or safetensors
 * (config from --model, model/safetensors.h), both memory-mapped (model/file_map.h) and copied once into the
 * weights' huge-page allocation. Checked in tests/test_gguf.c and through the decode command's tests. */
#include "model/weights_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "model/file_map.h"
#include "model/gguf.h"
#include "model/gguf_qwen3.h"
#include "model/gguf_qwen3_write.h"
#include "model/safetensors.h"
#include "model/sha256.h"

int weights_file_format(const char *path, enum weights_format *fmt, struct fr_err *err) {
    struct file_map m;
    if (file_map_open(path, 4, &m, err)) return -1;
    *fmt = memcmp(m.data, "GGUF", 4) == 0 ? WEIGHTS_FORMAT_GGUF : WEIGHTS_FORMAT_SAFETENSORS;
    file_map_close(&m);
    return 0;
}

const char *weights_format_name(enum weights_format fmt) {
    return fmt == WEIGHTS_FORMAT_GGUF ? "gguf" : "safetensors";
}

static int load_model(const char *model, struct qwen3_config *cfg, struct fr_err *err) {
    char path[1024];
    return qwen3_config_resolve(model, path, sizeof path, err) || qwen3_config_load(path, cfg, err) ? -1 : 0;
}

/* Checks the file's tensor index against cfg without copying anything: a bad file fails before a run
 * spends minutes measuring the machine. */
static int check_tensors(const struct file_map *m, enum weights_format fmt, const char *path,
                         const struct qwen3_config *cfg, struct fr_err *err) {
    if (fmt == WEIGHTS_FORMAT_SAFETENSORS)
        return safetensors_load_buffer(m->data, m->len, path, cfg, NULL, err);
    struct gguf_file g;
    int rc = gguf_parse(m->data, m->len, path, &g, err);
    if (rc == 0) rc = gguf_qwen3_load(&g, cfg, NULL, err);
    gguf_free(&g);
    return rc;
}

int weights_file_config(const char *path, const char *model, struct qwen3_config *cfg, struct fr_err *err) {
    if (!path)
        return model ? load_model(model, cfg, err)
                     : fr_err_set(err, "--model or a GGUF --weights is required");
    enum weights_format fmt;
    if (weights_file_format(path, &fmt, err)) return -1;
    if (fmt != WEIGHTS_FORMAT_GGUF && !model)
        return fr_err_set(err, "%s: a safetensors file carries no model config: give --model as well", path);
    struct file_map m;
    if (file_map_open(path, fmt == WEIGHTS_FORMAT_GGUF ? 4 : 8, &m, err)) return -1;
    int rc = 0;
    if (fmt == WEIGHTS_FORMAT_GGUF) {
        struct gguf_file g;
        struct qwen3_config file_cfg;
        rc = gguf_parse(m.data, m.len, path, &g, err);
        if (rc == 0) rc = gguf_qwen3_config(&g, &file_cfg, err);
        gguf_free(&g);
        if (rc == 0 && !model) *cfg = file_cfg;
        if (rc == 0 && model)
            rc = load_model(model, cfg, err) || gguf_qwen3_check_config(&file_cfg, cfg, err);
    } else {
        rc = load_model(model, cfg, err);
    }
    if (rc == 0) rc = check_tensors(&m, fmt, path, cfg, err);
    file_map_close(&m);
    return rc ? -1 : 0;
}

/* want: the formats asked for (given), named `name`; requested its one type where it has one. */
static int file_formats(const char *path, const struct qwen3_config *cfg, const struct weight_formats *want,
                        const char *name, bool given, struct weight_formats *formats, char *note,
                        size_t note_len, struct fr_err *err) {
    enum fr_dtype requested;
    const bool uniform = weight_formats_is_uniform(want, &requested);
    *formats = *want;
    if (note && note_len) note[0] = '\0';
    if (!path) return 0;
    enum weights_format fmt;
    if (weights_file_format(path, &fmt, err)) return -1;
    if (fmt != WEIGHTS_FORMAT_GGUF) return 0;
    struct file_map m;
    if (file_map_open(path, 4, &m, err)) return -1;
    struct gguf_file g;
    struct gguf_qwen3_types t;
    int rc = gguf_parse(m.data, m.len, path, &g, err);
    if (rc == 0) rc = gguf_qwen3_types(&g, cfg, &t, err);
    gguf_free(&g);
    file_map_close(&m);
    if (rc) return -1;
    if (t.block && given && (!uniform || requested != t.wtype))
        return fr_err_set(err,
                          "%s holds %s matrices: --dtype %s does not match (give --dtype %s or leave it out)",
                          path, t.layer_type, name, t.layer_type);
    if (t.quantised && !given) *formats = t.formats;
    if (!note || !note_len || !t.quantised) return 0;
    char runs[96];
    weight_formats_describe(formats, runs, sizeof runs);
    if (given) /* the kernels, and so the roofline's bytes, are the run's type */
        snprintf(note, note_len,
                 "%s; runs in %s (--dtype): every matrix converted at load; the roofline counts %s's bytes",
                 t.mix, name, name);
    else if (t.converted[0])
        snprintf(note, note_len, "%s; runs per tensor (%s): %s", t.mix, runs, t.converted);
    else if (!weight_formats_is_uniform(formats, NULL))
        snprintf(note, note_len, "%s; runs per tensor as the file holds it (%s)", t.mix, runs);
    return 0;
}

int weights_file_formats(const char *path, const struct qwen3_config *cfg, enum fr_dtype requested,
                         bool given, struct weight_formats *formats, char *note, size_t note_len,
                         struct fr_err *err) {
    struct weight_formats want;
    weight_formats_uniform(&want, cfg->n_layers, requested);
    return file_formats(path, cfg, &want, fr_dtype_name(requested), given, formats, note, note_len, err);
}

int weights_file_formats_as(const char *path, const struct qwen3_config *cfg,
                            const struct weight_formats *want, const char *name,
                            struct weight_formats *formats, char *note, size_t note_len, struct fr_err *err) {
    return file_formats(path, cfg, want, name, true, formats, note, note_len, err);
}

int weights_file_wtype(const char *path, const struct qwen3_config *cfg, enum fr_dtype requested, bool given,
                       enum fr_dtype *wtype, char *note, size_t note_len, struct fr_err *err) {
    struct weight_formats f;
    if (weights_file_formats(path, cfg, requested, given, &f, note, note_len, err)) return -1;
    (void)weight_formats_is_uniform(&f, wtype);
    return 0;
}

int weights_file_load(const char *path, struct qwen3_weights *w, struct fr_err *err) {
    enum weights_format fmt;
    if (weights_file_format(path, &fmt, err)) return -1;
    if (fmt == WEIGHTS_FORMAT_SAFETENSORS) return safetensors_load(path, w, err);
    struct file_map m;
    if (file_map_open(path, 4, &m, err)) return -1;
    struct gguf_file g;
    int rc = gguf_parse(m.data, m.len, path, &g, err);
    if (rc == 0) rc = gguf_qwen3_load(&g, &w->cfg, w, err);
    gguf_free(&g);
    file_map_close(&m);
    return rc;
}

int weights_file_write_gguf(const char *out, const struct qwen3_weights *w, const char *in,
                            struct fr_err *err) {
    enum weights_format fmt = WEIGHTS_FORMAT_SAFETENSORS;
    if (in && weights_file_format(in, &fmt, err)) return -1;
    if (fmt != WEIGHTS_FORMAT_GGUF) return gguf_qwen3_write(out, w, NULL, err);
    struct file_map m;
    if (file_map_open(in, 4, &m, err)) return -1;
    struct gguf_file g;
    int rc = gguf_parse(m.data, m.len, in, &g, err);
    if (rc == 0) rc = gguf_qwen3_write(out, w, &g, err);
    gguf_free(&g);
    file_map_close(&m);
    return rc;
}

int weights_file_sha256(const char *path, char hex[65], struct fr_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return fr_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    unsigned char buf[1 << 16];
    struct sha256 s;
    sha256_init(&s);
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) sha256_update(&s, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) return fr_err_set(err, "%s: read error while hashing", path);
    sha256_final_hex(&s, hex);
    return 0;
}
