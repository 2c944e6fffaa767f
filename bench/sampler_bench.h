/* Sampler benchmark: each piece of the sampler and the two full chains (softmax + top-p + draw, with the
 * fast filter and with the sort reference) timed at several vocabulary sizes, on realistic rows and on
 * flat rows whose nucleus is most of the vocabulary. Every figure is a timing_stats (median/min/max/reps).
 * The full run calls sampler_bench_run; `forge-roofline sample --bench` prints the table. */
#ifndef FR_SAMPLER_BENCH_H
#define FR_SAMPLER_BENCH_H

#include <stdbool.h>
#include <stdio.h>

#include "roofline/timing.h"
#include "kernels/fr_err.h"

enum sampler_bench_variant {
    SAMPLER_BENCH_GREEDY,     /* argmax over the logits */
    SAMPLER_BENCH_SOFTMAX,    /* logits -> f32 probabilities */
    SAMPLER_BENCH_TOP_P_SORT, /* reference filter (qsort of the whole row) */
    SAMPLER_BENCH_TOP_P_FAST, /* histogram + candidate radix sort */
    SAMPLER_BENCH_DRAW,       /* Philox + inverse CDF over the filtered row */
    SAMPLER_BENCH_CHAIN_FAST, /* sampler_pick, as the decode step runs it: softmax + fast top-p + draw, fused
                               */
    SAMPLER_BENCH_CHAIN_SORT, /* softmax + reference top-p + draw, each on its own */
    SAMPLER_BENCH_VARIANT_COUNT,
};

struct sampler_bench_result {
    const char *variant;  /* sampler_bench_variant_name */
    const char *row_kind; /* "realistic" or "flat" */
    int vocab;
    int nucleus; /* tokens kept by top-p on this row; -1 on greedy and softmax rows (no top-p) */
    struct timing_stats timing;
};

struct sampler_bench_opts {
    const int *vocabs; /* NULL: sampler_bench_default_vocabs */
    int n_vocabs;
    float temperature, top_p;
    double min_time_s; /* per figure; the sort-based figures stop at min_reps */
    int min_reps;
    bool skip_sort; /* leave out the two sort-based figures (they dominate the run time) */
    int threads;    /* the run's: the softmax's passes split over up to this many (default 1) */
    /* NULL: none. Else every timed repetition is kept under sampler:<variant>@<vocab> (realistic rows) or
     * sampler:<variant>.flat@<vocab>, with the set's thread count (roofline/samples.h). */
    struct sample_set *samples;
};

extern const int sampler_bench_default_vocabs[5]; /* 32000, 65536, 128256, 151936, 262144 */

const char *sampler_bench_variant_name(enum sampler_bench_variant v);
void sampler_bench_default_opts(struct sampler_bench_opts *o);
/* Runs every variant on every vocabulary and row kind; *out is malloc'd (caller frees), *n_out set. */
int sampler_bench_run(const struct sampler_bench_opts *o, struct sampler_bench_result **out, int *n_out,
                      struct fr_err *err);
/* What o times and how often, in words for run.json and the report. */
void sampler_bench_describe(const struct sampler_bench_opts *o, char *buf, size_t len);
/* Markdown table of the results, times in microseconds. */
void sampler_bench_print_markdown(FILE *f, const struct sampler_bench_result *r, int n);

#endif
