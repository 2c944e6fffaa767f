/* Options every model-reading command shares (--model, --dtype, --kv): parse and load in one place. */
#ifndef FR_MODEL_OPTS_H
#define FR_MODEL_OPTS_H

#include "model/config.h"
#include "model/cost.h"
#include "model/weights_file.h"

/* Resolves and loads --model; prints the one-line error and returns CLI_EXIT_USAGE on failure. */
int model_opts_load(const char *model, struct qwen3_config *cfg);
/* Parses a --dtype / --kv value; prints the usage error and returns CLI_EXIT_USAGE on failure. */
int model_opts_dtype(const char *flag, const char *value, enum fr_dtype *out);
/* Parses a weights --dtype that may also name a llama.cpp mix (q4_k_m, q5_k_m: model/weight_mix.h; q4_0 and
 * q6_k stay plain types): *mix the mix, or -1 for a plain type; *out the type (a mix's commonest). Prints the
 * usage error (prefixed by `cmd`) and returns CLI_EXIT_USAGE on failure. */
int model_opts_weights(const char *cmd, const char *value, enum fr_dtype *out, int *mix);
/* The formats a command runs `path` (NULL: synthetic weights) in for cfg: the file's own without --dtype
 * (given false), else every matrix in type t or, mix >= 0, that mix (model/weights_file.h). */
int model_opts_formats(const char *path, const struct qwen3_config *cfg, enum fr_dtype t, int mix, bool given,
                       struct weight_formats *out, char *note, size_t note_len, struct fr_err *err);

#endif
