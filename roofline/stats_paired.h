/* Tests on paired differences (the i-th run of B minus the i-th run of A of the same round), written over
 * libm like roofline/stats.h (no GPL code):
 *
 *   stats_signed_rank  Wilcoxon's signed-rank test: W+ the sum of the ranks of |d| over the positive d
 *                      (zeros dropped, ties at their mean rank); two-sided p from W+'s exact permutation
 *                      distribution (every sign pattern equally likely) when at most STATS_EXACT_MAX_N
 *                      differences remain, else the normal approximation with the tie correction
 *   stats_paired_t     Student's paired t: mean(d) / (sd(d) / sqrt n) on n - 1 degrees of freedom
 *   stats_t_two_sided  P(|T| >= t) for Student's T on df degrees of freedom (the regularised incomplete
 *                      beta function by its continued fraction)
 *
 * Why both: the signed-rank test needs no model of the differences' distribution but cannot reach p < 0.05
 * with fewer than 6 differences (its smallest two-sided p is 2 / 2^n); the t test can, on the assumption
 * that the differences are roughly normal. Checked in tests/test_stats_paired.c against textbook values. */
#ifndef FR_STATS_PAIRED_H
#define FR_STATS_PAIRED_H

#include <stdbool.h>

struct stats_paired {
    double stat; /* signed rank: W+; t test: t */
    double p;    /* two-sided; 1 when there is no evidence either way (every difference 0) */
    double mean; /* the mean of the differences */
    int n;       /* differences used: the signed-rank test drops zeros */
    bool exact;  /* p from the exact distribution (signed rank) */
};

/* Wilcoxon's signed-rank test on d[n] (not modified). Returns -1 (out->p = 1) when n is below 1 or on
 * allocation failure, else 0. */
int stats_signed_rank(const double *d, int n, struct stats_paired *out);

/* The paired t test on d[n]. Returns -1 (out->p = 1) when n is below 2, else 0. Differences that are all
 * equal give p = 1 when they are 0 and p = 0 otherwise (t is infinite). */
int stats_paired_t(const double *d, int n, struct stats_paired *out);

/* Two-sided P(|T| >= |t|) for Student's T on df > 0 degrees of freedom. */
double stats_t_two_sided(double t, double df);

/* The t with P(|T| >= t) = p_two_sided on df > 0 degrees of freedom (e.g. 0.05, 4 -> 2.776), by bisection
 * on stats_t_two_sided; NaN when p is outside (0, 1) or df is not positive. */
double stats_t_critical(double p_two_sided, double df);

/* Student's interval of the mean of d[n] (n >= 2) at `level`: [mean - t sd / sqrt n, mean + t sd / sqrt n]
 * with t = stats_t_critical(1 - level, n - 1); lo = hi = mean when every d is equal. Returns -1 (lo, hi
 * NaN) when n is below 2. */
int stats_t_interval(const double *d, int n, double level, double *lo, double *hi);

#endif
