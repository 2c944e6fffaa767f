/* Roofline arithmetic against hand-computed numbers. Roof: 100 GFLOP/s, 25 GB/s, so the ridge is at
 * 4 FLOP/byte. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "roofline/roofline.h"

static const struct roofline roof = {.peak_gflops = 100, .bw_gbs = 25, .above_roof_tol = 0};

Test(roofline, ridge_and_attainable) {
    cr_expect_float_eq(roofline_ridge_ai(&roof), 4.0, 1e-12);
    cr_expect_float_eq(roofline_attainable_gflops(&roof, 0.5), 12.5, 1e-12); /* 25 * 0.5 */
    cr_expect_float_eq(roofline_attainable_gflops(&roof, 4.0), 100.0, 1e-12);
    cr_expect_float_eq(roofline_attainable_gflops(&roof, 10.0), 100.0, 1e-12);
}

Test(roofline, predicted_time) {
    /* 1e9 bytes at 25 GB/s = 0.04 s; 1e9 flops at 100 GFLOP/s = 0.01 s: memory wins. */
    cr_expect_float_eq(roofline_predicted_s(&roof, 1e9, 1e9), 0.04, 1e-15);
    /* 1e10 flops = 0.1 s over 1e9 bytes = 0.04 s: compute wins. */
    cr_expect_float_eq(roofline_predicted_s(&roof, 1e10, 1e9), 0.1, 1e-15);
}

Test(roofline, matvec_point_memory_bound) {
    /* A bf16 matvec 1024 x 3072: 2 * 1024 * 3072 flops, 2 bytes per weight: AI = 1 FLOP/byte. */
    struct roofline_point p = {.flops = 2.0 * 1024 * 3072, .bytes = 2.0 * 1024 * 3072, .seconds = 0.0005};
    struct roofline_eval e;
    cr_assert_eq(roofline_evaluate(&roof, &p, &e, NULL), 0);
    cr_expect_float_eq(e.ai, 1.0, 1e-12);
    cr_expect_eq(e.bound, ROOFLINE_MEMORY_BOUND);
    cr_expect_float_eq(e.attainable_gflops, 25.0, 1e-12);
    cr_expect_float_eq(e.predicted_s, 6291456.0 / 25e9, 1e-15);         /* 251.65824 us */
    cr_expect_float_eq(e.efficiency, 6291456.0 / 25e9 / 0.0005, 1e-12); /* 0.50331648 */
    cr_expect_float_eq(e.achieved_gbs, 6291456.0 / 0.0005 / 1e9, 1e-9);
    cr_expect(e.measured);
    cr_expect_not(e.above_roof);
    cr_expect_str_eq(roofline_bound_name(e.bound), "memory");
}

Test(roofline, compute_bound_and_above_roof) {
    /* 8 FLOP/byte: compute-bound; 1e9 flops at 100 GFLOP/s need 0.01 s; 0.008 s is faster than the roof. */
    struct roofline_point p = {.flops = 1e9, .bytes = 1.25e8, .seconds = 0.008};
    struct roofline_eval e;
    cr_assert_eq(roofline_evaluate(&roof, &p, &e, NULL), 0);
    cr_expect_eq(e.bound, ROOFLINE_COMPUTE_BOUND);
    cr_expect_float_eq(e.efficiency, 1.25, 1e-12);
    cr_expect(e.above_roof);
    /* A tolerance of 30 % accepts it; one of 20 % does not. */
    struct roofline loose = roof;
    loose.above_roof_tol = 0.3;
    cr_assert_eq(roofline_evaluate(&loose, &p, &e, NULL), 0);
    cr_expect_not(e.above_roof);
    loose.above_roof_tol = 0.2;
    cr_assert_eq(roofline_evaluate(&loose, &p, &e, NULL), 0);
    cr_expect(e.above_roof);
}

