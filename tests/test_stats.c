/* The statistics of roofline/stats.h against hand-worked values:
 *   Mann-Whitney, x = {1, 2, 3}, y = {4, 5, 6}: U = 0, mn/2 = 4.5, var = mn (N + 1) / 12 = 5.25,
 *     z = -(4.5 - 0.5) / sqrt(5.25) = -1.7457431, p = erfc(1.7457431 / sqrt 2) = 0.0808556 (R:
 *     wilcox.test(c(1,2,3), c(4,5,6), exact = FALSE) gives W = 0, p = 0.08086);
 *   with ties, x = {1, 2, 2, 3}, y = {2, 3, 4, 4}: mid-ranks 1 | 3 3 3 | 5.5 5.5 | 7.5 7.5, x's sum 12.5,
 *     U = 12.5 - 10 = 2.5; var = 16/12 (9 - (24 + 6 + 6) / 56) = 11.142857, z = -5 / 3.3380918 = -1.4978617,
 *     p = 0.1341692;
 *   Hodges-Lehmann, 3 and 3: the 9 differences {1,2,2,3,3,3,4,4,5}, estimate 3; P(U <= 0) = 1/20, so no
 *     pair reaches 95 %: [min, max] = [1, 5] covering 1 - 2/20 = 0.90;
 *   10 and 10: P(U <= 23) = 0.0216285 <= 0.025 < P(U <= 24) = 0.0262130 (the table's critical value 23), so
 *     [D_(24), D_(77)] covering 0.9567429;
 *   Holm, p = {0.01, 0.04, 0.03, 0.005}: 0.005 x 4 = 0.02, 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04
 *     raised to 0.06 (monotone).
 * And the 95 % interval's coverage over 1,000 seeded trials of normal data, B a copy of A's distribution
 * scaled by 1.05 (so the log shift is exactly log 1.05): 93-97 % of the intervals cover it, for 10 + 10
 * (exact k) and 30 + 30 (normal k). */
#include <criterion/criterion.h>
#include <math.h>

#include "kernels/sampler.h"
#include "roofline/stats.h"

#define NEAR(got, want, tol) cr_expect(fabs((got) - (want)) <= (tol), "got %.10g, want %.10g", got, want)

Test(stats, mann_whitney_by_hand) {
    const double x[] = {1, 2, 3}, y[] = {4, 5, 6};
    struct stats_mw r;
    cr_assert_eq(stats_mann_whitney(x, 3, y, 3, &r), 0);
    NEAR(r.u, 0, 0);
    NEAR(r.z, -1.7457431218879391, 1e-12);
    NEAR(r.p, 0.0808555983700523, 1e-12);
    struct stats_mw s;
    stats_mann_whitney(y, 3, x, 3, &s);
    NEAR(s.u, 9, 0);
    NEAR(s.p, r.p, 1e-15);
    cr_expect_gt(s.z, 0, "the sign follows U - mn/2");
}

Test(stats, mann_whitney_with_ties) {
    const double x[] = {2, 1, 3, 2}, y[] = {4, 2, 4, 3};
    struct stats_mw r;
    cr_assert_eq(stats_mann_whitney(x, 4, y, 4, &r), 0);
    NEAR(r.u, 2.5, 0);
    NEAR(r.z, -1.4978617237881953, 1e-12);
    NEAR(r.p, 0.13416918012812581, 1e-12);
    const double same[] = {7, 7, 7};
    cr_assert_eq(stats_mann_whitney(same, 3, same, 3, &r), 0);
    NEAR(r.p, 1, 0);
    cr_expect_eq(stats_mann_whitney(x, 0, y, 4, &r), -1, "an empty side is refused");
}

Test(stats, hodges_lehmann_three_and_three) {
    const double x[] = {1, 2, 3}, y[] = {4, 5, 6};
    struct stats_shift s;
    cr_assert_eq(stats_hodges_lehmann(x, 3, y, 3, 0.95, &s), 0);
    NEAR(s.est, 3, 0);
    NEAR(s.lo, 1, 0);
    NEAR(s.hi, 5, 0);
    NEAR(s.level, 0.9, 1e-15);
    cr_expect(s.exact);
}

