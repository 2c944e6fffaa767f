/* The full run's weights phase: synthetic weights (a fixed seed, as before), or a checkpoint given with
 * --weights (GGUF or safetensors, model/weights_file.h) with its SHA-256 recorded; then a fixed prompt goes
 * through the model so that the sampler rows inside the step sample the logits the model produces for it. */
#ifndef FR_RUN_WEIGHTS_H
#define FR_RUN_WEIGHTS_H

#include "bench/report/report.h"
#include "model/decode.h"
#include "model/weights.h"

/* The seed the full run has always used for synthetic weights. */
#define RUN_SYNTHETIC_SEED 0x0f0e6eULL

/* The fixed prompt (run_weights.c says which text): the sampler's logits, and verify's decode checks. */
#define RUN_PROMPT_LEN 10
extern const int run_prompt_ids[RUN_PROMPT_LEN];

struct run_weights {
    const char *file;     /* --weights; NULL: synthetic */
    float *prompt_logits; /* [vocab] the model's logits after the prompt (file weights only), else NULL */
    double load_s;        /* seconds to load (or synthesize) */
    char note[384];       /* what the load converts and what the file holds (weights_file_wtype); "" */
};

/* Fills w (allocated for its config) from rw->file or synthetically, and records what ran in rep's
 * provenance (source, file, format, sha256, and rw->note as weights_conversion). Fails with a one-line
 * message (bad input). */
int run_weights_load(struct run_weights *rw, struct qwen3_weights *w, struct run_report *rep,
                     struct fr_err *err);

/* Runs the fixed prompt through st from position 0. With file weights the last position's logits are kept
 * and st->sample_logits points at them, so every timed sampler call (the sampler block alone and inside
 * each step) samples the model's own distribution; with synthetic weights one step on token 1 as before.
 * Says which in rep's provenance. */
int run_weights_prompt(struct run_weights *rw, struct decode_state *st, struct run_report *rep,
                       struct fr_err *err);

void run_weights_free(struct run_weights *rw);

#endif
