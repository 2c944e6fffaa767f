/* The compare's verdict per row, decided on the raw repetitions of both sides (roofline/samples.h) with the
 * statistics of roofline/stats.h:
 *
 *   B/A = exp(Hodges-Lehmann shift of log B's times against log A's), with its distribution-free 95 %
 *   interval; Mann-Whitney U's p on the same logs, Holm-adjusted within a family (the headline rows, and
 *   apart from them every other row); verdict by stats_verdict against the threshold (default 2 %).
 *
 * A memory-bound row (weight blocks, attention, decode steps, memory-roofed batch rows) is also judged on
 * its times normalised by the read measured next to each repetition (time x (paired read GB/s)^beta, beta
 * the row's fitted elasticity to the read), and its verdict rests on that ratio unless --raw; both ratios
 * are shown. Disturbed
 * repetitions are left out while at least three clean ones stay (as in the run's own statistics).
 * Headline rows come first: the decode step at every context and the sampler's fused chain
 * (sampler:chain_fast@151936, "sampler@151936" in the history's ROW syntax) at V = 151,936.
 *
 * A side whose run has no samples.csv (a run.json from before it) counts one sample per row per such run:
 * that run's median (with its paired read); compare.md says so.
 *
 * Faster or slower also needs the runs apart: Mann-Whitney on the runs' medians. Where the runs were made
 * in rounds (as many a side, one of A and one of B after another in time), the i-th runs are paired and the
 * paired t and signed-rank tests on the rounds' differences are reported beside it, not decided on: measured
 * on this project's runs, pairing added no power (docs/statistics.md). Checked in
 * tests/test_compare_verdict.c. */
#ifndef FR_COMPARE_VERDICT_H
#define FR_COMPARE_VERDICT_H

#include <stdbool.h>
#include <stdio.h>

#include "bench/report/report.h"
#include "kernels/fr_err.h"
#include "roofline/samples.h"
#include "roofline/stats.h"

#define COMPARE_THRESHOLD_DEFAULT 0.02
#define COMPARE_ALPHA             0.05
#define COMPARE_LEVEL             0.95
#define COMPARE_MAX_ROWS          (BLOCK_COUNT + REPORT_MAX_STEPS + REPORT_MAX_SAMPLER + REPORT_MAX_BATCH)
#define COMPARE_HEADLINE_SAMPLER  "sampler:chain_fast@151936"
#define COMPARE_MORE_RUNS_MAX     100 /* beyond this many more runs a side, "more than 100" */
#define COMPARE_SIDE_MAX_RUNS     16  /* runs a side (compare_pool.h pools as many) */

struct compare_opts {
    double threshold; /* a real difference below this share is "no change" (0.02) */
    bool raw;         /* decide on the raw ratio even where a normalised one exists */
};

/* One run of a side: where its samples begin in the side's set and when it started, to pair it with the
 * other side's run of the same round. */
struct compare_run {
    int first;       /* index of its first sample in the side's samples */
    long long utc_s; /* its start (run.json's UTC stamp) in seconds since the epoch; -1 when unknown */
};

/* One side: its samples (every run's samples.csv, or their medians where a run has none) and its runs. */
struct compare_side {
    struct sample_set samples;
    int runs;
    int runs_without_samples; /* runs whose medians stand in for their samples */
    int marked;               /* runs begun with compare_side_begin_run: all of them, or none are paired */
    struct compare_run run[COMPARE_SIDE_MAX_RUNS];
};

struct compare_row_verdict {
    char key[SAMPLES_ROW_LEN];
    bool headline;
    bool memory_bound;
    bool on_norm;                  /* the verdict rests on the normalised ratio */
    int n_a, n_b;                  /* samples used (disturbed ones left out) */
    int disturbed_a, disturbed_b;  /* disturbed samples kept among them (fewer than 3 clean): inconclusive */
    double raw, raw_lo, raw_hi;    /* B/A of the times and its interval */
    double norm, norm_lo, norm_hi; /* B/A of the normalised times; NaN unless every sample has its read */
    double beta;                   /* the normalisation's elasticity to the read, [0, 1]; NaN when none */
    double level;                  /* the interval's coverage (exact where computed so) */
    double p, p_adj; /* Mann-Whitney on what the verdict rests on; Holm-adjusted in its family */
    double p_runs;   /* Mann-Whitney on the runs' medians (the run as the unit): the verdict's run test */
    int run_pairs;   /* rounds whose two runs both have the row, where the runs pair; else 0 */
    double p_pair_t, p_pair_wsr; /* paired t and signed rank on those rounds' differences of the runs'
                                  * medians: reported, not decided on (docs/statistics.md); NaN unpaired */
    int runs_a, runs_b;          /* runs with samples of the row */
    bool lockstep; /* timed in lockstep in every round (compare_lockstep.h): judged on its rounds' paired
                    * differences, on the raw times */
    enum stats_verdict verdict;
    double more_runs; /* inconclusive: about how many more runs of each side would decide it (INFINITY: more
                       * than COMPARE_MORE_RUNS_MAX); NaN otherwise */
};

