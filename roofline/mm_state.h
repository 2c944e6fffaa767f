/* The kernel's memory-management services that move measurements, read from sysfs: transparent huge pages
 * (the weights and the KV cache ask for them with madvise; "never" leaves them on 4 KiB pages) and DAMON
 * (a kdamond that is on samples pages by clearing their accessed bits, and with a pageout scheme splits huge
 * pages it finds idle: both add page walks while a benchmark runs). Reported, never changed. */
#ifndef FR_MM_STATE_H
#define FR_MM_STATE_H

#include <stddef.h>

#define MM_STATE_SYSFS "/sys"

struct mm_state {
    char thp[16];        /* transparent_hugepage/enabled: "always", "madvise", "never"; "" unreadable */
    char thp_defrag[24]; /* transparent_hugepage/defrag, the same way */
    int damon_on;        /* kdamonds whose state is "on" (0 also when DAMON's sysfs is absent) */
    char damon[256];     /* the kdamonds that are on: "kdamond 0 (paddr: pageout)", ...; "" when none */
};

/* Reads the state under the sysfs root `sysfs` (MM_STATE_SYSFS; tests pass a directory of their own).
 * Never fails: what cannot be read stays empty. */
void mm_state_read(struct mm_state *s, const char *sysfs);
/* One line for a report: "transparent huge pages madvise (defrag madvise); DAMON off" or "... DAMON on:
 * kdamond 0 (paddr: pageout)". */
void mm_state_describe(const struct mm_state *s, char *buf, size_t len);

#endif
