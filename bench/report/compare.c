/* Two runs side by side (read with bench/report/report_json.h): refuses runs that are not comparable, pairs
 * rows by identity and writes compare.md: the verdicts decided on the raw repetitions
 * (bench/report/compare_verdict.h) first, then each section's medians with B/A and the row's verdict.
 * Checked in tests/test_report_compare.c (round trip, ratio, verdicts, refusal, malformed input). */
#include "bench/report/compare.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/report/report_plots.h"
#include "model/blocks.h"
#include "roofline/core_speed.h"
#include "roofline/mm_state.h"

/* ---------- checks and pairing ---------- */

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double compare_median(double *v, int n) {
    int k = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) v[k++] = v[i];
    if (k == 0) return NAN;
    qsort(v, (size_t)k, sizeof v[0], cmp_double);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

const char *compare_run_isa(const struct run_report *r) {
    return r->prov.isa;
}

int compare_check(const struct run_report *a, const struct run_report *b, struct fr_err *err) {
    char msg[sizeof err->msg];
    size_t used = 0;
    msg[0] = '\0';
#define DIFF(cond, fmt, ...)                                                                                 \
    do {                                                                                                     \
        if ((cond) && used < sizeof msg)                                                                     \
            used +=                                                                                          \
                (size_t)snprintf(msg + used, sizeof msg - used, "%s" fmt, used ? "; " : "", __VA_ARGS__);    \
    } while (0)
    DIFF(strcmp(a->model.name, b->model.name) != 0, "model %s vs %s", a->model.name, b->model.name);
    DIFF(strcmp(a->prov.dtype, b->prov.dtype) != 0, "dtype %s vs %s", a->prov.dtype, b->prov.dtype);
    /* a q4_k_m run and a q4_k one share the dtype (the commonest type): the mix, or a file's conversion,
     * tells them apart */
    DIFF(strcmp(a->prov.weights_conversion, b->prov.weights_conversion) != 0, "weights '%.80s' vs '%.80s'",
         a->prov.weights_conversion[0] ? a->prov.weights_conversion : "as named",
         b->prov.weights_conversion[0] ? b->prov.weights_conversion : "as named");
    DIFF(a->prov.threads != b->prov.threads, "threads %d vs %d", a->prov.threads, b->prov.threads);
    DIFF(strcmp(a->prov.cpu_model, b->prov.cpu_model) != 0, "CPU '%s' vs '%s'", a->prov.cpu_model,
         b->prov.cpu_model);
#undef DIFF
    if (used == 0) return 0;
    return fr_err_set(err, "runs are not comparable: %s", msg);
}

static const char *verdict_md(const struct compare_row_verdict *w) {
    if (!w) return "n/a: no samples";
    switch (w->verdict) {
    case STATS_FASTER:
        return "**faster**";
    case STATS_SLOWER:
        return "**slower**";
    default:
        return stats_verdict_name(w->verdict);
    }
}

static void md_run_line(FILE *f, const char *tag, const char *label, const struct run_report *r, int n_runs) {
    fprintf(f, "- **%s**: `%s`: %s, %s weights, %d thread%s, %s, commit %s, %s", tag, label, r->model.name,
            r->prov.dtype, r->prov.threads, r->prov.threads == 1 ? "" : "s", r->prov.cpu_model,
            r->prov.git_commit[0] ? r->prov.git_commit : "unknown", r->prov.utc_stamp);
    if (r->prov.damon_on) fputs(", DAMON on", f);
    if (r->prov.core_speed_low < CORE_SPEED_MOVED)
        fprintf(f, ", core speed moved (the slowest probe at %.0f %% of the fastest)",
                100 * r->prov.core_speed_low);
    if (n_runs > 1) fprintf(f, " (%d runs pooled)", n_runs);
    fputc('\n', f);
}

