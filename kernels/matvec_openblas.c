/* The OpenBLAS backend of matvec (MATVEC_BACKEND_OPENBLAS): a yardstick for the forge kernels, checked
 * against matvec_ref in tests/test_kernels_matvec.c.
 * f32 weights: cblas_sgemv, on OpenBLAS's own thread pool, not the caller's OpenMP team: the pthread build
 * linked here sizes it from OPENBLAS_NUM_THREADS (else OMP_NUM_THREADS, else all cores) and
 * openblas_set_num_threads() changes it. The pools do not coordinate: a caller comparing backends gives both
 * the same count and never calls this one from a parallel region of its own, or the cores are oversubscribed.
 * bf16 weights: cblas_sbgemv, looked up with dlsym because some builds declare it in cblas.h without
 * exporting it (Debian 12's OpenBLAS 0.3.21 does). It takes x in bf16 too, rounded (to nearest even) into one
 * static buffer of MATVEC_SBGEMV_MAX_COLS elements (kernels never allocate; wider matrices are unavailable),
 * so conversion and call run in a named critical section, and x's rounding makes this path less accurate than
 * the forge one. A matrix stored as column panels (col_panels.h) takes one call per panel, beta 1 after the
 * first. */
#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/gemm_onednn.h"
#include "kernels/kernels.h"

#define MATVEC_SBGEMV_MAX_COLS 65536

typedef void (*sbgemv_fn)(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans, blasint m, blasint n,
                          float alpha, const uint16_t *a, blasint lda, const uint16_t *x, blasint incx,
                          float beta, float *y, blasint incy);

int matvec_openblas(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
                    int panel_cols, const char **why);

static sbgemv_fn sbgemv_found;
static pthread_once_t sbgemv_once = PTHREAD_ONCE_INIT;

static void sbgemv_resolve(void) {
    void *sym = dlsym(RTLD_DEFAULT, "cblas_sbgemv");
    memcpy(&sbgemv_found, &sym, sizeof sbgemv_found); /* POSIX: a dlsym result is a valid function pointer */
}

static sbgemv_fn sbgemv_lookup(void) {
    pthread_once(&sbgemv_once, sbgemv_resolve);
    return sbgemv_found;
}

bool matvec_backend_available(enum matvec_backend backend, enum fr_dtype wtype, const char **why) {
    if (backend == MATVEC_BACKEND_FORGE) return true;
    if (backend == MATVEC_BACKEND_ONEDNN) return gemm_onednn_available(wtype, why);
    if (wtype == FR_DTYPE_F32) return true;
    if (fr_dtype_is_kquant(wtype)) {
        if (why) *why = "OpenBLAS has no K-quant matvec";
        return false;
    }
    if (fr_dtype_is_block(wtype)) {
        if (why) *why = "OpenBLAS has no Q8_0 or Q4_0 matvec";
        return false;
    }
    if (!sbgemv_lookup()) {
        if (why) *why = "cblas_sbgemv not exported by this OpenBLAS build";
        return false;
    }
    return true;
}

int matvec_openblas(float *y, const void *w, enum fr_dtype wtype, const float *x, int rows, int cols,
                    int panel_cols, const char **why) {
    if (!matvec_backend_available(MATVEC_BACKEND_OPENBLAS, wtype, why)) return -1;
    if (rows <= 0) return 0;
    if (cols <= 0) {
        for (int r = 0; r < rows; r++) y[r] = 0.0f;
        return 0;
    }
    int panels = col_panel_count(cols, panel_cols);
    if (wtype == FR_DTYPE_F32) {
        for (int p = 0; p < panels; p++) {
            int n = col_panel_cols(cols, panel_cols, p);
            cblas_sgemv(CblasRowMajor, CblasNoTrans, rows, n, 1.0f,
                        (const float *)w + col_panel_start(rows, panel_cols, p), n,
                        x + (size_t)p * panel_cols, 1, p > 0 ? 1.0f : 0.0f, y, 1);
        }
        return 0;
    }
    if (cols > MATVEC_SBGEMV_MAX_COLS) {
        if (why) *why = "cblas_sbgemv path: cols exceeds its 65536-element bf16 x buffer";
        return -1;
    }
    static uint16_t xb[MATVEC_SBGEMV_MAX_COLS];
    sbgemv_fn fn = sbgemv_lookup();
#pragma omp critical(fr_matvec_sbgemv)
    {
        for (int c = 0; c < cols; c++) xb[c] = bf16_from_f32(x[c]);
        for (int p = 0; p < panels; p++) {
            int n = col_panel_cols(cols, panel_cols, p);
            fn(CblasRowMajor, CblasNoTrans, rows, n, 1.0f,
               (const uint16_t *)w + col_panel_start(rows, panel_cols, p), n, xb + (size_t)p * panel_cols, 1,
               p > 0 ? 1.0f : 0.0f, y, 1);
        }
    }
    return 0;
}
