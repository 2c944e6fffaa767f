/* OpenBLAS's core and the restart that overrides a generic fallback (see blas_core.h). Checked in
 * tests/test_blas_core.c: the override rule on core names, and the running binary's core on this CPU. */
#include "roofline/blas_core.h"

#include <cblas.h>
#include <cpuid.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define BLAS_FALLBACK_ENV "FORGE_ROOFLINE_BLAS_FALLBACK"

/* OpenBLAS 0.3.21's x86 core names (driver/others/dynamic.c) whose kernels stop short of AVX2 */
static const char *const pre_avx2_cores[] = {
    "Katmai", "Coppermine",  "Northwood", "Prescott",  "Banias",     "Atom",         "Core2",
    "Penryn", "Dunnington",  "Nehalem",   "Athlon",    "Opteron",    "Opteron_SSE3", "Barcelona",
    "Nano",   "Sandybridge", "Bobcat",    "Bulldozer", "Piledriver", "Steamroller",
};

static char exec_failure[128];

struct blas_cpu_features blas_core_cpu_features(void) {
    struct blas_cpu_features f = {0};
    unsigned a, b, c, d;
    if (!__get_cpuid_count(1, 0, &a, &b, &c, &d)) return f;
    bool fma = c & (1u << 12), osxsave = c & (1u << 27);
    if (!osxsave || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    bool ymm_os = (lo & 0x6u) == 0x6u, zmm_os = (lo & 0xe6u) == 0xe6u;
    f.avx2_fma = ymm_os && fma && (b & (1u << 5));
    const unsigned avx512_need =
        (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31); /* F DQ CD BW VL */
    f.avx512 = f.avx2_fma && zmm_os && (b & avx512_need) == avx512_need;
    return f;
}

const char *blas_core_override(const char *current, struct blas_cpu_features f) {
    if (!current || !f.avx2_fma) return NULL;
    for (size_t i = 0; i < sizeof pre_avx2_cores / sizeof pre_avx2_cores[0]; i++)
        if (strcasecmp(current, pre_avx2_cores[i]) == 0) return f.avx512 ? "SkylakeX" : "Haswell";
    return NULL;
}

static bool is_dynamic_arch(void) {
    const char *cfg = openblas_get_config();
    return cfg && strstr(cfg, "DYNAMIC_ARCH");
}

void blas_core_restart_if_generic(char **argv) {
    if (getenv("OPENBLAS_CORETYPE") || !is_dynamic_arch()) return;
    const char *core = blas_core_override(openblas_get_corename(), blas_core_cpu_features());
    if (!core) return;
    if (setenv(BLAS_FALLBACK_ENV, openblas_get_corename(), 1) != 0 ||
        setenv("OPENBLAS_CORETYPE", core, 1) != 0)
        return;
    fflush(NULL);
    execv("/proc/self/exe", argv);
    snprintf(exec_failure, sizeof exec_failure, "could not restart with OPENBLAS_CORETYPE=%s: %s", core,
             strerror(errno));
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv(BLAS_FALLBACK_ENV);
}

void blas_core_describe(char *out, size_t len) {
    const char *core = openblas_get_corename();
    const char *env = getenv("OPENBLAS_CORETYPE"), *fallback = getenv(BLAS_FALLBACK_ENV);
    char version[32];
    snprintf(version, sizeof version, "%s", openblas_get_config() ? openblas_get_config() : "OpenBLAS");
    char *sp = strchr(version, ' ');
    if (sp && (sp = strchr(sp + 1, ' '))) *sp = '\0'; /* "OpenBLAS 0.3.21" */
    if (exec_failure[0])
        snprintf(out, len, "OpenBLAS core %s, a generic fallback without AVX2 (%s)", core, exec_failure);
    else if (env && fallback)
        snprintf(out, len,
                 "OpenBLAS core %s (OPENBLAS_CORETYPE=%s set by forge-roofline: %s took this CPU for %s, a "
                 "core without AVX2)",
                 core, env, version, fallback);
    else if (env)
        snprintf(out, len, "OpenBLAS core %s (OPENBLAS_CORETYPE=%s from the environment)", core, env);
    else if (blas_core_override(core, blas_core_cpu_features()))
        snprintf(out, len, "OpenBLAS core %s, a generic fallback without AVX2 (%s)", core,
                 is_dynamic_arch() ? "no restart was tried"
                                   : "not a DYNAMIC_ARCH build: OPENBLAS_CORETYPE cannot choose");
    else
        snprintf(out, len, "OpenBLAS core %s (its own choice)", core);
}
