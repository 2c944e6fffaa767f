/* The SQLite run store: a run's round trip field by field against the report it was written from, a run
 * from before samples.csv, the same folder twice, migration from schema 1, stores refused (newer schema,
 * corrupt, locked, read-only), two processes appending at once, and a writer killed mid-run. */
#include <criterion/criterion.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/history/history.h"
#include "tests/history_fixture.h"
#include "tests/report_testutil.h"

static struct history_store *open_store(const char *path, int version) {
    struct history_store *s = NULL;
    struct history_open_opts o = {.write = true, .schema_version = version};
    struct fr_err err = {{0}};
    cr_assert_eq(history_open(path, &o, &s, &err), 0, "%s", err.msg);
    return s;
}

static int count_cb(void *ctx, const struct history_run_info *r) {
    (void)r;
    ++*(int *)ctx;
    return 0;
}
static int count_runs(struct history_store *s) {
    int n = 0;
    struct fr_err err = {{0}};
    cr_assert_eq(history_list_runs(s, NULL, count_cb, &n, &err), 0, "%s", err.msg);
    return n;
}

static long long sql_count(const char *path, const char *sql) {
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    long long n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

static void append_ok(struct history_store *s, const char *dir, struct history_append_result *res) {
    struct fr_err err = {{0}};
    cr_assert_eq(history_append_run(s, dir, NULL, res, &err), 0, "%s", err.msg);
}

Test(history_store, round_trip_matches_the_report) {
    char tmp[256], store[300], dir[300];
    tu_tmpdir(tmp, sizeof tmp);
    hf_write_run(tmp, "run1", 1.0, "20261129T173000Z", "61c9de2-dirty", true);
    snprintf(store, sizeof store, "%s/history.sqlite", tmp);
    snprintf(dir, sizeof dir, "%s/run1", tmp);
    struct history_store *s = open_store(store, 0);
    struct history_append_result res;
    append_ok(s, dir, &res);
    cr_expect(!res.duplicate && res.has_samples);
    cr_expect_eq(res.unmatched_samples, 0);

    struct run_report *r = calloc(1, sizeof *r);
    report_fixture_fill(r, 1.0);
    cr_expect_eq(res.samples, HF_REPS * (r->n_steps + r->n_blocks + 4), "samples %d", res.samples);
    struct fr_err err = {{0}};
    /* every step and block row: the store's figures are the report's, bit for bit */
    for (int i = 0; i < r->n_steps + r->n_blocks; i++) {
        char key[96];
        const struct timing_stats *t;
        if (i < r->n_steps) {
            snprintf(key, sizeof key, "step@%ld", r->steps[i].context);
            t = &r->steps[i].measured;
        } else {
            snprintf(key, sizeof key, "block:%s@%ld", r->blocks[i - r->n_steps].name, r->blocks_context);
            t = &r->blocks[i - r->n_steps].measured;
        }
        struct history_series *sr;
        int n;
        cr_assert_eq(history_read_series(s, key, NULL, &sr, &n, &err), 0, "%s", err.msg);
        cr_assert_eq(n, 1, "%s: %d series", key, n);
        cr_assert_eq(sr[0].n, 1);
        const struct history_point *p = &sr[0].points[0];
        cr_expect_eq(p->median, t->median_s, "%s median %.17g vs %.17g", key, p->median, t->median_s);
        cr_expect_eq(p->min, t->min_s);
        cr_expect_eq(p->max, t->max_s);
        cr_expect_eq(p->reps, t->reps);
        cr_expect_eq(p->samples, HF_REPS);
        cr_expect_str_eq(p->commit, "61c9de2");
        cr_expect(p->dirty);
        /* the point is the median of the undisturbed samples: a step's rep 1 is disturbed */
        double want = i < r->n_steps ? 0.5 * (hf_rep_time(t->median_s, 2) + hf_rep_time(t->median_s, 3))
                                     : hf_rep_time(t->median_s, 2);
        cr_expect(fabs(p->value - want) <= 1e-15 * want, "%s point %.17g want %.17g", key, p->value, want);
        cr_expect_eq(p->disturbed, i < r->n_steps ? 1 : 0);
        if (i < r->n_steps) cr_expect_eq(p->paired_read_gbs, 32.5); /* median of 30, 32, 33, 34 */
        cr_expect_str_eq(sr[0].machine.cpu, r->prov.cpu_model);
        cr_expect_str_eq(sr[0].machine.kernel, "Linux 6.1.0-test");
        cr_expect_str_eq(sr[0].hosts, "testhost");
        history_free_series(sr, n);
    }
    /* the samples themselves, through the export */
    char path[400];
    snprintf(path, sizeof path, "%s/export.jsonl", tmp);
    FILE *f = fopen(path, "w");
    cr_assert_eq(history_export(s, HISTORY_EXPORT_JSONL, f, &err), 0, "%s", err.msg);
    fclose(f);
    char *text = tu_slurp(tmp, "export.jsonl");
    cJSON *o = cJSON_Parse(text);
    cr_assert_not_null(o);
    cJSON *samples = cJSON_GetObjectItem(o, "samples");
    cr_expect_eq(cJSON_GetArraySize(samples), res.samples);
    cJSON *x;
    int checked = 0;
    cJSON_ArrayForEach(x, samples) {
        const char *key = cJSON_GetObjectItem(x, "row")->valuestring;
        int k = cJSON_GetObjectItem(x, "rep")->valueint;
        for (int i = 0; i < r->n_steps; i++) {
            char want[64];
            snprintf(want, sizeof want, "step@%ld", r->steps[i].context);
            if (strcmp(key, want) != 0) continue;
            cr_expect_eq(cJSON_GetObjectItem(x, "time_s")->valuedouble,
                         hf_rep_time(r->steps[i].measured.median_s, k));
            cr_expect_eq(cJSON_GetObjectItem(x, "paired_read_gbs")->valuedouble, 30.0 + k);
            cr_expect_eq(cJSON_IsTrue(cJSON_GetObjectItem(x, "disturbed")), k == 1);
            checked++;
        }
    }
    cr_expect_eq(checked, HF_REPS * r->n_steps);
    cJSON_Delete(o);
    free(text);
    free(r);
    history_close(s);
    tu_rm_tree(tmp);
}

Test(history_store, run_without_samples_and_duplicates) {
    char tmp[256], store[300], dir[300];
    tu_tmpdir(tmp, sizeof tmp);
    hf_write_run(tmp, "old", 1.0, "20261101T000000Z", "aaaa", false);
    snprintf(store, sizeof store, "%s/h.sqlite", tmp);
    snprintf(dir, sizeof dir, "%s/old", tmp);
    struct history_store *s = open_store(store, 0);
    struct history_append_result res;
    append_ok(s, dir, &res);
    cr_expect(!res.has_samples && res.samples == 0 && res.rows > 20);
    struct history_series *sr;
    int n;
    struct fr_err err = {{0}};
    cr_assert_eq(history_read_series(s, "step@1024", NULL, &sr, &n, &err), 0, "%s", err.msg);
    cr_assert_eq(n, 1);
    cr_expect_eq(sr[0].points[0].value, sr[0].points[0].median, "no samples: the point is run.json's median");
    cr_expect_eq(sr[0].points[0].samples, 0);
    history_free_series(sr, n);
    append_ok(s, dir, &res);
    cr_expect(res.duplicate);
    cr_expect_eq(count_runs(s), 1);
    history_close(s);
    tu_rm_tree(tmp);
}

Test(history_store, migrates_schema_1) {
    char tmp[256], store[300], dir[300];
    tu_tmpdir(tmp, sizeof tmp);
    hf_write_run(tmp, "r", 1.0, "20261101T000000Z", "aaaa", true);
    snprintf(store, sizeof store, "%s/h.sqlite", tmp);
    snprintf(dir, sizeof dir, "%s/r", tmp);
    struct history_store *s = open_store(store, 1);
    int v = 0;
    struct fr_err err = {{0}};
    cr_assert_eq(history_schema_version(s, &v, &err), 0);
    cr_expect_eq(v, 1);
    struct history_append_result res;
    append_ok(s, dir, &res);
    history_close(s);
    cr_expect_eq(sql_count(store, "SELECT count(*) FROM sqlite_master WHERE name = 'compares'"), 0);
    long long samples = sql_count(store, "SELECT count(*) FROM samples");

    s = open_store(store, 0);
    cr_assert_eq(history_schema_version(s, &v, &err), 0);
    cr_expect_eq(v, HISTORY_SCHEMA_VERSION);
    cr_expect_eq(count_runs(s), 1, "the run written under schema 1 is still there");
    history_close(s);
    cr_expect_eq(sql_count(store, "SELECT count(*) FROM samples"), samples);
    cr_expect_eq(sql_count(store, "SELECT count(*) FROM sqlite_master WHERE name = 'compares'"), 1);
    tu_rm_tree(tmp);
}

static void expect_refused(const char *path, bool write, const char *needle) {
    struct history_store *s = NULL;
    struct history_open_opts o = {.write = write, .busy_ms = 100};
    struct fr_err err = {{0}};
    cr_expect_neq(history_open(path, &o, &s, &err), 0, "opened %s", path);
    cr_expect(strstr(err.msg, needle), "'%s' does not say '%s'", err.msg, needle);
    cr_expect(!strchr(err.msg, '\n'));
    if (s) history_close(s);
}

Test(history_store, refuses_newer_and_corrupt_stores) {
    char tmp[256], store[300], junk[300];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(store, sizeof store, "%s/h.sqlite", tmp);
    history_close(open_store(store, 0));
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(store, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "UPDATE schema_version SET version = 99", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    expect_refused(store, true, "newer than this build's");
    expect_refused(store, false, "newer than this build's");

    snprintf(junk, sizeof junk, "%s/junk.sqlite", tmp);
    FILE *f = fopen(junk, "w");
    for (int i = 0; i < 300; i++) fputs("this is not a database, ", f);
    fclose(f);
    expect_refused(junk, true, "not a database");
    tu_rm_tree(tmp);
}

Test(history_store, refuses_a_locked_store) {
    char tmp[256], store[300], dir[300];
    tu_tmpdir(tmp, sizeof tmp);
    hf_write_run(tmp, "r", 1.0, "20261101T000000Z", "aaaa", false);
    snprintf(store, sizeof store, "%s/h.sqlite", tmp);
    snprintf(dir, sizeof dir, "%s/r", tmp);
    history_close(open_store(store, 0));
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(store, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    struct history_store *s = NULL;
    struct history_open_opts o = {.write = true, .busy_ms = 100};
    struct fr_err err = {{0}};
    cr_assert_eq(history_open(store, &o, &s, &err), 0, "%s", err.msg);
    struct history_append_result res;
    cr_expect_neq(history_append_run(s, dir, NULL, &res, &err), 0);
    cr_expect(strstr(err.msg, "locked"), "%s", err.msg);
    history_close(s);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    s = open_store(store, 0);
    cr_expect_eq(count_runs(s), 0);
    append_ok(s, dir, &res); /* the lock gone, the same append lands */
    cr_expect_eq(count_runs(s), 1);
    history_close(s);
    tu_rm_tree(tmp);
}

Test(history_store, refuses_a_read_only_store) {
    char tmp[256], store[300];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(store, sizeof store, "%s/h.sqlite", tmp);
    history_close(open_store(store, 0));
    cr_assert_eq(chmod(store, 0444), 0);
    cr_assert_eq(chmod(tmp, 0755), 0); /* the user below may enter the folder, not write it */
    /* root writes any file: the check runs as an unprivileged user where the tests run as root */
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
        struct history_store *s = NULL;
        struct history_open_opts o = {.write = true};
        struct fr_err err = {{0}};
        int rc = history_open(store, &o, &s, &err);
        _exit(rc != 0 && strstr(err.msg, "read-only") ? 0 : 1);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit %d", WEXITSTATUS(st));
    tu_rm_tree(tmp);
}

#define RUNS_PER_WRITER 6

Test(history_store, two_writers_lose_nothing) {
    char tmp[256], store[300];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(store, sizeof store, "%s/h.sqlite", tmp);
    for (int i = 0; i < 2 * RUNS_PER_WRITER; i++) {
        char name[32], utc[48];
        snprintf(name, sizeof name, "run%d", i);
        snprintf(utc, sizeof utc, "202611%02dT00000%dZ", 10 + i / 2, i % 2);
        hf_write_run(tmp, name, 1.0 + 0.01 * i, utc, "bbbb", true);
    }
    history_close(open_store(store, 0));
    pid_t pids[2] = {hf_spawn_writer(store, tmp, 0, 2, 2 * RUNS_PER_WRITER),
                     hf_spawn_writer(store, tmp, 1, 2, 2 * RUNS_PER_WRITER)};
    for (int w = 0; w < 2; w++) {
        int st;
        cr_assert_eq(waitpid(pids[w], &st, 0), pids[w]);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer %d: status %d", w, st);
    }
    struct history_store *s = open_store(store, 0);
    cr_expect_eq(count_runs(s), 2 * RUNS_PER_WRITER);
    history_close(s);
    struct run_report *r = calloc(1, sizeof *r);
    report_fixture_fill(r, 1.0);
    cr_expect_eq(sql_count(store, "SELECT count(*) FROM samples"),
                 2LL * RUNS_PER_WRITER * HF_REPS * (r->n_steps + r->n_blocks + 4));
    free(r);
    tu_rm_tree(tmp);
}

static void die_at(void *ctx, int written) {
    if (written == *(int *)ctx) raise(SIGKILL);
}

Test(history_store, killed_writer_leaves_no_partial_run) {
    char tmp[256], store[300], dir[300];
    tu_tmpdir(tmp, sizeof tmp);
    hf_write_run(tmp, "first", 1.0, "20261101T000000Z", "aaaa", true);
    hf_write_run(tmp, "second", 1.1, "20261102T000000Z", "bbbb", true);
    snprintf(store, sizeof store, "%s/h.sqlite", tmp);
    snprintf(dir, sizeof dir, "%s/first", tmp);
    struct history_store *s = open_store(store, 0);
    struct history_append_result res;
    append_ok(s, dir, &res);
    history_close(s);
    long long rows = sql_count(store, "SELECT count(*) FROM run_rows");
    long long samples = sql_count(store, "SELECT count(*) FROM samples");
    snprintf(dir, sizeof dir, "%s/second", tmp);
    /* killed after some rows, then after some samples: neither leaves any of the run */
    int stops[2] = {10, (int)rows + 20};
    for (int k = 0; k < 2; k++) {
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
            struct history_store *c = NULL;
            struct history_open_opts o = {.write = true};
            struct fr_err err = {{0}};
            if (history_open(store, &o, &c, &err) != 0) _exit(2);
            struct history_append_opts ao = {.after_write = die_at, .ctx = &stops[k]};
            history_append_run(c, dir, &ao, &res, &err);
            _exit(0); /* not reached when the hook kills it */
        }
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the writer was not killed (status %d)", st);
        cr_expect_eq(sql_count(store, "SELECT count(*) FROM runs"), 1);
        cr_expect_eq(sql_count(store, "SELECT count(*) FROM run_rows"), rows);
        cr_expect_eq(sql_count(store, "SELECT count(*) FROM samples"), samples);
    }
    s = open_store(store, 0);
    append_ok(s, dir, &res); /* the store is whole: the run lands now */
    cr_expect(!res.duplicate);
    cr_expect_eq(count_runs(s), 2);
    history_close(s);
    tu_rm_tree(tmp);
}

Test(history_store, row_keys) {
    char key[96];
    cr_expect_eq(history_folder_row_key("sampler@151936", key, sizeof key), 0);
    cr_expect_str_eq(key, "sampler:chain_fast@151936");
    cr_expect_eq(history_folder_row_key("block:attention@4096", key, sizeof key), 0);
    cr_expect_str_eq(key, "block:attention@4096");
    cr_expect_eq(history_folder_row_key("ceiling:dram_read", key, sizeof key), 0);
    const char *bad[] = {"step", "step@", "nonsense@1", "block:attention", "sampler@", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_neq(history_folder_row_key(bad[i], key, sizeof key), 0, "'%s' taken", bad[i]);
}

Test(history_store, refuses_bad_samples) {
    char tmp[256], dir[300];
    tu_tmpdir(tmp, sizeof tmp);
    hf_write_run(tmp, "r", 1.0, "20261101T000000Z", "aaaa", false);
    snprintf(dir, sizeof dir, "%s/r", tmp);
    const char *bodies[] = {
        "wrong schema\n", "# forge-roofline-samples/1\nrow,rep\n",
        "# forge-roofline-samples/1\nrow,rep,time_s,paired_read_gbs,disturbed,cause,threads,mono_ns\n"
        "step@1,0,abc,,0,,1,5\n"};
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/samples.csv", dir);
        FILE *f = fopen(path, "w");
        fputs(bodies[i], f);
        fclose(f);
        struct history_run run;
        struct fr_err err = {{0}};
        cr_expect_neq(history_folder_read_run(dir, &run, &err), 0, "body %zu taken", i);
        cr_expect(strstr(err.msg, "samples.csv"), "%s", err.msg);
    }
    tu_rm_tree(tmp);
}
