/* The findings of one run, from its numbers: per context the tokens/s and the percent of the roof that
 * binds; the three blocks with the most time lost against their roofs (measured - predicted, per step, as
 * milliseconds and as a percent of the measured step at the blocks' context); the sampler's share of that
 * step; the rows measured faster than their roof (accounting errors) and the noisy rows, by name. Checked in
 * tests/test_findings.c on the fixture run (tests/report_fixture.h), number by number. */
#include "bench/report/findings.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "bench/report/report_selfcheck.h"
#include "roofline/core_speed.h"

void report_findings_add(struct report_findings *f, const char *fmt, ...) {
    if (f->n >= REPORT_FINDINGS_MAX) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->line[f->n++], REPORT_FINDING_LEN, fmt, ap);
    va_end(ap);
}

void report_namelist_add(struct report_namelist *l, const char *fmt, ...) {
    if (l->count++ >= l->cap) return;
    size_t used = strlen(l->text);
    if (used && used + 2 < sizeof l->text) strcpy(l->text + used, ", "), used += 2;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->text + used, sizeof l->text - used, fmt, ap);
    va_end(ap);
}

void report_namelist_text(const struct report_namelist *l, char *out, size_t len) {
    int w = snprintf(out, len, "%s", l->text);
    if (l->count > l->cap && w >= 0 && (size_t)w < len)
        snprintf(out + w, len - (size_t)w, " and %d more", l->count - l->cap);
}

void report_findings_md(const struct report_findings *f, FILE *out) {
    for (int i = 0; i < f->n; i++) fprintf(out, "- %s\n", f->line[i]);
    fputc('\n', out);
}

/* The run's all-core peak FLOP/s (GFLOP/s), NaN when none was measured. */
static double peak_gflops(const struct run_report *r) {
    double peak = NAN;
    for (int i = 0; i < r->n_ceilings; i++) {
        const struct report_ceiling *c = &r->ceilings[i];
        if (c->kind == REPORT_CEILING_COMPUTE && !c->one_core && isfinite(c->value) && !(c->value <= peak))
            peak = c->value;
    }
    return peak;
}

/* Which roof a predicted time is: the compute roof when FLOPs / peak reaches it, else the memory roof. */
static const char *roof_name(double flops, double predicted_s, double peak_gflops_v) {
    double compute_s = report_ratio(flops, peak_gflops_v * 1e9);
    return isfinite(compute_s) && compute_s >= predicted_s * 0.999 ? "compute" : "memory";
}

static void line_steps(const struct run_report *r, struct report_findings *out) {
    if (r->n_steps == 0) {
        report_findings_add(out, "Decode: no decode step was measured.");
        return;
    }
    char buf[REPORT_FINDING_LEN] = "";
    size_t used = 0;
    double peak = peak_gflops(r);
    for (int i = 0; i < r->n_steps && used < sizeof buf; i++) {
        const struct report_step *s = &r->steps[i];
        char tps[REPORT_FMT_LEN], ef[REPORT_FMT_LEN], pe[REPORT_FMT_LEN], we[REPORT_FMT_LEN];
        report_fmt_md(s->tokens_per_s, 1, 1, tps);
        report_fmt_md(s->efficiency, 100, 0, ef);
        report_fmt_md(s->paired_efficiency, 100, 0, pe);
        report_fmt_md(s->weights_read_efficiency, 100, 0, we);
        bool paired = isfinite(s->paired_efficiency), weights = isfinite(s->weights_read_efficiency);
        /* a noisy step's ratios can be far off (a read slowed by a neighbour: above 100 %): said here too */
        const char *noisy = s->measured.noisy ? ", noisy" : "";
        if (i == 0)
            used += (size_t)snprintf(
                buf + used, sizeof buf - used,
                "%s tokens/s at context %ld (%s %% of the %s roof%s%s%s%s%s%s%s)", tps, s->context, ef,
                roof_name(s->flops, s->predicted_s, peak), paired ? ", " : "", paired ? pe : "",
                paired ? " % of the paired read's GB/s" : "", weights ? ", " : "", weights ? we : "",
                weights ? " % of the same read over the model's weights" : "", noisy);
        else
            used += (size_t)snprintf(buf + used, sizeof buf - used, ", %s at %ld (%s %%%s%s%s%s)", tps,
                                     s->context, ef, paired ? ", " : "", paired ? pe : "", paired ? " %" : "",
                                     noisy);
    }
    report_findings_add(out, "Decode: %s.", buf);
}

