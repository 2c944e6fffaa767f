/* Prompt processing timing (bench/prefill_bench.h). Checked end to end by tests/test_run.c (the quick run's
 * prefill rows); what it times is checked by tests/test_prefill.c. */
#include "bench/prefill_bench.h"

#include <stdlib.h>
#include <string.h>

struct prefill_ctx {
    struct prefill_state *p;
    const int *tokens;
    int n, depth;
    int failed;
    struct fr_err err;
    double t_begin;
    double *block_s; /* [max_rows][BLOCK_COUNT] seconds per repetition (warm-up calls included) */
    int n_rows, max_rows;
    const struct sampler_params *sampler;
    int token;
};

static void obs_begin(void *v, enum block_id b, int layer) {
    (void)b, (void)layer;
    ((struct prefill_ctx *)v)->t_begin = timing_now_s();
}

static void obs_end(void *v, enum block_id b, int layer) {
    (void)layer;
    struct prefill_ctx *c = v;
    if (c->n_rows < c->max_rows)
        c->block_s[(size_t)c->n_rows * BLOCK_COUNT + b] += timing_now_s() - c->t_begin;
}

static void prefill_rep(void *v, long rep) {
    (void)rep;
    struct prefill_ctx *c = v;
    const struct decode_observer obs = {obs_begin, obs_end, c};
    if (prefill_run(c->p, c->tokens, c->n, c->depth, &obs, &c->err) != 0) c->failed = 1;
    if (c->n_rows < c->max_rows) c->n_rows++;
}

static void sample_rep(void *v, long rep) {
    struct prefill_ctx *c = v;
    if (decode_sample(&c->p->st, c->sampler, (uint64_t)rep, NULL, &c->token, &c->err) != 0) c->failed = 1;
}

/* Statistics of one block's column over the timed rows (after the warm-up). */
static void block_stats(const struct prefill_ctx *c, int warmup, enum block_id b, struct timing_stats *out) {
    int k = c->n_rows - warmup;
    memset(out, 0, sizeof *out);
    if (k <= 0) return;
    double *col = malloc((size_t)k * sizeof *col);
    if (!col) return;
    for (int i = 0; i < k; i++) col[i] = c->block_s[(size_t)(warmup + i) * BLOCK_COUNT + b];
    timing_stats_from_samples(col, k, out);
    free(col);
}

int prefill_bench_run(struct prefill_state *p, int prompt_len, int depth, const char *key,
                      const struct timing_opts *timing, const struct sampler_params *sampler,
                      struct prefill_bench_result *out, struct fr_err *err) {
    memset(out, 0, sizeof *out);
    out->prompt_len = prompt_len, out->depth = depth;
    int *tokens = malloc((size_t)(prompt_len > 0 ? prompt_len : 1) * sizeof *tokens);
    struct prefill_ctx c = {.p = p, .tokens = tokens, .n = prompt_len, .depth = depth, .sampler = sampler};
    c.max_rows = (timing->max_reps > 0 ? timing->max_reps : 1000) + timing->warmup;
    c.block_s = calloc((size_t)c.max_rows * BLOCK_COUNT, sizeof *c.block_s);
    if (!tokens || !c.block_s) {
        free(tokens), free(c.block_s);
        return fr_err_set(err, "out of memory for the prefill of %d tokens", prompt_len);
    }
    /* spread over the vocabulary, as a real prompt's ids are: the embedding rows gathered are scattered */
    for (int i = 0; i < prompt_len; i++) tokens[i] = (int)((1 + 7919L * i) % p->st.cfg.vocab);
    int rc = 0;
    struct sample_set *set = timing->samples;
    if (set) samples_begin_row(set, 0, p->st.threads, "%s", key);
    if (timing_measure(prefill_rep, &c, timing, &out->prefill) != 0)
        rc = fr_err_set(err, "out of memory timing the prefill");
    else if (c.failed)
        rc = fr_err_set(err, "prefill of %d tokens after %d failed: %s", prompt_len, depth, c.err.msg);
    for (int b = 0; rc == 0 && b < BLOCK_COUNT; b++)
        block_stats(&c, timing->warmup, (enum block_id)b, &out->block[b]);
    if (rc == 0) { /* the draw: its own repetitions, on the last prefill's logits, kept out of samples.csv */
        struct timing_opts st = *timing;
        st.samples = NULL, st.hooks = NULL, st.min_time_s = 0;
        if (st.min_reps < 5) st.min_reps = 5;
        if (st.max_reps < st.min_reps) st.max_reps = st.min_reps;
        if (timing_measure(sample_rep, &c, &st, &out->sample) != 0)
            rc = fr_err_set(err, "out of memory timing the first draw");
        else if (c.failed)
            rc = fr_err_set(err, "first draw after the prefill failed: %s", c.err.msg);
    }
    free(tokens), free(c.block_s);
    return rc;
}
