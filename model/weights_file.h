/* The one weights interface of the commands: a checkpoint file in either format, told apart by its first
 * bytes (GGUF's magic, else safetensors), mapped once and copied once into qwen3_weights. */
#ifndef FR_WEIGHTS_FILE_H
#define FR_WEIGHTS_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/fr_err.h"
#include "model/config.h"
#include "model/weights.h"

enum weights_format { WEIGHTS_FORMAT_SAFETENSORS, WEIGHTS_FORMAT_GGUF };

/* The file's format from its first four bytes; fails when it cannot be opened or read. */
int weights_file_format(const char *path, enum weights_format *fmt, struct fr_err *err);
const char *weights_format_name(enum weights_format fmt);

/* The model config for --weights path and --model `model` (either may be NULL, not both): a GGUF file's own
 * config, checked against --model's when both are given; a safetensors file needs --model. The file's tensor
 * index is then checked against the config (nothing copied). Errors are usage errors (bad input), one line
 * naming the file and the field. */
int weights_file_config(const char *path, const char *model, struct qwen3_config *cfg, struct fr_err *err);

/* The formats to run `path` in, a type per matrix (model/weight_formats.h). A GGUF file whose layer matrices
 * are quantised runs without --dtype (`given` false) in its own types, a format no kernel runs converted to
 * Q8_0 (model/gguf_qwen3.h); with --dtype every matrix in `requested`, except that a file of Q8_0 or Q4_0
 * layers runs only in that type (a one-line error says what the file holds). Any other file, or path NULL
 * (synthetic weights), runs every matrix in `requested`. note (when non-NULL, note_len bytes) receives what
 * the load converts, or "" when nothing: e.g. "token_embd.weight (f16) converted to q8_0 at load", or the
 * file's mix and the type it runs in. cfg is the config weights_file_config gave. */
int weights_file_formats(const char *path, const struct qwen3_config *cfg, enum fr_dtype requested,
                         bool given, struct weight_formats *formats, char *note, size_t note_len,
                         struct fr_err *err);
/* The same for a --dtype that names a formats table (a llama.cpp mix, `name`), always given. */
int weights_file_formats_as(const char *path, const struct qwen3_config *cfg,
                            const struct weight_formats *want, const char *name,
                            struct weight_formats *formats, char *note, size_t note_len, struct fr_err *err);
/* The same reduced to one type: every matrix's, or a mixed file's commonest layer type. */
int weights_file_wtype(const char *path, const struct qwen3_config *cfg, enum fr_dtype requested, bool given,
                       enum fr_dtype *wtype, char *note, size_t note_len, struct fr_err *err);

/* Loads the file into w (allocated for the config it must match). */
int weights_file_load(const char *path, struct qwen3_weights *w, struct fr_err *err);

/* Writes w as a GGUF file at out (model/gguf_qwen3_write.h), keeping the metadata of `in` when it is a GGUF
 * file (in NULL, or safetensors: the config's keys, no tokenizer). */
int weights_file_write_gguf(const char *out, const struct qwen3_weights *w, const char *in,
                            struct fr_err *err);

/* SHA-256 of the whole file as 64 lowercase hex digits (the report's record of which weights ran). */
int weights_file_sha256(const char *path, char hex[65], struct fr_err *err);

#endif
