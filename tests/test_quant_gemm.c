/* The batch's GEMM over Q8_0 / Q4_0 weights (kernels/gemm_quant.c) on every ISA the CPU has, against
 * gemm_ref (the dequantised weights' product in double), on odd shapes, row-major and in column panels,
 * with blockings small enough to cut the columns into several blocks, batches past one pass of 64 rows; batch
 * 1 is the matvec (x quantised) and is checked against matvec_ref. Tolerance as tests/test_kernels_gemm.c:
 * cols * u * sum |w x|. */
#include "kernels/gemm.h"
#include "kernels/quant.h"
#include "kernels_test_util.h"

struct qg_case {
    int rows, cols, pw, batch;
};
static const struct qg_case qg_cases[] = {
    {37, 1056, 0, 3},
    {17, 64, 0, 7},
    {130, 3072, 1536, 5},
    {5, 160, 64, 2},
    {19, 320, 0, 131}}; /* batch rows past one pass of GEMM_SUB_BATCH, and a rest */

Test(quant_gemm, every_isa_against_ref) {
    struct test_rng rng = {31};
    const struct gemm_blocking small = {.l1d_bytes = 4096, .l2_bytes = 16384};
    for (int t = FR_DTYPE_Q8_0; t <= FR_DTYPE_Q4_0; t++)
        for (size_t k = 0; k < sizeof qg_cases / sizeof qg_cases[0]; k++) {
            const struct qg_case *q = &qg_cases[k];
            int pw = q->pw ? q->pw : q->cols, R = q->rows, C = q->cols, B = q->batch;
            size_t n = (size_t)R * C;
            float *wf = test_alloc(n * sizeof *wf), *x = test_alloc((size_t)B * C * sizeof *x);
            float *y = test_alloc((size_t)B * R * sizeof *y), *ref = test_alloc((size_t)B * R * sizeof *ref);
            float *deq = test_alloc(n * sizeof *deq);
            double *tol = test_alloc((size_t)B * R * sizeof *tol);
            unsigned char *w = test_alloc(fr_dtype_bytes(t, n));
            test_fill(&rng, wf, n, -1.0f, 1.0f);
            test_fill(&rng, x, (size_t)B * C, -2.0f, 2.0f);
            for (int p = 0; p * pw < C; p++) {
                int np = C - p * pw < pw ? C - p * pw : pw;
                for (int r = 0; r < R; r++)
                    quant_quantize_row(w + fr_dtype_bytes(t, (size_t)R * pw * p + (size_t)r * np), t,
                                       wf + (size_t)r * C + (size_t)p * pw, (size_t)np);
            }
            /* the dequantised matrix, row-major, for the tolerance */
            for (int p = 0; p * pw < C; p++) {
                int np = C - p * pw < pw ? C - p * pw : pw;
                for (int r = 0; r < R; r++)
                    quant_dequantize_row(deq + (size_t)r * C + (size_t)p * pw, t,
                                         w + fr_dtype_bytes(t, (size_t)R * pw * p + (size_t)r * np),
                                         (size_t)np);
            }
            quant_panels_pack(w, t, R, C, pw); /* the kernels' memory order, once deq has the file's */
            for (int b = 0; b < B; b++)
                for (int r = 0; r < R; r++) {
                    double mag = 0;
                    for (int c = 0; c < C; c++)
                        mag += fabs((double)deq[(size_t)r * C + c] * x[(size_t)b * C + c]);
                    tol[(size_t)b * R + r] = (double)C * TEST_U32 * mag + 1e-30;
                }
            gemm_ref(ref, R, w, t, x, C, B, R, C, pw);
            FOR_EACH_ISA(isa) {
                for (int i = 0; i < B * R; i++) y[i] = NAN;
                const char *why = NULL;
                cr_assert_eq(gemm(y, R, w, t, x, C, B, R, C, pw, &small, MATVEC_BACKEND_FORGE, 2, &why), 0,
                             "%s", why ? why : "");
                char what[128];
                snprintf(what, sizeof what, "gemm %s %s %dx%d pw %d batch %d", fr_dtype_name(t),
                         kernel_isa_name(isa), R, C, pw, B);
                cr_expect(test_close(what, y, ref, (size_t)B * R, 0.0, 0.0, tol), "%s", what);
            }
            free(wf), free(x), free(y), free(ref), free(deq), free(tol), free(w);
        }
}

Test(quant_gemm, refusals) {
    float x[2 * 64] = {0}, y[2 * 2];
    unsigned char w[2 * 2 * 34] = {0};
    const char *why = NULL;
    cr_expect_eq(gemm(y, 2, w, FR_DTYPE_Q8_0, x, 48, 2, 2, 48, 48, NULL, MATVEC_BACKEND_FORGE, 1, &why), -1);
    cr_expect(why && strstr(why, "multiple of 32"));
    why = NULL;
    cr_expect_eq(gemm(y, 2, w, FR_DTYPE_Q4_0, x, 64, 2, 2, 64, 64, NULL, MATVEC_BACKEND_OPENBLAS, 1, &why),
                 -1);
    cr_expect(why && strstr(why, "OpenBLAS"));
}
