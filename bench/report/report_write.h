/* Writers for struct run_report: the output contract (docs/run-folder.md).
 *
 *   report_write_data      run.json, blocks.csv, steps.csv, sampler.csv, ceilings.csv and the plot inputs
 *                          (plot_vars.gp, plot_*.dat) into dir; run.json itself is bench/report/report_json.h
 *   report_plots_draw      runs scripts/plots.sh on dir (bench/report/report_plots.h)
 *   report_write_markdown  report.md (PR-ready); links the plots when they were drawn, says why when not
 *   report_write_run       all three in order; the usual entry point
 *   report_write_summary   the markdown summary for stdout
 *
 * Every function returns 0 on success; errors come back as one line in err. Nothing here prints, except
 * report_write_summary to the FILE it is given.
 *
 * The orchestrator's sequence (bench/report/results_dir.h for the folder):
 *   results_dir_begin(&rd, out, host, stamp, &err)        before measuring: an unwritable --out fails here
 *   ... measure, fill a struct run_report ...
 *   report_write_run(r, rd.tmp_path, &plots, &perr, &err) warn with perr.msg when plots == NO_GNUPLOT
 *   results_dir_commit(&rd, &err)                         or results_dir_abort(&rd) on any failure
 *   report_write_summary(r, stdout) */
#ifndef FR_REPORT_WRITE_H
#define FR_REPORT_WRITE_H

#include <stdio.h>

#include "bench/report/report.h"
#include "bench/report/report_plots.h"
#include "kernels/fr_err.h"

int report_write_data(const struct run_report *r, const char *dir, struct fr_err *err);

int report_write_markdown(const struct run_report *r, const char *dir, enum report_plots_result plots,
                          const char *plots_note, struct fr_err *err);

/* Data, plots, markdown. Returns 0 when everything was written (plots skipped for lack of gnuplot counts as
 * written: *plots says so, and plots_err holds the one-line reason); -1 on any failure. When gnuplot itself
 * fails, the data files and report.md (which says why) are still written before -1 comes back. */
int report_write_run(const struct run_report *r, const char *dir, enum report_plots_result *plots,
                     struct fr_err *plots_err, struct fr_err *err);

int report_write_summary(const struct run_report *r, FILE *out);

#endif
