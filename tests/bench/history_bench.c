/* The run store's speed targets (make bench-history RUN=results/<run>): appending one full run with all its
 * rows and samples to SQLite (target under 50 ms), and `history show` over a store of 10,000 runs (target
 * under 200 ms), plus the change-point detector's rates over 1000 seeded series of each kind. The run folder
 * given is copied 20 times under new UTC stamps, each with a samples.csv of 50 repetitions a timed row and
 * 1000 a sampler row (a full run's most); the 10,000-run store repeats the first run's rows under new runs.
 * Prints the machine and units first and a line per figure: median, min, max over the repetitions. */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench/history/history.h"
#include "bench/history/history_change.h"

#define COPIES 20

static double clock_s(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static double now_s(void) {
    return clock_s(CLOCK_MONOTONIC);
}
static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static void report(const char *what, double *v, int n, double target_ms) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    printf("%-44s median %8.2f ms  min %8.2f  max %8.2f  (%d reps; target < %.0f ms: %s)\n", what, med * 1e3,
           v[0] * 1e3, v[n - 1] * 1e3, n, target_ms, med * 1e3 < target_ms ? "met" : "NOT met");
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    b[got] = '\0';
    fclose(f);
    return b;
}

static int make_copies(const char *run, const char *tmp, const struct history_run *r) {
    char path[4200];
    snprintf(path, sizeof path, "%s/run.json", run);
    char *text = slurp(path);
    if (!text) return -1;
    char *utc = strstr(text, r->utc);
    if (!utc) return -1;
    for (int c = 0; c < COPIES; c++) {
        snprintf(path, sizeof path, "%s/run%02d", tmp, c);
        mkdir(path, 0777);
        snprintf(path, sizeof path, "%s/run%02d/run.json", tmp, c);
        FILE *f = fopen(path, "w");
        char stamp[32];
        snprintf(stamp, sizeof stamp, "2026%02d%02dT000000Z", 1 + c / 28, 1 + c % 28);
        fwrite(text, 1, (size_t)(utc - text), f);
        fputs(stamp, f);
        fputs(utc + strlen(r->utc), f);
        fclose(f);
        snprintf(path, sizeof path, "%s/run%02d/samples.csv", tmp, c);
        f = fopen(path, "w");
        fputs("# forge-roofline-samples/1\nrow,rep,time_s,paired_read_gbs,disturbed,cause,threads,mono_ns\n",
              f);
        long long mono = 0;
        for (int i = 0; i < r->n_rows; i++) {
            if (strcmp(r->rows[i].unit, "s") != 0) continue;
            int reps = strncmp(r->rows[i].key, "sampler:", 8) == 0 ? 1000 : 50;
            for (int k = 0; k < reps; k++)
                fprintf(f, "%s,%d,%.9g,%.4g,%d,%s,2,%lld\n", r->rows[i].key, k,
                        r->rows[i].median * (1 + 0.001 * k), 35.0 + 0.01 * k, k % 17 == 5,
                        k % 17 == 5 ? "preempted" : "", mono += 100000);
        }
        fclose(f);
    }
    free(text);
    return 0;
}

