/* matvec for every ISA the CPU supports against matvec_ref (double accumulation), bf16 and f32 weights, odd
 * shapes, row-major and as column panels (kernels/col_panels.h), each in a team of one and of two, with
 * either prefetch loop (kernel_prefetch_force); the OpenBLAS backend against the same reference; the team
 * (in-parallel-region) calling mode.
 *
 * Tolerance: each product w*x of a bf16 or f32 weight and an f32 activation is summed in f32, so the error
 * of any summation order is bounded by gamma_n * sum |w x| with gamma_n ~ n * u (u = 2^-24, n = cols): the
 * check allows cols * u * sum|w x| + 1e-30, i.e. a relative 6e-8 (n = 1) to 6e-5 (n = 1024) of the
 * magnitude sum, which the scalar, vector and OpenBLAS paths all meet with a wide margin in practice. */
#include "kernels/col_panels.h"
#include "kernels/team.h"
#include "tests/kernels_test_util.h"

/* pw: the weights' column panel width; 0 stores them row-major */
struct mv_case {
    int rows, cols, pw;
};

/* {9, 4097} and {7, 5000}: wider than MV_WIDE_COLS (4096), rows in fours on AVX-512 then one at a time,
 * with a partial vector at the end; {3, 16484} and {2, 33000} are wider than one pass of the SIMD loops
 * (MV_SPLIT_COLS, 16384 columns); {1040, 1024} (2 MiB of bf16) is handed out in several chunks of rows that
 * shrink, the last one a single block (matvec_plan_make); the last five are stored as column panels, the last
 * panel 1 column wide in two of them, and {520, 3072, 1536} hands out each panel's rows in chunks */
static const struct mv_case mv_cases[] = {
    {1, 1, 0},       {1, 16, 0},    {3, 7, 0},        {4, 33, 0},      {5, 64, 0},    {17, 100, 0},
    {31, 129, 0},    {67, 17, 0},   {64, 256, 0},     {130, 1027, 0},  {257, 48, 0},  {9, 4097, 0},
    {7, 5000, 0},    {3, 16484, 0}, {2, 33000, 0},    {1040, 1024, 0}, {31, 129, 64}, {130, 1027, 384},
    {9, 4097, 2048}, {1, 100, 64},  {520, 3072, 1536}};

/* tol[r] = cols * u * sum_c |w[r][c] x[c]|, w stored in column panels of pw columns */
static void mv_tol_panels(double *tol, const void *w, enum fr_dtype t, const float *x, int rows, int cols,
                          int pw) {
    for (int r = 0; r < rows; r++) {
        double s = 0.0;
        for (int c = 0; c < cols; c++) {
            size_t i = col_panel_index(rows, cols, pw, r, c);
            double wv = t == FR_DTYPE_BF16 ? bf16_to_f32(((const uint16_t *)w)[i]) : ((const float *)w)[i];
            s += fabs(wv * x[c]);
        }
        tol[r] = (double)cols * TEST_U32 * s + 1e-30;
    }
}

static void mv_tol(double *tol, const void *w, enum fr_dtype t, const float *x, int rows, int cols) {
    mv_tol_panels(tol, w, t, x, rows, cols, cols);
}

