/* Layer: bench/history/ is the run store; it reads completed run and compare folders (history_folder.h) and
 * keeps them in SQLite (a file, the default) or PostgreSQL (a server, for a fleet), behind history_db.h.
 *
 * history: every run remembered. One versioned schema with migrations; one transaction a run, so a run is
 * in the store whole or not at all; a run is appended from its completed folder only, so the store never
 * holds what the folder does not. Series are keyed by machine (CPU, ISA, threads, caches and NUMA layout,
 * kernel, memory state), model and options, ordered by the run's UTC stamp. docs/history.md says how to use
 * it; tests/test_history_store.c and tests/test_history_pg.c check it. */
#ifndef FR_HISTORY_H
#define FR_HISTORY_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "bench/history/history_folder.h"
#include "kernels/fr_err.h"

/* The schema this build writes. 1: machines, runs, rows, samples. 2: compares and the rows' key index. */
#define HISTORY_SCHEMA_VERSION 2

struct history_store;

struct history_open_opts {
    bool write;         /* create the store when missing; refuse one that cannot be written */
    int busy_ms;        /* how long to wait for another writer's lock (0: 10 s) */
    int schema_version; /* migrate up to this version (0: HISTORY_SCHEMA_VERSION); tests build old stores */
};

/* where: a SQLite file path, or a postgresql:// or postgres:// URI. An older schema is migrated up (in one
 * transaction); a newer one, a file that is not a store, a locked or read-only store (with write) fail with a
 * one-line reason. */
int history_open(const char *where, const struct history_open_opts *o, struct history_store **out,
                 struct fr_err *err);
void history_close(struct history_store *s);
const char *history_backend(const struct history_store *s); /* "sqlite" or "postgresql" */
int history_schema_version(struct history_store *s, int *version, struct fr_err *err);

struct history_append_opts {
    /* called after each row and sample is written inside the transaction (NULL: none); the tests kill the
     * process from here to check that a writer killed mid-run leaves nothing behind */
    void (*after_write)(void *ctx, int written);
    void *ctx;
};

struct history_append_result {
    long long id;
    bool duplicate; /* the same run.json (or compare.md) was already in the store: nothing written */
    int rows, samples;
    bool has_samples;
    int unmatched_samples;
    char machine_key[24];
};

/* Appends the completed run folder dir (run.json, samples.csv when present). Returns 0, or -1 with the store
 * untouched. */
int history_append_run(struct history_store *s, const char *dir, const struct history_append_opts *o,
                       struct history_append_result *res, struct fr_err *err);
/* Appends a compare folder's compare.md figures. */
int history_append_compare(struct history_store *s, const char *dir, struct history_append_result *res,
                           struct fr_err *err);

struct history_filter {
    const char *since;   /* a UTC stamp prefix such as 2026-11-29 or 20261129T1730 ("" or NULL: all) */
    const char *machine; /* a machine key prefix, or a host name (NULL: all) */
    const char *model;   /* a model name (NULL: all) */
};

struct history_run_info {
    long long id;
    char utc[32], host[128], machine_key[24], commit[48], model[64], options[192], folder[1024];
    bool dirty, has_samples;
    int rows, samples;
};

/* Calls fn for each run, oldest first; fn returning non-zero stops the walk. */
int history_list_runs(struct history_store *s, const struct history_filter *f,
                      int (*fn)(void *ctx, const struct history_run_info *run), void *ctx,
                      struct fr_err *err);

struct history_point {
    long long run_id;
    char utc[32], commit[48];
    bool dirty;
    double value;  /* the run's point: the median of its undisturbed raw samples, else run.json's median */
    double median; /* run.json's median */
    double min, max;
    int reps, samples, disturbed; /* samples: raw samples kept (0: the folder had none for the row) */
    double paired_read_gbs;       /* the read measured beside the row (from the samples where present); NaN */
};

struct history_series {
    struct history_machine machine;
    char hosts[256]; /* the hosts that ran it, comma-separated */
    char model[64], options[192], key[HISTORY_KEY_LEN], unit[16];
    struct history_point *points; /* oldest first */
    int n;
};

/* The series of one row key (history_folder_row_key's form), one per machine, model and options. */
int history_read_series(struct history_store *s, const char *key, const struct history_filter *f,
                        struct history_series **out, int *n, struct fr_err *err);
void history_free_series(struct history_series *series, int n);

enum history_export_format { HISTORY_EXPORT_CSV, HISTORY_EXPORT_JSONL };
/* csv: one line per run row; jsonl: one object per run (machine, rows, samples) and per compare. */
int history_export(struct history_store *s, enum history_export_format fmt, FILE *f, struct fr_err *err);

/* Adds v to o under key with 17 significant digits (cJSON's own printer may stop at 15, which does not
 * always read back exactly); a non-finite v becomes null. */
void history_json_num(cJSON *o, const char *key, double v);

#endif
