/* compare: two runs side by side for a pull request (read them with report_json_read).
 *
 *   compare_check      refuses runs of a different model, dtype, thread count or CPU model
 *   compare_write      compare.md, compare_points.dat and compare_vars.gp (the compare plot's inputs)
 *
 * Rows pair by identity: block name; step context; sampler variant, row kind and vocabulary size. A
 * difference counts as outside the spread when the two runs' [min, max] intervals do not overlap. */
#ifndef FR_COMPARE_H
#define FR_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/report/report.h"
#include "kernels/fr_err.h"

/* Reads and validates run.json ("schema": "forge-roofline/1"); path is a folder or a file. */
int compare_read_run(const char *path, struct run_report *r, struct fr_err *err);

/* Parses run.json text; `name` is only used in messages. */
int compare_parse_run(const char *json, size_t len, const char *name, struct run_report *r,
                      struct fr_err *err);

/* 0 when the runs are comparable; otherwise -1 and err lists every difference on one line. */
int compare_check(const struct run_report *a, const struct run_report *b, struct fr_err *err);

/* How B's [min, max] sits against A's: outside and faster, outside and slower, overlapping, or unknown. */
enum compare_verdict { COMPARE_UNKNOWN, COMPARE_SAME, COMPARE_FASTER, COMPARE_SLOWER };
enum compare_verdict compare_spread(double a_min, double a_max, double b_min, double b_max);

/* Writes compare.md and the plot inputs into out_dir (created if missing). label_a / label_b name the runs
 * (their paths); mismatch is the compare_check message when --force overrode it, else NULL. */
int compare_write(const struct run_report *a, const struct run_report *b, const char *label_a,
                  const char *label_b, const char *mismatch, const char *out_dir, struct fr_err *err);

#endif
