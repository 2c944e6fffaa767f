/* The SQLite backend of the run store (history_db.h). WAL mode, so readers never block the writer and two
 * runs appending at once wait for each other (busy timeout) instead of failing; synchronous=FULL, so a
 * committed run survives a power cut (one fsync a run: a run's append is one transaction); BEGIN
 * IMMEDIATE, so a transaction takes the write lock at its start and two writers cannot deadlock upgrading
 * read locks. Checked in tests/test_history_store.c. */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "bench/history/history_db.h"

struct hdb {
    sqlite3 *db;
};
struct hdb_stmt {
    sqlite3_stmt *st;
    struct hdb *db;
};

static int say(struct hdb *db, struct fr_err *err, const char *what) {
    return fr_err_set(err, "%s: %s", what, sqlite3_errmsg(db->db));
}

static int lite_exec(struct hdb *db, const char *sql, struct fr_err *err) {
    char *msg = NULL;
    if (sqlite3_exec(db->db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
    fr_err_set(err, "%s", msg ? msg : sqlite3_errmsg(db->db));
    sqlite3_free(msg);
    return -1;
}
static int lite_begin(struct hdb *db, struct fr_err *err) {
    return lite_exec(db, "BEGIN IMMEDIATE", err);
}
static int lite_commit(struct hdb *db, struct fr_err *err) {
    return lite_exec(db, "COMMIT", err);
}
static void lite_rollback(struct hdb *db) {
    if (!sqlite3_get_autocommit(db->db)) sqlite3_exec(db->db, "ROLLBACK", NULL, NULL, NULL);
}

static int lite_prepare(struct hdb *db, const char *sql, struct hdb_stmt **out, struct fr_err *err) {
    struct hdb_stmt *s = calloc(1, sizeof *s);
    if (!s) return fr_err_set(err, "out of memory");
    s->db = db;
    if (sqlite3_prepare_v2(db->db, sql, -1, &s->st, NULL) != SQLITE_OK) {
        say(db, err, "prepare");
        free(s);
        return -1;
    }
    *out = s;
    return 0;
}

static void lite_bind_text(struct hdb_stmt *s, int idx, const char *v) {
    if (v)
        sqlite3_bind_text(s->st, idx, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s->st, idx);
}
static void lite_bind_int(struct hdb_stmt *s, int idx, long long v) {
    sqlite3_bind_int64(s->st, idx, v);
}
static void lite_bind_double(struct hdb_stmt *s, int idx, double v) {
    if (isfinite(v))
        sqlite3_bind_double(s->st, idx, v);
    else
        sqlite3_bind_null(s->st, idx);
}

static int lite_step(struct hdb_stmt *s, struct fr_err *err) {
    int rc = sqlite3_step(s->st);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    return say(s->db, err, "step");
}

static bool lite_col_null(struct hdb_stmt *s, int col) {
    return sqlite3_column_type(s->st, col) == SQLITE_NULL;
}
static const char *lite_col_text(struct hdb_stmt *s, int col) {
    const unsigned char *t = sqlite3_column_text(s->st, col);
    return t ? (const char *)t : "";
}
static long long lite_col_int(struct hdb_stmt *s, int col) {
    return sqlite3_column_int64(s->st, col);
}
static double lite_col_double(struct hdb_stmt *s, int col) {
    return lite_col_null(s, col) ? NAN : sqlite3_column_double(s->st, col);
}
static void lite_reset(struct hdb_stmt *s) {
    sqlite3_reset(s->st);
    sqlite3_clear_bindings(s->st);
}
static void lite_finalize(struct hdb_stmt *s) {
    if (!s) return;
    sqlite3_finalize(s->st);
    free(s);
}
static void lite_close(struct hdb *db) {
    if (!db) return;
    sqlite3_close(db->db);
    free(db);
}

static const struct hdb_ops lite_ops = {
    .name = "sqlite",
    .id_pk = "INTEGER PRIMARY KEY",
    .table_exists_sql = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = $1",
    .exec = lite_exec,
    .begin = lite_begin,
    .commit = lite_commit,
    .rollback = lite_rollback,
    .prepare = lite_prepare,
    .bind_text = lite_bind_text,
    .bind_int = lite_bind_int,
    .bind_double = lite_bind_double,
    .step = lite_step,
    .col_null = lite_col_null,
    .col_text = lite_col_text,
    .col_int = lite_col_int,
    .col_double = lite_col_double,
    .reset = lite_reset,
    .finalize = lite_finalize,
    .close = lite_close,
};

int hdb_sqlite_open(const char *path, bool write, int busy_ms, struct hdb **out, const struct hdb_ops **ops,
                    struct fr_err *err) {
    struct hdb *db = calloc(1, sizeof *db);
    if (!db) return fr_err_set(err, "out of memory");
    /* without write, a store that cannot be written is still opened (SQLite falls back to read-only) */
    int flags = SQLITE_OPEN_READWRITE | (write ? SQLITE_OPEN_CREATE : 0);
    if (sqlite3_open_v2(path, &db->db, flags, NULL) != SQLITE_OK) {
        fr_err_set(err, "%s", db->db ? sqlite3_errmsg(db->db) : "out of memory");
        lite_close(db);
        return -1;
    }
    if (write && sqlite3_db_readonly(db->db, "main") == 1) {
        fr_err_set(err, "the store is read-only");
        lite_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db->db, busy_ms);
    /* Reading the schema here turns a file that is not a database into an error at open, not at the first
     * write. journal_mode=WAL is kept in the file, so it is set once; a read-only store stays as it is. */
    struct fr_err e = {{0}};
    if (lite_exec(db, "SELECT count(*) FROM sqlite_master", &e) != 0 ||
        (sqlite3_db_readonly(db->db, "main") == 0 && lite_exec(db, "PRAGMA journal_mode=WAL", &e) != 0) ||
        lite_exec(db, "PRAGMA synchronous=FULL", &e) != 0) {
        fr_err_set(err, "%s", e.msg);
        lite_close(db);
        return -1;
    }
    *out = db;
    *ops = &lite_ops;
    return 0;
}
