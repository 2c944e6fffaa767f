/* The run store: schema and migrations, appends (one transaction a run or compare) and the reads behind
 * `history list`, `history show` and `history export`, in SQL common to SQLite and PostgreSQL
 * (history_db.h). Checked in tests/test_history_store.c (SQLite) and tests/test_history_pg.c (a server the
 * test starts). */
#include "bench/history/history.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/history/history_db.h"

struct history_store {
    struct hdb *db;
    const struct hdb_ops *ops;
};

/* Migration k takes the schema from version k to k + 1. What is already written is never rewritten: a
 * migration only adds. "%ID_PK%" is the backend's generated key (history_db.h). */
static const char *const migrations[HISTORY_SCHEMA_VERSION] = {
    /* 0 -> 1 */
    "CREATE TABLE schema_version (version INTEGER NOT NULL);"
    "CREATE TABLE machines (id %ID_PK%, key TEXT NOT NULL UNIQUE, cpu TEXT NOT NULL, isa TEXT NOT NULL,"
    " threads INTEGER NOT NULL, topology TEXT NOT NULL, kernel TEXT NOT NULL, mm_state TEXT NOT NULL);"
    "CREATE TABLE runs (id %ID_PK%, uid TEXT NOT NULL UNIQUE, folder TEXT NOT NULL, utc TEXT NOT NULL,"
    " host TEXT NOT NULL, machine_id BIGINT NOT NULL REFERENCES machines (id), git_commit TEXT NOT NULL,"
    " dirty INTEGER NOT NULL, version TEXT NOT NULL, model TEXT NOT NULL, options TEXT NOT NULL,"
    " command_line TEXT NOT NULL, has_samples INTEGER NOT NULL);"
    "CREATE TABLE run_rows (run_id BIGINT NOT NULL REFERENCES runs (id), key TEXT NOT NULL,"
    " unit TEXT NOT NULL, median DOUBLE PRECISION, min DOUBLE PRECISION, max DOUBLE PRECISION,"
    " ci_lo DOUBLE PRECISION, ci_hi DOUBLE PRECISION, paired_read_gbs DOUBLE PRECISION,"
    " reps INTEGER NOT NULL, noisy INTEGER NOT NULL, samples INTEGER NOT NULL,"
    " disturbed INTEGER NOT NULL, sample_median DOUBLE PRECISION, sample_paired_gbs DOUBLE PRECISION,"
    " PRIMARY KEY (run_id, key));"
    "CREATE TABLE samples (run_id BIGINT NOT NULL REFERENCES runs (id), key TEXT NOT NULL,"
    " rep INTEGER NOT NULL, time_s DOUBLE PRECISION NOT NULL, paired_read_gbs DOUBLE PRECISION,"
    " disturbed INTEGER NOT NULL, cause TEXT NOT NULL, threads INTEGER NOT NULL, mono_ns BIGINT,"
    " PRIMARY KEY (run_id, key, rep));"
    "INSERT INTO schema_version (version) VALUES (0);",
    /* 1 -> 2 */
    "CREATE TABLE compares (id %ID_PK%, uid TEXT NOT NULL UNIQUE, folder TEXT NOT NULL, run_a TEXT NOT NULL,"
    " run_b TEXT NOT NULL, summary TEXT NOT NULL, added_utc TEXT NOT NULL);"
    "CREATE TABLE compare_rows (compare_id BIGINT NOT NULL REFERENCES compares (id), idx INTEGER NOT NULL,"
    " section TEXT NOT NULL, key TEXT NOT NULL, ratio DOUBLE PRECISION, ratio_lo DOUBLE PRECISION,"
    " ratio_hi DOUBLE PRECISION, p_adj DOUBLE PRECISION, verdict TEXT NOT NULL, cells TEXT NOT NULL,"
    " PRIMARY KEY (compare_id, idx));"
    "CREATE INDEX run_rows_key ON run_rows (key, run_id);",
};

const char *history_backend(const struct history_store *s) {
    return s->ops->name;
}

/* ---- small statement helpers ---- */

struct q {
    struct history_store *s;
    struct hdb_stmt *st;
    int arg;
};

static int q_prepare(struct history_store *s, struct q *q, const char *sql, struct fr_err *err) {
    *q = (struct q){s, NULL, 0};
    return s->ops->prepare(s->db, sql, &q->st, err);
}
static void q_text(struct q *q, const char *v) {
    q->s->ops->bind_text(q->st, ++q->arg, v);
}
static void q_int(struct q *q, long long v) {
    q->s->ops->bind_int(q->st, ++q->arg, v);
}
static void q_double(struct q *q, double v) {
    q->s->ops->bind_double(q->st, ++q->arg, v);
}
static int q_step(struct q *q, struct fr_err *err) {
    return q->s->ops->step(q->st, err);
}
static void q_reset(struct q *q) {
    q->s->ops->reset(q->st);
    q->arg = 0;
}
static void q_done(struct q *q) {
    if (q->st) q->s->ops->finalize(q->st);
    q->st = NULL;
}
static const char *c_text(struct q *q, int col) {
    return q->s->ops->col_text(q->st, col);
}
static long long c_int(struct q *q, int col) {
    return q->s->ops->col_int(q->st, col);
}
static double c_double(struct q *q, int col) {
    return q->s->ops->col_double(q->st, col);
}

