/* The block formats Q8_0 and Q4_0 (kernels/quant.h): f16 scales by hand, the block layout by hand, round
 * trips within each format's bound, columns not a multiple of 32 refused, and the matvec of every ISA the
 * CPU has (and the VNNI and AVX2 loops directly) against quant_matvec_ref on odd shapes, in a team of one
 * and two, in a kernel team, row-major and in column panels; and against the dequantised weights' f32
 * product within the bound that x's quantisation allows. */
#include <omp.h>

#include "kernels/quant.h"
#include "kernels/quant_ops.h"
#include "kernels/team.h"
#include "kernels_test_util.h"

Test(quant, f16_by_hand) {
    cr_expect_eq(quant_f16_from_f32(1.0f), 0x3c00);
    cr_expect_eq(quant_f16_from_f32(-2.0f), 0xc000);
    cr_expect_eq(quant_f16_from_f32(65504.0f), 0x7bff);
    cr_expect_eq(quant_f16_from_f32(65520.0f), 0x7c00);          /* rounds up to inf */
    cr_expect_eq(quant_f16_from_f32(0x1.0p-24f), 0x0001);        /* least subnormal */
    cr_expect_eq(quant_f16_from_f32(0x1.8p-25f), 0x0001);        /* 0.75 ulp: nearest */
    cr_expect_eq(quant_f16_from_f32(0x1.0p-25f), 0x0000);        /* a tie: to even (0) */
    cr_expect_eq(quant_f16_from_f32(0.1f), 0x2e66);              /* 0.0999755859375 */
    cr_expect_eq(quant_f16_from_f32(1.0f + 0x1.0p-11f), 0x3c00); /* tie between 1 and 1 + 2^-10: even */
    cr_expect_eq(quant_f16_from_f32(1.0f + 0x1.8p-11f), 0x3c01);
    cr_expect_float_eq(quant_f16_to_f32(0x3555), 0.333251953125f, 0.0f);
    cr_expect_float_eq(quant_f16_to_f32(0x0200), 0x1.0p-15f, 0.0f);
    /* every finite f16 survives the trip through f32 */
    for (uint32_t h = 0; h < 0x10000u; h++) {
        if ((h & 0x7c00u) == 0x7c00u) continue;
        uint16_t back = quant_f16_from_f32(quant_f16_to_f32((uint16_t)h));
        if (back != h)
            cr_assert_fail("f16 0x%04x -> %g -> 0x%04x", h, (double)quant_f16_to_f32((uint16_t)h), back);
    }
}

/* Q4_0's layout as llama.cpp's: the block's largest magnitude gets code 0 (d = m / -8), element i in the
 * low nibble of byte i and element 16 + i in the high one, value d * (code - 8). */
Test(quant, q4_0_block_by_hand) {
    float x[32] = {0};
    x[0] = -8.0f; /* the largest magnitude: d = 1, code 0 */
    x[16] = 3.0f; /* code 11, in the high nibble of byte 0 */
    x[1] = 7.0f;  /* code 15 */
    x[17] = 8.0f; /* +8 d clamps to code 15, value 7 */
    x[2] = -0.5f; /* -0.5 + 8.5 = 8.0: code 8 (value 0) */
    struct quant_block_q4_0 b;
    quant_quantize_row(&b, FR_DTYPE_Q4_0, x, 32);
    cr_expect_eq(b.d, 0x3c00, "d = %04x", b.d);
    cr_expect_eq(b.qs[0], 0x0 | 0xb << 4, "byte 0 = %02x", b.qs[0]);
    cr_expect_eq(b.qs[1], 0xf | 0xf << 4, "byte 1 = %02x", b.qs[1]);
    cr_expect_eq(b.qs[2], 0x8 | 0x8 << 4, "byte 2 = %02x", b.qs[2]);
    float back[32];
    quant_dequantize_row(back, FR_DTYPE_Q4_0, &b, 32);
    cr_expect_float_eq(back[0], -8.0f, 0.0f);
    cr_expect_float_eq(back[16], 3.0f, 0.0f);
    cr_expect_float_eq(back[17], 7.0f, 0.0f);
    cr_expect_float_eq(back[5], 0.0f, 0.0f);
}

