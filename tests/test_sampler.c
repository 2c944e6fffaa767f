/* Sampler core: parameter and row errors, greedy, the softmax's exp against double exp, the softmax
 * against its reference and across instruction sets, Philox4x32-10 against the Random123 known-answer
 * vectors, the draw's guards, and sampler_pick end to end. */
#include <criterion/criterion.h>
#include <float.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sampler_rows.h"
#include "bench/verify_checks.h"
#include "kernels/sampler.h"
#include "kernels/sampler_simd.h"
#include "kernels/team.h"

static float f32_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- parameters ---- */

Test(sampler, params_errors) {
    struct fr_err err = {{0}};
    struct sampler_params ok = {0.8f, 0.9f, 1};
    cr_expect_eq(sampler_check_params(&ok, &err), 0);
    struct sampler_params bad[] = {
        {-0.1f, 0.9f, 1},  {NAN, 0.9f, 1},   {INFINITY, 0.9f, 1},
        {0.8f, -0.01f, 1}, {0.8f, 1.01f, 1}, {0.8f, NAN, 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = 0;
        cr_expect_neq(sampler_check_params(&bad[i], &err), 0, "case %zu", i);
        cr_expect_neq(err.msg[0], 0, "case %zu has a message", i);
    }
    struct sampler_params edge[] = {{0.0f, 0.0f, 0}, {0.0f, 1.0f, 0}, {1e-30f, 1e-8f, 0}};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        cr_expect_eq(sampler_check_params(&edge[i], &err), 0);
}

/* ---- rows with bad values: every path names the index ---- */

static void expect_row_error(const float *row, int n, const char *needle) {
    struct fr_err err = {{0}};
    int tok = -7;
    float *probs = malloc(sizeof(float) * (size_t)n);
    void *scratch = malloc(sampler_scratch_bytes(n));
    struct sampler_params greedy = {0.0f, 1.0f, 0}, warm = {0.7f, 0.9f, 0};
    for (int isa = 0; isa < KERNEL_ISA_COUNT; isa++) {
        if (sampler_isa_force((enum kernel_isa)isa) != 0) continue;
        cr_expect_neq(sampler_argmax(row, FR_DTYPE_F32, n, &tok, &err), 0);
        cr_expect(strstr(err.msg, needle), "argmax: '%s' lacks '%s'", err.msg, needle);
        cr_expect_neq(sampler_softmax(probs, row, FR_DTYPE_F32, n, 0.7f, kernel_team_procs(), &err), 0);
        cr_expect(strstr(err.msg, needle), "softmax: '%s' lacks '%s'", err.msg, needle);
        cr_expect_neq(sampler_pick(row, n, &greedy, 0, scratch, kernel_team_procs(), &tok, &err), 0);
        cr_expect_neq(sampler_pick(row, n, &warm, 0, scratch, kernel_team_procs(), &tok, &err), 0);
        cr_expect(strstr(err.msg, needle), "pick: '%s' lacks '%s'", err.msg, needle);
        cr_expect_neq(sampler_argmax_ref(row, FR_DTYPE_F32, n, &tok, &err), 0);
        cr_expect_neq(sampler_softmax_ref(probs, row, FR_DTYPE_F32, n, 0.7f, &err), 0);
    }
    sampler_isa_force(KERNEL_ISA_COUNT);
    cr_expect_eq(tok, -7, "no token on an error");
    free(probs);
    free(scratch);
}

Test(sampler, bad_rows) {
    enum { N = 37 };
    float row[N];
    for (int i = 0; i < N; i++) row[i] = (float)(i % 5);
    row[23] = NAN;
    expect_row_error(row, N, "NaN at index 23");
    row[23] = 1.0f;
    row[35] = INFINITY;
    expect_row_error(row, N, "+inf at index 35");
    for (int i = 0; i < N; i++) row[i] = -INFINITY;
    expect_row_error(row, N, "-inf");
    float one = NAN;
    expect_row_error(&one, 1, "NaN at index 0");
}

Test(sampler, bad_probs) {
    struct fr_err err = {{0}};
    float p[4] = {0.25f, 0.25f, -0.5f, 1.0f};
    cr_expect_neq(sampler_check_probs(p, 4, &err), 0);
    cr_expect(strstr(err.msg, "index 2"), "%s", err.msg);
    p[2] = INFINITY;
    cr_expect_neq(sampler_check_probs(p, 4, &err), 0);
    p[2] = NAN;
    cr_expect_neq(sampler_check_probs(p, 4, &err), 0);
    float z[3] = {0, -0.0f, 0};
    cr_expect_neq(sampler_check_probs(z, 3, &err), 0);
    p[2] = -0.0f;
    cr_expect_eq(sampler_check_probs(p, 4, &err), 0);
}

/* ---- greedy ---- */

Test(sampler, greedy_lowest_index_on_ties) {
    enum { N = 1000 };
    float row[N];
    uint16_t rowh[N];
    uint64_t s = 5;
    for (int trial = 0; trial < 50; trial++) {
        int n = 1 + (int)(sampler_rows_next(&s) % N);
        for (int i = 0; i < n; i++) row[i] = (float)(sampler_rows_next(&s) % 7) - 3.0f;
        if (trial % 3 == 0) row[sampler_rows_next(&s) % (uint64_t)n] = -INFINITY;
        for (int i = 0; i < n; i++) rowh[i] = bf16_from_f32(row[i]);
        int want = -1;
        for (int i = 0; i < n; i++)
            if (want < 0 || row[i] > row[want]) want = i;
        for (int isa = 0; isa < KERNEL_ISA_COUNT; isa++) {
            if (sampler_isa_force((enum kernel_isa)isa) != 0) continue;
            int got = -1, goth = -1, ref = -1;
            cr_assert_eq(sampler_argmax(row, FR_DTYPE_F32, n, &got, NULL), 0);
            cr_assert_eq(sampler_argmax(rowh, FR_DTYPE_BF16, n, &goth, NULL), 0);
            cr_assert_eq(sampler_argmax_ref(row, FR_DTYPE_F32, n, &ref, NULL), 0);
            cr_expect_eq(got, want, "trial %d isa %d", trial, isa);
            cr_expect_eq(goth, want);
            cr_expect_eq(ref, want);
        }
    }
    sampler_isa_force(KERNEL_ISA_COUNT);
    float z[3] = {-0.0f, 0.0f, -1.0f};
    int t = -1;
    cr_expect_eq(sampler_argmax(z, FR_DTYPE_F32, 3, &t, NULL), 0);
    cr_expect_eq(t, 0, "-0 and +0 tie: lowest index");
}

Test(sampler, pick_greedy_ignores_seed_and_top_p) {
    float row[5] = {1.0f, 7.0f, -2.0f, 7.0f, 3.0f};
    void *scratch = malloc(sampler_scratch_bytes(5));
    for (uint64_t step = 0; step < 20; step++) {
        struct sampler_params p = {0.0f, (float)step / 19.0f, step * 77};
        int tok = -1;
        cr_assert_eq(sampler_pick(row, 5, &p, step, scratch, kernel_team_procs(), &tok, NULL), 0);
        cr_expect_eq(tok, 1);
    }
    free(scratch);
}

/* ---- exp ---- */

/* Error of sampler_exp against double exp: ulps of the exact result where it is normal, subnormal steps
 * (2^-149) below FLT_MIN. Sweeps every 97th f32 in [-104, 0] plus the edges. */
Test(sampler, exp_error_bound) {
    double worst_ulp = 0, worst_sub = 0;
    float worst_x = 0;
    uint32_t lo = 0x80000000u, hi = 0xC2D00000u; /* -0 .. -104 */
    for (uint32_t u = lo; u <= hi; u += 97) {
        float x = f32_bits(u);
        double exact = exp((double)x), got = sampler_exp(x);
        double err;
        if (exact >= FLT_MIN) {
            int e;
            frexp(exact, &e);
            err = fabs(got - exact) / ldexp(1.0, e - 24);
            if (err > worst_ulp) worst_ulp = err, worst_x = x;
        } else {
            err = fabs(got - exact) / 0x1p-149;
            if (err > worst_sub) worst_sub = err;
        }
    }
    cr_log_info("sampler_exp: max %.3f ulp (at x = %.9g), %.3f subnormal steps", worst_ulp, (double)worst_x,
                worst_sub);
    cr_expect_leq(worst_ulp, SAMPLER_EXP_MAX_ULP, "max %.3f ulp at %.9g", worst_ulp, (double)worst_x);
    cr_expect_leq(worst_sub, 1.0);
    cr_expect_eq(sampler_exp(0.0f), 1.0f);
    cr_expect_eq(sampler_exp(-0.0f), 1.0f);
    cr_expect_eq(sampler_exp(-INFINITY), 0.0f);
    cr_expect_eq(sampler_exp(-104.5f), 0.0f);
    cr_expect_gt(sampler_exp(-103.0f), 0.0f);
}

/* ---- softmax ---- */

Test(sampler, softmax_matches_reference_and_isas) {
    int sizes[] = {1, 2, 15, 16, 17, 255, 1000, 32000, 151936};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int n = sizes[si];
        float *row = malloc(sizeof(float) * (size_t)n), *ref = malloc(sizeof(float) * (size_t)n);
        float *a = malloc(sizeof(float) * (size_t)n), *b = malloc(sizeof(float) * (size_t)n);
        uint16_t *rowh = malloc(sizeof(uint16_t) * (size_t)n);
        for (int kind = 0; kind < SAMPLER_ROW_KIND_COUNT; kind++) {
            sampler_rows_fill(row, n, (enum sampler_row_kind)kind, 1000 + si);
            if (n > 3) row[n / 3] = -INFINITY;
            float t = kind == 0 ? 0.8f : 1.3f;
            cr_assert_eq(sampler_softmax_ref(ref, row, FR_DTYPE_F32, n, t, NULL), 0);
            cr_assert_eq(sampler_isa_force(KERNEL_ISA_SCALAR), 0);
            cr_assert_eq(sampler_softmax(a, row, FR_DTYPE_F32, n, t, kernel_team_procs(), NULL), 0);
            double sum = 0, worst = 0;
            for (int i = 0; i < n; i++) {
                sum += a[i];
                /* both round the same (x - m) / T; then exp within 1 ulp each, double sums, f32 division */
                double tol = 1e-30 + 1e-6 * fabs(ref[i]);
                double d = fabs((double)a[i] - ref[i]);
                if (d / (1e-12 + fabs(ref[i])) > worst) worst = d / (1e-12 + fabs(ref[i]));
                cr_expect_leq(d, tol, "n %d kind %d i %d: %.9g vs %.9g", n, kind, i, (double)a[i],
                              (double)ref[i]);
                if (d > tol) break;
            }
            cr_expect_leq(fabs(sum - 1.0), 1e-6, "n %d sum %.9g", n, sum);
            if (n > 3) cr_expect_eq(a[n / 3], 0.0f);
            for (int isa = KERNEL_ISA_AVX2; isa < KERNEL_ISA_COUNT; isa++) {
                if (sampler_isa_force((enum kernel_isa)isa) != 0) continue;
                cr_assert_eq(sampler_softmax(b, row, FR_DTYPE_F32, n, t, kernel_team_procs(), NULL), 0);
                cr_expect_eq(memcmp(a, b, sizeof(float) * (size_t)n), 0, "isa %d == scalar bitwise, n %d",
                             isa, n);
                for (int i = 0; i < n; i++) rowh[i] = bf16_from_f32(row[i]);
                float *c = ref; /* reuse */
                cr_assert_eq(sampler_softmax(b, rowh, FR_DTYPE_BF16, n, t, kernel_team_procs(), NULL), 0);
                cr_assert_eq(sampler_isa_force(KERNEL_ISA_SCALAR), 0);
                cr_assert_eq(sampler_softmax(c, rowh, FR_DTYPE_BF16, n, t, kernel_team_procs(), NULL), 0);
                cr_expect_eq(memcmp(b, c, sizeof(float) * (size_t)n), 0, "bf16 isa %d == scalar, n %d", isa,
                             n);
            }
            sampler_isa_force(KERNEL_ISA_COUNT);
        }
        free(row), free(ref), free(a), free(b), free(rowh);
    }
}

