/* Sampler benchmark (see sampler_bench.h). Rows come from bench/sampler_rows.c with fixed seeds; the
 * filters write to a separate buffer (the *_into forms) so no copy enters the timed region. Before timing a
 * row it checks, and fails if they differ: the fast filter against the sort reference bit for bit, and
 * sampler_pick (the fused chain the decode step runs, timed as chain_fast) against the unfused sort chain
 * (softmax, reference filter, draw), token for token over BENCH_CHECK_STEPS seeded steps. */
#include "bench/sampler_bench.h"

#include <stdlib.h>
#include <string.h>

#include "bench/sampler_rows.h"
#include "kernels/sampler.h"

const int sampler_bench_default_vocabs[5] = {32000, 65536, 128256, 151936, 262144};

static const char *const variant_names[SAMPLER_BENCH_VARIANT_COUNT] = {
    "greedy", "softmax", "top_p_sort", "top_p_fast", "draw", "chain_fast", "chain_sort",
};

const char *sampler_bench_variant_name(enum sampler_bench_variant v) {
    return (unsigned)v < SAMPLER_BENCH_VARIANT_COUNT ? variant_names[v] : "?";
}

void sampler_bench_default_opts(struct sampler_bench_opts *o) {
    *o = (struct sampler_bench_opts){
        .vocabs = sampler_bench_default_vocabs,
        .n_vocabs = 5,
        .temperature = 0.8f,
        .top_p = 0.9f,
        .min_time_s = 0.05,
        .min_reps = 5,
        .threads = 1,
    };
}

struct bench_ctx {
    enum sampler_bench_variant variant;
    const float *logits;
    const float *probs;    /* softmax of logits */
    const float *filtered; /* fast filter of probs */
    float *out, *tmp;
    void *scratch;
    int n, threads;
    float temperature, top_p;
    volatile int sink;
};

/* softmax, the sort reference filter and the draw, each on its own: what sampler_pick must equal */
static int sort_chain(float *tmp, const float *logits, int n, float temperature, float top_p, void *scratch,
                      double u, int threads) {
    sampler_softmax(tmp, logits, FR_DTYPE_F32, n, temperature, threads, NULL);
    sampler_top_p_ref(tmp, n, top_p, scratch);
    return sampler_draw(tmp, n, u);
}

static void bench_one(void *vctx, long rep) {
    struct bench_ctx *c = vctx;
    int t = -1;
    double u = sampler_uniform(1, (uint64_t)rep);
    switch (c->variant) {
    case SAMPLER_BENCH_GREEDY:
        sampler_argmax(c->logits, FR_DTYPE_F32, c->n, &t, NULL);
        break;
    case SAMPLER_BENCH_SOFTMAX:
        sampler_softmax(c->out, c->logits, FR_DTYPE_F32, c->n, c->temperature, c->threads, NULL);
        break;
    case SAMPLER_BENCH_TOP_P_SORT:
        t = sampler_top_p_ref_into(c->out, c->probs, c->n, c->top_p, c->scratch);
        break;
    case SAMPLER_BENCH_TOP_P_FAST:
        t = sampler_top_p_fast_into(c->out, c->probs, c->n, c->top_p, c->scratch);
        break;
    case SAMPLER_BENCH_DRAW:
        t = sampler_draw(c->filtered, c->n, u);
        break;
    case SAMPLER_BENCH_CHAIN_FAST: {
        struct sampler_params prm = {c->temperature, c->top_p, 1};
        sampler_pick(c->logits, c->n, &prm, (uint64_t)rep, c->scratch, c->threads, &t, NULL);
        break;
    }
    case SAMPLER_BENCH_CHAIN_SORT:
        t = sort_chain(c->tmp, c->logits, c->n, c->temperature, c->top_p, c->scratch, u, c->threads);
        break;
    default:
        break;
    }
    c->sink = t;
}

/* steps of the token check before a row is timed (each a different uniform draw) */
#define BENCH_CHECK_STEPS 32

/* Realistic rows' nuclei range from 1 token to thousands with the seed; the timed row is the one with the
 * median nucleus of ROW_CANDIDATES seeded rows, so the figure is neither the easiest nor the hardest. */
