/* OpenBLAS's core (roofline/blas_core.h): the override rule on OpenBLAS's core names, and the binary on
 * this CPU: with AVX2 and FMA it never runs a pre-AVX2 fallback core (Debian 12's OpenBLAS 0.3.21 takes
 * an Emerald Rapids Xeon for Prescott), and a user's OPENBLAS_CORETYPE stands and is named. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/blas_core.h"
#include "tests/cli_run.h"

static const struct blas_cpu_features avx512 = {.avx2_fma = true, .avx512 = true},
                                      avx2 = {.avx2_fma = true, .avx512 = false}, sse = {0};

Test(blas_core, overrides_only_a_pre_avx2_core_on_an_avx2_cpu) {
    cr_expect_str_eq(blas_core_override("Prescott", avx512), "SkylakeX");
    cr_expect_str_eq(blas_core_override("prescott", avx2), "Haswell");
    cr_expect_str_eq(blas_core_override("Sandybridge", avx2), "Haswell");
    cr_expect_str_eq(blas_core_override("Steamroller", avx512), "SkylakeX");
    cr_expect_null(blas_core_override("Prescott", sse), "a CPU without AVX2 keeps OpenBLAS's pick");
    static const char *const kept[] = {"Haswell",        "Zen",       "SkylakeX",       "Cooperlake",
                                       "SapphireRapids", "Excavator", "SomeFutureCore", ""};
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
        cr_expect_null(blas_core_override(kept[i], avx512), "'%s' was overridden", kept[i]);
    cr_expect_null(blas_core_override(NULL, avx512));
}

static char *machine_blas_core(struct cli_result *r) {
    cli_run(r, 0, "machine --format json --test-sizes");
    cr_assert_eq(r->status, 0, "stderr: %s", r->err);
    cJSON *j = cJSON_Parse(r->out);
    cr_assert(j, "not JSON: %s", r->out);
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "setup"), "blas_core"));
    cr_assert(s, "setup.blas_core missing");
    char *out = strdup(s);
    cJSON_Delete(j);
    return out;
}

Test(blas_core, the_binary_runs_no_fallback_core_on_this_cpu, .timeout = 120) {
    unsetenv("OPENBLAS_CORETYPE");
    static struct cli_result r;
    char *desc = machine_blas_core(&r);
    char core[64] = "";
    cr_assert_eq(sscanf(desc, "OpenBLAS core %63[^ ,(]", core), 1, "'%s'", desc);
    if (blas_core_cpu_features().avx2_fma)
        cr_expect_null(blas_core_override(core, blas_core_cpu_features()), "runs %s: '%s'", core, desc);
    free(desc);
}

Test(blas_core, a_users_coretype_stands_and_is_named, .timeout = 120) {
    if (!blas_core_cpu_features().avx2_fma) cr_skip_test("no AVX2: Haswell's kernels cannot run here");
    setenv("OPENBLAS_CORETYPE", "Haswell", 1);
    static struct cli_result r;
    char *desc = machine_blas_core(&r);
    cr_expect_str_eq(desc, "OpenBLAS core Haswell (OPENBLAS_CORETYPE=Haswell from the environment)");
    free(desc);
}
