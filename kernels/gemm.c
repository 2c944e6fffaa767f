/* gemm (kernels/gemm.h): dispatch, cache blocking and OpenMP around the per-ISA panels of gemm_ops.h; the
 * scalar path; the OpenBLAS path (cblas_sgemm on the team's threads); the reference. Checked against gemm_ref
 * on odd shapes (rows, columns and batch not multiples of any vector width or tile), with blockings small
 * enough to cut the columns into several blocks, for every ISA the CPU has, in tests/test_kernels_gemm.c. */
#include <cblas.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/gemm.h"
#include "kernels/gemm_onednn.h"
#include "kernels/gemm_ops.h"
#include "kernels/matvec_kquant.h"
#include "kernels/quant.h"
#include "kernels/team.h"

/* Rows are handed out in chunks of about this many weight bytes (whole row tiles), dynamically, as matvec
 * does: one chunk is one long stretch of the matrix, and a thread that loses its core does not hold the
 * others up at the barrier. */
#define GEMM_CHUNK_BYTES ((size_t)256 << 10)
#define GEMM_ROW_BLOCK   16
_Static_assert(GEMM_ROW_BLOCK % QUANT_GROUP_ROWS == 0, "a chunk starts on a block row group");
#define GEMM_COL_ALIGN    64
#define GEMM_DEFAULT_L1D  ((size_t)32 << 10)
#define GEMM_DEFAULT_L2   ((size_t)512 << 10)
#define GEMM_PARALLEL_MIN ((size_t)1 << 16)
/* OpenBLAS chunks: larger, each is one sgemm call with its own packing and set-up */
#define GEMM_OPENBLAS_CHUNK_BYTES ((size_t)1 << 20)

/* The scalar path: each batch row is the scalar matvec, so the weights are read once per batch row. A CPU
 * without AVX2 is not where batching pays; this path exists so that every ISA computes the same thing. */
static void gemm_panel_bf16_scalar(float *y, size_t ldy, const uint16_t *w, size_t ldw, const float *x,
                                   size_t ldx, int rows, int batch, int kc, int accumulate) {
    for (int b = 0; b < batch; b++)
        for (int r = 0; r < rows; r++) {
            const uint16_t *row = w + (size_t)r * ldw;
            const float *xb = x + (size_t)b * ldx;
            float a0 = 0.0f, a1 = 0.0f;
            int k = 0;
            for (; k + 2 <= kc; k += 2) {
                a0 += bf16_to_f32(row[k]) * xb[k];
                a1 += bf16_to_f32(row[k + 1]) * xb[k + 1];
            }
            if (k < kc) a0 += bf16_to_f32(row[k]) * xb[k];
            float *o = y + (size_t)b * ldy + (size_t)r;
            *o = (accumulate ? *o : 0.0f) + (a0 + a1);
        }
}

static void gemm_panel_f32_scalar(float *y, size_t ldy, const float *w, size_t ldw, const float *x,
                                  size_t ldx, int rows, int batch, int kc, int accumulate) {
    for (int b = 0; b < batch; b++)
        for (int r = 0; r < rows; r++) {
            const float *row = w + (size_t)r * ldw, *xb = x + (size_t)b * ldx;
            float a0 = 0.0f, a1 = 0.0f;
            int k = 0;
            for (; k + 2 <= kc; k += 2) {
                a0 += row[k] * xb[k];
                a1 += row[k + 1] * xb[k + 1];
            }
            if (k < kc) a0 += row[k] * xb[k];
            float *o = y + (size_t)b * ldy + (size_t)r;
            *o = (accumulate ? *o : 0.0f) + (a0 + a1);
        }
}

static const struct gemm_ops gemm_ops_scalar = {
    .mr = 1, .nb = 1, .panel_bf16 = gemm_panel_bf16_scalar, .panel_f32 = gemm_panel_f32_scalar};

static const struct gemm_ops *gemm_ops_active(void) {
    switch (kernel_isa_active()) {
    case KERNEL_ISA_AVX512:
        return &gemm_ops_avx512;
    case KERNEL_ISA_AVX2:
        return &gemm_ops_avx2;
    default:
        return &gemm_ops_scalar;
    }
}

/* Columns per block: the largest multiple of 64 such that one register tile's weight rows and X rows over
 * the block fill at most the L1d (they are reused across the tile's whole column loop), and the batch's X
 * rows over the block at most half of the L2 (they are reused by every row tile); then evened out so the
 * blocks are about equal. One block when the whole width fits. */
