/* The timing statistics against values computed by hand (no clock is read: every input is a fixed list).
 * Median, min, max, mean and cv of small lists; the median's confidence interval from binomial order
 * statistics: for n kept times, [x_(j), x_(n+1-j)] with j the largest such that 1 - 2 P(B <= j-1) >= 0.95,
 * B ~ Binomial(n, 1/2):
 *   n = 5:  P(B <= 0) = 1/32, so j = 1 (min, max) and the coverage is 1 - 2/32 = 0.9375 (< 0.95: no pair
 *           of order statistics reaches 95 %);
 *   n = 10: P(B <= 1) = 11/1024, P(B <= 2) = 56/1024; j = 2 covers 1 - 22/1024 = 0.978515625, j = 3 only
 *           1 - 112/1024 = 0.890625: the interval is [x_(2), x_(9)];
 *   n = 20: P(B <= 5) = (1 + 20 + 190 + 1140 + 4845 + 15504) / 2^20 = 21700 / 1048576, P(B <= 6) adds
 *           38760: j = 6 covers 1 - 43400/1048576 = 0.958610535..., j = 7 only 0.88468...: [x_(6), x_(15)].
 * Noisy means the interval's half-width (hi - lo) / 2 is above 5 % of the median, strictly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "roofline/timing.h"

#define EXPECT_NEAR(got, want, tol)                                                                          \
    cr_expect(fabs((got) - (want)) <= (tol), "got %.17g, want %.17g", got, want)

Test(timing, five_samples_by_hand) {
    double t[] = {5, 1, 4, 2, 3};
    struct timing_stats s;
    cr_assert_eq(timing_stats_compute(t, 5, NULL, &s), 0);
    cr_expect_eq(s.reps, 5);
    cr_expect_eq(s.median_s, 3.0);
    cr_expect_eq(s.min_s, 1.0);
    cr_expect_eq(s.max_s, 5.0);
    cr_expect_eq(s.mean_s, 3.0);
    /* sample variance (4 + 1 + 0 + 1 + 4) / 4 = 2.5; cv = sqrt(2.5) / 3 */
    EXPECT_NEAR(s.cv, 0.5270462766947299, 1e-15);
    cr_expect_eq(s.ci_lo_s, 1.0);
    cr_expect_eq(s.ci_hi_s, 5.0);
    cr_expect_eq(s.ci_level, 0.9375);
    cr_expect_eq(s.excluded_reps, 0);
    cr_expect(s.noisy, "half-width 2 is 67 %% of the median 3");
    cr_expect_eq(t[0], 5.0, "the input is not reordered");
}

Test(timing, ten_samples_even_median_and_interval) {
    double t[] = {107, 100, 109, 101, 106, 102, 105, 103, 108, 104};
    struct timing_stats s;
    cr_assert_eq(timing_stats_compute(t, 10, NULL, &s), 0);
    cr_expect_eq(s.median_s, 104.5);
    cr_expect_eq(s.min_s, 100.0);
    cr_expect_eq(s.max_s, 109.0);
    cr_expect_eq(s.mean_s, 104.5);
    /* variance sum (i - 4.5)^2 over i = 0..9 = 82.5, / 9; cv = sqrt(82.5 / 9) / 104.5 */
    EXPECT_NEAR(s.cv, 0.028972730661220015, 1e-15);
    cr_expect_eq(s.ci_lo_s, 101.0); /* x_(2) */
    cr_expect_eq(s.ci_hi_s, 108.0); /* x_(9) */
    cr_expect_eq(s.ci_level, 0.978515625);
    cr_expect_not(s.noisy, "half-width 3.5 is 3.3 %% of 104.5");
}

Test(timing, twenty_samples_interval) {
    double t[20];
    for (int i = 0; i < 20; i++) t[i] = 20 - i; /* 20, 19, ..., 1 */
    struct timing_stats s;
    cr_assert_eq(timing_stats_compute(t, 20, NULL, &s), 0);
    cr_expect_eq(s.median_s, 10.5);
    cr_expect_eq(s.ci_lo_s, 6.0);  /* x_(6) */
    cr_expect_eq(s.ci_hi_s, 15.0); /* x_(15) */
    EXPECT_NEAR(s.ci_level, 1.0 - 43400.0 / 1048576.0, 1e-12);
}

