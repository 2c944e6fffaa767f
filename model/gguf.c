/* GGUF v3 parser over a buffer: every read goes through one bounds-checked cursor, every count is checked
 * against the bytes left before anything is allocated for it, and the error names the file, the key or
 * tensor and the byte offset. Layout and type numbers follow the GGUF spec (ggml/docs/gguf.md) and
 * llama.cpp's gguf-py writer. Checked in tests/test_gguf.c against files written by gguf-py and read back by
 * @huggingface/gguf (tests/fixtures/gguf/), and against hand-made malformed files; fuzzed by
 * tests/fuzz/fuzz_gguf.c. */
#include "model/gguf.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GGUF_MAGIC "GGUF"
/* The spec caps keys at 65535 bytes; ggml caps tensor names at GGML_MAX_NAME - 1 = 63. */
#define GGUF_MAX_KEY_BYTES  65535u
#define GGUF_MAX_NAME_BYTES 63u

/* Block size (elements) and bytes per block of the ggml types whose sizes the parser knows. */
struct ggml_type_info {
    uint32_t type;
    const char *name;
    uint32_t block, block_bytes;
};

static const struct ggml_type_info ggml_types[] = {
    {0, "f32", 1, 4},       {1, "f16", 1, 2},       {2, "q4_0", 32, 18},    {3, "q4_1", 32, 20},
    {6, "q5_0", 32, 22},    {7, "q5_1", 32, 24},    {8, "q8_0", 32, 34},    {9, "q8_1", 32, 36},
    {10, "q2_k", 256, 84},  {11, "q3_k", 256, 110}, {12, "q4_k", 256, 144}, {13, "q5_k", 256, 176},
    {14, "q6_k", 256, 210}, {15, "q8_k", 256, 292}, {24, "i8", 1, 1},       {25, "i16", 1, 2},
    {26, "i32", 1, 4},      {27, "i64", 1, 8},      {28, "f64", 1, 8},      {30, "bf16", 1, 2},
};

static const struct ggml_type_info *type_info(uint32_t type) {
    for (size_t i = 0; i < sizeof ggml_types / sizeof ggml_types[0]; i++)
        if (ggml_types[i].type == type) return &ggml_types[i];
    return NULL;
}

const char *gguf_ggml_type_name(uint32_t type, char *buf, size_t len) {
    const struct ggml_type_info *t = type_info(type);
    if (t) return t->name;
    snprintf(buf, len, "type %u", type);
    return buf;
}

const char *gguf_file_type_name(uint64_t ftype, char *buf, size_t len) {
    static const char *const names[] = {
        [0] = "f32",     [1] = "f16",     [2] = "q4_0",    [3] = "q4_1",    [7] = "q8_0",    [8] = "q5_0",
        [9] = "q5_1",    [10] = "q2_k",   [11] = "q3_k_s", [12] = "q3_k_m", [13] = "q3_k_l", [14] = "q4_k_s",
        [15] = "q4_k_m", [16] = "q5_k_s", [17] = "q5_k_m", [18] = "q6_k",   [32] = "bf16"};
    if (ftype < sizeof names / sizeof names[0] && names[ftype]) return names[ftype];
    snprintf(buf, len, "file_type %llu", (unsigned long long)ftype);
    return buf;
}

/* Bytes of one scalar value; 0 for strings and arrays. */
static size_t vtype_size(enum gguf_vtype t) {
    static const size_t sz[GGUF_VTYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    return sz[t];
}

static const char *const vtype_names[GGUF_VTYPE_COUNT] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                                          "int32",  "float32", "bool",   "string", "array",
                                                          "uint64", "int64",   "float64"};

struct cursor {
    const unsigned char *b;
    size_t len, off;
    const char *path;
    struct fr_err *err;
};

static int need(struct cursor *c, size_t n, const char *what) {
    if (n > c->len - c->off)
        return fr_err_set(c->err, "%s: truncated: %s needs %zu bytes at byte %zu, the file has %zu", c->path,
                          what, n, c->off, c->len);
    return 0;
}