Test(sampler, softmax_tiny_temperature_is_one_hot) {
    float row[4] = {1.0f, 3.0f, 2.999f, -5.0f}, p[4];
    cr_assert_eq(sampler_softmax(p, row, FR_DTYPE_F32, 4, 1e-30f, kernel_team_procs(), NULL), 0);
    cr_expect_eq(p[1], 1.0f);
    cr_expect_eq(p[0] + p[2] + p[3], 0.0f);
    float big[2] = {3e38f, -3e38f}; /* x - max overflows to -inf: still a clean 1, 0 */
    cr_assert_eq(sampler_softmax(p, big, FR_DTYPE_F32, 2, 1.0f, kernel_team_procs(), NULL), 0);
    cr_expect_eq(p[0], 1.0f);
    cr_expect_eq(p[1], 0.0f);
}

/* ---- Philox and the draw ---- */

Test(sampler, philox_known_answers) {
    const uint32_t(*kat)[10] = verify_philox_kat; /* Random123 kat_vectors: ctr[4] key[2] -> out[4] */
    for (int k = 0; k < 3; k++) {
        uint32_t out[4];
        sampler_philox4x32_10(kat[k], kat[k] + 4, out);
        for (int j = 0; j < 4; j++)
            cr_expect_eq(out[j], kat[k][6 + j], "vector %d word %d: %08x", k, j, out[j]);
    }
    double u = sampler_uniform(0, 0);
    cr_expect_eq(u, (double)((((uint64_t)0x6627e8d5u << 32) | 0xe169c58du) >> 11) * 0x1p-53);
}

