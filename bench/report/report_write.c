/* The output contract (docs/run-folder.md), written from struct run_report: run.json (cJSON, schema
 * forge-roofline/1), the CSV files, report.md, the stdout summary, and the plot inputs that
 * scripts/plots.sh reads. Unmeasured values are null / empty / "n/a", never a number; a row above its roof
 * is called an accounting error in words. Checked in tests/test_report_write.c (keys, headers, rows, nulls,
 * flags) and tests/test_report_plots.c (images). */
#include "bench/report/report_write.h"

#include "bench/report/findings.h"
#include "bench/report/report_batch.h"
#include "bench/report/report_prefill.h"
#include "bench/report/report_counted.h"
#include "bench/report/report_csv.h"
#include "bench/report/report_json.h"
#include "bench/report/report_roofs.h"
#include "roofline/core_speed.h"
#include "roofline/mm_state.h"
#include "roofline/rep_counts.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------- small helpers ---------- */

static int write_json(const struct run_report *r, const char *dir, struct fr_err *err) {
    char *text = report_json_string(r);
    if (!text) return fr_err_set(err, "out of memory building run.json");
    FILE *f = report_file_open(dir, "run.json", err);
    if (!f) {
        free(text);
        return -1;
    }
    fputs(text, f);
    fputc('\n', f);
    free(text);
    return report_file_close(f, dir, "run.json", err);
}

/* ---------- CSV ---------- */

static void csv_num(FILE *f, double v) {
    char buf[REPORT_FMT_LEN];
    report_fmt_exact(v, buf);
    fprintf(f, ",%s", buf);
}

/* One column per counter event (sum over threads), then one per event for the largest single thread. */
static void csv_counter_header(FILE *f, const struct report_counters *c) {
    for (int e = 0; e < c->n_events; e++) fprintf(f, ",%s", c->events[e].name);
    for (int e = 0; e < c->n_events; e++) fprintf(f, ",%s_thread_max", c->events[e].name);
}
static void csv_counter_values(FILE *f, const struct report_counters *c, const double *sum,
                               const double *max) {
    for (int e = 0; e < c->n_events; e++) csv_num(f, sum[e]);
    for (int e = 0; e < c->n_events; e++) csv_num(f, max[e]);
}

/* blocks.csv adds the counter columns; steps.csv one per block (seconds in the real step), then the counter
 * columns. */
static int write_csvs(const struct run_report *r, const char *dir, struct fr_err *err) {
    FILE *f = report_file_open(dir, "blocks.csv", err);
    if (!f) return -1;
    report_csv_header(f, REPORT_TABLE_BLOCK);
    csv_counter_header(f, &r->counters);
    fputc('\n', f);
    for (int i = 0; i < r->n_blocks; i++) {
        report_csv_row(f, REPORT_TABLE_BLOCK, &r->blocks[i]);
        csv_counter_values(f, &r->counters, r->blocks[i].counters, r->blocks[i].counters_max);
        fputc('\n', f);
    }
    if (report_file_close(f, dir, "blocks.csv", err) != 0 || !(f = report_file_open(dir, "steps.csv", err)))
        return -1;
    report_csv_header(f, REPORT_TABLE_STEP);
    for (int b = 0; b < BLOCK_COUNT; b++) fprintf(f, ",%s_s", block_name((enum block_id)b));
    csv_counter_header(f, &r->counters);
    fputc('\n', f);
    for (int i = 0; i < r->n_steps; i++) {
        report_csv_row(f, REPORT_TABLE_STEP, &r->steps[i]);
        for (int b = 0; b < BLOCK_COUNT; b++) csv_num(f, r->steps[i].block_s[b]);
        csv_counter_values(f, &r->counters, r->steps[i].counters, r->steps[i].counters_max);
        fputc('\n', f);
    }
    if (report_file_close(f, dir, "steps.csv", err) != 0 ||
        report_csv_write_table(dir, "sampler.csv", REPORT_TABLE_SAMPLER, r->sampler, sizeof r->sampler[0],
                               r->n_sampler, err) != 0)
        return -1;
    return report_csv_write_table(dir, "ceilings.csv", REPORT_TABLE_CEILING, r->ceilings,
                                  sizeof r->ceilings[0], r->n_ceilings, err);
}

