/* Writers of the batch sweep (bench/report/report_batch.h). The measured-ridge rules are pinned by
 * tests/test_report_batch.c on hand-made rows; the writers by the quick run in tests/test_run.c. */
#include "bench/report/report_batch.h"

#include <math.h>
#include <string.h>

#include "bench/report/report_csv.h"
#include "kernels/dtype.h"

/* The reference backends' rows stand beside forge's; every other row is the run's own. */
static const char *const batch_refs[] = {"openblas", "onednn"};
#define BATCH_REFS (int)(sizeof batch_refs / sizeof batch_refs[0])

/* 0 for the run's own rows, 1 + its index in batch_refs for a reference's (plot_batch.dat's column 5). */
static int batch_ref_index(const struct report_batch *b) {
    for (int i = 0; i < BATCH_REFS; i++)
        if (strcmp(b->backend, batch_refs[i]) == 0) return 1 + i;
    return 0;
}

static bool is_forge(const struct report_batch *b) {
    return batch_ref_index(b) == 0;
}

/* The row of batch B on backend ref (1 + its index in batch_refs; 0: the run's own), or NULL. */
static const struct report_batch *batch_on(const struct run_report *r, long batch, int ref) {
    for (int i = 0; i < r->n_batch; i++)
        if (r->batch[i].batch == batch && batch_ref_index(&r->batch[i]) == ref) return &r->batch[i];
    return NULL;
}

void report_batch_ridge_measured(struct run_report *r) {
    const struct report_batch *one = NULL, *big = NULL;
    double leaves = NAN;
    for (int i = 0; i < r->n_batch; i++) {
        const struct report_batch *b = &r->batch[i];
        if (!is_forge(b)) continue;
        if (b->batch == 1) one = b;
        if (!big || b->batch > big->batch) big = b;
        double roof_tps = report_ratio((double)b->batch, b->memory_roof_s);
        /* against the paired read when the row has one (the same moment's bandwidth), else the ceilings */
        bool below =
            isfinite(b->paired_efficiency) ? b->paired_efficiency < 0.8 : b->tokens_per_s < 0.8 * roof_tps;
        if (below && !(b->batch >= leaves)) leaves = (double)b->batch;
    }
    r->batch_ridge.leaves_memory_roof_batch = leaves;
    /* flat part: the GEMM time at B = 1 (weights streamed once, FLOPs negligible); compute line through
     * the largest B: time proportional to B. They meet at B = t(1) * Bmax / t(Bmax). */
    double ridge =
        one && big && big->batch > 1 ? report_ratio(one->proj_s * (double)big->batch, big->proj_s) : NAN;
    /* At or beyond the largest B the GEMMs are still on their flat (memory-bound) part: the sweep did not
     * reach the ridge, and a crossing past the last point would be an extrapolation, not a measurement. */
    r->batch_ridge.proj_measured = big && ridge < (double)big->batch ? ridge : NAN;
}

/* The largest batch measured on forge's own kernels; 0 when none. */
static long largest_forge_batch(const struct run_report *r) {
    long most = 0;
    for (int i = 0; i < r->n_batch; i++)
        if (is_forge(&r->batch[i]) && r->batch[i].batch > most) most = r->batch[i].batch;
    return most;
}

/* "B = x", or why there is no measured ridge. */
static void md_ridge_measured(FILE *f, const struct run_report *r) {
    char b[REPORT_FMT_LEN];
    if (isfinite(r->batch_ridge.proj_measured))
        report_fmt_md(r->batch_ridge.proj_measured, 1, 1, b), fprintf(f, "B = %s", b);
    else
        fprintf(f, "not reached (still memory-bound at the largest B measured, %ld)", largest_forge_batch(r));
}

int report_batch_write_csv(const struct run_report *r, const char *dir, struct fr_err *err) {
    if (r->n_batch == 0) return 0;
    return report_csv_write_table(dir, "batch.csv", REPORT_TABLE_BATCH, r->batch, sizeof r->batch[0],
                                  r->n_batch, err);
}

