/* history_folder: what the run store keeps of one completed run folder, read from the folder's own files
 * (run.json with cJSON, samples.csv when present) and never from a run's memory, so the store cannot hold
 * what the folder does not. Also the key figures of a compare folder.
 *
 * Row keys (the store's and `history show`'s ROW):
 *   step@<context>                 a decode step's row
 *   block:<name>@<context>         a block alone, at the run's block context
 *   sampler:<variant>@<vocab>      a sampler variant on realistic rows; other row kinds add ".<kind>" to
 *                                  the variant (sampler:top_p_fast.flat@151936); sampler@<vocab> names the
 *                                  full chain (chain_fast), the sampler the decode step runs
 *   batch:<B>@<context>            a batched step on the run's backend; another backend adds ":<backend>"
 *   ceiling:<name>                 a measured ceiling, in its own unit (GB/s, GFLOP/s, ...)
 * These are samples.csv's keys (roofline/samples.h) and compare_verdicts.csv's (docs/history.md). */
#ifndef FR_HISTORY_FOLDER_H
#define FR_HISTORY_FOLDER_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/fr_err.h"

#define HISTORY_KEY_LEN 96

struct history_row {
    char key[HISTORY_KEY_LEN];
    char unit[16]; /* "s" for timed rows, the ceiling's unit otherwise */
    double median; /* run.json's median (a ceiling: its best, the roof it reports) */
    double min, max, ci_lo, ci_hi;
    double paired_read_gbs; /* the DRAM read measured beside the row; NaN where none */
    int reps;
    int noisy;
};

struct history_sample {
    char key[HISTORY_KEY_LEN];
    int rep;
    double time_s;
    double paired_read_gbs; /* NaN where none */
    int disturbed;
    char cause[48];
    int threads;
    long long mono_ns;
};

struct history_machine {
    char key[24]; /* 16 hex digits of a hash over the fields below */
    char cpu[128], isa[16], topology[256], kernel[128], mm_state[384];
    int threads;
};

struct history_run {
    char uid[24];      /* hash of run.json's bytes: the same folder imported twice is one run */
    char folder[4096]; /* absolute where it resolves */
    char utc[32], host[128], commit[48], version[32], model[64], options[192];
    char command_line[1024];
    bool dirty;
    struct history_machine machine;
    struct history_row *rows;
    int n_rows;
    struct history_sample *samples;
    int n_samples;
    bool has_samples;      /* samples.csv was there */
    int unmatched_samples; /* samples whose key names no row of run.json (kept, and said) */
};

/* Reads DIR/run.json and DIR/samples.csv (when present). Returns 0, or -1 with a one-line reason. */
int history_folder_read_run(const char *dir, struct history_run *out, struct fr_err *err);
void history_folder_free_run(struct history_run *r);

/* The sampler row that sampler@<vocab> names: its variant. */
#define HISTORY_SAMPLER_HEADLINE "chain_fast"

/* ROW as the user writes it -> the store's key (sampler@V -> sampler:chain_fast@V; others unchanged).
 * Returns 0, or -1 when ROW is not of a known form. */
int history_folder_row_key(const char *row, char *key, size_t len);

struct history_compare_row {
    char key[HISTORY_KEY_LEN]; /* the row key (compare_verdicts.csv), or the row's label in compare.md */
    char section[64];          /* "verdicts", or the markdown section it is in */
    double ratio;              /* B/A; NaN where the row gives none */
    double ratio_lo, ratio_hi; /* its 95 % interval (compare_verdicts.csv); NaN otherwise */
    double p_adj;              /* Holm-adjusted p (compare_verdicts.csv); NaN otherwise */
    char verdict[48];          /* the verdict word where the row gives one; "" otherwise */
    char cells[384];           /* the whole line as written */
};

struct history_compare {
    char uid[24];      /* hash of compare.md's bytes */
    char folder[4096]; /* absolute where it resolves */
    char run_a[1024], run_b[1024];
    char summary[512]; /* compare.md's first non-heading line */
    struct history_compare_row *rows;
    int n_rows;
};

/* Reads DIR/compare.md (its runs and first finding) and the rows of DIR/compare_verdicts.csv, or of
 * compare.md's tables for a compare folder from before that file. */
int history_folder_read_compare(const char *dir, struct history_compare *out, struct fr_err *err);
void history_folder_free_compare(struct history_compare *c);

#endif
