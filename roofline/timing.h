/* Timing harness: monotonic clock, warm-up, repetitions until both a minimum count and a minimum time,
 * and median / min / max / coefficient of variation of the per-repetition times, with a distribution-free
 * confidence interval of the median (binomial order statistics). "Noisy" means that interval is wide:
 * half-width above TIMING_NOISY_HALF_WIDTH of the median; raw spread alone (cv) flags nothing. */
#ifndef FR_TIMING_H
#define FR_TIMING_H

#include <stdbool.h>
#include <stddef.h>

#include "roofline/samples.h"

struct timing_stats {
    double median_s, min_s, max_s, mean_s;
    double cv;  /* standard deviation / mean (reported; no longer what flags a row) */
    int reps;   /* timed repetitions the statistics use (warm-up and disturbed ones excluded) */
    bool noisy; /* the median's interval half-width is above TIMING_NOISY_HALF_WIDTH of the median */
    /* Confidence interval of the median: [x_(j), x_(n+1-j)] of the sorted kept times, j the largest with
     * coverage 1 - 2 P(B <= j-1) >= TIMING_CI_LEVEL, B ~ Binomial(n, 1/2). With n <= 5 no pair of order
     * statistics reaches 95 %: the interval is [min, max] and ci_level says what it covers (n = 3: 0.75). */
    double ci_lo_s, ci_hi_s;
    double ci_level;   /* the interval's exact coverage */
    int excluded_reps; /* repetitions marked disturbed (counters) and left out of every statistic */
};

#define TIMING_NOISY_CV         0.05 /* kept for the cv column's readers; flags nothing */
#define TIMING_CI_LEVEL         0.95
#define TIMING_NOISY_HALF_WIDTH 0.05
/* disturbed repetitions are left out only when at least this many (or all n, when n is smaller) stay clean */
#define TIMING_MIN_CLEAN_REPS 3
#define TIMING_MIN_CLEAN_STR  "3"

struct timing_opts {
    int warmup;                       /* untimed calls first */
    int min_reps;                     /* at least this many timed calls */
    int max_reps;                     /* at most this many (bounds the sample buffer) */
    double min_time_s;                /* and keep going until this much time was timed */
    const struct timing_hooks *hooks; /* NULL: none */
    /* NULL: none. Else every timed repetition is appended under the set's current row (samples.h), with
     * the first partner's time in the same repetition as its paired read. */
    struct sample_set *samples;
};

/* Called around each timed repetition (rep counts the timed ones from 0; warm-up calls get none), outside the
 * timed window: begin just before the clock is read, end just after. end returns true when the repetition
 * was disturbed (the counters saw a thread switched out or migrated); disturbed repetitions are left out of
 * the statistics (timing_stats_compute). In timing_measure_pair the hooks wrap fa only. */
struct timing_hooks {
    void (*begin)(void *ctx, int rep);
    bool (*end)(void *ctx, int rep, double wall_s);
    void *ctx;
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

/* A function timed after fa in every repetition of timing_measure_with: its statistics into out, and the
 * median over repetitions of time_a / its time into median_ratio (may be NULL). before (may be NULL) runs
 * just ahead of each of its runs, untimed: e.g. an eviction, so that the partner starts as cold as fa. */
struct timing_partner {
    timing_fn fn;
    void *ctx;
    struct timing_stats *out;
    double *median_ratio;
    timing_fn before;
    void *before_ctx;
};
#define TIMING_PARTNERS_MAX 4

/* timing_measure_pair with n_partners (at most TIMING_PARTNERS_MAX) functions after fa in turn: a, p1, p2,
 * a, p1, p2, ... (warm-up included). The hooks wrap fa only, and a disturbed repetition of fa leaves the
 * partners' runs of that repetition out too. Returns non-zero on allocation failure or a partner count out
 * of range. */
int timing_measure_with(timing_fn fa, void *ctx_a, const struct timing_partner *partners, int n_partners,
                        const struct timing_opts *opts, struct timing_stats *out_a);

/* What opts repeat, in words for the report: "10 runs", or "20 to 400 runs, at least 0.3 s". Returns what
 * snprintf returns. */
int timing_describe_opts(const struct timing_opts *opts, char *buf, size_t len);

/* Statistics of n samples (sorts them in place). */
void timing_stats_from_samples(double *samples, int n, struct timing_stats *out);

/* Statistics of times[n] leaving out every i with disturbed[i] (disturbed may be NULL: none), counted in
 * out->excluded_reps; times is not modified. When fewer than TIMING_MIN_CLEAN_REPS (or n, if smaller) are
 * clean, all are kept, none is counted as excluded and the row is flagged noisy (no clean figure worth a
 * median exists). Returns -1 on allocation
 * failure (out zeroed), else 0. */
int timing_stats_compute(const double *times, int n, const bool *disturbed, struct timing_stats *out);

/* The interval's order statistics for n kept samples: 0-based indexes lo, hi into the sorted samples and the
 * exact coverage. n <= 0: lo = hi = -1, coverage 0. */
void timing_median_ci(int n, double level, int *lo, int *hi, double *coverage);

#endif