static int rd_u32(struct cursor *c, uint32_t *v, const char *what) {
    if (need(c, 4, what)) return -1;
    memcpy(v, c->b + c->off, 4); /* little-endian file on a little-endian host */
    c->off += 4;
    return 0;
}

static int rd_u64(struct cursor *c, uint64_t *v, const char *what) {
    if (need(c, 8, what)) return -1;
    memcpy(v, c->b + c->off, 8);
    c->off += 8;
    return 0;
}

/* A GGUF string: u64 length, then the bytes. A length past the end of the file or above `max` is refused
 * before anything else is read. */
static int rd_str(struct cursor *c, const char **s, size_t *n, uint64_t max, const char *what) {
    uint64_t l;
    if (rd_u64(c, &l, what)) return -1;
    if (l > c->len - c->off)
        return fr_err_set(c->err, "%s: %s: string length %llu runs past the end of the file (%zu bytes left)",
                          c->path, what, (unsigned long long)l, c->len - c->off);
    if (l > max)
        return fr_err_set(c->err, "%s: %s: string length %llu exceeds the format's %llu-byte limit", c->path,
                          what, (unsigned long long)l, (unsigned long long)max);
    *s = (const char *)c->b + c->off;
    *n = (size_t)l;
    c->off += (size_t)l;
    return 0;
}

/* Skips one value of type t (a scalar or a string), checking it fits. */
static int skip_scalar(struct cursor *c, enum gguf_vtype t, const char *what) {
    if (t == GGUF_VTYPE_STRING) {
        const char *s;
        size_t n;
        return rd_str(c, &s, &n, UINT64_MAX, what);
    }
    if (need(c, vtype_size(t), what)) return -1;
    if (t == GGUF_VTYPE_BOOL && c->b[c->off] > 1)
        return fr_err_set(c->err, "%s: %s: bool value %u is neither 0 nor 1", c->path, what, c->b[c->off]);
    c->off += vtype_size(t);
    return 0;
}

static int rd_vtype(struct cursor *c, enum gguf_vtype *t, const char *what) {
    uint32_t v;
    if (rd_u32(c, &v, what)) return -1;
    if (v >= GGUF_VTYPE_COUNT) return fr_err_set(c->err, "%s: %s: unknown value type %u", c->path, what, v);
    *t = (enum gguf_vtype)v;
    return 0;
}

static int parse_kv(struct cursor *c, struct gguf_kv *kv, uint64_t i) {
    char what[160], kbuf[96];
    snprintf(what, sizeof what, "metadata key %llu", (unsigned long long)i);
    if (rd_str(c, &kv->key, &kv->key_len, GGUF_MAX_KEY_BYTES, what)) return -1;
    snprintf(what, sizeof what, "metadata '%s'", fr_err_printable(kv->key, kv->key_len, kbuf, sizeof kbuf));
    if (rd_vtype(c, &kv->type, what)) return -1;
    kv->n = 1;
    kv->elem_type = kv->type;
    if (kv->type != GGUF_VTYPE_ARRAY) {
        kv->value_off = c->off;
        int rc = skip_scalar(c, kv->type, what);
        kv->end = c->off;
        return rc;
    }
    if (rd_vtype(c, &kv->elem_type, what) || rd_u64(c, &kv->n, what)) return -1;
    if (kv->elem_type == GGUF_VTYPE_ARRAY)
        return fr_err_set(c->err, "%s: %s: arrays of arrays are not supported", c->path, what);
    /* every element takes at least its fixed size (a string at least its 8-byte length) */
    size_t min = kv->elem_type == GGUF_VTYPE_STRING ? 8 : vtype_size(kv->elem_type);
    if (kv->n > (c->len - c->off) / min)
        return fr_err_set(c->err, "%s: %s: array of %llu %s values runs past the end of the file", c->path,
                          what, (unsigned long long)kv->n, vtype_names[kv->elem_type]);
    kv->value_off = c->off;
    if (kv->elem_type != GGUF_VTYPE_STRING && kv->elem_type != GGUF_VTYPE_BOOL) {
        c->off += (size_t)kv->n * min;
        kv->end = c->off;
        return 0;
    }
    for (uint64_t k = 0; k < kv->n; k++)
        if (skip_scalar(c, kv->elem_type, what)) return -1;
    kv->end = c->off;
    return 0;
}