Test(sampler, uniform_range_and_spread) {
    double sum = 0;
    for (uint64_t step = 0; step < 20000; step++) {
        double u = sampler_uniform(42, step);
        cr_assert(u >= 0.0 && u < 1.0);
        sum += u;
    }
    cr_expect_leq(fabs(sum / 20000 - 0.5), 0.01); /* 7 standard deviations of the mean */
    cr_expect_neq(sampler_uniform(1, 5), sampler_uniform(2, 5));
    cr_expect_eq(sampler_uniform(1, 5), sampler_uniform(1, 5));
}

Test(sampler, draw_never_zero_probability) {
    float p[8] = {0, 0.25f, 0, 0, 0.5f, 0.25f, 0, 0};
    double us[] = {0.0, 0.2499, 0.25, 0.7499, 0.75, 0.999999, 1.0 - 0x1p-53};
    int want[] = {1, 1, 4, 4, 5, 5, 5};
    for (size_t i = 0; i < sizeof us / sizeof us[0]; i++)
        cr_expect_eq(sampler_draw(p, 8, us[i]), want[i], "u = %.17g", us[i]);
    /* a CDF that ends short of u * total by rounding still ends on the last positive token */
    float q[4] = {0.1f, 0.2f, 0.7f, 0.0f};
    cr_expect_eq(sampler_draw(q, 4, 1.0 - 0x1p-53), 2);
    float tiny[5] = {1.0f, 1e-30f, 0, 1e-30f, 0}; /* 1e-30 vanishes in the double sum: never drawn, never 0 */
    for (int k = 0; k < 1000; k++) {
        int t = sampler_draw(tiny, 5, sampler_uniform(9, (uint64_t)k));
        cr_assert(t == 0 || t == 1 || t == 3);
    }
    cr_expect_eq(sampler_draw(tiny + 2, 1, 0.5), -1, "no positive entry");
}

