/* The markdown of what the counters saw: which events were counted (and why the others were not), the energy
 * set, and per block and per step the utilization, the disturbed and faulted repetitions, the median with
 * and without the disturbed repetitions, IPC, energy and each counted event. */
#ifndef FR_REPORT_COUNTED_H
#define FR_REPORT_COUNTED_H

#include <stdio.h>

#include "bench/report/report.h"

/* The "Counters:" and "Energy:" lines (report.md and the stdout summary). */
void report_md_counters(FILE *f, const struct run_report *r);
/* The counters per step of report.md (each block's are in blocks.csv); nothing when nothing is counted. */
void report_md_counted(FILE *f, const struct run_report *r);

/* counters.csv: one line per event of the team and energy sets: set,event,counted,source,reason (what
 * counted each figure: papi, perf_event or getrusage; or why it is not counted). */
int report_counted_write_csv(const struct run_report *r, const char *dir, struct fr_err *err);

#endif