int report_write_data(const struct run_report *r, const char *dir, struct fr_err *err) {
    if (write_json(r, dir, err) || write_csvs(r, dir, err) || report_counted_write_csv(r, dir, err) ||
        report_batch_write_csv(r, dir, err) || report_prefill_write_csv(r, dir, err) ||
        report_plots_write_inputs(r, dir, err))
        return -1;
    return 0;
}

/* ---------- markdown ---------- */

/* A noisy row says why: its median's interval, relative to the median (the absolute bounds are in the CSV
 * and run.json as ci_lo_s and ci_hi_s), and its coverage. */
static void md_flags(char *out, size_t len, const struct timing_stats *t, bool above, int disturbed_reps,
                     unsigned causes) {
    char why[192] = "";
    const int kept = report_disturbed_kept(t, disturbed_reps);
    if (kept > 0) { /* said with its count and cause, not as mere noise */
        char words[64] = "";
        rep_counts_cause_text(causes, words, sizeof words);
        snprintf(why, sizeof why, "**%d of %d reps disturbed%s%s%s, kept: fewer than %d clean**", kept,
                 t->reps, words[0] ? " (" : "", words, words[0] ? ")" : "", TIMING_MIN_CLEAN_REPS);
    } else if (t->noisy) {
        char lo[REPORT_FMT_LEN], hi[REPORT_FMT_LEN], lv[REPORT_FMT_LEN];
        report_fmt_md(report_ratio(t->ci_lo_s, t->median_s) - 1, 100.0, 1, lo);
        report_fmt_md(report_ratio(t->ci_hi_s, t->median_s) - 1, 100.0, 1, hi);
        report_fmt_md(t->ci_level, 100.0, 0, lv);
        bool narrow = 0.5 * (t->ci_hi_s - t->ci_lo_s) <= TIMING_NOISY_HALF_WIDTH * t->median_s;
        if (narrow) /* flagged by timing_stats_compute for its repetitions, not for its interval */
            snprintf(why, sizeof why, "noisy (fewer than %d undisturbed reps: all %d kept)",
                     TIMING_MIN_CLEAN_REPS, t->reps);
        else
            snprintf(why, sizeof why, "noisy (%s %% CI of the median %s %% / +%s %%)", lv, lo, hi);
    }
    char excl[48] = "";
    if (t->excluded_reps > 0) snprintf(excl, sizeof excl, "%d disturbed rep(s) left out", t->excluded_reps);
    snprintf(out, len, "%s%s%s%s%s", above ? "**above roof: accounting error**" : "",
             above && why[0] ? "; " : "", why, (above || why[0]) && excl[0] ? "; " : "", excl);
}

