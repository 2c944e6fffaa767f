/* Loading a Qwen3 checkpoint from one .safetensors file: an 8-byte little-endian header length, a JSON
 * header {name: {dtype, shape, data_offsets}}, then the data. Every tensor is checked against the config and
 * the file size before any byte is copied; BF16 and F32 tensors are converted to the weights' dtype (norms
 * to f32, rounded to bf16 values first when the weights are bf16, as in qwen3_weights_init_synthetic). */
#ifndef FR_SAFETENSORS_H
#define FR_SAFETENSORS_H

#include <stddef.h>

#include "kernels/fr_err.h"
#include "model/weights.h"

/* Loads path into w, which qwen3_weights_alloc made for the config the file must match (w->cfg). On any
 * problem (truncated file, header length past the end, bad JSON, missing, extra or duplicate tensor, wrong
 * shape, unsupported dtype, out-of-range or overlapping offsets) returns non-zero with a one-line message
 * naming the file and the tensor; w's contents are then unspecified. A tied config accepts an
 * lm_head.weight tensor (checked, not loaded: the LM head reads the embedding), as Qwen3 checkpoints ship. */
int safetensors_load(const char *path, struct qwen3_weights *w, struct fr_err *err);

/* The same over a whole file already in memory; `name` is only used in messages. With w == NULL it only
 * checks the file against cfg (the fuzz harness's entry point); otherwise w->cfg is used and cfg ignored. */
int safetensors_load_buffer(const void *data, size_t len, const char *name, const struct qwen3_config *cfg,
                            struct qwen3_weights *w, struct fr_err *err);

#endif
