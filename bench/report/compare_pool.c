/* Pools several runs of one side of a compare (the same build run more than once, e.g. alternated with the
 * other side by scripts/compare-commits.sh) into one struct run_report. A pooled row's median is the median
 * of the runs' medians (each run's median is already robust; the median over runs then drops a run that a
 * neighbour's load slowed), its min and max are the min of the mins and the max of the maxes (the spread
 * the compare verdicts test covers every run), reps and disturbed reps add up, its median interval is the
 * widest of the runs' (at the lowest coverage), and a row is noisy or above its roof when any run says so.
 * Ratios of the run's own (efficiency, paired read GB/s, per-block step times, ceilings) are medians too.
 * Rows pair by identity as in compare.c. Fields this file does not name stay as the first run's. Checked in
 * tests/test_report_compare.c (pooled medians and spreads on synthetic runs). */
#include "bench/report/compare_pool.h"

#include "bench/report/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define POOL_MAX COMPARE_MAX_POOLED

/* Median over the runs of one double each run holds at the same place. */
static double pool_median(double *const *vals, int n) {
    double v[POOL_MAX];
    for (int i = 0; i < n; i++) v[i] = *vals[i];
    return compare_median(v, n);
}

static void pool_stats(struct timing_stats *const *t, int n, struct timing_stats *out) {
    double med[POOL_MAX], mean[POOL_MAX], cv[POOL_MAX], lo = INFINITY, hi = -INFINITY;
    double ci_lo = INFINITY, ci_hi = -INFINITY, ci_level = INFINITY;
    int reps = 0, excluded = 0;
    bool noisy = false;
    for (int i = 0; i < n; i++) {
        med[i] = t[i]->median_s, mean[i] = t[i]->mean_s, cv[i] = t[i]->cv;
        if (isfinite(t[i]->min_s)) lo = fmin(lo, t[i]->min_s);
        if (isfinite(t[i]->max_s)) hi = fmax(hi, t[i]->max_s);
        if (isfinite(t[i]->ci_lo_s)) ci_lo = fmin(ci_lo, t[i]->ci_lo_s);
        if (isfinite(t[i]->ci_hi_s)) ci_hi = fmax(ci_hi, t[i]->ci_hi_s);
        if (isfinite(t[i]->ci_level)) ci_level = fmin(ci_level, t[i]->ci_level);
        reps += t[i]->reps;
        excluded += t[i]->excluded_reps;
        noisy = noisy || t[i]->noisy;
    }
    out->median_s = compare_median(med, n);
    out->mean_s = compare_median(mean, n);
    out->cv = compare_median(cv, n);
    out->min_s = isfinite(lo) ? lo : NAN;
    out->max_s = isfinite(hi) ? hi : NAN;
    out->reps = reps;
    out->excluded_reps = excluded;
    /* not an interval of the pooled median: the widest of the runs' intervals, at the lowest coverage */
    out->ci_lo_s = isfinite(ci_lo) ? ci_lo : NAN;
    out->ci_hi_s = isfinite(ci_hi) ? ci_hi : NAN;
    out->ci_level = isfinite(ci_level) ? ci_level : NAN;
    out->noisy = noisy;
}

/* The same row in another run, by identity; NULL when that run lacks it. */
static struct report_block *find_block(struct run_report *r, const char *name) {
    for (int i = 0; i < r->n_blocks; i++)
        if (strcmp(r->blocks[i].name, name) == 0) return &r->blocks[i];
    return NULL;
}
static struct report_step *find_step(struct run_report *r, long context) {
    for (int i = 0; i < r->n_steps; i++)
        if (r->steps[i].context == context) return &r->steps[i];
    return NULL;
}
static struct report_sampler *find_sampler(struct run_report *r, const struct report_sampler *x) {
    for (int i = 0; i < r->n_sampler; i++) {
        struct report_sampler *y = &r->sampler[i];
        if (strcmp(y->variant, x->variant) == 0 && strcmp(y->row_kind, x->row_kind) == 0 &&
            y->vocab == x->vocab)
            return y;
    }
    return NULL;
}
static struct report_ceiling *find_ceiling(struct run_report *r, const struct report_ceiling *x) {
    for (int i = 0; i < r->n_ceilings; i++)
        if (strcmp(r->ceilings[i].name, x->name) == 0 && r->ceilings[i].one_core == x->one_core)
            return &r->ceilings[i];
    return NULL;
}

/* o->f = the median of field f over the k rows row[] (v: k pointers of scratch) */
#define POOL_FIELD(f)                                                                                        \
    do {                                                                                                     \
        for (int j = 0; j < k; j++) v[j] = &row[j]->f;                                                       \
        o->f = pool_median(v, k);                                                                            \
    } while (0)