/* The run's weight format (bf16 where run.json names none this build knows). */
static enum fr_dtype run_wtype(const struct run_report *r) {
    enum fr_dtype t;
    return fr_wtype_parse(r->prov.dtype, &t) == 0 ? t : FR_DTYPE_BF16;
}

static void md_ridge(FILE *f, const char *what, double v, bool whole_step) {
    char b[REPORT_FMT_LEN];
    if (isinf(v) || (isnan(v) && whole_step))
        fprintf(f, "%s none (memory-bound at any B)", what);
    else
        report_fmt_md(v, 1, 1, b), fprintf(f, "%s B = %s", what, b);
}

/* Whether the forge rows' memory-roof figures are against their paired reads. */
static bool forge_paired(const struct run_report *r) {
    for (int i = 0; i < r->n_batch; i++)
        if (is_forge(&r->batch[i]) && isfinite(r->batch[i].paired_efficiency)) return true;
    return false;
}

void report_batch_finding(FILE *f, const struct run_report *r) {
    if (r->n_batch == 0) return;
    const struct report_batch_ridge *rr = &r->batch_ridge;
    const char *against = forge_paired(r) ? " (DRAM bytes at the rate of each step's paired read)" : "";
    char a[REPORT_FMT_LEN], p[REPORT_FMT_LEN];
    report_fmt_md(rr->proj[run_wtype(r)], 1, 1, p);
    if (isnan(rr->leaves_memory_roof_batch))
        fprintf(
            f,
            "- Batch sweep (context %ld): the measured tokens/s stays within 80 %% of the memory roof%s at "
            "every B measured",
            rr->context, against);
    else
        report_fmt_md(rr->leaves_memory_roof_batch, 1, 0, a),
            fprintf(
                f,
                "- Batch sweep (context %ld): the measured tokens/s leaves the memory roof%s (below 80 %% of "
                "it) at B = %s",
                rr->context, against, a);
    fputs("; the GEMMs' measured ridge: ", f);
    md_ridge_measured(f, r);
    fprintf(f, ", against B = %s predicted (%s weights).\n\n", p, r->prov.dtype);
}

double report_batch_one_over_step(const struct run_report *r, long *context) {
    const struct report_batch *one = NULL;
    for (int i = 0; i < r->n_batch; i++)
        if (is_forge(&r->batch[i]) && r->batch[i].batch == 1) one = &r->batch[i];
    for (int i = 0; one && i < r->n_steps; i++)
        if (r->steps[i].context == one->context) {
            if (context) *context = one->context;
            return report_ratio(r->steps[i].paired_efficiency, one->paired_efficiency);
        }
    return NAN;
}

/* B = 1 against the decode step at the same context, each over its own paired read. */
static void md_one_vs_step(FILE *f, const struct run_report *r) {
    long t = -1;
    double q = report_batch_one_over_step(r, &t);
    if (!isfinite(q)) return;
    char b[REPORT_FMT_LEN];
    report_fmt_md(q, 1, 3, b);
    fprintf(f,
            "B = 1 against the decode step at context %ld, each normalized by its own paired read: %s x the "
            "step's time (above 1: B = 1 slower; both run the same code, decode_step).\n\n",
            t, b);
}

