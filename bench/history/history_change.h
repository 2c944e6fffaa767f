/* history_change: the shifts in a row's series, found by PELT (Killick, Fearnhead and Eckley 2012) over the
 * log of the per-run points with a Gaussian mean-change cost.
 *
 *   y_i = log(point_i); sigma = MAD of the successive differences / (0.6745 * sqrt 2), so a shift itself
 *   does not inflate it; the cost of a segment is sum (y - mean)^2 / sigma^2 and each change costs a
 *   penalty beta = HISTORY_CHANGE_PENALTY * ln n (BIC's 2 ln n raised to 3 ln n for a false-alarm rate
 *   near 1 in 300 flat series of 200 points); every segment holds at least HISTORY_CHANGE_MIN_SEGMENT runs.
 *
 * Each shift is reported with its size (the geometric means' ratio after/before, minus 1), a 95 % interval
 * of that size and a confidence (1 - p of Welch's test on the two neighbouring segments' logs, normal
 * approximation; the test looks at where the detector chose to cut, so it is optimistic). */
#ifndef FR_HISTORY_CHANGE_H
#define FR_HISTORY_CHANGE_H

#include "kernels/fr_err.h"

#define HISTORY_CHANGE_PENALTY     3.0
#define HISTORY_CHANGE_MIN_SEGMENT 3

struct history_shift {
    int index;            /* the first point after the shift */
    double before, after; /* geometric means of the neighbouring segments */
    double size;          /* after / before - 1 */
    double size_lo, size_hi;
    double confidence;
};

/* Finds the shifts in values[0..n) (positive and finite; anything else is refused). Returns their count (at
 * most max_out, oldest first), or -1 with err. Fewer than 2 * HISTORY_CHANGE_MIN_SEGMENT points: 0. */
int history_change_detect(const double *values, int n, struct history_shift *out, int max_out,
                          struct fr_err *err);

#endif
