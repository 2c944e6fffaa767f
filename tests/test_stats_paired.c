/* The paired tests of roofline/stats_paired.h against textbook values:
 *   Wilcoxon signed rank, Hollander & Wolfe (1973) p. 29 (R's ?wilcox.test example, the Hamilton depression
 *     scale of 9 patients at two visits): W+ = 40, one-sided p = 10 / 512 = 0.01953 (the subsets of
 *     {1..9} summing to 5 or less), two-sided 0.0390625;
 *   all n differences of one sign: p = 2 / 2^n, so 5 pairs cannot reach 0.05 and 6 can (0.03125);
 *   with ties and a zero: W+ and p against a brute-force count of all 2^n sign patterns with mid-ranks
 *     computed by their definition, independently of the code's sorting;
 *   beyond 50 differences, the normal approximation within 0.003 of the exact count done here;
 *   paired t, Student's sleep data (Cushny & Peebles; R's t.test(extra ~ group, data = sleep, paired =
 *     TRUE)): t = 4.0621, df = 9, p = 0.002833;
 *   Student's T: the closed forms for 1 and 2 degrees of freedom, the tables' 97.5 % points for 3 and 9
 *     (3.182446, 2.262157) give p = 0.05, and a huge df gives the normal's 1.959964. */
#include <criterion/criterion.h>
#include <math.h>

#include "roofline/stats_paired.h"

#define NEAR(got, want, tol) cr_expect(fabs((got) - (want)) <= (tol), "got %.10g, want %.10g", got, want)

Test(stats_paired, signed_rank_hollander_wolfe) {
    const double x[] = {1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30};
    const double y[] = {0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29};
    double d[9];
    for (int i = 0; i < 9; i++) d[i] = x[i] - y[i];
    struct stats_paired r;
    cr_assert_eq(stats_signed_rank(d, 9, &r), 0);
    NEAR(r.stat, 40, 0);
    NEAR(r.p, 0.0390625, 1e-15);
    cr_expect(r.exact && r.n == 9);
    for (int i = 0; i < 9; i++) d[i] = -d[i];
    cr_assert_eq(stats_signed_rank(d, 9, &r), 0);
    NEAR(r.stat, 5, 0);
    NEAR(r.p, 0.0390625, 1e-15);
}

Test(stats_paired, signed_rank_smallest_p) {
    const double d[] = {0.01, 0.03, 0.02, 0.05, 0.04, 0.06};
    struct stats_paired r;
    for (int n = 4; n <= 6; n++) {
        cr_assert_eq(stats_signed_rank(d, n, &r), 0);
        NEAR(r.p, 2 / pow(2, n), 1e-15);
    }
    const double zero[] = {0, 0, 0};
    cr_assert_eq(stats_signed_rank(zero, 3, &r), 0);
    NEAR(r.p, 1, 0);
    cr_expect_eq(r.n, 0, "zeros are dropped");
    cr_expect_eq(stats_signed_rank(d, 0, &r), -1);
}

/* W+ of d under the signs in mask (bit i set: |d_i| counted positive), ranks by definition */
static double w_plus(const double *d, int n, unsigned mask) {
    double w = 0;
    for (int i = 0; i < n; i++) {
        if (!(mask >> i & 1) || d[i] == 0) continue;
        int less = 0, same = 0;
        for (int j = 0; j < n; j++) {
            if (d[j] == 0) continue;
            less += fabs(d[j]) < fabs(d[i]);
            same += fabs(d[j]) == fabs(d[i]);
        }
        w += less + 0.5 * (same + 1);
    }
    return w;
}

Test(stats_paired, signed_rank_ties_against_brute_force) {
    const double d[] = {1, -2, 2, 3, -3, 3, 4, 0.5, -0.5, 0, 6, 5};
    const int n = 12;
    unsigned observed = 0;
    for (int i = 0; i < n; i++) observed |= (unsigned)(d[i] > 0) << i;
    double w = w_plus(d, n, observed), below = 0, above = 0, nz = 0;
    for (int i = 0; i < n; i++) nz += d[i] != 0;
    /* every sign pattern of the 11 nonzero differences (the zero's bit changes nothing: counted twice) */
    for (unsigned m = 0; m < 1u << n; m++) {
        double s = w_plus(d, n, m);
        below += s <= w + 1e-9;
        above += s >= w - 1e-9;
    }
    double want = fmin(1, 2 * fmin(below, above) / ldexp(1, n));
    struct stats_paired r;
    cr_assert_eq(stats_signed_rank(d, n, &r), 0);
    NEAR(r.stat, w, 1e-12);
    NEAR(r.p, want, 1e-12);
    cr_expect_eq(r.n, (int)nz);
}

