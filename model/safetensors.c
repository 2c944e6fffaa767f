/* Safetensors loader for Qwen3 checkpoints. The header is parsed with cJSON; each tensor name maps to one
 * slot of an expected-tensor table built from the config (fused q/k/v and gate/up rows included), and every
 * dtype, shape and offset range is checked against that table and the data size before anything is copied.
 * Checked in tests/test_safetensors.c: BF16 and F32 files written by the test load to the same logits as
 * the synthetic weights they came from, and each malformed case fails with the tensor's name; fuzzed by
 * tests/fuzz/fuzz_safetensors.c. */
#include "model/safetensors.h"

#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/file_map.h"
#include "model/weight_slots.h"

/* The safetensors format caps its header at 100 MB; a larger length is a corrupt file, not a big model. */
#define ST_MAX_HEADER_BYTES (100u * 1000u * 1000u)

struct st_ctx {
    struct wslot_table t;
    const char *file;
    struct fr_err *err;
};

/* A JSON number that is a non-negative integer exactly representable in a double. */
static int json_u64(const cJSON *v, uint64_t *out) {
    if (!cJSON_IsNumber(v)) return -1;
    double d = v->valuedouble;
    if (!(d >= 0.0) || d > 9007199254740992.0 || d != (double)(uint64_t)d) return -1;
    *out = (uint64_t)d;
    return 0;
}

/* Checks one header entry against its slot and the data size, and records it. */
static int check_entry(struct st_ctx *c, const cJSON *e, uint64_t data_bytes) {
    char name_buf[128], dtype_buf[40];
    struct wslot *s = wslot_find(&c->t, e->string);
    /* a known name is printable already; an unknown one may hold any byte */
    const char *name = fr_err_printable(e->string, strlen(e->string), name_buf, sizeof name_buf);
    if (!s)
        return fr_err_set(c->err, "%s: unexpected tensor '%s' for model '%s'", c->file, name, c->t.cfg->name);
    if (s->seen) return fr_err_set(c->err, "%s: tensor '%s' appears twice in the header", c->file, name);
    if (!cJSON_IsObject(e))
        return fr_err_set(c->err, "%s: tensor '%s': entry is not a JSON object", c->file, name);

    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    if (!cJSON_IsString(dt)) return fr_err_set(c->err, "%s: tensor '%s': missing dtype", c->file, name);
    if (strcmp(dt->valuestring, "BF16") == 0)
        s->dtype = WSLOT_BF16;
    else if (strcmp(dt->valuestring, "F32") == 0)
        s->dtype = WSLOT_F32;
    else
        return fr_err_set(
            c->err, "%s: tensor '%s': unsupported dtype '%s' (BF16 or F32)", c->file, name,
            fr_err_printable(dt->valuestring, strlen(dt->valuestring), dtype_buf, sizeof dtype_buf));

    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    if (!cJSON_IsArray(shape)) return fr_err_set(c->err, "%s: tensor '%s': missing shape", c->file, name);
    int ndim = cJSON_GetArraySize(shape);
    uint64_t dims[2] = {0, 0};
    char want[64], got[64];
    wslot_format_shape(want, sizeof want, s->dims, s->ndim);
    if (ndim != s->ndim)
        return fr_err_set(c->err, "%s: tensor '%s': shape has %d dimensions, expected %s", c->file, name,
                          ndim, want);
    for (int i = 0; i < ndim; i++)
        if (json_u64(cJSON_GetArrayItem(shape, i), &dims[i]))
            return fr_err_set(c->err, "%s: tensor '%s': shape entry %d is not a non-negative integer",
                              c->file, name, i);
    if (dims[0] != s->dims[0] || dims[1] != s->dims[1]) {
        wslot_format_shape(got, sizeof got, dims, ndim);
        return fr_err_set(c->err, "%s: tensor '%s': shape %s, expected %s for model '%s'", c->file, name, got,
                          want, c->t.cfg->name);
    }

    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    uint64_t b, end;
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 || json_u64(cJSON_GetArrayItem(offs, 0), &b) ||
        json_u64(cJSON_GetArrayItem(offs, 1), &end))
        return fr_err_set(c->err, "%s: tensor '%s': data_offsets must be two non-negative integers", c->file,
                          name);
    uint64_t need;
    if (__builtin_mul_overflow(s->dims[0], s->ndim == 2 ? s->dims[1] : 1, &need) ||
        __builtin_mul_overflow(need, wslot_dtype_bytes(s->dtype, 1), &need))
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
    struct st_ctx c = {.file = name, .err = err};
    int rc = wslot_table_init(&c.t, cfg, WSLOT_NAMES_HF, name, err);
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
    if (rc == 0) rc = wslot_check_complete(&c.t, name, err);
    if (rc == 0 && w) wslot_copy_all(&c.t, bytes + 8 + hlen, w);
    wslot_table_free(&c.t);
    return rc;
}

int safetensors_load(const char *path, struct qwen3_weights *w, struct fr_err *err) {
    struct file_map m;
    if (file_map_open(path, 8, &m, err)) return -1;
    int rc = safetensors_load_buffer(m.data, m.len, path, &w->cfg, w, err);
    file_map_close(&m);
    return rc;
}
