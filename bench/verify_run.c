/* The verify runner over both check tables: the sampler's (with its own detail line) and the decode
 * kernels' (optimized kernel vs its _ref on the active ISA, max error against the stated tolerance). */
#include "bench/verify_run.h"

#include <string.h>

#include "roofline/timing.h"
#include "kernels/kernels.h"
#include "kernels/kernels_check.h"

static int matches(const char *name, const char *only) {
    return !only || strncmp(name, only, strlen(only)) == 0;
}

static void print_line(FILE *out, const char *name, const char *detail, double seconds,
                       enum verify_status s) {
    fprintf(out, "%-22s %s (%.1f s)  %s\n", name, detail, seconds, verify_status_name(s));
    fflush(out);
}

int verify_run(FILE *out, const char *only, int counts[3]) {
    int matched = 0;
    counts[0] = counts[1] = counts[2] = 0;
    for (int c = 0; c < verify_check_count; c++) {
        if (!matches(verify_checks[c].name, only)) continue;
        matched++;
        char detail[512];
        double t0 = timing_now_s();
        enum verify_status s = verify_checks[c].run(detail, sizeof detail);
        counts[s]++;
        print_line(out, verify_checks[c].name, detail, timing_now_s() - t0, s);
    }
    int n_kernels = 0;
    const struct kernels_check *kc = kernels_checks(&n_kernels);
    for (int c = 0; c < n_kernels; c++) {
        char name[64];
        snprintf(name, sizeof name, "kernels.%s", kc[c].name);
        if (!matches(name, only)) continue;
        matched++;
        double err = 0, t0 = timing_now_s();
        enum verify_status s = kc[c].run(&err) == 0 && err <= kc[c].tolerance ? VERIFY_PASSED : VERIFY_FAILED;
        counts[s]++;
        char detail[512];
        snprintf(detail, sizeof detail, "%s on %s: max error %.2e (tolerance %.1e)", kc[c].what,
                 kernel_isa_name(kernel_isa_active()), err, kc[c].tolerance);
        print_line(out, name, detail, timing_now_s() - t0, s);
    }
    return matched;
}

int verify_count(const char *only) {
    int n = 0, n_kernels = 0;
    for (int c = 0; c < verify_check_count; c++) n += matches(verify_checks[c].name, only);
    const struct kernels_check *kc = kernels_checks(&n_kernels);
    for (int c = 0; c < n_kernels; c++) {
        char name[64];
        snprintf(name, sizeof name, "kernels.%s", kc[c].name);
        n += matches(name, only);
    }
    return n;
}

void verify_list(FILE *out) {
    for (int c = 0; c < verify_check_count; c++) fprintf(out, "%s\n", verify_checks[c].name);
    int n_kernels = 0;
    const struct kernels_check *kc = kernels_checks(&n_kernels);
    for (int c = 0; c < n_kernels; c++) fprintf(out, "kernels.%s\n", kc[c].name);
}
