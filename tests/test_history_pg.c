/* The PostgreSQL run store against a real server that the test starts itself: initdb and pg_ctl in a
 * temporary folder, listening on a Unix socket there only (listen_addresses ''), run as an unprivileged user
 * when the tests run as root (initdb refuses root), stopped afterwards. Without the server binaries the test
 * is SKIPPED with the reason, never passed. Checks: a run's export equal byte for byte to the SQLite store's
 * (every field of every row and sample), migration from schema 1, a newer schema refused, two processes
 * appending at once, a writer killed mid-run, an unreachable server refused in one line. */
#include <criterion/criterion.h>
#include <glob.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/history/history.h"
#include "tests/history_fixture.h"
#include "tests/report_testutil.h"

static char pg_bin[512], pg_dir[64], pg_runas[64];
static bool pg_started;

/* The server's binaries: on PATH, else the newest /usr/lib/postgresql/<v>/bin (Debian). "" when none. */
static void find_server(void) {
    pg_bin[0] = '\0';
    if (system("command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1") == 0) {
        snprintf(pg_bin, sizeof pg_bin, "%s", "");
        FILE *p = popen("dirname \"$(command -v initdb)\"", "r");
        if (p && fgets(pg_bin, sizeof pg_bin, p)) pg_bin[strcspn(pg_bin, "\n")] = '\0';
        if (p) pclose(p);
        return;
    }
    glob_t g;
    if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) == 0 && g.gl_pathc > 0) {
        snprintf(pg_bin, sizeof pg_bin, "%s", g.gl_pathv[g.gl_pathc - 1]);
        *strrchr(pg_bin, '/') = '\0';
    }
    globfree(&g);
}

/* Runs a server command as the server's user; returns its exit status. */
static int as_server(const char *fmt, const char *arg) {
    char cmd[2048], inner[1600];
    snprintf(inner, sizeof inner, fmt, pg_bin, arg);
    if (pg_runas[0])
        snprintf(cmd, sizeof cmd, "runuser -u %s -- %s >>%s/server.log 2>&1", pg_runas, inner, pg_dir);
    else
        snprintf(cmd, sizeof cmd, "%s >>%s/server.log 2>&1", inner, pg_dir);
    return system(cmd);
}

static void uri(char *out, size_t len, const char *db) {
    snprintf(out, len, "postgresql:///%s?host=%s&port=54329&user=forge", db, pg_dir);
}

static void psql(const char *db, const char *sql) {
    char u[512];
    uri(u, sizeof u, db);
    PGconn *c = PQconnectdb(u);
    cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
    PGresult *res = PQexec(c, sql);
    cr_assert(PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK, "%s: %s",
              sql, PQresultErrorMessage(res));
    PQclear(res);
    PQfinish(c);
}

static long long pg_count(const char *db, const char *sql) {
    char u[512];
    uri(u, sizeof u, db);
    PGconn *c = PQconnectdb(u);
    cr_assert_eq(PQstatus(c), CONNECTION_OK, "%s", PQerrorMessage(c));
    PGresult *res = PQexec(c, sql);
    cr_assert_eq(PQresultStatus(res), PGRES_TUPLES_OK, "%s", PQresultErrorMessage(res));
    long long n = atoll(PQgetvalue(res, 0, 0));
    PQclear(res);
    PQfinish(c);
    return n;
}

