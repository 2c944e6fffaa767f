/* report.md's "What to do next" section: the blocks to fix (>= 1 % of the step and under half their roof);
 * what fusing or batching the calls of an overhead-bound block would save; the blocks whose second term comes
 * near the binding one (what no overlap would cost). Also each block's share of the step and the step time
 * no block accounts for. Plain text over struct run_report; checked in tests/test_report_write.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/report/report_roofs.h"
#include "bench/report/report_selfcheck.h"
#include "kernels/dtype.h"
#include "model/blocks.h"
#include "roofline/roofline.h"

/* The share of the headline step a block takes: its time inside that step, else its time alone over the
 * sum of the blocks alone. */
double report_block_share(const struct run_report *r, const struct report_block *b) {
    const struct report_step *s = report_headline_step(r);
    if (s && (unsigned)b->id < BLOCK_COUNT && isfinite(s->block_s[b->id]))
        return report_ratio(s->block_s[b->id], s->measured.median_s);
    double sum = 0;
    for (int i = 0; i < r->n_blocks; i++)
        if (isfinite(r->blocks[i].measured.median_s)) sum += r->blocks[i].measured.median_s;
    return report_ratio(b->measured.median_s, sum);
}

bool report_block_to_fix(const struct run_report *r, const struct report_block *b) {
    double share = report_block_share(r, b);
    /* its time alone is not the step's, or rests on disturbed repetitions */
    if (report_selfcheck_block_contradicted(r, b) ||
        report_disturbed_kept(&b->measured, b->disturbed_reps) > 0)
        return false;
    return isfinite(share) && share >= REPORT_FIX_SHARE &&
           (!(b->efficiency >= REPORT_FIX_EFFICIENCY) || report_is_above_roof(b->above_roof, b->efficiency));
}

/* A block of at least REPORT_FIX_SHARE of the step whose second term is at least ROOFLINE_COBOUND_SHARE of
 * its binding one: the roof (the larger) holds only if the two overlap completely; their sum is what no
 * overlap would take. */
static void write_cobound(FILE *f, const struct run_report *r, const struct report_block *b) {
    if (b->overhead_bound || !b->second_bound[0] ||
        !(b->second_s >= ROOFLINE_COBOUND_SHARE * b->predicted_s) ||
        !(report_block_share(r, b) >= REPORT_FIX_SHARE))
        return;
    char first[REPORT_FMT_LEN], second[REPORT_FMT_LEN], share[REPORT_FMT_LEN], sum[REPORT_FMT_LEN],
        me[REPORT_FMT_LEN], ef[REPORT_FMT_LEN], ef_sum[REPORT_FMT_LEN];
    report_fmt_md(b->predicted_s, 1e6, 1, first);
    report_fmt_md(b->second_s, 1e6, 1, second);
    report_fmt_md(report_ratio(b->second_s, b->predicted_s), 100, 0, share);
    report_fmt_md(b->predicted_s + b->second_s, 1e6, 1, sum);
    report_fmt_md(b->measured.median_s, 1e6, 1, me);
    report_fmt_md(b->efficiency, 100, 0, ef);
    report_fmt_md(report_ratio(b->predicted_s + b->second_s, b->measured.median_s), 100, 0, ef_sum);
    fprintf(f,
            "- `%s` is co-bound: beside its %s term (%s µs) its %s term takes %s µs, %s %% of it. The roof "
            "assumes the two overlap completely; one after the other they would take %s µs. Measured %s µs: "
            "%s %% of the roof, %s %% of that sum.\n",
            b->name, b->bound, first, b->second_bound, second, share, sum, me, ef, ef_sum);
}

