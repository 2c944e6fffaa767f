/* Prompt processing's part of a run's report (struct report_prefill rows): prefill.csv, the report.md
 * section and finding, and the prefill's points on the roofline plot (plot_prefill.dat). Nothing is written
 * for a run without prompt processing but an empty plot_prefill.dat. */
#ifndef FR_REPORT_PREFILL_H
#define FR_REPORT_PREFILL_H

#include <stdio.h>

#include "bench/report/report.h"

int report_prefill_write_csv(const struct run_report *r, const char *dir, struct fr_err *err);
/* The "## Prompt processing" section: per prompt length pp tokens/s, time to first token and the blocks. */
void report_prefill_write_md(FILE *f, const struct run_report *r);
/* One finding line for "## Findings" (nothing when the run processed no prompt). */
void report_prefill_finding(FILE *f, const struct run_report *r);
/* plot_prefill.dat: intensity, GFLOP/s, whether the row is the whole prefill, the label; and n_prefill_pts
 * in plot_vars.gp (vars). */
int report_prefill_write_plot_inputs(const struct run_report *r, const char *dir, FILE *vars,
                                     struct fr_err *err);
/* The row of the whole prefill of prompt length n at depth d, or NULL. */
const struct report_prefill *report_prefill_total(const struct run_report *r, long n, long depth);

#endif
