/* The batch sweep: batched decode steps (model/decode_batch.h) at one context for a list of batch sizes, each
 * timed as whole steps (forward pass of every sequence + one sampler draw per sequence), with the time spent
 * in the projection blocks (the GEMMs) measured by the step's observer. The sequences of the largest batch
 * are set up and their KV caches filled once; each batch size steps the first B of them. */
#ifndef FR_BATCH_BENCH_H
#define FR_BATCH_BENCH_H

#include "kernels/sampler.h"
#include "model/decode_batch.h"
#include "roofline/timing.h"

struct batch_bench_result {
    int batch;
    struct timing_stats step; /* per batched step */
    double proj_median_s;     /* median over repetitions of the projection blocks' time in one step */
};

/* Times batched steps at position `context` (caches filled to that depth) for each of the n batch sizes
 * (each <= bt->capacity), under `timing` and sampling with `sampler`. out[i] for batches[i]. Returns 0, or -1
 * with err set. */
int batch_bench_sweep(struct decode_batch *bt, long context, const int *batches, int n,
                      const struct timing_opts *timing, const struct sampler_params *sampler,
                      struct batch_bench_result *out, struct fr_err *err);

/* Fills every sequence's KV cache to depth `context`: deterministic values, the same in every sequence. */
void batch_bench_fill(struct decode_batch *bt, long context);

#endif