/* The store of 10,000 runs: the first run's machine and rows under 9,999 more runs. */
static int grow(const char *store, struct fr_err *err) {
    sqlite3 *db;
    if (sqlite3_open(store, &db) != SQLITE_OK) return fr_err_set(err, "open %s", store);
    char *msg = NULL;
    int rc = sqlite3_exec(
        db,
        "BEGIN;"
        "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 10000 - (SELECT count(*) "
        "FROM runs))"
        " INSERT INTO runs (uid, folder, utc, host, machine_id, git_commit, dirty, version, model, options,"
        " command_line, has_samples) SELECT 'synthetic' || i, folder, '2027' || printf('%06d', i), host, "
        "machine_id,"
        " printf('%07x', i), 0, version, model, options, command_line, 0 FROM k, (SELECT * FROM runs LIMIT "
        "1);"
        "INSERT INTO run_rows SELECT r.id, x.key, x.unit, x.median * (1 + 0.01 * ((r.id * 7919) % 5)), "
        "x.min, x.max,"
        " x.ci_lo, x.ci_hi, x.paired_read_gbs, x.reps, x.noisy, 0, 0, NULL, NULL FROM runs r,"
        " (SELECT * FROM run_rows WHERE run_id = (SELECT min(id) FROM runs)) x WHERE r.uid LIKE 'synthetic%';"
        "COMMIT;",
        NULL, NULL, &msg);
    if (rc != SQLITE_OK) fr_err_set(err, "grow: %s", msg);
    sqlite3_free(msg);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

/* The detector's rates over 1000 series of 200 runs, 2 % noise, a 5 % shift (reps raw samples a run). */
static uint64_t rng = 0x2545F4914F6CDD1DULL;
static double gauss(void) {
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    double u = ((double)((rng * 2685821657736338717ULL) >> 11) + 0.5) / 9007199254740992.0;
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    double v = ((double)((rng * 2685821657736338717ULL) >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}
static double pt(double level, int reps) {
    double v[9] = {0};
    for (int k = 0; k < reps; k++) v[k] = level * (1 + 0.02 * gauss());
    qsort(v, (size_t)reps, sizeof v[0], cmp_d);
    return v[reps / 2];
}
static void rates(int reps) {
    const int series = 1000;
    int hits = 0, exact = 0, fa = 0;
    double y[200];
    struct history_shift sh[16];
    struct fr_err err = {{0}};
    for (int i = 0; i < series; i++) {
        int at = 40 + (int)((gauss() * 0.2 + 0.5) * 120);
        if (at < 40) at = 40;
        if (at > 160) at = 160;
        for (int k = 0; k < 200; k++) y[k] = pt(k < at ? 1 : 1.05, reps);
        int n = history_change_detect(y, 200, sh, 16, &err);
        if (n == 1 && abs(sh[0].index - at) <= 1) hits++;
        if (n == 1 && sh[0].index == at) exact++;
        for (int k = 0; k < 200; k++) y[k] = pt(1, reps);
        fa += history_change_detect(y, 200, sh, 16, &err);
    }
    printf(
        "detector, %s: shift found within one run in %d of %d series (%d exactly), %d false shifts over %d "
        "flat series\n",
        reps == 1 ? "2 % noise on each run's point" : "each point the median of 5 samples of 2 % noise", hits,
        series, exact, fa, series);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: history_bench RUN_DIR\n");
        return 2;
    }
    struct history_run r;
    struct fr_err err = {{0}};
    if (history_folder_read_run(argv[1], &r, &err) != 0) {
        fprintf(stderr, "history_bench: %s\n", err.msg);
        return 2;
    }
    printf("history_bench: run %s: %s, %d threads, %s; SQLite %s; times in ms (CLOCK_MONOTONIC)\n", argv[1],
           r.machine.cpu, r.machine.threads, r.machine.isa, sqlite3_libversion());
    char tmp[] = "/tmp/fr-history-bench-XXXXXX", store[64];
    if (!mkdtemp(tmp) || make_copies(argv[1], tmp, &r) != 0) {
        fprintf(stderr, "history_bench: cannot write copies of %s\n", argv[1]);
        return 1;
    }
    snprintf(store, sizeof store, "%s/history.sqlite", tmp);
    struct history_store *s;
    struct history_open_opts o = {.write = true};
    if (history_open(store, &o, &s, &err) != 0) {
        fprintf(stderr, "history_bench: %s\n", err.msg);
        return 1;
    }
    double t[COPIES], cpu[COPIES];
    struct history_append_result res = {0};
    for (int c = 0; c < COPIES; c++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/run%02d", tmp, c);
        double t0 = now_s(), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
        if (history_append_run(s, dir, NULL, &res, &err) != 0) {
            fprintf(stderr, "history_bench: %s\n", err.msg);
            return 1;
        }
        t[c] = now_s() - t0;
        cpu[c] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
    }
    char what[128];
    snprintf(what, sizeof what, "append one run (%d rows, %d samples)", res.rows, res.samples);
    report(what, t, COPIES, 50);
    report("  of which CPU time (parse, stats, inserts)", cpu, COPIES, 50);
    history_close(s);
    if (grow(store, &err) != 0) {
        fprintf(stderr, "history_bench: %s\n", err.msg);
        return 1;
    }
    if (history_open(store, &o, &s, &err) != 0) return 1;
    char key[128]; /* the first step row, kept past history_folder_free_run */
    snprintf(key, sizeof key, "%s", r.rows[0].key);
    double q[7];
    int n_points = 0;
    for (int k = 0; k < 7; k++) {
        double t0 = now_s();
        struct history_series *sr;
        int n;
        if (history_read_series(s, key, NULL, &sr, &n, &err) != 0) return 1;
        double *v = malloc(sizeof *v * (size_t)sr[0].n);
        for (int i = 0; i < sr[0].n; i++) v[i] = sr[0].points[i].value;
        struct history_shift sh[64];
        history_change_detect(v, sr[0].n, sh, 64, &err);
        n_points = sr[0].n;
        free(v);
        history_free_series(sr, n);
        q[k] = now_s() - t0;
    }
    snprintf(what, sizeof what, "read and search %s (%d runs)", key, n_points);
    report(what, q, 7, 200);
    history_close(s);
    history_folder_free_run(&r);
    rates(5);
    rates(1);
    printf("store left in %s (time the CLI: forge-roofline history show %s --history %s)\n", tmp, key, store);
    return 0;
}
