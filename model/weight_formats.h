/* The format each weight matrix of a model is stored and run in: one per tensor, as a GGUF file that
 * llama.cpp wrote holds them (Q4_K_M: Q4_K matrices with Q6_K's in some layers and the embedding). A uniform
 * model (bf16, q8_0, ...) gives every matrix one type. The mixes llama.cpp's llama-quantize writes for a
 * file type are in model/weight_mix.h. */
#ifndef FR_WEIGHT_FORMATS_H
#define FR_WEIGHT_FORMATS_H

#include <stdbool.h>

#include "kernels/dtype.h"

/* A layer's matrices, in the fused matrices' row order (q, k, v; gate, up). */
enum wpart { WPART_Q, WPART_K, WPART_V, WPART_O, WPART_GATE, WPART_UP, WPART_DOWN, WPART_COUNT };
const char *wpart_name(enum wpart p); /* llama.cpp's: "attn_q", ..., "ffn_down" */

#define WFMT_MAX_LAYERS 128

struct weight_formats {
    enum fr_dtype embed;   /* token_embd: the embedding, and the LM head when tied */
    enum fr_dtype lm_head; /* output.weight: equal to embed when tied */
    int n_layers;
    enum fr_dtype layer[WFMT_MAX_LAYERS][WPART_COUNT];
};

/* Every matrix in t. */
void weight_formats_uniform(struct weight_formats *f, int n_layers, enum fr_dtype t);
/* Whether every matrix has one type; *t (when non-NULL) that type, or the layers' most common one. */
bool weight_formats_is_uniform(const struct weight_formats *f, enum fr_dtype *t);
/* Matrices of type t (the embedding and a tied LM head counted once). */
int weight_formats_count(const struct weight_formats *f, enum fr_dtype t);
/* "q4_k 168, q6_k 29": each type present and its matrix count, in enum order. */
void weight_formats_describe(const struct weight_formats *f, char *buf, size_t len);

#endif