#define ROW_CANDIDATES 15

static int cmp_int2(const void *a, const void *b) {
    const int *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

static uint64_t row_seed(enum sampler_row_kind kind, int n, const struct sampler_bench_opts *o, float *logits,
                         float *probs, void *scratch) {
    if (kind != SAMPLER_ROW_REALISTIC) return 2024;
    int cand[ROW_CANDIDATES][2]; /* nucleus, seed */
    for (int c = 0; c < ROW_CANDIDATES; c++) {
        sampler_rows_fill(logits, n, kind, 2024 + (uint64_t)c);
        sampler_softmax(probs, logits, FR_DTYPE_F32, n, o->temperature, o->threads, NULL);
        cand[c][0] = sampler_top_p_fast(probs, n, o->top_p, scratch);
        cand[c][1] = 2024 + c;
    }
    qsort(cand, ROW_CANDIDATES, sizeof cand[0], cmp_int2);
    return (uint64_t)cand[ROW_CANDIDATES / 2][1];
}

/* The sort-based figures take tens of ms each: a fixed 3 runs; the rest repeat to a minimum time. */
static struct timing_opts timing_for(const struct sampler_bench_opts *o, bool sort) {
    return (struct timing_opts){sort ? 1 : 3, sort ? 3 : o->min_reps, 1000, sort ? 0.0 : o->min_time_s, NULL,
                                NULL};
}

void sampler_bench_describe(const struct sampler_bench_opts *o, char *buf, size_t len) {
    const int *vocabs = o->vocabs ? o->vocabs : sampler_bench_default_vocabs;
    int nv = o->vocabs ? o->n_vocabs : 5;
    struct timing_opts fast = timing_for(o, false), sort = timing_for(o, true);
    char f[64], s[64];
    timing_describe_opts(&fast, f, sizeof f);
    timing_describe_opts(&sort, s, sizeof s);
    size_t off = (size_t)snprintf(buf, len, "sampler figures are the median of %s", f);
    if (off < len && !o->skip_sort) off += (size_t)snprintf(buf + off, len - off, " (sort-based: %s)", s);
    if (off < len && o->skip_sort)
        off += (size_t)snprintf(buf + off, len - off, ", sort reference not timed");
    for (int i = 0; i < nv && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%d", i ? "," : ", at vocabularies ", vocabs[i]);
    int threads = sampler_softmax_threads(1 << 26, o->threads);
    if (off < len)
        snprintf(buf + off, len - off,
                 "; the softmax on %d thread%s from %d tokens, top-p and the draw on one", threads,
                 threads > 1 ? "s" : "", SAMPLER_SOFTMAX_SPLIT_MIN);
}

int sampler_bench_run(const struct sampler_bench_opts *o, struct sampler_bench_result **out, int *n_out,
                      struct fr_err *err) {
    const int *vocabs = o->vocabs ? o->vocabs : sampler_bench_default_vocabs;
    int nv = o->vocabs ? o->n_vocabs : 5, vmax = 1;
    for (int i = 0; i < nv; i++)
        if (vocabs[i] > vmax) vmax = vocabs[i];
    const enum sampler_row_kind kinds[2] = {SAMPLER_ROW_REALISTIC, SAMPLER_ROW_FLAT};
    size_t cap = (size_t)nv * 2 * SAMPLER_BENCH_VARIANT_COUNT;
    struct sampler_bench_result *res = calloc(cap, sizeof *res);
    float *bufs = malloc(sizeof(float) * (size_t)vmax * 6);
    void *scratch = malloc(sampler_scratch_bytes(vmax));
    int n_res = 0, rc = 0;
    if (!res || !bufs || !scratch) {
        rc = fr_err_set(err, "sampler benchmark: out of memory for vocabulary %d", vmax);
        goto done;
    }
    float *logits = bufs, *probs = bufs + vmax, *filtered = bufs + 2 * (size_t)vmax,
          *ref = bufs + 3 * (size_t)vmax;
    float *outb = bufs + 4 * (size_t)vmax, *tmp = bufs + 5 * (size_t)vmax;
    for (int vi = 0; vi < nv; vi++) {
        int n = vocabs[vi];
        for (int k = 0; k < 2; k++) {
            sampler_rows_fill(logits, n, kinds[k], row_seed(kinds[k], n, o, logits, probs, scratch));
            if (sampler_softmax(probs, logits, FR_DTYPE_F32, n, o->temperature, o->threads, err)) {
                rc = -1;
                goto done;
            }
            int nucleus = sampler_top_p_fast_into(filtered, probs, n, o->top_p, scratch);
            int nucleus_ref = sampler_top_p_ref_into(ref, probs, n, o->top_p, scratch);
            if (nucleus != nucleus_ref || memcmp(filtered, ref, sizeof(float) * (size_t)n) != 0) {
                rc = fr_err_set(
                    err, "sampler benchmark: fast top-p differs from the reference (vocab %d, %s rows)", n,
                    sampler_row_kind_name(kinds[k]));
                goto done;
            }
            int tokens_differ = 0;
            for (uint64_t step = 0; step < BENCH_CHECK_STEPS; step++) {
                struct sampler_params prm = {o->temperature, o->top_p, 1};
                int want = sampler_draw(ref, n, sampler_uniform(1, step)); /* ref: the sort chain's row */
                int got = -1;
                sampler_pick(logits, n, &prm, step, scratch, o->threads, &got, NULL);
                tokens_differ += got != want;
            }
            if (tokens_differ) {
                rc = fr_err_set(
                    err,
                    "sampler benchmark: sampler_pick differs from the sort chain on %d of %d steps "
                    "(vocab %d, %s rows)",
                    tokens_differ, BENCH_CHECK_STEPS, n, sampler_row_kind_name(kinds[k]));
                goto done;
            }
            for (int v = 0; v < SAMPLER_BENCH_VARIANT_COUNT; v++) {
                bool sort = v == SAMPLER_BENCH_TOP_P_SORT || v == SAMPLER_BENCH_CHAIN_SORT;
                if (sort && o->skip_sort) continue;
                struct bench_ctx c = {(enum sampler_bench_variant)v,
                                      logits,
                                      probs,
                                      filtered,
                                      outb,
                                      tmp,
                                      scratch,
                                      n,
                                      o->threads,
                                      o->temperature,
                                      o->top_p,
                                      0};
                struct timing_opts to = timing_for(o, sort);
                if (o->samples) {
                    samples_begin_row(o->samples, 0, o->samples->threads, "sampler:%s%s@%d", variant_names[v],
                                      kinds[k] == SAMPLER_ROW_FLAT ? ".flat" : "", n);
                    to.samples = o->samples;
                }
                struct sampler_bench_result *r = &res[n_res];
                r->variant = variant_names[v];
                r->row_kind = sampler_row_kind_name(kinds[k]);
                r->vocab = n;
                r->nucleus = v == SAMPLER_BENCH_GREEDY || v == SAMPLER_BENCH_SOFTMAX ? -1 : nucleus;
                if (timing_measure(bench_one, &c, &to, &r->timing)) {
                    rc = fr_err_set(err, "sampler benchmark: out of memory for timing samples");
                    goto done;
                }
                n_res++;
            }
        }
    }
done:
    free(bufs);
    free(scratch);
    if (rc) {
        free(res);
        return rc;
    }
    *out = res;
    *n_out = n_res;
    return 0;
}

void sampler_bench_print_markdown(FILE *f, const struct sampler_bench_result *r, int n) {
    fprintf(f, "| variant | rows | vocab | nucleus | median us | min us | max us | reps |\n"
               "|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < n; i++) {
        const struct timing_stats *t = &r[i].timing;
        char nucleus[16] = "-"; /* no top-p on greedy and softmax rows */
        if (r[i].nucleus >= 0) snprintf(nucleus, sizeof nucleus, "%d", r[i].nucleus);
        fprintf(f, "| %s | %s | %d | %s | %.1f | %.1f | %.1f | %d%s |\n", r[i].variant, r[i].row_kind,
                r[i].vocab, nucleus, t->median_s * 1e6, t->min_s * 1e6, t->max_s * 1e6, t->reps,
                t->noisy ? " (noisy)" : "");
    }
}
