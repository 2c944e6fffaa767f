/* Shared by tests/test_kernels_gemm.c and tests/test_gemm_onednn.c: seeded GEMM cases (weights, padded X
 * and Y, the reference and each output's tolerance), the check of one backend's gemm against them, and the
 * team calling mode's check. */
#ifndef FR_GEMM_TEST_UTIL_H
#define FR_GEMM_TEST_UTIL_H

#include "kernels/col_panels.h"
#include "kernels/gemm.h"
#include "kernels/team.h"
#include "tests/kernels_test_util.h"

/* pw: the weights' column panel width; 0 stores them row-major */
struct gemm_case {
    int batch, rows, cols, pw;
};

struct gemm_data {
    int batch, rows, cols, pw, ldx, ldy;
    void *w;
    float *x, *y, *ref;
    double *abs_sum; /* [batch][ldy] sum over k of |W[r][k] X[b][k]| */
    double *tol;     /* [batch][ldy] cols * u * abs_sum: any f32 summation order's bound */
};

/* Each output's tolerance: (rel + cols * u) * sum |w x|, rel a relative error of every product beyond the
 * f32 summation's (0 for a GEMM that multiplies the given values exactly). */
static inline void gemm_data_widen_tol(struct gemm_data *d, double rel) {
    for (size_t i = 0; i < (size_t)d->batch * (size_t)d->ldy; i++)
        d->tol[i] = (rel + (double)d->cols * TEST_U32) * d->abs_sum[i] + 1e-30;
}

/* ldx and ldy padded by 3 elements so a row stride is never the row length */
static inline void gemm_data_make(struct gemm_data *d, const struct gemm_case *c, enum fr_dtype t,
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
    d->abs_sum = test_alloc(ny * sizeof *d->abs_sum);
    if (t == FR_DTYPE_BF16)
        test_fill_bf16(rng, d->w, n, -1.0f, 1.0f);
    else
        test_fill(rng, d->w, n, -1.0f, 1.0f);
    test_fill(rng, d->x, nx, -2.0f, 2.0f);
    for (size_t i = 0; i < ny; i++) d->ref[i] = 0.0f, d->tol[i] = 0.0, d->abs_sum[i] = 0.0;
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
            d->abs_sum[(size_t)b * (size_t)d->ldy + (size_t)r] = s;
        }
    gemm_data_widen_tol(d, 0.0);
}

static inline void gemm_data_free(struct gemm_data *d) {
    free(d->w), free(d->x), free(d->y), free(d->ref), free(d->tol), free(d->abs_sum);
}

/* Runs gemm into d->y (padding set to a sentinel that must survive) and checks it against d->ref. */
static inline int gemm_check(struct gemm_data *d, enum fr_dtype t, const struct gemm_blocking *blk,
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

/* gemm called by every thread of a 2-thread team on one case, against the reference. */
static inline void team_call_check(const struct gemm_case *c, enum fr_dtype t, enum matvec_backend be,
                                   uint64_t seed, const char *what) {
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

#endif
