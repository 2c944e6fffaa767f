/* GGUF version 3 (llama.cpp's model file): "GGUF", version, tensor count, metadata count (little-endian),
 * the metadata key-value pairs, the tensor index (name, dims fastest-first, ggml type, offset), padding to
 * general.alignment (default 32), then the data. The parser reads the index in place over a buffer (the
 * mapped file): keys, strings and tensor data stay where they are; only the two index tables are
 * allocated, after their counts have been checked against the bytes left. */
#ifndef FR_GGUF_H
#define FR_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/fr_err.h"

/* Metadata value types (gguf_metadata_value_type in the GGUF spec). */
enum gguf_vtype {
    GGUF_VTYPE_UINT8 = 0,
    GGUF_VTYPE_INT8 = 1,
    GGUF_VTYPE_UINT16 = 2,
    GGUF_VTYPE_INT16 = 3,
    GGUF_VTYPE_UINT32 = 4,
    GGUF_VTYPE_INT32 = 5,
    GGUF_VTYPE_FLOAT32 = 6,
    GGUF_VTYPE_BOOL = 7,
    GGUF_VTYPE_STRING = 8,
    GGUF_VTYPE_ARRAY = 9,
    GGUF_VTYPE_UINT64 = 10,
    GGUF_VTYPE_INT64 = 11,
    GGUF_VTYPE_FLOAT64 = 12,
    GGUF_VTYPE_COUNT
};

/* The ggml tensor types a Qwen3 loader reads; the parser knows the block sizes of more (ggml.h numbering). */
enum gguf_ggml_type {
    GGUF_GGML_F32 = 0,
    GGUF_GGML_F16 = 1,
    GGUF_GGML_Q4_0 = 2,
    GGUF_GGML_Q4_1 = 3,
    GGUF_GGML_Q5_0 = 6,
    GGUF_GGML_Q5_1 = 7,
    GGUF_GGML_Q8_0 = 8,
    GGUF_GGML_Q4_K = 12,
    GGUF_GGML_Q5_K = 13,
    GGUF_GGML_Q6_K = 14,
    GGUF_GGML_BF16 = 30
};

#define GGUF_MAX_DIMS          4
#define GGUF_DEFAULT_ALIGNMENT 32

struct gguf_kv {
    const char *key; /* not NUL-terminated: key_len bytes inside the buffer */
    size_t key_len;
    enum gguf_vtype type;
    enum gguf_vtype elem_type; /* for an array: its elements' type */
    uint64_t n;                /* for an array: its length; else 1 */
    size_t value_off;          /* offset of the value (of an array's first element) in the buffer */
    size_t end;                /* offset just past the value: the pair is [key - 8, end) of the buffer */
};

struct gguf_tensor {
    const char *name; /* NUL-free, name_len bytes inside the buffer */
    size_t name_len;
    uint32_t ndim;
    uint64_t dims[GGUF_MAX_DIMS]; /* fastest-varying first: a [rows][cols] matrix is {cols, rows} */
    uint32_t type;                /* ggml type */
    uint64_t offset;              /* from the start of the data section */
    uint64_t bytes;
};

struct gguf_file {
    const char *path; /* for messages */
    const unsigned char *buf;
    size_t len;
    uint32_t version;
    uint64_t n_kv, n_tensors;
    struct gguf_kv *kv;          /* [n_kv] */
    struct gguf_tensor *tensors; /* [n_tensors] */
    uint64_t alignment;
    size_t data_off; /* start of the data section in the buffer */
};

/* Parses the header, metadata and tensor index of buf[0, len) and checks everything the format promises:
 * magic and version 3, every length and count within the bytes left, known value types, no nested arrays,
 * unique keys and tensor names, a power-of-two general.alignment, known ggml types, dims whose product fits,
 * offsets aligned, every tensor's bytes inside the file and no two tensors sharing a byte. On failure returns
 * non-zero with a one-line message naming `path` and the field; g is then empty. */
int gguf_parse(const void *buf, size_t len, const char *path, struct gguf_file *g, struct fr_err *err);
void gguf_free(struct gguf_file *g);

/* The pair whose key is `key`, or NULL. */
const struct gguf_kv *gguf_find_kv(const struct gguf_file *g, const char *key);
/* The tensor named `name`, or NULL. */
const struct gguf_tensor *gguf_find_tensor(const struct gguf_file *g, const char *name);

/* A scalar integer value (any integer type; negative refused) into *out; errors name the file and key. */
int gguf_get_uint(const struct gguf_file *g, const char *key, uint64_t *out, struct fr_err *err);
/* A float32 or float64 value. */
int gguf_get_float(const struct gguf_file *g, const char *key, double *out, struct fr_err *err);
/* A string value (not NUL-terminated). */
int gguf_get_string(const struct gguf_file *g, const char *key, const char **s, size_t *n,
                    struct fr_err *err);
/* An array of `elem` values: its pair (NULL with an error when absent or of another type). */
const struct gguf_kv *gguf_get_array(const struct gguf_file *g, const char *key, enum gguf_vtype elem,
                                     struct fr_err *err);

/* Walks a string array: *off starts at kv->value_off; each call returns the next string and advances. The
 * parser has bounds-checked every element, so this never fails on a parsed file. */
void gguf_next_string(const struct gguf_file *g, size_t *off, const char **s, size_t *n);
/* Element i of an integer array (any integer type) as int64. */
int64_t gguf_array_int(const struct gguf_file *g, const struct gguf_kv *kv, uint64_t i);

/* ggml type name ("f32", "bf16", "q8_0", ...; "type N" for a type the parser does not know). */
const char *gguf_ggml_type_name(uint32_t type, char *buf, size_t len);
/* general.file_type's name as llama-quantize writes it (llama.h's llama_ftype: 15 is "q4_k_m"), or
 * "file_type N" for one not listed here. */
const char *gguf_file_type_name(uint64_t ftype, char *buf, size_t len);

#endif
