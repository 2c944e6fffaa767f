/* compare: run.json reads back what the writer wrote, rows pair by identity, B/A is right, the gate's exit
 * codes (--fail-on-slower: 1 when a headline row is slower, 0 otherwise, 2 on bad input), and the CLI refuses
 * non-comparable runs (exit 2) unless --force, and malformed input. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>

#include "bench/report/compare.h"
#include "bench/report/report_json.h"
#include "bench/report/report_write.h"
#include "kernels/sampler.h"
#include "roofline/samples.h"
#include "tests/report_fixture.h"
#include "tests/cli_run.h"
#include "tests/report_testutil.h"
#include "tests/test_note.h"

/* Runs the sanitized CLI's compare; the result (status, stdout, stderr) lands in *res. */
static int run_cli(struct cli_result *res, const char *args) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "compare %s", args);
    cli_run(res, 0, cmd);
    return res->status;
}

Test(compare, round_trip_reads_what_was_written) {
    struct run_report *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    report_fixture_fill(a, 1.0);
    a->blocks[BLOCK_ROPE].measured.median_s = NAN;
    char *text = report_json_string(a);
    struct fr_err err = {{0}};
    cr_assert_eq(report_json_parse(text, strlen(text), "mem", b, &err), 0, "%s", err.msg);
    free(text);
    cr_expect_str_eq(b->model.name, "qwen3-0.6b");
    cr_expect_eq(b->model.params, 596049920.0);
    cr_expect_str_eq(b->prov.cpu_model, a->prov.cpu_model);
    cr_expect_eq(b->prov.threads, 2);
    cr_expect_eq(b->n_blocks, BLOCK_COUNT);
    cr_expect_eq(b->n_steps, 5);
    cr_expect_eq(b->n_sampler, 24);
    cr_expect_eq(b->n_ceilings, 7);
    cr_expect(isnan(b->ceilings[6].value));
    cr_expect_str_eq(b->ceilings[6].why, "no L3 cache on this machine");
    cr_expect_eq(b->ceilings[4].kind, REPORT_CEILING_COMPUTE);
    cr_expect_eq(b->blocks[BLOCK_LM_HEAD].id, BLOCK_LM_HEAD);
    cr_expect_eq(b->blocks[BLOCK_LM_HEAD].measured.median_s, a->blocks[BLOCK_LM_HEAD].measured.median_s);
    cr_expect_eq(b->blocks[BLOCK_LM_HEAD].bytes, a->blocks[BLOCK_LM_HEAD].bytes);
    cr_expect(isnan(b->blocks[BLOCK_ROPE].measured.median_s), "null reads back as NaN");
    cr_expect_eq(b->steps[3].context, 4096);
    cr_expect_eq(b->steps[3].block_s[BLOCK_ATTENTION], a->steps[3].block_s[BLOCK_ATTENTION]);
    cr_expect_eq(b->sampler[0].nucleus, -1);
    cr_expect_eq(b->sampler[23].nucleus, a->sampler[23].nucleus);
    cr_expect_eq(b->counters.n_events, 2);
    free(a);
    free(b);
}

/* The disturbed rule and the switched repetitions (added after run.json files existed) read back, and a run
 * written without them reads as "" and 0. */
Test(compare, disturbed_rule_and_switched_reps_round_trip) {
    struct run_report *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    report_fixture_fill(a, 1.0);
    snprintf(a->counters.disturbed_rule, sizeof a->counters.disturbed_rule, "a thread preempted or migrated");
    a->blocks[BLOCK_ATTENTION].switched_reps = 7;
    a->steps[1].switched_reps = 3;
    char *text = report_json_string(a);
    struct fr_err err = {{0}};
    cr_assert_eq(report_json_parse(text, strlen(text), "mem", b, &err), 0, "%s", err.msg);
    free(text);
    cr_expect_str_eq(b->counters.disturbed_rule, "a thread preempted or migrated");
    cr_expect_eq(b->blocks[BLOCK_ATTENTION].switched_reps, 7);
    cr_expect_eq(b->steps[1].switched_reps, 3);
    a->counters.disturbed_rule[0] = '\0';
    text = report_json_string(a);
    cr_expect(strstr(text, "disturbed_rule") == NULL, "an empty rule is not written");
    cr_assert_eq(report_json_parse(text, strlen(text), "mem", b, &err), 0, "%s", err.msg);
    cr_expect_str_eq(b->counters.disturbed_rule, "");
    free(text);
    free(a);
    free(b);
}

