/* Findings: the few lines a reviewer pastes first, computed from a run's numbers (never typed by hand).
 *
 *   report_findings_run    at most eleven lines for one run: outside load first when
 *                          it touched the headline rows, tokens/s and percent of the roof per context,
 *                          the three blocks that lose the most time against their roofs, the sampler's
 *                          share of the step, accounting errors, the self-check (blocks alone
 *                          against the step) and noisy measurements by name
 *   report_findings_md     writes them as a markdown list (report.md opens with it, the stdout summary
 *                          ends with it)
 *
 * compare's two-run lines (bench/report/compare.h) are built with the same struct. */
#ifndef FR_FINDINGS_H
#define FR_FINDINGS_H

#include <stdio.h>

#include "bench/report/report.h"

#define REPORT_FINDINGS_MAX                                                                                  \
    10 /* a run's: steps, 3 lost, sampler, accounting, self-check, noise,                                    \
        * disturbed, cores */
#define REPORT_FINDING_LEN 768

struct report_findings {
    int n;
    char line[REPORT_FINDINGS_MAX][REPORT_FINDING_LEN]; /* one finding each, no line end */
};

/* Appends one line (printf-style); a line past REPORT_FINDINGS_MAX is dropped. */
__attribute__((format(printf, 2, 3))) void report_findings_add(struct report_findings *f, const char *fmt,
                                                               ...);

/* A comma-separated list of names that stops at `cap` names and says how many more there were. */
struct report_namelist {
    char text[REPORT_FINDING_LEN / 2];
    int count, cap;
};
__attribute__((format(printf, 2, 3))) void report_namelist_add(struct report_namelist *l, const char *fmt,
                                                               ...);
/* The list as text: "a, b, c and 4 more"; "" when empty. */
void report_namelist_text(const struct report_namelist *l, char *out, size_t len);

void report_findings_run(const struct run_report *r, struct report_findings *out);

/* "- line\n" for each line, then a blank line. */
void report_findings_md(const struct report_findings *f, FILE *out);

#endif
