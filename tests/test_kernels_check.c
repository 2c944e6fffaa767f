/* The self-check table that `forge-roofline verify` runs: every check passes on each ISA, with its error
 * measure inside its tolerance; an ISA this machine cannot run is a skipped test, with the reason. */
#include "kernels/kernels_check.h"
#include "kernels/team.h"
#include "tests/kernels_test_util.h"

/* The whole table on one ISA: one test per ISA, so a CPU without AVX-512 (or FORGE_ROOFLINE_MAX_ISA=avx2)
 * reports the AVX-512 test as skipped with the reason, and an AVX-512 machine runs all three. */
static void check_table_on(enum kernel_isa isa) {
    test_isa_require(isa);
    int n = 0;
    const struct kernels_check *c = kernels_checks(&n);
    cr_assert_gt(n, 0);
    for (int i = 0; i < n; i++) {
        double err = -1.0;
        int rc = c[i].run(&err, kernel_team_procs());
        cr_log_info("%s %s: max error %.3g (tolerance %.3g)", kernel_isa_name(isa), c[i].name, err,
                    c[i].tolerance);
        cr_expect_eq(rc, 0, "%s on %s: error %.3g > tolerance %.3g", c[i].name, kernel_isa_name(isa), err,
                     c[i].tolerance);
        cr_expect(err >= 0.0 && err <= c[i].tolerance, "%s on %s", c[i].name, kernel_isa_name(isa));
    }
    cr_expect_eq(kernel_isa_active(), isa, "the table ran on %s", kernel_isa_name(kernel_isa_active()));
    kernel_isa_force(KERNEL_ISA_COUNT);
}

Test(kernels_check, all_pass_scalar) {
    check_table_on(KERNEL_ISA_SCALAR);
}
Test(kernels_check, all_pass_avx2) {
    check_table_on(KERNEL_ISA_AVX2);
}
Test(kernels_check, all_pass_avx512) {
    check_table_on(KERNEL_ISA_AVX512);
}