/* The blocks with the most time lost against their roof, largest first. */
static void lines_lost(const struct run_report *r, const struct report_step *head,
                       struct report_findings *out) {
    int order[BLOCK_COUNT], n = 0;
    double lost[BLOCK_COUNT];
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        lost[i] = b->measured.median_s - b->predicted_s;
        /* a figure the run itself contradicts ranks nothing (the self-check line names it) */
        if (isfinite(lost[i]) && lost[i] > 0 && !report_selfcheck_block_contradicted(r, b) &&
            report_disturbed_kept(&b->measured, b->disturbed_reps) == 0)
            order[n++] = i;
    }
    for (int i = 1; i < n; i++) /* insertion sort by lost time, descending */
        for (int j = i; j > 0 && lost[order[j]] > lost[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    double step_s = head ? head->measured.median_s : NAN, peak = peak_gflops(r);
    if (n == 0) {
        report_findings_add(out, "Time lost against the roofs: no block was measured slower than its roof.");
        return;
    }
    for (int k = 0; k < n && k < 3; k++) {
        const struct report_block *b = &r->blocks[order[k]];
        char ms[REPORT_FMT_LEN], pct[REPORT_FMT_LEN], me[REPORT_FMT_LEN], pr[REPORT_FMT_LEN];
        report_fmt_md(lost[order[k]], 1e3, 2, ms);
        report_fmt_md(report_ratio(lost[order[k]], step_s), 100, 1, pct);
        report_fmt_md(b->measured.median_s, 1e3, 2, me);
        report_fmt_md(b->predicted_s, 1e3, 2, pr);
        report_findings_add(
            out,
            "Lost against the roof #%d: `%s` %s ms per step (%s %% of the step at context %ld): "
            "%s ms measured, %s ms at its %s roof.",
            k + 1, b->name, ms, pct, r->blocks_context, me, pr,
            b->bound[0] ? b->bound : roof_name(b->flops, b->predicted_s, peak));
    }
}

static void line_sampler(const struct run_report *r, const struct report_step *head,
                         struct report_findings *out) {
    double in_step = head ? head->block_s[BLOCK_SAMPLER] : NAN;
    const char *source = "in the step";
    if (!isfinite(in_step)) {
        for (int i = 0; i < r->n_blocks; i++)
            if (r->blocks[i].id == BLOCK_SAMPLER) in_step = r->blocks[i].measured.median_s;
        source = "timed alone";
    }
    double step_s = head ? head->measured.median_s : NAN;
    char ms[REPORT_FMT_LEN], st[REPORT_FMT_LEN], pct[REPORT_FMT_LEN];
    report_fmt_md(in_step, 1e3, 3, ms);
    report_fmt_md(step_s, 1e3, 2, st);
    report_fmt_md(report_ratio(in_step, step_s), 100, 1, pct);
    char worst[REPORT_FINDING_LEN / 2] = "";
    /* The slowest of what a step can run (not the sort references, which only check the fast filter) at the
     * model's own vocabulary, else at the largest swept. */
    const struct report_sampler *w = NULL;
    long vmax = 0;
    for (int i = 0; i < r->n_sampler; i++) {
        long v = r->sampler[i].vocab;
        if (v == r->model.vocab || (vmax != r->model.vocab && v > vmax)) vmax = v;
    }
    for (int i = 0; i < r->n_sampler; i++) {
        const struct report_sampler *x = &r->sampler[i];
        if (x->vocab == vmax && !strstr(x->variant, "sort") && isfinite(x->measured.median_s) &&
            (!w || x->measured.median_s > w->measured.median_s))
            w = x;
    }
    if (w) {
        char wm[REPORT_FMT_LEN], wp[REPORT_FMT_LEN];
        report_fmt_md(w->measured.median_s, 1e3, 3, wm);
        report_fmt_md(report_ratio(w->measured.median_s, step_s), 100, 1, wp);
        snprintf(worst, sizeof worst,
                 "; the slowest fast variant at vocab %ld, %s on %s rows, takes %s ms (%s %%)", vmax,
                 w->variant, w->row_kind, wm, wp);
    }
    report_findings_add(out, "Sampler: %s ms of the %s ms step at context %ld (%s %%, %s)%s.", ms, st,
                        head ? head->context : r->blocks_context, pct, source, worst);
}

static void line_accounting(const struct run_report *r, struct report_findings *out) {
    struct report_namelist l = {.cap = 8};
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        char ef[REPORT_FMT_LEN];
        report_fmt_md(b->efficiency, 100, 0, ef);
        if (report_is_above_roof(b->above_roof, b->efficiency))
            report_namelist_add(&l, "`%s` (%s %%)", b->name, ef);
    }
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        char ef[REPORT_FMT_LEN];
        report_fmt_md(s->efficiency, 100, 0, ef);
        if (report_is_above_roof(s->above_roof, s->efficiency))
            report_namelist_add(&l, "step at context %ld (%s %%)", s->context, ef);
    }
    char names[REPORT_FINDING_LEN / 2];
    report_namelist_text(&l, names, sizeof names);
    if (l.count == 0)
        report_findings_add(out, "Accounting errors: none (no row measured faster than its roof).");
    else
        report_findings_add(
            out,
            "**Accounting errors:** %s measured faster than the roof allows: a byte or FLOP count "
            "or a ceiling is wrong there, not a speed-up.",
            names);
}