Test(compare, malformed_input_is_one_line, .timeout = 30) {
    struct run_report *r = calloc(1, sizeof *r);
    struct fr_err err = {{0}};
    static const char *const bad[] = {
        "{",
        "[]",
        "{\"schema\": \"other/1\"}",
        "{\"schema\": \"forge-roofline/1\"}",
        "{\"schema\": \"forge-roofline/1\", \"provenance\": 3}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = '\0';
        cr_expect_neq(report_json_parse(bad[i], strlen(bad[i]), "x.json", r, &err), 0, "accepted: %s",
                      bad[i]);
        cr_expect(strlen(err.msg) > 0 && strchr(err.msg, '\n') == NULL, "message: %s", err.msg);
    }
    /* A valid run with one wrong type. */
    struct run_report *a = calloc(1, sizeof *a);
    report_fixture_fill(a, 1.0);
    char *text = report_json_string(a);
    cJSON *root = cJSON_Parse(text);
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "blocks"), 2), "measured_s",
                              cJSON_CreateString("fast"));
    char *broken = cJSON_Print(root);
    cr_expect_neq(report_json_parse(broken, strlen(broken), "x.json", r, &err), 0);
    cr_expect(strstr(err.msg, "measured_s") != NULL, "%s", err.msg);
    cJSON_free(broken);
    cJSON_Delete(root);
    /* two rows of one context would pair with the wrong row of the other run */
    root = cJSON_Parse(text);
    cJSON *steps = cJSON_GetObjectItem(root, "steps");
    cJSON_AddItemToArray(steps, cJSON_Duplicate(cJSON_GetArrayItem(steps, 0), 1));
    broken = cJSON_Print(root);
    cr_expect_neq(report_json_parse(broken, strlen(broken), "x.json", r, &err), 0);
    cr_expect(strstr(err.msg, "two rows of one context") != NULL, "%s", err.msg);
    cJSON_free(broken);
    cJSON_Delete(root);
    free(text);
    cr_expect_neq(report_json_read("/nonexistent/run", r, &err), 0);
    /* a run folder whose run.json is a FIFO is refused at once, not waited on for a writer */
    char dir[256], fifo[300];
    tu_tmpdir(dir, sizeof dir);
    snprintf(fifo, sizeof fifo, "%s/run.json", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_expect_neq(report_json_read(dir, r, &err), 0);
    cr_expect(strstr(err.msg, "not a regular file") != NULL, "%s", err.msg);
    tu_rm_flat(dir);
    free(a);
    free(r);
}

Test(compare, check_lists_every_difference) {
    struct run_report *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    report_fixture_fill(a, 1.0);
    report_fixture_fill(b, 1.0);
    struct fr_err err = {{0}};
    cr_expect_eq(compare_check(a, b, &err), 0);
    b->prov.threads = 4;
    snprintf(b->prov.dtype, sizeof b->prov.dtype, "f32");
    cr_expect_neq(compare_check(a, b, &err), 0);
    cr_expect(strstr(err.msg, "threads 2 vs 4") && strstr(err.msg, "dtype bf16 vs f32"), "%s", err.msg);
    snprintf(b->model.name, sizeof b->model.name, "other");
    snprintf(b->prov.cpu_model, sizeof b->prov.cpu_model, "Other CPU");
    cr_expect_neq(compare_check(a, b, &err), 0);
    cr_expect(strstr(err.msg, "model qwen3-0.6b vs other") && strstr(err.msg, "CPU"), "%s", err.msg);
    /* a mix shares its dtype (the commonest type) with the uniform run: the mix tells them apart */
    report_fixture_fill(b, 1.0);
    snprintf(a->prov.dtype, sizeof a->prov.dtype, "q4_k"),
        snprintf(b->prov.dtype, sizeof b->prov.dtype, "q4_k");
    snprintf(b->prov.weights_conversion, sizeof b->prov.weights_conversion,
             "llama.cpp's q4_k_m mix (q4_k 168, q6_k 29)");
    cr_expect_neq(compare_check(a, b, &err), 0);
    cr_expect(strstr(err.msg, "weights 'as named' vs 'llama.cpp's q4_k_m mix"), "%s", err.msg);
    free(a);
    free(b);
}

