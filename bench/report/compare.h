/* compare: two runs side by side for a pull request (read them with report_json_read).
 *
 *   compare_check            refuses runs of a different model, dtype, thread count or CPU model
 *   compare_pool_runs        several runs of one side pooled into one (bench/report/compare_pool.h)
 *   compare_findings_compute the opening lines of compare.md: the headline verdicts, the rows decided
 *   compare_write            compare.md, compare_points.dat, compare_forest.dat and compare_vars.gp (the
 *                            compare plots' inputs)
 *
 * Rows pair by identity: block name; step context; sampler variant, row kind and vocabulary size. Each
 * row's verdict is decided on the raw repetitions (bench/report/compare_verdict.h); the tables also show
 * the medians' B/A. A row whose context, model, dtype, ISA or thread count differs between the runs is not
 * comparable: shown, with no ratio and no verdict. */
#ifndef FR_COMPARE_H
#define FR_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/report/compare_verdict.h"
#include "bench/report/findings.h"
#include "bench/report/report.h"
#include "kernels/fr_err.h"

/* 0 when the runs are comparable; otherwise -1 and err lists every difference on one line. */
int compare_check(const struct run_report *a, const struct run_report *b, struct fr_err *err);

/* Writes compare.md and the plot inputs into out_dir (created if missing). label_a / label_b name the runs
 * (their paths); n_a / n_b say how many runs each side pooled; mismatch is the compare_check message when
 * --force overrode it, else NULL; v the rows' verdicts (NULL: none, every row "n/a"). */
int compare_write(const struct run_report *a, const struct run_report *b, const char *label_a,
                  const char *label_b, int n_a, int n_b, const char *mismatch,
                  const struct compare_verdicts *v, const char *out_dir, struct fr_err *err);

/* At most eight lines, from the pairs compare_write tabulates: the headline rows' verdicts, the other rows
 * faster and slower (with the ratio and interval each verdict rests on), how many were unchanged or
 * undecided, the rows that are not comparable and why, and the two runs' paired read bandwidths. */
void compare_findings_compute(const struct run_report *a, const struct run_report *b,
                              const struct compare_verdicts *v, struct report_findings *out);

/* The median of the finite values among v[0..n) (reorders v); NaN when there is none. */
double compare_median(double *v, int n);

/* The ISA a run's kernels used ("" when its run.json predates the field: unknown, comparable only with
 * another unknown). */
const char *compare_run_isa(const struct run_report *r);

#endif
