/* The batch sweep's report part on hand-made rows: the measured ridge and the "leaves the memory roof" batch
 * by hand, batch.csv, run.json's batch rows read back, and the report.md section. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/report/report_batch.h"
#include "bench/report/report_json.h"
#include "kernels/dtype.h"

static struct run_report rep;

/* forge rows B = 1, 8, 64 (memory roof 0.1 s + 0.001 s per B; GEMMs 0.05, 0.06, 0.4 s), one OpenBLAS row and
 * one oneDNN row (B = 8, GEMMs 0.08 s: 80 GFLOP/s) */
static void make_rows(struct run_report *r) {
    report_init(r);
    snprintf(r->prov.dtype, sizeof r->prov.dtype, "bf16");
    const long bs[5] = {1, 8, 64, 8, 8};
    const double frac[5] = {0.9, 0.85, 0.5, 0.1, 0.8}, proj[5] = {0.05, 0.06, 0.4, 1.0, 0.08};
    const char *const backend[5] = {"forge", "forge", "forge", "openblas", "onednn"};
    for (int i = 0; i < 5; i++) {
        struct report_batch *b = &r->batch[r->n_batch++];
        b->batch = bs[i], b->context = 1024;
        snprintf(b->backend, sizeof b->backend, "%s", backend[i]);
        snprintf(b->dtype, sizeof b->dtype, "%s", i == 3 ? "f32" : "bf16");
        b->memory_roof_s = 0.1 + 0.001 * (double)bs[i];
        b->compute_roof_s = 0.005 * (double)bs[i];
        b->predicted_s = fmax(b->memory_roof_s, b->compute_roof_s);
        b->tokens_per_s = frac[i] * (double)bs[i] / b->memory_roof_s; /* this fraction of the memory roof */
        b->measured.median_s = b->measured.min_s = b->measured.max_s = (double)bs[i] / b->tokens_per_s;
        b->measured.reps = 3;
        b->flops = 1e9 * (double)bs[i], b->bytes = b->dram_bytes = 1e8;
        b->proj_flops = 0.8e9 * (double)bs[i], b->proj_bytes = 0.9e8, b->proj_s = proj[i];
        b->proj_predicted_s = 0.04;
        b->efficiency = b->predicted_s / b->measured.median_s;
    }
    r->batch_ridge.context = 1024;
    r->batch_ridge.proj[FR_DTYPE_BF16] = 11.5, r->batch_ridge.step[FR_DTYPE_BF16] = INFINITY;
}

/* The finding line and the report.md section of r, as one malloc'd string. */
static char *batch_markdown(const struct run_report *r) {
    char *md = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&md, &len);
    cr_assert_not_null(m);
    report_batch_finding(m, r);
    report_batch_write_md(m, r);
    fclose(m);
    return md;
}

Test(report_batch, measured_ridge_by_hand) {
    make_rows(&rep);
    report_batch_ridge_measured(&rep);
    /* flat part 0.05 s at B = 1 meets the compute line 0.4 s / 64 per sequence at B = 0.05 * 64 / 0.4 = 8 */
    cr_expect(fabs(rep.batch_ridge.proj_measured - 8.0) < 1e-12, "%g", rep.batch_ridge.proj_measured);
    /* B = 1 and 8 are at 90 % and 85 % of the memory roof, B = 64 at 50 %; the OpenBLAS row does not count */
    cr_expect_eq(rep.batch_ridge.leaves_memory_roof_batch, 64.0);
}

Test(report_batch, paired_read_decides_where_the_memory_roof_is_left) {
    make_rows(&rep);
    /* against the ceilings B = 8 is at 85 %; against its paired read at 70 %: the paired figure decides */
    rep.batch[0].paired_efficiency = 0.9, rep.batch[1].paired_efficiency = 0.7;
    rep.batch[2].paired_efficiency = 0.85;
    report_batch_ridge_measured(&rep);
    cr_expect_eq(rep.batch_ridge.leaves_memory_roof_batch, 8.0);
    char *md = batch_markdown(&rep);
    cr_expect(strstr(md, "memory roof (DRAM bytes at the rate of each step's paired read) (below 80 % of it) "
                         "at B = 8") != NULL,
              "%s", md);
    cr_expect(strstr(md, "| n/a | 70 |\n") != NULL, "%s", md);
    free(md);
}

