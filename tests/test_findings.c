/* The findings lines on the fixture run (tests/report_fixture.h): every number is checked against the value
 * worked out by hand from the fixture's construction (predicted = bytes / 19.5 GB/s, measured = predicted /
 * efficiency, step efficiency 0.82), so a change in what the lines compute fails here. Also: report.md opens
 * with them, the stdout summary ends with them, and flagged rows are named. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/report/findings.h"
#include "bench/report/report_roofs.h"
#include "bench/report/report_selfcheck.h"
#include "bench/report/report_write.h"
#include "roofline/rep_counts.h"
#include "tests/report_fixture.h"
#include "tests/report_testutil.h"

static struct run_report *fixture(void) {
    struct run_report *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    report_fixture_fill(r, 1.0);
    return r;
}

Test(findings, fixture_lines_exact) {
    struct run_report *r = fixture();
    struct report_findings f;
    report_findings_run(r, &f);
    cr_assert_eq(f.n, 9);
    /* tokens/s = 1 / (bytes / 19.5e9 / 0.82), bytes = 1192099840 + 114688 (T + 1) */
    cr_expect_str_eq(f.line[0],
                     "Decode: 13.4 tokens/s at context 1 (82 % of the memory roof), 13.1 at 256 (82 %), "
                     "12.2 at 1024 (82 %), 9.6 at 4096 (82 %), 5.2 at 16384 (82 %).");
    /* attention: 117555200 B / 19.5e9 = 6.03 ms roof, / 0.6 = 10.05 ms; lost 4.02 ms of the 81.90 ms step */
    cr_expect_str_eq(f.line[1],
                     "Lost against the roof #1: `attention` 4.02 ms per step (4.9 % of the step at "
                     "context 1024): 10.05 ms measured, 6.03 ms at its memory roof.");
    cr_expect_str_eq(f.line[2], "Lost against the roof #2: `qkv_proj` 2.13 ms per step (2.6 % of the step at "
                                "context 1024): 14.17 ms measured, 12.05 ms at its memory roof.");
    cr_expect_str_eq(f.line[3],
                     "Lost against the roof #3: `gate_up_proj` 2.01 ms per step (2.5 % of the step at "
                     "context 1024): 20.08 ms measured, 18.07 ms at its memory roof.");
    /* the step's observer time of the sampler is 1.05 x its block time, 1823232 B / 19.5e9 / 0.7; the slowest
     * variant a step can run is topp_fast (2e-9 s x 151936; topp_sort is a reference, not counted) */
    cr_expect_str_eq(
        f.line[4],
        "Sampler: 0.140 ms of the 81.90 ms step at context 1024 (0.2 %, in the step); the slowest fast "
        "variant at vocab 151936, topp_fast on peaked rows, takes 0.304 ms (0.4 %).");
    cr_expect_str_eq(f.line[5], "Accounting errors: none (no row measured faster than its roof).");
    /* every block's observer time is 1.05 x its time alone: 0.95x, inside the bands */
    cr_expect_str_eq(f.line[6],
                     "Self-check: the blocks timed alone sum to 80.07 ms, 0.98x the 81.90 ms step at "
                     "context 1024 (band ±15 %); each of the 6 blocks of at least 1 % of the step "
                     "is within ±25 % of its time inside the step.");
    cr_expect_str_eq(f.line[7],
                     "Noise: none of the 44 rows is noisy (every median's confidence interval within ±5 %).");
    cr_expect_str_eq(f.line[8],
                     "Disturbed repetitions: not detected, the counters are unavailable (no virtual "
                     "PMU (perf_event_open: ENOENT)).");
    free(r);
}