/* One statement that returns one integer (count, id), or -1 with err when it fails or returns no row. */
static int q_scalar(struct q *q, long long *out, struct fr_err *err) {
    int rc = q_step(q, err);
    if (rc == 1) *out = c_int(q, 0);
    if (rc == 0) fr_err_set(err, "no row returned");
    return rc == 1 ? 0 : -1;
}

/* ---- open and migrate ---- */

static int table_exists(struct history_store *s, const char *name, bool *yes, struct fr_err *err) {
    struct q q;
    long long n = 0;
    if (q_prepare(s, &q, s->ops->table_exists_sql, err) != 0) return -1;
    q_text(&q, name);
    int rc = q_scalar(&q, &n, err);
    q_done(&q);
    *yes = n > 0;
    return rc;
}

static int read_version(struct history_store *s, int *version, struct fr_err *err) {
    bool exists = false;
    if (table_exists(s, "schema_version", &exists, err) != 0) return -1;
    *version = 0;
    if (!exists) return 0;
    struct q q;
    long long v = 0;
    if (q_prepare(s, &q, "SELECT max(version) FROM schema_version", err) != 0) return -1;
    int rc = q_scalar(&q, &v, err);
    q_done(&q);
    *version = (int)v;
    return rc;
}

int history_schema_version(struct history_store *s, int *version, struct fr_err *err) {
    return read_version(s, version, err);
}

static int run_migration(struct history_store *s, int k, struct fr_err *err) {
    const char *sql = migrations[k];
    size_t cap = strlen(sql) * 2 + 64, o = 0;
    char *text = malloc(cap);
    if (!text) return fr_err_set(err, "out of memory");
    for (const char *p = sql; *p;) {
        if (strncmp(p, "%ID_PK%", 7) == 0) {
            o += (size_t)snprintf(text + o, cap - o, "%s", s->ops->id_pk);
            p += 7;
        } else {
            text[o++] = *p++;
        }
    }
    text[o] = '\0';
    int rc = s->ops->exec(s->db, text, err);
    free(text);
    if (rc) return -1;
    char upd[96];
    snprintf(upd, sizeof upd, "UPDATE schema_version SET version = %d", k + 1);
    return s->ops->exec(s->db, upd, err);
}

static int migrate(struct history_store *s, int target, struct fr_err *err) {
    int v;
    if (read_version(s, &v, err) != 0) return -1;
    if (v > HISTORY_SCHEMA_VERSION)
        return fr_err_set(err,
                          "the store has schema version %d, newer than this build's %d: use a newer "
                          "forge-roofline",
                          v, HISTORY_SCHEMA_VERSION);
    if (v >= target) return 0;
    /* under the write lock, read again: another process may have migrated in between */
    if (s->ops->begin(s->db, err) != 0) return -1;
    if (read_version(s, &v, err) != 0) goto fail;
    for (int k = v; k < target; k++)
        if (run_migration(s, k, err) != 0) goto fail;
    if (s->ops->commit(s->db, err) != 0) goto fail;
    return 0;
fail:
    s->ops->rollback(s->db);
    return -1;
}

int history_open(const char *where, const struct history_open_opts *o, struct history_store **out,
                 struct fr_err *err) {
    struct history_open_opts def = {0};
    if (!o) o = &def;
    int target = o->schema_version > 0 ? o->schema_version : HISTORY_SCHEMA_VERSION;
    if (target > HISTORY_SCHEMA_VERSION) return fr_err_set(err, "no schema version %d", target);
    struct history_store *s = calloc(1, sizeof *s);
    if (!s) return fr_err_set(err, "out of memory");
    struct fr_err e = {{0}};
    int rc;
    bool pg = strncmp(where, "postgresql://", 13) == 0 || strncmp(where, "postgres://", 11) == 0;
    if (pg)
        rc = hdb_pg_open(where, &s->db, &s->ops, &e);
    else
        rc = hdb_sqlite_open(where, o->write, o->busy_ms > 0 ? o->busy_ms : 10000, &s->db, &s->ops, &e);
    if (rc == 0) rc = migrate(s, target, &e);
    if (rc != 0) {
        if (s->db) s->ops->close(s->db);
        free(s);
        /* a URI may hold a password: name the store by its backend only */
        return fr_err_set(err, "%s: %s", pg ? "postgresql store" : where, e.msg);
    }
    *out = s;
    return 0;
}

