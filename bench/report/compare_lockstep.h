/* Rows of a compare timed in lockstep (roofline/lockstep.h): in each round the row's repetitions of A's run
 * and B's run alternate in time (A, B, A, B, ... or B, A, ...), as many on each side, so the i-th of A and
 * the i-th of B ran milliseconds apart in the same memory state. Such a row is judged on its rounds:
 *
 *   round value  the median over its pairs of log(B time / A time) (pairs with a disturbed repetition left
 *                out while at least 3 clean pairs stay)
 *   B/A          exp of the mean of the round values; Student's 95 % interval on R - 1 degrees of freedom,
 *                and the paired t test's p: the round is the unit, since what each process keeps to
 *                itself does not cancel within a round (measured: A/A rounds' step@1 B/A sd 1.7 %; its
 *                cause, page placement or other, was not isolated)
 *
 * The raw times decide: both sides saw the same read. Normalising by the paired reads (as unpaired rows
 * are) biased 7 A/A rounds' step@1 by -1.3 % on the measuring VM, and is given beside it only. */
#ifndef FR_COMPARE_LOCKSTEP_H
#define FR_COMPARE_LOCKSTEP_H

#include <stdbool.h>

#include "roofline/samples.h"

#define COMPARE_LOCKSTEP_MAX_ROUNDS 16 /* compare_verdict.h's runs a side */

/* One run's samples: s[0 .. n-1] of its side's set, in the order written. */
struct compare_lockstep_run {
    const struct sample *s;
    int n;
};

struct compare_lockstep_row {
    int rounds;                               /* rounds whose runs both have the row, all interleaved */
    int pairs;                                /* pairs used over all rounds */
    double raw[COMPARE_LOCKSTEP_MAX_ROUNDS];  /* each round's median log(B / A) */
    double norm[COMPARE_LOCKSTEP_MAX_ROUNDS]; /* the same with beta x log(B's read / A's read) added; NaN */
};

/* The row's round values when the row is in lockstep in every one of the n_rounds rounds (round i: A's run
 * a[i], B's run b[i]; at most COMPARE_LOCKSTEP_MAX_ROUNDS) that has it on both sides, and at least one does:
 * returns 1. Returns 0 when a round has the row on both sides without alternating repetitions (or no round
 * has it), -1 out of memory. beta: the elasticity the normalised values use. */
int compare_lockstep_row(const struct compare_lockstep_run *a, const struct compare_lockstep_run *b,
                         int n_rounds, const char *key, double beta, struct compare_lockstep_row *out);

#endif
