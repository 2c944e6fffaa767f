/* The CSV text of a report table: what every CSV file of a run writes, from the one field list of
 * bench/report/report.h. */
#ifndef FR_REPORT_CSV_H
#define FR_REPORT_CSV_H

#include <stdio.h>

#include "bench/report/report.h"

/* One table's CSV header line and one row (no newline). */
void report_csv_header(FILE *f, enum report_table t);
void report_csv_row(FILE *f, enum report_table t, const void *row);
/* dir/name: the table's header and n rows, rows[i] at (const char *)rows + i * stride. Returns 0, or -1 with
 * err set. */
int report_csv_write_table(const char *dir, const char *name, enum report_table t, const void *rows,
                           size_t stride, int n, struct fr_err *err);

#endif
