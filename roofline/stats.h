/* Statistics on the raw repetitions of two builds (roofline/samples.h), written here over libm's erfc
 * rather than linked from GSL (GPL-3 would make the whole binary GPL):
 *
 *   stats_mann_whitney   Mann-Whitney U, two-sided p from the normal approximation with tie and continuity
 *                        corrections (as R's wilcox.test(exact = FALSE) and scipy's mannwhitneyu)
 *   stats_hodges_lehmann the Hodges-Lehmann shift (median of the m x n differences y_j - x_i) and its
 *                        distribution-free interval [D_(k), D_(mn+1-k)] (Lehmann; Hollander & Wolfe 4.3),
 *                        k from U's exact null distribution when m + n <= STATS_EXACT_MAX_N, else normal
 *   stats_holm           Holm's step-down adjustment of p-values over a family of rows
 *   stats_verdict        the compare's rule: faster, slower, no change or inconclusive against a threshold
 *
 * On log times the shift is the log of the ratio B/A, so exp() of the estimate and of the interval's ends is
 * the ratio and its interval. Checked in tests/test_stats.c against hand-worked examples and, for coverage,
 * on seeded normal data (the project's counter-based generator, kernels/sampler.h). */
#ifndef FR_STATS_H
#define FR_STATS_H

#include <stdbool.h>

#define STATS_EXACT_MAX_N 50 /* U's null counts stay exact integers in a double (C(50, 25) < 2^53) */

struct stats_mw {
    double u; /* U of x: pairs with x_i > y_j, ties counting 1/2 */
    double z; /* (|U - mn/2| - 1/2) / sd, sd with the tie correction; sign of U - mn/2 */
    double p; /* two-sided: erfc(|z| / sqrt 2); 1 when every value ties */
    int m, n;
};

/* Mann-Whitney U of x[m] against y[n] (neither modified). Returns -1 (out zeroed, p = 1) when m or n is
 * below 1 or on allocation failure, else 0. */
int stats_mann_whitney(const double *x, int m, const double *y, int n, struct stats_mw *out);

struct stats_shift {
    double est;    /* Hodges-Lehmann estimate of the shift y - x */
    double lo, hi; /* the interval */
    double level;  /* its coverage: exact (>= the level asked) when computed exactly, else nominal */
    bool exact;    /* k from the exact null distribution of U */
};

/* The Hodges-Lehmann shift of y against x with its interval at `level` (e.g. 0.95). When no pair of order
 * statistics reaches the level (tiny samples: 3 and 3 reach 0.90 at best), the interval is the widest,
 * [min D, max D], with its own coverage in out->level. Returns -1 when m or n is below 1 or on allocation
 * failure, else 0. */
int stats_hodges_lehmann(const double *x, int m, const double *y, int n, double level,
                         struct stats_shift *out);

/* Holm's adjusted p-values of p[n] into adj[n] (adj may be p): the k-th smallest times (n - k + 1), made
 * monotone, capped at 1. NaN p-values are left out of the family and stay NaN. */
void stats_holm(const double *p, int n, double *adj);

/* The median of v[n] (n >= 1), sorting v in place. */
double stats_median(double *v, int n);

/* z with P(Z > z) = q for a standard normal Z, 0 < q < 1 (bisection over erfc). */
double stats_normal_upper(double q);

enum stats_verdict {
    STATS_INCONCLUSIVE, /* neither a difference beyond the threshold nor one inside it is established */
    STATS_NO_CHANGE,    /* the interval of the ratio lies within (1 - t, 1 + t) */
    STATS_FASTER,       /* significant (adjusted p < alpha, interval below 1) and the ratio <= 1 - t */
    STATS_SLOWER,       /* significant (adjusted p < alpha, interval above 1) and the ratio >= 1 + t */
};
const char *stats_verdict_name(enum stats_verdict v); /* "inconclusive", "no change", "faster", "slower" */

/* The verdict on a ratio B/A (times: above 1 is slower) with interval [lo, hi], the row's adjusted p,
 * alpha and the threshold t (0.02 for 2 %). */
enum stats_verdict stats_verdict(double ratio, double lo, double hi, double p_adj, double alpha,
                                 double threshold);

/* For an inconclusive row: by how much the samples of each side would have to grow for the interval to
 * decide (fit within the threshold band, or clear 1 with the estimate beyond the threshold), assuming the
 * estimate stays and the interval narrows as 1 / sqrt(samples): the factor (>= 1), or INFINITY when the
 * estimate sits on the threshold itself. */
double stats_growth_to_decide(double ratio, double lo, double hi, double threshold);

/* For a row whose estimate lies beyond the threshold but is not yet significant: the growth of each side's
 * samples that would bring Mann-Whitney's p (now p) down to p_needed, z growing as sqrt(samples): (z_needed /
 * z)^2, at least 1; INFINITY when p is 1 (no evidence to grow). */
double stats_growth_to_significance(double p, double p_needed);

#endif
