/* Prompt processing timed (model/prefill.h): for each prompt length, whole prefills of that many tokens after
 * `depth` cached positions, repeated under the timing harness, each block's time in every repetition taken
 * by the prefill's observer; then the first token's draw from the last position's logits, timed apart (the
 * sampler is the second half of the time to first token). Each repetition rewrites the prompt's positions
 * of the cache and reads the same depth positions before them, so every repetition does the same work. */
#ifndef FR_PREFILL_BENCH_H
#define FR_PREFILL_BENCH_H

#include "kernels/sampler.h"
#include "model/prefill.h"
#include "roofline/timing.h"

struct prefill_bench_result {
    int prompt_len, depth;
    struct timing_stats prefill;            /* one whole prefill, embed to the last LM head */
    struct timing_stats block[BLOCK_COUNT]; /* each block's time in one prefill (reps 0: not run) */
    struct timing_stats sample;             /* the first token's draw */
};

/* With timing->samples, the prefill's repetitions are kept under the row `key` (compare_key_prefill_of's
 * "pp@512"). Fills out for prompt_len tokens (<= p->capacity) of deterministic ids after depth
 * positions already in p's cache. Returns 0, or -1 with err set. */
int prefill_bench_run(struct prefill_state *p, int prompt_len, int depth, const char *key,
                      const struct timing_opts *timing, const struct sampler_params *sampler,
                      struct prefill_bench_result *out, struct fr_err *err);

#endif
