/* The plots of a run or a compare folder: their inputs (plot_vars.gp and plot_*.dat, which
 * report_write_data writes into a run folder) and running scripts/plots.sh on the folder (roofline,
 * breakdown, sampler, context, batch; PNG + SVG). Every function returns 0 on success (or a
 * report_plots_result); errors come back as one line in err. */
#ifndef FR_REPORT_PLOTS_H
#define FR_REPORT_PLOTS_H

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

/* The plot inputs alone (part of report_write_data): plot_vars.gp and plot_*.dat. */
int report_plots_write_inputs(const struct run_report *r, const char *dir, struct fr_err *err);

/* Runs `plots.sh [args...] dir`; scripts/ is $FORGE_ROOFLINE_SCRIPTS when set, else the first of ./scripts,
 * <bin>/../scripts (build tree), <bin>/../share/forge-roofline/scripts (install). Returns a
 * report_plots_result; err says why on NO_GNUPLOT and FAILED. mode is NULL for a run folder or "--compare"
 * for a compare folder. */
int report_plots_draw(const char *dir, struct fr_err *err);
int report_plots_draw_mode(const char *mode, const char *dir, struct fr_err *err);

/* Plot-input helpers shared with compare: a gnuplot single-quoted string, and the roofs of a run as gnuplot
 * arrays <prefix>bw_val/_name (n_<prefix>bw) and <prefix>peak_val/_name (n_<prefix>peak). */
void report_gp_str(FILE *f, const char *s);
void report_gp_roofs(FILE *f, const struct run_report *r, const char *prefix);

#endif
