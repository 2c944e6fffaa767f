/* compare on synthetic runs (tests/report_fixture.h): rows whose context, model, dtype, ISA or thread count
 * differ are shown "not comparable" with no ratio and no verdict; the medians' B/A sits beside each row's
 * verdict (decided on samples: tests/test_compare_verdict.c); several runs of a side pool into medians of
 * medians; runs without samples.csv fall back to their medians and compare.md says so. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "bench/report/compare.h"
#include "bench/report/compare_pool.h"
#include "bench/report/report_json.h"
#include "tests/cli_run.h"
#include "tests/report_fixture.h"
#include "tests/report_testutil.h"

static struct run_report *fixture(double slow, double read_gbs) {
    struct run_report *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    report_fixture_fill(r, slow);
    for (int i = 0; i < r->n_steps; i++) r->steps[i].paired_read_gbs = read_gbs;
    return r;
}

/* compare.md for a and b written into a fresh folder; caller frees the text. */
static char *compare_md(const struct run_report *a, const struct run_report *b, char *dir, size_t len) {
    tu_tmpdir(dir, len);
    struct fr_err err = {{0}};
    cr_assert_eq(compare_write(a, b, "a", "b", 1, 1, NULL, NULL, dir, &err), 0, "%s", err.msg);
    char *md = tu_slurp(dir, "compare.md");
    cr_assert_not_null(md);
    return md;
}

Test(compare_rows, other_block_context_is_not_comparable) {
    struct run_report *a = fixture(1.0, NAN), *b = fixture(0.5, NAN);
    b->blocks_context = 256; /* a quick run's blocks against a full run's: twice as fast, and meaningless */
    char dir[256];
    char *md = compare_md(a, b, dir, sizeof dir);
    cr_expect(
        strstr(md, "| attention | 10047.5 | 5023.7 | — | not comparable (context 1024 vs 256) | — | — |\n"),
        "%s", md);
    cr_expect(strstr(md, "| 1024 | 81.9 | 41.0 | 0.500 | n/a: no samples | 12.21 | 24.42 | n/a | — |\n"),
              "the steps (paired by context) still get their ratio: %s", md);
    struct report_findings f;
    compare_findings_compute(a, b, NULL, &f);
    cr_expect_str_eq(f.line[4], "**Not comparable, no verdict:** 15 rows: blocks (context 1024 vs 256).");
    cr_expect_str_eq(f.line[0],
                     "Headline (B/A of the time, below 1: B faster, 95 % interval): no headline row "
                     "has samples on both sides.");
    free(md);
    tu_rm_flat(dir);
    free(a);
    free(b);
}

Test(compare_rows, threads_isa_dtype_model_make_rows_not_comparable) {
    struct run_report *a = fixture(1.0, NAN), *b = fixture(1.0, NAN);
    snprintf(b->prov.dtype, sizeof b->prov.dtype, "f32");
    snprintf(b->model.name, sizeof b->model.name, "qwen3-1.7b");
    char dir[256];
    char *md = compare_md(a, b, dir, sizeof dir);
    /* weights and model change the blocks and steps, not the sampler */
    cr_expect(strstr(md,
                     "| lm_head | 17344.8 | 17344.8 | — | not comparable (model qwen3-0.6b vs qwen3-1.7b; "
                     "dtype bf16 vs f32) | — | — |"),
              "%s", md);
    cr_expect(strstr(md, "| 1 | 74.6 | 74.6 | — | not comparable (model"), "%s", md);
    cr_expect(strstr(md, "| topp_fast | flat | 151936 | 303.9 | 303.9 | 1.000 | n/a: no samples | n/a | — |"),
              "%s", md);
    free(md);
    tu_rm_flat(dir);
    snprintf(b->prov.isa, sizeof b->prov.isa, "avx2"); /* the ISA changes every row; unknown is not "avx2" */
    a->prov.isa[0] = '\0';
    md = compare_md(a, b, dir, sizeof dir);
    cr_expect(strstr(md, "| greedy | flat | 1024 | 0.4 | 0.4 | — | not comparable (ISA unknown vs avx2) |"),
              "%s", md);
    free(md);
    tu_rm_flat(dir);
    snprintf(a->prov.isa, sizeof a->prov.isa, "avx2");
    b->prov.threads = 1; /* threads change every row */
    md = compare_md(a, b, dir, sizeof dir);
    cr_expect(
        strstr(md, "| topp_fast | flat | 151936 | 303.9 | 303.9 | — | not comparable (threads 2 vs 1) |"),
        "%s", md);
    cr_expect(strstr(md, "n/a: no samples") == NULL && strstr(md, "**faster") == NULL,
              "no verdict anywhere: %s", md);
    struct report_findings f;
    compare_findings_compute(a, b, NULL, &f);
    cr_expect_str_eq(f.line[3],
                     "No change (within 2.0 %): 0 of the 0 rows decided on samples; inconclusive: 0.");
    free(md);
    tu_rm_flat(dir);
    free(a);
    free(b);
}

