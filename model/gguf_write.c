/* GGUF v3 writer (gguf_write.h): little-endian fields on a little-endian host, the index before the data,
 * offsets and padding at multiples of GGUF_DEFAULT_ALIGNMENT as gguf-py's GGUFWriter lays them out. Checked
 * in tests/test_quantize.c: what it writes parses with model/gguf.c, reads back through the Qwen3 loader
 * to the weights it was written from, and keeps every metadata pair it copied. */
#include "model/gguf_write.h"

#include <errno.h>
#include <string.h>

static void put(struct gguf_writer *w, const void *p, size_t n) {
    if (w->failed || n == 0) return;
    if (fwrite(p, 1, n, w->f) != n) w->failed = 1;
    w->pos += n;
}

static void put_u32(struct gguf_writer *w, uint32_t v) {
    put(w, &v, 4);
}

static void put_u64(struct gguf_writer *w, uint64_t v) {
    put(w, &v, 8);
}

static void put_str(struct gguf_writer *w, const char *s) {
    size_t n = strlen(s);
    put_u64(w, n);
    put(w, s, n);
}

static uint64_t align_up(uint64_t v) {
    return (v + GGUF_DEFAULT_ALIGNMENT - 1) / GGUF_DEFAULT_ALIGNMENT * GGUF_DEFAULT_ALIGNMENT;
}

static void pad(struct gguf_writer *w) {
    static const unsigned char zeros[GGUF_DEFAULT_ALIGNMENT];
    put(w, zeros, (size_t)(align_up(w->pos) - w->pos));
}

int gguf_write_open(struct gguf_writer *w, const char *path, uint64_t n_kv, uint64_t n_tensors,
                    struct fr_err *err) {
    memset(w, 0, sizeof *w);
    w->path = path;
    w->n_kv = n_kv;
    w->n_tensors = n_tensors;
    if (!(w->f = fopen(path, "wb"))) return fr_err_set(err, "%s: cannot write: %s", path, strerror(errno));
    put(w, "GGUF", 4);
    put_u32(w, 3);
    put_u64(w, n_tensors);
    put_u64(w, n_kv);
    return 0;
}

/* A pair may follow only pairs; an index entry only the pairs and entries. */
static int in_order(struct gguf_writer *w, int kv) {
    if (kv ? w->info_done > 0 || w->kv_done >= w->n_kv : w->kv_done < w->n_kv || w->info_done >= w->n_tensors)
        w->failed = 1;
    return !w->failed;
}

void gguf_write_kv_copy(struct gguf_writer *w, const struct gguf_file *g, const struct gguf_kv *kv) {
    if (!in_order(w, 1)) return;
    size_t start = (size_t)((const unsigned char *)kv->key - g->buf) - 8; /* the key's length field */
    put(w, g->buf + start, kv->end - start);
    w->kv_done++;
}

static void kv_head(struct gguf_writer *w, const char *key, enum gguf_vtype t) {
    put_str(w, key);
    put_u32(w, (uint32_t)t);
}

void gguf_write_kv_u32(struct gguf_writer *w, const char *key, uint32_t v) {
    if (!in_order(w, 1)) return;
    kv_head(w, key, GGUF_VTYPE_UINT32);
    put_u32(w, v);
    w->kv_done++;
}

void gguf_write_kv_f32(struct gguf_writer *w, const char *key, float v) {
    if (!in_order(w, 1)) return;
    kv_head(w, key, GGUF_VTYPE_FLOAT32);
    put(w, &v, 4);
    w->kv_done++;
}

void gguf_write_kv_string(struct gguf_writer *w, const char *key, const char *s) {
    if (!in_order(w, 1)) return;
    kv_head(w, key, GGUF_VTYPE_STRING);
    put_str(w, s);
    w->kv_done++;
}

void gguf_write_tensor_info(struct gguf_writer *w, const char *name, uint32_t ndim, const uint64_t *dims,
                            uint32_t type, uint64_t bytes) {
    if (!in_order(w, 0)) return;
    put_str(w, name);
    put_u32(w, ndim);
    for (uint32_t d = 0; d < ndim; d++) put_u64(w, dims[d]);
    put_u32(w, type);
    put_u64(w, w->next_offset);
    w->next_offset += align_up(bytes);
    w->info_done++;
}

void gguf_write_tensor_data(struct gguf_writer *w, const void *data, uint64_t bytes) {
    if (w->info_done < w->n_tensors || w->data_done >= w->n_tensors) w->failed = 1;
    pad(w); /* the data section, and each tensor after the first, start aligned */
    put(w, data, (size_t)bytes);
    w->data_done++;
}

int gguf_write_close(struct gguf_writer *w, struct fr_err *err) {
    if (w->n_tensors == 0 && w->kv_done == w->n_kv) pad(w);
    if (w->data_done > 0) pad(w);
    int bad =
        w->failed || w->kv_done != w->n_kv || w->info_done != w->n_tensors || w->data_done != w->n_tensors;
    int close_bad = fclose(w->f) != 0;
    w->f = NULL;
    if (bad && !w->failed)
        return fr_err_set(err, "%s: wrote %llu of %llu metadata pairs and %llu of %llu tensors", w->path,
                          (unsigned long long)w->kv_done, (unsigned long long)w->n_kv,
                          (unsigned long long)w->data_done, (unsigned long long)w->n_tensors);
    if (bad || close_bad) return fr_err_set(err, "%s: write failed (disk full?)", w->path);
    return 0;
}