void report_batch_write_md(FILE *f, const struct run_report *r) {
    if (r->n_batch == 0) return;
    const struct report_batch_ridge *rr = &r->batch_ridge;
    fprintf(f, "## Batch sweep (context %ld)\n\n", rr->context);
    fputs(
        "B sequences advance one token each per step; the projections and the LM head are one GEMM for all "
        "B (weights read once), everything else runs per sequence. Memory roof = DRAM bytes / DRAM read + "
        "cache-resident bytes / L2 read; compute roof = FLOPs / peak FMA (this run's ceilings); % = roof "
        "time / measured time. GEMMs = the five projection blocks alone, timed inside the step. % paired "
        "read "
        "= DRAM bytes / the read's bytes / median over pairs of (step time / read time), each step "
        "alternated "
        "with the all-threads read the decode steps are paired with. The OpenBLAS columns: the same steps on "
        "f32 weights with its sgemm; the oneDNN columns: on the run's weights with oneDNN's matmul, at the "
        "same thread count.\n\n",
        f);
    fputs("| B | backend | weights | measured ms | min ms | max ms | tokens/s | predicted tokens/s | % "
          "memory roof "
          "| % compute roof | GEMM ms | GEMM GFLOP/s | GEMM % compute roof | OpenBLAS tokens/s | OpenBLAS "
          "GEMM GFLOP/s | oneDNN tokens/s | oneDNN GEMM GFLOP/s | paired read GB/s | % paired read |\n"
          "|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n",
          f);
    for (int i = 0; i < r->n_batch; i++) {
        const struct report_batch *b = &r->batch[i];
        if (!is_forge(b) && batch_on(r, b->batch, 0))
            continue; /* shown in its forge row's columns of its backend; all: batch.csv */
        const struct report_batch *ob = is_forge(b) ? batch_on(r, b->batch, 1) : NULL,
                                  *od = is_forge(b) ? batch_on(r, b->batch, 2) : NULL;
        char c[16][REPORT_FMT_LEN];
        report_fmt_md(b->measured.median_s, 1e3, 1, c[0]);
        report_fmt_md(b->measured.min_s, 1e3, 1, c[1]);
        report_fmt_md(b->measured.max_s, 1e3, 1, c[2]);
        report_fmt_md(b->tokens_per_s, 1, 1, c[3]);
        report_fmt_md(report_ratio((double)b->batch, b->predicted_s), 1, 1, c[4]);
        report_fmt_md(report_ratio(b->memory_roof_s, b->measured.median_s), 100, 0, c[5]);
        report_fmt_md(report_ratio(b->compute_roof_s, b->measured.median_s), 100, 0, c[6]);
        report_fmt_md(b->proj_s, 1e3, 1, c[7]);
        report_fmt_md(report_ratio(b->proj_flops, b->proj_s), 1e-9, 1, c[8]);
        double peak_s = report_ratio(b->compute_roof_s * b->proj_flops, b->flops); /* GEMM FLOPs / peak */
        report_fmt_md(report_ratio(peak_s, b->proj_s), 100, 0, c[9]);
        report_fmt_md(ob ? ob->tokens_per_s : NAN, 1, 1, c[10]);
        report_fmt_md(ob ? report_ratio(ob->proj_flops, ob->proj_s) : NAN, 1e-9, 1, c[11]);
        report_fmt_md(od ? od->tokens_per_s : NAN, 1, 1, c[12]);
        report_fmt_md(od ? report_ratio(od->proj_flops, od->proj_s) : NAN, 1e-9, 1, c[13]);
        report_fmt_md(b->paired_read_gbs, 1, 1, c[14]);
        report_fmt_md(b->paired_efficiency, 100, 0, c[15]);
        fprintf(
            f,
            "| %ld | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
            "|\n",
            b->batch, b->backend, b->dtype, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10],
            c[11], c[12], c[13], c[14], c[15]);
    }
    /* every format's, so one run shows where each would leave the memory roof (the GEMM of a block format
     * dequantises to f32, so its compute roof is the f32 FMA's and its ridge falls at a smaller B) */
    fputs("\nRidge batch (compute roof = memory roof), predicted from this run's ceilings: whole step,", f);
    for (int t = 0; t < REPORT_RIDGE_TYPES; t++) {
        char what[32];
        snprintf(what, sizeof what, "%s %s", t ? ";" : "", fr_dtype_name((enum fr_dtype)t));
        md_ridge(f, what, rr->step[t], true);
    }
    fputs("; the GEMMs alone,", f);
    for (int t = 0; t < REPORT_RIDGE_TYPES; t++) {
        char what[32];
        snprintf(what, sizeof what, "%s %s", t ? ";" : "", fr_dtype_name((enum fr_dtype)t));
        md_ridge(f, what, rr->proj[t], false);
    }
    fputs(". Measured (GEMMs, forge, where their flat time at B = 1 meets their compute line at the largest "
          "B): ",
          f);
    md_ridge_measured(f, r);
    fputs(".\n\n", f);
    md_one_vs_step(f, r);
    if (rr->onednn[0])
        fprintf(
            f,
            "oneDNN rows: %s; its matmul takes activations of the weights' type, so with bf16 weights each "
            "call first rounds its f32 rows to bf16 (inside its time).\n\n",
            rr->onednn);
    if (rr->note[0]) fprintf(f, "Note: %s.\n\n", rr->note);
}