Test(sampler, draw_frequencies) {
    float p[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    int hits[4] = {0};
    for (uint64_t k = 0; k < 40000; k++) hits[sampler_draw(p, 4, sampler_uniform(7, k))]++;
    for (int i = 0; i < 4; i++)
        cr_expect_leq(fabs(hits[i] / 40000.0 - p[i]), 0.01, "token %d: %d", i, hits[i]);
}

Test(sampler, pick_reproducible_and_vocab_one) {
    enum { N = 151936 };
    float *row = malloc(sizeof(float) * N);
    void *scratch = malloc(sampler_scratch_bytes(N));
    sampler_rows_fill(row, N, SAMPLER_ROW_REALISTIC, 3);
    struct sampler_params p = {0.8f, 0.9f, 1234};
    int a = -1, b = -2;
    cr_assert_eq(sampler_pick(row, N, &p, 17, scratch, kernel_team_procs(), &a, NULL), 0);
    cr_assert_eq(sampler_pick(row, N, &p, 17, scratch, kernel_team_procs(), &b, NULL), 0);
    cr_expect_eq(a, b);
    cr_expect(a >= 0 && a < N);
    p.top_p = 0.0f;
    int g = -1;
    cr_assert_eq(sampler_argmax(row, FR_DTYPE_F32, N, &g, NULL), 0);
    for (uint64_t step = 0; step < 5; step++) {
        cr_assert_eq(sampler_pick(row, N, &p, step, scratch, kernel_team_procs(), &a, NULL), 0);
        cr_expect_eq(a, g, "top_p 0: the top token");
    }
    float one = -3.0f;
    struct sampler_params q = {1.0f, 0.5f, 9};
    cr_assert_eq(sampler_pick(&one, 1, &q, 0, scratch, kernel_team_procs(), &a, NULL), 0);
    cr_expect_eq(a, 0);
    struct sampler_params bad = {1.0f, 2.0f, 9};
    struct fr_err err = {{0}};
    cr_expect_neq(sampler_pick(&one, 1, &bad, 0, scratch, kernel_team_procs(), &a, &err), 0);
    cr_expect(strstr(err.msg, "top_p"));
    free(row);
    free(scratch);
}

/* The draw's definition written out plainly: block sums (pairwise inside a block) summed in block order,
 * the crossing block walked token by token. Every instruction-set path must give this token. */
static double block_sum_plain(const float *p, int n, int b) {
    float blk[16];
    for (int j = 0; j < 16; j++) blk[j] = b * 16 + j < n ? p[b * 16 + j] : 0.0f;
    double s[8];
    for (int j = 0; j < 8; j++) s[j] = (double)blk[j] + blk[j + 8];
    for (int j = 0; j < 4; j++) s[j] += s[j + 4];
    for (int j = 0; j < 2; j++) s[j] += s[j + 2];
    return s[0] + s[1];
}

static int draw_plain(const float *p, int n, double u) {
    double total = 0;
    int last = -1, blocks = (n + 15) / 16;
    for (int b = 0; b < blocks; b++) total += block_sum_plain(p, n, b);
    for (int i = 0; i < n; i++)
        if (p[i] > 0) last = i;
    if (last < 0) return -1;
    double target = u * total, c = 0;
    for (int b = 0; b < blocks; b++) {
        double next = c + block_sum_plain(p, n, b);
        if (next > target) {
            int pick = -1;
            for (int i = b * 16; i < n && i < b * 16 + 16; i++) {
                if (!(p[i] > 0)) continue;
                c += p[i];
                pick = i;
                if (c > target) return i;
            }
            return pick;
        }
        c = next;
    }
    return last;
}

Test(sampler, draw_matches_its_definition_on_every_isa) {
    enum { NMAX = 3000 };
    float *p = malloc(sizeof(float) * NMAX);
    uint64_t s = 99;
    for (int trial = 0; trial < 300; trial++) {
        int n = 1 + (int)(sampler_rows_next(&s) % NMAX);
        bool any = false;
        for (int i = 0; i < n; i++) {
            double u = sampler_rows_uniform(&s);
            p[i] = trial % 3 == 0 ? (u < 0.9 ? 0.0f : (float)u)
                                  : (float)ldexp(u, -(int)(60 * sampler_rows_uniform(&s)));
            any |= p[i] > 0;
        }
        if (!any) p[n - 1] = 1.0f;
        for (int d = 0; d < 20; d++) {
            double u = d == 0 ? 1.0 - 0x1p-53 : d == 1 ? 0.0 : sampler_rows_uniform(&s);
            int want = draw_plain(p, n, u);
            for (int isa = 0; isa < KERNEL_ISA_COUNT; isa++) {
                if (sampler_isa_force((enum kernel_isa)isa) != 0) continue;
                int got = sampler_draw(p, n, u);
                cr_expect_eq(got, want, "trial %d n %d u %.17g isa %d", trial, n, u, isa);
                cr_assert(got >= 0 && p[got] > 0, "zero-probability token %d", got);
            }
        }
    }
    sampler_isa_force(KERNEL_ISA_COUNT);
    free(p);
}

/* sampler_pick fuses passes (levels in the softmax, the draw's total in the filter); its token must be
 * the one the separate pieces give, on every instruction set. */
Test(sampler, pick_equals_the_pieces) {
    int sizes[] = {1, 17, 1000, 32000, 151936};
    float tps[] = {0.0f, 0.5f, 0.9f, 0.999f, 1.0f};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int n = sizes[si];
        float *row = malloc(sizeof(float) * (size_t)n), *p = malloc(sizeof(float) * (size_t)n);
        void *scratch = malloc(sampler_scratch_bytes(n));
        for (int kind = 0; kind < SAMPLER_ROW_KIND_COUNT; kind++) {
            sampler_rows_fill(row, n, (enum sampler_row_kind)kind, 500 + si);
            for (size_t ti = 0; ti < sizeof tps / sizeof tps[0]; ti++) {
                struct sampler_params prm = {0.9f, tps[ti], 31};
                uint64_t step = si * 100 + ti;
                cr_assert_eq(
                    sampler_softmax(p, row, FR_DTYPE_F32, n, prm.temperature, kernel_team_procs(), NULL), 0);
                sampler_top_p_ref(p, n, prm.top_p, scratch);
                int want = sampler_draw(p, n, sampler_uniform(prm.seed, step));
                for (int isa = 0; isa < KERNEL_ISA_COUNT; isa++) {
                    if (sampler_isa_force((enum kernel_isa)isa) != 0) continue;
                    int got = -1;
                    cr_assert_eq(sampler_pick(row, n, &prm, step, scratch, kernel_team_procs(), &got, NULL),
                                 0);
                    cr_expect_eq(got, want, "n %d kind %d top_p %g isa %d", n, kind, (double)prm.top_p, isa);
                }
                sampler_isa_force(KERNEL_ISA_COUNT);
            }
        }
        free(row), free(p), free(scratch);
    }
}

