/* The batch sweep: batched decode steps (model/decode_batch.h) at one context for a list of batch sizes, each
 * timed as whole steps (forward pass of every sequence + one sampler draw per sequence), with the time spent
 * in the projection blocks (the GEMMs) measured by the step's observer. The sequences of the largest batch
 * are set up and their KV caches filled once; each batch size steps the first B of them. */
#ifndef FR_BATCH_BENCH_H
#define FR_BATCH_BENCH_H

#include "bench/decode_bench.h"
#include "kernels/sampler.h"
#include "model/decode_batch.h"
#include "roofline/timing.h"

struct batch_bench_result {
    int batch;
    struct timing_stats step; /* per batched step */
    double proj_median_s;     /* median over repetitions of the projection blocks' time in one step */
    struct timing_stats read; /* the paired read (reps 0 when not paired) */
    double step_over_read;    /* median over pairs of step time / read time; NaN unpaired */
};

/* With timing->samples, each B's repetitions are kept under batch:<B>@<context> followed by the set's
 * current row (samples_begin_row: "" for the run's backend, ":openblas" for the other).
 * Times batched steps at position `context` (caches filled to that depth) for each of the n batch sizes
 * (each <= bt->capacity), under `timing` and sampling with `sampler`. out[i] for batches[i]. With read_buf
 * non-NULL each step is paired with one all-threads read of read_buf[read_n] (step, read, step, read, ...),
 * as the decode steps are (bench/decode_bench.h), so each B's step is normalized by a read of the same
 * moment. Returns 0, or -1 with err set. */
int batch_bench_sweep(struct decode_batch *bt, long context, const int *batches, int n,
                      const struct timing_opts *timing, const struct sampler_params *sampler,
                      const float *read_buf, size_t read_n, struct batch_bench_result *out,
                      struct fr_err *err);

/* Fills every sequence's KV cache to depth `context`: deterministic values, the same in every sequence. */
void batch_bench_fill(struct decode_batch *bt, long context);

#endif