Test(stats, hodges_lehmann_ten_and_ten) {
    /* x = 0, 10, ..., 90 and y = 0..9: the 100 differences j - 10 i are -90..9, D_(r) = -91 + r */
    double x[10], y[10];
    for (int i = 0; i < 10; i++) x[i] = 10 * i, y[i] = i;
    struct stats_shift s;
    cr_assert_eq(stats_hodges_lehmann(x, 10, y, 10, 0.95, &s), 0);
    NEAR(s.lo, -67, 0);
    NEAR(s.hi, -14, 0);
    NEAR(s.est, -40.5, 0);
    NEAR(s.level, 0.9567429474550218, 1e-12);
}

Test(stats, holm_textbook_family) {
    const double p[] = {0.01, 0.04, 0.03, 0.005, NAN};
    double adj[5];
    stats_holm(p, 5, adj);
    NEAR(adj[0], 0.03, 1e-15);
    NEAR(adj[1], 0.06, 1e-15);
    NEAR(adj[2], 0.06, 1e-15);
    NEAR(adj[3], 0.02, 1e-15);
    cr_expect(isnan(adj[4]), "a row without a p-value is not in the family");
}

Test(stats, normal_quantile) {
    NEAR(stats_normal_upper(0.025), 1.959963984540054, 1e-9);
    NEAR(stats_normal_upper(0.5), 0, 1e-9);
}

Test(stats, verdict_rule) {
    cr_expect_eq(stats_verdict(1.05, 1.03, 1.07, 0.001, 0.05, 0.02), STATS_SLOWER);
    cr_expect_eq(stats_verdict(0.95, 0.93, 0.97, 0.001, 0.05, 0.02), STATS_FASTER);
    cr_expect_eq(stats_verdict(1.05, 1.03, 1.07, 0.2, 0.05, 0.02), STATS_INCONCLUSIVE, "not significant");
    cr_expect_eq(stats_verdict(1.01, 1.005, 1.015, 0.001, 0.05, 0.02), STATS_NO_CHANGE,
                 "real but below the threshold");
    cr_expect_eq(stats_verdict(1.01, 0.97, 1.05, 0.5, 0.05, 0.02), STATS_INCONCLUSIVE);
    cr_expect_eq(stats_verdict(1.015, 1.005, 1.03, 0.001, 0.05, 0.02), STATS_INCONCLUSIVE,
                 "significant, the estimate inside the band, the interval beyond it");
    cr_expect_str_eq(stats_verdict_name(STATS_NO_CHANGE), "no change");
    /* inside the band: the half-width 0.04 must shrink to the room 0.01 to the nearer edge: 16x */
    NEAR(stats_growth_to_decide(1.01, 0.97, 1.05, 0.02),
         pow(0.5 * (log(1.05) - log(0.97)) / (log(1.02) - log(1.01)), 2), 1e-12);
    cr_expect_eq(stats_growth_to_decide(1.05, 1.03, 1.07, 0.02), 1, "decided already");
}

/* Box-Muller over the project's Philox generator: standard normals, seeded and repeatable. */
static double normal(uint64_t seed, uint64_t *ctr) {
    double u1 = 1 - sampler_uniform(seed, (*ctr)++), u2 = sampler_uniform(seed, (*ctr)++);
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static int covered(int m, int n, int trials, uint64_t seed) {
    const double ratio = 1.05, truth = log(ratio);
    double x[64], y[64];
    uint64_t ctr = 0;
    int hits = 0;
    for (int t = 0; t < trials; t++) {
        for (int i = 0; i < m; i++) x[i] = log(1.0 + 0.03 * normal(seed, &ctr));
        for (int j = 0; j < n; j++) y[j] = log(ratio * (1.0 + 0.03 * normal(seed, &ctr)));
        struct stats_shift s;
        cr_assert_eq(stats_hodges_lehmann(x, m, y, n, 0.95, &s), 0);
        hits += s.lo <= truth && truth <= s.hi;
    }
    return hits;
}

Test(stats, interval_covers_the_true_ratio) {
    int exact = covered(10, 10, 1000, 51), normal_k = covered(30, 30, 1000, 52);
    cr_expect(exact >= 930 && exact <= 970, "10 + 10 (exact k): %d of 1000 covered", exact);
    cr_expect(normal_k >= 930 && normal_k <= 970, "30 + 30 (normal k): %d of 1000 covered", normal_k);
}
