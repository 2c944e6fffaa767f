/* report.md's "What to do next" section and each block's share of the step, from a struct run_report. */
#ifndef FR_REPORT_ROOFS_H
#define FR_REPORT_ROOFS_H

#include <stdbool.h>
#include <stdio.h>

#include "bench/report/report.h"

/* report.md's "What to do next" section (bench/report/report_roofs.c). A block to fix takes at least
 * REPORT_FIX_SHARE of the step and runs under REPORT_FIX_EFFICIENCY of its roof (or above it). */
#define REPORT_FIX_SHARE      0.01
#define REPORT_FIX_EFFICIENCY 0.5
/* A block to fix that reaches this share of a read of its own bytes runs as fast as they can be fetched:
 * the report says its loop is not what holds it (e.g. attention at a short context, a few KiB from each KV
 * head, bound by the memory's latency, which no bandwidth roof models). */
#define REPORT_OWN_READ_MATCH 0.9
void report_write_roofs(FILE *f, const struct run_report *r);
bool report_block_to_fix(const struct run_report *r, const struct report_block *b);
/* The share of the headline step a block takes: its time inside that step, else its time alone over the sum
 * of the blocks alone (NaN when neither is measured). */
double report_block_share(const struct run_report *r, const struct report_block *b);
/* Per quantised format a matrix block ran in (its `format`; a run.json without one: the run's dtype), one
 * line: the format's measured compute roof (ceiling row "<type>_gflops"), the ridge point where the DRAM
 * read roof meets it, and the roof that binds each block that streams a matrix in it (its bound: "DRAM" or
 * "int8 dot"; a mixed block says its formats). Nothing for a run with no quantised matrix. */
void report_write_quant_roofs(FILE *f, const struct run_report *r);
/* One line: per context, the step time inside no block. Nothing without steps. */
void report_write_unattributed(FILE *f, const struct run_report *r);

#endif
