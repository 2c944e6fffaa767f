/* Norms, residual add, SwiGLU and its vector exp, embedding gather, RoPE and KV store, for every ISA the
 * CPU supports, against the _ref twins, plain loops written here, and double-precision formulas.
 * Tolerances are stated per test, in units of u = 2^-24 (f32 unit roundoff). */
#include <string.h>

#include "kernels/kernel_ops.h"
#include "tests/kernels_test_util.h"

static const int odd_sizes[] = {1, 2, 7, 15, 16, 17, 63, 64, 100, 1024, 1027, 3072};
#define N_ODD (int)(sizeof odd_sizes / sizeof odd_sizes[0])

/* RMSNorm: the f32 sum of n squares is within n*u relatively (all terms positive), the inverse square root
 * halves that, and three roundings follow: allowed (n/2 + 4) * u relative. */
Test(kernels_norm, rmsnorm_every_isa) {
    struct test_rng rng = {1};
    for (int k = 0; k < N_ODD; k++) {
        int n = odd_sizes[k];
        float *x = test_alloc((size_t)n * 4), *w = test_alloc((size_t)n * 4), *y = test_alloc((size_t)n * 4),
              *ref = test_alloc((size_t)n * 4);
        test_fill(&rng, x, (size_t)n, -3.0f, 3.0f);
        test_fill(&rng, w, (size_t)n, 0.5f, 1.5f);
        rmsnorm_ref(ref, x, w, n, 1e-6f);
        double rtol = (n / 2.0 + 4.0) * TEST_U32;
        FOR_EACH_ISA(isa) {
            rmsnorm(y, x, w, n, 1e-6f);
            cr_expect(test_close("rmsnorm", y, ref, (size_t)n, 1e-30, rtol, NULL), "%s n=%d",
                      kernel_isa_name(isa), n);
            memcpy(y, x, (size_t)n * 4); /* in place */
            rmsnorm(y, y, w, n, 1e-6f);
            cr_expect(test_close("rmsnorm in place", y, ref, (size_t)n, 1e-30, rtol, NULL), "%s n=%d",
                      kernel_isa_name(isa), n);
        }
        free(x), free(w), free(y), free(ref);
    }
}

Test(kernels_norm, rmsnorm_ref_hand_computed) {
    /* x = [3, 4]: mean square 12.5, scale 1/sqrt(12.5 + eps) */
    const float x[] = {3.0f, 4.0f}, w[] = {1.0f, 2.0f};
    float y[2];
    rmsnorm_ref(y, x, w, 2, 0.0f);
    cr_expect_float_eq(y[0], 3.0f / sqrtf(12.5f), 1e-6f);
    cr_expect_float_eq(y[1], 8.0f / sqrtf(12.5f), 1e-6f);
}

Test(kernels_norm, rmsnorm_heads_every_isa) {
    struct test_rng rng = {2};
    const int dims[] = {64, 128, 36};
    for (int k = 0; k < 3; k++) {
        int hd = dims[k], nh = 5;
        size_t n = (size_t)nh * (size_t)hd;
        float *x = test_alloc(n * 4), *w = test_alloc((size_t)hd * 4), *y = test_alloc(n * 4),
              *ref = test_alloc(n * 4);
        test_fill(&rng, x, n, -2.0f, 2.0f);
        test_fill(&rng, w, (size_t)hd, 0.5f, 1.5f);
        memcpy(ref, x, n * 4);
        rmsnorm_heads_ref(ref, w, nh, hd, 1e-6f);
        FOR_EACH_ISA(isa) {
            memcpy(y, x, n * 4);
            rmsnorm_heads(y, w, nh, hd, 1e-6f);
            cr_expect(test_close("rmsnorm_heads", y, ref, n, 1e-30, (hd / 2.0 + 4.0) * TEST_U32, NULL),
                      "%s head_dim=%d", kernel_isa_name(isa), hd);
        }
        free(x), free(w), free(y), free(ref);
    }
}

