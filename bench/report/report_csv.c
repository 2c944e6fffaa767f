/* CSV text of the report's field tables (bench/report/report.h): the header line and one row of a table, as
 * every CSV file of a run writes them (blocks.csv, steps.csv, sampler.csv, ceilings.csv, batch.csv). A
 * string with a comma, quote or line end is quoted; NaN is an empty cell. Checked in
 * tests/test_report_write.c (headers, rows, nulls). */
#include "bench/report/report_csv.h"

#include <string.h>

static void csv_str(FILE *f, const char *s) {
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (const char *p = s; *p; p++) {
        if (*p == '"') fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

void report_csv_header(FILE *f, enum report_table t) {
    int n;
    const struct report_field *fs = report_table_fields(t, &n);
    const char *sep = "";
    for (int i = 0; i < n; i++) {
        if (!(fs[i].where & REPORT_IN_CSV)) continue;
        fprintf(f, "%s%s", sep, fs[i].csv_name ? fs[i].csv_name : fs[i].name);
        sep = ",";
    }
}

/* One row's table fields, comma-separated, without the line end. */
void report_csv_row(FILE *f, enum report_table t, const void *row) {
    int n;
    const struct report_field *fs = report_table_fields(t, &n);
    bool first = true;
    for (int i = 0; i < n; i++) {
        const struct report_field *fd = &fs[i];
        if (!(fd->where & REPORT_IN_CSV)) continue;
        if (!first) fputc(',', f);
        first = false;
        const void *p = report_field_at(row, fd->offset);
        char num[REPORT_FMT_LEN];
        switch (fd->type) {
        case REPORT_F_STR:
            csv_str(f, p);
            break;
        case REPORT_F_DOUBLE:
            report_fmt_exact(*(const double *)p, num), fputs(num, f);
            break;
        case REPORT_F_INT:
            fprintf(f, "%d", *(const int *)p);
            break;
        case REPORT_F_LONG:
            fprintf(f, "%ld", *(const long *)p);
            break;
        case REPORT_F_LONG_OPT:
            if (*(const long *)p >= 0) fprintf(f, "%ld", *(const long *)p);
            break;
        case REPORT_F_BOOL:
            fputc(*(const bool *)p ? '1' : '0', f);
            break;
        case REPORT_F_ABOVE_ROOF:
            fputc(report_is_above_roof(*(const bool *)p, *(const double *)report_field_at(row, fd->aux))
                      ? '1'
                      : '0',
                  f);
            break;
        case REPORT_F_KIND:
            fputs(report_ceiling_kind_name(*(const enum report_ceiling_kind *)p), f);
            break;
        case REPORT_F_UNIT:
            fputs(report_ceiling_unit(*(const enum report_ceiling_kind *)p), f);
            break;
        case REPORT_F_DERIVED:
            report_fmt_exact(fd->derive(row), num), fputs(num, f);
            break;
        }
    }
}

int report_csv_write_table(const char *dir, const char *name, enum report_table t, const void *rows,
                           size_t stride, int n, struct fr_err *err) {
    FILE *f = report_file_open(dir, name, err);
    if (!f) return -1;
    report_csv_header(f, t);
    fputc('\n', f);
    for (int i = 0; i < n; i++) {
        report_csv_row(f, t, (const char *)rows + (size_t)i * stride);
        fputc('\n', f);
    }
    return report_file_close(f, dir, name, err);
}
