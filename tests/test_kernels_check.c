/* The self-check table that `forge-roofline verify` runs: every check passes on every ISA the CPU supports,
 * with its error measure inside its tolerance. */
#include "kernels/kernels_check.h"
#include "tests/kernels_test_util.h"

Test(kernels_check, all_pass_every_isa) {
    int n = 0;
    const struct kernels_check *c = kernels_checks(&n);
    cr_assert_gt(n, 0);
    FOR_EACH_ISA(isa) {
        for (int i = 0; i < n; i++) {
            double err = -1.0;
            int rc = c[i].run(&err);
            cr_log_info("%s %s: max error %.3g (tolerance %.3g)", kernel_isa_name(isa), c[i].name, err,
                        c[i].tolerance);
            cr_expect_eq(rc, 0, "%s on %s: error %.3g > tolerance %.3g", c[i].name, kernel_isa_name(isa), err,
                         c[i].tolerance);
            cr_expect(err >= 0.0 && err <= c[i].tolerance, "%s on %s", c[i].name, kernel_isa_name(isa));
        }
    }
}