Test(findings, flagged_rows_are_named) {
    struct run_report *r = fixture();
    r->blocks[BLOCK_ROPE].efficiency = 1.3;
    r->steps[0].efficiency = 1.04;
    r->blocks[BLOCK_SWIGLU].measured.noisy = true;
    r->steps[3].measured.noisy = true;
    r->sampler[5].measured.noisy = true;
    r->steps[2].block_s[BLOCK_SAMPLER] = NAN; /* no observer time: the block timed alone, said so */
    r->steps[2].paired_efficiency = 0.9;
    r->blocks[BLOCK_LM_HEAD].measured.excluded_reps = 3; /* 20 kept */
    r->steps[1].measured.excluded_reps = 1;
    struct report_findings f;
    report_findings_run(r, &f);
    cr_assert_eq(f.n, 9);
    cr_expect(strstr(f.line[0], "12.2 at 1024 (82 %, 90 %)") != NULL, "%s", f.line[0]);
    cr_expect(strstr(f.line[0], "9.6 at 4096 (82 %, noisy)") != NULL, "%s", f.line[0]);
    cr_expect(
        strstr(f.line[4], "Sampler: 0.134 ms of the 81.90 ms step at context 1024 (0.2 %, timed alone)") ==
            f.line[4],
        "%s", f.line[4]);
    cr_expect_str_eq(f.line[5],
                     "**Accounting errors:** `rope` (130 %), step at context 1 (104 %) measured faster "
                     "than the roof allows: a byte or FLOP count or a ceiling is wrong there, not a "
                     "speed-up.");
    cr_expect_str_eq(f.line[7], "Noisy (median's confidence interval wider than ±5 %, or fewer than 3 "
                                "undisturbed repetitions), 3 of 44 rows: `swiglu`, step at "
                                "context 4096, greedy/flat/8192.");
    cr_expect_str_eq(f.line[8],
                     "Disturbed repetitions (a thread was switched out or migrated), left out of the "
                     "statistics: `lm_head` 3 of 23, step at context 256 1 of 21.");
    r->blocks[BLOCK_LM_HEAD].measured.excluded_reps = 0;
    r->steps[1].measured.excluded_reps = 0;
    r->counters.available = true;
    report_findings_run(r, &f);
    cr_expect_str_eq(f.line[8], "Disturbed repetitions: none (no thread was switched out or migrated).");
    /* a run that recorded its rule names it */
    snprintf(r->counters.disturbed_rule, sizeof r->counters.disturbed_rule, "a thread preempted or migrated");
    report_findings_run(r, &f);
    cr_expect_str_eq(f.line[8], "Disturbed repetitions: none (judged by: a thread preempted or migrated).");
    r->steps[1].measured.excluded_reps = 2;
    report_findings_run(r, &f);
    cr_expect_str_eq(f.line[8], "Disturbed repetitions (a thread preempted or migrated), left out of the "
                                "statistics: step at context 256 2 of 22.");
    free(r);
}

Test(findings, nothing_measured_still_says_so) {
    struct run_report *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    report_init(r);
    struct report_findings f;
    report_findings_run(r, &f);
    cr_assert_leq(f.n, REPORT_FINDINGS_MAX);
    cr_expect_str_eq(f.line[0], "Decode: no decode step was measured.");
    cr_expect_str_eq(f.line[1], "Time lost against the roofs: no block was measured slower than its roof.");
    free(r);
}

Test(findings, open_report_md_and_end_the_summary) {
    struct run_report *r = fixture();
    struct report_findings f;
    report_findings_run(r, &f);
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    struct fr_err err = {{0}};
    cr_assert_eq(report_write_markdown(r, dir, REPORT_PLOTS_NO_GNUPLOT, "gnuplot is not installed", &err), 0);
    char *md = tu_slurp(dir, "report.md");
    cr_assert_not_null(md);
    const char *nl = strchr(md, '\n'); /* after the title line: the findings, before anything else */
    cr_assert_not_null(nl);
    char want[REPORT_FINDINGS_MAX * (REPORT_FINDING_LEN + 4) + 32];
    size_t used = (size_t)snprintf(want, sizeof want, "\n## Findings\n\n");
    for (int i = 0; i < f.n; i++)
        used += (size_t)snprintf(want + used, sizeof want - used, "- %s\n", f.line[i]);
    cr_expect(tu_starts(nl + 1, want), "%s", md);
    free(md);
    tu_rm_flat(dir);

    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    cr_assert_eq(report_write_summary(r, out), 0);
    fclose(out);
    size_t wl = strlen(want + 1);
    cr_expect(len >= wl + 1 && strncmp(buf + len - wl - 1, want + 1, wl) == 0 && buf[len - 1] == '\n',
              "summary does not end with the findings: %s", buf);
    free(buf);
    free(r);
}

/* The self-check on the figures of the first Intel Xeon run (issue #64): attention alone 75.24 ms against
 * 5.0 ms inside the 81.90 ms step, rope alone longer than the whole step. Both are named, neither is
 * ranked as lost against its roof nor as a block to fix, and the line is an accounting error. */
