/* Tests on paired differences (see stats_paired.h). The signed-rank test's exact distribution is counted
 * on doubled ranks, which are integers even for tied mean ranks: count[s] is the number of the 2^n sign
 * patterns whose positive doubled ranks sum to s, built one difference at a time. The counts stay exact
 * integers in a double up to 2^53, so up to STATS_EXACT_MAX_N (50) differences. Student's T's tail is the
 * regularised incomplete beta function I_x(df/2, 1/2) at x = df / (df + t^2), from its continued fraction
 * (DLMF 8.17.22) evaluated by the modified Lentz method. */
#include "roofline/stats_paired.h"

#include <math.h>
#include <stdlib.h>

#include "roofline/stats.h"

static int cmp_abs(const void *a, const void *b) {
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

int stats_signed_rank(const double *d, int n, struct stats_paired *out) {
    *out = (struct stats_paired){.p = 1, .mean = NAN};
    if (n < 1) return -1;
    double *v = malloc(sizeof *v * (size_t)n);
    int *r2 = malloc(sizeof *r2 * (size_t)n);
    if (!v || !r2) {
        free(v);
        free(r2);
        return -1;
    }
    double sum = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        sum += d[i];
        if (d[i] != 0) v[k++] = d[i];
    }
    out->mean = sum / n;
    out->n = k;
    qsort(v, (size_t)k, sizeof *v, cmp_abs);
    long w2 = 0, total2 = 0; /* doubled: W+ and the sum of all ranks */
    double ties = 0;         /* sum over tie groups of t^3 - t */
    for (int i = 0; i < k;) {
        int j = i;
        while (j < k && fabs(v[j]) == fabs(v[i])) j++;
        for (int m = i; m < j; m++) r2[m] = i + 1 + j; /* twice the mean rank of positions i+1 .. j */
        ties += (double)(j - i) * (j - i) * (j - i) - (j - i);
        i = j;
    }
    for (int i = 0; i < k; i++) {
        total2 += r2[i];
        if (v[i] > 0) w2 += r2[i];
    }
    out->stat = 0.5 * (double)w2;
    int rc = 0;
    if (k == 0) {
        /* every difference is 0: no evidence either way */
    } else if (k <= STATS_EXACT_MAX_N) {
        double *count = calloc((size_t)total2 + 1, sizeof *count);
        if (!count) {
            rc = -1;
        } else {
            count[0] = 1;
            long reach = 0;
            for (int i = 0; i < k; i++) { /* the i-th difference positive (adds r2) or not */
                for (long s = reach; s >= 0; s--) count[s + r2[i]] += count[s];
                reach += r2[i];
            }
            double below = 0, above = 0, all = ldexp(1.0, k);
            for (long s = 0; s <= total2; s++) {
                if (s <= w2) below += count[s];
                if (s >= w2) above += count[s];
            }
            out->p = fmin(1, 2 * fmin(below, above) / all);
            out->exact = true;
            free(count);
        }
    } else {
        double mu = 0.25 * k * (k + 1.0), var = k * (k + 1.0) * (2 * k + 1.0) / 24 - ties / 48;
        double dev = fabs(out->stat - mu) - 0.5;
        out->p = var > 0 ? fmin(1, erfc((dev > 0 ? dev : 0) / sqrt(2 * var))) : 1;
    }
    free(v);
    free(r2);
    return rc;
}

/* I_x(a, b) by the continued fraction, for x < (a + 1) / (a + b + 2) where it converges fast. */
static double beta_fraction(double x, double a, double b) {
    const double tiny = 1e-300;
    double f = 1, c = 1, dd = 0;
    for (int j = 1; j <= 400; j++) {
        int m = j / 2;
        double aj = j % 2 ? -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
                          : m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
        dd = 1 + aj * dd;
        dd = fabs(dd) < tiny ? tiny : dd;
        c = 1 + aj / c;
        c = fabs(c) < tiny ? tiny : c;
        dd = 1 / dd;
        f *= c * dd;
        if (fabs(c * dd - 1) < 1e-15) break;
    }
    double front = exp(a * log(x) + b * log1p(-x) - (lgamma(a) + lgamma(b) - lgamma(a + b))) / a;
    return front / f;
}

static double beta_regularised(double x, double a, double b) {
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    return x < (a + 1) / (a + b + 2) ? beta_fraction(x, a, b) : 1 - beta_fraction(1 - x, b, a);
}

double stats_t_two_sided(double t, double df) {
    if (!(df > 0) || isnan(t)) return NAN;
    if (isinf(t)) return 0;
    return beta_regularised(df / (df + t * t), 0.5 * df, 0.5);
}

double stats_t_critical(double p_two_sided, double df) {
    if (!(p_two_sided > 0 && p_two_sided < 1) || !(df > 0)) return NAN;
    double lo = 0, hi = 1;
    while (stats_t_two_sided(hi, df) > p_two_sided && hi < 1e12) hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) { /* the tail falls as t grows */
        double mid = 0.5 * (lo + hi);
        if (stats_t_two_sided(mid, df) > p_two_sided)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

int stats_t_interval(const double *d, int n, double level, double *lo, double *hi) {
    *lo = *hi = NAN;
    if (n < 2) return -1;
    double sum = 0, ss = 0;
    for (int i = 0; i < n; i++) sum += d[i];
    double mean = sum / n;
    for (int i = 0; i < n; i++) ss += (d[i] - mean) * (d[i] - mean);
    double half = stats_t_critical(1 - level, n - 1) * sqrt(ss / (n - 1) / n);
    *lo = mean - half, *hi = mean + half;
    return 0;
}

int stats_paired_t(const double *d, int n, struct stats_paired *out) {
    *out = (struct stats_paired){.p = 1, .mean = NAN, .n = n};
    if (n < 2) return -1;
    double sum = 0, ss = 0;
    for (int i = 0; i < n; i++) sum += d[i];
    out->mean = sum / n;
    for (int i = 0; i < n; i++) ss += (d[i] - out->mean) * (d[i] - out->mean);
    double se = sqrt(ss / (n - 1) / n);
    if (!(se > 0)) {
        out->stat = out->mean == 0 ? 0 : copysign(INFINITY, out->mean);
        out->p = out->mean == 0 ? 1 : 0;
        return 0;
    }
    out->stat = out->mean / se;
    out->p = stats_t_two_sided(out->stat, n - 1);
    return 0;
}