static void mv_check_all_isas(enum fr_dtype t) {
    struct test_rng rng = {42 + (uint64_t)t};
    for (size_t k = 0; k < sizeof mv_cases / sizeof mv_cases[0]; k++) {
        int rows = mv_cases[k].rows, cols = mv_cases[k].cols, pw = mv_cases[k].pw ? mv_cases[k].pw : cols;
        size_t n = (size_t)rows * (size_t)cols;
        void *w = test_alloc(n * fr_dtype_size(t));
        float *x = test_alloc((size_t)cols * sizeof *x);
        float *y = test_alloc((size_t)rows * sizeof *y), *ref = test_alloc((size_t)rows * sizeof *ref);
        double *tol = test_alloc((size_t)rows * sizeof *tol);
        if (t == FR_DTYPE_BF16)
            test_fill_bf16(&rng, w, n, -1.0f, 1.0f);
        else
            test_fill(&rng, w, n, -1.0f, 1.0f);
        test_fill(&rng, x, (size_t)cols, -2.0f, 2.0f);
        matvec_ref_panels(ref, w, t, x, rows, cols, pw);
        mv_tol_panels(tol, w, t, x, rows, cols, pw);
        FOR_EACH_ISA(isa) {
            /* a team of one and a team of two (the AVX-512 table runs another loop for a team of one), with
             * the rows prefetched into L1 and into L2 (two other loops), whichever this CPU would pick */
            for (int nt = 1; nt <= 2; nt++)
                for (int pf = 0; pf < KERNEL_PREFETCH_COUNT; pf++) {
                    kernel_prefetch_force((enum kernel_prefetch)pf);
                    for (int r = 0; r < rows; r++) y[r] = NAN;
                    int rc = 0;
#pragma omp parallel num_threads(nt) reduction(| : rc)
                    rc |= matvec_panels(y, w, t, x, rows, cols, pw, MATVEC_BACKEND_FORGE, nt, NULL);
                    kernel_prefetch_force(KERNEL_PREFETCH_COUNT);
                    cr_assert_eq(rc, 0);
                    char what[128];
                    snprintf(what, sizeof what,
                             "matvec %s %s %dx%d in panels of %d, team of %d, prefetch into L%d",
                             fr_dtype_name(t), kernel_isa_name(isa), rows, cols, pw, nt, pf + 1);
                    cr_expect(test_close(what, y, ref, (size_t)rows, 0.0, 0.0, tol), "%s", what);
                }
        }
        free(w), free(x), free(y), free(ref), free(tol);
    }
}

Test(kernels_matvec, bf16_every_isa) {
    mv_check_all_isas(FR_DTYPE_BF16);
}
Test(kernels_matvec, f32_every_isa) {
    mv_check_all_isas(FR_DTYPE_F32);
}

/* The matvec's description names the two-row loop on the L2 profile above scalar, and AVX2's loop under
 * AVX-512; nothing on the L1 profile or on scalar. */
Test(kernels_matvec, describe_names_the_loop) {
    kernel_prefetch_force(KERNEL_PREFETCH_L1);
    cr_expect_str_empty(kernel_matvec_describe());
    kernel_prefetch_force(KERNEL_PREFETCH_L2);
    kernel_isa_force(KERNEL_ISA_SCALAR);
    cr_expect_str_empty(kernel_matvec_describe());
    if (kernel_isa_best() >= KERNEL_ISA_AVX2) {
        kernel_isa_force(KERNEL_ISA_AVX2);
        cr_expect_str_eq(kernel_matvec_describe(), "; the bf16 matvec reads two rows at a time");
    }
    if (kernel_isa_best() >= KERNEL_ISA_AVX512) {
        kernel_isa_force(KERNEL_ISA_AVX512);
        cr_expect_str_eq(kernel_matvec_describe(),
                         "; the bf16 matvec reads two rows at a time, in AVX2's loop");
    }
    kernel_isa_force(KERNEL_ISA_COUNT);
    kernel_prefetch_force(KERNEL_PREFETCH_COUNT);
}

Test(kernels_matvec, ref_hand_computed) {
    /* [[1, 2], [-0.5, 4]] . [3, 0.25] = [3.5, -0.5] exactly, in bf16 and f32 */
    const float wf[] = {1.0f, 2.0f, -0.5f, 4.0f}, x[] = {3.0f, 0.25f};
    uint16_t wb[4];
    for (int i = 0; i < 4; i++) wb[i] = bf16_from_f32(wf[i]);
    float y[2];
    matvec_ref(y, wb, FR_DTYPE_BF16, x, 2, 2);
    cr_expect(y[0] == 3.5f && y[1] == -0.5f);
    matvec_ref(y, wf, FR_DTYPE_F32, x, 2, 2);
    cr_expect(y[0] == 3.5f && y[1] == -0.5f);
}