Test(stats_paired, signed_rank_normal_beyond_fifty) {
    /* 60 differences 1..60, the first 35 negative (W+ = 1200, z near 2.1): exact count here, ranks 1..60
     * without ties */
    double d[60];
    for (int i = 0; i < 60; i++) d[i] = (i < 35 ? -1 : 1) * (i + 1.0);
    static double count[60 * 61 / 2 + 1];
    count[0] = 1;
    for (int r = 1, reach = 0; r <= 60; reach += r, r++)
        for (int s = reach; s >= 0; s--) count[s + r] += count[s];
    double w = 60 * 61 / 2 - 35 * 36 / 2, below = 0;
    for (int s = 0; s <= (int)w; s++) below += count[s];
    double exact_p = 2 * fmin(below, ldexp(1, 60) - below + count[(int)w]) / ldexp(1, 60);
    struct stats_paired r;
    cr_assert_eq(stats_signed_rank(d, 60, &r), 0);
    cr_expect_not(r.exact);
    NEAR(r.stat, w, 0);
    cr_expect(exact_p > 1e-4 && exact_p < 0.2, "a p in the range that matters: %g", exact_p);
    NEAR(r.p, exact_p, 0.003);
}

Test(stats_paired, paired_t_sleep_data) {
    const double g1[] = {0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0};
    const double g2[] = {1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4};
    double d[10];
    for (int i = 0; i < 10; i++) d[i] = g2[i] - g1[i];
    struct stats_paired r;
    cr_assert_eq(stats_paired_t(d, 10, &r), 0);
    NEAR(r.mean, 1.58, 1e-12);
    NEAR(r.stat, 4.0621, 5e-5);
    NEAR(r.p, 0.002833, 5e-7);
    const double same[] = {0.02, 0.02, 0.02};
    cr_assert_eq(stats_paired_t(same, 3, &r), 0);
    NEAR(r.p, 0, 0);
    cr_expect_eq(stats_paired_t(d, 1, &r), -1, "one difference has no spread to test against");
}

Test(stats_paired, student_t_tail) {
    for (double t = 0.25; t < 20; t *= 2) {
        NEAR(stats_t_two_sided(t, 1), 1 - 2 / M_PI * atan(t), 1e-12);
        NEAR(stats_t_two_sided(-t, 2), 1 - t / sqrt(t * t + 2), 1e-12);
    }
    NEAR(stats_t_two_sided(3.182446305284263, 3), 0.05, 1e-9);
    NEAR(stats_t_two_sided(2.262157162740992, 9), 0.05, 1e-9);
    NEAR(stats_t_two_sided(1.959963984540054, 1e7), 0.05, 1e-6);
    NEAR(stats_t_two_sided(0, 5), 1, 1e-15);
}

Test(stats_paired, t_critical_and_interval_match_the_tables) {
    /* two-sided 5 % points of Student's t (any table): df 1, 2, 4, 30 */
    const double df[] = {1, 2, 4, 30}, t975[] = {12.706, 4.303, 2.776, 2.042};
    for (int i = 0; i < 4; i++)
        cr_expect(fabs(stats_t_critical(0.05, df[i]) - t975[i]) < 0.0005, "df %g: %.5f", df[i],
                  stats_t_critical(0.05, df[i]));
    cr_expect(fabs(stats_t_critical(0.01, 5) - 4.032) < 0.0005); /* 99 %, df 5 */
    cr_expect(isnan(stats_t_critical(0, 3)) && isnan(stats_t_critical(0.05, 0)));
    /* 1..5: mean 3, sd 1.5811, n 5: 3 -+ 2.776 x 0.7071 */
    const double d[] = {1, 2, 3, 4, 5};
    double lo, hi;
    cr_assert_eq(stats_t_interval(d, 5, 0.95, &lo, &hi), 0);
    cr_expect(fabs(lo - 1.0368) < 0.0005 && fabs(hi - 4.9632) < 0.0005, "[%.4f, %.4f]", lo, hi);
    cr_expect_eq(stats_t_interval(d, 1, 0.95, &lo, &hi), -1);
    cr_expect(isnan(lo) && isnan(hi));
}
