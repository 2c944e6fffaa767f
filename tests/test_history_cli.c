/* forge-roofline history end to end (the ASan/UBSan binary): eight runs imported (four from before
 * samples.csv existed, four with it) with a 10 % slowdown between the fourth and fifth; list, show in every
 * format with the shift and its commit range, export, plot, a compare appended, and bad input refused. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/cli_run.h"
#include "tests/history_fixture.h"
#include "tests/report_testutil.h"
#include "tests/test_note.h"

static struct cli_result r;
static char tmp[256], store[300];

static void setup_runs(void) {
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(store, sizeof store, "%s/store.sqlite", tmp);
    static const double slow[8] = {1.0, 1.002, 0.998, 1.001, 1.10, 1.102, 1.098, 1.101};
    for (int i = 0; i < 8; i++) {
        char name[16], utc[32], commit[16];
        snprintf(name, sizeof name, "run%d", i);
        snprintf(utc, sizeof utc, "2026110%dT120000Z", i + 1);
        snprintf(commit, sizeof commit, "c%d", i);
        hf_write_run(tmp, name, slow[i], utc, commit, i >= 4);
    }
    char args[4096];
    snprintf(args, sizeof args,
             "history import --history %s %s/run0 %s/run1 %s/run2 %s/run3 %s/run4 %s/run5 "
             "%s/run6 %s/run7",
             store, tmp, tmp, tmp, tmp, tmp, tmp, tmp, tmp);
    cli_run(&r, 0, args);
    cr_assert_eq(r.status, 0, "import failed: %s", r.err);
    cr_expect(strstr(r.out, "8 appended, 0 already there, 0 failed"), "%s", r.out);
    cr_expect(strstr(r.out, "/run0: run 1, machine "), "%s", r.out);
    cr_expect(strstr(r.out, "no samples.csv: the rows' medians only"), "%s", r.out);
    cr_expect(strstr(r.out, "with its raw samples"), "%s", r.out);
}

static void run_cmd(const char *fmt, int want_status) {
    char args[2048];
    snprintf(args, sizeof args, fmt, store);
    cli_run(&r, 0, args);
    cr_assert_eq(r.status, want_status, "'%s': status %d, stderr %s", args, r.status, r.err);
}

Test(history_cli, import_list_show_export, .timeout = 120) {
    setup_runs();
    run_cmd("history list --history %s --format csv", 0);
    cr_expect_eq(tu_count_lines(r.out), 9, "%s", r.out);
    run_cmd("history list --history %s --model nope", 0);
    cr_expect(strstr(r.out, "no runs in the store match"));
    run_cmd("history list --history %s --since 2026-11-05 --format json", 0);
    cJSON *j = cJSON_Parse(r.out);
    cr_assert_not_null(j, "%s", r.out);
    cr_expect_eq(cJSON_GetArraySize(j), 4, "--since 2026-11-05 keeps runs 5 to 8");
    cJSON_Delete(j);

    run_cmd("history show step@1024 --history %s", 0);
    cr_expect(strstr(r.out, "## step@1024: machine "), "%s", r.out);
    cr_expect(strstr(r.out, "raw: shift of +10."), "%s", r.out); /* 10.5: the samples are 0.5 % above */
    cr_expect(strstr(r.out, "between commit c3 (run 4, 20261104T120000Z) and c4"), "%s", r.out);
    run_cmd("history show step@1024 --history %s --format json", 0);
    j = cJSON_Parse(r.out);
    cr_assert_not_null(j, "%s", r.out);
    cJSON *s0 = cJSON_GetArrayItem(j, 0);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(s0, "points")), 8);
    cJSON *shifts = cJSON_GetObjectItem(s0, "shifts");
    cr_assert_eq(cJSON_GetArraySize(shifts), 1, "%s", r.out);
    cJSON *sh = cJSON_GetArrayItem(shifts, 0);
    cr_expect_eq(cJSON_GetObjectItem(sh, "index")->valueint, 4);
    cr_expect_str_eq(cJSON_GetObjectItem(sh, "commit_before")->valuestring, "c3");
    cr_expect_str_eq(cJSON_GetObjectItem(sh, "commit_after")->valuestring, "c4");
    cJSON_Delete(j);
    run_cmd("history show block:attention@1024 --history %s --format csv", 0);
    cr_expect_eq(tu_count_lines(r.out), 9, "%s", r.out);
    cr_expect(tu_starts(r.out, "row,machine,model,options,unit,run,"));

    run_cmd("history export --format csv --history %s", 0);
    int lines = tu_count_lines(r.out);
    cr_expect(lines > 8 * 20, "%d lines", lines);
    /* each run's line holds its samples: longer than the runner keeps of stdout */
    char args[2048];
    snprintf(args, sizeof args, "history export --format jsonl --history %s > %s/export.jsonl", store, tmp);
    cli_run(&r, 0, args);
    cr_expect_eq(r.status, 0, "%s", r.err);
    char *text = tu_slurp(tmp, "export.jsonl");
    cr_expect_eq(tu_count_lines(text), 8);
    free(text);

    /* a compare is appended to the store it is told */
    snprintf(args, sizeof args, "compare %s/run0 %s/run7 --out %s/cmp --history %s", tmp, tmp, tmp, store);
    cli_run(&r, 1, args);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "history: compare appended to"), "%s", r.err);
    snprintf(args, sizeof args, "history export --format jsonl --history %s > %s/export.jsonl", store, tmp);
    cli_run(&r, 0, args);
    text = tu_slurp(tmp, "export.jsonl");
    const char *cmp = text ? strstr(text, "\n{\"type\":\"compare\"") : NULL;
    cr_expect(cmp, "no compare exported");
    /* its rows are compare_verdicts.csv's: row keys, ratios and verdict words */
    cr_expect(cmp && strstr(cmp, "\"section\":\"verdicts\",\"row\":\"step@1024\",\"ratio\":"), "%s", cmp);
    free(text);
    /* the same folders again: already there */
    snprintf(args, sizeof args, "history import --history %s %s/run0 %s/cmp", store, tmp, tmp);
    cli_run(&r, 0, args);
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "0 appended, 2 already there"), "%s", r.out);
    tu_rm_tree(tmp);
}

