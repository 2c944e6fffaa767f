/* Where --model NAME and the gnuplot scripts are found: the order of the places (unit, on a fake executable
 * path), the first match winning, and end to end from temporary folders: the build tree's binary run from
 * elsewhere, an installed layout (PREFIX/bin + PREFIX/share/forge-roofline), and the one-line error that
 * lists every place looked in. */
#include <criterion/criterion.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/report/report_write.h"
#include "model/datadir.h"
#include "tests/cli_run.h"
#include "tests/report_testutil.h"

static struct cli_result r;

static void write_file(const char *path, const char *text) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    cr_assert_eq(system(cmd), 0);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0);
}

static void sh(const char *fmt, const char *a, const char *b) {
    char cmd[4096];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* The -O3 binary as an absolute path, so a test can chdir away from the checkout. */
static void fast_bin_abs(char *out) {
    const char *bin = getenv("FORGE_ROOFLINE_FAST_BIN");
    cr_assert_not_null(realpath(bin ? bin : "build/forge-roofline", out), "no build/forge-roofline");
    setenv("FORGE_ROOFLINE_FAST_BIN", out, 1);
}

Test(datadir, places_in_order) {
    unsetenv("FORGE_ROOFLINE_MODELS");
    struct datadir_places p;
    datadir_places_of("model", "FORGE_ROOFLINE_MODELS", "/opt/fr/bin/forge-roofline", &p);
    cr_assert_eq(p.n, 3);
    cr_expect_str_eq(p.dir[0], "model");
    cr_expect_str_eq(p.dir[1], "/opt/fr/model");
    cr_expect_str_eq(p.dir[2], "/opt/fr/share/forge-roofline/model");
    char list[4096];
    datadir_list_places(&p, list, sizeof list);
    cr_expect_str_eq(list, "./model, /opt/fr/model, /opt/fr/share/forge-roofline/model");

    setenv("FORGE_ROOFLINE_MODELS", "/data/models", 1);
    datadir_places_of("scripts", "FORGE_ROOFLINE_MODELS", "/bin/forge-roofline", &p);
    cr_assert_eq(p.n, 4);
    cr_expect_str_eq(p.dir[0], "/data/models");
    cr_expect_str_eq(p.dir[1], "scripts");
    cr_expect_str_eq(p.dir[2], "/scripts");
    cr_expect_str_eq(p.dir[3], "/share/forge-roofline/scripts");
    datadir_list_places(&p, list, sizeof list);
    cr_expect(tu_starts(list, "$FORGE_ROOFLINE_MODELS (/data/models), ./scripts, "), "%s", list);
    unsetenv("FORGE_ROOFLINE_MODELS");

    datadir_places_of("model", NULL, "forge-roofline", &p); /* no folder in the path: only ./model */
    cr_expect_eq(p.n, 1);
}

Test(datadir, first_place_holding_the_entry_wins) {
    char tmp[256], exe[512], path[2048];
    tu_tmpdir(tmp, sizeof tmp);
    cr_assert_eq(chdir(tmp), 0);
    snprintf(exe, sizeof exe, "%s/tree/build/forge-roofline", tmp);
    write_file("tree/model/m/config.json", "{}");
    write_file("tree/share/forge-roofline/model/m/config.json", "{}");
    write_file("tree/share/forge-roofline/model/only-installed/config.json", "{}");
    struct datadir_places p;
    datadir_places_of("model", NULL, exe, &p);
    cr_expect_eq(datadir_find_file(&p, "m/config.json", path, sizeof path), 1); /* build tree */
    cr_expect(strstr(path, "/tree/model/m/config.json") != NULL, "%s", path);
    cr_expect_eq(datadir_find_file(&p, "only-installed/config.json", path, sizeof path), 2);
    write_file("model/m/config.json", "{}");
    cr_expect_eq(datadir_find_file(&p, "m/config.json", path, sizeof path), 0); /* ./model first */
    cr_expect_str_eq(path, "model/m/config.json");
    cr_expect_eq(datadir_find_file(&p, "none/config.json", path, sizeof path), -1);
    cr_expect_str_eq(path, "");
    cr_expect_eq(datadir_find_dir(&p, path, sizeof path), 0);
    sh("rm -rf '%s'%s", tmp, "");
}

Test(datadir, model_found_from_any_folder, .timeout = 60) {
    char bin[PATH_MAX], repo[PATH_MAX], tmp[256];
    fast_bin_abs(bin);
    cr_assert_not_null(getcwd(repo, sizeof repo));
    tu_tmpdir(tmp, sizeof tmp);
    cr_assert_eq(chdir(tmp), 0);
    unsetenv("FORGE_ROOFLINE_MODELS");

    /* the build tree's binary, run from an empty folder: the checkout's model/ beside build/ */
    cli_run(&r, 1, "predict --model qwen3-0.6b --context 1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "config %s/model/qwen3-0.6b/config.json ·", repo);
    cr_expect(strstr(r.out, want) != NULL, "%.300s", r.out);

    /* ./model comes first: a copy here, with another name, is the one read */
    sh("mkdir -p model/qwen3-0.6b && cp '%s/model/qwen3-0.6b/config.json' model/qwen3-0.6b/%s", repo, "");
    cli_run(&r, 1, "predict --model qwen3-0.6b --context 1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "config model/qwen3-0.6b/config.json ·") != NULL, "%.300s", r.out);
    sh("rm -rf model%s%s", "", "");

    /* an install: PREFIX/bin/forge-roofline finds PREFIX/share/forge-roofline/model */
    sh("mkdir -p prefix/bin prefix/share/forge-roofline/model/qwen3-0.6b && cp '%s' prefix/bin/%s", bin, "");
    sh("cp '%s/model/qwen3-0.6b/config.json' prefix/share/forge-roofline/model/qwen3-0.6b/%s", repo, "");
    char installed[PATH_MAX];
    snprintf(installed, sizeof installed, "%s/prefix/bin/forge-roofline", tmp);
    setenv("FORGE_ROOFLINE_FAST_BIN", installed, 1);
    cr_assert_eq(chdir("prefix/bin"), 0); /* neither here nor in prefix/ is there a model/ folder */
    cli_run(&r, 1, "predict --model qwen3-0.6b --context 1");
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(want, sizeof want, "config %s/prefix/share/forge-roofline/model/qwen3-0.6b/config.json ·", tmp);
    cr_expect(strstr(r.out, want) != NULL, "%.300s", r.out);

    /* nowhere: one line naming every place looked in, exit 2 */
    static const char *const bad[] = {"predict --model qwen3-9z"};
    cli_expect_usage_errors(1, bad, 1);
    cli_run(&r, 1, "predict --model qwen3-9z");
    snprintf(want, sizeof want,
             "forge-roofline: unknown model 'qwen3-9z': no qwen3-9z/config.json in ./model, %s/prefix/model, "
             "%s/prefix/share/forge-roofline/model (try 'forge-roofline list')\n",
             tmp, tmp);
    cr_expect_str_eq(r.err, want);
    cr_assert_eq(chdir(repo), 0);
    sh("rm -rf '%s'%s", tmp, "");
}

Test(datadir, scripts_found_in_the_current_folder_first) {
    char repo[PATH_MAX], tmp[256], run[512];
    cr_assert_not_null(getcwd(repo, sizeof repo));
    unsetenv("FORGE_ROOFLINE_SCRIPTS");
    tu_tmpdir(tmp, sizeof tmp);
    cr_assert_eq(chdir(tmp), 0);
    snprintf(run, sizeof run, "%s/run", tmp);
    sh("mkdir -p '%s'%s", run, "");
    /* the test binary is build/tests/unit: its build/scripts does not exist, and neither does ./scripts */
    struct fr_err err = {{0}};
    cr_expect_eq(report_plots_draw(run, &err), REPORT_PLOTS_FAILED);
    cr_expect(tu_starts(err.msg, "cannot find plots.sh in ./scripts, "), "%s", err.msg);
    cr_expect(strstr(err.msg, "/share/forge-roofline/scripts") != NULL, "%s", err.msg);
    /* a plots.sh in ./scripts is the one run */
    write_file("scripts/plots.sh", "#!/bin/sh\necho here > \"$1/ran-local-plots\"\n");
    sh("chmod +x scripts/plots.sh%s%s", "", "");
    cr_expect_eq(report_plots_draw(run, &err), REPORT_PLOTS_DRAWN, "%s", err.msg);
    cr_expect(tu_exists(run, "ran-local-plots"));
    cr_assert_eq(chdir(repo), 0);
    sh("rm -rf '%s'%s", tmp, "");
}