void report_write_roofs(FILE *f, const struct run_report *r) {
    fputs("## What to do next\n\n", f);
    int n_fix = 0;
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        if (!report_block_to_fix(r, b)) continue;
        char sh[REPORT_FMT_LEN], ef[REPORT_FMT_LEN], pe[REPORT_FMT_LEN], oe[REPORT_FMT_LEN], reads[128] = "";
        report_fmt_md(report_block_share(r, b), 100, 1, sh);
        report_fmt_md(b->efficiency, 100, 0, ef);
        report_fmt_md(b->paired_efficiency, 100, 0, pe);
        report_fmt_md(b->own_read_efficiency, 100, 0, oe);
        if (isfinite(b->paired_efficiency) && isfinite(b->own_read_efficiency))
            snprintf(reads, sizeof reads,
                     " (%s %% of the read paired with it, %s %% of a read of its own bytes)", pe, oe);
        else if (isfinite(b->paired_efficiency))
            snprintf(reads, sizeof reads, " (%s %% of the read paired with it)", pe);
        fprintf(f, "- **Block to fix:** `%s` takes %s %% of the step at %s %% of its %s roof%s.%s\n", b->name,
                sh, ef, b->bound[0] ? b->bound : "n/a", reads,
                b->own_read_efficiency >= REPORT_OWN_READ_MATCH
                    ? " It runs as fast as a read of its own bytes: what holds it is how those bytes are "
                      "fetched (how few, from how many places), not its loop."
                    : "");
        n_fix++;
    }
    /* the blocks report_block_to_fix leaves out, each with why: never a silent "every block is fine" */
    int n_contradicted = 0;
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        int kept = report_disturbed_kept(&b->measured, b->disturbed_reps);
        char x[REPORT_FMT_LEN];
        report_fmt_md(report_selfcheck_block_ratio(r, b), 1, 2, x);
        if (kept > 0 && report_block_share(r, b) >= REPORT_FIX_SHARE)
            fprintf(f,
                    "- `%s` is not judged: its figure includes %d disturbed repetition%s (outside load; "
                    "the findings' first line).\n",
                    b->name, kept, kept == 1 ? "" : "s");
        else if (kept > 0 || !report_selfcheck_block_contradicted(r, b))
            continue;
        else if (isfinite(report_selfcheck_block_ratio(r, b)))
            fprintf(f,
                    "- `%s` is not judged: timed alone it takes %sx its time inside the step (the findings' "
                    "self-check), so its time alone is not what the step pays.\n",
                    b->name, x);
        else
            fprintf(f,
                    "- `%s` is not judged: timed alone it takes longer than the whole step (the findings' "
                    "self-check).\n",
                    b->name);
        n_contradicted++;
    }
    if (n_fix == 0 && n_contradicted == 0)
        fputs("- Every block that takes at least 1 % of the step runs at 50 % of its roof or better.\n", f);
    else if (n_fix == 0)
        fputs("- Every other block that takes at least 1 % of the step runs at 50 % of its roof or better.\n",
              f);
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        if (!b->overhead_bound) continue;
        double n = b->kernel_calls + b->forks, per = report_ratio(n, (double)b->calls);
        char fl[REPORT_FMT_LEN], save[REPORT_FMT_LEN], nb[REPORT_FMT_LEN];
        report_fmt_md(b->floor_s, 1e6, 2, fl);
        report_fmt_md(b->barriers, 1, 0, nb); /* n/a in a run.json written before barriers were counted */
        if (per > 1) {
            report_fmt_md(b->floor_s * (1 - 1 / per), 1e6, 2, save);
            fprintf(f,
                    "- `%s` is overhead-bound: %.0f kernel calls, %.0f forks and %s team barriers per step "
                    "cost at least %s µs; one call per %s instead of %.0f would save up to %s µs per step.\n",
                    b->name, b->kernel_calls, b->forks, nb, fl, b->calls > 1 ? "layer" : "step", per, save);
        } else {
            fprintf(
                f,
                "- `%s` is overhead-bound: %.0f kernel calls, %.0f forks and %s team barriers per step cost "
                "at least %s µs; fusing it into a neighbouring block's call would save up to %s µs per "
                "step.\n",
                b->name, b->kernel_calls, b->forks, nb, fl, fl);
        }
    }
    for (int i = 0; i < r->n_blocks; i++) write_cobound(f, r, &r->blocks[i]);
    fputc('\n', f);
}

static const struct report_ceiling *find_ceiling(const struct run_report *r, const char *name) {
    for (int i = 0; i < r->n_ceilings; i++)
        if (strcmp(r->ceilings[i].name, name) == 0) return &r->ceilings[i];
    return NULL;
}

void report_write_unattributed(FILE *f, const struct run_report *r) {
    if (r->n_steps == 0) return;
    fputs("Inside no block (the layer loop, the observer, whatever runs between blocks):", f);
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        char un[REPORT_FMT_LEN], me[REPORT_FMT_LEN], pc[REPORT_FMT_LEN];
        report_fmt_md(s->unattributed_s, 1e6, 1, un);
        report_fmt_md(s->measured.median_s, 1e6, 1, me);
        report_fmt_md(report_ratio(s->unattributed_s, s->measured.median_s), 100, 1, pc);
        fprintf(f, "%s %s µs of the %s µs step (%s %%) at context %ld", i ? ";" : "", un, me, pc, s->context);
    }
    fputc('.', f);
    /* On the step's kernel team each call of a block that meets the team's barrier (a matvec, attention)
     * first waits at it for thread 0's blocks before (model/decode.c run_block): a wait in no block. */
    double calls = 0;
    for (int i = 0; i < r->n_blocks; i++)
        if (r->blocks[i].barriers > 0) calls += r->blocks[i].calls;
    const struct report_ceiling *b = find_ceiling(r, "barrier_mcalls");
    if (calls > 0 && b && b->value > 0) {
        char fl[REPORT_FMT_LEN], rate[REPORT_FMT_LEN];
        report_fmt_md(calls / (b->value * 1e6), 1e6, 1, fl);
        report_fmt_md(b->value, 1, 1, rate);
        fprintf(
            f,
            " Of it, the step's kernel team meets at its barrier before each of its %.0f calls on the team "
            "(the matvecs and attention): at least %s µs a step at the barrier floor (%s Mcall/s).",
            calls, fl, rate);
    }
    fputs("\n\n", f);
}

