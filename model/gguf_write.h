/* Writing a GGUF version 3 file (the layout model/gguf.h reads): the header, the metadata pairs (copied
 * whole from a parsed file, or typed), the tensor index, padding to the alignment (32, the default, so no
 * general.alignment key), then each tensor's data at its offset, padded to the alignment as gguf-py pads
 * it. The counts are promised at open; each tensor's offset follows from the sizes before it in index
 * order, so the index is written before any data and the data streams out a tensor at a time. A write
 * error is kept and said once, by gguf_write_close. */
#ifndef FR_GGUF_WRITE_H
#define FR_GGUF_WRITE_H

#include <stdint.h>
#include <stdio.h>

#include "kernels/fr_err.h"
#include "model/gguf.h"

struct gguf_writer {
    FILE *f;
    const char *path;         /* for messages */
    uint64_t n_kv, n_tensors; /* promised at open */
    uint64_t kv_done, info_done, data_done;
    uint64_t next_offset; /* the data offset of the next tensor in the index */
    uint64_t pos;         /* bytes written */
    int failed;           /* a write failed, or a call broke the promised order */
};

/* Opens path for writing (truncating it) and writes the header. */
int gguf_write_open(struct gguf_writer *w, const char *path, uint64_t n_kv, uint64_t n_tensors,
                    struct fr_err *err);

/* One metadata pair copied byte for byte from a parsed file. */
void gguf_write_kv_copy(struct gguf_writer *w, const struct gguf_file *g, const struct gguf_kv *kv);
void gguf_write_kv_u32(struct gguf_writer *w, const char *key, uint32_t v);
void gguf_write_kv_f32(struct gguf_writer *w, const char *key, float v);
void gguf_write_kv_string(struct gguf_writer *w, const char *key, const char *s);

/* One entry of the tensor index: dims fastest-first, a ggml type, its data's size in bytes. */
void gguf_write_tensor_info(struct gguf_writer *w, const char *name, uint32_t ndim, const uint64_t *dims,
                            uint32_t type, uint64_t bytes);
/* The next tensor's data, in index order (bytes as its entry said). */
void gguf_write_tensor_data(struct gguf_writer *w, const void *data, uint64_t bytes);

/* Flushes and closes; fails naming the file when a write failed or fewer pairs, entries or tensors were
 * written than promised. The caller removes a file that failed. */
int gguf_write_close(struct gguf_writer *w, struct fr_err *err);

#endif
