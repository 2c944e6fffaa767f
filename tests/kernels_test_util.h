/* Shared helpers of tests/test_kernels_*.c: a seeded generator, the ISA loop, and one closeness check
 * |got - ref| <= atol + rtol * |ref| that logs the first mismatches and the max error on failure. */
#ifndef FR_KERNELS_TEST_UTIL_H
#define FR_KERNELS_TEST_UTIL_H

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"

/* f32 unit roundoff */
#define TEST_U32 (1.0 / 16777216.0)

struct test_rng {
    uint64_t s;
};

static inline uint64_t test_rng_next(struct test_rng *r) { /* splitmix64 */
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform in [lo, hi) */
static inline float test_rng_uniform(struct test_rng *r, float lo, float hi) {
    return lo + (hi - lo) * (float)((double)(test_rng_next(r) >> 11) * 0x1.0p-53);
}

static inline void test_fill(struct test_rng *r, float *x, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++) x[i] = test_rng_uniform(r, lo, hi);
}

static inline void test_fill_bf16(struct test_rng *r, uint16_t *x, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++) x[i] = bf16_from_f32(test_rng_uniform(r, lo, hi));
}

static inline void *test_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    cr_assert_not_null(p, "out of memory (%zu bytes)", bytes);
    return p;
}

/* Checks got against ref elementwise; tol_abs may be NULL (then atol applies to all). Returns 1 if all
 * pass. On failure logs up to 5 mismatches and the largest error, labelled with `what`. */
static inline int test_close(const char *what, const float *got, const float *ref, size_t n, double atol,
                             double rtol, const double *tol_abs) {
    size_t bad = 0;
    double max_err = 0.0;
    size_t max_i = 0;
    for (size_t i = 0; i < n; i++) {
        double err = fabs((double)got[i] - (double)ref[i]);
        double tol = (tol_abs ? tol_abs[i] : atol) + rtol * fabs((double)ref[i]);
        if (!(err <= tol)) {
            if (bad < 5)
                cr_log_error("%s: [%zu] got %.9g ref %.9g err %.3g tol %.3g", what, i, (double)got[i],
                             (double)ref[i], err, tol);
            bad++;
        }
        if (err > max_err || isnan(err)) {
            max_err = err;
            max_i = i;
        }
    }
    if (bad) cr_log_error("%s: %zu of %zu mismatches, max error %.3g at [%zu]", what, bad, n, max_err, max_i);
    return bad == 0;
}

/* Why this process cannot run isa's kernels: the CPU lacks it, or KERNEL_ISA_MAX_ENV caps it. */
static inline const char *test_isa_why_not(void) {
    const char *cap = getenv(KERNEL_ISA_MAX_ENV);
    return cap && *cap ? "capped by " KERNEL_ISA_MAX_ENV : "this CPU lacks it";
}

/* Forces isa for the rest of the test, or skips the test with the reason, so Criterion's Synthesis line
 * counts what this machine did not test (a machine without AVX-512 shows its AVX-512 tests as skipped). */
static inline void test_isa_require(enum kernel_isa isa) {
    if (kernel_isa_force(isa) != 0)
        cr_skip_test("%s kernels not tested: %s", kernel_isa_name(isa), test_isa_why_not());
}

/* Forces isa and returns 1, or returns 0 where the CPU lacks it. The ISA left out is said under --verbose
 * only: the skipped per-ISA tests of tests/test_kernels_check.c name it once in the [SKIP] line, and a
 * cr_log_warn here would make Criterion 2.4 exit 1 on every CPU without AVX-512 (tests/test_note.h). */
static inline int test_isa_enter(enum kernel_isa isa) {
    if (kernel_isa_force(isa) == 0) return 1;
    cr_log_info("%s kernels not tested here: %s", kernel_isa_name(isa), test_isa_why_not());
    return 0;
}

/* Runs BODY once per ISA the CPU supports, with `isa` set and forced; restores the best ISA after. An ISA
 * the CPU lacks is left out (test_isa_enter); the per-ISA tests of
 * tests/test_kernels_check.c carry the skipped count. */
#define FOR_EACH_ISA(isa)                                                                                    \
    for (enum kernel_isa isa = KERNEL_ISA_SCALAR;                                                            \
         isa < KERNEL_ISA_COUNT || (kernel_isa_force(KERNEL_ISA_COUNT), 0);                                  \
         isa = (enum kernel_isa)(isa + 1))                                                                   \
        if (test_isa_enter(isa))

#endif
