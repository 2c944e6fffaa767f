/* The matrix engine (roofline/matrix_engine.h): each refusal (simulated probes) gives its one-line
 * reason, a trap in a tile loop is caught and named, the per-row roof, and on this machine the probe
 * agrees with /proc/cpuinfo: without amx_tile the ceilings say "no matrix engine"; with it, the checked
 * tile loops run. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "roofline/ceilings.h"
#include "roofline/matrix_engine.h"

#define AMX_ALL   ((1u << 22) | (1u << 24) | (1u << 25))
#define XTILEDATA (1ll << 18)

static bool usable(uint32_t edx, long long xcomp, int perm, bool int8, char *why) {
    const struct matrix_engine_probe p = {.cpuid7_edx = edx, .xcomp_supported = xcomp, .perm_errno = perm};
    return matrix_engine_usable(&p, int8, why);
}

Test(matrix_engine, each_refusal_names_its_reason) {
    char why[MATRIX_ENGINE_WHY_LEN];
    cr_expect_not(usable(0, -1, EOPNOTSUPP, false, why));
    cr_expect(strncmp(why, "no matrix engine: the CPU reports no AMX", 40) == 0, "%s", why);
    cr_expect_not(usable((1u << 24) | (1u << 25), 0x60000 | 0xe7, 0, false, why));
    cr_expect(strstr(why, "without AMX-BF16"), "%s", why);
    cr_expect(usable((1u << 24) | (1u << 25), 0x60000 | 0xe7, 0, true, why), "int8 alone is usable: %s", why);
    cr_expect_not(usable(AMX_ALL, -1, 0, true, why));
    cr_expect(strstr(why, "ARCH_GET_XCOMP_SUPP"), "%s", why);
    cr_expect_not(usable(AMX_ALL, 0xe7, 0, false, why));
    cr_expect(strstr(why, "XTILEDATA missing"), "%s", why);
    cr_expect_not(usable(AMX_ALL, 0xe7 | XTILEDATA | (1ll << 17), EPERM, false, why));
    cr_expect(strstr(why, "refused: Operation not permitted"), "%s", why);
    cr_expect(usable(AMX_ALL, 0xe7 | XTILEDATA | (1ll << 17), 0, false, why), "%s", why);
}

static int trapping_loop(long iters) {
    (void)iters;
    raise(SIGILL);
    return 0;
}

static int failing_loop(long iters) {
    return iters > 0 ? -1 : 0;
}

Test(matrix_engine, a_trap_or_a_failed_check_becomes_the_reason) {
    char why[MATRIX_ENGINE_WHY_LEN] = "";
    cr_expect_eq(matrix_engine_try(trapping_loop, 1, why), -1);
    cr_expect(strstr(why, "trapped (Illegal instruction)"), "%s", why);
    cr_expect_eq(matrix_engine_try(failing_loop, 1, why), -1);
    cr_expect(strstr(why, "failed their check"), "%s", why);
    /* the handlers are put back: SIGILL's disposition is the default again */
    struct sigaction now;
    sigaction(SIGILL, NULL, &now);
    cr_expect(now.sa_handler == SIG_DFL);
}

Test(matrix_engine, a_tile_gives_m_rows_their_share_of_16) {
    cr_expect_float_eq(matrix_engine_roof_rows(3200, 1), 200, 1e-9);
    cr_expect_float_eq(matrix_engine_roof_rows(3200, 7), 1400, 1e-9);
    cr_expect_float_eq(matrix_engine_roof_rows(3200, 16), 3200, 1e-9);
    cr_expect_float_eq(matrix_engine_roof_rows(3200, 512), 3200, 1e-9);
    cr_expect_float_eq(matrix_engine_roof_rows(3200, 0), 0, 1e-9);
    cr_expect_str_eq(ceilings_key(CEILING_AMX_BF16, false), "amx_bf16_gflops");
    cr_expect_str_eq(ceilings_key(CEILING_AMX_INT8, true), "amx_int8_1core_gops");
    cr_expect_str_eq(ceilings_unit(CEILING_AMX_INT8), "GOP/s");
}

static bool cpuinfo_has(const char *flag) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return false;
    char line[8192];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            for (char *tok = strtok(strchr(line, ':') + 1, " \n"); tok && !found; tok = strtok(NULL, " \n"))
                found = strcmp(tok, flag) == 0;
            break;
        }
    fclose(f);
    return found;
}

Test(matrix_engine, the_probe_agrees_with_cpuinfo_on_this_machine) {
    const struct matrix_engine_probe p = matrix_engine_probe();
    char why[MATRIX_ENGINE_WHY_LEN] = "";
    bool ok = matrix_engine_usable(&p, false, why);
    if (!cpuinfo_has("amx_tile")) {
        cr_expect_not(ok);
        cr_expect(strncmp(why, "no matrix engine", 16) == 0, "%s", why);
        return;
    }
    if (!ok) cr_skip_test("AMX present but not usable here: %s", why);
    cr_expect_eq(matrix_engine_try(matrix_engine_bf16_loop, 1000, why), 0, "%s", why);
    if (matrix_engine_usable(&p, true, why))
        cr_expect_eq(matrix_engine_try(matrix_engine_int8_loop, 1000, why), 0, "%s", why);
}
