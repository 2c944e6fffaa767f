/* The checks `forge-roofline verify` runs: a table, so other modules (the decode kernels) add rows.
 * Each check writes a one-line detail (what was compared, the measured error) and returns its status. */
#ifndef FR_VERIFY_CHECKS_H
#define FR_VERIFY_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"

/* MEASURED: a line of figures, not a comparison with a tolerance (the quantised decodes against bf16): it
 * fails only on something wrong whatever the figures (bench/quant_fidelity.h). */
enum verify_status { VERIFY_PASSED, VERIFY_FAILED, VERIFY_SKIPPED, VERIFY_MEASURED, VERIFY_STATUS_COUNT };

struct verify_check {
    const char *name;
    enum verify_status (*run)(char *detail, size_t cap, int threads); /* threads: the run's */
};

extern const struct verify_check verify_checks[];
extern const int verify_check_count;

const char *verify_status_name(enum verify_status s);

/* The instruction sets this CPU runs from scalar up to the kernels' active one (--isa caps it), each tried
 * with `force` (kernel_isa_force or sampler_isa_force), which is left on the active one; their count, and
 * their names joined by '+' in what[cap] ("scalar+avx2+avx512"). */
int verify_isa_list(int (*force)(enum kernel_isa), enum kernel_isa *isas, char *what, size_t cap);

/* Random123's kat_vectors for philox4x32 10: ctr[4], key[2], expected out[4] (shared with the tests) */
extern const uint32_t verify_philox_kat[3][10];

#endif
