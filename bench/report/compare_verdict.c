/* The compare's verdict per row from the raw repetitions (see compare_verdict.h). Checked in
 * tests/test_compare_verdict.c: synthetic sides 5 % apart are called slower, the same distribution gets no
 * faster/slower, the paired read's normalisation cancels a machine that got busier, old runs without
 * samples fall back to their medians, and the rows' order puts the headline rows first. */
#include "bench/report/compare_verdict.h"

#include "bench/report/compare_lockstep.h"

#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/blocks.h"
#include "roofline/stats_paired.h"

void compare_key_block(const struct run_report *r, int i, char *key, size_t len) {
    snprintf(key, len, "block:%s@%ld", r->blocks[i].name, r->blocks_context);
}

void compare_key_step(const struct run_report *r, int i, char *key, size_t len) {
    snprintf(key, len, "step@%ld", r->steps[i].context);
}

void compare_key_sampler(const struct run_report *r, int i, char *key, size_t len) {
    const struct report_sampler *s = &r->sampler[i];
    snprintf(key, len, "sampler:%s%s@%ld", s->variant, strcmp(s->row_kind, "flat") == 0 ? ".flat" : "",
             s->vocab);
}

void compare_key_batch(const struct run_report *r, int i, char *key, size_t len) {
    const struct report_batch *b = &r->batch[i];
    bool forge = strcmp(b->backend, "forge") == 0;
    snprintf(key, len, "batch:%ld@%ld%s%s", b->batch, b->context, forge ? "" : ":", forge ? "" : b->backend);
}

int compare_key_prefill_of(long prompt_len, long depth, char *key, size_t len) {
    return depth > 0 ? snprintf(key, len, "pp@%ld+%ld", prompt_len, depth)
                     : snprintf(key, len, "pp@%ld", prompt_len);
}

void compare_key_prefill(const struct run_report *r, int i, char *key, size_t len) {
    compare_key_prefill_of(r->prefill[i].prompt_len, r->prefill[i].depth, key, len);
}

bool compare_prefill_row(const struct run_report *r, int i) {
    return strcmp(r->prefill[i].block, "prefill") == 0;
}

/* one sample standing for a whole run: its median and the read paired with it */
static void add_median(struct sample_set *set, const char *key, const struct timing_stats *t, double read_gbs,
                       int threads) {
    if (!(t->median_s > 0)) return;
    samples_begin_row(set, 0, threads, "%s", key);
    samples_append(set, 0, t->median_s, NAN, false, 0);
    if (set->n > 0 && !set->failed) set->s[set->n - 1].paired_read_gbs = read_gbs > 0 ? read_gbs : NAN;
}

static void samples_from_medians(const struct run_report *r, struct sample_set *set) {
    char key[SAMPLES_ROW_LEN];
    int th = r->prov.threads > 0 ? r->prov.threads : 1;
    for (int i = 0; i < r->n_blocks; i++) {
        compare_key_block(r, i, key, sizeof key);
        add_median(set, key, &r->blocks[i].measured, r->blocks[i].paired_read_gbs, th);
    }
    for (int i = 0; i < r->n_steps; i++) {
        compare_key_step(r, i, key, sizeof key);
        add_median(set, key, &r->steps[i].measured, r->steps[i].paired_read_gbs, th);
    }
    for (int i = 0; i < r->n_sampler; i++) {
        compare_key_sampler(r, i, key, sizeof key);
        add_median(set, key, &r->sampler[i].measured, NAN, th);
    }
    for (int i = 0; i < r->n_batch; i++) {
        compare_key_batch(r, i, key, sizeof key);
        add_median(set, key, &r->batch[i].measured, r->batch[i].paired_read_gbs, th);
    }
    for (int i = 0; i < r->n_prefill; i++) {
        if (!compare_prefill_row(r, i)) continue;
        compare_key_prefill(r, i, key, sizeof key);
        add_median(set, key, &r->prefill[i].measured, NAN, th);
    }
}

int compare_side_begin_run(struct compare_side *side, long long utc_s) {
    if (side->runs >= COMPARE_SIDE_MAX_RUNS) return -1;
    if (side->marked == side->runs) side->marked++;
    side->run[side->runs++] = (struct compare_run){side->samples.n, utc_s};
    return 0;
}

/* run.json's "20261204T223947Z" in seconds since the epoch; -1 when it does not parse */
static long long utc_seconds(const char *stamp) {
    struct tm tm = {0};
    char z = 0;
    if (sscanf(stamp, "%4d%2d%2dT%2d%2d%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
               &tm.tm_sec, &z) != 7 ||
        z != 'Z')
        return -1;
    tm.tm_year -= 1900, tm.tm_mon -= 1;
    time_t t = timegm(&tm);
    return t == (time_t)-1 ? -1 : (long long)t;
}