static int parse_tensor(struct cursor *c, struct gguf_tensor *t, uint64_t i) {
    char what[160], nbuf[96], tbuf[24];
    snprintf(what, sizeof what, "tensor %llu's name", (unsigned long long)i);
    if (rd_str(c, &t->name, &t->name_len, GGUF_MAX_NAME_BYTES, what)) return -1;
    snprintf(what, sizeof what, "tensor '%s'", fr_err_printable(t->name, t->name_len, nbuf, sizeof nbuf));
    if (t->name_len && memchr(t->name, '\0', t->name_len))
        return fr_err_set(c->err, "%s: %s: name holds a NUL byte", c->path, what);
    if (rd_u32(c, &t->ndim, what)) return -1;
    if (t->ndim < 1 || t->ndim > GGUF_MAX_DIMS)
        return fr_err_set(c->err, "%s: %s: %u dimensions, expected 1 to %d", c->path, what, t->ndim,
                          GGUF_MAX_DIMS);
    uint64_t elems = 1;
    for (uint32_t d = 0; d < t->ndim; d++) {
        if (rd_u64(c, &t->dims[d], what)) return -1;
        if (__builtin_mul_overflow(elems, t->dims[d], &elems) || elems > (UINT64_MAX >> 8))
            return fr_err_set(c->err, "%s: %s: element count overflows", c->path, what);
    }
    for (uint32_t d = t->ndim; d < GGUF_MAX_DIMS; d++) t->dims[d] = 1;
    if (rd_u32(c, &t->type, what) || rd_u64(c, &t->offset, what)) return -1;
    const struct ggml_type_info *ti = type_info(t->type);
    if (!ti) return fr_err_set(c->err, "%s: %s: unknown ggml type %u", c->path, what, t->type);
    if (t->dims[0] % ti->block)
        return fr_err_set(c->err, "%s: %s: first dimension %llu is not a multiple of %s's block of %u",
                          c->path, what, (unsigned long long)t->dims[0],
                          gguf_ggml_type_name(t->type, tbuf, sizeof tbuf), ti->block);
    t->bytes = elems / ti->block * ti->block_bytes;
    return 0;
}

/* Sorting by (pointer, length) of a name: equal names end up side by side. */
struct name_ref {
    const char *s;
    size_t n;
};

static int cmp_name(const void *a, const void *b) {
    const struct name_ref *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int r = memcmp(x->s, y->s, n);
    return r ? r : (x->n > y->n) - (x->n < y->n);
}

/* Fails naming the first name that appears twice (what: "metadata key" or "tensor"). */
static int check_unique(const struct gguf_file *g, struct name_ref *refs, uint64_t n, const char *what,
                        struct fr_err *err) {
    qsort(refs, (size_t)n, sizeof *refs, cmp_name);
    char buf[96];
    for (uint64_t i = 1; i < n; i++)
        if (cmp_name(&refs[i - 1], &refs[i]) == 0)
            return fr_err_set(err, "%s: %s '%s' appears twice", g->path, what,
                              fr_err_printable(refs[i].s, refs[i].n, buf, sizeof buf));
    return 0;
}

static int check_names(const struct gguf_file *g, struct fr_err *err) {
    uint64_t most = g->n_kv > g->n_tensors ? g->n_kv : g->n_tensors;
    struct name_ref *refs = malloc((size_t)(most ? most : 1) * sizeof *refs);
    if (!refs) return fr_err_set(err, "%s: out of memory", g->path);
    for (uint64_t i = 0; i < g->n_kv; i++) refs[i] = (struct name_ref){g->kv[i].key, g->kv[i].key_len};
    int rc = check_unique(g, refs, g->n_kv, "metadata key", err);
    for (uint64_t i = 0; rc == 0 && i < g->n_tensors; i++)
        refs[i] = (struct name_ref){g->tensors[i].name, g->tensors[i].name_len};
    if (rc == 0) rc = check_unique(g, refs, g->n_tensors, "tensor", err);
    free(refs);
    return rc;
}

