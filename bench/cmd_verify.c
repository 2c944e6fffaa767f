/* forge-roofline verify: runs the check table of bench/verify_checks.c; one line per check ending PASSED,
 * FAILED or SKIPPED, then a summary. Exit status 1 if any check failed (STREAM's lesson: a failed
 * validation never exits 0). Checked end to end in tests/test_sampler_cli.c. */
#include <stdio.h>
#include <string.h>

#include "bench/cli.h"
#include "bench/timing.h"
#include "bench/verify_checks.h"
#include "kernels/sampler.h"

int cmd_verify(int argc, char **argv) {
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: forge-roofline verify [--only PREFIX] [--list]\n"
                   "Checks every optimized kernel against its reference on seeded data; exit status 1 on any "
                   "failure.\n");
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--list") == 0) {
            for (int c = 0; c < verify_check_count; c++) printf("%s\n", verify_checks[c].name);
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else {
            return cli_usage_error("verify: unknown option '%s' (try --help)", argv[i]);
        }
    }
    int matched = 0;
    for (int c = 0; c < verify_check_count; c++)
        matched += !only || strncmp(verify_checks[c].name, only, strlen(only)) == 0;
    if (!matched) return cli_usage_error("verify: no check matches '%s' (try --list)", only);

    printf("# forge-roofline verify: sampler isa %s, timer resolution %.0f ns\n",
           sampler_isa_name(sampler_isa_best()), timing_resolution_s() * 1e9);
    int counts[3] = {0, 0, 0};
    for (int c = 0; c < verify_check_count; c++) {
        if (only && strncmp(verify_checks[c].name, only, strlen(only)) != 0) continue;
        char detail[512];
        double t0 = timing_now_s();
        enum verify_status s = verify_checks[c].run(detail, sizeof detail);
        counts[s]++;
        printf("%-18s %s (%.1f s)  %s\n", verify_checks[c].name, detail, timing_now_s() - t0,
               verify_status_name(s));
        fflush(stdout);
    }
    printf("verify: %d passed, %d failed, %d skipped\n", counts[VERIFY_PASSED], counts[VERIFY_FAILED],
           counts[VERIFY_SKIPPED]);
    return counts[VERIFY_FAILED] ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
