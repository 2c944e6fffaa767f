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
#include "tests/kernels_test_util.h"

/* pw: the weights' column panel width; 0 stores them row-major */
struct gemm_case {
    int batch, rows, cols, pw;
};

static const struct gemm_case gemm_cases[] = {
    {2, 1, 1, 0},      {3, 5, 7, 0},     {2, 4, 16, 0},     {7, 13, 33, 0},      {5, 67, 129, 0},
    {13, 130, 257, 0}, {6, 9, 100, 0},   {11, 37, 1030, 0}, {1, 17, 100, 0},     {64, 21, 70, 0},
    {25, 64, 512, 0},  {7, 13, 33, 16},  {5, 67, 129, 64},  {11, 37, 1030, 384}, {1, 17, 100, 64},
    {131, 19, 300, 0}, {129, 9, 200, 64}}; /* more rows than one pass of GEMM_SUB_BATCH takes, and a rest */

struct gemm_data {
    int batch, rows, cols, pw, ldx, ldy;
    void *w;
    float *x, *y, *ref;
    double *tol;
};

/* ldx and ldy padded by 3 elements so a row stride is never the row length */
static void gemm_data_make(struct gemm_data *d, const struct gemm_case *c, enum fr_dtype t,
                           struct test_rng *rng) {
    *d = (struct gemm_data){
        .batch = c->batch, .rows = c->rows, .cols = c->cols, .pw = c->pw ? c->pw : c->cols};
    d->ldx = c->cols + 3, d->ldy = c->rows + 3;
    size_t n = (size_t)c->rows * (size_t)c->cols, nx = (size_t)c->batch * (size_t)d->ldx,
           ny = (size_t)c->batch * (size_t)d->ldy;
    d->w = test_alloc(n * fr_dtype_size(t));
    d->x = test_alloc(nx * sizeof *d->x);
    d->y = test_alloc(ny * sizeof *d->y);
    d->ref = test_alloc(ny * sizeof *d->ref);
    d->tol = test_alloc(ny * sizeof *d->tol);
    if (t == FR_DTYPE_BF16)
        test_fill_bf16(rng, d->w, n, -1.0f, 1.0f);
    else
        test_fill(rng, d->w, n, -1.0f, 1.0f);
    test_fill(rng, d->x, nx, -2.0f, 2.0f);
    for (size_t i = 0; i < ny; i++) d->ref[i] = 0.0f, d->tol[i] = 0.0;
    gemm_ref(d->ref, d->ldy, d->w, t, d->x, d->ldx, c->batch, c->rows, c->cols, d->pw);
    for (int b = 0; b < c->batch; b++)
        for (int r = 0; r < c->rows; r++) {
            double s = 0.0;
            for (int k = 0; k < c->cols; k++) {
                size_t i = col_panel_index(c->rows, c->cols, d->pw, r, k);
                double wv =
                    t == FR_DTYPE_BF16 ? bf16_to_f32(((const uint16_t *)d->w)[i]) : ((float *)d->w)[i];
                s += fabs(wv * d->x[(size_t)b * (size_t)d->ldx + (size_t)k]);
            }
            d->tol[(size_t)b * (size_t)d->ldy + (size_t)r] = (double)c->cols * TEST_U32 * s + 1e-30;
        }
}

static void gemm_data_free(struct gemm_data *d) {
    free(d->w), free(d->x), free(d->y), free(d->ref), free(d->tol);
}

/* Runs gemm into d->y (padding set to a sentinel that must survive) and checks it against d->ref. */
static int gemm_check(struct gemm_data *d, enum fr_dtype t, const struct gemm_blocking *blk,
                      enum matvec_backend be, const char *what) {
    size_t ny = (size_t)d->batch * (size_t)d->ldy;
    for (size_t i = 0; i < ny; i++) d->y[i] = -7.0f;
    const char *why = NULL;
    cr_assert_eq(gemm(d->y, d->ldy, d->w, t, d->x, d->ldx, d->batch, d->rows, d->cols, d->pw, blk, be,
                      kernel_team_procs(), &why),
                 0, "%s: %s", what, why ? why : "");
    int ok = 1;
    for (int b = 0; b < d->batch; b++) {
        size_t o = (size_t)b * (size_t)d->ldy;
        ok &= test_close(what, d->y + o, d->ref + o, (size_t)d->rows, 0.0, 0.0, d->tol + o);
        for (int p = d->rows; p < d->ldy; p++) ok &= d->y[o + (size_t)p] == -7.0f;
    }
    return ok;
}

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

/* gemm called by every thread of a 2-thread team on one case, against the reference. */
static void team_call_check(const struct gemm_case *c, enum fr_dtype t, enum matvec_backend be, uint64_t seed,
                            const char *what) {
    struct test_rng rng = {seed};
    struct gemm_data d;
    gemm_data_make(&d, c, t, &rng);
    for (size_t i = 0; i < (size_t)d.batch * (size_t)d.ldy; i++) d.y[i] = NAN;
    int failed = 0;
#pragma omp parallel num_threads(2) reduction(| : failed)
    failed |= gemm(d.y, d.ldy, d.w, t, d.x, d.ldx, d.batch, d.rows, d.cols, d.pw, NULL, be,
                   kernel_team_procs(), NULL) != 0;
    cr_expect(!failed, "%s", what);
    for (int b = 0; b < d.batch; b++) {
        size_t o = (size_t)b * (size_t)d.ldy;
        cr_expect(test_close(what, d.y + o, d.ref + o, (size_t)d.rows, 0.0, 0.0, d.tol + o));
    }
    gemm_data_free(&d);
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