/* Whether a block's format ("q4_k+q6_k") names type t; a block without one (an older run.json) names the
 * run's dtype. */
static bool format_has(const struct run_report *r, const struct report_block *b, const char *t) {
    const char *f = b->format[0] ? b->format : r->prov.dtype;
    const size_t n = strlen(t);
    for (const char *p = f; *p;) {
        const size_t len = strcspn(p, "+");
        if (len == n && strncmp(p, t, n) == 0) return true;
        p += len + (p[len] == '+');
    }
    return false;
}

/* One quantised format's line: its measured roof, the ridge against the DRAM read roof, and the roof that
 * binds each block that streams a matrix in it. */
static void write_quant_roof(FILE *f, const struct run_report *r, const char *t) {
    char key[32];
    snprintf(key, sizeof key, "%s_gflops", t);
    const struct report_ceiling *q = find_ceiling(r, key), *dram = find_ceiling(r, "roof_dram_read_gbs");
    if (!q || !(q->value > 0)) {
        fprintf(f,
                "- %s's compute roof was not measured (%s): its blocks' FLOPs are charged to the f32 FMA "
                "roof.\n\n",
                t, q && q->why[0] ? q->why : "no ceiling row");
        return;
    }
    char g[REPORT_FMT_LEN], w[REPORT_FMT_LEN], d[REPORT_FMT_LEN], ridge[REPORT_FMT_LEN];
    report_fmt_md(q->value, 1, 1, g);
    report_fmt_md(q->value / 2, 1, 1, w);
    report_fmt_md(dram ? dram->value : NAN, 1, 1, d);
    report_fmt_md(dram ? report_ratio(q->value, dram->value) : NAN, 1, 2, ridge);
    fprintf(f,
            "- %s's compute roof, measured (its matvec over matrices held in L2, all threads, isa %s): %s "
            "GFLOP/s at 2 FLOPs a weight, %s G weights/s, the dequantisation included; against the DRAM read "
            "roof of %s GB/s the ridge point is %s FLOP/B. The roof that binds each %s block:",
            t, r->prov.isa[0] ? r->prov.isa : "unknown", g, w, d, ridge, t);
    int n = 0;
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        if ((unsigned)b->id >= BLOCK_COUNT || !block_table()[b->id].reads_weights || !format_has(r, b, t))
            continue;
        char ai[REPORT_FMT_LEN];
        report_fmt_md(report_ratio(b->flops, b->level_bytes[0]), 1, 2, ai);
        fprintf(f, "%s `%s` %s (%s FLOP/B)", n++ ? "," : "", b->name, b->bound[0] ? b->bound : "n/a", ai);
        if (strcmp(b->format, t) != 0 && b->format[0]) fprintf(f, " in %s", b->format);
    }
    fputs(n ? ".\n\n" : " none measured.\n\n", f);
}

void report_write_quant_roofs(FILE *f, const struct run_report *r) {
    /* every quantised format a block ran in (its `format`), in enum order; an older run.json: its dtype */
    bool any = false;
    for (int i = 0; i < r->n_blocks; i++) any = any || r->blocks[i].format[0];
    for (int t = 0; t < FR_DTYPE_COUNT; t++) {
        const char *name = fr_dtype_name((enum fr_dtype)t);
        if (!fr_dtype_is_quant((enum fr_dtype)t)) continue;
        bool used = !any && strcmp(r->prov.dtype, name) == 0;
        for (int i = 0; any && !used && i < r->n_blocks; i++)
            used = (unsigned)r->blocks[i].id < BLOCK_COUNT && block_table()[r->blocks[i].id].reads_weights &&
                   format_has(r, &r->blocks[i], name);
        if (used) write_quant_roof(f, r, name);
    }
}
