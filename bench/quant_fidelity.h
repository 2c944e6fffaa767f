/* Layer: bench/ (suites) over model/ and roofline/.
 * How far a quantised decode (Q8_0, Q4_0) lands from the bf16 decode of the same weights: the bf16 weights
 * are loaded once (synthetic from a seed, or a checkpoint), the block formats quantised from them in memory
 * (model/weights_quant.h, what the load path does), and every format decodes the same tokens: a fixed
 * prompt, then the bf16 decode's own greedy continuation (teacher forcing, so one early disagreement does
 * not change every later input). Per step: KL(p_bf16 || p_quant) of the softmaxed logits, in nats, and
 * whether the two argmaxes agree. These are measurements, not a verdict; quant_fidelity_judge fails only
 * what is wrong whatever the format's accuracy (see there). Checked in tests/test_quant_fidelity.c. */
#ifndef FR_QUANT_FIDELITY_H
#define FR_QUANT_FIDELITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/dtype.h"
#include "kernels/fr_err.h"
#include "model/config.h"

#define QUANT_FIDELITY_STEPS     16 /* the positions compared by default (verify, the full run) */
#define QUANT_FIDELITY_MAX_STEPS 64
#define QUANT_FIDELITY_FORMATS   5 /* [0] q8_0, [1] q4_0, [2] q4_k, [3] q6_k, [4] llama.cpp's q4_k_m mix */
#define QUANT_FIDELITY_SKIPPED   1 /* quant_fidelity_run: not run, err says why (memory) */

struct quant_fidelity_opts {
    const struct qwen3_config *cfg;
    const char *weights_file; /* a checkpoint (model/weights_file.h); NULL: synthetic from seed */
    uint64_t seed;
    const int *prompt; /* ids, each taken modulo the vocabulary */
    int prompt_len;
    int steps; /* positions compared, 1..QUANT_FIDELITY_MAX_STEPS */
    enum fr_dtype kv;
    int threads;
    bool want[QUANT_FIDELITY_FORMATS]; /* which formats to decode */
};

struct quant_fidelity_format {
    enum fr_dtype dtype; /* every matrix's, or the mix's commonest */
    const char *name;    /* "q8_0", "q4_k_m" */
    bool measured;
    bool unfit;    /* the config's rows do not take the format (a K-quant's 256-weight superblocks) */
    char why[160]; /* unfit: the reason */
    int steps, top1_agree;
    double kl_mean, kl_max; /* KL(p_bf16 || p_quant) in nats over the steps */
    int kl_max_step;
    double kl_uniform_mean; /* mean KL(p_bf16 || uniform): what a decode that knows nothing scores */
    int nonfinite_steps;    /* steps with a non-finite logit in either decode */
    int range_exceeded;     /* steps whose KL exceeds max(z - z') - min(z - z'), its bound from the logits */
    double seconds;         /* quantising and decoding this format */
};

struct quant_fidelity {
    int steps;
    int tokens[QUANT_FIDELITY_MAX_STEPS]; /* the tokens every decode was fed, position by position */
    int prompt_steps;                     /* of them, from the prompt */
    char source[160];                     /* "synthetic weights (seed 0x...)" or "weights FILE" */
    double bf16_seconds;                  /* loading and decoding the bf16 reference */
    struct quant_fidelity_format f[QUANT_FIDELITY_FORMATS];
};

/* Runs the comparison. Returns 0; QUANT_FIDELITY_SKIPPED when the model cannot be quantised (rows not
 * whole blocks) or the bf16 weights and a quantised copy do not fit in the memory available (err says so); -1
 * with err set on a failed load or decode. */
int quant_fidelity_run(const struct quant_fidelity_opts *o, struct quant_fidelity *out, struct fr_err *err);

/* KL(softmax(p) || softmax(q)) in nats, in double over n logits; NaN when a logit is not finite. */
double quant_fidelity_kl(const float *p, const float *q, int n);
/* KL(softmax(p) || uniform over n) = log n - H(softmax(p)); NaN when a logit is not finite. */
double quant_fidelity_kl_uniform(const float *p, int n);
/* The index of the largest logit, the lowest on ties. */
int quant_fidelity_argmax(const float *logits, int n);

/* Whether the figures show something wrong whatever the format's accuracy: a non-finite logit, a KL above
 * the bound its own logits set (an arithmetic error), or a mean KL above the uniform decode's (the
 * quantised decode then tells less about the bf16 one than no model at all; the formats' error, at most a
 * few % of each block's largest weight, moves the logits by a fraction of their spread, and KL grows as the
 * square of it). Returns true when fine; else false with the reason in why. */
bool quant_fidelity_judge(const struct quant_fidelity_format *f, char *why, size_t cap);

#endif