int compare_side_add(struct compare_side *side, const char *run_path, const struct run_report *r,
                     struct fr_err *err) {
    char dir[2048], path[2100];
    snprintf(dir, sizeof dir, "%s", run_path);
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') dir[--n] = '\0';
    if (n >= 8 && strcmp(dir + n - 8, "run.json") == 0) {
        char copy[2048];
        memcpy(copy, dir, sizeof copy);
        snprintf(dir, sizeof dir, "%s", dirname(copy));
    }
    snprintf(path, sizeof path, "%s/%s", dir, SAMPLES_FILE);
    if (compare_side_begin_run(side, utc_seconds(r->prov.utc_stamp)) != 0)
        return fr_err_set(err, "more than %d runs on one side", COMPARE_SIDE_MAX_RUNS);
    int rc = samples_read_csv(path, &side->samples, err);
    if (rc < 0) return -1;
    if (rc == 1) { /* an older run: its medians, one sample per row */
        side->runs_without_samples++;
        samples_from_medians(r, &side->samples);
    }
    if (side->samples.failed) return fr_err_set(err, "out of memory reading the samples of %s", run_path);
    return 0;
}

void compare_side_free(struct compare_side *side) {
    samples_free(&side->samples);
    *side = (struct compare_side){0};
}

/* A row's times and reads on one side, disturbed repetitions left out while at least 3 clean ones stay. */
struct row_data {
    double *t, *g;      /* [n] */
    int *run;           /* [n] which run each kept sample came from, 0 .. slots - 1 */
    int n, runs;        /* kept samples; runs with samples of the row */
    int slots;          /* the side's runs where they were begun with compare_side_begin_run, else runs */
    bool all_read;      /* every kept sample has its paired read */
    int disturbed_kept; /* disturbed samples kept because fewer than 3 clean ones stayed */
};

static void row_data_free(struct row_data *d) {
    free(d->t);
    free(d->g);
    free(d->run);
    d->t = d->g = NULL;
    d->run = NULL;
}

/* The run sample i of the side belongs to, where every run was begun with compare_side_begin_run. */
static int run_of(const struct compare_side *side, int i) {
    int k = side->runs - 1;
    while (k > 0 && side->run[k].first > i) k--;
    return k;
}

static int row_data_get(const struct compare_side *side, const char *key, struct row_data *d) {
    const struct sample_set *set = &side->samples;
    *d = (struct row_data){0};
    int total = samples_find_row(set, key, NULL, 0);
    if (total == 0) return 0;
    int *idx = malloc(sizeof *idx * (size_t)total);
    d->t = malloc(sizeof *d->t * (size_t)total);
    d->g = malloc(sizeof *d->g * (size_t)total);
    d->run = malloc(sizeof *d->run * (size_t)total);
    if (!idx || !d->t || !d->g || !d->run) {
        free(idx);
        row_data_free(d);
        return -1;
    }
    samples_find_row(set, key, idx, total);
    int clean = 0;
    for (int i = 0; i < total; i++) clean += !set->s[idx[i]].disturbed && set->s[idx[i]].time_s > 0;
    bool drop = clean >= 3, marked = side->runs > 0 && side->marked == side->runs;
    d->all_read = true;
    for (int i = 0, last = -1; i < total; i++) {
        const struct sample *s = &set->s[idx[i]];
        /* without marks, each run's row starts at rep 0 */
        int r = marked ? run_of(side, idx[i]) : d->slots - (i > 0 && s->rep > set->s[idx[i - 1]].rep);
        d->slots = marked ? side->runs : r + 1;
        d->runs += r != last, last = r;
        if (!(s->time_s > 0) || (drop && s->disturbed)) continue;
        d->disturbed_kept += s->disturbed;
        d->run[d->n] = r;
        d->t[d->n] = s->time_s, d->g[d->n] = s->paired_read_gbs;
        d->all_read &= isfinite(s->paired_read_gbs);
        d->n++;
    }
    free(idx);
    return 0;
}

/* log(t) or, normalised, log(t) + beta log(g) into out[n] */
static void logs(const struct row_data *d, double beta, double *out) {
    for (int i = 0; i < d->n; i++) out[i] = log(d->t[i]) + (beta != 0 ? beta * log(d->g[i]) : 0.0);
}

/* How much of the read's speed the row's time follows: minus the slope of log time on log read, the
 * Theil-Sen median of the slopes between pairs of repetitions of the same side (so the change under test
 * does not enter it) whose reads differ by 5 % or more, held to [0, 1]. Why: on the shared VMs the read
 * moves 34-66 GB/s between runs while a step's time moves about 0.75 as much, so time x read
 * over-corrects; the median, because a read now and then disagrees with its repetition (29 GB/s beside a
 * fast step). With fewer than 10 such pairs the reads vary too little to fit: 1, time x read. */
static double read_elasticity(const struct row_data *a, const struct row_data *b) {
    const struct row_data *side[2] = {a, b};
    size_t cap = 0;
    for (int k = 0; k < 2; k++) cap += (size_t)side[k]->n * (size_t)(side[k]->n - 1) / 2;
    double *slope = cap ? malloc(sizeof *slope * cap) : NULL;
    if (!slope) return 1.0;
    size_t m = 0;
    for (int k = 0; k < 2; k++) {
        const struct row_data *d = side[k];
        for (int i = 0; i < d->n; i++)
            for (int j = i + 1; j < d->n; j++) {
                double dx = log(d->g[j] / d->g[i]);
                if (fabs(dx) >= log(1.05)) slope[m++] = log(d->t[j] / d->t[i]) / dx;
            }
    }
    double beta = 1.0;
    if (m >= 10) beta = fmin(1.0, fmax(0.0, -stats_median(slope, (int)m))); /* log t falls as log g rises */
    free(slope);
    return beta;
}

