/* Raw samples (see samples.h): a growing array the timing harness appends to, and samples.csv written and
 * read back. The reader is strict: the schema line, the header, eight fields a line, numbers that parse in
 * full; anything else is refused with the file and line, never half read. Checked in tests/test_samples.c. */
#include "roofline/samples.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int samples_begin_row(struct sample_set *set, double read_bytes, int threads, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(set->row, sizeof set->row, fmt, ap);
    va_end(ap);
    set->read_bytes = read_bytes;
    set->threads = threads;
    return set->n;
}

static struct sample *grow(struct sample_set *set) {
    if (set->n == set->cap) {
        int cap = set->cap ? 2 * set->cap : 256;
        struct sample *s = realloc(set->s, sizeof *s * (size_t)cap);
        if (!s) {
            set->failed = true;
            return NULL;
        }
        set->s = s, set->cap = cap;
    }
    return &set->s[set->n++];
}

static double gbs_of(double bytes, double s) {
    return bytes > 0 && s > 0 ? bytes / s / 1e9 : NAN;
}

void samples_append(struct sample_set *set, int rep, double time_s, double read_s, bool disturbed,
                    double start_s) {
    struct sample *p = grow(set);
    if (!p) return;
    *p = (struct sample){.rep = rep,
                         .time_s = time_s,
                         .paired_read_gbs = gbs_of(set->read_bytes, read_s),
                         .disturbed = disturbed,
                         .threads = set->threads,
                         .mono_ns = (long long)(start_s * 1e9)};
    memcpy(p->row, set->row, sizeof p->row);
}

void samples_set_read(struct sample_set *set, int first, const double *read_s, int n, double read_bytes) {
    for (int i = 0; i < n && first + i < set->n; i++)
        set->s[first + i].paired_read_gbs = gbs_of(read_bytes, read_s[i]);
}

void samples_free(struct sample_set *set) {
    free(set->s);
    *set = (struct sample_set){0};
}

int samples_write_csv(const struct sample_set *set, const char *path, struct fr_err *err) {
    if (set->failed) return fr_err_set(err, "%s: out of memory while keeping the samples", path);
    FILE *f = fopen(path, "w");
    if (!f) return fr_err_set(err, "cannot write %s: %s", path, strerror(errno));
    fprintf(f, "# %s\n%s\n", SAMPLES_SCHEMA, SAMPLES_HEADER);
    for (int i = 0; i < set->n; i++) {
        const struct sample *s = &set->s[i];
        char read[32] = "";
        if (isfinite(s->paired_read_gbs)) snprintf(read, sizeof read, "%.6g", s->paired_read_gbs);
        fprintf(f, "%s,%d,%.9e,%s,%d,%s,%d,%lld\n", s->row, s->rep, s->time_s, read, s->disturbed ? 1 : 0,
                s->cause, s->threads, s->mono_ns);
    }
    if (ferror(f) | (fclose(f) != 0)) return fr_err_set(err, "cannot write %s", path);
    return 0;
}

/* Splits line at commas into exactly n fields (empty ones allowed); -1 on another count. */
static int split(char *line, char **field, int n) {
    int k = 0;
    for (char *p = line;; p++) {
        if (k == n) return -1;
        field[k++] = p;
        p += strcspn(p, ",");
        if (*p == '\0') break;
        *p = '\0';
    }
    return k == n ? 0 : -1;
}

static int parse_long(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *s, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

static int parse_line(char *line, struct sample *s) {
    char *f[8];
    long long rep, dist, threads, ns;
    if (split(line, f, 8) != 0) return -1;
    if (!f[0][0] || strlen(f[0]) >= sizeof s->row || strlen(f[5]) >= sizeof s->cause) return -1;
    if (parse_long(f[1], 0, 1 << 30, &rep) || parse_double(f[2], &s->time_s) || !(s->time_s >= 0) ||
        parse_long(f[4], 0, 1, &dist) || parse_long(f[6], 0, 1 << 20, &threads) ||
        parse_long(f[7], 0, (long long)9e18, &ns))
        return -1;
    s->paired_read_gbs = NAN;
    if (f[3][0] && (parse_double(f[3], &s->paired_read_gbs) || !(s->paired_read_gbs > 0))) return -1;
    snprintf(s->row, sizeof s->row, "%s", f[0]);
    snprintf(s->cause, sizeof s->cause, "%s", f[5]);
    s->rep = (int)rep, s->disturbed = dist, s->threads = (int)threads, s->mono_ns = ns;
    return 0;
}

int samples_read_csv(const char *path, struct sample_set *set, struct fr_err *err) {
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT) return 1;
        return fr_err_set(err, "cannot read %s: %s", path, strerror(errno));
    }
    char line[512];
    int lineno = 0, rc = 0, start = set->n;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            line[--len] = '\0';
        else if (!feof(f)) {
            rc = fr_err_set(err, "%s:%d: line too long", path, lineno);
            break;
        }
        if (len && line[len - 1] == '\r') line[--len] = '\0';
        if (lineno == 1) {
            if (strcmp(line, "# " SAMPLES_SCHEMA) != 0) {
                rc = fr_err_set(err, "%s:1: not a %s file (first line '%.60s')", path, SAMPLES_SCHEMA, line);
                break;
            }
            continue;
        }
        if (lineno == 2) {
            if (strcmp(line, SAMPLES_HEADER) != 0) {
                rc = fr_err_set(err, "%s:2: header is not '%s'", path, SAMPLES_HEADER);
                break;
            }
            continue;
        }
        struct sample s;
        if (parse_line(line, &s) != 0) {
            rc = fr_err_set(err, "%s:%d: malformed sample (want %s)", path, lineno, SAMPLES_HEADER);
            break;
        }
        struct sample *p = grow(set);
        if (!p) {
            rc = fr_err_set(err, "%s: out of memory", path);
            break;
        }
        *p = s;
    }
    if (rc == 0 && ferror(f)) rc = fr_err_set(err, "cannot read %s", path);
    if (rc == 0 && lineno < 2) rc = fr_err_set(err, "%s: no schema line and header", path);
    fclose(f);
    if (rc != 0) set->n = start; /* nothing half read */
    return rc;
}

int samples_find_row(const struct sample_set *set, const char *row, int *idx, int max) {
    int k = 0;
    for (int i = 0; i < set->n; i++)
        if (strcmp(set->s[i].row, row) == 0) {
            if (k < max) idx[k] = i;
            k++;
        }
    return k;
}

int samples_count_disturbed(const struct sample_set *set, char *causes, size_t len) {
    static const char *const words[] = {"preempted", "migrated", "steal"};
    bool seen[3] = {false, false, false};
    int n = 0;
    for (int i = 0; i < set->n; i++) {
        if (!set->s[i].disturbed) continue;
        n++;
        for (int w = 0; w < 3; w++) seen[w] |= strstr(set->s[i].cause, words[w]) != NULL;
    }
    size_t used = 0;
    if (len) causes[0] = '\0';
    for (int w = 0; w < 3; w++)
        if (seen[w] && used < len)
            used += (size_t)snprintf(causes + used, len - used, "%s%s", used ? "+" : "", words[w]);
    return n;
}

int samples_count_rows(const struct sample_set *set) {
    int rows = 0;
    for (int i = 0; i < set->n; i++) rows += i == 0 || strcmp(set->s[i - 1].row, set->s[i].row) != 0;
    return rows;
}