/* B = 1 against the decode step at its context, each over its paired read: 0.99 / 0.90 = 1.1 */
Test(report_batch, one_against_the_step) {
    make_rows(&rep);
    cr_expect(isnan(report_batch_one_over_step(&rep, NULL))); /* no step rows, no paired reads */
    rep.n_steps = 2;
    rep.steps[0].context = 1, rep.steps[0].paired_efficiency = 0.5;
    rep.steps[1].context = 1024, rep.steps[1].paired_efficiency = 0.99;
    rep.batch[0].paired_efficiency = 0.9;
    long t = 0;
    cr_expect(fabs(report_batch_one_over_step(&rep, &t) - 1.1) < 1e-12);
    cr_expect_eq(t, 1024);
    char *md = batch_markdown(&rep);
    cr_expect(strstr(md, "B = 1 against the decode step at context 1024, each normalized by its own paired "
                         "read: 1.100 x") != NULL,
              "%s", md);
    free(md);
}

Test(report_batch, ridge_beyond_the_sweep_is_not_reported) {
    make_rows(&rep);
    /* GEMMs at B = 64 taking 4x their B = 1 time cross at B = 0.05 * 64 / 0.2 = 16, inside the sweep; taking
     * 0.9x (still flat, noise) they would cross at B = 71, beyond the largest B measured: not reported */
    rep.batch[2].proj_s = 0.2;
    report_batch_ridge_measured(&rep);
    cr_expect(fabs(rep.batch_ridge.proj_measured - 16.0) < 1e-12, "%g", rep.batch_ridge.proj_measured);
    rep.batch[2].proj_s = 0.045;
    report_batch_ridge_measured(&rep);
    cr_expect(isnan(rep.batch_ridge.proj_measured), "%g", rep.batch_ridge.proj_measured);
}

