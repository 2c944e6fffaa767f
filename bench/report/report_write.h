/* Writers for struct run_report: the output contract (docs/run-folder.md).
 *
 *   report_write_data      run.json, blocks.csv, steps.csv, sampler.csv, ceilings.csv and the plot inputs
 *                          (plot_vars.gp, plot_*.dat) into dir; run.json itself is bench/report/report_json.h
 *   report_plots_draw      runs scripts/plots.sh on dir (roofline, breakdown, sampler, context; PNG + SVG)
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
#include "kernels/fr_err.h"

/* scripts/plots.sh exits with this status when gnuplot is not installed. */
#define REPORT_PLOTS_EXIT_NO_GNUPLOT 77

enum report_plots_result {
    REPORT_PLOTS_DRAWN = 0,
    REPORT_PLOTS_NO_GNUPLOT = 1, /* skipped: data files are complete, images absent */
    REPORT_PLOTS_FAILED = -1,
};

int report_write_data(const struct run_report *r, const char *dir, struct fr_err *err);

/* The plot inputs alone (part of report_write_data): plot_vars.gp and plot_*.dat. */
int report_plots_write_inputs(const struct run_report *r, const char *dir, struct fr_err *err);

/* Runs `plots.sh [args...] dir`; scripts/ is $FORGE_ROOFLINE_SCRIPTS when set, else the first of ./scripts,
 * <bin>/../scripts (build tree), <bin>/../share/forge-roofline/scripts (install). Returns a
 * report_plots_result; err says why on NO_GNUPLOT and FAILED. mode is NULL for a run folder or "--compare"
 * for a compare folder. */
int report_plots_draw(const char *dir, struct fr_err *err);
int report_plots_draw_mode(const char *mode, const char *dir, struct fr_err *err);

int report_write_markdown(const struct run_report *r, const char *dir, enum report_plots_result plots,
                          const char *plots_note, struct fr_err *err);

/* Data, plots, markdown. Returns 0 when everything was written (plots skipped for lack of gnuplot counts as
 * written: *plots says so, and plots_err holds the one-line reason); -1 on any failure. When gnuplot itself
 * fails, the data files and report.md (which says why) are still written before -1 comes back. */
int report_write_run(const struct run_report *r, const char *dir, enum report_plots_result *plots,
                     struct fr_err *plots_err, struct fr_err *err);

int report_write_summary(const struct run_report *r, FILE *out);

/* report.md's "Roofs per block" section (bench/report/report_roofs.c). A block to fix takes at least
 * REPORT_FIX_SHARE of the step and runs under REPORT_FIX_EFFICIENCY of its roof (or above it). */
#define REPORT_FIX_SHARE      0.01
#define REPORT_FIX_EFFICIENCY 0.5
void report_write_roofs(FILE *f, const struct run_report *r);
bool report_block_to_fix(const struct run_report *r, const struct report_block *b);

/* Plot-input helpers shared with compare: a gnuplot single-quoted string, and the roofs of a run as gnuplot
 * arrays <prefix>bw_val/_name (n_<prefix>bw) and <prefix>peak_val/_name (n_<prefix>peak). */
void report_gp_str(FILE *f, const char *s);
void report_gp_roofs(FILE *f, const struct run_report *r, const char *prefix);

/* One table's CSV header line and one row (no newline), as every CSV file of a run writes them. */
void report_csv_header(FILE *f, enum report_table t);
void report_csv_row(FILE *f, enum report_table t, const void *row);

#endif
