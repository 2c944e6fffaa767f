/* Options every model-reading command shares (--model, --dtype, --kv): parse and load in one place. */
#ifndef FR_MODEL_OPTS_H
#define FR_MODEL_OPTS_H

#include "model/config.h"
#include "model/cost.h"

/* Resolves and loads --model; prints the one-line error and returns CLI_EXIT_USAGE on failure. */
int model_opts_load(const char *model, struct qwen3_config *cfg);
/* Parses a --dtype / --kv value; prints the usage error and returns CLI_EXIT_USAGE on failure. */
int model_opts_dtype(const char *flag, const char *value, enum fr_dtype *out);
/* Parses a --dtype value for the weights: bf16, f32, q8_0, q4_0, q4_k or q6_k (matrices quantised at load,
 * kernels/quant.h, kernels/quant_k.h). */
int model_opts_wtype(const char *value, enum fr_dtype *out);

#endif
