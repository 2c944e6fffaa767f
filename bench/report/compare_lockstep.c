/* The lockstep rows of compare_lockstep.h: each round's repetitions of the row paired by their order, after
 * checking in the monotonic clock that they alternate. */
#include "bench/report/compare_lockstep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/stats.h"

/* The row's samples of a run, in order, into idx (at most max); returns their count. */
static int run_row(const struct compare_lockstep_run *run, const char *key, int *idx, int max) {
    int m = 0;
    for (int i = 0; i < run->n && m < max; i++)
        if (strcmp(run->s[i].row, key) == 0) idx[m++] = i;
    return m;
}

/* Whether a's and b's repetitions alternate in time, whichever side began. */
static bool alternate(const struct sample *const *a, const struct sample *const *b, int n) {
    if (n < 1) return false;
    bool a_first = a[0]->mono_ns < b[0]->mono_ns;
    const struct sample *const *x = a_first ? a : b, *const *y = a_first ? b : a;
    for (int i = 0; i < n; i++) {
        if (!(x[i]->mono_ns > 0 && x[i]->mono_ns < y[i]->mono_ns)) return false;
        if (i + 1 < n && !(y[i]->mono_ns < x[i + 1]->mono_ns)) return false;
    }
    return true;
}

/* One round: -1 out of memory, 0 not in lockstep, 1 in lockstep (values set), 2 the row is missing. */
static int round_values(const struct compare_lockstep_run *ra, const struct compare_lockstep_run *rb,
                        const char *key, double beta, double *raw, double *norm, int *pairs) {
    int cap = ra->n + rb->n + 1;
    int *idx = malloc(sizeof *idx * (size_t)cap);
    const struct sample **s = malloc(sizeof *s * (size_t)cap);
    double *v = malloc(sizeof *v * (size_t)cap * 2);
    int rc = -1;
    if (!idx || !s || !v) goto out;
    int na = run_row(ra, key, idx, cap), nb = run_row(rb, key, idx + na, cap - na);
    rc = 2;
    if (na == 0 || nb == 0) goto out;
    rc = 0;
    if (na != nb) goto out;
    for (int i = 0; i < na; i++) s[i] = &ra->s[idx[i]], s[na + i] = &rb->s[idx[na + i]];
    if (!alternate(s, s + na, na)) goto out;
    int clean = 0;
    for (int i = 0; i < na; i++) clean += !s[i]->disturbed && !s[na + i]->disturbed;
    bool drop = clean >= 3, reads = true;
    int m = 0;
    double *w = v + cap;
    for (int i = 0; i < na; i++) {
        const struct sample *a = s[i], *b = s[na + i];
        if (!(a->time_s > 0 && b->time_s > 0) || (drop && (a->disturbed || b->disturbed))) continue;
        v[m] = log(b->time_s / a->time_s);
        reads &= a->paired_read_gbs > 0 && b->paired_read_gbs > 0;
        w[m] = reads ? v[m] + beta * log(b->paired_read_gbs / a->paired_read_gbs) : NAN;
        m++;
    }
    if (m == 0) goto out;
    *raw = stats_median(v, m);
    *norm = reads ? stats_median(w, m) : NAN;
    *pairs += m;
    rc = 1;
out:
    free(v);
    free(s);
    free(idx);
    return rc;
}

int compare_lockstep_row(const struct compare_lockstep_run *a, const struct compare_lockstep_run *b,
                         int n_rounds, const char *key, double beta, struct compare_lockstep_row *out) {
    *out = (struct compare_lockstep_row){0};
    if (n_rounds > COMPARE_LOCKSTEP_MAX_ROUNDS) n_rounds = COMPARE_LOCKSTEP_MAX_ROUNDS;
    for (int i = 0; i < n_rounds; i++) {
        int rc = round_values(&a[i], &b[i], key, beta, &out->raw[out->rounds], &out->norm[out->rounds],
                              &out->pairs);
        if (rc < 0) return -1;
        if (rc == 0) return 0;
        out->rounds += rc == 1;
    }
    return out->rounds > 0;
}
