/* forge-roofline list names every counter event a run would try, and for each one this machine cannot
 * count, PAPI's reason (an empty reason or a missing event fails). Whatever this machine offers: counted
 * rows need no reason, refused rows must carry one. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cli_run.h"

static struct cli_result r;

/* The table row of an event: "| name | yes |" or "| name | no | reason |". */
static void expect_event_row(const char *out, const char *name) {
    char head[128];
    snprintf(head, sizeof head, "\n| %s | ", name);
    const char *row = strstr(out, head);
    cr_assert(row, "no row for %s in:\n%.2000s", name, out);
    row += strlen(head);
    if (strncmp(row, "yes |", 5) == 0) return;
    cr_assert(strncmp(row, "no | ", 5) == 0, "row of %s: %.80s", name, row);
    cr_expect(row[5] != '|' && row[5] != '\n', "%s is refused without a reason", name);
}

Test(cli_list, counter_events_with_reasons) {
    cli_run(&r, 1, "list");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "## counter events"), "%.300s", r.out);
    static const char *const events[] = {"PAPI_TOT_CYC",         "PAPI_TOT_INS",
                                         "PAPI_L3_TCM",          "PAPI_SP_OPS",
                                         "perf::TASK-CLOCK",     "perf::CONTEXT-SWITCHES",
                                         "perf::CPU-MIGRATIONS", "perf::PAGE-FAULTS",
                                         "perf::MAJOR-FAULTS",   "rusage::INVOLUNTARY-SWITCHES"};
    for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) expect_event_row(r.out, events[i]);
    cr_assert(strstr(r.out, "## energy events"), "%.300s", r.out);
    expect_event_row(r.out, "rapl:::PACKAGE_ENERGY:PACKAGE0");
    expect_event_row(r.out, "rapl:::DRAM_ENERGY:PACKAGE0");
}