/* Every path's exp, through the softmax: a row whose max is 0 at T = 1 feeds the logits straight to the
 * exp, swept over [-110, 0] so subnormal results and the cut-off at -104 are crossed. */
Test(sampler, softmax_exp_sweep_bitwise_across_isas) {
    enum { N = 200003 };
    float *row = malloc(sizeof(float) * N), *a = malloc(sizeof(float) * N), *b = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) row[i] = -110.0f * (float)i / (float)(N - 1);
    cr_assert_eq(sampler_isa_force(KERNEL_ISA_SCALAR), 0);
    cr_assert_eq(sampler_softmax(a, row, FR_DTYPE_F32, N, 1.0f, kernel_team_procs(), NULL), 0);
    int subnormal = 0;
    for (int i = 0; i < N; i++) subnormal += a[i] > 0 && a[i] < FLT_MIN;
    cr_expect_gt(subnormal, 100, "the sweep reaches subnormal probabilities");
    for (int isa = KERNEL_ISA_AVX2; isa < KERNEL_ISA_COUNT; isa++) {
        if (sampler_isa_force((enum kernel_isa)isa) != 0) continue;
        cr_assert_eq(sampler_softmax(b, row, FR_DTYPE_F32, N, 1.0f, kernel_team_procs(), NULL), 0);
        int first = -1;
        for (int i = 0; i < N && first < 0; i++)
            if (memcmp(a + i, b + i, sizeof(float))) first = i;
        cr_expect_eq(first, -1, "isa %d differs at x = %.9g: %a vs %a", isa,
                     first < 0 ? 0.0 : (double)row[first], first < 0 ? 0.0 : (double)b[first],
                     first < 0 ? 0.0 : (double)a[first]);
    }
    sampler_isa_force(KERNEL_ISA_COUNT);
    free(row), free(a), free(b);
}