Test(roofline, edges_and_errors) {
    struct roofline_eval e;
    struct fr_err err = {{0}};
    /* The ridge itself counts as memory-bound; no bytes means infinite AI, compute-bound. */
    struct roofline_point ridge = {.flops = 4e9, .bytes = 1e9};
    cr_assert_eq(roofline_evaluate(&roof, &ridge, &e, &err), 0);
    cr_expect_eq(e.bound, ROOFLINE_MEMORY_BOUND);
    cr_expect_not(e.measured);
    cr_expect_eq(e.efficiency, 0);
    struct roofline_point nobytes = {.flops = 1e6, .bytes = 0};
    cr_assert_eq(roofline_evaluate(&roof, &nobytes, &e, &err), 0);
    cr_expect(isinf(e.ai));
    cr_expect_eq(e.bound, ROOFLINE_COMPUTE_BOUND);
    struct roofline_point nothing = {0};
    cr_expect_neq(roofline_evaluate(&roof, &nothing, &e, &err), 0);
    struct roofline_point negative = {.flops = -1, .bytes = 10};
    cr_expect_neq(roofline_evaluate(&roof, &negative, &e, &err), 0);
    struct roofline_point nan_time = {.flops = 1, .bytes = 1, .seconds = NAN};
    cr_expect_neq(roofline_evaluate(&roof, &nan_time, &e, &err), 0);
    struct roofline bad = {.peak_gflops = 0, .bw_gbs = 25};
    struct roofline_point ok = {.flops = 1, .bytes = 1};
    cr_expect_neq(roofline_evaluate(&bad, &ok, &e, &err), 0);
    cr_expect(strstr(err.msg, "peak"), "message: %s", err.msg);
}

Test(roofline, split_prediction_by_hand) {
    /* 1 GB from DRAM at 25 GB/s (40 ms) + 0.1 GB from cache at 200 GB/s (0.5 ms) vs 1 GFLOP at 200 GFLOP/s */
    struct roofline r = {.peak_gflops = 200, .bw_gbs = 25, .cache_gbs = 200};
    enum roofline_bound b;
    cr_expect_float_eq(roofline_predicted_split_s(&r, 1e9, 1e9, 1e8, &b), 0.0405, 1e-12);
    cr_expect_eq(b, ROOFLINE_MEMORY_BOUND);
    /* 20 GFLOP take 100 ms: compute-bound */
    cr_expect_float_eq(roofline_predicted_split_s(&r, 2e10, 1e9, 1e8, &b), 0.1, 1e-12);
    cr_expect_eq(b, ROOFLINE_COMPUTE_BOUND);
}

/* ---- the cache-aware prediction: rates chosen so every term is a round number ---- */
static const struct roofline_rates rates_all = {.level_gbs = {20, 400, 200, 100},
                                                .peak_gflops = 200,
                                                .exp_gexps = 10,
                                                .call_s = 1e-7,
                                                .fork_s = 1e-6,
                                                .barrier_s = 2.5e-7};
static const struct roofline_rates rates_one = {
    .level_gbs = {10, 200, 100, 50}, .peak_gflops = 100, .exp_gexps = 5, .call_s = 1e-7, .fork_s = 5e-7};

