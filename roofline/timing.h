/* Timing harness: monotonic clock, warm-up, repetitions until both a minimum count and a minimum time,
 * and median / min / max / coefficient of variation of the per-repetition times. */
#ifndef FR_TIMING_H
#define FR_TIMING_H

#include <stdbool.h>
#include <stddef.h>

struct timing_stats {
    double median_s, min_s, max_s, mean_s;
    double cv;  /* standard deviation / mean */
    int reps;   /* timed repetitions (warm-up excluded) */
    bool noisy; /* cv above TIMING_NOISY_CV: the figure is reported but flagged */
};

#define TIMING_NOISY_CV 0.05

struct timing_opts {
    int warmup;        /* untimed calls first */
    int min_reps;      /* at least this many timed calls */
    int max_reps;      /* at most this many (bounds the sample buffer) */
    double min_time_s; /* and keep going until this much time was timed */
};

/* The measured region; `rep` counts from 0 over warm-up and timed calls (used to rotate buffers). */
typedef void (*timing_fn)(void *ctx, long rep);

double timing_now_s(void);        /* CLOCK_MONOTONIC in seconds */
double timing_resolution_s(void); /* clock_getres of CLOCK_MONOTONIC */

/* Runs fn under the options and fills out. Returns non-zero only on allocation failure. */
int timing_measure(timing_fn fn, void *ctx, const struct timing_opts *opts, struct timing_stats *out);

/* Runs fa and fb alternately (a, b, a, b, ...) under the same options, so both see the same noise of a
 * shared machine: for comparing two kernels that do the same work. median_ratio (may be NULL) receives the
 * median over the pairs of time_a / time_b, which cancels noise slower than one pair. Returns non-zero only
 * on allocation failure. */
int timing_measure_pair(timing_fn fa, void *ctx_a, timing_fn fb, void *ctx_b, const struct timing_opts *opts,
                        struct timing_stats *out_a, struct timing_stats *out_b, double *median_ratio);

/* What opts repeat, in words for the report: "10 runs", or "20 to 400 runs, at least 0.3 s". Returns what
 * snprintf returns. */
int timing_describe_opts(const struct timing_opts *opts, char *buf, size_t len);

/* Statistics of n samples (sorts them in place). */
void timing_stats_from_samples(double *samples, int n, struct timing_stats *out);

#endif