Test(quant, q8_0_block_by_hand) {
    float x[32] = {0};
    x[0] = 127.0f; /* d = 1 */
    x[1] = -3.0f;
    x[30] = -0.5f; /* ties: away from zero, as llama.cpp's roundf */
    x[31] = 2.5f;
    struct quant_block_q8_0 b;
    quant_quantize_row(&b, FR_DTYPE_Q8_0, x, 32);
    cr_expect_eq(b.d, 0x3c00);
    cr_expect_eq(b.qs[0], 127);
    cr_expect_eq(b.qs[1], -3);
    cr_expect_eq(b.qs[30], -1);
    cr_expect_eq(b.qs[31], 3);
    cr_expect_eq(fr_dtype_bytes(FR_DTYPE_Q8_0, 64), 68);
    cr_expect_eq(fr_dtype_bytes(FR_DTYPE_Q4_0, 64), 36);
}

/* Round trip bounds, per block of largest magnitude amax: Q8_0 |x - x'| <= d / 2 + 127 e, d = amax / 127
 * (half a step, plus the f16 scale's error e times the largest code; e = d 2^-11, or 2^-25 where d is an
 * f16 subnormal); Q4_0 |d| / 2 + 8 e, |d| = amax / 8, except the elements clamped at +8 d to code 15, which
 * lose up to a whole step. */
Test(quant, round_trip_within_bound) {
    struct test_rng rng = {5};
    enum { N = 32 * 257 };
    float *x = test_alloc(N * sizeof *x), *back = test_alloc(N * sizeof *back);
    unsigned char *q = test_alloc(fr_dtype_bytes(FR_DTYPE_Q8_0, N));
    for (int rep = 0; rep < 3; rep++) {
        float scale = rep == 0 ? 1.0f : rep == 1 ? 1e-3f : 300.0f;
        test_fill(&rng, x, N, -scale, scale);
        for (int t = FR_DTYPE_Q8_0; t <= FR_DTYPE_Q4_0; t++) {
            quant_quantize_row(q, (enum fr_dtype)t, x, N);
            quant_dequantize_row(back, (enum fr_dtype)t, q, N);
            double sq_err = 0, sq = 0;
            for (int k = 0; k < N / 32; k++) {
                float amax = 0;
                for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(x[k * 32 + i]));
                double d = t == FR_DTYPE_Q8_0 ? amax / 127.0 : amax / 8.0;
                for (int i = 0; i < 32; i++) {
                    double xi = x[k * 32 + i], err = fabs(xi - back[k * 32 + i]);
                    /* the f16 scale's error: 2^-11 relative, 2^-25 absolute below 2^-14 (subnormal) */
                    double dd = fmax(d / 2048, 0x1.0p-25), codes = t == FR_DTYPE_Q8_0 ? 127 : 8;
                    int clamped =
                        t == FR_DTYPE_Q4_0 && fabs(xi) > 7.5 * d && err > 0.5 * d; /* the +8 d end */
                    double bound = ((clamped ? 1.0 : 0.5) * d + codes * dd) * (1 + 1e-6);
                    if (!(err <= bound))
                        cr_assert_fail("%s block %d [%d]: x %.9g back %.9g err %.3g > %.3g", fr_dtype_name(t),
                                       k, i, xi, (double)back[k * 32 + i], err, bound);
                    sq_err += err * err, sq += xi * xi;
                }
            }
            /* uniform data: the rms error near step / sqrt(12) of the rms value's scale */
            double rel = sqrt(sq_err / sq);
            cr_expect(rel < (t == FR_DTYPE_Q8_0 ? 0.01 : 0.12), "%s rms relative error %.4f",
                      fr_dtype_name(t), rel);
        }
    }
    free(x), free(back), free(q);
}

