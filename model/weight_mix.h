/* llama.cpp's tensor mixes: the type llama-quantize gives each matrix of a Qwen3 model for a file type
 * (src/llama-quant.cpp's llama_tensor_get_type, read and rewritten, not copied). Q4_K_M: Q4_K, with attn_v
 * and ffn_down in the layers use_more_bits picks and the embedding (token_embd, the tied LM head) in Q6_K;
 * Q5_K_M the same with Q5_K; Q6_K every matrix; Q4_0 every matrix but the embedding, which stays Q6_K. */
#ifndef FR_WEIGHT_MIX_H
#define FR_WEIGHT_MIX_H

#include "kernels/fr_err.h"
#include "model/config.h"
#include "model/weight_slots.h"
#include "model/weight_formats.h"

enum weight_mix { WEIGHT_MIX_Q4_K_M, WEIGHT_MIX_Q5_K_M, WEIGHT_MIX_Q6_K, WEIGHT_MIX_Q4_0, WEIGHT_MIX_COUNT };

const char *weight_mix_name(enum weight_mix m); /* "q4_k_m", "q5_k_m", "q6_k", "q4_0" */
/* Parses a mix name; returns 0 on success, -1 for a name that is no mix. */
int weight_mix_parse(const char *s, enum weight_mix *m);

/* The ggml type llama-quantize gives a tensor of cfg in mix m, without an importance matrix, its 32-block
 * fallbacks included (a row that is no whole superblock: Q4_K to Q5_0, Q5_K to Q5_1, Q6_K to Q8_0): layer
 * part p of layer `layer`, or layer WEIGHT_MIX_TOKEN_EMBD / WEIGHT_MIX_OUTPUT (p ignored). */
#define WEIGHT_MIX_TOKEN_EMBD (-1)
#define WEIGHT_MIX_OUTPUT     (-2)
enum wslot_dtype weight_mix_file_type(enum weight_mix m, const struct qwen3_config *cfg, int layer,
                                      enum wpart p);

/* The mix's type for every matrix of cfg, as llama-quantize gives it without an importance matrix. Fails
 * (one line naming the tensor) where llama.cpp would fall back to a type this build does not run (a row
 * length that is no multiple of 256), and for more layers than WFMT_MAX_LAYERS. */
int weight_mix_formats(enum weight_mix m, const struct qwen3_config *cfg, struct weight_formats *out,
                       struct fr_err *err);

#endif