static int cmp_offset(const void *a, const void *b) {
    const struct gguf_tensor *x = *(const struct gguf_tensor *const *)a,
                             *y = *(const struct gguf_tensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Every tensor aligned, inside the data section, and sharing no byte with another. */
static int check_layout(const struct gguf_file *g, struct fr_err *err) {
    uint64_t data_bytes = g->data_off < g->len ? g->len - g->data_off : 0;
    char nbuf[96], obuf[96];
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const struct gguf_tensor *t = &g->tensors[i];
        const char *name = fr_err_printable(t->name, t->name_len, nbuf, sizeof nbuf);
        if (t->offset % g->alignment)
            return fr_err_set(err, "%s: tensor '%s': offset %llu is not a multiple of the alignment %llu",
                              g->path, name, (unsigned long long)t->offset, (unsigned long long)g->alignment);
        if (t->offset > data_bytes || t->bytes > data_bytes - t->offset) {
            /* a block type's message names the first block the end cuts short */
            const struct ggml_type_info *ti = type_info(t->type);
            char cut[96] = "";
            if (ti->block > 1 && t->offset <= data_bytes)
                snprintf(cut, sizeof cut, ": its %s %llu of %llu is cut short",
                         ti->block == 256 ? "super-block" : "block",
                         (unsigned long long)((data_bytes - t->offset) / ti->block_bytes),
                         (unsigned long long)(t->bytes / ti->block_bytes));
            return fr_err_set(err,
                              "%s: tensor '%s': %llu bytes at offset %llu run past the end of the data "
                              "(%llu bytes)%s",
                              g->path, name, (unsigned long long)t->bytes, (unsigned long long)t->offset,
                              (unsigned long long)data_bytes, cut);
        }
    }
    if (g->n_tensors < 2) return 0;
    const struct gguf_tensor **by_off = malloc((size_t)g->n_tensors * sizeof *by_off);
    if (!by_off) return fr_err_set(err, "%s: out of memory", g->path);
    for (uint64_t i = 0; i < g->n_tensors; i++) by_off[i] = &g->tensors[i];
    qsort(by_off, (size_t)g->n_tensors, sizeof *by_off, cmp_offset);
    int rc = 0;
    for (uint64_t i = 1; rc == 0 && i < g->n_tensors; i++) {
        const struct gguf_tensor *a = by_off[i - 1], *b = by_off[i];
        if (b->offset < a->offset + a->bytes)
            rc = fr_err_set(err, "%s: tensor '%s' overlaps tensor '%s' in the data", g->path,
                            fr_err_printable(b->name, b->name_len, nbuf, sizeof nbuf),
                            fr_err_printable(a->name, a->name_len, obuf, sizeof obuf));
    }
    free(by_off);
    return rc;
}

static int key_is(const struct gguf_kv *kv, const char *key) {
    size_t n = strlen(key);
    return kv->key_len == n && memcmp(kv->key, key, n) == 0;
}

static int read_alignment(struct gguf_file *g, struct fr_err *err) {
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    const struct gguf_kv *kv = gguf_find_kv(g, "general.alignment");
    if (!kv) return 0;
    if (kv->type != GGUF_VTYPE_UINT32)
        return fr_err_set(err, "%s: metadata 'general.alignment' must be a uint32, is %s", g->path,
                          vtype_names[kv->type]);
    uint32_t a;
    memcpy(&a, g->buf + kv->value_off, 4);
    if (a == 0 || (a & (a - 1)))
        return fr_err_set(err, "%s: metadata 'general.alignment' must be a power of two, is %u", g->path, a);
    g->alignment = a;
    return 0;
}

int gguf_parse(const void *buf, size_t len, const char *path, struct gguf_file *g, struct fr_err *err) {
    memset(g, 0, sizeof *g);
    g->path = path;
    g->buf = buf;
    g->len = len;
    struct cursor c = {buf, len, 0, path, err};
    if (len < 4 || memcmp(buf, GGUF_MAGIC, 4) != 0)
        return fr_err_set(err, "%s: not a GGUF file (the first 4 bytes are not \"GGUF\")", path);
    c.off = 4;
    if (rd_u32(&c, &g->version, "the version") || rd_u64(&c, &g->n_tensors, "the tensor count") ||
        rd_u64(&c, &g->n_kv, "the metadata count"))
        return -1;
    if (g->version != 3)
        return fr_err_set(err, "%s: GGUF version %u, only version 3 is read", path, g->version);
    /* the smallest pair is 13 bytes (empty key, type, one-byte value); the smallest tensor entry 32 */
    if (g->n_kv > (len - c.off) / 13)
        return fr_err_set(err, "%s: metadata count %llu cannot fit in the file's %zu bytes", path,
                          (unsigned long long)g->n_kv, len);
    if (g->n_tensors > (len - c.off) / 32)
        return fr_err_set(err, "%s: tensor count %llu cannot fit in the file's %zu bytes", path,
                          (unsigned long long)g->n_tensors, len);
    g->kv = calloc((size_t)(g->n_kv ? g->n_kv : 1), sizeof *g->kv);
    g->tensors = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof *g->tensors);
    if (!g->kv || !g->tensors) {
        gguf_free(g);
        return fr_err_set(err, "%s: out of memory for the index", path);
    }
    int rc = 0;
    for (uint64_t i = 0; rc == 0 && i < g->n_kv; i++) rc = parse_kv(&c, &g->kv[i], i);
    for (uint64_t i = 0; rc == 0 && i < g->n_tensors; i++) rc = parse_tensor(&c, &g->tensors[i], i);
    if (rc == 0) rc = check_names(g, err);
    if (rc == 0) rc = read_alignment(g, err);
    if (rc == 0) {
        /* the data section starts at the next multiple of the alignment (which may be the file's end) */
        uint64_t pad = (g->alignment - c.off % g->alignment) % g->alignment;
        g->data_off = c.off + (size_t)(pad < len - c.off ? pad : len - c.off);
        if (pad > len - c.off && g->n_tensors > 0)
            rc =
                fr_err_set(err, "%s: truncated: the data section would start past the end of the file", path);
    }
    if (rc == 0) rc = check_layout(g, err);
    if (rc) gguf_free(g);
    return rc;
}

