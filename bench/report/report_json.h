/* run.json ("schema": "forge-roofline/1") to and from struct run_report. Both directions walk the field
 * tables of bench/report/report.h, so what is written reads back field for field; NaN travels as null. */
#ifndef FR_REPORT_JSON_H
#define FR_REPORT_JSON_H

#include <stddef.h>

#include "bench/report/report.h"
#include "kernels/fr_err.h"

/* The run.json text (caller frees with free()), or NULL on allocation failure. */
char *report_json_string(const struct run_report *r);

/* Parses run.json text into r (report_init first); `name` is only used in messages. A wrong schema, a
 * missing key, a value of the wrong type or too many rows is a one-line error. */
int report_json_parse(const char *json, size_t len, const char *name, struct run_report *r,
                      struct fr_err *err);

/* Reads path: a results folder (its run.json) or the file itself. */
int report_json_read(const char *path, struct run_report *r, struct fr_err *err);

#endif
