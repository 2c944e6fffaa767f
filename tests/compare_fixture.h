/* Shared by the compare verdict tests (test_compare_verdict.c, test_compare_lockstep.c): a report fixture
 * with two empty sides to fill, the verdicts decided on them, and seeded normal draws from the project's
 * counter-based generator. */
#ifndef FR_TESTS_COMPARE_FIXTURE_H
#define FR_TESTS_COMPARE_FIXTURE_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "bench/report/compare_verdict.h"
#include "kernels/sampler.h"
#include "tests/report_fixture.h"

static inline double compare_fixture_normal(uint64_t seed, uint64_t *ctr) {
    double u1 = 1 - sampler_uniform(seed, (*ctr)++), u2 = sampler_uniform(seed, (*ctr)++);
    return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

struct fixture {
    struct run_report *r;
    struct compare_side a, b;
    struct compare_verdicts *v;
};

static inline void setup(struct fixture *f) {
    f->r = calloc(1, sizeof *f->r);
    f->v = calloc(1, sizeof *f->v);
    cr_assert(f->r && f->v);
    report_fixture_fill(f->r, 1.0);
    f->a = f->b = (struct compare_side){0};
}

static inline void teardown(struct fixture *f) {
    compare_side_free(&f->a);
    compare_side_free(&f->b);
    free(f->r);
    free(f->v);
}

/* the verdicts of f's two sides, on the raw ratio when raw */
static inline void decide(struct fixture *f, bool raw) {
    struct fr_err err = {{0}};
    const struct compare_opts o = {COMPARE_THRESHOLD_DEFAULT, raw};
    cr_assert_eq(compare_verdicts_compute(f->r, &f->a, &f->b, &o, f->v, &err), 0, "%s", err.msg);
}

#endif