static void md_setup(FILE *f, const struct run_report *r) {
    const struct report_provenance *p = &r->prov;
    char res[REPORT_FMT_LEN];
    report_fmt_md(p->timer_resolution_s, 1e9, 0, res);
    fprintf(f,
            "- Setup: forge-roofline %s%s%s%s on %s (%s), %s, %d thread%s, weights %s, KV cache %s, gemv %s, "
            "isa %s, timer resolution %s ns, %s%s.\n",
            p->version, p->git_commit[0] ? " (" : "", p->git_commit, p->git_commit[0] ? ")" : "", p->host,
            p->cpu_model[0] ? p->cpu_model : "CPU unknown", p->topology[0] ? p->topology : "topology unknown",
            p->threads, p->threads == 1 ? "" : "s", p->dtype, p->kv_dtype, p->gemv_backend,
            p->isa[0] ? p->isa : "unknown", res, p->utc_stamp,
            p->quick ? ", quick run (fewer repetitions)" : "");
    if (p->gemv_threads[0]) fprintf(f, "- Matvec threads: %s.\n", p->gemv_threads);
    if (p->blas_core[0]) fprintf(f, "- OpenBLAS (the sgemm ceiling, the OpenBLAS rows): %s.\n", p->blas_core);
    if (p->mm_state[0])
        fprintf(f, "- Memory management: %s.%s%s%s\n", p->mm_state, p->damon_on ? " " : "",
                p->damon_on ? mm_state_damon_note() : "", p->damon_on ? "." : "");
    if (p->core_speed[0]) {
        char low[96];
        core_speed_low_words(p->core_speed_low, low, sizeof low);
        fprintf(f, "- Core speed: %s%s.\n", p->core_speed, low);
    }
    if (p->weights_source[0] && p->weights_file[0])
        fprintf(f, "- Weights: %s (%s, sha256 %s%s%s).\n", p->weights_file, p->weights_format,
                p->weights_sha256, p->weights_conversion[0] ? "; " : "", p->weights_conversion);
    else if (p->weights_source[0])
        fprintf(f, "- Weights: %s%s%s.\n", p->weights_source, p->weights_conversion[0] ? ", " : "",
                p->weights_conversion);
    if (p->sampler_logits[0]) fprintf(f, "- Sampler rows of the steps sample %s.\n", p->sampler_logits);
    for (int i = 0; i < r->n_fidelity; i++) {
        const struct report_fidelity *q = &r->fidelity[i];
        if (i == 0) fprintf(f, "- Quantised vs bf16 decode (measured: %s):", r->fidelity_source);
        fprintf(f, "%s %s top-1 agrees %d/%d, KL mean %.3g, max %.3g nats", i ? ";" : "", q->dtype,
                q->top1_agree, q->steps, q->kl_mean, q->kl_max);
        if (i + 1 == r->n_fidelity) fputs(".\n", f);
    }
    if (p->plan[0]) fprintf(f, "- Repetitions%s: %s.\n", p->quick ? " (quick run)" : "", p->plan);
    if (p->lockstep[0]) fprintf(f, "- Lockstep: %s.\n", p->lockstep);
    const struct report_model *m = &r->model;
    char params[REPORT_FMT_LEN], wb[REPORT_FMT_LEN];
    report_fmt_md(m->params, 1e-6, 1, params);
    report_fmt_md(m->weight_bytes, 1e-9, 3, wb);
    fprintf(
        f,
        "- Model: %s, %s M parameters, hidden %d, intermediate %d, %d layers, %d query / %d KV heads of %d, "
        "vocab %d, %s embeddings; %s GB of weights per decode step.\n",
        m->name, params, m->hidden, m->intermediate, m->n_layers, m->n_heads, m->n_kv_heads, m->head_dim,
        m->vocab, m->tied_embeddings ? "tied" : "untied", wb);
}

/* The ceiling's name without the marks of its variants ("roof_", "_1core"): the key that pairs them. */
static void ceiling_base(const char *name, char *out, size_t len) {
    const char *n = strncmp(name, "roof_", 5) == 0 ? name + 5 : name, *one = strstr(n, "_1core");
    snprintf(out, len, "%.*s%s", one ? (int)(one - n) : (int)strlen(n), n, one ? one + 6 : "");
}

/* One row per ceiling: its all-threads best, its one-core best and the roof drawn from it (the medians,
 * minima and maxima are in ceilings.csv and run.json). */
static void md_ceilings(FILE *f, const struct run_report *r) {
    fputs(
        "| ceiling | unit | all threads | one core | roof | reps | notes |\n|---|---|--:|--:|--:|--:|---|\n",
        f);
    char base[REPORT_NAME_LEN], other[REPORT_NAME_LEN];
    const char *last_why = ""; /* a reason shared by consecutive rows (the matrix engine's) is said once */
    int rows = 0;
    for (int i = 0; i < r->n_ceilings; i++) {
        const struct report_ceiling *c = &r->ceilings[i], *one = NULL, *roof = NULL;
        ceiling_base(c->name, base, sizeof base);
        bool first = true; /* the first of its name's variants prints the row */
        for (int k = 0; k < r->n_ceilings; k++) {
            const struct report_ceiling *d = &r->ceilings[k];
            ceiling_base(d->name, other, sizeof other);
            if (strcmp(base, other) != 0) continue;
            if (k < i) first = false;
            if (strncmp(d->name, "roof_", 5) == 0)
                roof = d;
            else if (d->one_core)
                one = d;
        }
        if (!first) continue;
        const struct report_ceiling *all = strncmp(c->name, "roof_", 5) != 0 && !c->one_core ? c : NULL;
        char v[3][REPORT_FMT_LEN], reps[32], notes[200];
        report_fmt_md(all ? all->value : NAN, 1, 1, v[0]);
        report_fmt_md(one ? one->value : NAN, 1, 1, v[1]);
        report_fmt_md(roof ? roof->value : (all && all->roof ? all->value : NAN), 1, 1, v[2]);
        snprintf(reps, sizeof reps, one && all ? "%d / %d" : "%d",
                 all   ? all->reps
                 : one ? one->reps
                       : 0,
                 one ? one->reps : 0);
        const struct report_ceiling *w = all ? all : one ? one : c;
        const char *why = w->why[0] && strcmp(w->why, last_why) == 0 ? "the same" : w->why;
        last_why = w->why;
        snprintf(notes, sizeof notes, "%s%s%s", (all && all->noisy) || (one && one->noisy) ? "noisy" : "",
                 ((all && all->noisy) || (one && one->noisy)) && why[0] ? "; " : "", why);
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n", base, report_ceiling_unit(c->kind), v[0], v[1],
                v[2], reps, notes);
        rows++;
    }
    if (rows == 0) fputs("| (none measured) | | | | | | |\n", f);
    fputs("\nGB = 1e9 bytes. Each figure is the best of its repetitions (STREAM's rule); \"roof\" is the one "
          "drawn in the roofline plot. Medians, minima and maxima: ceilings.csv.",
          f);
    if (r->prov.roof_notes[0]) fprintf(f, " Roofs: %s", r->prov.roof_notes);
    fputs("\n\n", f);
}