struct compare_verdicts {
    struct compare_opts opts;
    int n;
    struct compare_row_verdict rows[COMPARE_MAX_ROWS]; /* headline rows first */
    int runs_a, runs_b, fallback_a, fallback_b;        /* runs, and those without samples.csv */
    int pairs;         /* rounds whose runs of A and B pair (in time order); 0: they do not */
    char pairing[192]; /* why the runs do not pair ("" when they do) */
    int lockstep_rows; /* rows judged in lockstep */
};

/* The samples.csv keys of a run's rows (roofline/samples.h). */
void compare_key_block(const struct run_report *r, int i, char *key, size_t len);
void compare_key_step(const struct run_report *r, int i, char *key, size_t len);
void compare_key_sampler(const struct run_report *r, int i, char *key, size_t len);
void compare_key_batch(const struct run_report *r, int i, char *key, size_t len);
/* A prefill row's: "pp@512", "pp@512+4096" after 4096 cached positions (the samples.csv key the prefill's
 * repetitions are kept under). Only the whole prefill's rows (compare_prefill_row) have samples. */
void compare_key_prefill(const struct run_report *r, int i, char *key, size_t len);
int compare_key_prefill_of(long prompt_len, long depth, char *key, size_t len);
bool compare_prefill_row(const struct run_report *r, int i);

/* Begins a run of the side: the samples appended from now on are its own, and it started at utc_s (seconds
 * since the epoch; -1 unknown). compare_side_add calls it; tests that fill a side by hand may. Returns -1
 * when the side already holds COMPARE_SIDE_MAX_RUNS runs. */
int compare_side_begin_run(struct compare_side *side, long long utc_s);

/* Adds one run to a side: the samples.csv of its folder (run_path is the folder or its run.json), or, when
 * it has none, one sample per row from the run's medians. Returns 0, or -1 with err set (a malformed
 * samples.csv, out of memory). */
int compare_side_add(struct compare_side *side, const char *run_path, const struct run_report *r,
                     struct fr_err *err);
void compare_side_free(struct compare_side *side);

/* The verdict of every row of A (pooled) that both sides have samples of. Returns 0, or -1 with err set
 * (out of memory). */
int compare_verdicts_compute(const struct run_report *a, const struct compare_side *sa,
                             const struct compare_side *sb, const struct compare_opts *o,
                             struct compare_verdicts *out, struct fr_err *err);

const struct compare_row_verdict *compare_verdicts_find(const struct compare_verdicts *v, const char *key);

/* Headline rows called slower (the CI gate: compare --fail-on-slower exits 1 when this is above 0). */
int compare_verdicts_slower_headlines(const struct compare_verdicts *v);

/* compare.md's verdict section: the rule in words, the fallback where a side lacks samples, one table row
 * per verdict row, headline rows first. */
void compare_verdicts_md(FILE *f, const struct compare_verdicts *v);

/* The forest plot's rows (the right panel of scripts/compare.gp): y, key, ratio, lo, hi, verdict code,
 * headline; and its range into vars (n_forest, f_lo, f_hi). */
void compare_verdicts_forest(FILE *f, FILE *vars, const struct compare_verdicts *v);

/* compare_verdicts.csv in out_dir, for scripts (compare-commits.sh, validate-compare.sh): one line per row,
 * key,headline,n_a,n_b,ratio,lo,hi,p_adj,verdict,more_runs,beta,p,p_runs,run_pairs,p_pair_t,p_pair_wsr,
 * lockstep (the
 * ratio the verdict rests on; more_runs empty unless inconclusive, "inf" beyond COMPARE_MORE_RUNS_MAX; beta
 * empty unless it rests on the normalised ratio; p before Holm; p_pair_t and p_pair_wsr empty unless the
 * runs pair, run_pairs then the rounds with the row in both runs; lockstep 1 for a row judged in lockstep,
 * whose p, p_runs and p_pair_t are then its rounds' t test). New columns go at the end. Returns 0,
 * or -1 with err set. */
int compare_verdicts_csv_write(const struct compare_verdicts *v, const char *out_dir, struct fr_err *err);

/* "faster", "slower", ... and the short line for the findings: the headline rows' verdicts. */
void compare_verdicts_headline_words(const struct compare_verdicts *v, char *out, size_t len);

#endif