static void line_selfcheck(const struct run_report *r, struct report_findings *out) {
    char text[REPORT_FINDING_LEN];
    report_selfcheck_text(r, text, sizeof text);
    report_findings_add(out, "%s", text);
}

static void line_noise(const struct run_report *r, struct report_findings *out) {
    struct report_namelist l = {.cap = 8};
    int total = 0;
    for (int i = 0; i < r->n_blocks; i++, total++)
        if (r->blocks[i].measured.noisy) report_namelist_add(&l, "`%s`", r->blocks[i].name);
    for (int i = 0; i < r->n_steps; i++, total++)
        if (r->steps[i].measured.noisy) report_namelist_add(&l, "step at context %ld", r->steps[i].context);
    for (int i = 0; i < r->n_sampler; i++, total++) {
        const struct report_sampler *s = &r->sampler[i];
        if (s->measured.noisy) report_namelist_add(&l, "%s/%s/%ld", s->variant, s->row_kind, s->vocab);
    }
    char names[REPORT_FINDING_LEN / 2];
    report_namelist_text(&l, names, sizeof names);
    if (l.count == 0)
        report_findings_add(out,
                            "Noise: none of the %d rows is noisy (every median's confidence interval within "
                            "±%.0f %%).",
                            total, TIMING_NOISY_HALF_WIDTH * 100);
    else
        report_findings_add(
            out,
            "Noisy (median's confidence interval wider than ±%.0f %%, or fewer than %d undisturbed "
            "repetitions), %d of %d rows: %s.",
            TIMING_NOISY_HALF_WIDTH * 100, TIMING_MIN_CLEAN_REPS, l.count, total, names);
}

/* Rows with repetitions the counters marked disturbed (a thread switched out or migrated): those left out
 * of their statistics, and those kept because too few stayed clean, each row with its counts; then every
 * disturbed repetition samples.csv marks, all rows together, so the two can be checked one against the
 * other (scripts/load-runs.sh). */
static void line_disturbed(const struct run_report *r, struct report_findings *out) {
    struct report_namelist left = {.cap = 8}, kept = {.cap = 8};
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        const struct timing_stats *t = &b->measured;
        int k = report_disturbed_kept(t, b->disturbed_reps);
        if (t->excluded_reps > 0)
            report_namelist_add(&left, "`%s` %d of %d", b->name, t->excluded_reps,
                                t->reps + t->excluded_reps);
        if (k > 0) report_namelist_add(&kept, "`%s` %d of %d", b->name, k, t->reps);
    }
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        const struct timing_stats *t = &s->measured;
        int k = report_disturbed_kept(t, s->disturbed_reps);
        if (t->excluded_reps > 0)
            report_namelist_add(&left, "step at context %ld %d of %d", s->context, t->excluded_reps,
                                t->reps + t->excluded_reps);
        if (k > 0) report_namelist_add(&kept, "step at context %ld %d of %d", s->context, k, t->reps);
    }
    for (int i = 0; i < r->n_sampler; i++) {
        const struct report_sampler *s = &r->sampler[i];
        if (s->measured.excluded_reps > 0)
            report_namelist_add(&left, "%s/%s/%ld %d of %d", s->variant, s->row_kind, s->vocab,
                                s->measured.excluded_reps, s->measured.reps + s->measured.excluded_reps);
    }
    char names[REPORT_FINDING_LEN / 2], kept_names[REPORT_FINDING_LEN / 2], all[160] = "";
    report_namelist_text(&left, names, sizeof names);
    report_namelist_text(&kept, kept_names, sizeof kept_names);
    if (r->samples_reps > 0 && r->samples_disturbed > 0)
        snprintf(all, sizeof all, " samples.csv marks %d of its %d repetitions disturbed (%s).",
                 r->samples_disturbed, r->samples_reps, r->samples_causes);
    /* the rule of this run's counters; runs written before it was recorded judged any switch */
    const char *rule = r->counters.disturbed_rule;
    if (left.count > 0 || kept.count > 0)
        report_findings_add(out, "Disturbed repetitions (%s)%s%s%s%s%s.%s",
                            rule[0] ? rule : "a thread was switched out or migrated",
                            left.count ? ", left out of the statistics: " : "", names,
                            left.count && kept.count ? "; "
                            : kept.count             ? ": "
                                                     : "",
                            kept.count ? "kept, fewer than " TIMING_MIN_CLEAN_STR " clean: " : "", kept_names,
                            all);
    else if (r->samples_disturbed > 0)
        report_findings_add(out, "Disturbed repetitions (%s): none in the blocks and steps;%s",
                            rule[0] ? rule : "a thread was switched out or migrated", all);
    else if (r->counters.available && rule[0])
        report_findings_add(out, "Disturbed repetitions: none (judged by: %s).", rule);
    else if (r->counters.available)
        report_findings_add(out, "Disturbed repetitions: none (no thread was switched out or migrated).");
    else
        report_findings_add(out, "Disturbed repetitions: not detected, the counters are unavailable (%s).",
                            r->counters.reason[0] ? r->counters.reason : "no reason given");
}