/* Each run's median of v (v[i] from run d->run[i]) into med[d->slots], NaN for a run without samples of the
 * row. work[n] is scratch. */
static void run_medians(const struct row_data *d, const double *v, double *work, double *med) {
    for (int r = 0; r < d->slots; r++) {
        int m = 0;
        for (int i = 0; i < d->n; i++)
            if (d->run[i] == r) work[m++] = v[i];
        med[r] = m > 0 ? stats_median(work, m) : NAN;
    }
}

/* the finite values of v[n] moved to its front; returns their count */
static int finite_front(double *v, int n) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) v[k++] = v[i];
    return k;
}

/* The rounds whose runs of A and B were paired: a[i] and b[i] are the run indexes of the i-th round. */
struct run_pairs {
    int n;
    int a[COMPARE_SIDE_MAX_RUNS], b[COMPARE_SIDE_MAX_RUNS];
};

/* One way of looking at a row (raw or normalised): the ratio, its interval and Mann-Whitney's p on the
 * repetitions, and the run-level p (the run as the unit: repetitions of one run share its machine state). */
struct view {
    double r, lo, hi, level, p, p_runs;
    int pairs;                   /* rounds with the row in both runs; 0 unpaired */
    double p_pair_t, p_pair_wsr; /* the paired tests on those rounds; NaN unpaired */
};

static int judge(const struct row_data *a, const struct row_data *b, double beta, const struct run_pairs *pr,
                 struct view *out) {
    *out = (struct view){NAN, NAN, NAN, 0, NAN, 1, 0, NAN, NAN};
    size_t n = (size_t)a->n + (size_t)b->n, slots = (size_t)a->slots + (size_t)b->slots;
    double *x = malloc(sizeof *x * (2 * n + 2 * slots + (size_t)pr->n));
    if (!x) return -1;
    double *y = x + a->n, *work = x + n, *med_a = x + 2 * n, *med_b = med_a + a->slots,
           *both = med_b + b->slots, *diff = both + slots;
    logs(a, beta, x);
    logs(b, beta, y);
    struct stats_shift s;
    struct stats_mw mw, mr;
    run_medians(a, x, work, med_a);
    run_medians(b, y, work, med_b);
    int rc =
        stats_hodges_lehmann(x, a->n, y, b->n, COMPARE_LEVEL, &s) | stats_mann_whitney(x, a->n, y, b->n, &mw);
    memcpy(both, med_a, sizeof *both * (size_t)a->slots);
    memcpy(both + a->slots, med_b, sizeof *both * (size_t)b->slots);
    int ra = finite_front(both, a->slots), rb = finite_front(both + a->slots, b->slots);
    memmove(both + ra, both + a->slots, sizeof *both * (size_t)rb);
    stats_mann_whitney(both, ra, both + ra, rb, &mr); /* p = 1 when a side has no run */
    out->p = mw.p, out->p_runs = mr.p;
    /* paired: each round's difference of the runs' medians, rounds where both runs have the row */
    int k = 0;
    for (int i = 0; i < pr->n; i++)
        if (pr->a[i] < a->slots && pr->b[i] < b->slots && isfinite(med_a[pr->a[i]]) &&
            isfinite(med_b[pr->b[i]]))
            diff[k++] = med_b[pr->b[i]] - med_a[pr->a[i]];
    if (pr->n > 0 && k >= 2) {
        struct stats_paired t, w;
        stats_paired_t(diff, k, &t);
        stats_signed_rank(diff, k, &w);
        out->p_pair_t = t.p, out->p_pair_wsr = w.p, out->pairs = k;
    }
    free(x);
    if (rc) return -1;
    out->r = exp(s.est), out->lo = exp(s.lo), out->hi = exp(s.hi), out->level = s.level;
    return 0;
}

_Static_assert(COMPARE_LOCKSTEP_MAX_ROUNDS == COMPARE_SIDE_MAX_RUNS, "a round for every run a side");

/* Run k's samples of the side, begun with compare_side_begin_run. */
static struct compare_lockstep_run side_run(const struct compare_side *side, int k) {
    int end = k + 1 < side->runs ? side->run[k + 1].first : side->samples.n;
    return (struct compare_lockstep_run){side->samples.s + side->run[k].first, end - side->run[k].first};
}

/* exp(mean of v[n]) and Student's interval into r, lo, hi (NaN interval below 2 values) */
static void mean_ratio(const double *v, int n, double *r, double *lo, double *hi) {
    double sum = 0;
    for (int i = 0; i < n; i++) sum += v[i];
    *r = exp(sum / n);
    stats_t_interval(v, n, COMPARE_LEVEL, lo, hi);
    *lo = exp(*lo), *hi = exp(*hi);
}

/* A row in lockstep: its verdict rests on the rounds' raw paired differences (compare_lockstep.h); the
 * round is the unit of both the interval and the test, so the run test is the same t test. */