/* One row of one run in a compare section. Rows pair when their `cells` (the identity columns) match. */
struct cmp_row {
    char cells[160];           /* identity cells of the markdown row, e.g. "| topp_fast | flat | 151936 |" */
    char label[128];           /* the same identity in words, e.g. "`qkv_proj`" or "step at context 1024" */
    char key[SAMPLES_ROW_LEN]; /* the samples' row key (compare_key_*) */
    const struct timing_stats *t;
    double tokens_per_s; /* steps only */
    long context;        /* steps only */
    int index;           /* the row's index in its run's blocks, steps or sampler array */
    bool memory_bound;   /* weight blocks, attention, steps: normalized by the paired read bandwidth */
    double read_gbs;     /* the paired read GB/s that row is normalized by: its own (a step's alternated
                          * read, a block's eviction reads) else the run's; NaN = none */
};

enum cmp_section { CMP_BLOCKS, CMP_STEPS, CMP_SAMPLER, CMP_BATCH, CMP_PREFILL, CMP_SECTIONS };

/* The run's paired read bandwidth: the median over its steps of the read-only kernel's GB/s measured
 * alternately with them; NaN when no step has one. */
static double run_read_gbs(const struct run_report *r) {
    double v[REPORT_MAX_STEPS];
    for (int i = 0; i < r->n_steps; i++) v[i] = r->steps[i].paired_read_gbs;
    return compare_median(v, r->n_steps);
}

static int cmp_rows(const struct run_report *r, enum cmp_section sec, struct cmp_row *out) {
    int n = sec == CMP_BLOCKS    ? r->n_blocks
            : sec == CMP_STEPS   ? r->n_steps
            : sec == CMP_BATCH   ? r->n_batch
            : sec == CMP_PREFILL ? r->n_prefill
                                 : r->n_sampler;
    double run_gbs = run_read_gbs(r);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (sec == CMP_PREFILL && !compare_prefill_row(r, i)) continue; /* the whole prefill's rows */
        struct cmp_row *o = &out[k++];
        o->tokens_per_s = NAN;
        o->index = i;
        o->memory_bound = false;
        o->read_gbs = run_gbs;
        if (sec == CMP_BLOCKS) {
            const struct report_block *b = &r->blocks[i];
            const struct block_desc *d = block_by_name(b->name);
            snprintf(o->cells, sizeof o->cells, "| %s |", b->name);
            snprintf(o->label, sizeof o->label, "`%s`", b->name);
            compare_key_block(r, i, o->key, sizeof o->key);
            o->t = &b->measured;
            o->memory_bound = d && (d->reads_weights || d->id == BLOCK_ATTENTION);
            if (o->memory_bound && isfinite(b->paired_read_gbs)) o->read_gbs = b->paired_read_gbs;
        } else if (sec == CMP_STEPS) {
            const struct report_step *s = &r->steps[i];
            snprintf(o->cells, sizeof o->cells, "| %ld |", s->context);
            snprintf(o->label, sizeof o->label, "step at context %ld", s->context);
            compare_key_step(r, i, o->key, sizeof o->key);
            o->t = &s->measured;
            o->tokens_per_s = s->tokens_per_s;
            o->context = s->context;
            o->memory_bound = true;
            if (isfinite(s->paired_read_gbs)) o->read_gbs = s->paired_read_gbs;
        } else if (sec == CMP_PREFILL) { /* compute-bound: judged on the raw ratio */
            const struct report_prefill *x = &r->prefill[i];
            snprintf(o->cells, sizeof o->cells, "| %ld | %ld | %s |", x->prompt_len, x->depth, x->dtype);
            snprintf(o->label, sizeof o->label, "prefill of %ld tokens after %ld", x->prompt_len, x->depth);
            compare_key_prefill(r, i, o->key, sizeof o->key);
            o->t = &x->measured;
            o->tokens_per_s = x->tokens_per_s;
            o->context = x->depth;
        } else if (sec == CMP_BATCH) { /* batched steps: judged on the raw ratio */
            const struct report_batch *x = &r->batch[i];
            snprintf(o->cells, sizeof o->cells, "| %ld | %ld | %s | %s |", x->batch, x->context, x->backend,
                     x->dtype);
            snprintf(o->label, sizeof o->label, "batch %ld at context %ld (%s, %s)", x->batch, x->context,
                     x->backend, x->dtype);
            compare_key_batch(r, i, o->key, sizeof o->key);
            o->t = &x->measured;
            o->tokens_per_s = x->tokens_per_s;
            o->context = x->context;
        } else {
            const struct report_sampler *x = &r->sampler[i];
            snprintf(o->cells, sizeof o->cells, "| %s | %s | %ld |", x->variant, x->row_kind, x->vocab);
            snprintf(o->label, sizeof o->label, "%s/%s/%ld", x->variant, x->row_kind, x->vocab);
            compare_key_sampler(r, i, o->key, sizeof o->key);
            o->t = &x->measured;
        }
    }
    return k;
}