static bool start_server(void) {
    find_server();
    if (!pg_bin[0]) return false;
    pg_runas[0] = '\0';
    snprintf(pg_dir, sizeof pg_dir, "/tmp/fr-pg-XXXXXX");
    cr_assert_not_null(mkdtemp(pg_dir));
    if (geteuid() == 0) { /* initdb refuses root: the server runs as nobody, in a folder it owns */
        struct passwd *pw = getpwnam("nobody");
        cr_assert_not_null(pw, "no user 'nobody' to run the server as");
        snprintf(pg_runas, sizeof pg_runas, "nobody");
        cr_assert_eq(chown(pg_dir, pw->pw_uid, pw->pw_gid), 0);
    }
    cr_assert_eq(as_server("%s/initdb -D %s/data -U forge -A trust --locale=C -E UTF8 --no-sync", pg_dir), 0,
                 "initdb failed: see %s/server.log", pg_dir);
    char opts[512];
    snprintf(opts, sizeof opts, "%s/data -l %s/postgres.log -o \"-k %s -c listen_addresses='' -p 54329 -F\"",
             pg_dir, pg_dir, pg_dir);
    pg_started = true; /* from here on the server is stopped after the test, whatever happens */
    cr_assert_eq(as_server("%s/pg_ctl -w -t 60 -D %s start", opts), 0, "pg_ctl start failed: see %s", pg_dir);
    return true;
}

static void stop_server(void) {
    if (!pg_started) return;
    pg_started = false;
    char data[300];
    snprintf(data, sizeof data, "%s/data", pg_dir);
    cr_expect_eq(as_server("%s/pg_ctl -w -t 60 -m fast -D %s stop", data), 0, "pg_ctl stop failed");
    tu_rm_tree(pg_dir);
}

static struct history_store *open_at(const char *where, int version) {
    struct history_store *s = NULL;
    struct history_open_opts o = {.write = true, .schema_version = version};
    struct fr_err err = {{0}};
    cr_assert_eq(history_open(where, &o, &s, &err), 0, "%s", err.msg);
    return s;
}

static void append(struct history_store *s, const char *dir) {
    struct history_append_result res;
    struct fr_err err = {{0}};
    cr_assert_eq(history_append_run(s, dir, NULL, &res, &err), 0, "%s", err.msg);
    cr_assert(!res.duplicate);
}

static char *export_text(struct history_store *s, const char *path) {
    FILE *f = fopen(path, "w");
    struct fr_err err = {{0}};
    cr_assert_eq(history_export(s, HISTORY_EXPORT_JSONL, f, &err), 0, "%s", err.msg);
    fclose(f);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    return tu_slurp(dir, strrchr(path, '/') + 1);
}

/* The same two runs through both backends export the same bytes. */
static void round_trip(const char *tmp) {
    psql("postgres", "CREATE DATABASE rt");
    char u[512], lite[400], dir[400], path[400];
    uri(u, sizeof u, "rt");
    snprintf(lite, sizeof lite, "%s/h.sqlite", tmp);
    struct history_store *p = open_at(u, 0), *l = open_at(lite, 0);
    cr_expect_str_eq(history_backend(p), "postgresql");
    for (int i = 0; i < 2; i++) {
        snprintf(dir, sizeof dir, "%s/run%d", tmp, i);
        append(p, dir);
        append(l, dir);
    }
    snprintf(path, sizeof path, "%s/pg.jsonl", tmp);
    char *a = export_text(p, path);
    snprintf(path, sizeof path, "%s/lite.jsonl", tmp);
    char *b = export_text(l, path);
    cr_expect(strlen(a) > 10000);
    cr_expect_str_eq(a, b, "the two backends' exports differ");
    free(a), free(b);
    struct history_series *sr;
    int n;
    struct fr_err err = {{0}};
    cr_assert_eq(history_read_series(p, "step@1024", NULL, &sr, &n, &err), 0, "%s", err.msg);
    cr_expect_eq(n, 1);
    cr_expect_eq(sr[0].n, 2);
    history_free_series(sr, n);
    history_close(p);
    history_close(l);
}

