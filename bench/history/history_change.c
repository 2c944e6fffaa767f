/* PELT over the log of a series with a Gaussian mean-change cost (history_change.h says the method and
 * why). Checked in tests/test_history_change.c on seeded synthetic series: shifts found where injected, flat
 * series left alone. */
#include "bench/history/history_change.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The noise of one point, from the successive differences (a shift moves one difference, not their MAD). */
static double noise_sigma(const double *y, int n, double *scratch) {
    int m = n - 1;
    for (int i = 0; i < m; i++) scratch[i] = y[i + 1] - y[i];
    qsort(scratch, (size_t)m, sizeof *scratch, cmp_double);
    double med = m % 2 ? scratch[m / 2] : 0.5 * (scratch[m / 2 - 1] + scratch[m / 2]);
    for (int i = 0; i < m; i++) scratch[i] = fabs(scratch[i] - med);
    qsort(scratch, (size_t)m, sizeof *scratch, cmp_double);
    double mad = m % 2 ? scratch[m / 2] : 0.5 * (scratch[m / 2 - 1] + scratch[m / 2]);
    double sigma = mad / (0.6745 * sqrt(2.0));
    if (sigma > 0) return sigma;
    /* more than half the differences equal (a coarse timer): fall back to their standard deviation */
    double s = 0, s2 = 0;
    for (int i = 0; i < m; i++) {
        double d = y[i + 1] - y[i];
        s += d, s2 += d * d;
    }
    double var = (s2 - s * s / m) / (m > 1 ? m - 1 : 1);
    return var > 0 ? sqrt(var / 2) : 0;
}

/* Mean and sample variance of y[a..b) from the prefix sums. */
static void seg_stats(const double *S, const double *S2, int a, int b, double *mean, double *var) {
    int m = b - a;
    double d = S[b] - S[a];
    *mean = d / m;
    *var = m > 1 ? fmax(0, (S2[b] - S2[a] - d * d / m) / (m - 1)) : 0;
}

int history_change_detect(const double *values, int n, struct history_shift *out, int max_out,
                          struct fr_err *err) {
    for (int i = 0; i < n; i++)
        if (!isfinite(values[i]) || values[i] <= 0)
            return fr_err_set(err, "change points: point %d is %g, not a positive time", i, values[i]);
    const int L = HISTORY_CHANGE_MIN_SEGMENT;
    if (n < 2 * L) return 0;
    size_t nn = (size_t)n + 1;
    double *y = malloc(sizeof *y * nn), *S = malloc(sizeof *S * nn), *S2 = malloc(sizeof *S2 * nn);
    double *F = malloc(sizeof *F * nn);
    int *last = malloc(sizeof *last * nn), *R = malloc(sizeof *R * nn), *cps = malloc(sizeof *cps * nn);
    int found = -1;
    if (!y || !S || !S2 || !F || !last || !R || !cps) {
        fr_err_set(err, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) y[i] = log(values[i]);
    double sigma = noise_sigma(y, n, S); /* S is scratch until the prefix sums below */
    found = 0;
    if (!(sigma > 0)) goto done; /* a constant series has no shift */
    S[0] = S2[0] = 0;
    for (int i = 0; i < n; i++) {
        double v = y[i] / sigma;
        S[i + 1] = S[i] + v, S2[i + 1] = S2[i] + v * v;
    }
    const double beta = HISTORY_CHANGE_PENALTY * log((double)n);
    F[0] = -beta;
    int nr = 1;
    R[0] = 0;
    for (int t = 1; t <= n; t++) {
        F[t] = INFINITY;
        last[t] = 0;
        for (int k = 0; k < nr; k++) {
            int s = R[k];
            if (t - s < L) continue;
            double d = S[t] - S[s], c = S2[t] - S2[s] - d * d / (t - s);
            double v = F[s] + c + beta;
            if (v < F[t]) F[t] = v, last[t] = s;
        }
        if (!isfinite(F[t])) continue;
        /* PELT's pruning: a start that cannot beat F[t] now never will (the cost splits additively) */
        int kept = 0;
        for (int k = 0; k < nr; k++) {
            int s = R[k];
            if (t - s >= L) {
                double d = S[t] - S[s], c = S2[t] - S2[s] - d * d / (t - s);
                if (F[s] + c > F[t]) continue;
            }
            R[kept++] = s;
        }
        nr = kept;
        R[nr++] = t;
    }
    int nc = 0;
    for (int t = n; t > 0; t = last[t])
        if (last[t] > 0) cps[nc++] = last[t];
    /* cps is newest first; walk it oldest first with the segment bounds on either side */
    for (int k = nc - 1; k >= 0 && found < max_out; k--) {
        int a = k + 1 < nc ? cps[k + 1] : 0, tau = cps[k], b = k > 0 ? cps[k - 1] : n;
        double m1, v1, m2, v2;
        seg_stats(S, S2, a, tau, &m1, &v1);
        seg_stats(S, S2, tau, b, &m2, &v2);
        double d = (m2 - m1) * sigma, se = sqrt(v1 / (tau - a) + v2 / (b - tau)) * sigma;
        struct history_shift *o = &out[found++];
        o->index = tau;
        o->before = exp(m1 * sigma), o->after = exp(m2 * sigma);
        o->size = exp(d) - 1;
        o->size_lo = exp(d - 1.96 * se) - 1, o->size_hi = exp(d + 1.96 * se) - 1;
        o->confidence = se > 0 ? erf(fabs(d) / se / sqrt(2.0)) : 1;
    }
done:
    free(y), free(S), free(S2), free(F), free(last), free(R), free(cps);
    return found;
}
