/* A Qwen3 model written as a GGUF file that model/gguf_qwen3.h reads back: llama.cpp's tensor names and
 * metadata keys, every matrix in the weights' type (q8_0 and q4_0 as ggml types 8 and 2, blocks byte for
 * byte), the norms in f32. The metadata is the source GGUF file's, every pair copied, with
 * general.file_type (and general.quantization_version for a block type) set for the new type; without a
 * source GGUF file it is the config's qwen3.* keys (no tokenizer). */
#ifndef FR_GGUF_QWEN3_WRITE_H
#define FR_GGUF_QWEN3_WRITE_H

#include "kernels/fr_err.h"
#include "model/gguf.h"
#include "model/weights.h"

/* Writes w to path (meta: the parsed source GGUF file whose metadata to keep, or NULL). The file is written
 * beside path under a temporary name and renamed over it only when whole: a failure leaves no file. */
int gguf_qwen3_write(const char *path, const struct qwen3_weights *w, const struct gguf_file *meta,
                     struct fr_err *err);

#endif