static void tweak_b(struct run_report *r) {
    /* lm_head 20 % slower with a spread that overlaps nothing; attention within the noise. */
    struct timing_stats *t = &r->blocks[BLOCK_LM_HEAD].measured;
    t->median_s *= 1.2 / 0.9, t->min_s *= 1.2 / 0.9, t->max_s *= 1.2 / 0.9;
    r->blocks[BLOCK_ATTENTION].measured.median_s /= 0.9 * 0.99;
    r->blocks[BLOCK_ATTENTION].measured.min_s /= 0.9;
    r->blocks[BLOCK_ATTENTION].measured.max_s /= 0.9;
    r->n_steps = 4;                /* context 16384 only in A */
    r->prov.damon_on = true;       /* B ran with a kdamond on, A without */
    r->prov.core_speed_low = 0.77; /* and with one core's arithmetic slow */
    snprintf(r->prov.read_kernel, sizeof r->prov.read_kernel, "avx2 without software prefetch");
}

static void tweak_threads(struct run_report *r) {
    r->prov.threads = 1;
}

/* A fresh folder holding run a (the fixture) and run b (scaled by slow_b, then tweaked). */
static void two_runs(char *dir, size_t len, double slow_b, void (*tweak)(struct run_report *)) {
    tu_tmpdir(dir, len);
    report_fixture_write_run(dir, "a", 1.0, NULL);
    report_fixture_write_run(dir, "b", slow_b, tweak);
}

Test(compare, cli_writes_ratios_and_spread, .timeout = 120) {
    char dir[256];
    two_runs(dir, sizeof dir, 0.9, tweak_b);
    char args[1024];
    snprintf(args, sizeof args, "%s/a %s/b/run.json --out %s/cmp", dir, dir, dir);
    static struct cli_result res;
    cr_assert_eq(run_cli(&res, args), 0, "%s", res.err);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/cmp", dir);
    char *md = tu_slurp(sub, "compare.md");
    cr_assert_not_null(md);
    cr_expect(strstr(md, "| qkv_proj | 14170.8 | 12753.7 | 0.900 | inconclusive |") != NULL, "%s", md);
    cr_expect(strstr(md, "| lm_head | 17344.8 | 20813.7 | 1.200 | inconclusive |") != NULL, "%s", md);
    cr_expect(strstr(md, "> **Fallback:** 1 of A's and 1 of B's runs have no samples.csv") != NULL, "%s", md);
    cr_expect(tu_exists(sub, "compare_verdicts.csv") && tu_exists(sub, "compare_forest.dat"));
    cr_expect(strstr(md, "Only in A: step at context 16384.") != NULL);
    cr_expect(strstr(md, "| topp_fast | flat | 151936 |") != NULL);
    cr_expect(strstr(md, "> **Note:** B ran with DAMON on and A without: DAMON monitors") != NULL, "%s", md);
    cr_expect(strstr(md, ", DAMON on, core speed moved (the slowest probe at 77 % of the fastest)\n") != NULL,
              "B's run line says so, through its run.json: %s", md);
    cr_expect(strstr(md, "> **Note:** a run marked \"core speed moved\" had a core whose arithmetic ran slow "
                         "at some probe") != NULL,
              "%s", md);
    cr_expect(strstr(md, "> **Note:** the runs read DRAM with different kernels (A: avx512, B: avx2 without "
                         "software prefetch;") != NULL,
              "%s", md);
    cr_expect(strcmp(res.out, md) == 0, "compare.md is printed to stdout");
    free(md);
    if (system("command -v gnuplot >/dev/null 2>&1") == 0) {
        cr_expect(tu_exists(sub, "compare.png") && tu_exists(sub, "compare.svg"));
        char *png = tu_slurp(sub, "compare.png");
        cr_expect(png && memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0, "compare.png is a PNG");
        free(png);
    } else {
        test_note("report_compare: gnuplot is not installed: compare image checks left out");
    }
    tu_rm_flat(dir);
}

