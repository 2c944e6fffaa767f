/* Block and step timing over the decode step. The step runs under an observer that adds each block's
 * wall time into the current repetition's row; medians over repetitions give the per-block breakdown.
 * Checked end to end by tests/test_run.c on a tiny config. */
#include "bench/decode_bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/kv_cache.h"
#include "roofline/ceilings.h"

void decode_bench_read_rep(void *p, long rep) {
    (void)rep;
    struct decode_bench_read *c = p;
    c->sink = ceilings_read_team(c->buf, c->n, c->threads);
}

struct block_ctx {
    struct decode_state *st;
    enum block_id block;
    int pos;
    int failed;
};

/* One repetition: the block's calls of one step, run as the step runs them (decode_block_layers). */
static void block_rep(void *p, long rep) {
    (void)rep;
    struct block_ctx *c = p;
    if (decode_block_layers(c->st, c->block, c->pos) != 0) c->failed = 1;
}

/* What runs untimed before each repetition: the block's inputs put back (decode_activations: the in-place
 * blocks would otherwise feed on their own output), then, for a cold block, the eviction, timed on its own:
 * its best run is a read bandwidth reached in this run. */
struct before_rep {
    struct decode_state *st;
    const struct decode_activations *inputs;
    struct decode_bench_read *rd; /* NULL: not cold */
    double *times_s;              /* [max] */
    int n, max;
    const float *logits; /* [vocab] the sampler's row to write back, by the team (NULL: not the sampler) */
};

/* The sampler's row written back as the LM head writes it, each thread its share: in the step the sampler
 * reads logits that the whole team has just written, not a row its own core's cache holds from its last
 * repetition. */
static void logits_rewrite(struct decode_state *st, const float *logits) {
    const long n = st->cfg.vocab;
#pragma omp parallel for schedule(static) num_threads(st->threads)
    for (long i = 0; i < n; i++) st->logits[i] = logits[i];
}

static void before_rep(void *p) {
    struct before_rep *e = p;
    decode_activations_restore(e->st, e->inputs);
    if (e->rd) {
        double t0 = timing_now_s();
        decode_bench_read_rep(e->rd, 0);
        if (e->n < e->max) e->times_s[e->n++] = timing_now_s() - t0;
    }
    if (e->logits) logits_rewrite(e->st, e->logits);
}

int decode_bench_block(struct decode_state *st, enum block_id b, long context, const struct timing_opts *opts,
                       const float *evict, size_t evict_n, const struct decode_bench_counting *cnt,
                       struct timing_stats *out, struct rep_counts_summary *counts, struct fr_err *err) {
    return decode_bench_block_evict(st, b, context, opts, evict, evict_n, cnt, out, counts, NULL, err);
}

/* The read of a block's own spans, a timing_fn. */
struct spans_read {
    const struct mem_span *spans;
    int n, threads;
    volatile double sink;
};

static void spans_read_rep(void *p, long rep) {
    (void)rep;
    struct spans_read *r = p;
    r->sink = ceilings_read_team_spans(r->spans, r->n, r->threads);
}

/* The block's spans (malloc'd into *spans; NULL when none) and their bytes. Returns -1 on allocation failure.
 */
static int block_spans(struct decode_state *st, enum block_id b, long context, struct mem_span **spans,
                       int *n, size_t *bytes) {
    *spans = NULL, *bytes = 0;
    *n = decode_block_spans(st, b, (int)context, NULL, 0);
    if (*n == 0) return 0;
    if (!(*spans = malloc(sizeof **spans * (size_t)*n))) return -1;
    decode_block_spans(st, b, (int)context, *spans, *n);
    for (int i = 0; i < *n; i++) *bytes += (*spans)[i].bytes;
    return 0;
}