Test(timing, order_statistic_indexes) {
    int lo, hi;
    double cov;
    timing_median_ci(0, 0.95, &lo, &hi, &cov);
    cr_expect(lo == -1 && hi == -1 && cov == 0);
    timing_median_ci(1, 0.95, &lo, &hi, &cov);
    cr_expect(lo == 0 && hi == 0 && cov == 0, "one sample covers nothing: lo %d hi %d cov %g", lo, hi, cov);
    timing_median_ci(3, 0.95, &lo, &hi, &cov);
    cr_expect(lo == 0 && hi == 2 && cov == 0.75, "n = 3: [min, max] covers 1 - 2/8");
    timing_median_ci(6, 0.95, &lo, &hi, &cov);
    cr_expect(lo == 0 && hi == 5 && cov == 1 - 2.0 / 64, "n = 6: 0.96875 with [min, max]; j = 2 only 0.78");
    timing_median_ci(10, 0.95, &lo, &hi, &cov);
    cr_expect(lo == 1 && hi == 8 && cov == 0.978515625);
    timing_median_ci(20, 0.95, &lo, &hi, &cov);
    cr_expect(lo == 5 && hi == 14);
}

/* A wide raw spread (one slow repetition, cv 29.6 %) with a tight interval is not noisy; the same interval a
 * hair wider is. */
Test(timing, noisy_is_the_interval_not_the_spread) {
    double t[] = {90, 95, 100, 100, 100, 100, 100, 100, 105, 200};
    struct timing_stats s;
    cr_assert_eq(timing_stats_compute(t, 10, NULL, &s), 0);
    cr_expect_eq(s.median_s, 100.0);
    cr_expect(s.ci_lo_s == 95.0 && s.ci_hi_s == 105.0);
    cr_expect(s.cv > 0.29, "cv %g", s.cv);
    cr_expect_not(s.noisy, "half-width 5 is exactly 5 %% of 100: not above it");
    t[8] = 105.5;
    cr_assert_eq(timing_stats_compute(t, 10, NULL, &s), 0);
    cr_expect(s.noisy, "half-width 5.25 is above 5 %%");
}

Test(timing, disturbed_repetitions_left_out_and_counted) {
    double t[] = {10, 1000, 11, 12, 2000};
    bool dist[] = {false, true, false, false, true};
    struct timing_stats s;
    cr_assert_eq(timing_stats_compute(t, 5, dist, &s), 0);
    cr_expect_eq(s.reps, 3);
    cr_expect_eq(s.excluded_reps, 2);
    cr_expect_eq(s.median_s, 11.0);
    cr_expect_eq(s.max_s, 12.0);
    cr_expect_eq(s.mean_s, 11.0);
    cr_expect(s.ci_lo_s == 10.0 && s.ci_hi_s == 12.0 && s.ci_level == 0.75);
    cr_expect(s.noisy, "half-width 1 is 9 %% of 11");
    bool all[] = {true, true, true, true, true};
    cr_assert_eq(timing_stats_compute(t, 5, all, &s), 0);
    cr_expect_eq(s.reps, 5, "nothing clean: every repetition is used");
    cr_expect_eq(s.excluded_reps, 0);
    cr_expect_eq(s.median_s, 12.0);
    cr_expect(s.noisy, "a row with no clean repetition is flagged");
    bool two_clean[] = {false, true, true, false, true};
    cr_assert_eq(timing_stats_compute(t, 5, two_clean, &s), 0);
    cr_expect_eq(s.reps, 5, "two clean of five are too few for a median: every repetition is used");
    cr_expect_eq(s.excluded_reps, 0);
    cr_expect(s.noisy, "and the row is flagged");
    bool one_of_two[] = {false, true};
    cr_assert_eq(timing_stats_compute(t, 2, one_of_two, &s), 0);
    cr_expect_eq(s.reps, 2, "with two repetitions one clean is too few as well");
}

Test(timing, sorting_wrapper_agrees) {
    double a[] = {3, 9, 1, 7, 5, 2}, b[6];
    memcpy(b, a, sizeof a);
    struct timing_stats s1, s2;
    cr_assert_eq(timing_stats_compute(a, 6, NULL, &s1), 0);
    timing_stats_from_samples(b, 6, &s2);
    cr_expect_eq(s1.median_s, 4.0); /* (3 + 5) / 2 */
    cr_expect_eq(s2.median_s, 4.0);
    cr_expect(s1.ci_lo_s == s2.ci_lo_s && s1.ci_hi_s == s2.ci_hi_s && s1.cv == s2.cv);
    cr_expect_eq(b[0], 1.0, "timing_stats_from_samples sorts in place");
}
