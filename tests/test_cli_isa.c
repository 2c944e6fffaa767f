/* --isa on every command that runs kernels (the full run, decode, verify, machine, sample), end to end:
 * a name the CPU lacks is refused with one line and exit status 2 (FORGE_ROOFLINE_MAX_ISA makes any machine
 * lack AVX2, as oneDNN's ONEDNN_MAX_CPU_ISA does), a bad name likewise, and an accepted one is named in the
 * command's output and, for the full run, in run.json's provenance and report.md's setup line. scalar is
 * the ISA every CPU has, so the accepting tests run anywhere. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "tests/cli_run.h"
#include "tests/report_testutil.h"

static struct cli_result r;

/* The commands, each with the options it needs to get as far as running kernels. */
static const char *const isa_cmds[] = {
    "--model tests/fixtures/tiny-qwen3 --quick --context 1 --no-plots --out /nonexistent-fr-isa",
    "decode --model tests/fixtures/tiny-qwen3 --prompt-ids 1,2 --max-new 2",
    "verify --only kernels",
    "machine --test-sizes",
    "sample --bench --vocab 1000 --no-sort",
};
#define N_CMDS (sizeof isa_cmds / sizeof isa_cmds[0])

/* Every command: `--isa NAME` added to it, run as a usage error (exit 2, one line naming what is wrong). */
static void expect_refused(const char *name, const char *why) {
    for (size_t i = 0; i < N_CMDS; i++) {
        char args[512];
        snprintf(args, sizeof args, "%s --isa %s", isa_cmds[i], name);
        cli_expect_usage_errors(1, (const char *const[]){args}, 1);
        cli_run(&r, 1, args);
        cr_expect(strstr(r.err, why), "'%s': stderr '%s' lacks '%s'", args, r.err, why);
    }
}

Test(cli_isa, an_isa_the_cpu_lacks_is_refused_by_every_command, .timeout = 60) {
    cr_assert_eq(setenv(KERNEL_ISA_MAX_ENV, "scalar", 1), 0); /* inherited by the commands run below */
    expect_refused("avx2", "--isa avx2: this CPU lacks it");
    expect_refused("avx512", "--isa avx512: this CPU lacks it");
}

Test(cli_isa, an_unknown_isa_is_refused_by_every_command, .timeout = 60) {
    expect_refused("sse9", "--isa must be scalar, avx2 or avx512 (got 'sse9')");
    expect_refused("AVX2", "got 'AVX2'");
}

Test(cli_isa, a_bad_cap_is_refused) {
    cr_assert_eq(setenv(KERNEL_ISA_MAX_ENV, "avx3", 1), 0);
    cli_expect_usage_errors(1, (const char *const[]){"verify --only kernels"}, 1);
}

Test(cli_isa, isa_with_openblas_gemv_is_refused) {
    const char *const cmds[] = {
        "--model tests/fixtures/tiny-qwen3 --quick --gemv openblas --isa scalar",
        "decode --model tests/fixtures/tiny-qwen3 --prompt-ids 1 --max-new 1 --gemv openblas --isa scalar",
        "decode --model tests/fixtures/tiny-qwen3 --prompt-ids 1 --max-new 1 --gemv onednn --isa scalar",
    };
    cli_expect_usage_errors(1, cmds, 3);
}

Test(cli_isa, decode_names_the_isa_it_runs, .timeout = 60) {
    cli_run(&r, 0, "decode --model tests/fixtures/tiny-qwen3 --prompt-ids 1,2 --max-new 3 --isa scalar");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.err, "isa scalar,"), "setup line: %s", r.err);
    /* the same tokens on the best ISA: the pinned path is a real path, not a different model */
    static char scalar_out[sizeof r.out];
    memcpy(scalar_out, r.out, sizeof r.out);
    cli_run(&r, 0, "decode --model tests/fixtures/tiny-qwen3 --prompt-ids 1,2 --max-new 3");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, scalar_out);
}

