/* qwen3_config: the shape of a Qwen3-family model, read from the model's own config.json. */
#ifndef FR_CONFIG_H
#define FR_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/fr_err.h"

struct qwen3_config {
    char name[64];        /* model name: directory name under model/, or the file's parent dir */
    char path[512];       /* the config.json it came from */
    int hidden;           /* hidden_size, e.g. 1024 */
    int intermediate;     /* intermediate_size, e.g. 3072 */
    int n_layers;         /* num_hidden_layers */
    int n_heads;          /* num_attention_heads (query heads) */
    int n_kv_heads;       /* num_key_value_heads */
    int head_dim;         /* head_dim: explicit, NOT hidden / n_heads (128 vs 64 for Qwen3-0.6B) */
    int vocab;            /* vocab_size */
    int max_context;      /* max_position_embeddings */
    double rms_eps;       /* rms_norm_eps */
    double rope_theta;    /* rope_theta */
    bool tied_embeddings; /* tie_word_embeddings: LM head reads the embedding matrix */
};

/* Parses a config.json file. On error returns non-zero with a one-line message naming the file and the
 * field. Shapes are validated (positive sizes, heads divisible by KV heads, products that fit). */
int qwen3_config_load(const char *path, struct qwen3_config *cfg, struct fr_err *err);

/* Parses config JSON text already in memory; `path` is only used in messages. */
int qwen3_config_parse(const char *json, size_t len, const char *path, struct qwen3_config *cfg,
                       struct fr_err *err);

/* The shape checks of qwen3_config_parse (heads a multiple of KV heads, even head_dim, products that fit),
 * for a config that came from elsewhere (a GGUF file's metadata); messages name `path`. */
int qwen3_config_check(const struct qwen3_config *cfg, const char *path, struct fr_err *err);

/* Resolves --model: a NAME under <models_dir>/NAME/config.json, a directory holding config.json, or a file.
 * A NAME is looked up under $FORGE_ROOFLINE_MODELS when set, then ./model, then the build tree beside the
 * binary, then the install's share folder (model/datadir.h); the error lists every place it looked. */
int qwen3_config_resolve(const char *model, char *path_out, size_t path_len, struct fr_err *err);

/* Parameter count (embedding counted once when tied). */
uint64_t qwen3_param_count(const struct qwen3_config *cfg);

#endif
