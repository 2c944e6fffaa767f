/* timing_measure_pair and timing_measure_with: the functions alternate run for run, warm-up included, each
 * with its own statistics over the same number of runs. */
#include <criterion/criterion.h>
#include <time.h>

#include "roofline/timing.h"

struct trace {
    char who[64];
    long rep[64];
    int n;
};

static void record(void *ctx, char who, long rep) {
    struct trace *t = ctx;
    if (t->n < 64) t->who[t->n] = who, t->rep[t->n++] = rep;
}

static void call_a(void *ctx, long rep) {
    record(ctx, 'a', rep);
}

static void call_b(void *ctx, long rep) {
    record(ctx, 'b', rep);
}

static void call_c(void *ctx, long rep) {
    record(ctx, 'c', rep);
}

/* c's untimed `before` (an eviction, in the benchmarks): 3 ms that c's times must not hold */
static void call_x(void *ctx, long rep) {
    record(ctx, 'x', rep);
    nanosleep(&(struct timespec){0, 3000000}, NULL);
}

Test(timing, pair_alternates) {
    struct trace t = {0};
    struct timing_opts o = {.warmup = 2, .min_reps = 5, .max_reps = 5};
    struct timing_stats sa, sb;
    double ratio = -1;
    cr_assert_eq(timing_measure_pair(call_a, &t, call_b, &t, &o, &sa, &sb, &ratio), 0);
    cr_expect_eq(t.n, 14);
    for (int i = 0; i < t.n; i++) {
        cr_expect_eq(t.who[i], i % 2 ? 'b' : 'a', "call %d", i);
        cr_expect_eq(t.rep[i], i / 2, "call %d", i);
    }
    cr_expect_eq(sa.reps, 5);
    cr_expect_eq(sb.reps, 5);
    cr_expect_leq(sa.min_s, sa.median_s);
    cr_expect_leq(sb.median_s, sb.max_s);
    cr_expect_geq(ratio, 0);
    cr_expect_eq(timing_measure_pair(call_a, &t, call_b, &t, &o, &sa, &sb, NULL), 0, "the ratio is optional");
}

Test(timing, partners_follow_in_turn) {
    struct trace t = {0};
    struct timing_opts o = {.warmup = 1, .min_reps = 4, .max_reps = 4};
    struct timing_stats sa, sb, sc;
    double rb = -1, rc = -1;
    const struct timing_partner p[2] = {{call_b, &t, &sb, &rb, NULL, NULL},
                                        {call_c, &t, &sc, &rc, call_x, &t}};
    cr_assert_eq(timing_measure_with(call_a, &t, p, 2, &o, &sa), 0);
    cr_expect_eq(t.n, 20, "a, b, then c after its `before`, in the warm-up and in each of the 4 repetitions");
    for (int i = 0; i < t.n; i++) {
        cr_expect_eq(t.who[i], "abxc"[i % 4], "call %d", i);
        cr_expect_eq(t.rep[i], i / 4, "call %d", i);
    }
    cr_expect_eq(sa.reps, 4);
    cr_expect_eq(sb.reps, 4);
    cr_expect_eq(sc.reps, 4);
    cr_expect_geq(rb, 0);
    cr_expect_geq(rc, 0);
    cr_expect_lt(sc.median_s, 0.002, "c's `before` runs outside its timed window (median %g s)", sc.median_s);
    cr_expect_neq(timing_measure_with(call_a, &t, p, TIMING_PARTNERS_MAX + 1, &o, &sa), 0,
                  "more partners than TIMING_PARTNERS_MAX are refused");
}