void gguf_free(struct gguf_file *g) {
    free(g->kv);
    free(g->tensors);
    g->kv = NULL;
    g->tensors = NULL;
    g->n_kv = g->n_tensors = 0;
}

const struct gguf_kv *gguf_find_kv(const struct gguf_file *g, const char *key) {
    for (uint64_t i = 0; i < g->n_kv; i++)
        if (key_is(&g->kv[i], key)) return &g->kv[i];
    return NULL;
}

const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *g, const char *name) {
    size_t n = strlen(name);
    for (uint64_t i = 0; i < g->n_tensors; i++)
        if (g->tensors[i].name_len == n && memcmp(g->tensors[i].name, name, n) == 0) return &g->tensors[i];
    return NULL;
}

/* An integer value of any integer type at off, widened; *neg set for a negative signed one. */
static uint64_t int_at(const unsigned char *p, enum gguf_vtype t, bool *neg) {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    int64_t s = 0;
    *neg = false;
    switch (t) {
    case GGUF_VTYPE_UINT8:
    case GGUF_VTYPE_BOOL:
        return *p;
    case GGUF_VTYPE_INT8:
        memcpy(&u8, p, 1), s = u8 >= 128 ? (int64_t)u8 - 256 : (int64_t)u8;
        break;
    case GGUF_VTYPE_UINT16:
        memcpy(&u16, p, 2);
        return u16;
    case GGUF_VTYPE_INT16:
        memcpy(&u16, p, 2), s = (int16_t)u16;
        break;
    case GGUF_VTYPE_UINT32:
        memcpy(&u32, p, 4);
        return u32;
    case GGUF_VTYPE_INT32:
        memcpy(&u32, p, 4), s = (int32_t)u32;
        break;
    case GGUF_VTYPE_UINT64:
        memcpy(&u64, p, 8);
        return u64;
    default: /* INT64 */
        memcpy(&u64, p, 8), s = (int64_t)u64;
        break;
    }
    *neg = s < 0;
    return (uint64_t)s;
}

