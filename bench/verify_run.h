/* Runs every verify check, the sampler's table (bench/verify_checks.h) and the decode kernels' table
 * (kernels/kernels_check.h), printing one line per check that ends PASSED, FAILED or SKIPPED. */
#ifndef FR_VERIFY_RUN_H
#define FR_VERIFY_RUN_H

#include <stdio.h>

#include "bench/verify_checks.h"

/* Checks whose name starts with `only` (NULL: all), their kernels on `threads` threads.
 * counts[VERIFY_PASSED..VERIFY_SKIPPED] are filled. Returns the number of checks that matched. */
int verify_run(FILE *out, const char *only, int threads, int counts[3]);
/* How many checks' names start with `only` (NULL: all), without running them. */
int verify_count(const char *only);
/* Prints every check's name, one a line. */
void verify_list(FILE *out);

#endif
