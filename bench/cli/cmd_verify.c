/* forge-roofline verify: runs the check tables of bench/verify_checks.c and kernels/kernels_check.c; one line
 * per check ending PASSED, FAILED or SKIPPED, then a summary. Exit status 1 if any check failed (STREAM's
 * lesson: a failed validation never exits 0). Checked end to end in tests/test_sampler_cli.c. */
#include <stdio.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "roofline/timing.h"
#include "bench/verify_run.h"
#include "kernels/kernels.h"
#include "kernels/sampler.h"
#include "kernels/team.h"

int cmd_verify(int argc, char **argv) {
    const char *only = NULL, *isa = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: forge-roofline verify [--only PREFIX] [--list] [--isa scalar|avx2|avx512]\n"
                   "Checks every optimized kernel against its reference on seeded data; exit status 1 on any "
                   "failure.\n  --isa NAME: " CLI_ISA_HELP "; the sampler's cross-ISA checks run the sets up "
                   "to it\n");
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--list") == 0) {
            verify_list(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
            isa = argv[++i];
        } else {
            return cli_usage_error("verify: unknown option '%s' (try --help)", argv[i]);
        }
    }
    int rc = cli_isa_apply("verify: ", isa, false);
    if (rc) return rc;
    if (verify_count(only) == 0) return cli_usage_error("verify: no check matches '%s' (try --list)", only);
    const int threads = kernel_team_procs(); /* one per processor, as OpenMP's default team */
    printf("# forge-roofline verify: kernels isa %s, sampler isa %s, %d thread%s, timer resolution %.0f ns\n",
           kernel_isa_name(kernel_isa_active()), sampler_isa_name(sampler_isa_active()), threads,
           threads == 1 ? "" : "s", timing_resolution_s() * 1e9);
    int counts[3];
    verify_run(stdout, only, threads, counts);
    printf("verify: %d passed, %d failed, %d skipped\n", counts[VERIFY_PASSED], counts[VERIFY_FAILED],
           counts[VERIFY_SKIPPED]);
    return counts[VERIFY_FAILED] ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