Test(cli_isa, verify_runs_on_the_pinned_isa, .timeout = 60) {
    cli_run(&r, 0, "verify --only kernels --isa scalar");
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "kernels isa scalar, sampler isa scalar"), "%s", r.out);
    cr_expect(strstr(r.out, "on scalar:"), "checks name the ISA they ran on: %s", r.out);
    cr_expect(!strstr(r.out, "on avx2:") && !strstr(r.out, "on avx512:"), "%s", r.out);
}

/* Unpinned, verify checks every kernel on every ISA the CPU runs, scalar first, as it does the sampler. */
Test(cli_isa, verify_checks_every_isa_of_the_cpu, .timeout = 60) {
    char isas[64] = "", want[80];
    size_t len = 0;
    for (int i = 0; i < KERNEL_ISA_COUNT; i++)
        if (kernel_isa_force((enum kernel_isa)i) == 0)
            len += (size_t)snprintf(isas + len, sizeof isas - len, "%s%s", len ? "+" : "",
                                    kernel_isa_name((enum kernel_isa)i));
    kernel_isa_force(KERNEL_ISA_COUNT);
    snprintf(want, sizeof want, " on %s: max error ", isas);
    cli_run(&r, 0, "verify --only kernels");
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    int lines = 0, named = 0;
    for (const char *at = strstr(r.out, "\nkernels."); at; at = strstr(at + 1, "\nkernels.")) {
        const char *end = strchr(at + 1, '\n');
        const char *hit = strstr(at, want);
        lines++;
        named += hit && (!end || hit < end);
    }
    cr_expect(lines > 0 && named == lines, "%d of %d kernel checks ran on %s: %s", named, lines, isas, r.out);
}

Test(cli_isa, machine_pins_its_ceiling_kernels, .timeout = 120) {
    cli_run(&r, 1, "machine --test-sizes --format json --isa scalar");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cJSON *j = cJSON_Parse(r.out);
    cr_assert(j, "not JSON: %s", r.out);
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "setup"), "isa")->valuestring, "scalar");
    cJSON *c = cJSON_GetObjectItem(j, "ceilings");
    cr_expect_str_eq(cJSON_GetObjectItem(c, "read_isa")->valuestring, "scalar");
    cr_expect_str_eq(cJSON_GetObjectItem(c, "fma_isa")->valuestring, "scalar");
    cJSON_Delete(j);
    cli_run(&r, 1, "machine --test-sizes --isa scalar");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "| isa | scalar"), "%s", r.out);
}

Test(cli_isa, sample_names_the_isa_it_runs, .timeout = 60) {
    cli_run(&r, 1, "sample --bench --vocab 1000 --no-sort --isa scalar");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "# sampler benchmark: isa scalar,"), "%s", r.out);
}

Test(cli_isa, the_full_run_records_its_isa, .timeout = 240) {
    char parent[] = "/tmp/fr-isa-XXXXXX";
    cr_assert(mkdtemp(parent));
    char args[256];
    snprintf(args, sizeof args,
             "--model tests/fixtures/tiny-qwen3 --quick --test-sizes --context 1 --no-plots --no-history "
             "--isa scalar "
             "--out %s",
             parent);
    cli_run(&r, 1, args);
    cr_assert_eq(r.status, 0, "run failed: %s", r.err);
    char dir[512];
    cli_find_run(parent, dir, sizeof dir);
    char *text = tu_slurp(dir, "run.json");
    cJSON *j = cJSON_Parse(text);
    cr_assert(j, "run.json is not JSON");
    cJSON *prov = cJSON_GetObjectItem(j, "provenance");
    cr_expect_str_eq(cJSON_GetObjectItem(prov, "isa")->valuestring, "scalar");
    cr_expect_str_eq(cJSON_GetObjectItem(prov, "gemv_backend")->valuestring, "scalar");
    cJSON_Delete(j);
    free(text);
    char *md = tu_slurp(dir, "report.md");
    cr_expect(strstr(md, ", isa scalar,"), "report.md setup line lacks the isa");
    free(md);
    cr_expect(strstr(r.out, ", isa scalar,"), "the setup line on stdout lacks the isa: %s", r.out);
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", parent);
    cr_expect_eq(system(rm), 0);
}
