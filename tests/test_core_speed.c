/* Each core's speed (roofline/core_speed.h): the probe measures every core of the team, the slowest
 * core-moment is taken over both probes, the words name the cores and both moments, and a run's report says
 * so in its setup line and, when the cores were uneven, in its findings. */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report/findings.h"
#include "roofline/core_speed.h"
#include "tests/report_fixture.h"

Test(core_speed, probe_measures_every_core_of_the_team) {
    struct core_speed s;
    cr_assert_eq(core_speed_probe(&s, 1), 0);
    cr_expect_eq(s.cores, 1);
    cr_expect_gt(s.gbs[0], 0.1, "%g GB/s", s.gbs[0]);
    int threads = omp_get_max_threads() < 2 ? 1 : 2;
    cr_assert_eq(core_speed_probe(&s, threads), 0);
    cr_expect_eq(s.cores, threads);
    for (int c = 0; c < s.cores; c++) cr_expect_gt(s.gbs[c], 0.1, "core %d: %g GB/s", c, s.gbs[c]);
}

Test(core_speed, low_is_the_most_uneven_probe) {
    struct core_speed start = {.cores = 2, .gbs = {100, 80}}, end = {.cores = 2, .gbs = {110, 105}},
                      faster_end = {.cores = 2, .gbs = {130, 125}}, none = {0},
                      one = {.cores = 1, .gbs = {50}};
    cr_expect_float_eq(core_speed_low(&start, &end), 0.8, 1e-12);
    cr_expect_float_eq(core_speed_low(&end, &start), 0.8, 1e-12);
    /* the end's cores ran faster than the start's: a move of the machine, not uneven cores */
    cr_expect_float_eq(core_speed_low(&end, &faster_end), 105.0 / 110.0, 1e-12);
    cr_expect_float_eq(core_speed_low(&start, &none), 0.8, 1e-12);
    cr_expect_float_eq(core_speed_low(NULL, &end), 105.0 / 110.0, 1e-12);
    cr_expect(isnan(core_speed_low(&one, &one)), "one core: nothing to compare");
    cr_expect(isnan(core_speed_low(&none, &none)));
    cr_expect(isnan(core_speed_low(NULL, NULL)));
    char words[96];
    core_speed_low_words(0.774, words, sizeof words);
    cr_expect_str_eq(words, "; the slowest core at 77 % of the fastest in one probe");
    core_speed_low_words(NAN, words, sizeof words);
    cr_expect_str_eq(words, "");
}

Test(core_speed, describe_names_the_cores_and_both_moments) {
    struct core_speed start = {.cores = 2, .gbs = {115.25, 88.04}}, end = {.cores = 2, .gbs = {114.9, 113}},
                      none = {0};
    char buf[320];
    core_speed_describe(&start, &end, "avx2", buf, sizeof buf);
    cr_expect_str_eq(buf,
                     "cores 0 / 1: 115.2 / 88.0 GB/s at the start, 114.9 / 113.0 at the end (attention from "
                     "L2 on one core at a time, avx2: one KV head, 2 query heads of 128, 256 bf16 positions; "
                     "median of 15 runs)");
    struct core_speed one = {.cores = 1, .gbs = {50}};
    core_speed_describe(&none, &one, "avx512", buf, sizeof buf);
    cr_expect_str_eq(buf,
                     "core 0: 50.0 GB/s at the end (attention from L2 on one core at a time, avx512: one KV "
                     "head, 2 query heads of 128, 256 bf16 positions; median of 15 runs)");
    core_speed_describe(&none, NULL, "avx2", buf, sizeof buf);
    cr_expect_str_eq(buf, "");
    char small[24];
    core_speed_describe(&start, &end, "avx2", small, sizeof small); /* cut, still a string */
    cr_expect_eq(strlen(small), sizeof small - 1);
}

/* The findings say so only below CORE_SPEED_UNEVEN, never for a run that was not probed. */
Test(core_speed, findings_name_uneven_cores_only) {
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
            if (strstr(f.line[i], "Uneven core speed")) {
                found++;
                cr_expect(strstr(f.line[i], "at 77 % of the fastest") != NULL, "%s", f.line[i]);
            }
        cr_expect_eq(found, k == 2, "core_speed_low %g: %d lines", lows[k], found);
    }
    free(r);
}