/* The ISA self-check behind verify's sampler.simd compares for real: every vector table passes, and a table
 * with one wrong pass is caught and named. */
static void finish_off_by_one(float *out, const float *p, int n, uint32_t kc, int ic, float kf,
                              double *blocks, double *total, int *last) {
    sampler_ops_scalar.finish(out, p, n, kc, ic, kf, blocks, total, last);
    out[n - 1] = nextafterf(out[n - 1], 1.0f);
}

static void exp_off_by_one(float *y, const float *x, int n) {
    sampler_ops_scalar.exp(y, x, n);
    y[n / 2] = nextafterf(y[n / 2], 0.0f);
}

/* sampler_exp_row, the pass the sampler's exp roof is measured with, is sampler_exp element by element on
 * every ISA, tails included (n = 37: one two-block step, then a partial block). */
Test(sampler, exp_row_is_sampler_exp_on_every_isa) {
    enum { N = 37 };
    float x[N], y[N];
    for (int i = 0; i < N; i++) x[i] = -0.37f * (float)i * (float)i - 0.001f * (float)i;
    for (int isa = 0; isa < KERNEL_ISA_COUNT; isa++) {
        if (sampler_isa_force((enum kernel_isa)isa) != 0) continue;
        memset(y, 0xff, sizeof y);
        sampler_exp_row(y, x, N);
        for (int i = 0; i < N; i++) {
            float want = sampler_exp(x[i]);
            cr_expect(memcmp(&y[i], &want, sizeof want) == 0, "isa %d x = %.9g: %a, sampler_exp %a", isa,
                      (double)x[i], (double)y[i], (double)want);
        }
    }
    sampler_isa_force(KERNEL_ISA_COUNT);
}

