/* The verify runner over both check tables: the sampler's (with its own detail line) and the decode
 * kernels' (optimized kernel vs its _ref on every ISA up to the active one, max error against the stated
 * tolerance). */
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
    fprintf(out, "%-24s %s (%.1f s)  %s\n", name, detail, seconds, verify_status_name(s));
    fflush(out);
}

/* One kernel check on every ISA from scalar up to the active one (the one --isa pins, else the CPU's best),
 * as the sampler checks run: it passes when every ISA is within the tolerance. The active ISA is restored. */
static enum verify_status kernel_check_every_isa(const struct kernels_check *kc, char *detail, size_t cap,
                                                 int threads) {
    const enum kernel_isa active = kernel_isa_active();
    enum kernel_isa isas[KERNEL_ISA_COUNT];
    char names[64];
    int n = verify_isa_list(kernel_isa_force, isas, names, sizeof names), failed = 0;
    double worst = 0;
    enum kernel_isa worst_isa = active;
    for (int i = 0; i < n; i++) {
        kernel_isa_force(isas[i]);
        double err = 0;
        failed += kc->run(&err, threads) != 0 || !(err <= kc->tolerance);
        if (!(err <= worst)) worst = err, worst_isa = isas[i];
    }
    kernel_isa_force(active);
    snprintf(detail, cap, "%s on %s: max error %.2e%s%s (tolerance %.1e)", kc->what, names, worst,
             n > 1 ? " on " : "", n > 1 ? kernel_isa_name(worst_isa) : "", kc->tolerance);
    return failed ? VERIFY_FAILED : VERIFY_PASSED;
}

int verify_run(FILE *out, const char *only, int threads, int counts[3]) {
    int matched = 0;
    counts[0] = counts[1] = counts[2] = 0;
    for (int c = 0; c < verify_check_count; c++) {
        if (!matches(verify_checks[c].name, only)) continue;
        matched++;
        char detail[512];
        double t0 = timing_now_s();
        enum verify_status s = verify_checks[c].run(detail, sizeof detail, threads);
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
        char detail[512];
        double t0 = timing_now_s();
        enum verify_status s = kernel_check_every_isa(&kc[c], detail, sizeof detail, threads);
        counts[s]++;
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