static void judge_lockstep(const struct compare_lockstep_row *ls, struct compare_row_verdict *w) {
    int n = ls->rounds;
    w->lockstep = true, w->on_norm = false;
    mean_ratio(ls->raw, n, &w->raw, &w->raw_lo, &w->raw_hi);
    w->level = n >= 2 ? COMPARE_LEVEL : 0; /* one round: no interval, so no verdict */
    bool norm = true;
    for (int i = 0; i < n; i++) norm &= isfinite(ls->norm[i]);
    if (norm)
        mean_ratio(ls->norm, n, &w->norm, &w->norm_lo, &w->norm_hi);
    else
        w->norm = w->norm_lo = w->norm_hi = NAN;
    struct stats_paired t = {.p = 1}, sr = {.p = 1};
    if (n >= 2) stats_paired_t(ls->raw, n, &t);
    stats_signed_rank(ls->raw, n, &sr);
    w->p = w->p_runs = w->p_pair_t = t.p;
    w->p_pair_wsr = sr.p;
    w->run_pairs = n;
}

static bool row_memory_bound(const struct run_report *r, char kind, int i) {
    if (kind == 's') return true;
    if (kind == 'b') {
        const struct block_desc *d = block_by_name(r->blocks[i].name);
        return d && (d->reads_weights || d->id == BLOCK_ATTENTION);
    }
    if (kind == 'x') return r->batch[i].memory_roof_s >= r->batch[i].compute_roof_s;
    return false;
}

static int add_row(const struct run_report *a, char kind, int i, const struct compare_side *sa,
                   const struct compare_side *sb, const struct run_pairs *pr, const struct compare_opts *o,
                   struct compare_verdicts *v) {
    struct compare_row_verdict *w = &v->rows[v->n];
    *w = (struct compare_row_verdict){
        .norm = NAN, .norm_lo = NAN, .norm_hi = NAN, .beta = NAN, .more_runs = NAN};
    void (*key_of)(const struct run_report *, int, char *, size_t) = kind == 'b'   ? compare_key_block
                                                                     : kind == 's' ? compare_key_step
                                                                     : kind == 'p' ? compare_key_sampler
                                                                     : kind == 'q' ? compare_key_prefill
                                                                                   : compare_key_batch;
    key_of(a, i, w->key, sizeof w->key);
    /* prompt processing's pp rows are headline figures beside the decode steps (llama-bench's pp and tg) */
    w->headline = kind == 's' || kind == 'q' || strcmp(w->key, COMPARE_HEADLINE_SAMPLER) == 0;
    w->memory_bound = row_memory_bound(a, kind, i);
    struct row_data da, db;
    int rc = 0;
    if (row_data_get(sa, w->key, &da) != 0) return -1;
    if (row_data_get(sb, w->key, &db) != 0) {
        row_data_free(&da);
        return -1;
    }
    if (da.n > 0 && db.n > 0) {
        struct view raw, norm = {0};
        rc = judge(&da, &db, 0, pr, &raw);
        w->raw = raw.r, w->raw_lo = raw.lo, w->raw_hi = raw.hi, w->level = raw.level;
        if (rc == 0 && w->memory_bound && da.all_read && db.all_read) {
            w->beta = read_elasticity(&da, &db);
            rc = judge(&da, &db, w->beta, pr, &norm);
            w->norm = norm.r, w->norm_lo = norm.lo, w->norm_hi = norm.hi;
        }
        w->on_norm = !o->raw && isfinite(w->norm);
        const struct view *on = w->on_norm ? &norm : &raw;
        w->p = on->p, w->p_runs = on->p_runs, w->run_pairs = on->pairs;
        w->p_pair_t = on->p_pair_t, w->p_pair_wsr = on->p_pair_wsr;
        w->n_a = da.n, w->n_b = db.n;
        w->disturbed_a = da.disturbed_kept, w->disturbed_b = db.disturbed_kept;
        w->runs_a = da.runs, w->runs_b = db.runs;
        if (rc == 0 && pr->n > 0) {
            struct compare_lockstep_row ls;
            struct compare_lockstep_run ra[COMPARE_SIDE_MAX_RUNS], rb[COMPARE_SIDE_MAX_RUNS];
            for (int k = 0; k < pr->n; k++) ra[k] = side_run(sa, pr->a[k]), rb[k] = side_run(sb, pr->b[k]);
            int lr = compare_lockstep_row(ra, rb, pr->n, w->key, isfinite(w->beta) ? w->beta : 0, &ls);
            if (lr < 0) rc = -1;
            if (lr == 1) judge_lockstep(&ls, w);
            v->lockstep_rows += lr == 1;
        }
        if (rc == 0) v->n++;
    }
    row_data_free(&da);
    row_data_free(&db);
    return rc;
}

/* A lockstep row's rounds to add: the first count whose Student interval (the rounds' spread as now, t on
 * one degree of freedom fewer than rounds) would put the estimate clear of 1 beyond the threshold at
 * alpha_row, or inside the threshold band; the interval's width on few rounds is mostly t's (12.7 at one
 * degree of freedom, 3.2 at three), which the runs rule of unpaired rows does not model. INFINITY when the
 * estimate sits on the threshold. */
