/* The oneDNN backend (kernels/gemm_onednn.h) against gemm_ref on odd shapes (batch 1, 7, 33, 64; 203 rows;
 * 1000 and 96 columns; padded leading dimensions; column panels, the last one narrower), bf16 and f32
 * weights, and against OpenBLAS sgemm on the same f32 data; its description naming an implementation and an
 * ISA; the team calling mode; what it refuses, with the reason. Every test frees the backend's state (the
 * suite's fini), so LeakSanitizer sees whatever oneDNN itself keeps. */
#include "kernels/gemm_onednn.h"
#include "tests/gemm_test_util.h"

static void onednn_fini(void) {
    gemm_onednn_cleanup();
}

/* oneDNN 2.6 has bf16 matmuls only from avx512_core up (none on an AVX2-only Zen 3): there the backend must
 * refuse the type with the reason, in the probe and in a call, and the bf16 checks are skipped saying so. */
static void skip_unless_onednn_runs(enum fr_dtype t) {
    const char *why = NULL;
    if (gemm_onednn_available(t, &why)) return;
    char head[48];
    snprintf(head, sizeof head, "no %s matmul implementation", fr_dtype_name(t));
    cr_assert(why && strstr(why, head) && strstr(why, "(effective ISA "), "%s", why ? why : "(no reason)");
    struct test_rng rng = {5};
    struct gemm_data d;
    const struct gemm_case c = {7, 203, 96, 0};
    gemm_data_make(&d, &c, t, &rng);
    const char *call_why = NULL;
    cr_expect_eq(gemm(d.y, d.ldy, d.w, t, d.x, d.ldx, d.batch, d.rows, d.cols, d.pw, NULL,
                      MATVEC_BACKEND_ONEDNN, kernel_team_procs(), &call_why),
                 -1, "a call of an unimplemented type must be refused");
    cr_expect(call_why && strstr(call_why, head), "%s", call_why ? call_why : "(no reason)");
    gemm_data_free(&d);
    cr_skip_test("%s", why);
}

TestSuite(gemm_onednn, .fini = onednn_fini);

/* pw 384: panels 384 + 384 + 232; pw 64 over 96 columns: 64 + 32 */
static const struct gemm_case onednn_cases[] = {
    {1, 203, 1000, 0}, {7, 203, 1000, 0},   {33, 203, 96, 0},  {64, 203, 1000, 0}, {64, 203, 96, 0},
    {1, 203, 96, 64},  {7, 203, 1000, 384}, {33, 203, 96, 64}, {2, 1, 1, 0},       {5, 67, 129, 0}};

/* bf16 weights take X rounded to bf16 (oneDNN 2.6's matmul wants one type for both), so each product
 * carries X's rounding error, at most bf16's unit roundoff 2^-8 of it: the bound is then 2^-8 * sum |w x|
 * beside the f32 summation's cols * u * sum |w x| (about 4e-3 of sum |w x|, under the 1e-2 a bf16 GEMM is
 * usually held to). f32 weights: the f32 bound alone. */
static void onednn_check_cases(enum fr_dtype t, double x_rel) {
    struct test_rng rng = {2026 + (uint64_t)t};
    for (size_t k = 0; k < sizeof onednn_cases / sizeof onednn_cases[0]; k++) {
        struct gemm_data d;
        gemm_data_make(&d, &onednn_cases[k], t, &rng);
        gemm_data_widen_tol(&d, x_rel);
        char what[96];
        snprintf(what, sizeof what, "onednn %s batch %d %dx%d panels of %d", fr_dtype_name(t), d.batch,
                 d.rows, d.cols, d.pw);
        cr_expect(gemm_check(&d, t, NULL, MATVEC_BACKEND_ONEDNN, what), "%s", what);
        gemm_data_free(&d);
    }
}

Test(gemm_onednn, bf16_against_ref) {
    skip_unless_onednn_runs(FR_DTYPE_BF16);
    onednn_check_cases(FR_DTYPE_BF16, 1.0 / 256.0);
}

Test(gemm_onednn, f32_against_ref) {
    onednn_check_cases(FR_DTYPE_F32, 0.0);
}

/* Both within cols * u * sum |w x| of the exact product, so within twice that of each other. */
Test(gemm_onednn, f32_against_openblas) {
    struct test_rng rng = {65};
    const struct gemm_case cases[] = {{7, 203, 1000, 0}, {64, 203, 96, 0}, {33, 203, 1000, 384}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct gemm_data d;
        gemm_data_make(&d, &cases[k], FR_DTYPE_F32, &rng);
        cr_assert_eq(gemm(d.ref, d.ldy, d.w, FR_DTYPE_F32, d.x, d.ldx, d.batch, d.rows, d.cols, d.pw, NULL,
                          MATVEC_BACKEND_OPENBLAS, kernel_team_procs(), NULL),
                     0);
        gemm_data_widen_tol(&d, (double)d.cols * TEST_U32);
        cr_expect(gemm_check(&d, FR_DTYPE_F32, NULL, MATVEC_BACKEND_ONEDNN, "onednn against openblas"),
                  "batch %d %dx%d panels of %d", d.batch, d.rows, d.cols, d.pw);
        gemm_data_free(&d);
    }
}

