/* The CSV text of a report table: what every CSV file of a run writes, from the one field list of
 * bench/report/report.h. */
#ifndef FR_REPORT_CSV_H
#define FR_REPORT_CSV_H

#include <stdio.h>

#include "bench/report/report.h"

/* One table's CSV header line and one row (no newline). */
void report_csv_header(FILE *f, enum report_table t);
void report_csv_row(FILE *f, enum report_table t, const void *row);

#endif