Test(compare, cli_refuses_other_threads_without_force, .timeout = 120) {
    char dir[256];
    two_runs(dir, sizeof dir, 1.0, tweak_threads);
    char args[1024];
    snprintf(args, sizeof args, "%s/a %s/b --out %s/cmp", dir, dir, dir);
    static struct cli_result res;
    cr_expect_eq(run_cli(&res, args), 2);
    cr_expect(strstr(res.err, "threads 2 vs 1") && strstr(res.err, "--force"), "%s", res.err);
    cr_expect_eq(tu_count_lines(res.err), 1, "one-line message: %s", res.err);
    char sub[300];
    snprintf(sub, sizeof sub, "%s/cmp", dir);
    cr_expect_not(tu_exists(sub, "compare.md"));

    snprintf(args, sizeof args, "%s/a %s/b --out %s/cmp --force", dir, dir, dir);
    cr_expect_eq(run_cli(&res, args), 0, "%s", res.err);
    char *md = tu_slurp(sub, "compare.md");
    cr_expect(md && strstr(md, "compared with --force although threads 2 vs 1"), "%s", md);
    free(md);
    tu_rm_flat(dir);
}

Test(compare, cli_bad_input_exits_2) {
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    report_fixture_write_run(dir, "a", 1.0, NULL);
    char bad[300];
    snprintf(bad, sizeof bad, "%s/bad", dir);
    cr_assert_eq(mkdir(bad, 0777), 0);
    FILE *f = fopen(strcat(bad, "/run.json"), "w");
    fputs("{\"schema\": \"forge-roofline/1\", \"blocks\": [", f);
    fclose(f);
    char args[1024];
    snprintf(args, sizeof args, "%s/a %s/bad", dir, dir);
    static struct cli_result res;
    cr_expect_eq(run_cli(&res, args), 2);
    cr_expect(strstr(res.err, "not valid JSON") && tu_count_lines(res.err) == 1, "%s", res.err);
    snprintf(args, sizeof args, "%s/a %s/missing", dir, dir);
    cr_expect_eq(run_cli(&res, args), 2);
    snprintf(args, sizeof args, "%s/a", dir);
    cr_expect_eq(run_cli(&res, args), 2);
    snprintf(args, sizeof args, "%s/a %s/a --bogus", dir, dir);
    cr_expect_eq(run_cli(&res, args), 2);
    /* --out naming a file is bad input, not a failed write */
    snprintf(args, sizeof args, "%s/a %s/a --out %s/a/run.json", dir, dir, dir);
    cr_expect_eq(run_cli(&res, args), 2, "%s", res.err);
    cr_expect(strstr(res.err, "not a folder") && tu_count_lines(res.err) == 1, "%s", res.err);
    cr_expect_eq(run_cli(&res, "--help"), 0);
    tu_rm_flat(dir);
}

/* samples.csv for a fixture run: 12 repetitions of every step, times median x scale x (1 + 1 % noise). */
static void write_samples(const char *parent, const char *name, double scale, uint64_t seed) {
    struct run_report *r = calloc(1, sizeof *r);
    report_fixture_fill(r, 1.0);
    struct sample_set set = {0};
    uint64_t ctr = 0;
    for (int i = 0; i < r->n_steps; i++) {
        samples_begin_row(&set, 0, 2, "step@%ld", r->steps[i].context);
        for (int k = 0; k < 12; k++) {
            double u = sampler_uniform(seed, ctr++) - 0.5;
            samples_append(&set, k, r->steps[i].measured.median_s * scale * (1 + 0.02 * u), NAN, false, k);
            set.s[set.n - 1].paired_read_gbs = 20 * (1 + 0.01 * (sampler_uniform(seed, ctr++) - 0.5));
        }
    }
    char path[1100];
    snprintf(path, sizeof path, "%s/%s/samples.csv", parent, name);
    struct fr_err err = {{0}};
    cr_assert_eq(samples_write_csv(&set, path, &err), 0, "%s", err.msg);
    samples_free(&set);
    free(r);
}

