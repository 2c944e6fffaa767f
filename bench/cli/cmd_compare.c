/* forge-roofline compare RUN_A RUN_B [--out DIR] [--force] [--threshold PCT] [--raw] [--fail-on-slower]:
 * pairs the rows of two runs, decides each on the raw repetitions of both sides (every run's samples.csv,
 * bench/report/compare_verdict.h), writes compare.md, compare_verdicts.csv and the plots, and prints
 * compare.md. Runs of a different model, dtype, thread count or CPU are refused (exit 2) unless --force.
 * Either side may be several runs of the same build, comma-separated (A1,A2 B1,B2). With --fail-on-slower
 * the exit status is 1 when a headline row is slower (the CI gate). Checked end to end in
 * tests/test_report_compare.c. */
#include "bench/cli/cli.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/report/compare.h"
#include "bench/report/compare_pool.h"
#include "bench/report/compare_verdict.h"
#include "bench/report/report_json.h"
#include "bench/report/report_plots.h"

static void usage(FILE *f) {
    fputs(
        "usage: forge-roofline compare RUN_A RUN_B [--out DIR] [--force] [--threshold PCT] [--raw]\n"
        "                                [--fail-on-slower]\n"
        "  RUN_A, RUN_B      results folders (or their run.json); A is the baseline, ratios are B/A.\n"
        "                    A side may be several runs of one build, comma-separated (A1,A2 B1,B2): every\n"
        "                    repetition of every run (samples.csv) is pooled; a run without samples.csv\n"
        "                    counts its medians, one sample per row (said in compare.md)\n"
        "  --out DIR         where compare.md, compare_verdicts.csv and compare.png/.svg go\n"
        "                    (default: compare-<A>-vs-<B> beside RUN_B)\n"
        "  --force           compare runs of a different model, dtype, thread count or CPU anyway\n"
        "  --threshold PCT   a real difference below PCT %% is \"no change\" (default 2)\n"
        "  --raw             decide memory-bound rows on the raw ratio, not the one normalised by the\n"
        "                    read measured next to each repetition\n"
        "  --fail-on-slower  exit 1 when a headline row (decode steps, sampler at V = 151,936) is slower\n"
        "                    beyond the threshold, 0 otherwise (2 on bad input)\n"
        "  --history STORE   append the compare to this store (default: history.sqlite beside it)\n"
        "  --no-history      do not append it\n",
        f);
}

/* The folder name of a run path (the first of a comma-separated list) and the folder holding it, without a
 * trailing /run.json. */
static void run_split(const char *path, char *base, size_t base_len, char *parent, size_t parent_len) {
    char buf[1024], copy[1024];
    snprintf(buf, sizeof buf, "%s", path);
    buf[strcspn(buf, ",")] = '\0'; /* a pooled side is named after its first run */
    size_t n = strlen(buf);
    while (n > 1 && buf[n - 1] == '/') buf[--n] = '\0';
    if (n >= 9 && strcmp(buf + n - 9, "/run.json") == 0) buf[n - 9] = '\0';
    memcpy(copy, buf, sizeof copy);
    snprintf(base, base_len, "%s", basename(buf));
    snprintf(parent, parent_len, "%s", dirname(copy));
}

/* Reads one side: a run, or comma-separated runs of one build pooled into one. Sets *n to the count. */
static int read_side(const char *list, const char *side, struct run_report *out, struct compare_side *cs,
                     int *n) {
    char buf[4096];
    if ((size_t)snprintf(buf, sizeof buf, "%s", list) >= sizeof buf)
        return cli_usage_error("compare: run list of %s is too long", side);
    struct run_report *runs[COMPARE_MAX_POOLED] = {0};
    struct fr_err err = {{0}};
    int rc = CLI_EXIT_OK, k = 0;
    char *save = NULL;
    for (char *path = strtok_r(buf, ",", &save); path; path = strtok_r(NULL, ",", &save)) {
        if (k == COMPARE_MAX_POOLED) {
            rc = cli_usage_error("compare: more than %d runs for %s", COMPARE_MAX_POOLED, side);
            goto done;
        }
        if (!(runs[k] = malloc(sizeof *runs[k]))) {
            rc = cli_fail("compare: out of memory");
            goto done;
        }
        if (report_json_read(path, runs[k++], &err) != 0 ||
            compare_side_add(cs, path, runs[k - 1], &err) != 0) {
            rc = cli_usage_error("compare: %s", err.msg);
            goto done;
        }
    }
    if (k == 0) {
        rc = cli_usage_error("compare: no run given for %s", side);
        goto done;
    }
    if (compare_pool_runs(runs, k, out, &err) != 0) {
        rc = cli_usage_error("compare: %s: %s", side, err.msg);
        goto done;
    }
    *n = k;
done:
    for (int i = 0; i < k; i++) free(runs[i]);
    return rc;
}

