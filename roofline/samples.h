/* Raw samples: every timed repetition of every row of a run, kept as measured (time, the read paired with
 * it, whether it was disturbed and by what, threads, a monotonic timestamp), so a verdict between two runs
 * can be decided, and re-checked, on the repetitions themselves rather than on medians. The timing harness
 * appends to a sample_set given in struct timing_opts; the run writes it beside run.json as samples.csv:
 *
 *   # forge-roofline-samples/1
 *   row,rep,time_s,paired_read_gbs,disturbed,cause,threads,mono_ns
 *
 * row keys: step@<context>, block:<name>@<context>, sampler:<variant>@<vocab> (the realistic row; flat rows
 * are <variant>.flat), batch:<B>@<context> (batch:<B>@<context>:<backend> for a backend other than forge).
 * paired_read_gbs is empty where no read ran beside the repetition; cause is empty or '+'-joined words
 * (preempted, migrated, faulted, steal, ...). Checked in tests/test_samples.c (written and read back,
 * malformed files refused with a line number). */
#ifndef FR_SAMPLES_H
#define FR_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/fr_err.h"

#define SAMPLES_SCHEMA    "forge-roofline-samples/1"
#define SAMPLES_FILE      "samples.csv"
#define SAMPLES_HEADER    "row,rep,time_s,paired_read_gbs,disturbed,cause,threads,mono_ns"
#define SAMPLES_ROW_LEN   64
#define SAMPLES_CAUSE_LEN 48

struct sample {
    char row[SAMPLES_ROW_LEN];
    int rep;                /* 0-based, in the order run */
    double time_s;          /* the repetition's wall time */
    double paired_read_gbs; /* the read measured next to it; NaN where none */
    bool disturbed;
    char cause[SAMPLES_CAUSE_LEN]; /* "" or e.g. "preempted+faulted" */
    int threads;
    long long mono_ns; /* CLOCK_MONOTONIC at the repetition's start */
};

struct sample_set {
    struct sample *s; /* [cap], n used */
    int n, cap;
    bool failed; /* an append ran out of memory: the set is incomplete (samples_write_csv refuses it) */
    /* What the timing harness stamps on the samples it appends; set with samples_begin_row. */
    char row[SAMPLES_ROW_LEN];
    double read_bytes; /* bytes of the paired read (the harness's first partner); 0: no paired read */
    int threads;
};

/* Names the row the next measurement appends to (printf-style key), with the bytes of its paired read (0:
 * none) and its thread count. Returns the index its first sample will take (for samples_set_read). */
__attribute__((format(printf, 4, 5))) int samples_begin_row(struct sample_set *set, double read_bytes,
                                                            int threads, const char *fmt, ...);

/* Appends one repetition of the current row: read_s the paired read's seconds (NaN or <= 0: none). */
void samples_append(struct sample_set *set, int rep, double time_s, double read_s, bool disturbed,
                    double start_s);

/* Sets the paired read of samples[first + i] from read_s[i] (i < n) over read_bytes: for rows whose read
 * is not the harness's first partner (a cold block's eviction). */
void samples_set_read(struct sample_set *set, int first, const double *read_s, int n, double read_bytes);

void samples_free(struct sample_set *set);

/* Writes the set to path. Returns 0, or -1 with err set (an incomplete set is refused). */
int samples_write_csv(const struct sample_set *set, const char *path, struct fr_err *err);

/* Reads path into set (appending). Returns 0; 1 when the file does not exist (an older run: set untouched);
 * -1 with a one-line err naming the file and line on a malformed file or another schema. */
int samples_read_csv(const char *path, struct sample_set *set, struct fr_err *err);

/* The samples of one row (exact key): their indexes into set->s, at most max, in file order. Returns the
 * count (it may exceed max: only max are stored). */
int samples_find_row(const struct sample_set *set, const char *row, int *idx, int max);

/* How many rows the set holds: runs of one key (a run appends each row's samples together). */
int samples_count_rows(const struct sample_set *set);
/* The repetitions marked disturbed, and their causes' words together ("preempted+migrated"; "" for none),
 * as samples.csv will list them. Returns the count. */
int samples_count_disturbed(const struct sample_set *set, char *causes, size_t len);

#endif