static void pool_blocks(struct run_report *const *runs, int n, struct run_report *out) {
    for (int i = 0; i < out->n_blocks; i++) {
        struct report_block *o = &out->blocks[i], *row[POOL_MAX];
        int k = 0;
        for (int j = 0; j < n; j++)
            if ((row[k] = find_block(runs[j], o->name))) k++;
        struct timing_stats *t[POOL_MAX];
        double *v[POOL_MAX];
        bool above = false;
        for (int j = 0; j < k; j++) {
            t[j] = &row[j]->measured;
            above = above || report_is_above_roof(row[j]->above_roof, row[j]->efficiency);
        }
        pool_stats(t, k, &o->measured);
        POOL_FIELD(predicted_s);
        POOL_FIELD(efficiency);
        POOL_FIELD(paired_read_gbs);
        POOL_FIELD(paired_efficiency);
        POOL_FIELD(own_read_gbs);
        POOL_FIELD(own_read_efficiency);
        o->above_roof = above;
        for (int e = 0; e < REPORT_MAX_EVENTS; e++) {
            double *c[POOL_MAX];
            for (int j = 0; j < k; j++) c[j] = &row[j]->counters[e];
            o->counters[e] = pool_median(c, k);
        }
    }
}

static void pool_steps(struct run_report *const *runs, int n, struct run_report *out) {
    for (int i = 0; i < out->n_steps; i++) {
        struct report_step *o = &out->steps[i], *row[POOL_MAX];
        int k = 0;
        for (int j = 0; j < n; j++)
            if ((row[k] = find_step(runs[j], o->context))) k++;
        struct timing_stats *t[POOL_MAX];
        double *v[POOL_MAX];
        bool above = false;
        for (int j = 0; j < k; j++) {
            t[j] = &row[j]->measured;
            above = above || report_is_above_roof(row[j]->above_roof, row[j]->efficiency);
        }
        pool_stats(t, k, &o->measured);
        o->above_roof = above;
        POOL_FIELD(predicted_s);
        POOL_FIELD(efficiency);
        POOL_FIELD(paired_read_gbs);
        POOL_FIELD(paired_efficiency);
        POOL_FIELD(weights_read_gbs);
        POOL_FIELD(weights_read_efficiency);
        for (int b = 0; b < BLOCK_COUNT; b++) POOL_FIELD(block_s[b]);
        o->tokens_per_s = report_ratio(1.0, o->measured.median_s);
        o->dram_gbs = report_ratio(o->dram_bytes, o->measured.median_s) / 1e9;
    }
}
#undef POOL_FIELD

static void pool_sampler_and_ceilings(struct run_report *const *runs, int n, struct run_report *out) {
    for (int i = 0; i < out->n_sampler; i++) {
        struct report_sampler *o = &out->sampler[i], *row;
        struct timing_stats *t[POOL_MAX];
        int k = 0;
        for (int j = 0; j < n; j++)
            if ((row = find_sampler(runs[j], o))) t[k++] = &row->measured;
        pool_stats(t, k, &o->measured);
    }
    for (int i = 0; i < out->n_ceilings; i++) {
        struct report_ceiling *o = &out->ceilings[i], *row[POOL_MAX];
        int k = 0;
        for (int j = 0; j < n; j++)
            if ((row[k] = find_ceiling(runs[j], o))) k++;
        double *v[POOL_MAX], lo = INFINITY, hi = -INFINITY;
        for (int j = 0; j < k; j++) {
            v[j] = &row[j]->value;
            if (isfinite(row[j]->min)) lo = fmin(lo, row[j]->min);
            if (isfinite(row[j]->max)) hi = fmax(hi, row[j]->max);
        }
        o->value = pool_median(v, k);
        for (int j = 0; j < k; j++) v[j] = &row[j]->median;
        o->median = pool_median(v, k);
        o->min = isfinite(lo) ? lo : NAN;
        o->max = isfinite(hi) ? hi : NAN;
    }
}

int compare_pool_runs(struct run_report *const *runs, int n, struct run_report *out, struct fr_err *err) {
    if (n < 1 || n > COMPARE_MAX_POOLED)
        return fr_err_set(err, "between 1 and %d runs per side, got %d", COMPARE_MAX_POOLED, n);
    for (int j = 1; j < n; j++) {
        struct fr_err why = {{0}};
        if (compare_check(runs[0], runs[j], &why) != 0)
            return fr_err_set(err, "run %d of a side is not the same set-up as its first run (%s)", j + 1,
                              why.msg + strlen("runs are not comparable: "));
        if (runs[j]->blocks_context != runs[0]->blocks_context)
            return fr_err_set(err, "run %d of a side timed its blocks at context %ld, its first run at %ld",
                              j + 1, runs[j]->blocks_context, runs[0]->blocks_context);
    }
    if (out != runs[0]) memcpy(out, runs[0], sizeof *out);
    if (n == 1) return 0;
    /* the rows are rebuilt from all runs; runs[0] may be out itself, so pool from copies */
    struct run_report *copy = malloc(sizeof *copy);
    if (!copy) return fr_err_set(err, "out of memory pooling runs");
    memcpy(copy, runs[0], sizeof *copy);
    struct run_report *src[POOL_MAX];
    src[0] = copy;
    for (int j = 1; j < n; j++) src[j] = runs[j];
    pool_blocks(src, n, out);
    pool_steps(src, n, out);
    pool_sampler_and_ceilings(src, n, out);
    free(copy);
    return 0;
}