static double lockstep_more_rounds(const struct compare_row_verdict *w, double threshold, double alpha_row) {
    int n = w->run_pairs;
    double m = log(w->raw), band = log1p(threshold);
    double sd = (log(w->raw_hi) - log(w->raw_lo)) / 2 / stats_t_critical(1 - COMPARE_LEVEL, n - 1) * sqrt(n);
    if (!(sd >= 0) || !isfinite(m)) return INFINITY;
    for (int k = n + 1; k <= n + COMPARE_MORE_RUNS_MAX; k++) {
        double half = fmax(stats_t_critical(1 - COMPARE_LEVEL, k - 1), stats_t_critical(alpha_row, k - 1)) *
                      sd / sqrt(k);
        if (fabs(m) + half < band || (fabs(m) >= band && fabs(m) - half > 0)) return k - n;
    }
    return INFINITY;
}

/* Holm within the headline rows and, apart, within the rest; then each row's verdict. */
static void decide(struct compare_verdicts *v) {
    double p[COMPARE_MAX_ROWS], adj[COMPARE_MAX_ROWS];
    for (int fam = 0; fam < 2; fam++) {
        for (int i = 0; i < v->n; i++) p[i] = v->rows[i].headline == (fam == 0) ? v->rows[i].p : NAN;
        stats_holm(p, v->n, adj);
        for (int i = 0; i < v->n; i++)
            if (v->rows[i].headline == (fam == 0)) v->rows[i].p_adj = adj[i];
    }
    const double t = v->opts.threshold;
    int runs = v->runs_a > v->runs_b ? v->runs_a : v->runs_b, family[2] = {0, 0};
    for (int i = 0; i < v->n; i++) family[v->rows[i].headline ? 0 : 1] += isfinite(v->rows[i].p);
    for (int i = 0; i < v->n; i++) {
        struct compare_row_verdict *w = &v->rows[i];
        double r = w->on_norm ? w->norm : w->raw, lo = w->on_norm ? w->norm_lo : w->raw_lo,
               hi = w->on_norm ? w->norm_hi : w->raw_hi;
        /* an interval that cannot reach the level (3 and 3 samples reach 0.90 at best) decides nothing */
        w->verdict = w->level >= COMPARE_LEVEL ? stats_verdict(r, lo, hi, w->p_adj, COMPARE_ALPHA, t)
                                               : STATS_INCONCLUSIVE;
        /* repetitions of one run share its machine state, so they are not independent: faster or slower
         * also needs the runs' medians to differ (Mann-Whitney on them, p < alpha: 4 runs a side at least) */
        if ((w->verdict == STATS_FASTER || w->verdict == STATS_SLOWER) && !(w->p_runs < COMPARE_ALPHA))
            w->verdict = STATS_INCONCLUSIVE;
        /* a side whose figure rests on disturbed repetitions (too few clean) measured the load, not the
         * build: nothing is decided on it, and no count of runs would change that */
        if (w->disturbed_a > 0 || w->disturbed_b > 0) {
            w->verdict = STATS_INCONCLUSIVE;
            continue;
        }
        if (w->verdict != STATS_INCONCLUSIVE) continue;
        /* the interval must narrow enough and, for an estimate beyond the threshold, p must reach alpha
         * over its family (Holm's strictest step, alpha / family size) */
        double f = stats_growth_to_decide(r, lo, hi, t);
        if (r <= 1 - t || r >= 1 + t) {
            int k = family[w->headline ? 0 : 1];
            f = fmax(f, stats_growth_to_significance(w->p, COMPARE_ALPHA / (k > 0 ? k : 1)));
        }
        if (w->level < COMPARE_LEVEL) /* 4 and 4 samples are the fewest whose interval reaches 95 % */
            f = fmax(f, 4.0 / (w->n_a < w->n_b ? w->n_a : w->n_b));
        if (r <= 1 - t || r >= 1 + t) { /* and 4 runs a side at least, their medians apart */
            int fewest = w->runs_a < w->runs_b ? w->runs_a : w->runs_b;
            f = fmax(f, fewest < 4 ? 4.0 / (fewest > 0 ? fewest : 1)
                                   : stats_growth_to_significance(w->p_runs, COMPARE_ALPHA));
        }
        double more = ceil((runs > 0 ? runs : 1) * (f - 1));
        if (w->lockstep && w->run_pairs >= 2)
            more = lockstep_more_rounds(w, t, COMPARE_ALPHA / family[w->headline ? 0 : 1]);
        w->more_runs = isfinite(more) && more <= COMPARE_MORE_RUNS_MAX ? (more < 1 ? 1 : more) : INFINITY;
    }
}

/* A run's place in time: its UTC start, and within the same second the clock of its first sample (0 when
 * no sample has one). */
struct run_time {
    long long utc_s, mono_ns;
    int side, k;
};

static int cmp_run_time(const void *x, const void *y) {
    const struct run_time *a = x, *b = y;
    if (a->utc_s != b->utc_s) return (a->utc_s > b->utc_s) - (a->utc_s < b->utc_s);
    return (a->mono_ns > b->mono_ns) - (a->mono_ns < b->mono_ns);
}