Test(roofline, predict_terms_and_bound) {
    /* serial: 2000 B at L1 200 GB/s = 10 ns; 1000 B at L2 100 GB/s = 10 ns; 5000 exps at 5 Gexp/s = 1 us;
     * 3 calls x 100 ns = 300 ns: exp binds at 1 us */
    struct roofline_work w = {.level_bytes = {0, 2000, 1000, 0}, .flops = 1000, .exps = 5000, .calls = 3};
    struct roofline_prediction p;
    struct fr_err err = {{0}};
    cr_assert_eq(roofline_predict(&rates_all, &rates_one, &w, &p, &err), 0, "%s", err.msg);
    cr_expect_float_eq(p.term_s[ROOFLINE_TERM_L1], 1e-8, 1e-20);
    cr_expect_float_eq(p.term_s[ROOFLINE_TERM_L2], 1e-8, 1e-20);
    cr_expect_float_eq(p.term_s[ROOFLINE_TERM_FMA], 1e-8, 1e-20);
    cr_expect_float_eq(p.term_s[ROOFLINE_TERM_EXP], 1e-6, 1e-18);
    cr_expect_float_eq(p.term_s[ROOFLINE_TERM_OVERHEAD], 3e-7, 1e-18);
    cr_expect_float_eq(p.levels_sum_s, 2e-8, 1e-20);
    cr_expect_eq(p.bound, ROOFLINE_TERM_EXP);
    cr_expect_float_eq(p.predicted_s, 1e-6, 1e-18);
    cr_expect_str_eq(roofline_term_name(p.bound), "exp");
    cr_expect_eq(p.second, ROOFLINE_TERM_OVERHEAD, "the largest of the other terms");
    cr_expect_float_eq(p.second_s, 3e-7, 1e-18);
    /* parallel: the all-threads rates; 1e6 DRAM bytes at 20 GB/s = 50 us beats 2 forks x 1 us */
    struct roofline_work mv = {.level_bytes = {1e6, 4000, 0, 0}, .flops = 1e6, .forks = 2, .parallel = true};
    cr_assert_eq(roofline_predict(&rates_all, &rates_one, &mv, &p, &err), 0, "%s", err.msg);
    cr_expect_eq(p.bound, ROOFLINE_TERM_DRAM);
    cr_expect_float_eq(p.predicted_s, 5e-5, 1e-16);
    cr_expect_float_eq(p.term_s[ROOFLINE_TERM_OVERHEAD], 2e-6, 1e-18);
    cr_expect_eq(p.second, ROOFLINE_TERM_FMA); /* 1 MFLOP at 200 GFLOP/s = 5 us */
    cr_expect_float_eq(p.second_s, 5e-6, 1e-17);
    /* exps on the team, the rest on one thread (the sampler's softmax split): 5000 exps at the all-threads
     * 10 Gexp/s = 500 ns, the L1 bytes still at the one-thread 200 GB/s = 10 ns */
    w.exps_parallel = true;
    cr_assert_eq(roofline_predict(&rates_all, &rates_one, &w, &p, &err), 0, "%s", err.msg);
    cr_expect_float_eq(p.term_s[ROOFLINE_TERM_EXP], 5e-7, 1e-18);
    cr_expect_float_eq(p.term_s[ROOFLINE_TERM_L1], 1e-8, 1e-20);
    cr_expect_eq(p.bound, ROOFLINE_TERM_EXP);
    /* on the step's team: 1 call x 100 ns + 4 team barriers x 250 ns = 1.1 us, above 4 KB at L1 400 GB/s */
    struct roofline_work team = {.level_bytes = {0, 4000, 0, 0}, .calls = 1, .barriers = 4, .parallel = true};
    cr_assert_eq(roofline_predict(&rates_all, &rates_one, &team, &p, &err), 0, "%s", err.msg);
    cr_expect_float_eq(p.term_s[ROOFLINE_TERM_OVERHEAD], 1.1e-6, 1e-18);
    cr_expect_eq(p.bound, ROOFLINE_TERM_OVERHEAD);
    /* a tiny call: the floor binds */
    struct roofline_work tiny = {.level_bytes = {0, 64, 0, 0}, .calls = 1};
    cr_assert_eq(roofline_predict(&rates_all, &rates_one, &tiny, &p, &err), 0);
    cr_expect_eq(p.bound, ROOFLINE_TERM_OVERHEAD);
    cr_expect_str_eq(roofline_term_name(p.bound), "overhead");
    cr_expect_eq(p.second, ROOFLINE_TERM_L1); /* 64 B at 200 GB/s */
    /* L1, L2 and FMA tie at 10 ns behind the exp: the earlier term is the second */
    w.calls = 0;
    cr_assert_eq(roofline_predict(&rates_all, &rates_one, &w, &p, &err), 0, "%s", err.msg);
    cr_expect_eq(p.second, ROOFLINE_TERM_L1);
    cr_expect_float_eq(p.second_s, 1e-8, 1e-20);
    /* one term alone: no second */
    struct roofline_work only_dram = {.level_bytes = {1000, 0, 0, 0}};
    cr_assert_eq(roofline_predict(&rates_all, &rates_one, &only_dram, &p, &err), 0, "%s", err.msg);
    cr_expect_eq(p.bound, ROOFLINE_TERM_DRAM);
    cr_expect_eq(p.second_s, 0.0);
}

Test(roofline, predict_refuses_a_missing_rate) {
    struct roofline_rates no_exp = rates_one;
    no_exp.exp_gexps = NAN;
    struct roofline_work w = {.level_bytes = {0, 64, 0, 0}, .exps = 10};
    struct roofline_prediction p;
    struct fr_err err = {{0}};
    cr_expect_neq(roofline_predict(&rates_all, &no_exp, &w, &p, &err), 0);
    cr_expect(strstr(err.msg, "exp") != NULL, "%s", err.msg);
    struct roofline_work none = {0};
    cr_expect_neq(roofline_predict(&rates_all, &rates_one, &none, &p, &err), 0);
    /* team barriers without a measured barrier floor (a run.json of before the ceiling) */
    struct roofline_work team = {.level_bytes = {0, 64, 0, 0}, .barriers = 2, .parallel = true};
    struct roofline_rates no_barrier = rates_all;
    no_barrier.barrier_s = NAN;
    cr_expect_neq(roofline_predict(&no_barrier, &rates_one, &team, &p, &err), 0);
    cr_expect(strstr(err.msg, "team barrier") != NULL, "%s", err.msg);
}