/* One f32 add: exact to the rounding of the sum, compared bit for bit with the same add written here. */
Test(kernels_elementwise, vec_add_every_isa) {
    struct test_rng rng = {3};
    for (int k = 0; k < N_ODD; k++) {
        int n = odd_sizes[k];
        float *x = test_alloc((size_t)n * 4), *y0 = test_alloc((size_t)n * 4), *y = test_alloc((size_t)n * 4),
              *ref = test_alloc((size_t)n * 4);
        test_fill(&rng, x, (size_t)n, -1.0f, 1.0f);
        test_fill(&rng, y0, (size_t)n, -1.0f, 1.0f);
        for (int i = 0; i < n; i++) ref[i] = y0[i] + x[i];
        FOR_EACH_ISA(isa) {
            memcpy(y, y0, (size_t)n * 4);
            vec_add(y, x, n);
            cr_expect(memcmp(y, ref, (size_t)n * 4) == 0, "vec_add %s n=%d", kernel_isa_name(isa), n);
        }
        free(x), free(y0), free(y), free(ref);
    }
}

/* The vector exp against double exp over the range of normal f32 results, relative error in u. The bound
 * is the maximum found over every f32 input in [-87.3, 88.7] (1.999 u for both vector paths, stated beside
 * vf_exp in kernels/kernels_avx2.c and kernels_avx512.c; glibc's expf, the scalar path, is within 1 u). */
#define VEXP_MAX_REL_U 2.0
Test(kernels_elementwise, vexp_relative_error_every_isa) {
    enum { N = 20000 };
    float *x = test_alloc(N * 4), *y = test_alloc(N * 4);
    for (int i = 0; i < N; i++) x[i] = -87.0f + (88.5f - -87.0f) * (float)i / (float)(N - 1);
    x[0] = 0.0f, x[1] = -0.0f, x[2] = 1e-8f, x[3] = -1e-8f, x[4] = 88.7f, x[5] = -87.3f;
    FOR_EACH_ISA(isa) {
        kernel_vexp(y, x, N);
        double worst = 0.0;
        int worst_i = 0;
        for (int i = 0; i < N; i++) {
            double e = exp((double)x[i]);
            double rel = fabs((double)y[i] - e) / e / TEST_U32;
            if (!(rel <= worst)) worst = rel, worst_i = i;
        }
        cr_log_info("vexp %s: max relative error %.2f u at x = %.9g", kernel_isa_name(isa), worst,
                    (double)x[worst_i]);
        cr_expect(worst <= VEXP_MAX_REL_U, "vexp %s: %.2f u at x = %.9g", kernel_isa_name(isa), worst,
                  (double)x[worst_i]);
        /* Beyond the range: underflow to a value below the smallest normal, overflow to +inf, NaN kept. */
        float xs[4] = {-104.0f, 89.0f, NAN, -INFINITY}, ys[4];
        kernel_vexp(ys, xs, 4);
        cr_expect(ys[0] >= 0.0f && ys[0] < 1.2e-38f, "%s exp(-104) = %g", kernel_isa_name(isa),
                  (double)ys[0]);
        cr_expect(isinf(ys[1]) && ys[1] > 0, "%s exp(89) = %g", kernel_isa_name(isa), (double)ys[1]);
        cr_expect(isnan(ys[2]), "%s exp(nan) = %g", kernel_isa_name(isa), (double)ys[2]);
        cr_expect(ys[3] == 0.0f, "%s exp(-inf) = %g", kernel_isa_name(isa), (double)ys[3]);
    }
    free(x), free(y);
}

/* SwiGLU: exp within VEXP_MAX_REL_U u, then 1 + e, a division and a product: (VEXP_MAX_REL_U + 4) u
 * relative. Saturated gates (|g| up to 100) give +-0 or denormals in f32: 1e-37 absolute covers them. */
