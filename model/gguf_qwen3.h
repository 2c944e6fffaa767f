/* A Qwen3 model from a parsed GGUF file: the config from its metadata (qwen3.* keys as llama.cpp's
 * converter writes them, the vocabulary from tokenizer.ggml.tokens, tied embeddings when output.weight is
 * absent) and the weights from its tensor index (llama.cpp's names, dims fastest-first, f32/f16/bf16). */
#ifndef FR_GGUF_QWEN3_H
#define FR_GGUF_QWEN3_H

#include "kernels/fr_err.h"
#include "model/config.h"
#include "model/gguf.h"
#include "model/weights.h"

/* Reads the config; cfg->name is the file's base name without ".gguf", cfg->path the file. Errors name the
 * file and the metadata key. */
int gguf_qwen3_config(const struct gguf_file *g, struct qwen3_config *cfg, struct fr_err *err);

/* Fails naming the first field where the file's config differs from --model's (the shape, the vocabulary,
 * the context, eps and theta; tied embeddings are left to the tensor check, as for safetensors). */
int gguf_qwen3_check_config(const struct qwen3_config *file_cfg, const struct qwen3_config *model_cfg,
                            struct fr_err *err);

/* Checks every tensor against cfg (names, dims, types, completeness) and, with w != NULL (allocated for
 * cfg), copies them into w converting to its dtypes. w == NULL only checks: the fuzz harness's entry. */
int gguf_qwen3_load(const struct gguf_file *g, const struct qwen3_config *cfg, struct qwen3_weights *w,
                    struct fr_err *err);

#endif