static void md_blocks(FILE *f, const struct run_report *r, bool full) {
    fprintf(f, "## Where the time goes: the blocks of one step (context %ld)\n\n", r->blocks_context);
    if (full)
        fputs("| block | share of step | predicted µs | measured µs | efficiency | bound | format | "
              "paired read GB/s | vs paired read | own bytes read GB/s | vs own bytes read | flags |\n"
              "|---|--:|--:|--:|--:|---|---|--:|--:|--:|--:|---|\n",
              f);
    else
        fputs(
            "| block | predicted µs | measured µs | efficiency | bound | vs paired read | vs own bytes read "
            "| flags |\n|---|--:|--:|--:|---|--:|--:|---|\n",
            f);
    double sum_pred = 0, sum_meas = 0;
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        char sh[REPORT_FMT_LEN], pr[REPORT_FMT_LEN], me[REPORT_FMT_LEN], ef[REPORT_FMT_LEN],
            rgbs[REPORT_FMT_LEN], pef[REPORT_FMT_LEN], ogbs[REPORT_FMT_LEN], oef[REPORT_FMT_LEN], flags[320];
        double share = report_block_share(r, b);
        report_fmt_md(share, 100, 1, sh);
        if (isfinite(share)) strncat(sh, " %", sizeof sh - strlen(sh) - 1);
        report_fmt_md(b->predicted_s, 1e6, 1, pr);
        report_fmt_md(b->measured.median_s, 1e6, 1, me);
        report_fmt_pct(b->efficiency, ef);
        report_fmt_md(b->paired_read_gbs, 1, 1, rgbs);
        report_fmt_pct(b->paired_efficiency, pef);
        report_fmt_md(b->own_read_gbs, 1, 1, ogbs);
        report_fmt_pct(b->own_read_efficiency, oef);
        md_flags(flags, sizeof flags, &b->measured, report_is_above_roof(b->above_roof, b->efficiency),
                 b->disturbed_reps, b->disturbed_causes);
        const char *bound = b->bound[0] ? b->bound : "n/a", *format = b->format[0] ? b->format : "n/a";
        if (full)
            fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", b->name, sh, pr, me,
                    ef, bound, format, rgbs, pef, ogbs, oef, flags);
        else
            fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", b->name, pr, me, ef, bound, pef, oef,
                    flags);
        sum_pred += b->predicted_s;
        sum_meas += b->measured.median_s;
    }
    char sp[REPORT_FMT_LEN], sm[REPORT_FMT_LEN];
    report_fmt_md(sum_pred, 1e6, 1, sp);
    report_fmt_md(sum_meas, 1e6, 1, sm);
    if (full)
        fprintf(
            f,
            "| **sum of blocks** | | %s | %s | | | | | | | | |\n\n"
            "share of step = the block's time inside the step at this context; efficiency = predicted / "
            "measured, the prediction being the largest of the block's terms (bytes per memory level at that "
            "level's ceiling, FLOPs at peak FMA, exps, and the overhead floor of its calls, forks and team "
            "barriers), which bound names; a quantised matvec's int8 dot term prices each of its formats on "
            "that format's own measured roof. format = the types of the block's matrices (\"+\" between the "
            "formats of a mixed block), the KV cache's for attention and kv_append, f32 for the rest. A "
            "block that streams from DRAM runs each repetition after an "
            "eviction read: \"vs "
            "paired "
            "read\" = its DRAM GB/s over that read's median, from the same minutes of a shared machine; \"vs "
            "own "
            "bytes read\" = the same over a read of the block's own bytes (its matrices, its KV rows), which "
            "leaves out how fast its pages read (on a VM about 10 %% apart). MFLOP, MB, calls, min, max and "
            "reps, the bytes per level, the floor and every counter of each block: blocks.csv.\n\n",
            sp, sm);
    else
        fprintf(f, "| **sum of blocks** | %s | %s | | | | | |\n\n", sp, sm);
}