int decode_bench_block_evict(struct decode_state *st, enum block_id b, long context,
                             const struct timing_opts *opts, const float *evict, size_t evict_n,
                             const struct decode_bench_counting *cnt, struct timing_stats *out,
                             struct rep_counts_summary *counts, struct decode_bench_block_reads *reads,
                             struct fr_err *err) {
    struct block_ctx c = {st, b, (int)context, 0};
    st->token = 1 % st->cfg.vocab; /* token 1, or 0 in a one-token vocabulary */
    /* the sampler too: in the step its scratch comes after 1.2 GB of weights, not from its last call */
    const int cold = evict && (block_table()[b].reads_weights || b == BLOCK_ATTENTION || b == BLOCK_SAMPLER);
    struct decode_bench_read rd = {evict, evict_n, st->threads, 0};
    struct spans_read own = {.threads = st->threads};
    size_t own_bytes = 0;
    if (reads) *reads = (struct decode_bench_block_reads){.over_own = NAN};
    struct mem_span *spans = NULL;
    if (cold && reads && block_spans(st, b, context, &spans, &own.n, &own_bytes) != 0)
        return fr_err_set(err, "out of memory for the spans of %s", block_name(b));
    own.spans = spans;
    if (reads) reads->own_bytes = own_bytes;
    struct rep_counts rc;
    int max_reps = opts->max_reps > 0 ? opts->max_reps : 1000;
    struct decode_activations inputs;
    if (decode_activations_save(st, &inputs) != 0) {
        free(spans);
        return fr_err_set(err, "timing %s: %s", block_name(b), st->err.msg);
    }
    struct before_rep ev = {st, &inputs, NULL, calloc((size_t)max_reps, sizeof(double)), 0, max_reps, NULL};
    float *logits = NULL;
    if (b == BLOCK_SAMPLER && !st->sample_logits && (logits = malloc(sizeof *logits * (size_t)st->cfg.vocab)))
        memcpy(logits, st->logits, sizeof *logits * (size_t)st->cfg.vocab), ev.logits = logits;
    if (!ev.times_s || (b == BLOCK_SAMPLER && !st->sample_logits && !logits)) {
        free(ev.times_s);
        free(logits);
        decode_activations_free(&inputs);
        free(spans);
        return fr_err_set(err, "out of memory timing %s", block_name(b));
    }
    if (rep_counts_init(&rc, cnt ? cnt->team : NULL, cnt ? cnt->energy : NULL, max_reps, err) != 0) {
        free(logits);
        free(ev.times_s);
        decode_activations_free(&inputs);
        free(spans);
        return -1;
    }
    rc.steal = cnt ? cnt->steal : NULL;
    /* before each timed repetition, outside its window and uncounted: the inputs back, the eviction */
    if (cold) ev.rd = &rd;
    rc.before = before_rep, rc.before_ctx = &ev;
    struct timing_opts t = *opts;
    t.hooks = &rc.hooks;
    /* the warm-ups start as the timed repetitions do; their evictions are not kept as reads */
    for (int i = 0; i < t.warmup; i++) before_rep(&ev), block_rep(&c, i);
    ev.n = 0;
    t.warmup = 0;
    /* the own read after the block, behind an eviction of its own (untimed): as cold as the block */
    const struct timing_partner own_read = {
        spans_read_rep,        &own, reads ? &reads->own : NULL, reads ? &reads->over_own : NULL,
        decode_bench_read_rep, &rd};
    const int first = t.samples ? t.samples->n : 0;
    int rcode = own.n > 0 ? timing_measure_with(block_rep, &c, &own_read, 1, &t, out)
                          : timing_measure(block_rep, &c, &t, out);
    if (counts) rep_counts_summarize(&rc, counts);
    if (t.samples) { /* a cold block's paired read is the eviction just before it, not its own read */
        rep_counts_mark_samples(&rc, t.samples, first);
        if (cold) samples_set_read(t.samples, first, ev.times_s, ev.n, (double)evict_n * sizeof(float));
    }
    rep_counts_free(&rc);
    if (reads && rcode == 0 && ev.n > 0) rcode = timing_stats_compute(ev.times_s, ev.n, NULL, &reads->evict);
    decode_activations_free(&inputs);
    free(logits);
    free(ev.times_s);
    free(spans);
    if (rcode != 0) return fr_err_set(err, "out of memory timing %s", block_name(b));
    if (c.failed) return fr_err_set(err, "block %s failed: %s", block_name(b), st->err.msg);
    return 0;
}

struct step_ctx {
    struct decode_state *st;
    const struct decode_bench_opts *opts;
    int pos;
    int failed;
    struct fr_err err;
    double t_begin;
    double *rows;   /* [max_reps][BLOCK_COUNT] seconds per block per repetition */
    double *step_s; /* [max_reps] the whole repetition, timed here around the same calls */
    int n_rows;
    int max_rows;
};

static void obs_begin(void *p, enum block_id b, int layer) {
    (void)b, (void)layer;
    struct step_ctx *c = p;
    c->t_begin = timing_now_s();
}

static void obs_end(void *p, enum block_id b, int layer) {
    (void)layer;
    struct step_ctx *c = p;
    double dt = timing_now_s() - c->t_begin;
    if (c->n_rows < c->max_rows) c->rows[(size_t)c->n_rows * BLOCK_COUNT + b] += dt;
}

