/* The run's self-check (report_selfcheck.h): blocks alone against the step they are part of. Checked in
 * tests/test_findings.c on the fixture run, with the issue #64 figures of an Intel Xeon run as a failing
 * case. */
#include "bench/report/report_selfcheck.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const struct report_step *report_selfcheck_step(const struct run_report *r) {
    for (int i = 0; i < r->n_steps; i++)
        if (r->steps[i].context == r->blocks_context) return &r->steps[i];
    return NULL;
}

double report_selfcheck_block_ratio(const struct run_report *r, const struct report_block *b) {
    const struct report_step *s = report_selfcheck_step(r);
    if (!s || (unsigned)b->id >= BLOCK_COUNT) return NAN;
    return report_ratio(b->measured.median_s, s->block_s[b->id]);
}

double report_selfcheck_sum_ratio(const struct run_report *r) {
    const struct report_step *s = report_selfcheck_step(r);
    if (!s) return NAN;
    double sum = 0;
    for (int i = 0; i < r->n_blocks; i++)
        if (isfinite(r->blocks[i].measured.median_s)) sum += r->blocks[i].measured.median_s;
    return report_ratio(sum, s->measured.median_s);
}

static bool outside(double ratio, double band) {
    return isfinite(ratio) && fabs(ratio - 1) > band;
}

/* A block the band applies to: at least REPORT_SELFCHECK_MIN_SHARE of the step, by its time inside it. */
static bool held_to_band(const struct report_step *s, const struct report_block *b) {
    return (unsigned)b->id < BLOCK_COUNT &&
           report_ratio(s->block_s[b->id], s->measured.median_s) >= REPORT_SELFCHECK_MIN_SHARE;
}

/* Figures that include disturbed repetitions measured the load as well: they are flagged as such
 * (findings.c), and the check holds nothing against them. */
static bool step_disturbed(const struct report_step *s) {
    return report_disturbed_kept(&s->measured, s->disturbed_reps) > 0;
}

bool report_selfcheck_block_contradicted(const struct run_report *r, const struct report_block *b) {
    if (report_disturbed_kept(&b->measured, b->disturbed_reps) > 0) return false;
    /* only the step at the blocks' context: another context's step is no measure of these blocks */
    const struct report_step *s = report_selfcheck_step(r);
    if (!s || step_disturbed(s)) return false;
    if (b->measured.median_s > s->measured.median_s) return true; /* more than the whole step */
    return held_to_band(s, b) && outside(report_selfcheck_block_ratio(r, b), REPORT_SELFCHECK_BLOCK_BAND);
}

bool report_selfcheck_text(const struct run_report *r, char *out, size_t len) {
    const struct report_step *s = report_selfcheck_step(r);
    if (!s) {
        snprintf(out, len,
                 "Self-check: not made, no decode step was measured at the blocks' context %ld to hold the "
                 "blocks alone against.",
                 r->blocks_context);
        return false;
    }
    if (step_disturbed(s)) {
        snprintf(out, len,
                 "Self-check: not made, the step at context %ld includes disturbed repetitions (outside "
                 "load): its blocks' times inside it measured the load too.",
                 s->context);
        return false;
    }
    double ratio = report_selfcheck_sum_ratio(r);
    char sum[REPORT_FMT_LEN], step[REPORT_FMT_LEN], x[REPORT_FMT_LEN];
    report_fmt_md(ratio * s->measured.median_s, 1e3, 2, sum);
    report_fmt_md(s->measured.median_s, 1e3, 2, step);
    report_fmt_md(ratio, 1, 2, x);
    const bool sum_off = outside(ratio, REPORT_SELFCHECK_SUM_BAND);
    char band[64];
    snprintf(band, sizeof band,
             "%.0f %% band around their time inside the step: ", REPORT_SELFCHECK_BLOCK_BAND * 100);
    char off[512] = "";
    size_t used = 0;
    int checked = 0, n_off = 0;
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        checked += held_to_band(s, b);
        if (!report_selfcheck_block_contradicted(r, b)) continue;
        char al[REPORT_FMT_LEN], in[REPORT_FMT_LEN], bx[REPORT_FMT_LEN];
        report_fmt_md(b->measured.median_s, 1e3, 3, al);
        report_fmt_md(s->block_s[b->id], 1e3, 3, in);
        report_fmt_md(report_selfcheck_block_ratio(r, b), 1, 2, bx);
        if (used < sizeof off)
            used += (size_t)snprintf(off + used, sizeof off - used,
                                     "%s`%s` %s ms alone, %s ms inside the step (%sx)", n_off ? "; " : "",
                                     b->name, al, in, bx);
        n_off++;
    }
    if (!sum_off && n_off == 0) {
        snprintf(out, len,
                 "Self-check: the blocks timed alone sum to %s ms, %sx the %s ms step at context %ld (band "
                 "±%.0f %%); each of the %d blocks of at least %.0f %% of the step is within ±%.0f %% of its "
                 "time inside the step.",
                 sum, x, step, s->context, REPORT_SELFCHECK_SUM_BAND * 100, checked,
                 REPORT_SELFCHECK_MIN_SHARE * 100, REPORT_SELFCHECK_BLOCK_BAND * 100);
        return false;
    }
    /* the blocks named are left out of every ranking (findings.c, report_roofs.c) */
    snprintf(out, len,
             "**Accounting errors (self-check):** the blocks timed alone sum to %s ms, %sx the %s ms step at "
             "context %ld (band ±%.0f %%)%s%s%s%s. A block alone does not measure what it costs in the step "
             "there; no block is ranked or named to fix from such a figure.",
             sum, x, step, s->context, REPORT_SELFCHECK_SUM_BAND * 100, sum_off ? ", outside it" : "",
             n_off ? "; outside the ±" : "", n_off ? band : "", off);
    return true;
}