static bool is_int(enum gguf_vtype t) {
    return t <= GGUF_VTYPE_INT32 || t == GGUF_VTYPE_UINT64 || t == GGUF_VTYPE_INT64;
}

static const struct gguf_kv *want(const struct gguf_file *g, const char *key, const char *type_words,
                                  bool ok_type(enum gguf_vtype), struct fr_err *err) {
    const struct gguf_kv *kv = gguf_find_kv(g, key);
    if (!kv) {
        fr_err_set(err, "%s: missing metadata '%s'", g->path, key);
        return NULL;
    }
    if (!ok_type(kv->type)) {
        fr_err_set(err, "%s: metadata '%s' must be %s, is %s", g->path, key, type_words,
                   vtype_names[kv->type]);
        return NULL;
    }
    return kv;
}

static bool is_float(enum gguf_vtype t) {
    return t == GGUF_VTYPE_FLOAT32 || t == GGUF_VTYPE_FLOAT64;
}

static bool is_string(enum gguf_vtype t) {
    return t == GGUF_VTYPE_STRING;
}

static bool is_array(enum gguf_vtype t) {
    return t == GGUF_VTYPE_ARRAY;
}

int gguf_get_uint(const struct gguf_file *g, const char *key, uint64_t *out, struct fr_err *err) {
    const struct gguf_kv *kv = want(g, key, "an integer", is_int, err);
    if (!kv) return -1;
    bool neg;
    *out = int_at(g->buf + kv->value_off, kv->type, &neg);
    if (neg) return fr_err_set(err, "%s: metadata '%s' is negative", g->path, key);
    return 0;
}

int gguf_get_float(const struct gguf_file *g, const char *key, double *out, struct fr_err *err) {
    const struct gguf_kv *kv = want(g, key, "a float", is_float, err);
    if (!kv) return -1;
    if (kv->type == GGUF_VTYPE_FLOAT32) {
        float f;
        memcpy(&f, g->buf + kv->value_off, 4);
        *out = f;
    } else {
        memcpy(out, g->buf + kv->value_off, 8);
    }
    return 0;
}

int gguf_get_string(const struct gguf_file *g, const char *key, const char **s, size_t *n,
                    struct fr_err *err) {
    const struct gguf_kv *kv = want(g, key, "a string", is_string, err);
    if (!kv) return -1;
    size_t off = kv->value_off;
    gguf_next_string(g, &off, s, n);
    return 0;
}

const struct gguf_kv *gguf_get_array(const struct gguf_file *g, const char *key, enum gguf_vtype elem,
                                     struct fr_err *err) {
    const struct gguf_kv *kv = want(g, key, "an array", is_array, err);
    if (kv && kv->elem_type != elem && !(elem == GGUF_VTYPE_INT32 && is_int(kv->elem_type))) {
        fr_err_set(err, "%s: metadata '%s' must be an array of %s, holds %s", g->path, key, vtype_names[elem],
                   vtype_names[kv->elem_type]);
        return NULL;
    }
    return kv;
}

void gguf_next_string(const struct gguf_file *g, size_t *off, const char **s, size_t *n) {
    uint64_t l;
    memcpy(&l, g->buf + *off, 8);
    *s = (const char *)g->buf + *off + 8;
    *n = (size_t)l;
    *off += 8 + (size_t)l;
}

int64_t gguf_array_int(const struct gguf_file *g, const struct gguf_kv *kv, uint64_t i) {
    bool neg;
    size_t sz = vtype_size(kv->elem_type);
    return (int64_t)int_at(g->buf + kv->value_off + (size_t)i * sz, kv->elem_type, &neg);
}
