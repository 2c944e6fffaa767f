/* Plots: a full write of a hand-filled run draws every PNG and SVG of the contract (skipped, and said,
 * when gnuplot is absent), and a missing gnuplot is told apart from a failure. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <unistd.h>

#include "bench/report/report_write.h"
#include "tests/report_fixture.h"
#include "tests/report_testutil.h"
#include "tests/test_note.h"

static bool have_gnuplot(void) {
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

static void expect_png(const char *dir, const char *name) {
    static const unsigned char magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", name);
    unsigned char head[8] = {0};
    size_t got = fread(head, 1, sizeof head, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    cr_expect(got == 8 && memcmp(head, magic, 8) == 0, "%s is not a PNG", name);
    cr_expect_gt(size, 10000, "%s is suspiciously small (%ld bytes)", name, size);
}

static void expect_svg(const char *dir, const char *name) {
    char *s = tu_slurp(dir, name);
    cr_assert_not_null(s, "%s missing", name);
    cr_expect(strstr(s, "<svg") != NULL, "%s is not an SVG", name);
    free(s);
}

Test(report_plots, full_write_draws_every_plot, .timeout = 120) {
    struct run_report *r = calloc(1, sizeof *r);
    report_fixture_fill(r, 1.0);
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    enum report_plots_result plots;
    struct fr_err err = {{0}}, perr = {{0}};
    int rc = report_write_run(r, dir, &plots, &perr, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    static const char *const data[] = {"run.json",    "blocks.csv",   "steps.csv",
                                       "sampler.csv", "ceilings.csv", "report.md"};
    for (size_t i = 0; i < sizeof data / sizeof data[0]; i++)
        cr_expect(tu_exists(dir, data[i]), "%s missing", data[i]);
    if (!have_gnuplot()) {
        cr_expect_eq(plots, REPORT_PLOTS_NO_GNUPLOT);
        test_note("report_plots: image checks left out: gnuplot is not installed (%s)", perr.msg);
    } else {
        cr_assert_eq(plots, REPORT_PLOTS_DRAWN, "%s", perr.msg);
        static const char *const names[] = {"roofline", "breakdown", "sampler", "context"};
        for (size_t i = 0; i < 4; i++) {
            char png[64], svg[64];
            snprintf(png, sizeof png, "%s.png", names[i]);
            snprintf(svg, sizeof svg, "%s.svg", names[i]);
            expect_png(dir, png);
            expect_svg(dir, svg);
        }
        char *md = tu_slurp(dir, "report.md");
        cr_expect(strstr(md, "![roofline](roofline.png)") != NULL);
        free(md);
    }
    tu_rm_flat(dir);
    free(r);
}

/* Sparse input: no steps, no sampler rows, no ceilings, nothing measured. Plots must still draw. */
Test(report_plots, empty_run_still_draws, .timeout = 120) {
    if (!have_gnuplot()) {
        cr_skip_test("gnuplot is not installed");
    }
    struct run_report *r = calloc(1, sizeof *r);
    report_init(r);
    snprintf(r->model.name, sizeof r->model.name, "qwen3-0.6b");
    r->n_blocks = BLOCK_COUNT;
    for (int i = 0; i < BLOCK_COUNT; i++) {
        r->blocks[i].id = (enum block_id)i;
        snprintf(r->blocks[i].name, sizeof r->blocks[i].name, "%s", block_name((enum block_id)i));
    }
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    enum report_plots_result plots;
    struct fr_err err = {{0}}, perr = {{0}};
    cr_assert_eq(report_write_run(r, dir, &plots, &perr, &err), 0, "%s", err.msg);
    cr_expect_eq(plots, REPORT_PLOTS_DRAWN, "%s", perr.msg);
    tu_rm_flat(dir);
    free(r);
}

Test(report_plots, missing_gnuplot_is_not_a_failure) {
    struct run_report *r = calloc(1, sizeof *r);
    report_fixture_fill(r, 1.0);
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    setenv("GNUPLOT", "/nonexistent/gnuplot", 1); /* plots.sh honours $GNUPLOT */
    enum report_plots_result plots;
    struct fr_err err = {{0}}, perr = {{0}};
    cr_assert_eq(report_write_run(r, dir, &plots, &perr, &err), 0, "%s", err.msg);
    cr_expect_eq(plots, REPORT_PLOTS_NO_GNUPLOT);
    cr_expect(strstr(perr.msg, "gnuplot is not installed") != NULL, "%s", perr.msg);
    cr_expect(tu_exists(dir, "run.json") && tu_exists(dir, "report.md"));
    cr_expect_not(tu_exists(dir, "roofline.png"));
    char *md = tu_slurp(dir, "report.md");
    cr_expect(strstr(md, "Plots were not drawn: gnuplot is not installed") != NULL);
    free(md);
    unsetenv("GNUPLOT");
    tu_rm_flat(dir);
    free(r);
}

Test(report_plots, failures_are_reported) {
    struct fr_err err = {{0}};
    cr_expect_eq(report_plots_draw("/nonexistent/forge-roofline-run", &err), REPORT_PLOTS_FAILED);
    cr_expect(strstr(err.msg, "is not a folder") != NULL, "%s", err.msg);
    char dir[256];
    tu_tmpdir(dir, sizeof dir); /* a folder without the run's files */
    if (have_gnuplot()) {
        cr_expect_eq(report_plots_draw(dir, &err), REPORT_PLOTS_FAILED);
        cr_expect(strstr(err.msg, "plot_vars.gp is missing") != NULL, "%s", err.msg);
    }
    setenv("FORGE_ROOFLINE_SCRIPTS", dir, 1);
    cr_expect_eq(report_plots_draw(dir, &err), REPORT_PLOTS_FAILED);
    cr_expect(strstr(err.msg, "has no plots.sh") != NULL, "%s", err.msg);
    unsetenv("FORGE_ROOFLINE_SCRIPTS");
    tu_rm_flat(dir);
}