/* Roof of the whole step or of its GEMMs as gnuplot variables: time(B) = max(a + b B, c B), from two rows. */
static void gp_roof_fit(FILE *f, const char *name, const struct report_batch *lo,
                        const struct report_batch *hi, int proj) {
    double a = NAN, b = NAN, c = NAN;
    if (lo && hi && hi->batch > lo->batch) {
        double m_lo = proj ? lo->proj_predicted_s : lo->memory_roof_s,
               m_hi = proj ? hi->proj_predicted_s : hi->memory_roof_s;
        /* the GEMMs' roof is stored whole: its memory part is its value at B = lo when memory-bound */
        b = (m_hi - m_lo) / (double)(hi->batch - lo->batch);
        a = m_lo - b * (double)lo->batch;
        c = (proj ? report_ratio(lo->compute_roof_s * lo->proj_flops, lo->flops) : lo->compute_roof_s) /
            (double)lo->batch;
    }
    fprintf(f, "%s_a = %.9g\n%s_b = %.9g\n%s_c = %.9g\n", name, isfinite(a) ? a : 0, name,
            isfinite(b) ? b : 0, name, isfinite(c) ? c : 0);
}

int report_batch_write_plot_inputs(const struct run_report *r, const char *dir, FILE *vars,
                                   struct fr_err *err) {
    FILE *f = report_file_open(dir, "plot_batch.dat", err);
    if (!f) return -1;
    fputs("# B tokens_per_s lo hi backend(0 forge, 1 openblas, 2 onednn) gemm_tokens_per_s flop_per_byte "
          "gflop_per_s\n",
          f);
    const struct report_batch *lo = NULL, *hi = NULL;
    int n_rows[1 + BATCH_REFS] = {0};
    long b_max = 1;
    for (int i = 0; i < r->n_batch; i++) {
        const struct report_batch *b = &r->batch[i];
        int ref = batch_ref_index(b);
        fprintf(f, "%ld %.9g %.9g %.9g %d %.9g %.9g %.9g\n", b->batch, b->tokens_per_s,
                report_ratio((double)b->batch, b->measured.max_s),
                report_ratio((double)b->batch, b->measured.min_s), ref,
                report_ratio((double)b->batch, b->proj_s), report_ratio(b->flops, b->bytes),
                report_ratio(b->flops, b->measured.median_s) / 1e9);
        n_rows[ref]++;
        if (b->batch > b_max) b_max = b->batch;
        /* the roof curves from the two smallest forge batch sizes that lie on the memory side */
        if (!ref && (!lo || b->batch < lo->batch)) lo = b;
    }
    for (int i = 0; i < r->n_batch; i++) {
        const struct report_batch *b = &r->batch[i];
        if (is_forge(b) && b != lo && lo && b->batch > lo->batch && (!hi || b->batch < hi->batch)) hi = b;
    }
    fprintf(
        vars,
        "n_batch = %d\nn_batch_openblas = %d\nn_batch_onednn = %d\nbatch_max = %ld\nbatch_context = %ld\n",
        n_rows[0], n_rows[1], n_rows[2], b_max, r->batch_ridge.context);
    gp_roof_fit(vars, "step_roof", lo, hi, 0);
    gp_roof_fit(vars, "gemm_roof", lo, hi, 1);
    const struct report_batch_ridge *rr = &r->batch_ridge;
    const enum fr_dtype own = run_wtype(r);
    double pred = rr->proj[own], step = rr->step[own];
    fprintf(vars, "ridge_gemm_pred = %.9g\nridge_gemm_meas = %.9g\nridge_step_pred = %.9g\n",
            isfinite(pred) ? pred : 0, isfinite(rr->proj_measured) ? rr->proj_measured : 0,
            isfinite(step) ? step : 0);
    return report_file_close(f, dir, "plot_batch.dat", err);
}
