/* The run checked against itself: each block timed alone against its own time inside the decode step at
 * the blocks' context (the observer's per-block times), and the blocks alone, summed, against that step.
 * A block alone repeats one block's calls in a loop on one state, the step runs them among the others; both
 * time the same kernels on the same bytes, so a wide disagreement says one of the two measurements is not
 * what the step costs (docs/tuning/block-inputs.md: subnormal inputs left by the repetitions themselves), and
 * then no finding may rank that block from its time alone. */
#ifndef FR_REPORT_SELFCHECK_H
#define FR_REPORT_SELFCHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "bench/report/report.h"

#define REPORT_SELFCHECK_SUM_BAND   0.15 /* the blocks alone sum to the step within ±15 % */
#define REPORT_SELFCHECK_BLOCK_BAND 0.25 /* a block alone within ±25 % of its time inside the step */
#define REPORT_SELFCHECK_MIN_SHARE  0.01 /* blocks of at least 1 % of the step are held to the band */

/* The step measured at the blocks' context, or NULL when the run has none (nothing to check against). */
const struct report_step *report_selfcheck_step(const struct run_report *r);

/* Block b alone over its time inside the step at the blocks' context; NaN when that step or its time of b
 * is missing. */
double report_selfcheck_block_ratio(const struct run_report *r, const struct report_block *b);

/* The sum of the blocks alone over the step at the blocks' context; NaN when there is no such step. */
double report_selfcheck_sum_ratio(const struct run_report *r);

/* True when the run's own figures contradict block b's time alone: it takes more than the whole step, or,
 * for a block of at least REPORT_SELFCHECK_MIN_SHARE of the step, it lies outside the band around its time
 * inside the step. */
bool report_selfcheck_block_contradicted(const struct run_report *r, const struct report_block *b);

/* The self-check as one sentence for the findings (markdown, no line end); returns true when it failed
 * (an accounting error). */
bool report_selfcheck_text(const struct run_report *r, char *out, size_t len);

#endif
