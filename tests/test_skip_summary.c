/* Criterion 2.4 leaves skipped tests out of its Synthesis line and prints nothing for them by default, so a
 * machine that cannot run some tests (no AVX-512, no OpenBLAS pthreads build, ...) would pass in silence.
 * These report hooks, run in Criterion's runner process, collect every test skipped at run time (not the
 * ones --filter disables) and print them, with their reasons, and their count just before the Synthesis
 * line: "[SKIP] 2 tests skipped: kernels_check::all_pass_avx512 (avx512 kernels not tested: ...); ...". */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>
#include <string.h>

#define SKIP_SUMMARY_MAX 64

static char skipped[SKIP_SUMMARY_MAX][256];
static size_t n_skipped;

ReportHook(POST_TEST)(struct criterion_test_stats *stats) {
    if (stats->test_status != CR_STATUS_SKIPPED) return;
    if (stats->test->data && stats->test->data->disabled) return; /* filtered out, not skipped */
    if (stats->message && strcmp(stats->message, "Test is disabled") == 0) return;
    if (n_skipped < SKIP_SUMMARY_MAX)
        snprintf(skipped[n_skipped], sizeof skipped[0], "%s::%s (%s)", stats->test->category,
                 stats->test->name, stats->message ? stats->message : "no reason given");
    n_skipped++;
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats) {
    (void)stats;
    if (n_skipped == 0) return;
    fprintf(stderr, "[SKIP] %zu test%s skipped:", n_skipped, n_skipped == 1 ? "" : "s");
    for (size_t i = 0; i < n_skipped && i < SKIP_SUMMARY_MAX; i++)
        fprintf(stderr, "%s %s", i ? ";" : "", skipped[i]);
    fprintf(stderr, "\n");
}