Test(compare, fail_on_slower_gates_on_headline_rows, .timeout = 120) {
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    /* four runs a side (the run is the unit of the verdict), 12 repetitions of each step in each */
    static const char *const sides[] = {"a", "same", "slow"};
    static const double scale[] = {1.0, 1.0, 1.05};
    static char list[3][1024];
    for (int s = 0; s < 3; s++) {
        list[s][0] = '\0';
        for (int k = 0; k < 4; k++) {
            char name[32];
            snprintf(name, sizeof name, "%s%d", sides[s], k);
            report_fixture_write_run(dir, name, 1.0, NULL);
            write_samples(dir, name, scale[s], 11 + (uint64_t)(10 * s + k));
            size_t used = strlen(list[s]);
            snprintf(list[s] + used, sizeof list[s] - used, "%s%s/%s", k ? "," : "", dir, name);
        }
    }
    static char args[4096];
    static struct cli_result res;
    snprintf(args, sizeof args, "%s %s --out %s/c1 --fail-on-slower", list[0], list[2], dir);
    cr_expect_eq(run_cli(&res, args), 1, "5 %% slower steps fail the gate: %s", res.err);
    cr_expect(strstr(res.err, "headline rows slower beyond 2.0 % (--fail-on-slower)"), "%s", res.err);
    cr_expect(strstr(res.out, "| **step@1024** | 48 | 48 |") && strstr(res.out, "**slower**"), "%s", res.out);
    snprintf(args, sizeof args, "%s %s --out %s/c2 --fail-on-slower --threshold 10", list[0], list[2], dir);
    cr_expect_eq(run_cli(&res, args), 0, "below a 10 %% threshold it is not slower: %s", res.out);
    snprintf(args, sizeof args, "%s %s --out %s/c3 --fail-on-slower", list[2], list[0], dir);
    cr_expect_eq(run_cli(&res, args), 0, "faster passes: %s", res.err);
    cr_expect(strstr(res.out, "**faster**"), "%s", res.out);
    snprintf(args, sizeof args, "%s %s --out %s/c4 --fail-on-slower", list[0], list[1], dir);
    cr_expect_eq(run_cli(&res, args), 0, "A against A passes: %s", res.err);
    snprintf(args, sizeof args, "%s/a0 %s/slow0 --out %s/c6 --fail-on-slower", dir, dir, dir);
    cr_expect_eq(run_cli(&res, args), 0, "one run a side decides no slowdown: %s", res.out);
    snprintf(args, sizeof args, "%s %s --out %s/c5 --fail-on-slower --threshold 60", list[0], list[2], dir);
    cr_expect_eq(run_cli(&res, args), 2, "a threshold out of range is bad input");
    cr_expect_eq(tu_count_lines(res.err), 1, "%s", res.err);
    snprintf(args, sizeof args, "%s/a0 %s/nothing --fail-on-slower", dir, dir);
    cr_expect_eq(run_cli(&res, args), 2, "a missing run is bad input, not a pass");
    char sub[300];
    snprintf(sub, sizeof sub, "%s/c1", dir);
    char *csv = tu_slurp(sub, "compare_verdicts.csv");
    cr_expect(
        csv &&
            tu_starts(csv, "key,headline,n_a,n_b,ratio,lo,hi,p_adj,verdict,more_runs,beta,p,p_runs,run_pairs,"
                           "p_pair_t,p_pair_wsr,lockstep\nstep@1,1,48,48,"),
        "%s", csv);
    free(csv);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}