static void migrate_and_refuse(const char *tmp) {
    psql("postgres", "CREATE DATABASE mig");
    char u[512], dir[400];
    uri(u, sizeof u, "mig");
    struct history_store *s = open_at(u, 1);
    snprintf(dir, sizeof dir, "%s/run0", tmp);
    append(s, dir);
    history_close(s);
    cr_expect_eq(
        pg_count("mig", "SELECT count(*) FROM information_schema.tables WHERE table_name = 'compares'"), 0);
    s = open_at(u, 0);
    int v = 0;
    struct fr_err err = {{0}};
    cr_assert_eq(history_schema_version(s, &v, &err), 0, "%s", err.msg);
    cr_expect_eq(v, HISTORY_SCHEMA_VERSION);
    history_close(s);
    cr_expect_eq(pg_count("mig", "SELECT count(*) FROM runs"), 1);
    psql("mig", "UPDATE schema_version SET version = 99");
    struct history_open_opts o = {.write = true};
    cr_expect_neq(history_open(u, &o, &s, &err), 0);
    cr_expect(strstr(err.msg, "newer than this build's") && !strchr(err.msg, '\n'), "%s", err.msg);
    /* an unreachable server: one line, and the URI is not printed */
    cr_expect_neq(history_open("postgresql:///none?host=/nonexistent-dir&user=forge", &o, &s, &err), 0);
    cr_expect(strstr(err.msg, "postgresql store: ") && !strchr(err.msg, '\n') &&
                  !strstr(err.msg, "user=forge"),
              "%s", err.msg);
}

static void die_at_pg(void *ctx, int written) {
    if (written == *(int *)ctx) raise(SIGKILL);
}

static void concurrent_and_killed(const char *tmp) {
    psql("postgres", "CREATE DATABASE conc");
    char u[512];
    uri(u, sizeof u, "conc");
    history_close(open_at(u, 0));
    pid_t pids[2] = {hf_spawn_writer(u, tmp, 0, 2, 4), hf_spawn_writer(u, tmp, 1, 2, 4)};
    for (int w = 0; w < 2; w++) {
        int st;
        cr_assert_eq(waitpid(pids[w], &st, 0), pids[w]);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d: status %d", w, st);
    }
    cr_expect_eq(pg_count("conc", "SELECT count(*) FROM runs"), 4);
    long long samples = pg_count("conc", "SELECT count(*) FROM samples");
    cr_expect_gt(samples, 0);

    /* a writer killed mid-run: the server rolls its transaction back */
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        struct history_store *s = NULL;
        struct history_open_opts o = {.write = true};
        struct fr_err err = {{0}};
        if (history_open(u, &o, &s, &err) != 0) _exit(2);
        static int stop = 40;
        struct history_append_opts ao = {.after_write = die_at_pg, .ctx = &stop};
        char dir[400];
        snprintf(dir, sizeof dir, "%s/run4", tmp);
        struct history_append_result res;
        history_append_run(s, dir, &ao, &res, &err);
        _exit(0);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "status %d", st);
    /* the server sees the connection drop and aborts the transaction: wait for it to let go of the lock */
    struct history_store *s = open_at(u, 0);
    char dir[400];
    snprintf(dir, sizeof dir, "%s/run4", tmp);
    cr_expect_eq(pg_count("conc", "SELECT count(*) FROM runs"), 4);
    cr_expect_eq(pg_count("conc", "SELECT count(*) FROM samples"), samples);
    append(s, dir);
    history_close(s);
    cr_expect_eq(pg_count("conc", "SELECT count(*) FROM runs"), 5);
}

Test(history_pg, against_a_server_started_here, .timeout = 300, .fini = stop_server) {
    if (!start_server()) {
        cr_skip_test("SKIPPED: PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or in "
                     "/usr/lib/postgresql/*/bin; scripts/bootstrap.sh installs the postgresql package");
    }
    char tmp[256];
    tu_tmpdir(tmp, sizeof tmp);
    for (int i = 0; i < 5; i++) {
        char name[16], utc[32], commit[16];
        snprintf(name, sizeof name, "run%d", i);
        snprintf(utc, sizeof utc, "2026110%dT120000Z", i + 1);
        snprintf(commit, sizeof commit, "c%d", i);
        hf_write_run(tmp, name, 1.0 + 0.01 * i, utc, commit, i != 1);
    }
    round_trip(tmp);
    migrate_and_refuse(tmp);
    concurrent_and_killed(tmp);
    tu_rm_tree(tmp);
}
