/* Layer: bench/ itself holds the suites (blocks and steps, sampler sweep, verify) over model/, roofline/ and
 * kernels/; bench/cli/ drives them and bench/report/ writes their records.
 * Timing of the decode step's blocks: each block alone as a microbenchmark (one repetition = the block's
 * calls of one step, every layer in turn, so weight-reading blocks stream their weights from DRAM as in the
 * real step), and whole steps at a context length with per-block times from the decode step's observer. */
#ifndef FR_DECODE_BENCH_H
#define FR_DECODE_BENCH_H

#include "roofline/counters.h"
#include "roofline/rep_counts.h"
#include "roofline/timing.h"
#include "kernels/sampler.h"
#include "model/blocks.h"
#include "model/decode.h"

/* The counters around each timed repetition (either may be NULL or unavailable: not counted). */
struct decode_bench_counting {
    struct counters *team;     /* every thread of the team */
    struct counters *energy;   /* package-wide, the calling thread */
    struct steal_clock *steal; /* NULL: the hypervisor's steal is not read */
};

/* The all-threads read a timed repetition is paired with (ceilings_read_team over buf[n]): the context of
 * decode_bench_read_rep, a timing_fn for timing_measure_pair. */
struct decode_bench_read {
    const float *buf;
    size_t n;
    int threads;          /* the run's */
    volatile double sink; /* keeps the sum alive */
};
void decode_bench_read_rep(void *ctx, long rep);

struct decode_bench_opts {
    struct timing_opts block_timing; /* per block microbenchmark */
    struct timing_opts step_timing;  /* per whole step */
    struct sampler_params sampler;   /* the step's sampler (the sampler block) */
    /* When non-NULL, each step is paired with one all-threads read of read_buf[read_n] (step, read, ...),
     * and, when the model's weights take at least weights_read_min_bytes (below that their read would come
     * from cache), one of the weights after it (step, read, weights read, ...). */
    const float *read_buf;
    size_t read_n;
    size_t weights_read_min_bytes;
    struct decode_bench_counting counting; /* around each timed step */
};

struct decode_bench_step {
    long context;
    struct timing_stats step;           /* forward pass + sampler, per step */
    double block_median_s[BLOCK_COUNT]; /* median over repetitions of each block's time in one step */
    struct timing_stats read;           /* the paired read (reps 0 when not paired) */
    double step_over_read;              /* median over pairs of step time / read time; NaN unpaired */
    /* The same read kernel over the model's own weights (the whole allocation, st->w->base), run third in
     * each repetition: what the step's weight pages give, beside the paired buffer's (reps 0 when not run).
     */
    struct timing_stats weights_read;
    double step_over_weights_read; /* median of step time / weights read time; NaN unpaired */
    /* The step's time not inside any observed block (the layer loop, the observer's own calls, whatever
     * runs between blocks): median over repetitions of step time - sum of that repetition's block times. */
    double unattributed_s;
    struct rep_counts_summary counts; /* the counters of the timed steps */
};

/* Measures block b alone at context `context` (the KV cache must hold that many positions). For a block that
 * streams weights or KV from DRAM, every repetition is preceded by an untimed all-threads read of
 * evict[evict_n] (NULL: none) so the last-level cache holds none of its data, as in the real step where
 * 1.2 GB pass between two calls of the same layer. With cnt (may be NULL), the counters run around every
 * timed repetition (after the eviction, outside the timed window) and counts (may be NULL) gets what they
 * saw; disturbed repetitions are left out of out. Returns 0, or -1 with err set when a block run fails. */
int decode_bench_block(struct decode_state *st, enum block_id b, long context, const struct timing_opts *opts,
                       const float *evict, size_t evict_n, const struct decode_bench_counting *cnt,
                       struct timing_stats *out, struct rep_counts_summary *counts, struct fr_err *err);

/* The reads around a cold block's repetitions (decode_bench_block_evict). */
struct decode_bench_block_reads {
    /* The evicting read before each repetition: the same read kernel as the DRAM read ceiling, so its best
     * run is a read bandwidth the machine reached in this run (reps 0 when the block is not timed cold). */
    struct timing_stats evict;
    /* The same read kernel over the block's own spans (decode_block_spans: the bytes it streams, in its
     * pages), run after each repetition behind an eviction of its own, so as cold as the block: reps 0 when
     * not run (a block that streams nothing, or not timed cold). */
    struct timing_stats own;
    size_t own_bytes; /* the spans' bytes (0: the block streams nothing) */
    double over_own;  /* median over repetitions of block time / own read time; NaN when not run */
};

/* decode_bench_block that also measures the reads around a cold block's repetitions: each repetition is
 * eviction, block, eviction, own read (reads may be NULL: then no own read, nor its eviction). */
int decode_bench_block_evict(struct decode_state *st, enum block_id b, long context,
                             const struct timing_opts *opts, const float *evict, size_t evict_n,
                             const struct decode_bench_counting *cnt, struct timing_stats *out,
                             struct rep_counts_summary *counts, struct decode_bench_block_reads *reads,
                             struct fr_err *err);

/* Fills the KV cache to depth `context` and measures whole steps at position `context`. */
int decode_bench_step(struct decode_state *st, long context, const struct decode_bench_opts *opts,
                      struct decode_bench_step *out, struct fr_err *err);

#endif