Test(quant, cols_not_whole_blocks_refused) {
    const char *why = NULL;
    cr_expect_eq(quant_check_cols(FR_DTYPE_Q4_0, 48, &why), -1);
    cr_expect(why && strstr(why, "multiple of 32"), "why: %s", why ? why : "(none)");
    cr_expect_eq(quant_check_cols(FR_DTYPE_Q8_0, 64, NULL), 0);
    cr_expect_eq(quant_check_cols(FR_DTYPE_BF16, 7, NULL), 0);
    float x[40] = {0}, y[2];
    unsigned char w[2 * 34 * 2] = {0};
    why = NULL;
    cr_expect_eq(matvec(y, w, FR_DTYPE_Q8_0, x, 2, 40, MATVEC_BACKEND_FORGE, 1, &why), -1);
    cr_expect(why && strstr(why, "multiple of 32"));
    why = NULL;
    cr_expect_eq(matvec_panels(y, w, FR_DTYPE_Q8_0, x, 1, 128, 48, MATVEC_BACKEND_FORGE, 1, &why), -1);
    cr_expect(why && strstr(why, "whole blocks"));
    why = NULL;
    cr_expect_eq(matvec(y, w, FR_DTYPE_Q4_0, x, 2, 32, MATVEC_BACKEND_OPENBLAS, 1, &why), -1);
    cr_expect(why && strstr(why, "OpenBLAS"));
}

struct qm_case {
    int rows, cols, pw; /* pw 0: row-major */
};
/* odd row counts (not a multiple of the row blocks or chunks), odd and even block counts, one block; the
 * last two in column panels (the last panel narrower) */
static const struct qm_case qm_cases[] = {{1, 32, 0},      {3, 96, 0},      {37, 1056, 0}, {131, 64, 0},
                                          {1040, 1024, 0}, {5, 3072, 1536}, {67, 160, 64}};

/* Each row's bound against the dequantised weights' f32 product: x's quantisation moves each element by
 * at most half its block's step dx / 2, so |y - y_f32| <= sum_c |w_c| dx(c) / 2, plus f32 rounding. */
static void qm_tol_f32(double *tol, const float *wdq, const float *x, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        double s = 0, mag = 0;
        for (int k = 0; k < cols / 32; k++) {
            float amax = 0;
            for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(x[k * 32 + i]));
            for (int i = 0; i < 32; i++) {
                double w = fabs(wdq[(size_t)r * cols + k * 32 + i]);
                s += w * amax / 127.0 / 2.0 * (1 + 1e-6);
                mag += w * fabs(x[k * 32 + i]);
            }
        }
        tol[r] = s + 4.0 * cols * TEST_U32 * mag + 1e-30;
    }
}

/* Against the reference: the same integer dot products; only the f32 sums' order differs. */
static void qm_tol_ref(double *tol, const float *wdq, const float *x, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        double mag = 0;
        for (int c = 0; c < cols; c++) mag += fabs(wdq[(size_t)r * cols + c] * x[c]);
        tol[r] = 2.0 * cols * TEST_U32 * mag + 1e-30;
    }
}

/* The matrix in its stored layout (panels of pw) dequantised back to a row-major f32 [rows][cols]. */
static void qm_dequantise(float *out, const void *w, enum fr_dtype t, int rows, int cols, int pw) {
    for (int p = 0; p * pw < cols; p++) {
        int n = cols - p * pw < pw ? cols - p * pw : pw;
        const unsigned char *panel = (const unsigned char *)w + fr_dtype_bytes(t, (size_t)rows * pw * p);
        for (int r = 0; r < rows; r++)
            quant_dequantize_row(out + (size_t)r * cols + (size_t)p * pw, t,
                                 panel + fr_dtype_bytes(t, (size_t)r * n), (size_t)n);
    }
}