int cmd_compare(int argc, char **argv) {
    const char *runs[2] = {NULL, NULL}, *out = NULL, *history = NULL;
    int n_runs = 0;
    bool force = false, fail_on_slower = false, no_history = false;
    struct compare_opts copts = {COMPARE_THRESHOLD_DEFAULT, false};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(a, "--force") == 0) {
            force = true;
        } else if (strcmp(a, "--no-history") == 0) {
            no_history = true;
        } else if (strcmp(a, "--history") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0]) return cli_usage_error("compare: --history needs a store");
            history = argv[++i];
        } else if (strcmp(a, "--raw") == 0) {
            copts.raw = true;
        } else if (strcmp(a, "--fail-on-slower") == 0) {
            fail_on_slower = true;
        } else if (strcmp(a, "--threshold") == 0) {
            double pct;
            if (i + 1 >= argc || cli_parse_double(argv[i + 1], &pct) != 0 || pct < 0 || pct > 50)
                return cli_usage_error("compare: --threshold needs a percentage in [0, 50], got '%s'",
                                       i + 1 < argc ? argv[i + 1] : "");
            copts.threshold = pct / 100;
            i++;
        } else if (strcmp(a, "--out") == 0) {
            if (i + 1 >= argc || !argv[i + 1][0]) return cli_usage_error("compare: --out needs a folder");
            out = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_usage_error("compare: unknown option '%s' (try compare --help)", a);
        } else if (n_runs < 2) {
            runs[n_runs++] = a;
        } else {
            return cli_usage_error("compare: more than two runs given ('%s')", a);
        }
    }
    if (n_runs != 2)
        return cli_usage_error("compare: needs two runs: compare RUN_A RUN_B [--out DIR] [--force]");
    if (history && no_history) return cli_usage_error("compare: --history and --no-history: choose one");

    struct run_report *ra = malloc(sizeof *ra), *rb = malloc(sizeof *rb);
    if (!ra || !rb) {
        free(ra);
        free(rb);
        return cli_fail("compare: out of memory");
    }
    int rc = CLI_EXIT_OK, n_a = 0, n_b = 0;
    struct fr_err err = {{0}}, mismatch = {{0}};
    struct compare_side sa = {0}, sb = {0};
    struct compare_verdicts *v = malloc(sizeof *v);
    if (!v) {
        rc = cli_fail("compare: out of memory");
        goto done;
    }
    if ((rc = read_side(runs[0], "A", ra, &sa, &n_a)) != CLI_EXIT_OK ||
        (rc = read_side(runs[1], "B", rb, &sb, &n_b)) != CLI_EXIT_OK)
        goto done;
    if (compare_check(ra, rb, &mismatch) != 0) {
        if (!force) {
            rc = cli_usage_error("compare: %s (use --force to compare anyway)", mismatch.msg);
            goto done;
        }
        fprintf(stderr, "forge-roofline: warning: %s; comparing anyway (--force)\n", mismatch.msg);
    }
    char out_buf[2048];
    if (!out) {
        char base_a[256], base_b[256], parent[1024], unused[1024];
        run_split(runs[0], base_a, sizeof base_a, unused, sizeof unused);
        run_split(runs[1], base_b, sizeof base_b, parent, sizeof parent);
        snprintf(out_buf, sizeof out_buf, "%s/compare-%s-vs-%s", parent, base_a, base_b);
        out = out_buf;
    }
    struct stat st;
    if (stat(out, &st) == 0 && !S_ISDIR(st.st_mode)) {
        rc = cli_usage_error("compare: --out '%s' is not a folder", out);
        goto done;
    }
    const char *why = mismatch.msg[0] ? mismatch.msg + strlen("runs are not comparable: ") : NULL;
    if (compare_verdicts_compute(ra, &sa, &sb, &copts, v, &err) != 0) {
        rc = cli_fail("compare: %s", err.msg);
        goto done;
    }
    if (compare_write(ra, rb, runs[0], runs[1], n_a, n_b, why, v, out, &err) != 0 ||
        compare_verdicts_csv_write(v, out, &err) != 0) {
        rc = cli_fail("compare: %s", err.msg);
        goto done;
    }
    int plots = report_plots_draw_mode("--compare", out, &err);
    if (plots == REPORT_PLOTS_NO_GNUPLOT)
        fprintf(stderr, "forge-roofline: warning: %s; compare.md written\n", err.msg);
    else if (plots == REPORT_PLOTS_FAILED)
        rc = cli_fail("compare: %s", err.msg);

    char md[2100];
    snprintf(md, sizeof md, "%s/compare.md", out);
    FILE *f = fopen(md, "r");
    if (f) {
        char buf[4096];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, got, stdout);
        fclose(f);
    }
    fprintf(stderr, "forge-roofline: compare written to %s\n", out);
    int slower = compare_verdicts_slower_headlines(v);
    if (fail_on_slower && rc == CLI_EXIT_OK && slower > 0) {
        fprintf(stderr,
                "forge-roofline: compare: %d headline row%s slower beyond %.1f %% (--fail-on-slower)\n",
                slower, slower == 1 ? "" : "s", 100 * copts.threshold);
        rc = CLI_EXIT_FAIL;
    }
    if (rc == CLI_EXIT_OK && !no_history) rc = cli_history_append(history, out, true);
done:
    compare_side_free(&sa);
    compare_side_free(&sb);
    free(v);
    free(ra);
    free(rb);
    return rc;
}
