/* Timing harness over CLOCK_MONOTONIC. The median is the headline figure (robust to the noise of a shared
 * machine); min and max travel with it, and so does a confidence interval of the median from order
 * statistics (no assumption on the distribution of the times): a row is noisy when that interval's
 * half-width exceeds TIMING_NOISY_HALF_WIDTH of the median. Repetitions the counters mark as disturbed are
 * left out and counted, unless fewer than TIMING_MIN_CLEAN_REPS stay clean. Checked in tests/test_timing.c
 * against hand-computed statistics (median, min, max, mean, cv, the interval's order statistics and coverage
 * for n = 3, 10 and 20, the exclusion of disturbed repetitions). */
#include "roofline/timing.h"

#include "roofline/lockstep.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double timing_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double timing_resolution_s(void) {
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0) return NAN;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* P(B <= k) for B ~ Binomial(n, 1/2), summed in log space so n in the thousands stays exact enough. */
static double binom_half_cdf(int n, int k) {
    double sum = 0;
    for (int i = 0; i <= k && i <= n; i++)
        sum += exp(lgamma(n + 1.0) - lgamma(i + 1.0) - lgamma(n - i + 1.0) - n * log(2.0));
    return sum;
}

void timing_median_ci(int n, double level, int *lo, int *hi, double *coverage) {
    if (n <= 0) {
        *lo = *hi = -1, *coverage = 0;
        return;
    }
    /* j = 1 is [min, max]; widen inwards while the next pair still covers `level`. */
    int j = 1;
    while (j + 1 <= n + 1 - (j + 1) && 1 - 2 * binom_half_cdf(n, j) >= level) j++;
    *lo = j - 1, *hi = n - j;
    *coverage = 1 - 2 * binom_half_cdf(n, j - 1);
}

void timing_stats_from_samples(double *samples, int n, struct timing_stats *out) {
    *out = (struct timing_stats){0};
    if (n <= 0) return;
    qsort(samples, (size_t)n, sizeof *samples, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += samples[i];
    double mean = sum / n, var = 0;
    for (int i = 0; i < n; i++) var += (samples[i] - mean) * (samples[i] - mean);
    out->reps = n;
    out->min_s = samples[0];
    out->max_s = samples[n - 1];
    out->median_s = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    out->mean_s = mean;
    out->cv = (n > 1 && mean > 0) ? sqrt(var / (n - 1)) / mean : 0;
    int lo, hi;
    timing_median_ci(n, TIMING_CI_LEVEL, &lo, &hi, &out->ci_level);
    out->ci_lo_s = samples[lo];
    out->ci_hi_s = samples[hi];
    out->noisy =
        out->median_s > 0 && 0.5 * (out->ci_hi_s - out->ci_lo_s) > TIMING_NOISY_HALF_WIDTH * out->median_s;
}

int timing_stats_compute(const double *times, int n, const bool *disturbed, struct timing_stats *out) {
    *out = (struct timing_stats){0};
    if (n <= 0) return 0;
    double *kept = malloc(sizeof *kept * (size_t)n);
    if (!kept) return -1;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!disturbed || !disturbed[i]) kept[k++] = times[i];
    /* a median of one or two clean repetitions says less than one over all of them: keep all, and flag */
    int enough = n < TIMING_MIN_CLEAN_REPS ? n : TIMING_MIN_CLEAN_REPS;
    bool too_few_clean = k < enough;
    if (too_few_clean)
        for (k = 0; k < n; k++) kept[k] = times[k];
    timing_stats_from_samples(kept, k, out);
    out->excluded_reps = n - k;
    if (too_few_clean) out->noisy = true;
    free(kept);
    return 0;
}

/* After n timed repetitions: another while below min_reps or min_time_s, never past max_reps; a run in
 * lockstep (lockstep.h) also goes on while its partner wants another, so both time as many. The first
 * repetition is never in question (min_reps >= 1). */
static bool more_reps(const struct timing_opts *opts, int n, int max_reps, int min_reps, double timed) {
    bool want = n < max_reps && (n < min_reps || timed < opts->min_time_s);
    return lockstep_turn(want) && n < max_reps;
}

int timing_measure(timing_fn fn, void *ctx, const struct timing_opts *opts, struct timing_stats *out) {
    int max_reps = opts->max_reps > 0 ? opts->max_reps : 1000;
    int min_reps = opts->min_reps > 0 ? opts->min_reps : 1;
    if (min_reps > max_reps) min_reps = max_reps;
    const struct timing_hooks *h = opts->hooks;
    double *samples = malloc(sizeof *samples * (size_t)max_reps);
    bool *disturbed = calloc((size_t)max_reps, sizeof *disturbed);
    if (!samples || !disturbed) {
        free(disturbed);
        free(samples);
        return -1;
    }
    long rep = 0;
    for (int i = 0; i < opts->warmup; i++) {
        fn(ctx, rep++);
        lockstep_turn(true);
    }
    int n = 0;
    double timed = 0;
    for (bool more = true; more; more = more_reps(opts, n, max_reps, min_reps, timed)) {
        if (h) h->begin(h->ctx, n);
        double t0 = timing_now_s();
        fn(ctx, rep++);
        double dt = timing_now_s() - t0;
        if (h) disturbed[n] = h->end(h->ctx, n, dt);
        if (opts->samples) samples_append(opts->samples, n, dt, NAN, disturbed[n], t0);
        samples[n++] = dt;
        timed += dt;
    }
    int rc = timing_stats_compute(samples, n, disturbed, out);
    free(disturbed);
    free(samples);
    return rc;
}