static void step_rep(void *p, long rep) {
    struct step_ctx *c = p;
    const struct decode_observer obs = {obs_begin, obs_end, c};
    int token = 1 % c->st->cfg.vocab;
    double t0 = timing_now_s();
    if (decode_step(c->st, token, c->pos, &obs, &c->err) != 0 ||
        decode_sample(c->st, &c->opts->sampler, (uint64_t)rep, &obs, &token, &c->err) != 0)
        c->failed = 1;
    if (c->n_rows < c->max_rows) c->step_s[c->n_rows++] = timing_now_s() - t0;
}

int decode_bench_step(struct decode_state *st, long context, const struct decode_bench_opts *opts,
                      struct decode_bench_step *out, struct fr_err *err) {
    memset(out, 0, sizeof *out);
    out->context = context;
    if (context >= st->max_pos)
        return fr_err_set(err, "context %ld needs a KV cache of %ld positions, it holds %d", context,
                          context + 1, st->max_pos);
    kv_cache_fill_random(&st->kv, (int)context, 0x5eedULL + (uint64_t)context);
    struct timing_opts t = opts->step_timing;
    int max_rows = (t.max_reps > 0 ? t.max_reps : 1000) + t.warmup;
    struct step_ctx c = {.st = st, .opts = opts, .pos = (int)context, .max_rows = max_rows};
    c.rows = calloc((size_t)max_rows * BLOCK_COUNT, sizeof *c.rows);
    c.step_s = calloc((size_t)max_rows, sizeof *c.step_s);
    if (!c.rows || !c.step_s) {
        free(c.step_s);
        free(c.rows);
        return fr_err_set(err, "out of memory for per-block times");
    }
    int rc = 0;
    struct decode_bench_read rd = {opts->read_buf, opts->read_n, st->threads, 0};
    struct decode_bench_read wr = {st->w->base, st->w->total_bytes / sizeof(float), st->threads, 0};
    out->step_over_read = out->step_over_weights_read = NAN;
    struct rep_counts counts;
    if (rep_counts_init(&counts, opts->counting.team, opts->counting.energy, max_rows, err) != 0) {
        free(c.step_s);
        free(c.rows);
        return -1;
    }
    counts.steal = opts->counting.steal;
    t.hooks = &counts.hooks;
    const struct timing_partner reads[2] = {
        {decode_bench_read_rep, &rd, &out->read, &out->step_over_read, NULL, NULL},
        {decode_bench_read_rep, &wr, &out->weights_read, &out->step_over_weights_read, NULL, NULL}};
    const int weights_too = st->w->total_bytes >= opts->weights_read_min_bytes;
    const int first = t.samples ? t.samples->n : 0;
    int trc = opts->read_buf ? timing_measure_with(step_rep, &c, reads, weights_too ? 2 : 1, &t, &out->step)
                             : timing_measure(step_rep, &c, &t, &out->step);
    rep_counts_summarize(&counts, &out->counts);
    if (t.samples) rep_counts_mark_samples(&counts, t.samples, first);
    if (trc != 0)
        rc = fr_err_set(err, "out of memory timing steps");
    else if (c.failed)
        rc = fr_err_set(err, "decode step at context %ld failed: %s", context, c.err.msg);
    /* per-block medians over the timed repetitions (rows after the warm-up), disturbed ones left out */
    int n = c.n_rows - t.warmup;
    double *col = n > 0 ? malloc(sizeof *col * (size_t)n) : NULL;
    for (int b = 0; b < BLOCK_COUNT; b++) {
        out->block_median_s[b] = NAN;
        if (!col) continue;
        for (int i = 0; i < n; i++) col[i] = c.rows[(size_t)(i + t.warmup) * BLOCK_COUNT + b];
        struct timing_stats s;
        if (timing_stats_compute(col, n, n <= counts.n ? counts.disturbed : NULL, &s) == 0)
            out->block_median_s[b] = s.median_s;
    }
    out->unattributed_s = NAN;
    if (col) {
        for (int i = 0; i < n; i++) {
            const double *row = c.rows + (size_t)(i + t.warmup) * BLOCK_COUNT;
            double blocks = 0;
            for (int b = 0; b < BLOCK_COUNT; b++) blocks += row[b];
            col[i] = c.step_s[i + t.warmup] - blocks;
        }
        struct timing_stats s;
        timing_stats_from_samples(col, n, &s);
        out->unattributed_s = s.median_s;
    }
    free(col);
    free(c.step_s);
    rep_counts_free(&counts);
    free(c.rows);
    return rc;
}