Test(compare_rows, pooled_runs_median_of_medians_widest_spread) {
    struct run_report *runs[3] = {fixture(1.0, 20.0), fixture(1.1, 18.0), fixture(3.0, 5.0)};
    runs[2]->sampler[0].measured.noisy = true;
    runs[0]->steps[1].measured.excluded_reps = 1, runs[2]->steps[1].measured.excluded_reps = 1;
    static const double block_read[3] = {30.0, 29.0, 10.0};
    for (int i = 0; i < 3; i++) runs[i]->blocks[BLOCK_LM_HEAD].paired_read_gbs = block_read[i];
    struct run_report *out = calloc(1, sizeof *out);
    struct fr_err err = {{0}};
    cr_assert_eq(compare_pool_runs(runs, 3, out, &err), 0, "%s", err.msg);
    const struct timing_stats *t = &out->blocks[BLOCK_LM_HEAD].measured,
                              *t0 = &runs[0]->blocks[BLOCK_LM_HEAD].measured;
    cr_expect_float_eq(t->median_s, t0->median_s * 1.1, 1e-15); /* the middle run's */
    cr_expect_float_eq(t->min_s, t0->min_s, 1e-15);             /* the fastest run's min */
    cr_expect_float_eq(t->max_s, t0->max_s * 3.0, 1e-15);       /* the slowest run's max */
    cr_expect_eq(t->reps, 60);
    cr_expect_eq(out->steps[1].measured.excluded_reps, 2);
    cr_expect_float_eq(out->steps[2].paired_read_gbs, 18.0, 1e-12);
    cr_expect_float_eq(out->blocks[BLOCK_LM_HEAD].paired_read_gbs, 29.0, 1e-12); /* a block's own read too */
    cr_expect_float_eq(out->steps[2].tokens_per_s, runs[1]->steps[2].tokens_per_s, 1e-9);
    cr_expect(out->sampler[0].measured.noisy && !out->sampler[1].measured.noisy);
    /* two runs: the mean of the two medians */
    cr_assert_eq(compare_pool_runs(runs, 2, out, &err), 0, "%s", err.msg);
    cr_expect_float_eq(out->steps[0].measured.median_s, runs[0]->steps[0].measured.median_s * 1.05, 1e-12);
    /* a run of another set-up or block context is refused, in one line */
    runs[1]->blocks_context = 256;
    cr_expect_neq(compare_pool_runs(runs, 2, out, &err), 0);
    cr_expect_str_eq(err.msg, "run 2 of a side timed its blocks at context 256, its first run at 1024");
    runs[1]->prov.threads = 1;
    cr_expect_neq(compare_pool_runs(runs, 2, out, &err), 0);
    cr_expect(strstr(err.msg, "threads 2 vs 1") != NULL, "%s", err.msg);
    for (int i = 0; i < 3; i++) free(runs[i]);
    free(out);
}

static void paired_read_20(struct run_report *r) {
    for (int i = 0; i < r->n_steps; i++) r->steps[i].paired_read_gbs = 20.0;
}

Test(compare_rows, cli_pools_comma_separated_runs, .timeout = 120) {
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    report_fixture_write_run(dir, "a1", 1.0, paired_read_20);
    report_fixture_write_run(dir, "a2", 1.2, paired_read_20);
    report_fixture_write_run(dir, "b1", 0.8, paired_read_20);
    report_fixture_write_run(dir, "b2", 0.8, paired_read_20);
    char args[2048];
    snprintf(args, sizeof args, "compare %s/a1,%s/a2 %s/b1,%s/b2 --out %s/cmp", dir, dir, dir, dir, dir);
    static struct cli_result res;
    cli_run(&res, 0, args);
    cr_assert_eq(res.status, 0, "%s", res.err);
    cr_expect(tu_starts(res.out, "# forge-roofline compare\n\n## Findings\n\n- Headline"), "%s", res.out);
    cr_expect(strstr(res.out, "> **Fallback:** 2 of A's and 2 of B's runs have no samples.csv"), "%s",
              res.out);
    cr_expect(strstr(res.out, "/a2`: qwen3-0.6b") && strstr(res.out, "Z (2 runs pooled)\n- **B**"), "%s",
              res.out);
    /* pooled A = 1.1 x the fixture, pooled B = 0.8 x: B/A 0.727 */
    cr_expect(strstr(res.out, "| qkv_proj | 15587.9 | 11336.6 | 0.727 | inconclusive | 0.727 | raw |"),
              "two medians a side cannot reach a 95 %% interval: %s", res.out);
    snprintf(args, sizeof args, "compare %s/a1,%s/missing %s/b1", dir, dir, dir);
    cli_run(&res, 0, args);
    cr_expect_eq(res.status, 2, "%s", res.err);
    cr_expect_eq(tu_count_lines(res.err), 1, "%s", res.err);
    tu_rm_flat(dir);
}
