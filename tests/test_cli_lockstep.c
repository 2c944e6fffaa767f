/* `forge-roofline lockstep` (bench/cli/cmd_lockstep.c) and the run's --lockstep and --repetitions
 * (bench/cli/cmd_run.c): malformed command lines exit 2 with one line before anything runs; and end to end,
 * two quick runs of the tiny config in lockstep with --repetitions 4 both succeed, say in run.json that they
 * took turns (the same count on both sides), and their samples.csv hold exactly 4 repetitions of the step
 * and of a block whose start times interleave A, B, A, B: each side's repetition ran between two of the
 * other's. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/samples.h"
#include "tests/cli_run.h"
#include "tests/report_testutil.h"

static struct cli_result r;

Test(cli_lockstep, malformed_driver_command_lines_are_refused_in_one_line, .timeout = 60) {
    const char *const cmds[] = {
        "lockstep",
        "lockstep build/forge-roofline --model tests/fixtures/tiny-qwen3",
        "lockstep build/forge-roofline ::: build/forge-roofline ::: build/forge-roofline",
        "lockstep ::: build/forge-roofline --model tests/fixtures/tiny-qwen3",
        "lockstep build/forge-roofline --model tests/fixtures/tiny-qwen3 :::",
        "lockstep --bogus build/forge-roofline ::: build/forge-roofline",
        "lockstep build/forge-roofline --lockstep 3,first ::: build/forge-roofline",
        "lockstep build/forge-roofline ::: build/forge-roofline --lockstep=4,second",
    };
    cli_expect_usage_errors(1, cmds, sizeof cmds / sizeof cmds[0]);
}

/* A run given --lockstep by hand (without the lock its driver hands over), a bad value or a descriptor
 * that is no socket, and bad --repetitions: all refused before anything is measured. */
Test(cli_lockstep, run_options_are_refused_in_one_line, .timeout = 60) {
    unsetenv("FORGE_ROOFLINE_LOCK_FD");
    const char *const alone[] = {
        "--model qwen3-0.6b --lockstep 3,first",
        "--model qwen3-0.6b --repetitions 0",
        "--model qwen3-0.6b --repetitions x",
        "--model qwen3-0.6b --repetitions 10001",
    };
    cli_expect_usage_errors(1, alone, sizeof alone / sizeof alone[0]);
    cli_run(&r, 1, "--model qwen3-0.6b --lockstep 3,first");
    cr_expect(strstr(r.err, "FORGE_ROOFLINE_LOCK_FD"), "%s", r.err);
    setenv("FORGE_ROOFLINE_LOCK_FD", "999", 1);
    const char *const handed[] = {
        "--model tests/fixtures/tiny-qwen3 --context 1 --lockstep x",
        "--model tests/fixtures/tiny-qwen3 --context 1 --lockstep 999,first",
    };
    cli_expect_usage_errors(1, handed, sizeof handed / sizeof handed[0]);
    cli_run(&r, 1, "--model tests/fixtures/tiny-qwen3 --context 1 --lockstep 999,first");
    cr_expect(strstr(r.err, "--lockstep: descriptor 999 is not a connected stream socket"), "%s", r.err);
    unsetenv("FORGE_ROOFLINE_LOCK_FD");
}

/* The run's provenance.lockstep text and the turns it counts; its samples. */
static long read_side(const char *parent, const char *role, struct sample_set *set) {
    char dir[512], path[600];
    cli_find_run(parent, dir, sizeof dir);
    char *text = tu_slurp(dir, "run.json");
    cr_assert(text, "no run.json in %s", dir);
    cJSON *j = cJSON_Parse(text);
    cr_assert(j, "run.json is not JSON");
    const cJSON *ls = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "provenance"), "lockstep");
    cr_assert(cJSON_IsString(ls), "%s: provenance has no lockstep", dir);
    char want[64];
    snprintf(want, sizeof want, "the %s of two runs taking turns", role);
    cr_expect(strstr(ls->valuestring, want), "%s: lockstep '%s'", dir, ls->valuestring);
    cr_expect_not(strstr(ls->valuestring, "alone"), "%s: lockstep '%s'", dir, ls->valuestring);
    const char *t = strstr(ls->valuestring, "(--lockstep); ");
    long turns = -1;
    cr_expect(t && sscanf(t, "(--lockstep); %ld turns", &turns) == 1, "'%s'", ls->valuestring);
    cJSON_Delete(j);
    free(text);
    struct fr_err err = {{0}};
    snprintf(path, sizeof path, "%s/" SAMPLES_FILE, dir);
    cr_assert_eq(samples_read_csv(path, set, &err), 0, "%s", err.msg);
    return turns;
}

/* Exactly 4 samples of row on each side, their start times strictly interleaved A, B, A, B, ... */
static void expect_alternating(const struct sample_set *a, const struct sample_set *b, const char *row) {
    int ia[8], ib[8];
    cr_assert_eq(samples_find_row(a, row, ia, 8), 4, "A's %s", row);
    cr_assert_eq(samples_find_row(b, row, ib, 8), 4, "B's %s", row);
    for (int k = 0; k < 4; k++) {
        long long ta = a->s[ia[k]].mono_ns, tb = b->s[ib[k]].mono_ns;
        cr_expect_lt(ta, tb, "%s: A's repetition %d did not start before B's", row, k);
        if (k + 1 < 4)
            cr_expect_lt(tb, a->s[ia[k + 1]].mono_ns, "%s: B's repetition %d did not start before A's next",
                         row, k);
    }
}

Test(cli_lockstep, two_quick_runs_take_turns_end_to_end, .timeout = 480) {
    char tmp[512], out_a[600], out_b[600], lock[600];
    tu_tmpdir(tmp, sizeof tmp);
    snprintf(out_a, sizeof out_a, "%s/a", tmp);
    snprintf(out_b, sizeof out_b, "%s/b", tmp);
    snprintf(lock, sizeof lock, "%s/machine.lock", tmp);
    setenv("FORGE_ROOFLINE_LOCK", lock, 1);
    unsetenv("FORGE_ROOFLINE_LOCK_FD");
    /* the driver sanitized, both sides the -O3 build (the sides' lockstep code runs in the unit tests) */
    const char *bin = getenv("FORGE_ROOFLINE_FAST_BIN");
    if (!bin) bin = "build/forge-roofline";
    const char *opts =
        "--model tests/fixtures/tiny-qwen3 --quick --test-sizes --batch none --context 1 --no-plots "
        "--no-history --repetitions 4";
    char args[2048];
    snprintf(args, sizeof args, "lockstep %s %s --out %s ::: %s %s --out %s", bin, opts, out_a, bin, opts,
             out_b);
    cli_run(&r, 0, args);
    cr_assert_eq(r.status, 0, "lockstep failed (%d): %s", r.status, r.err);
    struct sample_set a = {0}, b = {0};
    long turns_a = read_side(out_a, "first", &a), turns_b = read_side(out_b, "second", &b);
    cr_expect_gt(turns_a, 8, "A counted %ld turns", turns_a);
    cr_expect_eq(turns_a, turns_b, "A counted %ld turns, B %ld", turns_a, turns_b);
    expect_alternating(&a, &b, "step@1");
    expect_alternating(&a, &b, "block:lm_head@1");
    samples_free(&a);
    samples_free(&b);
    unsetenv("FORGE_ROOFLINE_LOCK");
    tu_rm_tree(tmp);
}
