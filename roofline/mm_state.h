/* The kernel's memory-management services that move measurements, read from sysfs: transparent huge pages
 * (the weights and the KV cache ask for them with madvise; "never" leaves them on 4 KiB pages) and DAMON
 * (a kdamond that is on works on the process's pages while a benchmark runs: on the 2-core Zen 5 VM
 * stopping one took Qwen3-4B's kv_append from 1.96 ms to 99 us a step; docs/figures.md). Reported, never
 * changed. */
#ifndef FR_MM_STATE_H
#define FR_MM_STATE_H

#include <stddef.h>

#define MM_STATE_SYSFS "/sys"

struct mm_state {
    char thp[16];        /* transparent_hugepage/enabled: "always", "madvise", "never"; "" unreadable */
    char thp_defrag[24]; /* transparent_hugepage/defrag, the same way */
    int damon_on;        /* kdamonds that are on, and DAMON modules enabled (0 also when sysfs shows none) */
    char damon[256];     /* those: "kdamond 0 (paddr: pageout)", "damon_reclaim", ...; "" when none */
};

/* Reads the state under the sysfs root `sysfs` (MM_STATE_SYSFS; tests pass a directory of their own).
 * Never fails: what cannot be read stays empty. */
void mm_state_read(struct mm_state *s, const char *sysfs);
/* One line for a report: "transparent huge pages madvise (defrag madvise); DAMON off" or "... DAMON on:
 * kdamond 0 (paddr: pageout)". */
void mm_state_describe(const struct mm_state *s, char *buf, size_t len);
/* What a running kdamond does to the figures and how root stops it: one sentence, no final period, for
 * report.md, machine and compare. */
const char *mm_state_damon_note(void);

#endif