static long long run_first_mono(const struct compare_side *side, int k) {
    const struct compare_lockstep_run run = side_run(side, k);
    long long first = 0;
    for (int i = 0; i < run.n; i++) {
        long long t = run.s[i].mono_ns;
        if (t > 0 && (first == 0 || t < first)) first = t;
    }
    return first;
}

/* Pairs the i-th run of A with the i-th run of B when the runs were made in rounds: as many on each side,
 * their start times known, and in time order each consecutive two one of A and one of B (A B B A ...).
 * Otherwise no pairs, and why into why_not. */
static void pair_runs(const struct compare_side *sa, const struct compare_side *sb, struct run_pairs *pr,
                      char *why_not, size_t len) {
    pr->n = 0;
    why_not[0] = '\0';
    const struct compare_side *side[2] = {sa, sb};
    if (sa->runs != sb->runs) {
        snprintf(why_not, len, "A has %d run%s and B %d", sa->runs, sa->runs == 1 ? "" : "s", sb->runs);
        return;
    }
    if (sa->runs < 2) {
        snprintf(why_not, len, "one run a side");
        return;
    }
    struct run_time t[2 * COMPARE_SIDE_MAX_RUNS];
    int n = 0;
    for (int s = 0; s < 2; s++) {
        if (side[s]->marked != side[s]->runs) {
            snprintf(why_not, len, "their start times are unknown");
            return;
        }
        for (int k = 0; k < side[s]->runs; k++) {
            t[n++] = (struct run_time){side[s]->run[k].utc_s, run_first_mono(side[s], k), s, k};
            if (t[n - 1].utc_s < 0) {
                snprintf(why_not, len, "a run's start time (run.json's UTC stamp) is unknown");
                return;
            }
        }
    }
    qsort(t, (size_t)n, sizeof *t, cmp_run_time);
    for (int i = 0; i + 1 < n; i++)
        if (cmp_run_time(&t[i], &t[i + 1]) == 0) {
            snprintf(why_not, len, "two runs started in the same second and no samples order them");
            return;
        }
    for (int i = 0; i < n; i += 2)
        if (t[i].side == t[i + 1].side) {
            snprintf(why_not, len,
                     "they were not made in rounds: in time order, runs %d and %d are both %s's", i + 1,
                     i + 2, t[i].side ? "B" : "A");
            return;
        }
    for (int i = 0; i < n; i += 2) {
        int ia = t[i].side == 0 ? i : i + 1;
        pr->a[pr->n] = t[ia].k, pr->b[pr->n] = t[ia ^ 1].k; /* i is even: ia ^ 1 is the other of the two */
        pr->n++;
    }
}

int compare_verdicts_compute(const struct run_report *a, const struct compare_side *sa,
                             const struct compare_side *sb, const struct compare_opts *o,
                             struct compare_verdicts *out, struct fr_err *err) {
    out->opts = *o;
    out->n = 0;
    out->runs_a = sa->runs, out->runs_b = sb->runs;
    out->fallback_a = sa->runs_without_samples, out->fallback_b = sb->runs_without_samples;
    int rc = 0;
    struct run_pairs pr;
    pair_runs(sa, sb, &pr, out->pairing, sizeof out->pairing);
    out->pairs = pr.n;
    out->lockstep_rows = 0;
    /* headline rows first: every step, then the sampler's chain at V = 151,936 */
    for (int i = 0; i < a->n_steps && !rc; i++) rc = add_row(a, 's', i, sa, sb, &pr, o, out);
    for (int i = 0; i < a->n_prefill && !rc; i++)
        if (compare_prefill_row(a, i)) rc = add_row(a, 'q', i, sa, sb, &pr, o, out);
    char key[SAMPLES_ROW_LEN];
    for (int i = 0; i < a->n_sampler && !rc; i++) {
        compare_key_sampler(a, i, key, sizeof key);
        if (strcmp(key, COMPARE_HEADLINE_SAMPLER) == 0) rc = add_row(a, 'p', i, sa, sb, &pr, o, out);
    }
    for (int i = 0; i < a->n_blocks && !rc; i++) rc = add_row(a, 'b', i, sa, sb, &pr, o, out);
    for (int i = 0; i < a->n_sampler && !rc; i++) {
        compare_key_sampler(a, i, key, sizeof key);
        if (strcmp(key, COMPARE_HEADLINE_SAMPLER) != 0) rc = add_row(a, 'p', i, sa, sb, &pr, o, out);
    }
    for (int i = 0; i < a->n_batch && !rc; i++) rc = add_row(a, 'x', i, sa, sb, &pr, o, out);
    if (rc) return fr_err_set(err, "out of memory deciding the rows");
    decide(out);
    return 0;
}

const struct compare_row_verdict *compare_verdicts_find(const struct compare_verdicts *v, const char *key) {
    for (int i = 0; i < v->n; i++)
        if (strcmp(v->rows[i].key, key) == 0) return &v->rows[i];
    return NULL;
}

int compare_verdicts_slower_headlines(const struct compare_verdicts *v) {
    int n = 0;
    for (int i = 0; i < v->n; i++) n += v->rows[i].headline && v->rows[i].verdict == STATS_SLOWER;
    return n;
}