static void md_steps(FILE *f, const struct run_report *r) {
    fputs("## How fast: decode steps\n\n"
          "| context | MB read | predicted ms | measured ms | min ms | max ms | reps | tokens/s "
          "| roof tokens/s | efficiency | DRAM GB/s | paired read GB/s | vs paired read "
          "| weights read GB/s | vs weights read | flags |\n"
          "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n",
          f);
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        char mb[REPORT_FMT_LEN], pr[REPORT_FMT_LEN], me[REPORT_FMT_LEN], lo[REPORT_FMT_LEN],
            hi[REPORT_FMT_LEN], tps[REPORT_FMT_LEN], ptps[REPORT_FMT_LEN], ef[REPORT_FMT_LEN],
            gbs[REPORT_FMT_LEN], rgbs[REPORT_FMT_LEN], pef[REPORT_FMT_LEN], wgbs[REPORT_FMT_LEN],
            wef[REPORT_FMT_LEN], flags[320];
        report_fmt_md(s->bytes, 1e-6, 1, mb);
        report_fmt_md(s->predicted_s, 1e3, 3, pr);
        report_fmt_md(s->measured.median_s, 1e3, 3, me);
        report_fmt_md(s->measured.min_s, 1e3, 3, lo);
        report_fmt_md(s->measured.max_s, 1e3, 3, hi);
        report_fmt_md(s->tokens_per_s, 1, 1, tps);
        report_fmt_md(report_ratio(1.0, s->predicted_s), 1, 1, ptps);
        report_fmt_pct(s->efficiency, ef);
        report_fmt_md(s->dram_gbs, 1, 1, gbs);
        report_fmt_md(s->paired_read_gbs, 1, 1, rgbs);
        report_fmt_pct(s->paired_efficiency, pef);
        report_fmt_md(s->weights_read_gbs, 1, 1, wgbs);
        report_fmt_pct(s->weights_read_efficiency, wef);
        md_flags(flags, sizeof flags, &s->measured, report_is_above_roof(s->above_roof, s->efficiency),
                 s->disturbed_reps, s->disturbed_causes);
        fprintf(f, "| %ld | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                s->context, mb, pr, me, lo, hi, s->measured.reps, tps, ptps, ef, gbs, rgbs, pef, wgbs, wef,
                flags);
    }
    if (r->n_steps == 0) fputs("| (none measured) | | | | | | | | | | | | | | | |\n", f);
    fputs(
        "\nefficiency = predicted / measured (the roof's time over the step's); \"vs paired read\" = the "
        "step's "
        "DRAM GB/s over the read kernel's, run alternately with the steps so both see the same load (median "
        "over pairs); \"vs weights read\" = the same over that kernel reading the model's own weights: where "
        "the two differ, the pages differ, not the kernels.",
        f);
    bool weights_skipped = false;
    for (int i = 0; i < r->n_steps; i++)
        weights_skipped |=
            isfinite(r->steps[i].paired_efficiency) && !isfinite(r->steps[i].weights_read_efficiency);
    if (weights_skipped)
        fputs(" No weights read where it says n/a: the weights take less than the paired read's buffer, "
              "so their read would not come from DRAM.",
              f);
    fputs("\n\n", f);
}

/* The sampler at the model's vocabulary (else the largest measured): one row per variant, a median column
 * per row kind. Minima, maxima and the other vocabularies are in sampler.csv and the sampler plot. */