static void qm_check(enum fr_dtype t) {
    struct test_rng rng = {77 + (uint64_t)t};
    for (size_t k = 0; k < sizeof qm_cases / sizeof qm_cases[0]; k++) {
        int rows = qm_cases[k].rows, cols = qm_cases[k].cols, pw = qm_cases[k].pw ? qm_cases[k].pw : cols;
        size_t n = (size_t)rows * (size_t)cols;
        float *wf = test_alloc(n * sizeof *wf), *wdq = test_alloc(n * sizeof *wdq);
        unsigned char *w = test_alloc(fr_dtype_bytes(t, n));
        float *x = test_alloc((size_t)cols * sizeof *x), *y = test_alloc((size_t)rows * sizeof *y);
        float *ref = test_alloc((size_t)rows * sizeof *ref), *f32 = test_alloc((size_t)rows * sizeof *f32);
        double *tol = test_alloc((size_t)rows * sizeof *tol), *tol32 = test_alloc((size_t)rows * sizeof *tol);
        test_fill(&rng, wf, n, -1.0f, 1.0f);
        test_fill(&rng, x, (size_t)cols, -2.0f, 2.0f);
        for (int p = 0; p * pw < cols; p++) { /* quantise into the panel layout */
            int np = cols - p * pw < pw ? cols - p * pw : pw;
            for (int r = 0; r < rows; r++)
                quant_quantize_row(w + fr_dtype_bytes(t, (size_t)rows * pw * p + (size_t)r * np), t,
                                   wf + (size_t)r * cols + (size_t)p * pw, (size_t)np);
        }
        qm_dequantise(wdq, w, t, rows, cols, pw);
        quant_panels_pack(w, t, rows, cols, pw); /* the kernels' memory order, once wdq has the file's */
        matvec_ref_panels(ref, w, t, x, rows, cols, pw);
        matvec_ref(f32, wdq, FR_DTYPE_F32, x, rows, cols);
        qm_tol_ref(tol, wdq, x, rows, cols);
        qm_tol_f32(tol32, wdq, x, rows, cols);
        char what[160];
        snprintf(what, sizeof what, "%s ref %dx%d (pw %d) vs dequantised f32", fr_dtype_name(t), rows, cols,
                 pw);
        cr_expect(test_close(what, ref, f32, (size_t)rows, 0.0, 0.0, tol32), "%s", what);
        FOR_EACH_ISA(isa) {
            for (int nt = 1; nt <= 2; nt++) {
                for (int r = 0; r < rows; r++) y[r] = NAN;
                int rc = 0;
#pragma omp parallel num_threads(nt) reduction(| : rc)
                rc |= matvec_panels(y, w, t, x, rows, cols, pw, MATVEC_BACKEND_FORGE, nt, NULL);
                cr_assert_eq(rc, 0);
                snprintf(what, sizeof what, "%s %s (%s) %dx%d pw %d, team of %d", fr_dtype_name(t),
                         kernel_isa_name(isa), kernel_quant_describe(), rows, cols, pw, nt);
                cr_expect(test_close(what, y, ref, (size_t)rows, 0.0, 0.0, tol), "%s", what);
                cr_expect(test_close(what, y, f32, (size_t)rows, 0.0, 0.0, tol32), "%s vs f32", what);
            }
            /* in a kernel team of two, as the decode step calls it */
            struct kernel_team team;
            kernel_team_init(&team);
            for (int r = 0; r < rows; r++) y[r] = NAN;
#pragma omp parallel num_threads(2)
            {
                kernel_team_join(&team);
                matvec_panels(y, w, t, x, rows, cols, pw, MATVEC_BACKEND_FORGE, 2, NULL);
                kernel_team_leave();
            }
            snprintf(what, sizeof what, "%s %s %dx%d pw %d, kernel team", fr_dtype_name(t),
                     kernel_isa_name(isa), rows, cols, pw);
            cr_expect(test_close(what, y, ref, (size_t)rows, 0.0, 0.0, tol), "%s", what);
        }
        free(wf), free(wdq), free(w), free(x), free(y), free(ref), free(f32), free(tol), free(tol32);
    }
}

Test(quant, q8_0_matvec_every_isa) {
    qm_check(FR_DTYPE_Q8_0);
}

Test(quant, q4_0_matvec_every_isa) {
    qm_check(FR_DTYPE_Q4_0);
}