/* Inside a parallel region every thread makes the call, one of them runs it. */
Test(gemm_onednn, team_calling_mode) {
    const struct gemm_case c = {9, 300, 200, 0}, panelled = {9, 300, 200, 64};
    team_call_check(&c, FR_DTYPE_F32, MATVEC_BACKEND_ONEDNN, 81, "onednn team");
    team_call_check(&panelled, FR_DTYPE_F32, MATVEC_BACKEND_ONEDNN, 82, "onednn team, column panels");
}

/* After a call, the line of its type names the version, the implementation oneDNN chose and a known ISA. */
static void describe_check(enum fr_dtype t, double x_rel) {
    char line[256], head[32];
    gemm_onednn_describe(t, line, sizeof line);
    cr_expect(strstr(line, "no primitive run yet"), "%s", line);
    struct test_rng rng = {9};
    struct gemm_data d;
    const struct gemm_case c = {7, 203, 1000, 0};
    gemm_data_make(&d, &c, t, &rng);
    gemm_data_widen_tol(&d, x_rel);
    cr_assert(gemm_check(&d, t, NULL, MATVEC_BACKEND_ONEDNN, "onednn"));
    gemm_data_free(&d);
    int n = gemm_onednn_describe(t, line, sizeof line);
    cr_log_info("%s", line);
    cr_expect(n > 0 && (size_t)n == strlen(line));
    cr_expect(strncmp(line, "oneDNN 2.", 9) == 0, "%s", line);
    snprintf(head, sizeof head, "matmul %s: ", fr_dtype_name(t));
    cr_expect(strstr(line, head) && !strstr(line, "no primitive run yet"), "%s", line);
    const char *isa = strstr(line, "(effective ISA ");
    cr_assert(isa, "%s", line);
    cr_expect(strncmp(isa + 15, "unknown", 7) != 0 && isa[15] != ')', "%s", line);
}

Test(gemm_onednn, describe_names_impl_and_isa) {
    describe_check(FR_DTYPE_F32, 0.0);
    /* cut to fit a short buffer, still terminated */
    char small[12];
    cr_expect_eq(gemm_onednn_describe(FR_DTYPE_F32, small, sizeof small), (int)sizeof small - 1);
    cr_expect(strlen(small) == sizeof small - 1 && strncmp(small, "oneDNN 2.", 9) == 0, "%s", small);
}

Test(gemm_onednn, describe_names_bf16_impl) {
    skip_unless_onednn_runs(FR_DTYPE_BF16);
    describe_check(FR_DTYPE_BF16, 1.0 / 256.0);
}

/* dnnl_cpu_isa_t values of oneDNN 2.6 by their names. */
Test(gemm_onednn, isa_names) {
    cr_expect_str_eq(gemm_onednn_isa_name(0x7), "avx2");
    cr_expect_str_eq(gemm_onednn_isa_name(0x407), "avx2_vnni");
    cr_expect_str_eq(gemm_onednn_isa_name(0x27), "avx512_core");
    cr_expect_str_eq(gemm_onednn_isa_name(0xe7), "avx512_core_bf16");
    cr_expect_str_eq(gemm_onednn_isa_name(0x3e7), "avx512_core_amx");
    cr_expect_str_eq(gemm_onednn_isa_name(0x12345), "unknown");
}

Test(gemm_onednn, refuses_block_formats_and_bad_panels) {
    const char *why = NULL;
    cr_expect(!gemm_backend_available(MATVEC_BACKEND_ONEDNN, FR_DTYPE_Q8_0, 4, &why));
    cr_expect(why && strstr(why, "Q8_0"), "%s", why ? why : "(none)");
    why = NULL;
    cr_expect(!matvec_backend_available(MATVEC_BACKEND_ONEDNN, FR_DTYPE_Q4_0, &why));
    cr_expect(why && strstr(why, "Q4_0"), "%s", why ? why : "(none)");
    unsigned char w[64] = {0};
    float x[64] = {0}, y[8] = {0};
    why = NULL;
    cr_expect_eq(gemm(y, 2, w, FR_DTYPE_Q8_0, x, 32, 2, 1, 32, 32, NULL, MATVEC_BACKEND_ONEDNN, 1, &why), -1);
    cr_expect(why != NULL);
    why = NULL;
    cr_expect_eq(gemm_onednn(y, 2, w, FR_DTYPE_F32, x, 4, 2, 2, 4, 0, 1, &why), -1);
    cr_expect(why && strstr(why, "panels"), "%s", why ? why : "(none)");
    cr_expect(gemm_backend_available(MATVEC_BACKEND_ONEDNN, FR_DTYPE_F32, 64, NULL));
}
