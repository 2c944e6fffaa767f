/* Lockstep: two runs on one machine taking turns, one timed repetition each, so both see the same memory
 * state. On the shared VMs the DRAM read flips between about 35 and 62 GB/s within a second or two, inside
 * one process as much as between processes; runs made one after the other (compare-commits' rounds) land in
 * different states, and a 3 % change drowns in that. Two runs in lockstep (scripts/compare-commits.sh
 * --lockstep, through forge-lockstep) alternate every repetition of every timed row: A's repetition i, then
 * B's, then A's i + 1, milliseconds apart.
 *
 * The protocol, over a connected stream socket the driver hands both runs: a run holds the turn while it
 * works (setup included, so the other never runs beside it), and after each repetition sends one byte
 * (bit 0: "I want another repetition of this row") and blocks until the partner's byte comes back. Both sides
 * go on while either wants more, so both time the same number of repetitions of a row when their rows agree.
 * When the partner has gone (EOF or an error on the socket) the run goes on alone and says so. */
#ifndef FR_LOCKSTEP_H
#define FR_LOCKSTEP_H

#include <stdbool.h>

#include "kernels/fr_err.h"

/* Parses "FD,first" or "FD,second" (the --lockstep option's value) and takes the socket: the second waits
 * here for the first's first turn. Non-zero with err (one line) on a bad value or an fd that is not a
 * connected stream socket. */
int lockstep_start(const char *spec, struct fr_err *err);

/* After a repetition: passes the turn with want_more and waits for it back. Returns whether to go on with the
 * row: want_more or the partner's wish. Without a lockstep (or once the partner has gone) returns want_more.
 */
bool lockstep_turn(bool want_more);

/* Hands the turn over for good (the partner reads EOF and goes on alone). */
void lockstep_finish(void);

bool lockstep_active(void);  /* started and the partner still there */
bool lockstep_started(void); /* --lockstep was given */
long lockstep_turns(void);   /* turns passed and returned so far */
/* Why the lockstep ended before this run's last repetition, and how many ran alone ("" while it lasts, when
 * it never started, or when the partner went only after this run's last repetition). */
const char *lockstep_lost(void);

#endif
