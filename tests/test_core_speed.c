/* Each core's speed (roofline/core_speed.h): the probe measures every core of the team, the slowest probe
 * is taken over every core and moment, the words name the cores and every moment, and a run's report says
 * so in its setup line and, when a probe ran slow, in its findings. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report/findings.h"
#include "kernels/team.h"
#include "roofline/core_speed.h"
#include "tests/report_fixture.h"

Test(core_speed, probe_measures_every_core_of_the_team) {
    struct core_speed_log log = {0};
    cr_assert_eq(core_speed_probe(&log, "first", 1), 0);
    int threads = kernel_team_procs() < 2 ? 1 : 2;
    cr_assert_eq(core_speed_probe(&log, "second", threads), 0);
    cr_assert_eq(log.n, 2);
    cr_expect_str_eq(log.probe[0].when, "first");
    cr_expect_eq(log.probe[0].cores, 1);
    cr_expect_eq(log.probe[1].cores, threads);
    cr_expect_eq(log.probe[1].asked, threads);
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < log.probe[k].cores; c++)
            cr_expect_gt(log.probe[k].gbs[c], 0.1, "probe %d core %d: %g GB/s", k, c, log.probe[k].gbs[c]);
    for (int k = 2; k < CORE_SPEED_MAX_PROBES + 2; k++) cr_expect_eq(core_speed_probe(&log, "more", 1), 0);
    cr_expect_eq(log.n, CORE_SPEED_MAX_PROBES, "moments past the log's room are dropped");
}

static struct core_speed moment(const char *when, int cores, double g0, double g1) {
    return (struct core_speed){.when = when, .cores = cores, .gbs = {g0, g1}};
}

Test(core_speed, low_is_the_slowest_probe_over_the_fastest) {
    struct core_speed_log log = {3,
                                 {moment("a", 2, 100, 80), moment("b", 2, 110, 105), moment("c", 1, 90, 0)}};
    cr_expect_float_eq(core_speed_low(&log), 80.0 / 110.0, 1e-12);
    struct core_speed_log one_core = {2, {moment("a", 1, 57.4, 0), moment("b", 1, 41.0, 0)}};
    cr_expect_float_eq(core_speed_low(&one_core), 41.0 / 57.4, 1e-12, "one core's moments count too");
    struct core_speed_log none = {0};
    cr_expect(isnan(core_speed_low(&none)));
    char words[96];
    core_speed_low_words(0.774, words, sizeof words);
    cr_expect_str_eq(words, "; the slowest probe at 77 % of the fastest");
    core_speed_low_words(NAN, words, sizeof words);
    cr_expect_str_eq(words, "");
}

Test(core_speed, describe_names_the_cores_and_every_moment) {
    struct core_speed_log log = {3,
                                 {moment("at the start", 2, 115.25, 88.04),
                                  moment("after the steps", 2, 90, 91), moment("at the end", 2, 114.9, 113)}};
    char buf[640];
    core_speed_describe(&log, "avx2", buf, sizeof buf);
    cr_expect_str_eq(
        buf, "cores 0 / 1: 115.2 / 88.0 GB/s at the start, 90.0 / 91.0 after the steps, 114.9 / 113.0 "
             "at the end (attention from L2 on one core at a time, avx2: one KV head, 2 query heads "
             "of 128, 256 bf16 positions; median of 15 runs)");
    struct core_speed_log one = {1, {moment("at the end", 1, 50, 0)}};
    core_speed_describe(&one, "avx512", buf, sizeof buf);
    cr_expect_str_eq(buf,
                     "core 0: 50.0 GB/s at the end (attention from L2 on one core at a time, avx512: one KV "
                     "head, 2 query heads of 128, 256 bf16 positions; median of 15 runs)");
    struct core_speed_log many = {1,
                                  {{.when = "at the start", .cores = 6, .gbs = {30, 31, 22.5, 33, 30, 29}}}};
    core_speed_describe(&many, "avx2", buf, sizeof buf);
    cr_expect(strncmp(buf, "cores 0-5: 22.5-33.0 GB/s at the start (", 39) == 0, "%s", buf);
    cr_expect(strstr(buf, "not probed") == NULL, "%s", buf);
    many.probe[0].asked = 80; /* a team larger than the probe's room */
    core_speed_describe(&many, "avx2", buf, sizeof buf);
    cr_expect(strstr(buf, "median of 15 runs; the run's other cores not probed)") != NULL, "%s", buf);
    struct core_speed_log none = {0};
    core_speed_describe(&none, "avx2", buf, sizeof buf);
    cr_expect_str_eq(buf, "");
    char small[24];
    core_speed_describe(&log, "avx2", small, sizeof small); /* cut, still a string */
    cr_expect_eq(strlen(small), sizeof small - 1);
}

/* The findings say so only below CORE_SPEED_MOVED, never for a run that was not probed. */
Test(core_speed, findings_name_slow_probes_only) {
    struct run_report *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    report_fixture_fill(r, 1.0);
    struct report_findings f;
    const double lows[] = {NAN, 0.95, 0.77};
    for (int k = 0; k < 3; k++) {
        r->prov.core_speed_low = lows[k];
        report_findings_run(r, &f);
        int found = 0;
        for (int i = 0; i < f.n; i++)
            if (strstr(f.line[i], "Core speed moved")) {
                found++;
                cr_expect(strstr(f.line[i], "at 77 % of the fastest") != NULL, "%s", f.line[i]);
            }
        cr_expect_eq(found, k == 2, "core_speed_low %g: %d lines", lows[k], found);
    }
    free(r);
}
