/* The PostgreSQL backend of the run store (history_db.h), through libpq: the same schema and SQL as SQLite,
 * so that several benchmark machines write to one place. A write transaction takes a transaction-scoped
 * advisory lock first: writers (and migrations) take turns, as SQLite's single writer does, and a migration
 * racing another process's cannot run twice. Values travel as text; the server infers each parameter's type
 * from its use. Checked in tests/test_history_pg.c against a server the test starts itself. */
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/history/history_db.h"

#define PG_MAX_PARAMS 32
#define PG_LOCK_KEY   "5252052" /* the store's advisory lock: any number other tools on the server avoid */

struct hdb {
    PGconn *conn;
    int next_stmt;
};

struct hdb_stmt {
    struct hdb *db;
    char name[24];
    int n_params;
    char *values[PG_MAX_PARAMS + 1];
    PGresult *res;
    int row, n_rows; /* row: the row the column getters read; -1 before the first step */
    int executed;
};

static int pg_err(struct hdb *db, struct fr_err *err, const PGresult *res) {
    const char *msg = res ? PQresultErrorMessage(res) : PQerrorMessage(db->conn);
    if (!msg || !*msg) msg = PQerrorMessage(db->conn);
    char one[400];
    snprintf(one, sizeof one, "%s", msg);
    one[strcspn(one, "\n")] = '\0'; /* the server's DETAIL and HINT lines stay out of the one-line error */
    return fr_err_set(err, "%s", one);
}

static int pg_exec(struct hdb *db, const char *sql, struct fr_err *err) {
    PGresult *res = PQexec(db->conn, sql);
    ExecStatusType st = PQresultStatus(res);
    int rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? 0 : pg_err(db, err, res);
    PQclear(res);
    return rc;
}
static int pg_begin(struct hdb *db, struct fr_err *err) {
    return pg_exec(db, "BEGIN; SELECT pg_advisory_xact_lock(" PG_LOCK_KEY ")", err);
}
static int pg_commit(struct hdb *db, struct fr_err *err) {
    return pg_exec(db, "COMMIT", err);
}
static void pg_rollback(struct hdb *db) {
    if (PQtransactionStatus(db->conn) != PQTRANS_IDLE) {
        PGresult *res = PQexec(db->conn, "ROLLBACK");
        PQclear(res);
    }
}

/* The number of $n parameters in sql: its highest n. */
static int count_params(const char *sql) {
    int most = 0;
    for (const char *p = strchr(sql, '$'); p; p = strchr(p + 1, '$')) {
        int v = atoi(p + 1);
        if (v > most) most = v;
    }
    return most;
}

static int pg_prepare(struct hdb *db, const char *sql, struct hdb_stmt **out, struct fr_err *err) {
    int n = count_params(sql);
    if (n > PG_MAX_PARAMS) return fr_err_set(err, "prepare: %d parameters, at most %d", n, PG_MAX_PARAMS);
    struct hdb_stmt *s = calloc(1, sizeof *s);
    if (!s) return fr_err_set(err, "out of memory");
    s->db = db, s->n_params = n, s->row = -1;
    snprintf(s->name, sizeof s->name, "fr_s%d", db->next_stmt++);
    PGresult *res = PQprepare(db->conn, s->name, sql, n, NULL);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        pg_err(db, err, res);
        PQclear(res);
        free(s);
        return -1;
    }
    PQclear(res);
    *out = s;
    return 0;
}

static void set_value(struct hdb_stmt *s, int idx, const char *v) {
    if (idx < 1 || idx > s->n_params || idx > PG_MAX_PARAMS) return;
    free(s->values[idx]);
    s->values[idx] = v ? strdup(v) : NULL;
}
static void pg_bind_text(struct hdb_stmt *s, int idx, const char *v) {
    set_value(s, idx, v);
}
static void pg_bind_int(struct hdb_stmt *s, int idx, long long v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    set_value(s, idx, buf);
}
static void pg_bind_double(struct hdb_stmt *s, int idx, double v) {
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    set_value(s, idx, isfinite(v) ? buf : NULL);
}

static int pg_step(struct hdb_stmt *s, struct fr_err *err) {
    if (!s->executed) {
        s->res = PQexecPrepared(s->db->conn, s->name, s->n_params, (const char *const *)s->values + 1, NULL,
                                NULL, 0);
        s->executed = 1;
        ExecStatusType st = PQresultStatus(s->res);
        if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) return pg_err(s->db, err, s->res);
        s->n_rows = st == PGRES_TUPLES_OK ? PQntuples(s->res) : 0;
        s->row = -1;
    }
    if (s->row + 1 >= s->n_rows) return 0;
    s->row++;
    return 1;
}

static bool pg_col_null(struct hdb_stmt *s, int col) {
    return !s->res || s->row < 0 || PQgetisnull(s->res, s->row, col);
}
static const char *pg_col_text(struct hdb_stmt *s, int col) {
    return pg_col_null(s, col) ? "" : PQgetvalue(s->res, s->row, col);
}
static long long pg_col_int(struct hdb_stmt *s, int col) {
    return pg_col_null(s, col) ? 0 : strtoll(PQgetvalue(s->res, s->row, col), NULL, 10);
}
static double pg_col_double(struct hdb_stmt *s, int col) {
    return pg_col_null(s, col) ? NAN : strtod(PQgetvalue(s->res, s->row, col), NULL);
}

static void pg_reset(struct hdb_stmt *s) {
    PQclear(s->res);
    s->res = NULL;
    s->executed = 0, s->row = -1, s->n_rows = 0;
    for (int i = 1; i <= s->n_params; i++) set_value(s, i, NULL);
}

static void pg_finalize(struct hdb_stmt *s) {
    if (!s) return;
    pg_reset(s);
    /* statements are the session's, not the transaction's: drop it (in an aborted transaction this fails,
     * and the session's end drops it) */
    char sql[48];
    snprintf(sql, sizeof sql, "DEALLOCATE %s", s->name);
    PGresult *res = PQexec(s->db->conn, sql);
    PQclear(res);
    free(s);
}

static void pg_close(struct hdb *db) {
    if (!db) return;
    PQfinish(db->conn);
    free(db);
}

static const struct hdb_ops pg_ops = {
    .name = "postgresql",
    .id_pk = "BIGSERIAL PRIMARY KEY",
    .table_exists_sql = "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
                        " AND table_name = $1",
    .exec = pg_exec,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .prepare = pg_prepare,
    .bind_text = pg_bind_text,
    .bind_int = pg_bind_int,
    .bind_double = pg_bind_double,
    .step = pg_step,
    .col_null = pg_col_null,
    .col_text = pg_col_text,
    .col_int = pg_col_int,
    .col_double = pg_col_double,
    .reset = pg_reset,
    .finalize = pg_finalize,
    .close = pg_close,
};

/* The server's notices (e.g. "relation already exists, skipping") are not the store's errors. */
static void quiet(void *arg, const char *msg) {
    (void)arg;
    (void)msg;
}

int hdb_pg_open(const char *conninfo, struct hdb **out, const struct hdb_ops **ops, struct fr_err *err) {
    struct hdb *db = calloc(1, sizeof *db);
    if (!db) return fr_err_set(err, "out of memory");
    db->conn = PQconnectdb(conninfo);
    if (!db->conn || PQstatus(db->conn) != CONNECTION_OK) {
        if (db->conn)
            pg_err(db, err, NULL);
        else
            fr_err_set(err, "out of memory");
        pg_close(db);
        return -1;
    }
    PQsetNoticeProcessor(db->conn, quiet, NULL);
    *out = db;
    *ops = &pg_ops;
    return 0;
}