Test(kernels_elementwise, swiglu_every_isa) {
    struct test_rng rng = {4};
    for (int k = 0; k < N_ODD; k++) {
        int n = odd_sizes[k];
        float *g = test_alloc((size_t)n * 4), *u = test_alloc((size_t)n * 4), *y = test_alloc((size_t)n * 4),
              *ref = test_alloc((size_t)n * 4);
        test_fill(&rng, g, (size_t)n, -20.0f, 20.0f);
        test_fill(&rng, u, (size_t)n, -2.0f, 2.0f);
        if (n > 5) g[0] = 0.0f, g[1] = -100.0f, g[2] = 100.0f, g[3] = -88.5f, g[4] = 1e-7f;
        swiglu_ref(ref, g, u, n);
        FOR_EACH_ISA(isa) {
            swiglu(y, g, u, n);
            cr_expect(test_close("swiglu", y, ref, (size_t)n, 1e-37, (VEXP_MAX_REL_U + 4.0) * TEST_U32, NULL),
                      "%s n=%d", kernel_isa_name(isa), n);
        }
        free(g), free(u), free(y), free(ref);
    }
}

Test(kernels_elementwise, swiglu_ref_hand_computed) {
    const float g[] = {0.0f, 1.0f}, u[] = {5.0f, 2.0f};
    float y[2];
    swiglu_ref(y, g, u, 2);
    cr_expect_eq(y[0], 0.0f);
    cr_expect_float_eq(y[1], (float)(2.0 / (1.0 + exp(-1.0))), 1e-7f);
}

/* Widening bf16 is exact: bit-identical to bf16_to_f32. */
Test(kernels_elementwise, embed_gather_every_isa) {
    struct test_rng rng = {5};
    enum { V = 11, H = 1027 };
    uint16_t *tb = test_alloc((size_t)V * H * 2);
    float *tf = test_alloc((size_t)V * H * 4), y[H], ref[H];
    test_fill_bf16(&rng, tb, (size_t)V * H, -1.0f, 1.0f);
    test_fill(&rng, tf, (size_t)V * H, -1.0f, 1.0f);
    FOR_EACH_ISA(isa) {
        for (int tok = 0; tok < V; tok += 5) {
            embed_gather(y, tb, FR_DTYPE_BF16, V, tok, H);
            for (int i = 0; i < H; i++) ref[i] = bf16_to_f32(tb[(size_t)tok * H + (size_t)i]);
            cr_expect(memcmp(y, ref, sizeof y) == 0, "bf16 embed %s token %d", kernel_isa_name(isa), tok);
            embed_gather(y, tf, FR_DTYPE_F32, V, tok, H);
            cr_expect(memcmp(y, tf + (size_t)tok * H, sizeof y) == 0, "f32 embed %s", kernel_isa_name(isa));
        }
    }
    free(tb), free(tf);
}

/* bf16 store: bit-identical to bf16_from_f32 (round to nearest even, NaN stays NaN), ties and specials
 * included; f32 store is a copy. */
Test(kernels_elementwise, kv_store_every_isa) {
    struct test_rng rng = {6};
    enum { N = 1000 };
    float x[N], back[N];
    uint16_t got[N], ref[N];
    test_fill(&rng, x, N, -100.0f, 100.0f);
    x[0] = 1.00390625f, x[1] = 1.01171875f, x[2] = INFINITY, x[3] = -INFINITY, x[4] = NAN, x[5] = -0.0f;
    x[6] = 1e-40f, x[7] = 3.4e38f, x[8] = -NAN;
    for (int i = 0; i < N; i++) ref[i] = bf16_from_f32(x[i]);
    FOR_EACH_ISA(isa) {
        for (int n = 1; n <= N; n = n * 3 + 1) {
            memset(got, 0xab, sizeof got);
            kv_store(got, FR_DTYPE_BF16, x, n);
            cr_expect(memcmp(got, ref, (size_t)n * 2) == 0, "kv_store bf16 %s n=%d", kernel_isa_name(isa), n);
            cr_expect(n == N || got[n] == 0xabab, "kv_store wrote past n=%d", n);
        }
        kv_store(back, FR_DTYPE_F32, x, N);
        cr_expect(memcmp(back, x, sizeof x) == 0, "kv_store f32 %s", kernel_isa_name(isa));
    }
}