/* bin_sums that leaves the row's last element out */
static void bin_sums_miss_last(const float *p, int n, const int *hot, uint64_t *count, uint64_t *low) {
    (void)hot;
    for (int i = 0; i + 1 < n; i++) {
        uint32_t k = sampler_key(p[i]);
        count[k >> 20]++, low[k >> 20] += k & 0xfffffu;
    }
}

/* select_keys that drops the last entry it selects */
static int select_keys_drop_last(uint32_t *ids_out, uint32_t *keys_out, const uint32_t *ids,
                                 const uint32_t *keys, int n, uint32_t lo, uint32_t hi) {
    int m = sampler_ops_scalar.select_keys(ids_out, keys_out, ids, keys, n, lo, hi);
    return m > 0 ? m - 1 : 0;
}

/* collect whose keys (when asked for) are one too high; its ids are right */
static int collect_keys_off(uint32_t *ids, uint32_t *keys, const float *p, int n, uint32_t lo, uint32_t hi) {
    int m = sampler_ops_scalar.collect(ids, keys, p, n, lo, hi);
    for (int i = 0; keys && i < m; i++) keys[i]++;
    return m;
}

/* The self-check of a table with one wrong pass against the scalar one: some outputs (exactly `outputs`
 * where that is not 0) differ, the first in `pass`. */
static void expect_caught(const struct sampler_row_ops *broken, const float *row, int n, void *work,
                          const char *pass, int outputs) {
    const char *first = NULL;
    int d = sampler_ops_compare(broken, &sampler_ops_scalar, row, n, 0.9f, work, &first);
    if (outputs)
        cr_expect_eq(d, outputs, "a wrong %s pass: %d outputs differ, want %d", pass, d, outputs);
    else
        cr_expect_gt(d, 0, "a wrong %s pass went unnoticed", pass);
    cr_expect(first && strcmp(first, pass) == 0, "first differing pass: %s, want %s", first ? first : "none",
              pass);
}

Test(sampler, isa_self_check_compares_every_pass) {
    enum { N = 5003 };
    float *row = malloc(sizeof(float) * N);
    void *work = malloc(sampler_check_work_bytes(N));
    const char *first = NULL;
    for (int kind = 0; kind < SAMPLER_ROW_KIND_COUNT; kind++) {
        sampler_rows_fill(row, N, (enum sampler_row_kind)kind, 808);
        for (int isa = 0; isa < KERNEL_ISA_COUNT; isa++) {
            int d = sampler_isa_compare((enum kernel_isa)isa, row, N, 0.9f, work, &first);
            if (d < 0) continue; /* the CPU lacks it */
            cr_expect_eq(d, 0, "isa %d kind %d: %d outputs differ, first in %s", isa, kind, d, first);
        }
        struct sampler_row_ops broken = sampler_ops_scalar;
        broken.finish = finish_off_by_one;
        expect_caught(&broken, row, N, work, "finish", 0);
        broken = sampler_ops_scalar;
        broken.exp = exp_off_by_one;
        expect_caught(&broken, row, N, work, "exp", 1);
        broken = sampler_ops_scalar;
        broken.bin_sums = bin_sums_miss_last; /* the scalar table has none: checked only where one exists */
        expect_caught(&broken, row, N, work, "bin_sums", 1);
        broken = sampler_ops_scalar;
        broken.select_keys = select_keys_drop_last;
        expect_caught(&broken, row, N, work, "select_keys", 0);
        broken = sampler_ops_scalar;
        broken.collect = collect_keys_off; /* its ids are right: only the check with keys sees it */
        expect_caught(&broken, row, N, work, "collect (with keys)", 0);
    }
    free(row), free(work);
}
