/* compare: two runs side by side for a pull request (read them with report_json_read).
 *
 *   compare_check            refuses runs of a different model, dtype, thread count or CPU model
 *   compare_pool_runs        several runs of one side pooled into one (bench/report/compare_pool.h)
 *   compare_findings_compute the opening lines of compare.md: what got faster or slower beyond the noise
 *   compare_write            compare.md, compare_points.dat and compare_vars.gp (the compare plot's inputs)
 *
 * Rows pair by identity: block name; step context; sampler variant, row kind and vocabulary size. A
 * difference counts as outside the spread when the two runs' [min, max] intervals do not overlap. A row
 * whose context, model, dtype, ISA or thread count differs between the runs is not comparable: shown, with
 * no ratio and no verdict. Memory-bound rows (weight blocks, attention, steps) also get B/A normalized by
 * each run's own paired read bandwidth (B/A x B's GB/s / A's), and their verdict rests on it. */
#ifndef FR_COMPARE_H
#define FR_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/report/findings.h"
#include "bench/report/report.h"
#include "kernels/fr_err.h"

/* 0 when the runs are comparable; otherwise -1 and err lists every difference on one line. */
int compare_check(const struct run_report *a, const struct run_report *b, struct fr_err *err);

/* How B's [min, max] sits against A's: outside and faster, outside and slower, overlapping, or unknown. */
enum compare_verdict { COMPARE_UNKNOWN, COMPARE_SAME, COMPARE_FASTER, COMPARE_SLOWER };
enum compare_verdict compare_spread(double a_min, double a_max, double b_min, double b_max);

/* The chance that m repetitions all fall on one given side of n others drawn from the same distribution:
 * m! n! / (m + n)!. A row gets a verdict only when that chance is at most COMPARE_MAX_CHANCE_APART (3 and 3
 * repetitions: 1/20), so [min, max] spreads from one or two repetitions never make a verdict. */
#define COMPARE_MAX_CHANCE_APART 0.05
double compare_chance_apart(int m, int n);

/* Writes compare.md and the plot inputs into out_dir (created if missing). label_a / label_b name the runs
 * (their paths); n_a / n_b say how many runs each side pooled; mismatch is the compare_check message when
 * --force overrode it, else NULL. */
int compare_write(const struct run_report *a, const struct run_report *b, const char *label_a,
                  const char *label_b, int n_a, int n_b, const char *mismatch, const char *out_dir,
                  struct fr_err *err);

/* At most eight lines, from the pairs compare_write tabulates: the steps' verdicts, the rows faster and
 * slower beyond the noise (with the ratio each verdict rests on), how many were within it, the rows that are
 * not comparable and why, and the two runs' paired read bandwidths. */
void compare_findings_compute(const struct run_report *a, const struct run_report *b,
                              struct report_findings *out);

/* The median of the finite values among v[0..n) (reorders v); NaN when there is none. */
double compare_median(double *v, int n);

/* The ISA a run's kernels used ("" when its run.json predates the field: unknown, comparable only with
 * another unknown). */
const char *compare_run_isa(const struct run_report *r);

#endif
