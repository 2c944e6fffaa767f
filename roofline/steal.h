/* The hypervisor's steal time, from /proc/stat: the time this VM's CPUs were runnable while the host ran
 * something else, which no change of ours can win back. Read around each timed repetition (rep_counts.h), it
 * marks the ones that lost more than a share of the machine's CPU time to the host. The kernel accounts it
 * per CPU in clock ticks (USER_HZ, 10 ms at the usual 100), so a repetition shorter than a tick is judged by
 * the tick that falls inside it, whose steal may have been taken just before it started: short repetitions
 * are flagged too often, never too rarely. */
#ifndef FR_STEAL_H
#define FR_STEAL_H

#include <stdbool.h>

#include "kernels/fr_err.h"

struct steal_clock {
    int fd;        /* /proc/stat (or the file given), read again from its start each time */
    double tick_s; /* seconds per tick: 1 / sysconf(_SC_CLK_TCK) */
    int cpus;      /* CPUs the machine-wide line sums over (its cpuN lines) */
};

/* Opens path (NULL: /proc/stat) and reads it once: non-zero with err when it cannot be read or its "cpu"
 * line has no steal field (kernels before 2.6.11). */
int steal_open(struct steal_clock *s, const char *path, struct fr_err *err);
/* Machine-wide steal so far in seconds (summed over CPUs); non-zero with err when the read fails. */
int steal_read_s(struct steal_clock *s, double *steal_s, struct fr_err *err);
void steal_close(struct steal_clock *s);

/* Parses /proc/stat's text: the "cpu" line's steal ticks (its 8th value) and the count of cpuN lines.
 * Returns 0, or -1 when the text has no such line. */
int steal_parse(const char *text, unsigned long long *steal_ticks, int *cpus);

#endif