static int gemm_plan_kc(const struct gemm_ops *ops, int batch, int cols, size_t es,
                        const struct gemm_blocking *blk) {
    size_t l1 = blk && blk->l1d_bytes ? blk->l1d_bytes : GEMM_DEFAULT_L1D;
    size_t l2 = blk && blk->l2_bytes ? blk->l2_bytes : GEMM_DEFAULT_L2;
    size_t by_l1 = l1 / ((size_t)ops->mr * es + (size_t)ops->nb * sizeof(float));
    size_t by_l2 = l2 / 2 / ((size_t)batch * sizeof(float));
    size_t kmax = by_l1 < by_l2 ? by_l1 : by_l2;
    kmax = kmax / GEMM_COL_ALIGN * GEMM_COL_ALIGN;
    if (kmax < GEMM_COL_ALIGN) kmax = GEMM_COL_ALIGN;
    if ((size_t)cols <= kmax) return cols;
    size_t n_blocks = ((size_t)cols + kmax - 1) / kmax;
    size_t kc = ((size_t)cols + n_blocks - 1) / n_blocks;
    kc = (kc + GEMM_COL_ALIGN - 1) / GEMM_COL_ALIGN * GEMM_COL_ALIGN;
    return (int)(kc < (size_t)cols ? kc : (size_t)cols);
}

/* Bytes a panel loop reads per weight: a block format's tiles are dequantised to f32 first. */
static size_t gemm_elem_bytes(enum fr_dtype t) {
    return fr_dtype_is_block(t) ? sizeof(float) : fr_dtype_size(t);
}

int gemm_block_cols(int batch, int cols, enum fr_dtype wtype, const struct gemm_blocking *blk) {
    if (batch <= 0 || cols <= 0) return 0;
    return gemm_plan_kc(gemm_ops_active(), batch < GEMM_SUB_BATCH ? batch : GEMM_SUB_BATCH, cols,
                        gemm_elem_bytes(wtype), blk);
}

struct gemm_args {
    float *y;
    size_t ldy, ldx;
    const void *w;
    int bf16;
    enum fr_dtype wtype;
    const float *x;
    int batch, rows, cols, pw, kc; /* pw: the panel width (col_panels.h) */
    const struct gemm_ops *ops;
};

static void gemm_chunk_pass(const struct gemm_args *a, int r0, int n, int b0, int nb);

/* Work-shares the row chunks over the current team; within a chunk, the panels in turn and in each one the
 * column blocks outermost, so the batch's X rows of one block stay in L2 while the chunk's weight rows pass.
 */
static void gemm_chunks(const struct gemm_args *a) {
    size_t row_bytes = fr_dtype_bytes(a->wtype, (size_t)a->cols);
    size_t blocks = GEMM_CHUNK_BYTES / (row_bytes * GEMM_ROW_BLOCK);
    int chunk = (int)(blocks > 0 ? blocks : 1) * GEMM_ROW_BLOCK;
    int n_chunks = (a->rows + chunk - 1) / chunk;
#pragma omp for schedule(dynamic, 1)
    for (int c = 0; c < n_chunks; c++) {
        int r0 = c * chunk, n = a->rows - r0 < chunk ? a->rows - r0 : chunk;
        if (fr_dtype_is_block(a->wtype)) /* its tiles are dequantised once, then passed (gemm_quant_panel) */
            gemm_chunk_pass(a, r0, n, 0, a->batch);
        else
            for (int b0 = 0; b0 < a->batch; b0 += GEMM_SUB_BATCH)
                gemm_chunk_pass(a, r0, n, b0,
                                a->batch - b0 < GEMM_SUB_BATCH ? a->batch - b0 : GEMM_SUB_BATCH);
    }
}

/* One pass over rows [r0, r0 + n) of every panel for batch rows [b0, b0 + nb). */
static void gemm_chunk_pass(const struct gemm_args *a, int r0, int n, int b0, int nb) {
    float *y = a->y + (size_t)b0 * a->ldy;
    const float *x = a->x + (size_t)b0 * a->ldx;
    for (int p = 0; p < col_panel_count(a->cols, a->pw); p++) {
        int np = col_panel_cols(a->cols, a->pw, p), c0 = p * a->pw;
        size_t base = col_panel_start(a->rows, a->pw, p) + (size_t)r0 * (size_t)np;
        for (int k0 = 0; k0 < np; k0 += a->kc) {
            int kc = np - k0 < a->kc ? np - k0 : a->kc;
            if (fr_dtype_is_block(a->wtype))
                gemm_quant_panel(a->ops, y + r0, a->ldy,
                                 (const unsigned char *)a->w + fr_dtype_bytes(a->wtype, base), a->wtype, np,
                                 k0, x + c0 + k0, a->ldx, n, nb, kc, c0 + k0 > 0);
            else if (a->bf16)
                a->ops->panel_bf16(y + r0, a->ldy, (const uint16_t *)a->w + base + k0, (size_t)np,
                                   x + c0 + k0, a->ldx, n, nb, kc, c0 + k0 > 0);
            else
                a->ops->panel_f32(y + r0, a->ldy, (const float *)a->w + base + k0, (size_t)np, x + c0 + k0,
                                  a->ldx, n, nb, kc, c0 + k0 > 0);
        }
    }
}