/* Forge and OpenBLAS sgemv on the same f32 weights, both against the reference. */
Test(kernels_matvec, forge_vs_openblas_f32) {
    struct test_rng rng = {7};
    const struct mv_case cases[] = {{3, 7, 0},       {67, 129, 0},       {256, 1024, 0},
                                    {1024, 3072, 0}, {1024, 3072, 1536}, {67, 129, 64}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int rows = cases[k].rows, cols = cases[k].cols, pw = cases[k].pw ? cases[k].pw : cols;
        size_t n = (size_t)rows * (size_t)cols;
        float *w = test_alloc(n * sizeof *w), *x = test_alloc((size_t)cols * sizeof *x);
        float *yf = test_alloc((size_t)rows * sizeof *yf), *yb = test_alloc((size_t)rows * sizeof *yb);
        float *ref = test_alloc((size_t)rows * sizeof *ref);
        double *tol = test_alloc((size_t)rows * sizeof *tol);
        test_fill(&rng, w, n, -1.0f, 1.0f);
        test_fill(&rng, x, (size_t)cols, -1.0f, 1.0f);
        matvec_ref_panels(ref, w, FR_DTYPE_F32, x, rows, cols, pw);
        mv_tol_panels(tol, w, FR_DTYPE_F32, x, rows, cols, pw);
        const char *why = NULL;
        cr_assert(matvec_backend_available(MATVEC_BACKEND_OPENBLAS, FR_DTYPE_F32, &why));
        cr_assert_eq(matvec_panels(yf, w, FR_DTYPE_F32, x, rows, cols, pw, MATVEC_BACKEND_FORGE,
                                   kernel_team_procs(), &why),
                     0);
        cr_assert_eq(matvec_panels(yb, w, FR_DTYPE_F32, x, rows, cols, pw, MATVEC_BACKEND_OPENBLAS,
                                   kernel_team_procs(), &why),
                     0);
        cr_expect(test_close("forge f32", yf, ref, (size_t)rows, 0.0, 0.0, tol));
        cr_expect(test_close("openblas sgemv", yb, ref, (size_t)rows, 0.0, 0.0, tol));
        free(w), free(x), free(yf), free(yb), free(ref), free(tol);
    }
}

/* bf16 on OpenBLAS: either cblas_sbgemv is exported and matches the reference within the error of rounding
 * x to bf16 (relative 2^-9 per product), or the backend says why not and matvec fails cleanly. */
Test(kernels_matvec, openblas_bf16_available_or_says_why) {
    struct test_rng rng = {9};
    enum { R = 37, C = 75 };
    uint16_t w[R * C];
    float x[C], y[R], ref[R];
    double tol[R];
    test_fill_bf16(&rng, w, R * C, -1.0f, 1.0f);
    test_fill(&rng, x, C, -1.0f, 1.0f);
    const char *why = NULL;
    if (matvec_backend_available(MATVEC_BACKEND_OPENBLAS, FR_DTYPE_BF16, &why)) {
        cr_assert_eq(matvec(y, w, FR_DTYPE_BF16, x, R, C, MATVEC_BACKEND_OPENBLAS, kernel_team_procs(), &why),
                     0);
        matvec_ref(ref, w, FR_DTYPE_BF16, x, R, C);
        mv_tol(tol, w, FR_DTYPE_BF16, x, R, C);
        for (int r = 0; r < R; r++) tol[r] *= 1.0 + 0x1.0p15 / C; /* 2^-9 of the magnitude sum */
        cr_expect(test_close("openblas sbgemv", y, ref, R, 0.0, 0.0, tol));
        /* the same weights read as column panels of 32 (32 + 32 + 11): one call per panel */
        cr_assert_eq(matvec_panels(y, w, FR_DTYPE_BF16, x, R, C, 32, MATVEC_BACKEND_OPENBLAS,
                                   kernel_team_procs(), &why),
                     0);
        matvec_ref_panels(ref, w, FR_DTYPE_BF16, x, R, C, 32);
        mv_tol_panels(tol, w, FR_DTYPE_BF16, x, R, C, 32);
        for (int r = 0; r < R; r++) tol[r] *= 1.0 + 0x1.0p15 / C;
        cr_expect(test_close("openblas sbgemv, column panels", y, ref, R, 0.0, 0.0, tol));
    } else {
        cr_assert_not_null(why);
        cr_expect_str_eq(why, "cblas_sbgemv not exported by this OpenBLAS build");
        why = NULL;
        cr_expect_eq(matvec(y, w, FR_DTYPE_BF16, x, R, C, MATVEC_BACKEND_OPENBLAS, kernel_team_procs(), &why),
                     -1);
        cr_expect_not_null(why);
    }
    cr_expect(matvec_backend_available(MATVEC_BACKEND_FORGE, FR_DTYPE_BF16, NULL));
}

