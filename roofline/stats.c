/* Statistics on repetitions (see stats.h). Ranks and differences are computed on sorted copies; the exact
 * null distribution of U comes from its generating function prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i), whose
 * coefficients count the arrangements giving each U. Checked in tests/test_stats.c: hand-worked U, z and p
 * (with and without ties), the interval's order statistics for 3 + 3 and 10 + 10, Holm on a textbook family,
 * and the 95 % interval's coverage on 1,000 seeded normal samples. */
#include "roofline/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stats_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double stats_normal_upper(double q) {
    double lo = -40, hi = 40;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(mid / sqrt(2.0)) > q)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

int stats_mann_whitney(const double *x, int m, const double *y, int n, struct stats_mw *out) {
    *out = (struct stats_mw){.p = 1, .m = m, .n = n};
    if (m < 1 || n < 1) return -1;
    const int N = m + n;
    /* pooled values, tagged by side (x: 1), sorted; ties take their mean rank */
    double *v = malloc(sizeof *v * 2 * (size_t)N);
    if (!v) return -1;
    for (int i = 0; i < m; i++) v[2 * i] = x[i], v[2 * i + 1] = 1;
    for (int j = 0; j < n; j++) v[2 * (m + j)] = y[j], v[2 * (m + j) + 1] = 0;
    qsort(v, (size_t)N, 2 * sizeof *v, cmp_double);
    double rank_x = 0, ties = 0; /* sum over tie groups of t^3 - t */
    for (int i = 0; i < N;) {
        int j = i;
        while (j < N && v[2 * j] == v[2 * i]) j++;
        double t = j - i, mean_rank = 0.5 * (i + 1 + j);
        for (int k = i; k < j; k++) rank_x += v[2 * k + 1] * mean_rank;
        ties += t * t * t - t;
        i = j;
    }
    free(v);
    const double mn = (double)m * n;
    out->u = rank_x - 0.5 * m * (m + 1.0);
    double var = mn / 12.0 * ((N + 1.0) - ties / ((double)N * (N - 1.0)));
    if (!(var > 0)) return 0; /* every value ties: no evidence either way */
    double d = out->u - 0.5 * mn;
    double dc = fabs(d) - 0.5 > 0 ? fabs(d) - 0.5 : 0;
    out->z = (d < 0 ? -dc : dc) / sqrt(var);
    out->p = erfc(fabs(out->z) / sqrt(2.0));
    if (out->p > 1) out->p = 1;
    return 0;
}

/* P(U <= u) for u = 0..mn under the null (no ties), into cdf[mn + 1]; m + n <= STATS_EXACT_MAX_N. */
static void u_null_cdf(int m, int n, double *cdf) {
    const int mn = m * n;
    double *c = cdf;
    memset(c, 0, sizeof *c * (size_t)(mn + 1));
    c[0] = 1;
    for (int i = 1; i <= m; i++) {
        for (int u = mn; u >= n + i; u--) c[u] -= c[u - (n + i)]; /* times (1 - q^(n+i)) */
        for (int u = i; u <= mn; u++) c[u] += c[u - i];           /* over (1 - q^i) */
    }
    double total = 0;
    for (int u = 0; u <= mn; u++) total += c[u];
    double run = 0;
    for (int u = 0; u <= mn; u++) run += c[u], c[u] = run / total;
}