Test(findings, selfcheck_names_blocks_the_step_contradicts) {
    struct run_report *r = fixture();
    const struct report_step *s = report_selfcheck_step(r);
    cr_assert(s && s->context == 1024);
    struct report_step *step = &r->steps[s - r->steps];
    r->blocks[BLOCK_ATTENTION].measured.median_s = 75.24e-3;
    step->block_s[BLOCK_ATTENTION] = 5.0e-3;
    r->blocks[BLOCK_ROPE].measured.median_s = 90e-3; /* above the 81.90 ms step, observed or not */
    step->block_s[BLOCK_ROPE] = NAN;
    cr_expect(report_selfcheck_block_contradicted(r, &r->blocks[BLOCK_ATTENTION]));
    cr_expect(report_selfcheck_block_contradicted(r, &r->blocks[BLOCK_ROPE]));
    cr_expect(!report_selfcheck_block_contradicted(r, &r->blocks[BLOCK_QKV_PROJ]), "0.95x is inside");
    cr_expect(!report_block_to_fix(r, &r->blocks[BLOCK_ATTENTION]));
    cr_expect(!report_block_to_fix(r, &r->blocks[BLOCK_ROPE]));
    struct report_findings f;
    report_findings_run(r, &f);
    cr_assert_eq(f.n, 9);
    for (int i = 1; i <= 3; i++)
        cr_expect(!strstr(f.line[i], "`attention`") && !strstr(f.line[i], "`rope`"), "%s", f.line[i]);
    cr_expect(strstr(f.line[1], "Lost against the roof #1: `qkv_proj`") == f.line[1], "%s", f.line[1]);
    cr_expect(strstr(f.line[6], "**Accounting errors (self-check):**") == f.line[6], "%s", f.line[6]);
    cr_expect(strstr(f.line[6], "`attention` 75.240 ms alone, 5.000 ms inside the step (15.05x)") != NULL,
              "%s", f.line[6]);
    cr_expect(strstr(f.line[6], "`rope` 90.000 ms alone, n/a ms inside the step (n/a") != NULL, "%s",
              f.line[6]);
    cr_expect(strstr(f.line[6], ", outside it;") != NULL, "the sum is out of its band too: %s", f.line[6]);
    free(r);
}

/* Without a step at the blocks' context the check is not made, and says so. */
Test(findings, selfcheck_without_a_step_at_the_block_context) {
    struct run_report *r = fixture();
    r->blocks_context = 512;
    cr_expect_null(report_selfcheck_step(r));
    cr_expect(isnan(report_selfcheck_sum_ratio(r)));
    char text[512];
    cr_expect(!report_selfcheck_text(r, text, sizeof text));
    cr_expect_str_eq(text, "Self-check: not made, no decode step was measured at the blocks' context 512 to "
                           "hold the blocks alone against.");
    free(r);
}

/* The busy loop of issue #64: all 3 repetitions of qkv_proj, o_proj and attention preempted (kept: none
 * was clean), 11 in samples.csv. The findings open with the load, count every marked repetition, rank none
 * of the three (qkv_proj was the block lost most against its roof), and none is a block to fix. */