/* The chunks of a plan cover [0, rows) in order, each starting on a whole block, none longer than the
 * largest chunk (or one block), none shorter than the smallest but for the last; returns the number of
 * chunks. */
static int plan_check(int rows, size_t row_bytes, int threads) {
    struct matvec_plan p;
    matvec_plan_make(&p, rows, row_bytes, threads);
    size_t block = row_bytes * MATVEC_ROW_BLOCK;
    size_t most = MATVEC_CHUNK_MAX_BYTES / block > 0 ? MATVEC_CHUNK_MAX_BYTES / block : 1;
    size_t least = MATVEC_CHUNK_MIN_BYTES / block > 0 ? MATVEC_CHUNK_MIN_BYTES / block : 1;
    int next = 0;
    for (int c = 0; c < p.n_chunks; c++) {
        int first, n;
        matvec_plan_chunk(&p, c, &first, &n);
        cr_assert_eq(first, next, "%d rows, %d threads: chunk %d starts at %d", rows, threads, c, first);
        cr_assert_eq(first % MATVEC_ROW_BLOCK, 0);
        cr_assert(n > 0 && (size_t)n <= most * MATVEC_ROW_BLOCK, "chunk %d: %d rows", c, n);
        if (c + 1 < p.n_chunks && (size_t)n < least * MATVEC_ROW_BLOCK)
            cr_assert((size_t)rows - (size_t)first - (size_t)n < least * MATVEC_ROW_BLOCK,
                      "%d rows, %d threads: chunk %d of %d rows, short and not near the end", rows, threads,
                      c, n);
        next = first + n;
    }
    cr_assert_eq(next, rows, "%d rows, %d threads: chunks end at %d", rows, threads, next);
    return p.n_chunks;
}

/* By hand: 4096 rows of 2 KiB on two threads are blocks of 32 KiB, at most 64 (2 MiB) and at least 4
 * (128 KiB) a chunk; 3 chunks of 64 blocks leave 64 < 2 x 64, then 32, 16, 8, 4 and 4 (the least). */
Test(kernels_matvec, plan_by_hand) {
    struct matvec_plan p;
    matvec_plan_make(&p, 4096, 2048, 2);
    static const int first[] = {0, 1024, 2048, 3072, 3584, 3840, 3968, 4032};
    cr_assert_eq(p.n_chunks, 8);
    for (int c = 0; c < 8; c++) {
        int f, n;
        matvec_plan_chunk(&p, c, &f, &n);
        cr_expect_eq(f, first[c], "chunk %d", c);
        cr_expect_eq(n, (c < 7 ? first[c + 1] : 4096) - first[c], "chunk %d", c);
    }
    /* one thread: the largest chunks, then what is left */
    matvec_plan_make(&p, 1000, 2048, 1);
    cr_expect_eq(p.n_chunks, 1);
    cr_expect_eq(plan_check(1000, 2048, 1), 1);
    cr_expect_eq(plan_check(4096, 2048, 1), 4);
}

Test(kernels_matvec, plan_covers_every_shape) {
    static const int rows[] = {1, 15, 16, 17, 1000, 1040, 4096, 6144, 151936};
    static const size_t row_bytes[] = {2, 2048, 6144, 19456, (size_t)1 << 21, (size_t)3 << 21};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (size_t b = 0; b < sizeof row_bytes / sizeof row_bytes[0]; b++)
            for (int t = 1; t <= 256; t *= 2) plan_check(rows[r], row_bytes[b], t);
    cr_expect_eq(plan_check(0, 2048, 2), 0);
}