Test(history_cli, plot, .timeout = 120) {
    setup_runs();
    char args[2048];
    snprintf(args, sizeof args, "history plot step@1024 --history %s --out %s/plot", store, tmp);
    cli_run(&r, 0, args);
    char plot[400];
    snprintf(plot, sizeof plot, "%s/plot", tmp);
    cr_expect(tu_exists(plot, "history.dat") && tu_exists(plot, "history_vars.gp"));
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        cr_expect_eq(r.status, 1);
        cr_expect(strstr(r.err, "gnuplot is not installed"), "%s", r.err);
        test_note("history_cli: gnuplot missing: the history plot's images left out (data files checked)");
    } else {
        cr_expect_eq(r.status, 0, "%s", r.err);
        char *png = tu_slurp(plot, "history.png");
        cr_expect(png && memcmp(png, "\x89PNG", 4) == 0, "history.png is not a PNG");
        free(png);
        cr_expect(tu_exists(plot, "history.svg"));
    }
    char *vars = tu_slurp(plot, "history_vars.gp");
    cr_expect(vars && strstr(vars, "n_shifts = 1"), "%s", vars);
    free(vars);
    tu_rm_tree(tmp);
}

Test(history_cli, bad_input) {
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(store, sizeof store, "%s/none.sqlite", tmp);
    const char *cmds[] = {
        "history",
        "history frobnicate",
        "history show",
        "history show nonsense",
        "history list --format xml",
        "history export",
        "history export --format md",
        "history import",
        "history list --history /nonexistent/h.sqlite",
        "history plot step@1 --format csv",
        "history list --out x",
        "history export --format csv --since 2026",
        "--model tests/fixtures/tiny-qwen3 --history a.sqlite --no-history",
        "compare a b --history x --no-history",
    };
    cli_expect_usage_errors(0, cmds, sizeof cmds / sizeof cmds[0]);
    /* a store that is not a database: one line, exit 1 */
    char junk[400], args[1024];
    snprintf(junk, sizeof junk, "%s/junk.sqlite", tmp);
    FILE *f = fopen(junk, "w");
    for (int i = 0; i < 200; i++) fputs("not a database at all ", f);
    fclose(f);
    hf_write_run(tmp, "run", 1.0, "20261101T000000Z", "c0", false);
    snprintf(args, sizeof args, "history import --history %s %s/run", junk, tmp);
    cli_run(&r, 0, args);
    cr_expect_eq(r.status, 1, "%s", r.err);
    cr_expect(strstr(r.err, "not a database") && tu_count_lines(r.err) == 1, "%s", r.err);
    /* a folder that is not a run: said, and the import fails */
    snprintf(args, sizeof args, "history import --history %s/ok.sqlite %s", tmp, tmp);
    cli_run(&r, 0, args);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect(strstr(r.err, "run.json"), "%s", r.err);
    tu_rm_tree(tmp);
}