static const struct cmp_row *cmp_find(const struct cmp_row *rows, int n, const char *cells) {
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].cells, cells) == 0) return &rows[i];
    return NULL;
}

__attribute__((format(printf, 3, 4))) static void append(char *buf, size_t len, const char *fmt, ...) {
    size_t used = strlen(buf);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* Why the rows of a section cannot be compared between the runs; "" when they can. Threads and ISA change
 * every row; model, weight and KV dtypes change the blocks and steps; the blocks also need one context. */
static void section_why(const struct run_report *a, const struct run_report *b, enum cmp_section sec,
                        char *why, size_t len) {
    why[0] = '\0';
#define WHY(cond, fmt, ...)                                                                                  \
    do {                                                                                                     \
        if (cond) append(why, len, "%s" fmt, why[0] ? "; " : "", __VA_ARGS__);                               \
    } while (0)
    if (sec == CMP_BLOCKS)
        WHY(a->blocks_context != b->blocks_context, "context %ld vs %ld", a->blocks_context,
            b->blocks_context);
    if (sec != CMP_SAMPLER) {
        WHY(strcmp(a->model.name, b->model.name) != 0, "model %s vs %s", a->model.name, b->model.name);
        WHY(strcmp(a->prov.dtype, b->prov.dtype) != 0, "dtype %s vs %s", a->prov.dtype, b->prov.dtype);
        WHY(strcmp(a->prov.weights_conversion, b->prov.weights_conversion) != 0, "weights %s", "mix differs");
        WHY(strcmp(a->prov.kv_dtype, b->prov.kv_dtype) != 0, "KV %s vs %s", a->prov.kv_dtype,
            b->prov.kv_dtype);
    }
    WHY(a->prov.threads != b->prov.threads, "threads %d vs %d", a->prov.threads, b->prov.threads);
    WHY(strcmp(compare_run_isa(a), compare_run_isa(b)) != 0, "ISA %s vs %s",
        compare_run_isa(a)[0] ? compare_run_isa(a) : "unknown",
        compare_run_isa(b)[0] ? compare_run_isa(b) : "unknown");
#undef WHY
}

/* A paired row: the medians' ratios and the row's verdict (from the samples), or why there is none. */
struct cmp_pair {
    const struct cmp_row *a, *b;
    const char *why; /* not comparable: the section's reason; NULL when comparable */
    double ratio;    /* B/A of the medians */
    double norm;     /* ratio x (B's read GB/s / A's): NaN unless memory-bound with both bandwidths */
    const struct compare_row_verdict *v; /* NULL: not comparable, or no samples of the row on a side */
};

static void pair_judge(struct cmp_pair *p, const char *why, const struct compare_verdicts *v) {
    const struct timing_stats *ta = p->a->t, *tb = p->b->t;
    p->why = why[0] ? why : NULL;
    p->ratio = report_ratio(tb->median_s, ta->median_s);
    double k = p->a->memory_bound ? report_ratio(p->b->read_gbs, p->a->read_gbs) : NAN;
    p->norm = p->ratio * k;
    p->v = p->why || !v ? NULL : compare_verdicts_find(v, p->a->key);
}

/* The ratio a pair's verdict rests on: the samples' (normalised or raw), else the medians'. */
static double pair_ratio(const struct cmp_pair *p) {
    if (p->v) return p->v->on_norm ? p->v->norm : p->v->raw;
    return p->ratio;
}

/* Every section's rows of A, B and their pairs, computed once for the tables, the findings and the plot. */
struct cmp_all {
    struct cmp_row ra[CMP_SECTIONS][REPORT_MAX_SAMPLER], rb[CMP_SECTIONS][REPORT_MAX_SAMPLER];
    int na[CMP_SECTIONS], nb[CMP_SECTIONS];
    struct cmp_pair pairs[CMP_SECTIONS][REPORT_MAX_SAMPLER];
    int np[CMP_SECTIONS];
    char why[CMP_SECTIONS][160];
};

static void cmp_all_fill(const struct run_report *a, const struct run_report *b,
                         const struct compare_verdicts *v, struct cmp_all *c) {
    for (int s = 0; s < CMP_SECTIONS; s++) {
        c->na[s] = cmp_rows(a, (enum cmp_section)s, c->ra[s]);
        c->nb[s] = cmp_rows(b, (enum cmp_section)s, c->rb[s]);
        section_why(a, b, (enum cmp_section)s, c->why[s], sizeof c->why[s]);
        c->np[s] = 0;
        for (int i = 0; i < c->na[s]; i++) {
            const struct cmp_row *y = cmp_find(c->rb[s], c->nb[s], c->ra[s][i].cells);
            if (!y) continue;
            struct cmp_pair *p = &c->pairs[s][c->np[s]++];
            p->a = &c->ra[s][i], p->b = y;
            pair_judge(p, c->why[s], v);
        }
    }
}

static void md_only(FILE *f, const char *which, const struct cmp_row *x, int nx, const struct cmp_row *y,
                    int ny) {
    char only[1024] = "";
    for (int i = 0; i < nx; i++)
        if (!cmp_find(y, ny, x[i].cells)) append(only, sizeof only, "%s%s", only[0] ? ", " : "", x[i].label);
    if (only[0]) fprintf(f, "Only in %s: %s.\n\n", which, only);
}

/* One section: a row per identity found in both runs, in A's order, then the rows found in only one. */
static void md_section(FILE *f, const struct cmp_all *c, enum cmp_section sec, const char *heading,
                       double scale) {
    fputs(heading, f);
    for (int i = 0; i < c->np[sec]; i++) {
        const struct cmp_pair *p = &c->pairs[sec][i];
        char va[REPORT_FMT_LEN], vb[REPORT_FMT_LEN], ra[REPORT_FMT_LEN], rn[REPORT_FMT_LEN];
        report_fmt_md(p->a->t->median_s, scale, 1, va);
        report_fmt_md(p->b->t->median_s, scale, 1, vb);
        report_fmt_md(p->ratio, 1, 3, ra);
        report_fmt_md(p->norm, 1, 3, rn);
        fprintf(f, "%s %s | %s |", p->a->cells, va, vb);
        if (p->why)
            fprintf(f, " — | not comparable (%s) |", p->why);
        else
            fprintf(f, " %s | %s |", ra, verdict_md(p->v));
        if (sec == CMP_STEPS || sec == CMP_BATCH || sec == CMP_PREFILL) {
            char ta[REPORT_FMT_LEN], tb[REPORT_FMT_LEN];
            report_fmt_md(p->a->tokens_per_s, 1, 2, ta);
            report_fmt_md(p->b->tokens_per_s, 1, 2, tb);
            fprintf(f, " %s | %s |", ta, tb);
        }
        if (p->why)
            fputs(" — | — |\n", f);
        else
            fprintf(f, " %s | %s |\n", rn, p->v ? (p->v->on_norm ? "normalised" : "raw") : "—");
    }
    fputc('\n', f);
    md_only(f, "A", c->ra[sec], c->na[sec], c->rb[sec], c->nb[sec]);
    md_only(f, "B", c->rb[sec], c->nb[sec], c->ra[sec], c->na[sec]);
}

/* "0.900 [0.880, 0.920] (normalised)": the ratio a pair's verdict rests on, its interval, and which. */
static void pair_ratio_words(const struct cmp_pair *p, char *out, size_t len) {
    char r[REPORT_FMT_LEN];
    report_fmt_md(pair_ratio(p), 1, 3, r);
    if (!p->v) {
        snprintf(out, len, "%s (medians)", r);
        return;
    }
    bool n = p->v->on_norm;
    snprintf(out, len, "%s [%.3f, %.3f]%s", r, n ? p->v->norm_lo : p->v->raw_lo,
             n ? p->v->norm_hi : p->v->raw_hi, n ? " (normalised)" : "");
}

void compare_findings_compute(const struct run_report *a, const struct run_report *b,
                              const struct compare_verdicts *v, struct report_findings *out) {
    struct cmp_all *c = malloc(sizeof *c);
    memset(out, 0, sizeof *out);
    if (!c) {
        report_findings_add(out, "Findings unavailable: out of memory.");
        return;
    }
    cmp_all_fill(a, b, v, c);
    /* the headline rows, each with its verdict */
    char heads[REPORT_FINDING_LEN] = "";
    for (int s = 0; s < CMP_SECTIONS; s++)
        for (int i = 0; i < c->np[s]; i++) {
            const struct cmp_pair *p = &c->pairs[s][i];
            if (!p->v || !p->v->headline) continue;
            char w[96];
            pair_ratio_words(p, w, sizeof w);
            append(heads, sizeof heads, "%s%s %s: %s", heads[0] ? "; " : "", p->a->label, w,
                   stats_verdict_name(p->v->verdict));
        }
    report_findings_add(out, "Headline (B/A of the time, below 1: B faster, 95 %% interval): %s.",
                        heads[0] ? heads : "no headline row has samples on both sides");
    /* the other rows decided each way, then how many were found unchanged or undecided */
    struct report_namelist faster = {.cap = 8}, slower = {.cap = 8};
    int same = 0, judged = 0, not_comparable = 0, undecided = 0;
    for (int s = 0; s < CMP_SECTIONS; s++)
        for (int i = 0; i < c->np[s]; i++) {
            const struct cmp_pair *p = &c->pairs[s][i];
            if (p->why) {
                not_comparable++;
                continue;
            }
            if (!p->v) continue;
            judged++;
            undecided += p->v->verdict == STATS_INCONCLUSIVE;
            same += p->v->verdict == STATS_NO_CHANGE;
            if (p->v->headline) continue;
            char w[96];
            pair_ratio_words(p, w, sizeof w);
            if (p->v->verdict == STATS_FASTER) report_namelist_add(&faster, "%s %s", p->a->label, w);
            if (p->v->verdict == STATS_SLOWER) report_namelist_add(&slower, "%s %s", p->a->label, w);
        }
    char names[REPORT_FINDING_LEN / 2];
    report_namelist_text(&faster, names, sizeof names);
    report_findings_add(out, "Other rows faster (B/A): %s.", faster.count ? names : "none");
    report_namelist_text(&slower, names, sizeof names);
    report_findings_add(out, "Other rows slower (B/A): %s.", slower.count ? names : "none");
    report_findings_add(out,
                        "No change (within %.1f %%): %d of the %d rows decided on samples; inconclusive: %d.",
                        100 * (v ? v->opts.threshold : COMPARE_THRESHOLD_DEFAULT), same, judged, undecided);
    if (not_comparable) {
        char why[REPORT_FINDING_LEN / 2] = "";
        static const char *const sec_name[CMP_SECTIONS] = {"blocks", "decode steps", "sampler rows",
                                                           "batch rows", "prefill rows"};
        for (int s = 0; s < CMP_SECTIONS; s++)
            if (c->why[s][0] && c->np[s])
                append(why, sizeof why, "%s%s (%s)", why[0] ? "; " : "", sec_name[s], c->why[s]);
        report_findings_add(out, "**Not comparable, no verdict:** %d rows: %s.", not_comparable, why);
    }
    double ga = run_read_gbs(a), gb = run_read_gbs(b);
    char sa[REPORT_FMT_LEN], sb[REPORT_FMT_LEN], sr[REPORT_FMT_LEN];
    report_fmt_md(ga, 1, 1, sa);
    report_fmt_md(gb, 1, 1, sb);
    report_fmt_md(report_ratio(gb, ga), 1, 3, sr);
    if (isfinite(ga) && isfinite(gb))
        report_findings_add(out,
                            "Machine load: paired read A %s GB/s, B %s GB/s (B/A %s); the memory-bound rows "
                            "(weight blocks, attention, steps) are judged on each repetition's time x the "
                            "read next to it (normalised).",
                            sa, sb, sr);
    else
        report_findings_add(out,
                            "Machine load: no paired read bandwidth in %s; every verdict rests on the "
                            "raw B/A.",
                            isfinite(ga)   ? "B"
                            : isfinite(gb) ? "A"
                                           : "either run");
    free(c);
}

static void write_md(FILE *f, const struct cmp_all *c, const struct run_report *a, const struct run_report *b,
                     const char *label_a, const char *label_b, int n_a, int n_b, const char *mismatch,
                     const struct compare_verdicts *v) {
    struct report_findings findings;
    compare_findings_compute(a, b, v, &findings);
    fputs("# forge-roofline compare\n\n## Findings\n\n", f);
    report_findings_md(&findings, f);
    md_run_line(f, "A", label_a, a, n_a);
    md_run_line(f, "B", label_b, b, n_b);
    fputc('\n', f);
    if (mismatch) fprintf(f, "> **Warning:** compared with --force although %s.\n\n", mismatch);
    if (a->prov.damon_on != b->prov.damon_on)
        fprintf(f, "> **Note:** %s ran with DAMON on and %s without: %s.\n\n", a->prov.damon_on ? "A" : "B",
                a->prov.damon_on ? "B" : "A", mm_state_damon_note());
    if (a->prov.core_speed_low < CORE_SPEED_MOVED || b->prov.core_speed_low < CORE_SPEED_MOVED)
        fputs("> **Note:** a run marked \"core speed moved\" had a core whose arithmetic ran slow at some "
              "probe (its report's setup line): its compute-bound rows may read low, which the paired read "
              "does not correct.\n\n",
              f);
    if (a->prov.read_kernel[0] && b->prov.read_kernel[0] &&
        strcmp(a->prov.read_kernel, b->prov.read_kernel) != 0)
        fprintf(f,
                "> **Note:** the runs read DRAM with different kernels (A: %s, B: %s; each run takes the "
                "fastest it has): the paired reads that normalize memory-bound rows are not the same "
                "loop.\n\n",
                a->prov.read_kernel, b->prov.read_kernel);
    if (v) compare_verdicts_md(f, v);
    if (n_a > 1 || n_b > 1)
        fputs("Pooled runs: in the tables below a row's median is the median of the runs' medians.\n\n", f);
    fputs("The tables below give each row's medians and B/A of them (below 1: B faster) beside the row's "
          "verdict from the samples above. Memory-bound rows (weight blocks, attention, steps) also get the "
          "medians' B/A times B's paired read GB/s over A's. A row whose context, model, dtype, ISA or "
          "thread count differs between the runs is not comparable and gets no verdict.\n\n",
          f);
    char heading[320];
    snprintf(heading, sizeof heading,
             "## Blocks (context A %ld, B %ld)\n\n| block | A µs | B µs | B/A | verdict | B/A normalized "
             "| rests on |\n|---|--:|--:|--:|---|--:|---|\n",
             a->blocks_context, b->blocks_context);
    md_section(f, c, CMP_BLOCKS, heading, 1e6);
    md_section(f, c, CMP_STEPS,
               "## Decode steps\n\n| context | A ms | B ms | B/A | verdict | A tokens/s | B tokens/s | "
               "B/A normalized | rests on |\n|--:|--:|--:|--:|---|--:|--:|--:|---|\n",
               1e3);
    md_section(f, c, CMP_SAMPLER,
               "## Sampler\n\n| variant | row kind | vocab | A µs | B µs | B/A | verdict | B/A normalized "
               "| rests on |\n|---|---|--:|--:|--:|--:|---|--:|---|\n",
               1e6);
    if (a->n_batch > 0 && b->n_batch > 0) /* batch sweeps: only when both runs had one */
        md_section(f, c, CMP_BATCH,
                   "## Batch sweep\n\n| B | context | backend | weights | A ms | B ms | B/A | verdict | A "
                   "tokens/s | B tokens/s | B/A normalized | rests on "
                   "|\n|--:|--:|---|---|--:|--:|--:|---|--:|--:|--:"
                   "|---|\n",
                   1e3);
    if (a->n_prefill > 0 && b->n_prefill > 0) /* prompt processing: only when both runs had it */
        md_section(
            f, c, CMP_PREFILL,
            "## Prompt processing\n\n| prompt | depth | weights | A ms | B ms | B/A | verdict | A "
            "tokens/s | B tokens/s | B/A normalized | rests on |\n|--:|--:|---|--:|--:|--:|---|--:|--:|--:"
            "|---|\n",
            1e3);
    fputs("## Plot\n\n![compare](compare.png)  \n[compare.svg](compare.svg)\n", f);
}

/* ---------- plot inputs ---------- */

/* Intensity and GFLOP/s of a row for log axes: NaN unless positive. */
static double positive_ratio(double n, double d) {
    return n > 0 ? report_ratio(n, d) : NAN;
}

static void gp_val(FILE *f, double v) {
    char buf[REPORT_FMT_LEN];
    report_fmt_exact(v, buf);
    fprintf(f, " %s", buf[0] ? buf : "NaN");
}

static int write_plot_inputs(FILE *vars, FILE *pts, const struct cmp_all *c, const struct run_report *a,
                             const struct run_report *b, const char *label_a, const char *label_b) {
    fputs("# Written by forge-roofline compare for scripts/compare.gp.\ntitle_a = ", vars);
    char t[600];
    snprintf(t, sizeof t, "A: %s (%s)", label_a,
             a->prov.git_commit[0] ? a->prov.git_commit : a->prov.utc_stamp);
    report_gp_str(vars, t);
    fputs("\ntitle_b = ", vars);
    snprintf(t, sizeof t, "B: %s (%s)", label_b,
             b->prov.git_commit[0] ? b->prov.git_commit : b->prov.utc_stamp);
    report_gp_str(vars, t);
    fputs("\nrun_title = ", vars);
    snprintf(t, sizeof t, "%s, %s weights, %d threads, %s", a->model.name, a->prov.dtype, a->prov.threads,
             a->prov.cpu_model);
    report_gp_str(vars, t);
    fputc('\n', vars);
    report_gp_roofs(vars, a, "a_");
    report_gp_roofs(vars, b, "b_");

    fputs(
        "# row name ai_a gflops_a ai_b gflops_b ratio_b_over_a verdict(-1 no samples,0 inconclusive,1 no "
        "change,"
        "2 faster,3 slower)\n"
        "# the ratio is the one the verdict rests on (normalized for memory-bound rows when both runs have a "
        "paired read); NaN when the row is not comparable\n",
        pts);
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0, rlo = INFINITY, rhi = 0;
    int n = 0;
    for (int i = 0; i < c->np[CMP_BLOCKS]; i++) {
        const struct cmp_pair *p = &c->pairs[CMP_BLOCKS][i];
        const struct report_block *x = &a->blocks[p->a->index], *y = &b->blocks[p->b->index];
        double ai_a = positive_ratio(x->flops, x->bytes),
               gf_a = positive_ratio(x->flops, x->measured.median_s) / 1e9;
        double ai_b = positive_ratio(y->flops, y->bytes),
               gf_b = positive_ratio(y->flops, y->measured.median_s) / 1e9;
        double rt = p->why ? NAN : pair_ratio(p);
        fprintf(pts, "%d \"%s%s\"", n++, x->name,
                p->why                  ? " (not comparable)"
                : p->v && p->v->on_norm ? " (normalised)"
                                        : "");
        gp_val(pts, ai_a);
        gp_val(pts, gf_a);
        gp_val(pts, ai_b);
        gp_val(pts, gf_b);
        gp_val(pts, rt);
        fprintf(pts, " %d\n", p->v ? (int)p->v->verdict : -1);
        double ai[2] = {ai_a, ai_b}, gf[2] = {gf_a, gf_b};
        for (int k = 0; k < 2; k++)
            if (isfinite(ai[k]) && isfinite(gf[k])) {
                xlo = fmin(xlo, ai[k]), xhi = fmax(xhi, ai[k]);
                ylo = fmin(ylo, gf[k]), yhi = fmax(yhi, gf[k]);
            }
        if (isfinite(rt) && rt > 0) rlo = fmin(rlo, rt), rhi = fmax(rhi, rt);
    }
    double bw = INFINITY, peak = 0;
    for (int i = 0; i < a->n_ceilings; i++) {
        const struct report_ceiling *x = &a->ceilings[i];
        if (!isfinite(x->value) || x->value <= 0 || x->one_core) continue;
        if (x->kind == REPORT_CEILING_BANDWIDTH) bw = fmin(bw, x->value);
        if (x->kind == REPORT_CEILING_COMPUTE) peak = fmax(peak, x->value);
    }
    if (!isfinite(xlo)) xlo = 0.1, xhi = 10, ylo = 0.1, yhi = 100;
    if (peak > 0) yhi = fmax(yhi, peak);
    if (peak > 0 && isfinite(bw)) xhi = fmax(xhi, peak / bw);
    if (isfinite(bw)) ylo = fmin(ylo, bw * xlo / 3);
    if (!isfinite(rlo)) rlo = rhi = 1;
    rlo = fmin(rlo, 1.0), rhi = fmax(rhi, 1.0);
    fprintf(vars,
            "n_rows = %d\nx_lo = %.6g\nx_hi = %.6g\ny_lo = %.6g\ny_hi = %.6g\nr_lo = %.6g\nr_hi = %.6g\n", n,
            xlo / 4, xhi * 4, ylo / 4, yhi * 3, rlo / 1.25, rhi * 1.25);
    return 0;
}

int compare_write(const struct run_report *a, const struct run_report *b, const char *label_a,
                  const char *label_b, int n_a, int n_b, const char *mismatch,
                  const struct compare_verdicts *v, const char *out_dir, struct fr_err *err) {
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST)
        return fr_err_set(err, "cannot create '%s': %s", out_dir, strerror(errno));
    struct cmp_all *c = malloc(sizeof *c);
    if (!c) return fr_err_set(err, "out of memory comparing runs");
    cmp_all_fill(a, b, v, c);
    int rc = -1;
    FILE *md = report_file_open(out_dir, "compare.md", err), *vars = NULL, *pts = NULL, *forest = NULL;
    if (!md) goto done;
    write_md(md, c, a, b, label_a, label_b, n_a, n_b, mismatch, v);
    if (report_file_close(md, out_dir, "compare.md", err) != 0) goto done;
    if (!(vars = report_file_open(out_dir, "compare_vars.gp", err))) goto done;
    if (!(pts = report_file_open(out_dir, "compare_points.dat", err))) {
        fclose(vars);
        goto done;
    }
    write_plot_inputs(vars, pts, c, a, b, label_a, label_b);
    fprintf(vars, "threshold = %.6g\n", v ? v->opts.threshold : COMPARE_THRESHOLD_DEFAULT);
    if (!(forest = report_file_open(out_dir, "compare_forest.dat", err))) {
        fclose(vars);
        fclose(pts);
        goto done;
    }
    if (v)
        compare_verdicts_forest(forest, vars, v);
    else
        fputs("n_forest = 0\nf_lo = 0.9\nf_hi = 1.1\n", vars);
    rc = report_file_close(vars, out_dir, "compare_vars.gp", err);
    if (report_file_close(pts, out_dir, "compare_points.dat", err) != 0) rc = -1;
    if (report_file_close(forest, out_dir, "compare_forest.dat", err) != 0) rc = -1;
done:
    free(c);
    return rc;
}