void history_close(struct history_store *s) {
    if (!s) return;
    s->ops->close(s->db);
    free(s);
}

/* ---- append ---- */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median_of(double *v, int n) {
    if (n == 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* What a row's raw samples say: how many, how many disturbed, the median time of the undisturbed ones and
 * the median of their paired reads (NaN where none). */
struct sample_stats {
    int n, disturbed;
    double median, paired;
};

static int sample_stats_all(const struct history_run *r, struct sample_stats *st, struct fr_err *err) {
    int *row_of = malloc(sizeof *row_of * (size_t)(r->n_samples + 1));
    double *t = malloc(sizeof *t * (size_t)(r->n_samples + 1));
    double *p = malloc(sizeof *p * (size_t)(r->n_samples + 1));
    if (!row_of || !t || !p) {
        free(row_of), free(t), free(p);
        return fr_err_set(err, "out of memory");
    }
    /* samples.csv holds each row's repetitions together: try the previous sample's row first */
    int last = 0;
    for (int i = 0; i < r->n_samples; i++) {
        row_of[i] = -1;
        for (int k = 0; k < r->n_rows && row_of[i] < 0; k++) {
            int j = (last + k) % r->n_rows;
            if (strcmp(r->rows[j].key, r->samples[i].key) == 0) row_of[i] = last = j;
        }
    }
    for (int j = 0; j < r->n_rows; j++) {
        int nt = 0, np = 0;
        st[j] = (struct sample_stats){0};
        for (int i = 0; i < r->n_samples; i++) {
            if (row_of[i] != j) continue;
            st[j].n++;
            if (r->samples[i].disturbed) {
                st[j].disturbed++;
                continue;
            }
            t[nt++] = r->samples[i].time_s;
            if (isfinite(r->samples[i].paired_read_gbs)) p[np++] = r->samples[i].paired_read_gbs;
        }
        st[j].median = median_of(t, nt);
        st[j].paired = median_of(p, np);
    }
    free(row_of), free(t), free(p);
    return 0;
}

static void progress(const struct history_append_opts *o, int *written) {
    ++*written;
    if (o && o->after_write) o->after_write(o->ctx, *written);
}

static int machine_id(struct history_store *s, const struct history_machine *m, long long *id,
                      struct fr_err *err) {
    struct q q;
    if (q_prepare(s, &q,
                  "INSERT INTO machines (key, cpu, isa, threads, topology, kernel, mm_state)"
                  " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (key) DO NOTHING",
                  err) != 0)
        return -1;
    q_text(&q, m->key), q_text(&q, m->cpu), q_text(&q, m->isa), q_int(&q, m->threads);
    q_text(&q, m->topology), q_text(&q, m->kernel), q_text(&q, m->mm_state);
    int rc = q_step(&q, err) < 0 ? -1 : 0;
    q_done(&q);
    if (rc || q_prepare(s, &q, "SELECT id FROM machines WHERE key = $1", err) != 0) return -1;
    q_text(&q, m->key);
    rc = q_scalar(&q, id, err);
    q_done(&q);
    return rc;
}

/* Is the uid in the table already? 1 yes, 0 no, -1 error. */
static int seen(struct history_store *s, const char *table, const char *uid, long long *id,
                struct fr_err *err) {
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT id FROM %s WHERE uid = $1", table);
    struct q q;
    if (q_prepare(s, &q, sql, err) != 0) return -1;
    q_text(&q, uid);
    int rc = q_step(&q, err);
    if (rc == 1) *id = c_int(&q, 0);
    q_done(&q);
    return rc;
}

static int insert_run(struct history_store *s, const struct history_run *r, const struct sample_stats *st,
                      const struct history_append_opts *o, long long *run_id, struct fr_err *err) {
    long long mid;
    if (machine_id(s, &r->machine, &mid, err) != 0) return -1;
    struct q q;
    if (q_prepare(s, &q,
                  "INSERT INTO runs (uid, folder, utc, host, machine_id, git_commit, dirty, version, model,"
                  " options, command_line, has_samples) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,"
                  " $12) RETURNING id",
                  err) != 0)
        return -1;
    q_text(&q, r->uid), q_text(&q, r->folder), q_text(&q, r->utc), q_text(&q, r->host), q_int(&q, mid);
    q_text(&q, r->commit), q_int(&q, r->dirty), q_text(&q, r->version), q_text(&q, r->model);
    q_text(&q, r->options), q_text(&q, r->command_line), q_int(&q, r->has_samples);
    int rc = q_scalar(&q, run_id, err);
    q_done(&q);
    if (rc) return -1;

    int written = 0;
    if (q_prepare(
            s, &q,
            "INSERT INTO run_rows (run_id, key, unit, median, min, max, ci_lo, ci_hi, paired_read_gbs,"
            " reps, noisy, samples, disturbed, sample_median, sample_paired_gbs) VALUES ($1, $2, $3, $4,"
            " $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
            err) != 0)
        return -1;
    for (int i = 0; i < r->n_rows && rc == 0; i++) {
        const struct history_row *w = &r->rows[i];
        q_int(&q, *run_id), q_text(&q, w->key), q_text(&q, w->unit), q_double(&q, w->median);
        q_double(&q, w->min), q_double(&q, w->max), q_double(&q, w->ci_lo), q_double(&q, w->ci_hi);
        q_double(&q, w->paired_read_gbs), q_int(&q, w->reps), q_int(&q, w->noisy), q_int(&q, st[i].n);
        q_int(&q, st[i].disturbed), q_double(&q, st[i].median), q_double(&q, st[i].paired);
        struct fr_err e = {{0}};
        if (q_step(&q, &e) < 0) rc = fr_err_set(err, "row %s: %s", w->key, e.msg);
        q_reset(&q);
        progress(o, &written);
    }
    q_done(&q);
    if (rc || q_prepare(s, &q,
                        "INSERT INTO samples (run_id, key, rep, time_s, paired_read_gbs, disturbed, cause,"
                        " threads, mono_ns) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                        err) != 0)
        return -1;
    for (int i = 0; i < r->n_samples && rc == 0; i++) {
        const struct history_sample *x = &r->samples[i];
        q_int(&q, *run_id), q_text(&q, x->key), q_int(&q, x->rep), q_double(&q, x->time_s);
        q_double(&q, x->paired_read_gbs), q_int(&q, x->disturbed), q_text(&q, x->cause);
        q_int(&q, x->threads);
        if (x->mono_ns >= 0)
            q_int(&q, x->mono_ns);
        else
            q_double(&q, NAN);
        struct fr_err e = {{0}};
        if (q_step(&q, &e) < 0) rc = fr_err_set(err, "sample %s rep %d: %s", x->key, x->rep, e.msg);
        q_reset(&q);
        progress(o, &written);
    }
    q_done(&q);
    return rc;
}

int history_append_run(struct history_store *s, const char *dir, const struct history_append_opts *o,
                       struct history_append_result *res, struct fr_err *err) {
    *res = (struct history_append_result){0};
    struct history_run r;
    if (history_folder_read_run(dir, &r, err) != 0) return -1;
    struct sample_stats *st = calloc((size_t)r.n_rows + 1, sizeof *st);
    int rc = -1;
    if (!st) {
        fr_err_set(err, "out of memory");
        goto done;
    }
    if (sample_stats_all(&r, st, err) != 0) goto done;
    res->rows = r.n_rows, res->samples = r.n_samples, res->has_samples = r.has_samples;
    res->unmatched_samples = r.unmatched_samples;
    snprintf(res->machine_key, sizeof res->machine_key, "%s", r.machine.key);
    if (s->ops->begin(s->db, err) != 0) goto done;
    int dup = seen(s, "runs", r.uid, &res->id, err);
    if (dup == 0) {
        if (insert_run(s, &r, st, o, &res->id, err) != 0 || s->ops->commit(s->db, err) != 0) dup = -1;
    } else if (dup == 1) {
        res->duplicate = true;
        s->ops->rollback(s->db);
    }
    if (dup < 0) {
        s->ops->rollback(s->db);
        goto done;
    }
    rc = 0;
done:
    free(st);
    history_folder_free_run(&r);
    return rc;
}

int history_append_compare(struct history_store *s, const char *dir, struct history_append_result *res,
                           struct fr_err *err) {
    *res = (struct history_append_result){0};
    struct history_compare c;
    if (history_folder_read_compare(dir, &c, err) != 0) return -1;
    res->rows = c.n_rows;
    int rc = -1;
    struct q q = {0};
    if (s->ops->begin(s->db, err) != 0) goto done;
    int dup = seen(s, "compares", c.uid, &res->id, err);
    if (dup == 1) res->duplicate = true;
    if (dup != 0) goto rollback;
    char added[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(added, sizeof added, "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
    if (q_prepare(
            s, &q,
            "INSERT INTO compares (uid, folder, run_a, run_b, summary, added_utc) VALUES ($1, $2, $3, $4,"
            " $5, $6) RETURNING id",
            err) != 0)
        goto rollback;
    q_text(&q, c.uid), q_text(&q, c.folder), q_text(&q, c.run_a), q_text(&q, c.run_b);
    q_text(&q, c.summary), q_text(&q, added);
    int bad = q_scalar(&q, &res->id, err);
    q_done(&q);
    if (bad || q_prepare(s, &q,
                         "INSERT INTO compare_rows (compare_id, idx, section, key, ratio, ratio_lo, ratio_hi,"
                         " p_adj, verdict, cells) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                         err) != 0)
        goto rollback;
    for (int i = 0; i < c.n_rows && !bad; i++) {
        const struct history_compare_row *w = &c.rows[i];
        q_int(&q, res->id), q_int(&q, i), q_text(&q, w->section), q_text(&q, w->key);
        q_double(&q, w->ratio), q_double(&q, w->ratio_lo), q_double(&q, w->ratio_hi), q_double(&q, w->p_adj);
        q_text(&q, w->verdict), q_text(&q, w->cells);
        bad = q_step(&q, err) < 0;
        q_reset(&q);
    }
    q_done(&q);
    if (bad || s->ops->commit(s->db, err) != 0) goto rollback;
    rc = 0;
    goto done;
rollback:
    q_done(&q);
    s->ops->rollback(s->db);
    if (res->duplicate) rc = 0;
done:
    history_folder_free_compare(&c);
    return rc;
}

/* ---- reads ---- */

/* The filter's WHERE terms, binding $first.. in order: since, machine, model. */
#define FILTER_SQL(a, b, c)                                                                                  \
    " r.utc >= CAST($" #a " AS TEXT) AND (CAST($" #b " AS TEXT) = '' OR m.key LIKE $" #b " || '%'"           \
    " OR r.host = $" #b ") AND (CAST($" #c " AS TEXT) = '' OR r.model = $" #c ")"

static void bind_filter(struct q *q, const struct history_filter *f) {
    char since[32] = "";
    size_t o = 0;
    /* 2026-11-29 and 20261129 both name the day: the stamps are 20261129T173000Z */
    for (const char *p = f && f->since ? f->since : ""; *p && o + 1 < sizeof since; p++)
        if (*p != '-' && *p != ':') since[o++] = *p;
    since[o] = '\0';
    q_text(q, since);
    q_text(q, f && f->machine ? f->machine : "");
    q_text(q, f && f->model ? f->model : "");
}

int history_list_runs(struct history_store *s, const struct history_filter *f,
                      int (*fn)(void *ctx, const struct history_run_info *run), void *ctx,
                      struct fr_err *err) {
    struct q q;
    if (q_prepare(s, &q,
                  "SELECT r.id, r.utc, r.host, m.key, r.git_commit, r.dirty, r.model, r.options, r.folder,"
                  " r.has_samples, (SELECT count(*) FROM run_rows x WHERE x.run_id = r.id),"
                  " (SELECT count(*) FROM samples x WHERE x.run_id = r.id)"
                  " FROM runs r JOIN machines m ON m.id = r.machine_id WHERE" FILTER_SQL(
                      1, 2, 3) " ORDER BY r.utc, r.id",
                  err) != 0)
        return -1;
    bind_filter(&q, f);
    int rc;
    while ((rc = q_step(&q, err)) == 1) {
        struct history_run_info i = {.id = c_int(&q, 0), .dirty = c_int(&q, 5) != 0};
        snprintf(i.utc, sizeof i.utc, "%s", c_text(&q, 1));
        snprintf(i.host, sizeof i.host, "%s", c_text(&q, 2));
        snprintf(i.machine_key, sizeof i.machine_key, "%s", c_text(&q, 3));
        snprintf(i.commit, sizeof i.commit, "%s", c_text(&q, 4));
        snprintf(i.model, sizeof i.model, "%s", c_text(&q, 6));
        snprintf(i.options, sizeof i.options, "%s", c_text(&q, 7));
        snprintf(i.folder, sizeof i.folder, "%s", c_text(&q, 8));
        i.has_samples = c_int(&q, 9) != 0;
        i.rows = (int)c_int(&q, 10), i.samples = (int)c_int(&q, 11);
        if (fn(ctx, &i) != 0) {
            rc = 0;
            break;
        }
    }
    q_done(&q);
    return rc < 0 ? -1 : 0;
}

static int push_point(struct history_series *sr, int *cap, struct fr_err *err) {
    if (sr->n == *cap) {
        int nc = *cap ? *cap * 2 : 64;
        struct history_point *g = realloc(sr->points, sizeof *g * (size_t)nc);
        if (!g) return fr_err_set(err, "out of memory");
        sr->points = g, *cap = nc;
    }
    return 0;
}

int history_read_series(struct history_store *s, const char *key, const struct history_filter *f,
                        struct history_series **out, int *n, struct fr_err *err) {
    *out = NULL, *n = 0;
    struct q q;
    if (q_prepare(
            s, &q,
            "SELECT m.key, m.cpu, m.isa, m.threads, m.topology, m.kernel, m.mm_state, r.model, r.options,"
            " x.unit, r.id, r.utc, r.git_commit, r.dirty, x.median, x.min, x.max, x.reps, x.samples,"
            " x.disturbed, x.sample_median, x.paired_read_gbs, x.sample_paired_gbs, r.host"
            " FROM run_rows x JOIN runs r ON r.id = x.run_id JOIN machines m ON m.id = r.machine_id"
            " WHERE x.key = $1 AND" FILTER_SQL(2, 3, 4) " ORDER BY m.key, r.model, r.options, x.unit,"
                                                        " r.utc, r.id",
            err) != 0)
        return -1;
    q_text(&q, key);
    bind_filter(&q, f);
    struct history_series *all = NULL;
    int n_all = 0, cap_all = 0, cap_pts = 0, rc;
    while ((rc = q_step(&q, err)) == 1) {
        struct history_series *sr = n_all ? &all[n_all - 1] : NULL;
        if (!sr || strcmp(sr->machine.key, c_text(&q, 0)) != 0 || strcmp(sr->model, c_text(&q, 7)) != 0 ||
            strcmp(sr->options, c_text(&q, 8)) != 0 || strcmp(sr->unit, c_text(&q, 9)) != 0) {
            if (n_all == cap_all) {
                int nc = cap_all ? cap_all * 2 : 8;
                struct history_series *g = realloc(all, sizeof *g * (size_t)nc);
                if (!g) {
                    rc = fr_err_set(err, "out of memory");
                    break;
                }
                all = g, cap_all = nc;
            }
            sr = &all[n_all++];
            *sr = (struct history_series){0};
            cap_pts = 0;
            struct history_machine *m = &sr->machine;
            snprintf(m->key, sizeof m->key, "%s", c_text(&q, 0));
            snprintf(m->cpu, sizeof m->cpu, "%s", c_text(&q, 1));
            snprintf(m->isa, sizeof m->isa, "%s", c_text(&q, 2));
            m->threads = (int)c_int(&q, 3);
            snprintf(m->topology, sizeof m->topology, "%s", c_text(&q, 4));
            snprintf(m->kernel, sizeof m->kernel, "%s", c_text(&q, 5));
            snprintf(m->mm_state, sizeof m->mm_state, "%s", c_text(&q, 6));
            snprintf(sr->model, sizeof sr->model, "%s", c_text(&q, 7));
            snprintf(sr->options, sizeof sr->options, "%s", c_text(&q, 8));
            snprintf(sr->unit, sizeof sr->unit, "%s", c_text(&q, 9));
            snprintf(sr->key, sizeof sr->key, "%s", key);
        }
        const char *host = c_text(&q, 23);
        size_t hl = strlen(host), have = strlen(sr->hosts);
        bool listed = false;
        for (const char *h = sr->hosts; (h = strstr(h, host)) != NULL; h += hl)
            if ((h == sr->hosts || h[-1] == ',') && (h[hl] == ',' || !h[hl])) listed = true;
        if (!listed && have + hl + 2 < sizeof sr->hosts)
            snprintf(sr->hosts + have, sizeof sr->hosts - have, "%s%s", have ? "," : "", host);
        if (push_point(sr, &cap_pts, err) != 0) {
            rc = -1;
            break;
        }
        struct history_point *p = &sr->points[sr->n++];
        *p = (struct history_point){.run_id = c_int(&q, 10), .dirty = c_int(&q, 13) != 0};
        snprintf(p->utc, sizeof p->utc, "%s", c_text(&q, 11));
        snprintf(p->commit, sizeof p->commit, "%s", c_text(&q, 12));
        p->median = c_double(&q, 14), p->min = c_double(&q, 15), p->max = c_double(&q, 16);
        p->reps = (int)c_int(&q, 17), p->samples = (int)c_int(&q, 18), p->disturbed = (int)c_int(&q, 19);
        double sm = c_double(&q, 20), sp = c_double(&q, 22);
        p->value = isfinite(sm) ? sm : p->median;
        p->paired_read_gbs = isfinite(sp) ? sp : c_double(&q, 21);
    }
    q_done(&q);
    if (rc < 0) {
        history_free_series(all, n_all);
        return -1;
    }
    *out = all, *n = n_all;
    return 0;
}

void history_free_series(struct history_series *series, int n) {
    for (int i = 0; i < n; i++) free(series[i].points);
    free(series);
}

/* ---- export ---- */

/* A CSV cell: quoted when it holds a comma, quote or line break (RFC 4180). */
static void csv_cell(FILE *f, const char *v, bool last) {
    if (strpbrk(v, ",\"\r\n")) {
        fputc('"', f);
        for (const char *p = v; *p; p++) {
            if (*p == '"') fputc('"', f);
            fputc(*p, f);
        }
        fputc('"', f);
    } else {
        fputs(v, f);
    }
    fputc(last ? '\n' : ',', f);
}

static void csv_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.17g", v);
    fputc(',', f);
}

static int export_csv(struct history_store *s, FILE *f, struct fr_err *err) {
    struct q q;
    if (q_prepare(
            s, &q,
            "SELECT r.id, r.utc, r.host, m.key, m.cpu, m.isa, m.threads, m.topology, m.kernel, m.mm_state,"
            " r.git_commit, r.dirty, r.model, r.options, x.key, x.unit, x.median, x.min, x.max, x.ci_lo,"
            " x.ci_hi, x.paired_read_gbs, x.reps, x.noisy, x.samples, x.disturbed, x.sample_median,"
            " x.sample_paired_gbs, r.folder FROM run_rows x JOIN runs r ON r.id = x.run_id"
            " JOIN machines m ON m.id = r.machine_id ORDER BY r.utc, r.id, x.key",
            err) != 0)
        return -1;
    fputs("run_id,utc,host,machine,cpu,isa,threads,topology,kernel,mm_state,commit,dirty,model,options,row,"
          "unit,"
          "median,min,max,ci_lo,ci_hi,paired_read_gbs,reps,noisy,samples,disturbed,sample_median,"
          "sample_paired_read_gbs,folder\n",
          f);
    int rc;
    while ((rc = q_step(&q, err)) == 1) {
        fprintf(f, "%lld,", c_int(&q, 0));
        for (int c = 1; c <= 5; c++) csv_cell(f, c_text(&q, c), false);
        fprintf(f, "%lld,", c_int(&q, 6));
        for (int c = 7; c <= 10; c++) csv_cell(f, c_text(&q, c), false);
        fprintf(f, "%lld,", c_int(&q, 11));
        for (int c = 12; c <= 15; c++) csv_cell(f, c_text(&q, c), false);
        for (int c = 16; c <= 21; c++) csv_num(f, c_double(&q, c));
        for (int c = 22; c <= 25; c++) fprintf(f, "%lld,", c_int(&q, c));
        csv_num(f, c_double(&q, 26));
        csv_num(f, c_double(&q, 27));
        csv_cell(f, c_text(&q, 28), true);
    }
    q_done(&q);
    return rc < 0 ? -1 : 0;
}

void history_json_num(cJSON *o, const char *k, double v) {
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    if (isfinite(v))
        cJSON_AddRawToObject(o, k, buf);
    else
        cJSON_AddNullToObject(o, k);
}

/* Adds the rows of one run (rows 1) or its samples (rows 0) to arr. */
static int export_children(struct history_store *s, long long run_id, bool rows, cJSON *arr,
                           struct fr_err *err) {
    struct q q;
    const char *sql = rows ? "SELECT key, unit, median, min, max, ci_lo, ci_hi, paired_read_gbs, reps, noisy,"
                             " samples, disturbed, sample_median, sample_paired_gbs FROM run_rows"
                             " WHERE run_id = $1 ORDER BY key"
                           : "SELECT key, rep, time_s, paired_read_gbs, disturbed, cause, threads, mono_ns"
                             " FROM samples WHERE run_id = $1 ORDER BY key, rep";
    if (q_prepare(s, &q, sql, err) != 0) return -1;
    q_int(&q, run_id);
    int rc;
    while ((rc = q_step(&q, err)) == 1) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "row", c_text(&q, 0));
        if (rows) {
            cJSON_AddStringToObject(o, "unit", c_text(&q, 1));
            static const char *const nums[] = {"median", "min", "max", "ci_lo", "ci_hi", "paired_read_gbs"};
            for (int c = 0; c < 6; c++) history_json_num(o, nums[c], c_double(&q, 2 + c));
            cJSON_AddNumberToObject(o, "reps", (double)c_int(&q, 8));
            cJSON_AddBoolToObject(o, "noisy", c_int(&q, 9) != 0);
            cJSON_AddNumberToObject(o, "samples", (double)c_int(&q, 10));
            cJSON_AddNumberToObject(o, "disturbed", (double)c_int(&q, 11));
            history_json_num(o, "sample_median", c_double(&q, 12));
            history_json_num(o, "sample_paired_read_gbs", c_double(&q, 13));
        } else {
            cJSON_AddNumberToObject(o, "rep", (double)c_int(&q, 1));
            history_json_num(o, "time_s", c_double(&q, 2));
            history_json_num(o, "paired_read_gbs", c_double(&q, 3));
            cJSON_AddBoolToObject(o, "disturbed", c_int(&q, 4) != 0);
            cJSON_AddStringToObject(o, "cause", c_text(&q, 5));
            cJSON_AddNumberToObject(o, "threads", (double)c_int(&q, 6));
            history_json_num(o, "mono_ns", c_double(&q, 7));
        }
        cJSON_AddItemToArray(arr, o);
    }
    q_done(&q);
    return rc < 0 ? -1 : 0;
}

static int export_line(FILE *f, cJSON *o, struct fr_err *err) {
    char *text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!text) return fr_err_set(err, "out of memory");
    fputs(text, f);
    fputc('\n', f);
    free(text);
    return 0;
}

static int export_jsonl(struct history_store *s, FILE *f, struct fr_err *err) {
    struct q q;
    if (q_prepare(
            s, &q,
            "SELECT r.id, r.uid, r.folder, r.utc, r.host, r.git_commit, r.dirty, r.version, r.model,"
            " r.options, r.command_line, r.has_samples, m.key, m.cpu, m.isa, m.threads, m.topology,"
            " m.kernel, m.mm_state FROM runs r JOIN machines m ON m.id = r.machine_id ORDER BY r.utc, r.id",
            err) != 0)
        return -1;
    int rc;
    /* each run's rows and samples are read on a second statement while this one is open: both backends
     * allow it (libpq holds the whole result, SQLite steps the two independently) */
    while ((rc = q_step(&q, err)) == 1) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "type", "run");
        cJSON_AddNumberToObject(o, "id", (double)c_int(&q, 0));
        static const char *const texts[] = {"uid", "folder", "utc", "host", "commit"};
        for (int c = 0; c < 5; c++) cJSON_AddStringToObject(o, texts[c], c_text(&q, 1 + c));
        cJSON_AddBoolToObject(o, "dirty", c_int(&q, 6) != 0);
        static const char *const more[] = {"version", "model", "options", "command_line"};
        for (int c = 0; c < 4; c++) cJSON_AddStringToObject(o, more[c], c_text(&q, 7 + c));
        cJSON_AddBoolToObject(o, "has_samples", c_int(&q, 11) != 0);
        cJSON *m = cJSON_AddObjectToObject(o, "machine");
        cJSON_AddStringToObject(m, "key", c_text(&q, 12));
        cJSON_AddStringToObject(m, "cpu", c_text(&q, 13));
        cJSON_AddStringToObject(m, "isa", c_text(&q, 14));
        cJSON_AddNumberToObject(m, "threads", (double)c_int(&q, 15));
        cJSON_AddStringToObject(m, "topology", c_text(&q, 16));
        cJSON_AddStringToObject(m, "kernel", c_text(&q, 17));
        cJSON_AddStringToObject(m, "mm_state", c_text(&q, 18));
        long long id = c_int(&q, 0);
        if (export_children(s, id, true, cJSON_AddArrayToObject(o, "rows"), err) != 0 ||
            export_children(s, id, false, cJSON_AddArrayToObject(o, "samples"), err) != 0) {
            cJSON_Delete(o);
            rc = -1;
            break;
        }
        if (export_line(f, o, err) != 0) {
            rc = -1;
            break;
        }
    }
    q_done(&q);
    if (rc < 0) return -1;
    if (q_prepare(
            s, &q,
            "SELECT c.id, c.folder, c.run_a, c.run_b, c.summary, c.added_utc, x.section, x.key, x.ratio,"
            " x.verdict FROM compares c JOIN compare_rows x ON x.compare_id = c.id ORDER BY c.id, x.idx",
            err) != 0)
        return -1;
    cJSON *o = NULL, *rows = NULL;
    long long cur = -1;
    while ((rc = q_step(&q, err)) == 1) {
        if (c_int(&q, 0) != cur) {
            if (o && export_line(f, o, err) != 0) {
                o = NULL;
                rc = -1;
                break;
            }
            cur = c_int(&q, 0);
            o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "type", "compare");
            cJSON_AddNumberToObject(o, "id", (double)cur);
            static const char *const texts[] = {"folder", "run_a", "run_b", "summary", "added_utc"};
            for (int c = 0; c < 5; c++) cJSON_AddStringToObject(o, texts[c], c_text(&q, 1 + c));
            rows = cJSON_AddArrayToObject(o, "rows");
        }
        cJSON *w = cJSON_CreateObject();
        cJSON_AddStringToObject(w, "section", c_text(&q, 6));
        cJSON_AddStringToObject(w, "row", c_text(&q, 7));
        history_json_num(w, "ratio", c_double(&q, 8));
        history_json_num(w, "ratio_lo", c_double(&q, 10));
        history_json_num(w, "ratio_hi", c_double(&q, 11));
        history_json_num(w, "p_adj", c_double(&q, 12));
        cJSON_AddStringToObject(w, "verdict", c_text(&q, 9));
        cJSON_AddItemToArray(rows, w);
    }
    q_done(&q);
    if (o && rc == 0 && export_line(f, o, err) != 0)
        rc = -1;
    else if (o && rc != 0)
        cJSON_Delete(o);
    return rc < 0 ? -1 : 0;
}

int history_export(struct history_store *s, enum history_export_format fmt, FILE *f, struct fr_err *err) {
    return fmt == HISTORY_EXPORT_CSV ? export_csv(s, f, err) : export_jsonl(s, f, err);
}