int timing_measure_pair(timing_fn fa, void *ctx_a, timing_fn fb, void *ctx_b, const struct timing_opts *opts,
                        struct timing_stats *out_a, struct timing_stats *out_b, double *median_ratio) {
    const struct timing_partner b = {fb, ctx_b, out_b, median_ratio, NULL, NULL};
    return timing_measure_with(fa, ctx_a, &b, 1, opts, out_a);
}

/* An untimed run of a partner (a warm-up): its `before`, then it. */
static void partner_run(const struct timing_partner *p, long rep) {
    if (p->before) p->before(p->before_ctx, rep);
    p->fn(p->ctx, rep);
}

int timing_measure_with(timing_fn fa, void *ctx_a, const struct timing_partner *partners, int n_partners,
                        const struct timing_opts *opts, struct timing_stats *out_a) {
    int max_reps = opts->max_reps > 0 ? opts->max_reps : 1000;
    int min_reps = opts->min_reps > 0 ? opts->min_reps : 1;
    if (min_reps > max_reps) min_reps = max_reps;
    if (n_partners < 0 || n_partners > TIMING_PARTNERS_MAX) return -1;
    const int k = 1 + n_partners; /* series: fa's, then each partner's, then the ratios */
    double *s = malloc(sizeof *s * (size_t)max_reps * (size_t)(2 * k - 1));
    bool *disturbed = calloc((size_t)max_reps, sizeof *disturbed);
    const struct timing_hooks *h = opts->hooks;
    if (!s || !disturbed) {
        free(disturbed);
        free(s);
        return -1;
    }
    double *sa = s, *sp[TIMING_PARTNERS_MAX], *ratio[TIMING_PARTNERS_MAX];
    for (int j = 0; j < n_partners; j++)
        sp[j] = s + (size_t)max_reps * (size_t)(1 + j), ratio[j] = s + (size_t)max_reps * (size_t)(k + j);
    long rep = 0;
    for (int i = 0; i < opts->warmup; i++, rep++) {
        fa(ctx_a, rep);
        for (int j = 0; j < n_partners; j++) partner_run(&partners[j], rep);
        lockstep_turn(true);
    }
    int n = 0;
    double timed = 0;
    for (bool more = true; more; more = more_reps(opts, n, max_reps, min_reps, timed)) {
        if (h) h->begin(h->ctx, n);
        double t0 = timing_now_s();
        fa(ctx_a, rep);
        double ta = timing_now_s();
        if (h) disturbed[n] = h->end(h->ctx, n, ta - t0);
        sa[n] = ta - t0;
        timed += sa[n];
        for (int j = 0; j < n_partners; j++) {
            if (partners[j].before) partners[j].before(partners[j].before_ctx, rep);
            double t1 = timing_now_s();
            partners[j].fn(partners[j].ctx, rep);
            sp[j][n] = timing_now_s() - t1;
            ratio[j][n] = sp[j][n] > 0 ? sa[n] / sp[j][n] : 0;
            timed += sp[j][n];
        }
        if (opts->samples)
            samples_append(opts->samples, n, sa[n], n_partners > 0 ? sp[0][n] : NAN, disturbed[n], t0);
        rep++;
        n++;
    }
    /* a disturbed repetition of fa leaves its partners' runs out of every figure */
    int rc = timing_stats_compute(sa, n, disturbed, out_a);
    for (int j = 0; j < n_partners; j++) {
        rc |= timing_stats_compute(sp[j], n, disturbed, partners[j].out);
        if (partners[j].median_ratio) {
            struct timing_stats rs;
            rc |= timing_stats_compute(ratio[j], n, disturbed, &rs);
            *partners[j].median_ratio = rs.median_s;
        }
    }
    free(disturbed);
    free(s);
    return rc;
}

int timing_describe_opts(const struct timing_opts *opts, char *buf, size_t len) {
    if (opts->max_reps <= opts->min_reps)
        return snprintf(buf, len, "%d run%s", opts->min_reps, opts->min_reps == 1 ? "" : "s");
    if (opts->min_time_s > 0)
        return snprintf(buf, len, "%d to %d runs, at least %g s", opts->min_reps, opts->max_reps,
                        opts->min_time_s);
    return snprintf(buf, len, "%d to %d runs", opts->min_reps, opts->max_reps);
}
