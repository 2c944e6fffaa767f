/* `forge-roofline sample` options end to end: the defaults (temperature 0 needs no --top-p or --seed; at
 * temperature > 0 they default to decode's top-p 1 and seed 0, checked against sampler_pick with those
 * values), and every option that does not apply to the chosen mode refused with a one-line error (exit 2):
 * --bench generates its rows and seeds, so the file options are refused with it, and --no-sort without it.
 * The benchmark's greedy and softmax rows have no nucleus ("-"). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/sampler_rows.h"
#include "kernels/sampler.h"
#include "kernels/team.h"
#include "tests/cli_run.h"

static struct cli_result r;

enum { V = 3000, ROWS = 4 };

/* ROWS seeded rows of V logits in a temporary file; returns the rows (caller frees), the path in path. */
static float *write_rows(char *path, size_t len) {
    snprintf(path, len, "/tmp/fr-sample-opts-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    float *x = malloc(sizeof(float) * V * ROWS);
    cr_assert_not_null(x);
    for (int i = 0; i < ROWS; i++)
        sampler_rows_fill(x + (size_t)i * V, V, (enum sampler_row_kind)(i % 3), 900 + (uint64_t)i);
    cr_assert_eq(write(fd, x, sizeof(float) * V * ROWS), (ssize_t)(sizeof(float) * V * ROWS));
    close(fd);
    return x;
}

/* The tokens sampler_pick gives with these parameters, one per line, as the CLI prints them. */
static void expected_tokens(const float *x, const struct sampler_params *p, char *out, size_t len) {
    void *scratch = malloc(sampler_scratch_bytes(V));
    cr_assert_not_null(scratch);
    size_t off = 0;
    out[0] = '\0';
    for (int i = 0; i < ROWS; i++) {
        int tok = -1;
        cr_assert_eq(
            sampler_pick(x + (size_t)i * V, V, p, (uint64_t)i, scratch, kernel_team_procs(), &tok, NULL), 0);
        off += (size_t)snprintf(out + off, len - off, "%d\n", tok);
    }
    free(scratch);
}

/* Runs "sample --in ROWS --vocab V <opts>" on the sanitized CLI and expects sampler_pick's tokens with p. */
static void expect_cli_tokens(const char *opts, const struct sampler_params *p) {
    char path[64], args[256], want[256];
    float *x = write_rows(path, sizeof path);
    expected_tokens(x, p, want, sizeof want);
    snprintf(args, sizeof args, "sample --in %s --vocab %d %s", path, V, opts);
    cli_run(&r, 0, args);
    cr_expect_eq(r.status, 0, "%s: %s", args, r.err);
    cr_expect_str_eq(r.out, want, "%s", args);
    unlink(path);
    free(x);
}

Test(sample_options, temperature_0_needs_no_top_p_or_seed) {
    struct sampler_params greedy = {0.0f, 1.0f, 0};
    expect_cli_tokens("--temperature 0", &greedy);
    /* issue 9's command: a seed given at temperature 0 is accepted and changes nothing */
    expect_cli_tokens("--temperature 0 --seed 1", &greedy);
}

Test(sample_options, temperature_above_0_defaults_to_top_p_1_seed_0) {
    struct sampler_params dflt = {0.7f, 1.0f, 0};
    expect_cli_tokens("--temperature 0.7", &dflt);
    /* the defaults are not something else that draws the same tokens: another seed or top-p differs */
    char path[64], a[256], b[256], c[256];
    float *x = write_rows(path, sizeof path);
    struct sampler_params seed = {0.7f, 1.0f, 12345}, topp = {0.7f, 0.5f, 0};
    expected_tokens(x, &dflt, a, sizeof a);
    expected_tokens(x, &seed, b, sizeof b);
    expected_tokens(x, &topp, c, sizeof c);
    cr_expect_str_neq(a, b, "seeds 0 and 12345 draw the same tokens: the test cannot tell them apart");
    cr_expect_str_neq(a, c, "top-p 1 and 0.5 draw the same tokens: the test cannot tell them apart");
    unlink(path);
    free(x);
}

Test(sample_options, help_states_the_defaults) {
    cli_run(&r, 1, "sample --help");
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "default 1") != NULL && strstr(r.out, "and 0, as in decode") != NULL, "%s",
              r.out);
}

Test(sample_options, what_does_not_apply_is_refused) {
    const char *bad[] = {
        "sample --bench --in /dev/null",
        "sample --bench --seed 3",
        "sample --bench --input probs",
        "sample --bench --dtype bf16",
        "sample --bench --top-p-method sort",
        "sample --bench --probs-out /tmp/never-written.f32",
        "sample --in /dev/null --vocab 4 --temperature 0 --no-sort",
        "sample --in /dev/null --vocab 4", /* no --temperature: greedy or a draw is never a silent default */
    };
    cli_expect_usage_errors(1, bad, sizeof bad / sizeof bad[0]);
    cli_run(&r, 1, "sample --bench --seed 3");
    cr_expect(strstr(r.err, "--seed does not apply") != NULL, "%s", r.err);
    cli_run(&r, 1, "sample --in /dev/null --vocab 4 --temperature 0 --no-sort");
    cr_expect(strstr(r.err, "--no-sort applies only with --bench") != NULL, "%s", r.err);
    cr_expect_neq(access("/tmp/never-written.f32", F_OK), 0);
}

/* greedy and softmax apply no top-p: their nucleus is none ("-"), not the vocabulary */
Test(sample_options, bench_greedy_and_softmax_have_no_nucleus, .timeout = 60) {
    cli_run(&r, 1, "sample --bench --vocab 2000 --no-sort");
    cr_assert_eq(r.status, 0, "%s", r.err);
    int rows = 0;
    for (const char *line = strstr(r.out, "\n| "); line; line = strstr(line + 1, "\n| ")) {
        char variant[32], kind[32], nucleus[32];
        int vocab;
        if (sscanf(line, "\n| %31s | %31s | %d | %31s |", variant, kind, &vocab, nucleus) != 4) continue;
        rows++;
        if (strcmp(variant, "greedy") == 0 || strcmp(variant, "softmax") == 0)
            cr_expect_str_eq(nucleus, "-", "%s %s rows", variant, kind);
        else
            cr_expect(atoi(nucleus) >= 1 && atoi(nucleus) <= vocab, "%s %s: nucleus '%s'", variant, kind,
                      nucleus);
    }
    cr_expect_eq(rows, 10, "5 variants x 2 row kinds:\n%s", r.out);
}