/* RoPE, three ways at head_dim 64 and 128 and positions up to 100000 (theta 1e6, Qwen3's):
 *  - rope_tables against cos/sin of the double angle pos * theta^(-2i/d): within 1 f32 rounding;
 *  - rope_apply_ref against the rotation written here in double: within 1 rounding of each output;
 *  - rope_apply (f32 tables, f32 arithmetic) against rope_apply_ref: each output a*c - b*s carries the
 *    tables' rounding and three f32 roundings, allowed 4u * (|a| + |b|), absolute. */
Test(kernels_rope, tables_apply_and_ref) {
    struct test_rng rng = {8};
    const int dims[] = {64, 128}, positions[] = {0, 1, 7, 4095, 100000};
    const double theta = 1e6;
    for (int di = 0; di < 2; di++) {
        int hd = dims[di], half = hd / 2, nh = 3;
        size_t n = (size_t)nh * (size_t)hd;
        float *x = test_alloc(n * 4), *y = test_alloc(n * 4), *ref = test_alloc(n * 4);
        float cs[64], sn[64];
        double *tol = test_alloc(n * sizeof *tol);
        for (int pi = 0; pi < 5; pi++) {
            int pos = positions[pi];
            test_fill(&rng, x, n, -1.0f, 1.0f);
            rope_tables(cs, sn, hd, pos, theta);
            for (int i = 0; i < half; i++) {
                double a = (double)pos * pow(theta, -2.0 * i / hd);
                cr_expect(fabs(cs[i] - cos(a)) <= TEST_U32 && fabs(sn[i] - sin(a)) <= TEST_U32,
                          "rope_tables d=%d pos=%d i=%d", hd, pos, i);
            }
            memcpy(ref, x, n * 4);
            rope_apply_ref(ref, nh, hd, pos, theta);
            for (int h = 0; h < nh; h++)
                for (int i = 0; i < half; i++) {
                    size_t j = (size_t)h * (size_t)hd + (size_t)i;
                    double ang = (double)pos * pow(theta, -2.0 * i / hd), a = x[j], b = x[j + (size_t)half];
                    double r0 = a * cos(ang) - b * sin(ang), r1 = b * cos(ang) + a * sin(ang);
                    cr_expect(fabs(ref[j] - r0) <= TEST_U32 * fabs(r0) + 1e-30 &&
                                  fabs(ref[j + (size_t)half] - r1) <= TEST_U32 * fabs(r1) + 1e-30,
                              "rope_apply_ref d=%d pos=%d i=%d", hd, pos, i);
                    tol[j] = tol[j + (size_t)half] = 4.0 * TEST_U32 * (fabs(a) + fabs(b));
                }
            FOR_EACH_ISA(isa) {
                memcpy(y, x, n * 4);
                rope_apply(y, cs, sn, nh, hd);
                cr_expect(test_close("rope_apply", y, ref, n, 0.0, 0.0, tol), "%s d=%d pos=%d",
                          kernel_isa_name(isa), hd, pos);
            }
        }
        free(x), free(y), free(ref), free(tol);
    }
}

/* Position 0 is the identity; a quarter turn maps (a, b) to (-b, a). */
Test(kernels_rope, ref_hand_computed) {
    float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    rope_apply_ref(x, 1, 4, 0, 10000.0);
    cr_expect(x[0] == 1.0f && x[1] == 2.0f && x[2] == 3.0f && x[3] == 4.0f);
    float cs[2] = {0.0f, 1.0f}, sn[2] = {1.0f, 0.0f};
    rope_apply(x, cs, sn, 1, 4);
    cr_expect(x[0] == -3.0f && x[2] == 1.0f && x[1] == 2.0f && x[3] == 4.0f);
}
