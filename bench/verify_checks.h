/* The checks `forge-roofline verify` runs: a table, so other modules (the decode kernels) add rows.
 * Each check writes a one-line detail (what was compared, the measured error) and returns its status. */
#ifndef FR_VERIFY_CHECKS_H
#define FR_VERIFY_CHECKS_H

#include <stddef.h>
#include <stdint.h>

enum verify_status { VERIFY_PASSED, VERIFY_FAILED, VERIFY_SKIPPED };

struct verify_check {
    const char *name;
    enum verify_status (*run)(char *detail, size_t cap);
};

extern const struct verify_check verify_checks[];
extern const int verify_check_count;

const char *verify_status_name(enum verify_status s);

/* Random123's kat_vectors for philox4x32 10: ctr[4], key[2], expected out[4] (shared with the tests) */
extern const uint32_t verify_philox_kat[3][10];

#endif