Test(report_batch, csv_json_and_markdown) {
    make_rows(&rep);
    report_batch_ridge_measured(&rep);
    char dir[] = "/tmp/fr-batch-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    struct fr_err err = {{0}};
    cr_assert_eq(report_batch_write_csv(&rep, dir, &err), 0, "%s", err.msg);
    char path[128], line[4096];
    snprintf(path, sizeof path, "%s/batch.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    int n = 0;
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_expect(strncmp(line, "batch,context,backend,dtype,", 28) == 0, "%s", line);
    cr_expect(strstr(line, "memory_roof_pct") && strstr(line, "proj_gflop_per_s"), "%s", line);
    while (fgets(line, sizeof line, f)) n++;
    fclose(f);
    cr_expect_eq(n, 5);
    snprintf(rep.batch_ridge.onednn, sizeof rep.batch_ridge.onednn,
             "oneDNN 2.6.3 matmul bf16: gemm:jit (effective ISA avx512_core_bf16)");
    char *json = report_json_string(&rep);
    cr_assert_not_null(json);
    static struct run_report back;
    /* the reader wants a whole run: only the batch part is compared here, so parse errors elsewhere are fine
     */
    report_json_parse(json, strlen(json), "batch test", &back, &err);
    cr_expect_eq(back.n_batch, 5);
    cr_expect_eq(back.batch[2].batch, 64);
    cr_expect_str_eq(back.batch[3].backend, "openblas");
    cr_expect_str_eq(back.batch[4].backend, "onednn");
    cr_expect_str_eq(back.batch_ridge.onednn, rep.batch_ridge.onednn);
    cr_expect_eq(back.batch[1].proj_s, rep.batch[1].proj_s);
    cr_expect(isnan(back.batch[1].paired_efficiency)); /* unpaired rows stay unpaired */
    cr_expect_eq(back.batch_ridge.proj_measured, 8.0);
    cr_expect_eq(back.batch_ridge.proj[FR_DTYPE_BF16], 11.5);
    cr_expect(isinf(back.batch_ridge.step[FR_DTYPE_BF16]) || isnan(back.batch_ridge.step[FR_DTYPE_BF16]));
    cr_expect(isnan(back.batch_ridge.proj[FR_DTYPE_Q4_0])); /* unset: null in run.json, NaN read back */
    free(json);
    char *md = batch_markdown(&rep);
    cr_expect(strstr(md, "leaves the memory roof (below 80 % of it) at B = 64") != NULL, "%s", md);
    cr_expect(strstr(md, "measured ridge: B = 8.0, against B = 11.5 predicted") != NULL, "%s", md);
    cr_expect(strstr(md, "whole step, bf16 none (memory-bound at any B); f32") != NULL, "%s", md);
    cr_expect(strstr(md, "; the GEMMs alone, bf16 B = 11.5; f32") != NULL, "%s", md);
    /* B = 8's forge row carries OpenBLAS's and oneDNN's figures (tokens/s, GEMM GFLOP/s); neither row of
     * its own; the line of what oneDNN ran */
    cr_expect(
        strstr(md, "| OpenBLAS tokens/s | OpenBLAS GEMM GFLOP/s | oneDNN tokens/s | oneDNN GEMM GFLOP/s |"),
        "%s", md);
    cr_expect(strstr(md, "| 7.4 | 6.4 | 59.3 | 80.0 |") != NULL, "%s", md);
    cr_expect(strstr(md, "| 8 | onednn |") == NULL && strstr(md, "| 8 | openblas |") == NULL, "%s", md);
    cr_expect(strstr(md, "oneDNN rows: oneDNN 2.6.3 matmul bf16: gemm:jit (effective ISA avx512_core_bf16);"),
              "%s", md);
    free(md);
    /* a q4_0 run's finding quotes q4_0's ridge, and run.json keeps every format's */
    snprintf(rep.prov.dtype, sizeof rep.prov.dtype, "q4_0");
    rep.batch_ridge.proj[FR_DTYPE_Q4_0] = 3.5;
    md = batch_markdown(&rep);
    cr_expect(strstr(md, "against B = 3.5 predicted (q4_0 weights)") != NULL, "%s", md);
    cr_expect(strstr(md, "; q4_0 B = 3.5.") != NULL, "%s", md);
    free(md);
    snprintf(line, sizeof line, "rm -rf %s", dir);
    cr_expect_eq(system(line), 0);
}

/* plot_batch.dat's column 5 names each row's backend (0 forge, 1 openblas, 2 onednn) and plot_vars.gp counts
 * each one's rows, so scripts/batch.gp draws every backend it has. */
Test(report_batch, plot_inputs_mark_each_backend) {
    make_rows(&rep);
    report_batch_ridge_measured(&rep);
    char dir[] = "/tmp/fr-batch-plot-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char *vars = NULL;
    size_t vars_len = 0;
    FILE *v = open_memstream(&vars, &vars_len);
    cr_assert_not_null(v);
    struct fr_err err = {{0}};
    cr_assert_eq(report_batch_write_plot_inputs(&rep, dir, v, &err), 0, "%s", err.msg);
    fclose(v);
    cr_expect(strstr(vars, "n_batch = 3\nn_batch_openblas = 1\nn_batch_onednn = 1\n") != NULL, "%s", vars);
    free(vars);
    char path[128], line[512];
    snprintf(path, sizeof path, "%s/plot_batch.dat", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    int backend[5], n = 0;
    while (fgets(line, sizeof line, f))
        if (line[0] != '#' && n < 5) {
            long b;
            double t, lo, hi;
            cr_assert_eq(sscanf(line, "%ld %lf %lf %lf %d", &b, &t, &lo, &hi, &backend[n]), 5, "%s", line);
            n++;
        }
    fclose(f);
    cr_assert_eq(n, 5);
    cr_expect(backend[0] == 0 && backend[1] == 0 && backend[2] == 0 && backend[3] == 1 && backend[4] == 2);
    snprintf(line, sizeof line, "rm -rf %s", dir);
    cr_expect_eq(system(line), 0);
}