/* Y[batch][n] of rows r0 .. r0 + n by OpenBLAS: one sgemm per panel, beta 1 after the first. */
static void gemm_openblas_rows(const struct gemm_args *a, int r0, int n) {
    for (int p = 0; p < col_panel_count(a->cols, a->pw); p++) {
        int np = col_panel_cols(a->cols, a->pw, p);
        const float *wp = (const float *)a->w + col_panel_start(a->rows, a->pw, p) + (size_t)r0 * (size_t)np;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, a->batch, n, np, 1.0f, a->x + (size_t)p * a->pw,
                    (int)a->ldx, wp, np, p > 0 ? 1.0f : 0.0f, a->y + r0, (int)a->ldy);
    }
}

/* OpenBLAS on the caller's OpenMP team: the rows in chunks handed out dynamically, each C[batch][chunk] =
 * X W_chunk^T by sgemm calls (one per panel) on the calling thread (OpenBLAS set to one thread meanwhile).
 * Its own pthreads pool would otherwise run beside the team on the same cores: its workers spin for a while
 * after every call, while the team's threads spin after every per-token block, and each steals the other's
 * core. */
static void gemm_openblas_chunks(const struct gemm_args *a) {
    size_t row_bytes = (size_t)a->cols * sizeof(float);
    int chunk = (int)(GEMM_OPENBLAS_CHUNK_BYTES / row_bytes);
    chunk = chunk < GEMM_ROW_BLOCK ? GEMM_ROW_BLOCK : chunk / GEMM_ROW_BLOCK * GEMM_ROW_BLOCK;
    int n_chunks = (a->rows + chunk - 1) / chunk;
#pragma omp for schedule(dynamic, 1)
    for (int c = 0; c < n_chunks; c++) {
        int r0 = c * chunk, n = a->rows - r0 < chunk ? a->rows - r0 : chunk;
        gemm_openblas_rows(a, r0, n);
    }
}

bool gemm_backend_available(enum matvec_backend backend, enum fr_dtype wtype, int batch, const char **why) {
    if (batch <= 1 || backend == MATVEC_BACKEND_ONEDNN) return matvec_backend_available(backend, wtype, why);
    if (backend == MATVEC_BACKEND_FORGE || wtype == FR_DTYPE_F32) return true;
    if (why && fr_dtype_is_kquant(wtype)) {
        *why = "OpenBLAS has no K-quant GEMM";
        return false;
    }
    if (why && fr_dtype_is_block(wtype)) {
        *why = "OpenBLAS has no Q8_0 or Q4_0 GEMM";
        return false;
    }
    if (why)
        *why = "a bf16 GEMM on OpenBLAS needs cblas_sbgemm, which is not used here (Debian 12's OpenBLAS "
               "0.3.21 does not export it)";
    return false;
}