/* Inside a parallel region every thread makes the same call and the rows are shared over the team. */
Test(kernels_matvec, team_mode_and_thread_counts) {
    struct test_rng rng = {11};
    enum { R = 517, C = 300 };
    uint16_t *w = test_alloc((size_t)R * C * sizeof *w);
    float x[C], y[R], ref[R];
    double tol[R];
    test_fill_bf16(&rng, w, (size_t)R * C, -1.0f, 1.0f);
    test_fill(&rng, x, C, -1.0f, 1.0f);
    matvec_ref(ref, w, FR_DTYPE_BF16, x, R, C);
    mv_tol(tol, w, FR_DTYPE_BF16, x, R, C);
    for (int nt = 1; nt <= 5; nt += 2) {
        for (int r = 0; r < R; r++) y[r] = NAN;
#pragma omp parallel num_threads(nt)
        matvec(y, w, FR_DTYPE_BF16, x, R, C, MATVEC_BACKEND_FORGE, nt, NULL);
        cr_expect(test_close("team matvec", y, ref, R, 0.0, 0.0, tol), "team of %d", nt);
        for (int r = 0; r < R; r++) y[r] = NAN;
        matvec(y, w, FR_DTYPE_BF16, x, R, C, MATVEC_BACKEND_FORGE, nt, NULL);
        cr_expect(test_close("own-region matvec", y, ref, R, 0.0, 0.0, tol), "%d threads", nt);
    }
    free(w);
}

Test(kernels_isa, force_and_names) {
    enum kernel_isa best = kernel_isa_best();
    cr_expect_eq(kernel_isa_active(), best);
    cr_expect_eq(kernel_isa_force(KERNEL_ISA_SCALAR), 0);
    cr_expect_eq(kernel_isa_active(), KERNEL_ISA_SCALAR);
    if (best < KERNEL_ISA_AVX512) cr_expect_eq(kernel_isa_force(KERNEL_ISA_AVX512), -1);
    cr_expect_eq(kernel_isa_force(KERNEL_ISA_COUNT), 0);
    cr_expect_eq(kernel_isa_active(), best);
    cr_expect_str_eq(kernel_isa_name(KERNEL_ISA_SCALAR), "scalar");
    cr_expect_str_eq(kernel_isa_name(KERNEL_ISA_AVX2), "avx2");
    cr_expect_str_eq(kernel_isa_name(KERNEL_ISA_AVX512), "avx512");
}

/* Only the CPUs a profile was measured on pass for measured: an Intel Xeon other than Emerald Rapids
 * (family 6h model 207) runs the L1 profile as an unmeasured default, and the run's description says so
 * unless a profile is forced. */
Test(kernels_matvec, prefetch_profile_says_where_it_was_measured) {
    cr_expect(kernel_prefetch_measured_on(true, 0x19u, 17u), "Zen 3/4");
    cr_expect(kernel_prefetch_measured_on(true, 0x1Au, 2u), "Zen 5");
    cr_expect(kernel_prefetch_measured_on(false, 0x6u, 207u), "Emerald Rapids");
    cr_expect(!kernel_prefetch_measured_on(false, 0x6u, 173u), "Granite Rapids: not measured");
    cr_expect(!kernel_prefetch_measured_on(false, 0x6u, 143u), "Sapphire Rapids: not measured");
    cr_expect(!kernel_prefetch_measured_on(true, 0x17u, 49u), "Zen 2: not measured");
    kernel_prefetch_force(KERNEL_PREFETCH_L1);
    cr_expect(strstr(kernel_prefetch_describe(), ", forced)") != NULL, "%s", kernel_prefetch_describe());
    kernel_prefetch_force(KERNEL_PREFETCH_COUNT);
    cr_expect(strstr(kernel_prefetch_describe(), "the L") == kernel_prefetch_describe(), "%s",
              kernel_prefetch_describe());
}