/* The loop tables themselves, where the CPU runs them: the VNNI loops (one row group at a time, and two side
 * by side as the L2 prefetch profile takes them, over 3 groups: a pair and one alone) and the AVX2 loops that
 * AVX-512 CPUs without VNNI run, on the same quantised x, against the scalar table (exact integer sums). */
typedef void (*qm_loop_q8_0)(float *, const struct quant_block_q8_0 *, const struct quant_act *, int, int,
                             int, int);
typedef void (*qm_loop_q4_0)(float *, const struct quant_block_q4_0 *, const struct quant_act *, int, int,
                             int, int);
static void qm_loop_tables_check(int n_loops) {
    struct test_rng rng = {9};
    enum { R = 61, C = 1056 };
    float *wf = test_alloc((size_t)R * C * sizeof *wf), x[C], y[R], ref[R];
    double tol[R];
    unsigned char *w = test_alloc(fr_dtype_bytes(FR_DTYPE_Q8_0, (size_t)R * C));
    test_fill(&rng, wf, (size_t)R * C, -1.0f, 1.0f);
    test_fill(&rng, x, C, -1.0f, 1.0f);
    const struct quant_act *a = quant_act_quantize(x, C);
    const char *names[] = {"AVX2", "AVX-512 VNNI", "AVX-512 VNNI, two groups side by side"};
    const qm_loop_q8_0 q8[] = {quant_ops_avx2.matvec_q8_0, quant_ops_avx512.matvec_q8_0,
                               quant_ops_avx512.matvec_q8_0_pairs};
    const qm_loop_q4_0 q4[] = {quant_ops_avx2.matvec_q4_0, quant_ops_avx512.matvec_q4_0,
                               quant_ops_avx512.matvec_q4_0_pairs};
    cr_assert(q8[2] && q4[2] && !quant_ops_avx2.matvec_q8_0_pairs, "AVX-512 alone has the pair loops");
    float y_loop[3][R];
    for (int t = FR_DTYPE_Q8_0; t <= FR_DTYPE_Q4_0; t++) {
        quant_quantize_row(w, (enum fr_dtype)t, wf, (size_t)R * C);
        float *wdq = test_alloc((size_t)R * C * sizeof *wdq);
        quant_dequantize_row(wdq, (enum fr_dtype)t, w, (size_t)R * C);
        quant_matrix_pack(w, (enum fr_dtype)t, R, C); /* 3 row groups and 13 rows after them */
        qm_tol_ref(tol, wdq, x, R, C);
        free(wdq);
        if (t == FR_DTYPE_Q8_0)
            quant_ops_scalar.matvec_q8_0(ref, (const void *)w, a, 0, R, C / 32, 0);
        else
            quant_ops_scalar.matvec_q4_0(ref, (const void *)w, a, 0, R, C / 32, 0);
        for (int k = 0; k < n_loops; k++) {
            /* add = 1 onto ones: the add path too */
            for (int r = 0; r < R; r++) y[r] = 1.0f;
            if (t == FR_DTYPE_Q8_0)
                q8[k](y, (const void *)w, a, 0, R, C / 32, 1);
            else
                q4[k](y, (const void *)w, a, 0, R, C / 32, 1);
            for (int r = 0; r < R; r++) y[r] -= 1.0f;
            memcpy(y_loop[k], y, sizeof y);
            char what[96];
            snprintf(what, sizeof what, "%s %s vs scalar", fr_dtype_name(t), names[k]);
            cr_expect(test_close(what, y, ref, R, 1e-6, 0.0, tol), "%s", what);
        }
        /* the same integer sums, scaled and added in the same order: the same bits (AVX-512's Q4_0 groups
         * carry 16 times their sums until a final exact 1/16), one group at a time or two side by side */
        for (int k = 1; k < n_loops; k++)
            cr_expect_eq(memcmp(y_loop[0], y_loop[k], sizeof y_loop[0]), 0, "%s: AVX2 and %s bits differ",
                         fr_dtype_name(t), names[k]);
    }
    free(wf), free(w);
}

