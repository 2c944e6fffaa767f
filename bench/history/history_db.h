/* history_db: the few database operations the run store needs, behind which SQLite and PostgreSQL (libpq)
 * sit. The store (history_store.c) writes its SQL once: parameters are $1, $2, ... used in increasing order
 * (SQLite numbers "$1"-style names in order of first appearance, PostgreSQL by their digits, so both agree),
 * and DDL writes HDB_ID_PK where a table's generated integer key goes (INTEGER PRIMARY KEY is SQLite's rowid
 * alias, BIGSERIAL PRIMARY KEY PostgreSQL's). Everything else in the SQL is common to both.
 *
 * Not a general driver: a statement is prepared, bound, stepped row by row and reset; values are text,
 * 64-bit integers, doubles or NULL (a NaN double binds as NULL). Errors fill fr_err with the backend's text.
 */
#ifndef FR_HISTORY_DB_H
#define FR_HISTORY_DB_H

#include <stdbool.h>

#include "kernels/fr_err.h"

struct hdb;
struct hdb_stmt;

struct hdb_ops {
    const char *name; /* "sqlite" or "postgresql" */
    const char *id_pk;
    const char *table_exists_sql; /* one row, one count: how many tables are named $1 */
    /* one or more statements without parameters */
    int (*exec)(struct hdb *db, const char *sql, struct fr_err *err);
    /* a write transaction that holds the store's write lock from its start (SQLite BEGIN IMMEDIATE) */
    int (*begin)(struct hdb *db, struct fr_err *err);
    int (*commit)(struct hdb *db, struct fr_err *err);
    void (*rollback)(struct hdb *db);
    int (*prepare)(struct hdb *db, const char *sql, struct hdb_stmt **out, struct fr_err *err);
    void (*bind_text)(struct hdb_stmt *st, int idx, const char *v); /* NULL v: SQL NULL */
    void (*bind_int)(struct hdb_stmt *st, int idx, long long v);
    void (*bind_double)(struct hdb_stmt *st, int idx, double v); /* NaN: SQL NULL */
    /* 1: a row is ready; 0: done; -1: error (err filled) */
    int (*step)(struct hdb_stmt *st, struct fr_err *err);
    bool (*col_null)(struct hdb_stmt *st, int col);
    const char *(*col_text)(struct hdb_stmt *st, int col); /* "" for NULL; valid until the next step */
    long long (*col_int)(struct hdb_stmt *st, int col);
    double (*col_double)(struct hdb_stmt *st, int col); /* NaN for NULL */
    void (*reset)(struct hdb_stmt *st);                 /* rebind and step again */
    void (*finalize)(struct hdb_stmt *st);
    void (*close)(struct hdb *db);
};

/* Open a backend. write: create the store when missing, and refuse one that cannot be written; without it
 * a store that cannot be written opens read-only. busy_ms: how long a writer waits for another's lock. */
int hdb_sqlite_open(const char *path, bool write, int busy_ms, struct hdb **out, const struct hdb_ops **ops,
                    struct fr_err *err);
int hdb_pg_open(const char *conninfo, struct hdb **out, const struct hdb_ops **ops, struct fr_err *err);

#endif
