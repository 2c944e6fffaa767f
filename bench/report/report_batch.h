/* The batch sweep's part of a run's report (struct report_batch rows and struct report_batch_ridge):
 * batch.csv, the report.md section and finding, the plot inputs of scripts/batch.gp (plot_batch.dat,
 * variables in plot_vars.gp) and the batched steps as points on the roofline plot. Nothing is written for a
 * run without a batch sweep except an empty plot_batch.dat and n_batch = 0. */
#ifndef FR_REPORT_BATCH_H
#define FR_REPORT_BATCH_H

#include <stdio.h>

#include "bench/report/report.h"

int report_batch_write_csv(const struct run_report *r, const char *dir, struct fr_err *err);
/* The "## Batch sweep" section: the table (forge with OpenBLAS and oneDNN beside it), the ridges, what the
 * oneDNN rows ran, the notes. */
void report_batch_write_md(FILE *f, const struct run_report *r);
/* One finding line for "## Findings" (nothing when the run had no sweep). */
void report_batch_finding(FILE *f, const struct run_report *r);
/* plot_batch.dat (always), and the batch variables appended to plot_vars.gp (f). */
int report_batch_write_plot_inputs(const struct run_report *r, const char *dir, FILE *vars,
                                   struct fr_err *err);

/* The B whose forge row is where the measured curve leaves the memory roof, and the measured GEMM ridge, as
 * defined in struct report_batch_ridge; filled into r->batch_ridge from the rows. */
void report_batch_ridge_measured(struct run_report *r);

/* The forge B = 1 row's time against the decode step row at the same context, each normalized by its own
 * paired read: step paired_efficiency / B = 1 paired_efficiency (above 1: B = 1 slower); *context (may be
 * NULL) gets that context. NaN when the run has no such pair of rows or either is unpaired. */
double report_batch_one_over_step(const struct run_report *r, long *context);

#endif
