/* A Qwen3 model from a parsed GGUF file: the config from its metadata (qwen3.* keys as llama.cpp's
 * converter writes them, the vocabulary from tokenizer.ggml.tokens, tied embeddings when output.weight is
 * absent) and the weights from its tensor index (llama.cpp's names, dims fastest-first, f32/f16/bf16 and the
 * matrices in q8_0/q4_0, or in the k-quants, q4_1 and q5_x that the load converts). */
#ifndef FR_GGUF_QWEN3_H
#define FR_GGUF_QWEN3_H

#include <stdbool.h>

#include "kernels/dtype.h"
#include "kernels/fr_err.h"
#include "model/config.h"
#include "model/weight_formats.h"
#include "model/gguf.h"
#include "model/weights.h"

/* Reads the config; cfg->name is the file's base name without ".gguf", cfg->path the file. Errors name the
 * file and the metadata key. */
int gguf_qwen3_config(const struct gguf_file *g, struct qwen3_config *cfg, struct fr_err *err);

/* Fails naming the first field where the file's config differs from --model's (the shape, the vocabulary,
 * the context, eps and theta; tied embeddings are left to the tensor check, as for safetensors). */
int gguf_qwen3_check_config(const struct qwen3_config *file_cfg, const struct qwen3_config *model_cfg,
                            struct fr_err *err);

/* The types of a file's matrices. A file whose layer matrices hold a quantised type (quantised) runs without
 * --dtype in its own type per tensor (formats): a type a kernel runs (q8_0, q4_0, q4_k, q5_k, q6_k) as the
 * file holds it; one no kernel runs yet (q4_1, q5_0, q5_1) converted to Q8_0 at load, whose requantisation
 * error (half of max|w| / 127 a block of 32) is far below that of the 4-6-bit source (half its step:
 * max|w| / 15 to / 64), so it keeps what the file holds; an element-type matrix (an f16 embedding, say) in
 * the layers' commonest type. A file of element types converts to the run's one type, as always. */
struct gguf_qwen3_types {
    bool block;       /* the layer matrices are all q8_0 or all q4_0 */
    bool quantised;   /* a layer matrix is quantised: the file runs per tensor (formats) */
    bool convert_all; /* a layer matrix is in a format no kernel runs (converted at load) */
    enum fr_dtype
        wtype; /* the run's type without --dtype: the quantised layers' commonest, else the first's */
    char layer_type[8]; /* the layer matrices' first ggml type name (quantised: the most common one) */
    struct weight_formats formats; /* quantised: each matrix's run type */
    /* quantised: the matrices the load converts out of the file's type, "token_embd.weight (f16)"; "" when
     * none. */
    char converted[160];
    /* quantised: the file's own mix, e.g. "file q4_k_m mix: 168 q4_k, 28 q6_k (+ embedding q6_k)" (layer
     * matrices per type, most first; then the embedding and an untied output); else "". */
    char mix[192];
};

/* Checks the tensors as gguf_qwen3_load does and says their types; a file whose layer matrices mix a
 * quantised type with another is refused naming the first tensor that differs. */
int gguf_qwen3_types(const struct gguf_file *g, const struct qwen3_config *cfg, struct gguf_qwen3_types *out,
                     struct fr_err *err);

/* Checks every tensor against cfg (names, dims, types, completeness) and, with w != NULL (allocated for
 * cfg), copies them into w converting to its dtypes; a file of Q8_0 or Q4_0 layer matrices loads only into
 * weights of that type (its blocks copied as they are). w == NULL only checks: the fuzz harness's entry. */
int gguf_qwen3_load(const struct gguf_file *g, const struct qwen3_config *cfg, struct qwen3_weights *w,
                    struct fr_err *err);

#endif