static void fmt_ratio(double r, double lo, double hi, char *out, size_t len) {
    if (isfinite(r))
        snprintf(out, len, "%.3f [%.3f, %.3f]", r, lo, hi);
    else
        snprintf(out, len, "n/a");
}

static void verdict_words(const struct compare_row_verdict *w, char *out, size_t len) {
    const char *name = stats_verdict_name(w->verdict);
    if (w->disturbed_a > 0 || w->disturbed_b > 0)
        snprintf(out, len, "%s (disturbed repetitions kept, too few clean: %d in A, %d in B)", name,
                 w->disturbed_a, w->disturbed_b);
    else if (w->verdict == STATS_SLOWER || w->verdict == STATS_FASTER)
        snprintf(out, len, "**%s**", name);
    else if (w->verdict == STATS_INCONCLUSIVE && w->headline && isinf(w->more_runs))
        snprintf(out, len, "%s (more than %d more runs each would be needed)", name, COMPARE_MORE_RUNS_MAX);
    else if (w->verdict == STATS_INCONCLUSIVE && w->headline && isfinite(w->more_runs))
        snprintf(out, len, "%s (about %.0f more run%s each would likely decide it)", name, w->more_runs,
                 w->more_runs == 1 ? "" : "s");
    else
        snprintf(out, len, "%s", name);
}

void compare_verdicts_md(FILE *f, const struct compare_verdicts *v) {
    fprintf(f,
            "## Verdicts\n\nDecided on every repetition of both sides (A: %d run%s, B: %d run%s): B/A is "
            "exp of the Hodges-Lehmann shift of log times with its distribution-free %.0f %% interval; p is "
            "Mann-Whitney U's (normal approximation, tie-corrected), Holm-adjusted within the headline rows "
            "and, apart, within the other rows. **slower** / **faster**: adjusted p < %.2f, the interval "
            "clear of 1, B/A beyond the %.1f %% threshold, and the runs' medians apart too (Mann-Whitney on "
            "them, p < 0.05: at least 4 runs a side; the repetitions of one run share its machine state); no "
            "change: the interval within 1 ± %.1f %%; inconclusive: neither. %s\n\n",
            v->runs_a, v->runs_a == 1 ? "" : "s", v->runs_b, v->runs_b == 1 ? "" : "s", 100 * COMPARE_LEVEL,
            COMPARE_ALPHA, 100 * v->opts.threshold, 100 * v->opts.threshold,
            v->opts.raw ? "Every verdict rests on the raw ratio (--raw)."
                        : "Memory-bound rows rest on the ratio normalised by the read measured next to each "
                          "repetition (time x paired read GB/s to the power β, the row's elasticity to the "
                          "read: the slope of log time on log read within each side, held to [0, 1]), "
                          "shown beside the raw one.");
    if (v->lockstep_rows > 0)
        fprintf(
            f,
            "**Lockstep:** %d row%s (marked ⇄) were timed in lockstep in every round (`forge-roofline "
            "lockstep`: A's and B's repetitions alternated, milliseconds apart). Each such row is judged "
            "on its rounds: a round's value is the median of log(B time / A time) over its pairs, B/A is "
            "exp of their mean with Student's %.0f %% interval on rounds - 1 degrees of freedom, and p is "
            "the paired t test's on them (a round is the unit: what a run's process keeps to itself does not "
            "cancel within a round, docs/statistics.md#lockstep). The raw times decide (both sides saw the "
            "same read); one round gives no "
            "interval.\n\n",
            v->lockstep_rows, v->lockstep_rows == 1 ? "" : "s", 100 * COMPARE_LEVEL);
    if (v->pairs > 0 && v->lockstep_rows < v->n)
        fprintf(
            f,
            "Rounds: A's and B's runs alternate in time (%d rounds of one run each, as compare-commits.sh "
            "runs them), so compare_verdicts.csv also gives the paired t and signed-rank tests on each "
            "round's difference of the runs' medians (p_pair_t, p_pair_wsr). The verdict rests on the "
            "unpaired test: on this project's measured runs the normalised medians of a round's two runs "
            "were nearly uncorrelated, so pairing cost degrees of freedom and added no power "
            "(docs/statistics.md).\n\n",
            v->pairs);
    else if (v->pairs == 0 && (v->runs_a > 1 || v->runs_b > 1))
        fprintf(
            f,
            "Rounds: the runs do not pair (%s), so only the unpaired test on the runs' medians is given.\n\n",
            v->pairing);
    if (v->fallback_a || v->fallback_b)
        fprintf(f,
                "> **Fallback:** %d of A's and %d of B's runs have no samples.csv (written before it "
                "existed): each of those runs counts one sample per row, its median, so their intervals "
                "are wide and few rows can be decided.\n\n",
                v->fallback_a, v->fallback_b);
    fputs("| row | A n | B n | B/A raw [95 % CI] | B/A normalised [95 % CI] | β | p (Holm) | verdict |\n"
          "|---|--:|--:|---|---|--:|--:|---|\n",
          f);
    for (int i = 0; i < v->n; i++) {
        const struct compare_row_verdict *w = &v->rows[i];
        char raw[64], norm[64], beta[16] = "n/a", words[128];
        fmt_ratio(w->raw, w->raw_lo, w->raw_hi, raw, sizeof raw);
        fmt_ratio(w->norm, w->norm_lo, w->norm_hi, norm, sizeof norm);
        if (isfinite(w->beta)) snprintf(beta, sizeof beta, "%.2f", w->beta);
        verdict_words(w, words, sizeof words);
        fprintf(f, "| %s%s%s%s | %d | %d | %s%s | %s%s | %s | %.3g | %s |\n", w->headline ? "**" : "", w->key,
                w->headline ? "**" : "", w->lockstep ? " ⇄" : "", w->n_a, w->n_b, raw, w->on_norm ? "" : " ←",
                norm, w->on_norm ? " ←" : "", beta, w->p_adj, words);
    }
    fputs("\n← marks the ratio the verdict rests on. Headline rows (bold) are the decode steps and the "
          "sampler at V = 151,936; `compare --fail-on-slower` exits 1 when one of them is slower.\n\n",
          f);
}