Test(findings, outside_load_is_said_first_and_disturbed_rows_are_not_ranked) {
    struct run_report *r = fixture();
    const enum block_id hit[3] = {BLOCK_QKV_PROJ, BLOCK_O_PROJ, BLOCK_ATTENTION};
    for (int i = 0; i < 3; i++) {
        struct report_block *b = &r->blocks[hit[i]];
        b->measured.reps = 3, b->measured.excluded_reps = 0, b->measured.noisy = true;
        b->disturbed_reps = 3, b->disturbed_causes = REP_CAUSE_PREEMPTED;
        b->measured.median_s *= 3; /* measured at 3x under the load */
    }
    r->samples_reps = 180, r->samples_disturbed = 11;
    snprintf(r->samples_causes, sizeof r->samples_causes, "preempted");
    struct report_findings f;
    report_findings_run(r, &f);
    cr_assert_eq(f.n, 10);
    cr_expect_str_eq(f.line[0], "**Outside load:** 9 repetitions of the headline rows were disturbed "
                                "(preempted): `qkv_proj` 3 of 3, `attention` 3 of 3, `o_proj` 3 of 3. Rows "
                                "whose figure includes them are flagged and ranked nowhere; rerun on a quiet "
                                "machine.");
    for (int i = 2; i <= 4; i++)
        for (int k = 0; k < 3; k++)
            cr_expect(!strstr(f.line[i], block_name(hit[k])) || !strstr(f.line[i], "Lost against"), "%s",
                      f.line[i]);
    cr_expect(strstr(f.line[2], "Lost against the roof #1: `gate_up_proj`") == f.line[2], "%s", f.line[2]);
    for (int k = 0; k < 3; k++)
        cr_expect(!report_block_to_fix(r, &r->blocks[hit[k]]), "%s", block_name(hit[k]));
    /* "What to do next" says why they are left out, not that every block is fine */
    char *md = NULL;
    size_t md_len = 0;
    FILE *mf = open_memstream(&md, &md_len);
    cr_assert_not_null(mf);
    report_write_roofs(mf, r);
    fclose(mf);
    cr_expect(strstr(md, "- `qkv_proj` is not judged: its figure includes 3 disturbed repetitions (outside "
                         "load; the findings' first line).") != NULL,
              "%s", md);
    cr_expect(!strstr(md, "- Every block that takes"), "%s", md);
    free(md);
    cr_expect(strstr(f.line[9],
                     "kept, fewer than 3 clean: `qkv_proj` 3 of 3, `attention` 3 of 3, `o_proj` 3 of 3. "
                     "samples.csv marks 11 of its 180 repetitions disturbed (preempted).") != NULL,
              "%s", f.line[9]);
    /* left out, enough clean: the load is still said at the top when it took a quarter of a row */
    struct report_block *q = &r->blocks[BLOCK_QKV_PROJ];
    q->measured.reps = 7, q->measured.excluded_reps = 3;
    report_findings_run(r, &f);
    cr_expect(strstr(f.line[0], "`qkv_proj` 3 of 10") != NULL, "%s", f.line[0]);
    free(r);
}

/* A quiet run: no line about outside load, and the disturbed line says none. */
Test(findings, no_outside_load_line_without_disturbed_headline_rows) {
    struct run_report *r = fixture();
    r->counters.available = true;
    r->blocks[BLOCK_LM_HEAD].disturbed_reps = 1, r->blocks[BLOCK_LM_HEAD].measured.excluded_reps = 1;
    r->blocks[BLOCK_LM_HEAD].measured.reps = 22;
    struct report_findings f;
    report_findings_run(r, &f);
    cr_expect(strstr(f.line[0], "Decode:") == f.line[0], "1 of 23 left out is not outside load: %s",
              f.line[0]);
    free(r);
}

/* Under outside load the step's own figure can include disturbed repetitions: the self-check then holds
 * nothing against it, and says why, rather than calling the blocks' disagreement an accounting error. */
Test(findings, selfcheck_is_not_made_against_a_disturbed_step) {
    struct run_report *r = fixture();
    struct report_step *s = &r->steps[2];
    cr_assert_eq(s->context, r->blocks_context);
    s->measured.reps = 3, s->measured.excluded_reps = 0, s->disturbed_reps = 3;
    r->blocks[BLOCK_ATTENTION].measured.median_s = 75.24e-3;
    s->block_s[BLOCK_ATTENTION] = 5.0e-3;
    cr_expect(!report_selfcheck_block_contradicted(r, &r->blocks[BLOCK_ATTENTION]));
    char text[512];
    cr_expect(!report_selfcheck_text(r, text, sizeof text));
    cr_expect_str_eq(text, "Self-check: not made, the step at context 1024 includes disturbed repetitions "
                           "(outside load): its blocks' times inside it measured the load too.");
    free(r);
}

/* Without a step at the blocks' context, a block alone longer than another context's step contradicts
 * nothing: attention at 16384 positions may well outlast the step at context 1. */
Test(findings, selfcheck_holds_blocks_only_against_their_own_context) {
    struct run_report *r = fixture();
    r->blocks_context = 512;
    r->blocks[BLOCK_ATTENTION].measured.median_s = 10 * r->steps[0].measured.median_s;
    cr_expect(!report_selfcheck_block_contradicted(r, &r->blocks[BLOCK_ATTENTION]));
    free(r);
}