/* A headline row touched by outside load: its figure includes disturbed repetitions, or at least a quarter
 * of its repetitions were disturbed (left out, but the load was there). */
static bool touched(const struct timing_stats *t, int disturbed_reps) {
    return report_disturbed_kept(t, disturbed_reps) > 0 ||
           (disturbed_reps > 0 && 4 * disturbed_reps >= t->reps + t->excluded_reps);
}

/* Adds a touched headline row to the Outside load line's list and counts. */
struct load_tally {
    struct report_namelist l;
    int reps, kept_rows;
};

static void tally_row(struct load_tally *t, const char *name, const struct timing_stats *m, int disturbed) {
    if (!touched(m, disturbed)) return;
    report_namelist_add(&t->l, "%s %d of %d", name, disturbed, m->reps + m->excluded_reps);
    t->reps += disturbed;
    t->kept_rows += report_disturbed_kept(m, disturbed) > 0;
}

/* The first line when outside load touched the headline rows (the steps, the blocks the findings rank):
 * which rows, how many repetitions, why; the rows whose figures include them are ranked nowhere. */
static void line_outside_load(const struct run_report *r, struct report_findings *out) {
    struct load_tally t = {.l = {.cap = 8}};
    char name[REPORT_NAME_LEN + 32];
    for (int i = 0; i < r->n_steps; i++) {
        snprintf(name, sizeof name, "step at context %ld", r->steps[i].context);
        tally_row(&t, name, &r->steps[i].measured, r->steps[i].disturbed_reps);
    }
    for (int i = 0; i < r->n_blocks; i++) {
        snprintf(name, sizeof name, "`%s`", r->blocks[i].name);
        tally_row(&t, name, &r->blocks[i].measured, r->blocks[i].disturbed_reps);
    }
    struct report_namelist l = t.l;
    int reps = t.reps, kept_rows = t.kept_rows;
    if (l.count == 0) return;
    char names[REPORT_FINDING_LEN / 2];
    report_namelist_text(&l, names, sizeof names);
    report_findings_add(
        out, "**Outside load:** %d repetitions of the headline rows were disturbed (%s): %s. %s", reps,
        r->samples_causes[0] ? r->samples_causes : "see the Disturbed line", names,
        kept_rows ? "Rows whose figure includes them are flagged and ranked nowhere; rerun on a "
                    "quiet machine."
                  : "They were left out of the figures; rows kept enough clean repetitions.");
}

/* A core whose arithmetic ran slow at some probe (core_speed.h): said with what it moves, since no other
 * figure of the run shows it. */
static void line_core_speed(const struct run_report *r, struct report_findings *out) {
    double low = r->prov.core_speed_low;
    if (!(low < CORE_SPEED_MOVED)) return; /* even, or not probed */
    report_findings_add(
        out,
        "Core speed moved: the slowest probe of a core ran attention from L2 at %.0f %% of the fastest "
        "(setup line: which core, and when). Compute-bound rows (bound FMA or exp, the sampler) "
        "measured in such a spell can read low; the paired read does not show it, memory reads do not "
        "slow so. On a VM: most likely another guest on the host's sibling hyperthread.",
        100 * low);
}

void report_findings_run(const struct run_report *r, struct report_findings *out) {
    memset(out, 0, sizeof *out);
    const struct report_step *head = report_headline_step(r);
    line_outside_load(r, out);
    line_steps(r, out);
    lines_lost(r, head, out);
    line_sampler(r, head, out);
    line_accounting(r, out);
    line_selfcheck(r, out);
    line_noise(r, out);
    line_disturbed(r, out);
    line_core_speed(r, out);
}
