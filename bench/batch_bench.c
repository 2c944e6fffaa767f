/* Batch sweep timing (bench/batch_bench.h). Checked end to end by tests/test_run.c on a tiny config (the
 * quick run's batch rows) and, for the step it times, by tests/test_decode_batch.c. */
#include "bench/batch_bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/kv_cache.h"

struct batch_ctx {
    struct decode_batch *bt;
    const struct sampler_params *sampler;
    int *tokens, *pos, *out;
    int failed;
    struct fr_err err;
    double t_begin, proj_s;
    double *proj; /* [max_rows] projection seconds per repetition */
    int n_rows, max_rows;
};

static int is_projection(enum block_id b) {
    return block_table()[b].reads_weights;
}

static void obs_begin(void *p, enum block_id b, int layer) {
    (void)layer;
    struct batch_ctx *c = p;
    if (is_projection(b)) c->t_begin = timing_now_s();
}

static void obs_end(void *p, enum block_id b, int layer) {
    (void)layer;
    struct batch_ctx *c = p;
    if (is_projection(b)) c->proj_s += timing_now_s() - c->t_begin;
}

static void batch_rep(void *p, long rep) {
    struct batch_ctx *c = p;
    const struct decode_observer obs = {obs_begin, obs_end, c};
    c->proj_s = 0;
    if (decode_batch_step(c->bt, c->tokens, c->pos, &obs, &c->err) != 0 ||
        decode_batch_sample(c->bt, c->sampler, (uint64_t)rep, &obs, c->out, &c->err) != 0)
        c->failed = 1;
    if (c->n_rows < c->max_rows) c->proj[c->n_rows++] = c->proj_s;
}

/* The first sequence's cache is filled with the deterministic random values, the others copy it (a copy runs
 * at memory speed, the generator far slower): each sequence still reads its own memory every step. */
void batch_bench_fill(struct decode_batch *bt, long context) {
    kv_cache_fill_random(&bt->seq[0].kv, (int)context, 0xba7cULL + (uint64_t)context);
    for (int s = 1; s < bt->capacity; s++) kv_cache_copy(&bt->seq[s].kv, &bt->seq[0].kv, 0, (int)context);
}

int batch_bench_sweep(struct decode_batch *bt, long context, const int *batches, int n,
                      const struct timing_opts *timing, const struct sampler_params *sampler,
                      const float *read_buf, size_t read_n, struct batch_bench_result *out,
                      struct fr_err *err) {
    if (context < 0 || context >= bt->seq[0].max_pos)
        return fr_err_set(err, "batch sweep: context %ld needs %ld positions, the caches hold %d", context,
                          context + 1, bt->seq[0].max_pos);
    int cap = bt->capacity, rc = 0;
    struct sample_set *set = timing->samples;
    char suffix[SAMPLES_ROW_LEN] = "";
    if (set) snprintf(suffix, sizeof suffix, "%s", set->row);
    struct batch_ctx c = {.bt = bt, .sampler = sampler};
    c.max_rows = (timing->max_reps > 0 ? timing->max_reps : 1000) + timing->warmup;
    c.tokens = calloc((size_t)cap, sizeof *c.tokens);
    c.pos = calloc((size_t)cap, sizeof *c.pos);
    c.out = calloc((size_t)cap, sizeof *c.out);
    c.proj = calloc((size_t)c.max_rows, sizeof *c.proj);
    if (!c.tokens || !c.pos || !c.out || !c.proj) {
        free(c.tokens), free(c.pos), free(c.out), free(c.proj);
        return fr_err_set(err, "out of memory for the batch sweep");
    }
    for (int s = 0; s < cap; s++) c.tokens[s] = (1 + 7 * s) % bt->seq[0].cfg.vocab, c.pos[s] = (int)context;
    for (int i = 0; i < n; i++) {
        if (decode_batch_set_active(bt, batches[i], err) != 0) {
            rc = -1;
            break;
        }
        c.n_rows = 0;
        out[i] =
            (struct batch_bench_result){.batch = batches[i], .proj_median_s = NAN, .step_over_read = NAN};
        struct decode_bench_read rd = {read_buf, read_n, bt->seq[0].threads, 0};
        if (set)
            samples_begin_row(set, read_buf ? (double)read_n * sizeof(float) : 0, set->threads,
                              "batch:%d@%ld%s", batches[i], context, suffix);
        int trc = read_buf ? timing_measure_pair(batch_rep, &c, decode_bench_read_rep, &rd, timing,
                                                 &out[i].step, &out[i].read, &out[i].step_over_read)
                           : timing_measure(batch_rep, &c, timing, &out[i].step);
        if (trc != 0) {
            rc = fr_err_set(err, "out of memory timing batched steps");
            break;
        }
        if (c.failed) {
            rc = fr_err_set(err, "batched step (B = %d, context %ld) failed: %s", batches[i], context,
                            c.err.msg);
            break;
        }
        int k = c.n_rows - timing->warmup;
        if (k > 0) {
            struct timing_stats ps;
            timing_stats_from_samples(c.proj + timing->warmup, k, &ps);
            out[i].proj_median_s = ps.median_s;
        }
    }
    decode_batch_set_active(bt, cap, NULL);
    free(c.tokens), free(c.pos), free(c.out), free(c.proj);
    return rc;
}