#define MD_SAMPLER_KINDS 4
static void md_sampler(FILE *f, const struct run_report *r) {
    long vocab = 0;
    for (int i = 0; i < r->n_sampler; i++)
        if (r->sampler[i].vocab == r->model.vocab || (vocab != r->model.vocab && r->sampler[i].vocab > vocab))
            vocab = r->sampler[i].vocab;
    const char *kinds[MD_SAMPLER_KINDS];
    int n_kinds = 0, others = 0;
    for (int i = 0; i < r->n_sampler; i++) {
        const struct report_sampler *s = &r->sampler[i];
        int k = 0;
        while (k < n_kinds && strcmp(kinds[k], s->row_kind) != 0) k++;
        if (s->vocab == vocab && k == n_kinds && n_kinds < MD_SAMPLER_KINDS) kinds[n_kinds++] = s->row_kind;
        others += s->vocab != vocab;
    }
    fprintf(f, "## Sampler at vocabulary %ld\n\n| variant |", vocab);
    for (int k = 0; k < n_kinds; k++) fprintf(f, " %s µs |", kinds[k]);
    fputs(" nucleus | reps | flags |\n|---|", f);
    for (int k = 0; k < n_kinds; k++) fputs("--:|", f);
    fputs("--:|--:|---|\n", f);
    for (int i = 0; i < r->n_sampler; i++) {
        const struct report_sampler *s = &r->sampler[i];
        bool first = s->vocab == vocab; /* the variant's first row at this vocabulary prints its line */
        for (int j = 0; j < i && first; j++)
            first = !(r->sampler[j].vocab == vocab && strcmp(r->sampler[j].variant, s->variant) == 0);
        if (!first) continue;
        char nuc[96] = "", reps[96] = "", flags[480] = "";
        fprintf(f, "| %s |", s->variant);
        for (int k = 0; k < n_kinds; k++) {
            const struct report_sampler *t = NULL;
            for (int j = i; j < r->n_sampler && !t; j++)
                if (r->sampler[j].vocab == vocab && strcmp(r->sampler[j].variant, s->variant) == 0 &&
                    strcmp(r->sampler[j].row_kind, kinds[k]) == 0)
                    t = &r->sampler[j];
            char me[REPORT_FMT_LEN], nu[REPORT_FMT_LEN], fl[320];
            report_fmt_md(t ? t->measured.median_s : NAN, 1e6, 1, me);
            report_fmt_md(t && t->nucleus >= 0 ? (double)t->nucleus : NAN, 1, 0, nu);
            fprintf(f, " %s |", me);
            size_t un = strlen(nuc), ur = strlen(reps), uf = strlen(flags);
            snprintf(nuc + un, sizeof nuc - un, "%s%s", k ? " / " : "", nu);
            snprintf(reps + ur, sizeof reps - ur, "%s%d", k ? " / " : "", t ? t->measured.reps : 0);
            if (t) md_flags(fl, sizeof fl, &t->measured, false, 0, 0);
            if (t && fl[0]) snprintf(flags + uf, sizeof flags - uf, "%s%s: %s", uf ? "; " : "", kinds[k], fl);
        }
        fprintf(f, " %s | %s | %s |\n", nuc, reps, flags);
    }
    if (r->n_sampler == 0) fputs("| (none measured) | | | |\n", f);
    fprintf(f, "\nnucleus and reps per row kind, in the columns' order.%s%s\n\n",
            others > 0
                ? " Minima, maxima and the rows at other vocabularies: sampler.csv and the sampler plot."
                : "",
            others > 0 ? "" : " Minima and maxima: sampler.csv.");
}

/* One accounting-error line; `what` names the row. */
static void md_accounting(FILE *f, const char *what, double efficiency) {
    char ef[REPORT_FMT_LEN];
    report_fmt_md(efficiency, 100, 0, ef);
    fprintf(f,
            "- **Accounting error:** %s measured faster than its roof allows (efficiency %s %%). The byte or "
            "FLOP count, or the ceiling, is wrong for it; this is not a speed-up.\n",
            what, ef);
}

/* Rows above their roof, in words (the findings name the noisy rows, say what noisy means, and say when no
 * row is above its roof). */
