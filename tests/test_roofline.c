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
