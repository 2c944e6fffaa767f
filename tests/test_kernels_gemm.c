/* gemm for every ISA the CPU supports against gemm_ref (matvec_ref per batch row, double accumulation), bf16
 * and f32 weights, on odd shapes (batch, rows and columns not multiples of the vector width or the register
 * tile), with padded leading dimensions, with blockings small enough to cut the columns into several blocks
 * (the accumulate path), with the weights stored as column panels (kernels/col_panels.h), and in the team
 * calling mode; OpenBLAS sgemm against the same reference; bf16 on
 * OpenBLAS refused with its reason. Tolerance as tests/test_kernels_matvec.c: cols * u * sum |w x| per
 * output, the bound on any f32 summation order. */
#include "kernels/col_panels.h"
#include "kernels/gemm.h"
#include "kernels/team.h"
#include "tests/gemm_test_util.h"

static const struct gemm_case gemm_cases[] = {
    {2, 1, 1, 0},      {3, 5, 7, 0},     {2, 4, 16, 0},     {7, 13, 33, 0},      {5, 67, 129, 0},
    {13, 130, 257, 0}, {6, 9, 100, 0},   {11, 37, 1030, 0}, {1, 17, 100, 0},     {64, 21, 70, 0},
    {25, 64, 512, 0},  {7, 13, 33, 16},  {5, 67, 129, 64},  {11, 37, 1030, 384}, {1, 17, 100, 64},
    {131, 19, 300, 0}, {129, 9, 200, 64}}; /* more rows than one pass of GEMM_SUB_BATCH takes, and a rest */

static void gemm_check_all_isas(enum fr_dtype t) {
    struct test_rng rng = {1234 + (uint64_t)t};
    /* default blocking, and one so small that every case with more than 64 columns is cut into blocks */
    const struct gemm_blocking tiny = {.l1d_bytes = 1024, .l2_bytes = 2048};
    for (size_t k = 0; k < sizeof gemm_cases / sizeof gemm_cases[0]; k++) {
        struct gemm_data d;
        gemm_data_make(&d, &gemm_cases[k], t, &rng);
        FOR_EACH_ISA(isa) {
            for (int small = 0; small <= 1; small++) {
                char what[128];
                snprintf(what, sizeof what, "gemm %s %s batch %d %dx%d panels of %d%s", fr_dtype_name(t),
                         kernel_isa_name(isa), d.batch, d.rows, d.cols, d.pw,
                         small ? " (tiny blocking)" : "");
                cr_expect(gemm_check(&d, t, small ? &tiny : NULL, MATVEC_BACKEND_FORGE, what), "%s", what);
            }
        }
        gemm_data_free(&d);
    }
}

Test(kernels_gemm, bf16_every_isa) {
    gemm_check_all_isas(FR_DTYPE_BF16);
}
Test(kernels_gemm, f32_every_isa) {
    gemm_check_all_isas(FR_DTYPE_F32);
}

/* The tiny blocking really cuts the columns, so the accumulate path above was taken. */
Test(kernels_gemm, blocking_cuts_columns) {
    const struct gemm_blocking tiny = {.l1d_bytes = 1024, .l2_bytes = 2048};
    cr_expect_eq(gemm_block_cols(4, 64, FR_DTYPE_BF16, &tiny), 64);
    int kc = gemm_block_cols(11, 1030, FR_DTYPE_BF16, &tiny);
    cr_expect(kc >= 64 && kc < 1030 && kc % 64 == 0, "kc %d", kc);
    /* this machine's sizes: a 1024-column projection at batch 64 fits one block in a 1 MiB L2 */
    const struct gemm_blocking zen4 = {.l1d_bytes = 32 << 10, .l2_bytes = 1 << 20};
    cr_expect_eq(gemm_block_cols(64, 1024, FR_DTYPE_BF16, &zen4), 1024);
}

/* Hand-computed: W = [[1, 2], [-0.5, 4]], X rows [3, 0.25] and [-1, 1]: Y = [[3.5, -0.5], [1, 4.5]]. */
Test(kernels_gemm, ref_hand_computed) {
    const float w[] = {1.0f, 2.0f, -0.5f, 4.0f}, x[] = {3.0f, 0.25f, -1.0f, 1.0f};
    float y[4];
    gemm_ref(y, 2, w, FR_DTYPE_F32, x, 2, 2, 2, 2, 2);
    cr_expect(y[0] == 3.5f && y[1] == -0.5f && y[2] == 1.0f && y[3] == 4.5f);
    FOR_EACH_ISA(isa) {
        for (int i = 0; i < 4; i++) y[i] = NAN;
        cr_assert_eq(gemm(y, 2, w, FR_DTYPE_F32, x, 2, 2, 2, 2, 2, NULL, MATVEC_BACKEND_FORGE,
                          kernel_team_procs(), NULL),
                     0);
        cr_expect(y[0] == 3.5f && y[1] == -0.5f && y[2] == 1.0f && y[3] == 4.5f, "%s", kernel_isa_name(isa));
    }
}

/* Inside a parallel region every thread makes the same call and each computes its share. */
Test(kernels_gemm, team_calling_mode) {
    const struct gemm_case c = {9, 300, 200, 0}, panelled = {9, 300, 200, 64};
    team_call_check(&c, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, 77, "gemm team");
    team_call_check(&panelled, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, 79, "gemm team, column panels");
}

Test(kernels_gemm, openblas_sgemm_f32) {
    struct test_rng rng = {5};
    /* then: several 1 MiB row chunks (256 rows of 1024 f32), the last one short; 65 rows of 4100, row-major
     * and in panels of 2048 (2048 + 2048 + 4); 700 x 1024 in panels of 384 */
    const struct gemm_case cases[] = {{2, 3, 7, 0},       {5, 67, 129, 0},  {16, 256, 1024, 0},
                                      {3, 700, 1024, 0},  {4, 65, 4100, 0}, {4, 65, 4100, 2048},
                                      {3, 700, 1024, 384}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct gemm_data d;
        gemm_data_make(&d, &cases[k], FR_DTYPE_F32, &rng);
        cr_assert(gemm_backend_available(MATVEC_BACKEND_OPENBLAS, FR_DTYPE_F32, d.batch, NULL));
        cr_expect(gemm_check(&d, FR_DTYPE_F32, NULL, MATVEC_BACKEND_OPENBLAS, "openblas sgemm"));
        gemm_data_free(&d);
    }
}

/* OpenBLAS inside a caller's parallel region: one thread makes the whole call, every thread returns after. */
Test(kernels_gemm, openblas_team_calling_mode) {
    const struct gemm_case c = {3, 300, 200, 0}, panelled = {3, 300, 200, 64};
    team_call_check(&c, FR_DTYPE_F32, MATVEC_BACKEND_OPENBLAS, 78, "openblas team");
    team_call_check(&panelled, FR_DTYPE_F32, MATVEC_BACKEND_OPENBLAS, 80, "openblas team, column panels");
}

Test(kernels_gemm, openblas_bf16_refused_with_reason) {
    uint16_t w[6] = {0};
    float x[6] = {0}, y[6] = {0};
    const char *why = NULL;
    cr_expect(!gemm_backend_available(MATVEC_BACKEND_OPENBLAS, FR_DTYPE_BF16, 2, &why));
    cr_expect(why && strstr(why, "cblas_sbgemm"));
    why = NULL;
    cr_expect_eq(gemm(y, 3, w, FR_DTYPE_BF16, x, 2, 2, 3, 2, 2, NULL, MATVEC_BACKEND_OPENBLAS,
                      kernel_team_procs(), &why),
                 -1);
    cr_expect(why != NULL);
}