int gemm(float *y, int ldy, const void *w, enum fr_dtype wtype, const float *x, int ldx, int batch, int rows,
         int cols, int panel_cols, const struct gemm_blocking *blk, enum matvec_backend backend, int threads,
         const char **why) {
    if (fr_dtype_is_kquant(wtype)) { /* the matvec's dot product for every column (matvec_kquant.h) */
        if (!gemm_backend_available(backend, wtype, batch, why) || matvec_kquant_check_cols(wtype, cols, why))
            return -1;
        if (batch > 0 && rows > 0) matvec_kquant(y, ldy, w, wtype, x, ldx, batch, rows, cols, threads);
        return 0;
    }
    if (batch == 1) return matvec_panels(y, w, wtype, x, rows, cols, panel_cols, backend, threads, why);
    if (backend == MATVEC_BACKEND_ONEDNN)
        return gemm_onednn(y, ldy, w, wtype, x, ldx, batch, rows, cols, panel_cols, threads, why);
    if (panel_cols < 1) {
        if (why) *why = "column panels of fewer than one column";
        return -1;
    }
    if (!gemm_backend_available(backend, wtype, batch, why)) return -1;
    if (fr_dtype_is_block(wtype) &&
        (quant_check_cols(wtype, cols, why) || (panel_cols < cols && panel_cols % QUANT_BLOCK != 0))) {
        if (why && panel_cols < cols && panel_cols % QUANT_BLOCK != 0)
            *why = "column panels of a Q8_0 or Q4_0 matrix must be whole blocks of 32 columns";
        return -1;
    }
    if (batch <= 0 || rows <= 0) return 0;
    if (cols <= 0) {
        for (int b = 0; b < batch; b++) memset(y + (size_t)b * (size_t)ldy, 0, (size_t)rows * sizeof *y);
        return 0;
    }
    if (backend == MATVEC_BACKEND_OPENBLAS) {
        struct gemm_args a = {.y = y,
                              .ldy = (size_t)ldy,
                              .ldx = (size_t)ldx,
                              .w = w,
                              .x = x,
                              .batch = batch,
                              .rows = rows,
                              .cols = cols,
                              .pw = panel_cols};
        if (kernel_team_in_region()) { /* the pool's setting is global: one call for the whole team */
#pragma omp single
            gemm_openblas_rows(&a, 0, rows);
            return 0;
        }
        int pool = openblas_get_num_threads();
        openblas_set_num_threads(1);
#pragma omp parallel num_threads(threads < 1 ? 1 : threads)
        gemm_openblas_chunks(&a);
        openblas_set_num_threads(pool);
        return 0;
    }
    const struct gemm_ops *ops = gemm_ops_active();
    struct gemm_args a = {.y = y,
                          .ldy = (size_t)ldy,
                          .ldx = (size_t)ldx,
                          .w = w,
                          .bf16 = wtype == FR_DTYPE_BF16,
                          .wtype = wtype,
                          .x = x,
                          .batch = batch,
                          .rows = rows,
                          .cols = cols,
                          .pw = panel_cols,
                          .kc = gemm_plan_kc(ops, batch < GEMM_SUB_BATCH ? batch : GEMM_SUB_BATCH,
                                             panel_cols < cols ? panel_cols : cols, gemm_elem_bytes(wtype),
                                             blk),
                          .ops = ops};
    if (kernel_team_in_region()) {
        gemm_chunks(&a); /* ends with the work-share's barrier */
    } else {
#pragma omp parallel if ((size_t)rows * (size_t)cols * (size_t)batch >= GEMM_PARALLEL_MIN)                   \
    num_threads(threads < 1 ? 1 : threads)
        gemm_chunks(&a);
    }
    return 0;
}

/* A block format's reference: the weights dequantised a block at a time, x in f32, summed in double (the
 * GEMM does not quantise x; matvec_ref, which does, is the batch-of-one reference). */
static void gemm_ref_block(float *y, int ldy, const void *w, enum fr_dtype t, const float *x, int ldx,
                           int batch, int rows, int cols, int pw) {
    for (int b = 0; b < batch; b++)
        for (int r = 0; r < rows; r++) {
            double acc = 0;
            for (int c = 0; c < cols; c += QUANT_BLOCK) {
                float v[QUANT_BLOCK];
                const int p = c / pw; /* panel p, in memory order (kernels/quant.h) */
                quant_matrix_dequantize(
                    v, t, (const unsigned char *)w + fr_dtype_bytes(t, col_panel_start(rows, pw, p)), rows,
                    col_panel_cols(cols, pw, p), r, c - p * pw, QUANT_BLOCK);
                for (int i = 0; i < QUANT_BLOCK; i++)
                    acc += (double)v[i] * x[(size_t)b * (size_t)ldx + c + i];
            }
            y[(size_t)b * (size_t)ldy + r] = (float)acc;
        }
}

void gemm_ref(float *y, int ldy, const void *w, enum fr_dtype wtype, const float *x, int ldx, int batch,
              int rows, int cols, int panel_cols) {
    if (fr_dtype_is_kquant(wtype)) {
        matvec_kquant_ref(y, ldy, w, wtype, x, ldx, batch, rows, cols);
        return;
    }
    if (fr_dtype_is_block(wtype)) {
        gemm_ref_block(y, ldy, w, wtype, x, ldx, batch, rows, cols, panel_cols);
        return;
    }
    for (int b = 0; b < batch; b++)
        matvec_ref_panels(y + (size_t)b * (size_t)ldy, w, wtype, x + (size_t)b * (size_t)ldx, rows, cols,
                          panel_cols);
}