Test(quant, avx2_loop_tables_agree) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) cr_skip_test("no AVX2: the SIMD loop tables are not tested here");
    qm_loop_tables_check(1);
}

/* The VNNI loops beside AVX2's: a CPU without them shows this test as skipped. */
Test(quant, vnni_loop_tables_agree) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512vnni") || !__builtin_cpu_supports("avx512vl"))
        cr_skip_test("AVX-512 VNNI loops not tested: this CPU lacks AVX512_VNNI");
    qm_loop_tables_check(3);
}

/* The loop the report and the roof notes name: AVX-512's pair loop only on the L2 profile, AVX2's never. */
Test(quant, describe_names_the_pair_loop) {
    __builtin_cpu_init();
    if (kernel_isa_force(KERNEL_ISA_AVX2) == 0) {
        kernel_prefetch_force(KERNEL_PREFETCH_L2);
        cr_expect_str_eq(kernel_quant_describe(), "AVX2 (vpmaddubsw)");
    }
    if (__builtin_cpu_supports("avx512vnni") && kernel_isa_force(KERNEL_ISA_AVX512) == 0) {
        kernel_prefetch_force(KERNEL_PREFETCH_L1);
        cr_expect_str_eq(kernel_quant_describe(), "AVX-512 VNNI (vpdpbusd)");
        kernel_prefetch_force(KERNEL_PREFETCH_L2);
        cr_expect_str_eq(kernel_quant_describe(), "AVX-512 VNNI (vpdpbusd), two row groups side by side");
    }
    kernel_isa_force(KERNEL_ISA_COUNT);
    kernel_prefetch_force(KERNEL_PREFETCH_COUNT);
}

/* The SIMD tables' x quantisation against the plain loop, bit for bit: random blocks of several magnitudes,
 * an all-zero block, and blocks whose largest |x| is 127 (so 1/d is 1) holding halves, which only round to
 * even can place (2.5 -> 2, 3.5 -> 4, -2.5 -> -2). */
Test(quant, act_blocks_match_the_plain_loop) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) cr_skip_test("no AVX2: the SIMD loop tables are not tested here");
    enum { NB = 40, N = NB * 32 };
    struct test_rng rng = {13};
    float x[N];
    for (int k = 0; k < NB; k++) {
        float scale = k % 4 == 0 ? 1e-3f : k % 4 == 1 ? 1.0f : k % 4 == 2 ? 30.0f : 1e4f;
        test_fill(&rng, x + k * 32, 32, -scale, scale);
    }
    for (int i = 0; i < 32; i++) x[5 * 32 + i] = 0.0f;
    for (int k = 6; k < 8; k++) {
        for (int i = 0; i < 32; i++) x[k * 32 + i] = (float)((i * 7) % 60 - 30) + 0.5f;
        x[k * 32 + 31] = k == 6 ? 127.0f : -127.0f;
    }
    int8_t q_ref[N], q[N];
    float d_ref[NB], d[NB];
    int32_t c_ref[NB], c[NB];
    quant_act_blocks_scalar(q_ref, d_ref, c_ref, x, NB);
    cr_expect_eq(q_ref[6 * 32 + 0], -30, "-29.5 rounds to even -30");
    cr_expect_eq(q_ref[6 * 32 + 5], 6, "5.5 rounds to even 6");
    const struct quant_ops *tables[] = {&quant_ops_avx2, &quant_ops_avx512};
    int n_tables = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl") ? 2 : 1;
    for (int t = 0; t < n_tables; t++) {
        memset(q, 0x55, sizeof q);
        tables[t]->act_blocks(q, d, c, x, NB);
        cr_expect_eq(memcmp(q, q_ref, sizeof q), 0, "%s: codes differ from the plain loop's",
                     tables[t]->name);
        cr_expect_eq(memcmp(d, d_ref, sizeof d), 0, "%s: scales differ", tables[t]->name);
        cr_expect_eq(memcmp(c, c_ref, sizeof c), 0, "%s: offsets differ", tables[t]->name);
    }
}