static void md_findings(FILE *f, const struct run_report *r) {
    int n_above = 0;
    char what[128];
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        if (report_is_above_roof(b->above_roof, b->efficiency)) {
            snprintf(what, sizeof what, "block `%s`", b->name);
            md_accounting(f, what, b->efficiency);
            n_above++;
        }
    }
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        if (report_is_above_roof(s->above_roof, s->efficiency)) {
            snprintf(what, sizeof what, "the decode step at context %ld", s->context);
            md_accounting(f, what, s->efficiency);
            n_above++;
        }
    }
    if (n_above > 0) fputc('\n', f); /* none: the findings say so */
}

/* report.md answers its questions in order: how fast (the findings, the steps), how close to the roof (the
 * ceilings, accounting errors), where the time goes (the blocks), what to do next; then the sampler and
 * batch sweeps, the counters, the setup and the plots. The detail behind each table is in its CSV file. */
int report_write_markdown(const struct run_report *r, const char *dir, enum report_plots_result plots,
                          const char *plots_note, struct fr_err *err) {
    FILE *f = report_file_open(dir, "report.md", err);
    if (!f) return -1;
    fprintf(f, "# forge-roofline: %s decode on %s\n\n", r->model.name,
            r->prov.cpu_model[0] ? r->prov.cpu_model : r->prov.host);
    struct report_findings findings;
    report_findings_run(r, &findings);
    fputs("## Findings\n\n", f);
    report_findings_md(&findings, f);
    report_prefill_finding(f, r);
    report_batch_finding(f, r);
    md_steps(f, r);
    fputs("## How close to the roof: the ceilings\n\n", f);
    md_findings(f, r);
    md_ceilings(f, r);
    md_blocks(f, r, true);
    report_write_quant_roofs(f, r);
    report_write_unattributed(f, r);
    report_write_roofs(f, r);
    md_sampler(f, r);
    report_prefill_write_md(f, r);
    report_batch_write_md(f, r);
    fputs("## Counters\n\n", f);
    report_md_counters(f, r);
    report_md_counted(f, r);
    fputs("## Setup\n\n", f);
    md_setup(f, r);
    fprintf(f, "- Command: `%s`\n\n", r->prov.command_line);
    fputs("## Plots\n\n", f);
    if (plots == REPORT_PLOTS_DRAWN) {
        static const char *const names[] = {"roofline", "breakdown", "sampler", "context", "batch"};
        size_t n_names = sizeof names / sizeof names[0] - (r->n_batch == 0); /* batch: with a sweep */
        for (size_t i = 0; i < n_names; i++)
            fprintf(f, "![%s](%s.png) [%s.svg](%s.svg)  \n", names[i], names[i], names[i], names[i]);
        fputc('\n', f);
    } else {
        fprintf(f, "Plots were not drawn: %s. Redraw with `make plots RUN=<this folder>`.\n\n",
                plots_note && *plots_note ? plots_note : "unknown reason");
    }
    fprintf(f, "Data: run.json, blocks.csv, steps.csv, sampler.csv, ceilings.csv, counters.csv%s%s.\n",
            r->n_prefill > 0 ? ", prefill.csv" : "", r->n_batch > 0 ? ", batch.csv" : "");
    return report_file_close(f, dir, "report.md", err);
}

int report_write_summary(const struct run_report *r, FILE *out) {
    md_setup(out, r);
    report_md_counters(out, r);
    md_blocks(out, r, false);
    report_write_unattributed(out, r);
    report_write_roofs(out, r);
    if (r->prov.roof_notes[0]) fprintf(out, "Roofs: %s\n\n", r->prov.roof_notes);
    md_steps(out, r);
    struct report_findings findings;
    report_findings_run(r, &findings);
    fputs("## Findings\n\n", out);
    report_findings_md(&findings, out);
    report_prefill_finding(out, r);
    report_batch_finding(out, r);
    return ferror(out) ? -1 : 0;
}

int report_write_run(const struct run_report *r, const char *dir, enum report_plots_result *plots,
                     struct fr_err *plots_err, struct fr_err *err) {
    if (report_write_data(r, dir, err) != 0) return -1;
    struct fr_err perr = {{0}};
    int p = report_plots_draw(dir, &perr);
    *plots = (enum report_plots_result)p;
    if (plots_err) *plots_err = perr;
    if (report_write_markdown(r, dir, *plots, perr.msg, err) != 0) return -1;
    if (p == REPORT_PLOTS_FAILED) {
        fr_err_set(err, "%s", perr.msg);
        return -1;
    }
    return 0;
}