int stats_hodges_lehmann(const double *x, int m, const double *y, int n, double level,
                         struct stats_shift *out) {
    *out = (struct stats_shift){NAN, NAN, NAN, 0, false};
    if (m < 1 || n < 1) return -1;
    const int mn = m * n;
    double *d = malloc(sizeof *d * (size_t)mn);
    if (!d) return -1;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) d[i * n + j] = y[j] - x[i];
    qsort(d, (size_t)mn, sizeof *d, cmp_double);
    out->est = mn % 2 ? d[mn / 2] : 0.5 * (d[mn / 2 - 1] + d[mn / 2]);
    /* the interval [D_(k), D_(mn+1-k)] covers 1 - 2 P(U <= k - 1); k = 1 is [min, max] */
    int k = 1;
    double alpha = 1 - level;
    if (m + n <= STATS_EXACT_MAX_N) {
        double *cdf = malloc(sizeof *cdf * (size_t)(mn + 1));
        if (!cdf) {
            free(d);
            return -1;
        }
        u_null_cdf(m, n, cdf);
        while (k + 1 <= (mn + 1) / 2 && cdf[k] <= alpha / 2) k++;
        out->level = 1 - 2 * cdf[k - 1];
        out->exact = true;
        free(cdf);
    } else {
        double z = stats_normal_upper(alpha / 2);
        k = (int)floor(0.5 * mn - z * sqrt(mn * (m + n + 1.0) / 12.0));
        if (k < 1) k = 1;
        out->level = level;
    }
    out->lo = d[k - 1];
    out->hi = d[mn - k];
    free(d);
    return 0;
}

struct p_index {
    double p;
    int i;
};

static int cmp_p(const void *a, const void *b) {
    const struct p_index *x = a, *y = b;
    return (x->p > y->p) - (x->p < y->p);
}

void stats_holm(const double *p, int n, double *adj) {
    struct p_index *s = malloc(sizeof *s * (size_t)(n > 0 ? n : 1));
    if (!s) { /* no room to sort: Bonferroni, which Holm never exceeds, keeps the family's error bound */
        for (int i = 0; i < n; i++) adj[i] = isnan(p[i]) ? NAN : fmin(1, p[i] * n);
        return;
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(p[i])) s[k++] = (struct p_index){p[i], i};
    for (int i = 0; i < n; i++)
        if (isnan(p[i])) adj[i] = NAN;
    qsort(s, (size_t)k, sizeof *s, cmp_p);
    double run = 0;
    for (int r = 0; r < k; r++) {
        double a = fmin(1, s[r].p * (k - r));
        run = fmax(run, a); /* step-down: an adjusted p never falls below the one before it */
        adj[s[r].i] = run;
    }
    free(s);
}

const char *stats_verdict_name(enum stats_verdict v) {
    switch (v) {
    case STATS_NO_CHANGE:
        return "no change";
    case STATS_FASTER:
        return "faster";
    case STATS_SLOWER:
        return "slower";
    default:
        return "inconclusive";
    }
}

enum stats_verdict stats_verdict(double ratio, double lo, double hi, double p_adj, double alpha,
                                 double threshold) {
    if (!(ratio > 0) || !(lo > 0) || !(hi > 0)) return STATS_INCONCLUSIVE;
    const bool significant = p_adj < alpha;
    if (significant && hi < 1 && ratio <= 1 - threshold) return STATS_FASTER;
    if (significant && lo > 1 && ratio >= 1 + threshold) return STATS_SLOWER;
    if (lo > 1 - threshold && hi < 1 + threshold) return STATS_NO_CHANGE;
    return STATS_INCONCLUSIVE;
}

double stats_growth_to_decide(double ratio, double lo, double hi, double threshold) {
    if (!(ratio > 0) || !(lo > 0) || !(hi > 0)) return INFINITY;
    const double c = log(ratio), hw = 0.5 * (log(hi) - log(lo));
    const double band_lo = log(1 - threshold), band_hi = log(1 + threshold);
    /* inside the band: the interval must shrink to fit; beyond it: to clear 1 */
    double room = c > band_lo && c < band_hi ? fmin(c - band_lo, band_hi - c) : fabs(c);
    if (!(room > 0)) return INFINITY;
    double f = (hw / room) * (hw / room);
    return f > 1 ? f : 1;
}

double stats_growth_to_significance(double p, double p_needed) {
    if (!(p < 1) || !(p_needed > 0)) return INFINITY;
    if (p <= p_needed) return 1;
    double z = stats_normal_upper(p / 2), need = stats_normal_upper(p_needed / 2);
    return z > 0 ? (need / z) * (need / z) : INFINITY;
}
