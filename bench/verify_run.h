/* Runs every verify check, the sampler's table (bench/verify_checks.h), the decode kernels' table
 * (kernels/kernels_check.h) and the quantised decodes against bf16 (bench/quant_fidelity.h), printing one
 * line per check that ends PASSED, FAILED, SKIPPED or MEASURED. */
#ifndef FR_VERIFY_RUN_H
#define FR_VERIFY_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "bench/quant_fidelity.h"
#include "bench/verify_checks.h"

/* The model the decode checks (decode.q8_0_vs_bf16, decode.q4_0_vs_bf16) decode. */
struct verify_model {
    const struct qwen3_config *cfg;
    const char *weights_file; /* NULL: synthetic weights from seed */
    uint64_t seed;
    const int *prompt; /* the fixed prompt's ids */
    int prompt_len;
    enum fr_dtype kv;
    const char *skip_why;          /* non-NULL: the decode checks are SKIPPED for this reason */
    struct quant_fidelity *result; /* filled when they run (may be NULL) */
};

/* Checks whose name starts with `only` (NULL: all), their kernels on `threads` threads; the decode checks
 * on `model` (NULL: SKIPPED). counts[VERIFY_PASSED..VERIFY_MEASURED] are filled. Returns the number of
 * checks that matched. */
int verify_run(FILE *out, const char *only, int threads, const struct verify_model *model,
               int counts[VERIFY_STATUS_COUNT]);
/* Whether a check of the decode comparisons matches `only` (NULL: all): the command needs a model then. */
bool verify_wants_model(const char *only);
/* How many checks' names start with `only` (NULL: all), without running them. */
int verify_count(const char *only);
/* Prints every check's name, one a line. */
void verify_list(FILE *out);

#endif