void compare_verdicts_forest(FILE *f, FILE *vars, const struct compare_verdicts *v) {
    double lo_all = 1 - v->opts.threshold, hi_all = 1 + v->opts.threshold;
    for (int i = 0; i < v->n; i++) {
        const struct compare_row_verdict *w = &v->rows[i];
        double lo = w->on_norm ? w->norm_lo : w->raw_lo, hi = w->on_norm ? w->norm_hi : w->raw_hi;
        if (lo > 0) lo_all = fmin(lo_all, lo);
        if (hi > 0) hi_all = fmax(hi_all, hi);
    }
    /* beyond 0.5-2x the axis would hide the band: wider intervals are clipped at the frame */
    fprintf(vars, "n_forest = %d\nf_lo = %.6g\nf_hi = %.6g\n", v->n, fmax(lo_all / 1.02, 0.5),
            fmin(hi_all * 1.02, 2.0));
    fputs("# y key ratio lo hi verdict(0 inconclusive,1 no change,2 faster,3 slower) headline\n"
          "# the ratio each verdict rests on; y counts down so the headline rows are drawn on top\n",
          f);
    for (int i = 0; i < v->n; i++) {
        const struct compare_row_verdict *w = &v->rows[i];
        double r = w->on_norm ? w->norm : w->raw, lo = w->on_norm ? w->norm_lo : w->raw_lo,
               hi = w->on_norm ? w->norm_hi : w->raw_hi;
        fprintf(f, "%d \"%s%s\" %.6g %.6g %.6g %d %d\n", v->n - i, w->key, w->on_norm ? " (norm.)" : "", r,
                lo, hi, (int)w->verdict, w->headline ? 1 : 0);
    }
}

void compare_verdicts_headline_words(const struct compare_verdicts *v, char *out, size_t len) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < v->n && used < len; i++) {
        const struct compare_row_verdict *w = &v->rows[i];
        if (!w->headline) continue;
        double r = w->on_norm ? w->norm : w->raw;
        used += (size_t)snprintf(out + used, len - used, "%s%s %.3f%s: %s", used ? "; " : "", w->key, r,
                                 w->on_norm ? " (normalised)" : "", stats_verdict_name(w->verdict));
    }
    if (!out[0]) snprintf(out, len, "no headline row has samples on both sides");
}

int compare_verdicts_csv_write(const struct compare_verdicts *v, const char *out_dir, struct fr_err *err) {
    FILE *f = report_file_open(out_dir, "compare_verdicts.csv", err);
    if (!f) return -1;
    fputs("key,headline,n_a,n_b,ratio,lo,hi,p_adj,verdict,more_runs,beta,p,p_runs,run_pairs,p_pair_t,p_pair_"
          "wsr,lockstep\n",
          f);
    for (int i = 0; i < v->n; i++) {
        const struct compare_row_verdict *w = &v->rows[i];
        double r = w->on_norm ? w->norm : w->raw, lo = w->on_norm ? w->norm_lo : w->raw_lo,
               hi = w->on_norm ? w->norm_hi : w->raw_hi;
        char more[16] = "";
        if (isinf(w->more_runs))
            snprintf(more, sizeof more, "inf");
        else if (isfinite(w->more_runs))
            snprintf(more, sizeof more, "%.0f", w->more_runs);
        char beta[16] = "";
        if (w->on_norm && isfinite(w->beta)) snprintf(beta, sizeof beta, "%.3f", w->beta);
        char paired[48] = ","; /* empty cells where the runs do not pair */
        if (w->run_pairs > 0) snprintf(paired, sizeof paired, "%.4g,%.4g", w->p_pair_t, w->p_pair_wsr);
        fprintf(f, "%s,%d,%d,%d,%.6g,%.6g,%.6g,%.4g,%s,%s,%s,%.4g,%.4g,%d,%s,%d\n", w->key,
                w->headline ? 1 : 0, w->n_a, w->n_b, r, lo, hi, w->p_adj, stats_verdict_name(w->verdict),
                more, beta, w->p, w->p_runs, w->run_pairs, paired, w->lockstep ? 1 : 0);
    }
    return report_file_close(f, out_dir, "compare_verdicts.csv", err);
}
