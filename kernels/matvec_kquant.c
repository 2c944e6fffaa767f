/* K-quant matvec and GEMM over a team (matvec_kquant.h). */
#include "kernels/matvec_kquant.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/quant_k.h"
#include "kernels/team.h"

/* Rows a GEMM chunk takes through every column before the next rows: 16 Q4_K rows of 1024 columns are
 * 9 KiB, so a row is still in L1 when the next column's dot reads it. */
#define KQUANT_GEMM_ROWS 16

enum quant_k_type matvec_kquant_type(enum fr_dtype t) {
    return t == FR_DTYPE_Q6_K ? QUANT_K_Q6_K : t == FR_DTYPE_Q5_K ? QUANT_K_Q5_K : QUANT_K_Q4_K;
}

int matvec_kquant_check_cols(enum fr_dtype t, int cols, const char **why) {
    if (!fr_dtype_is_kquant(t)) {
        if (why) *why = "not a K-quant type";
        return -1;
    }
    if (cols % QUANT_QK_K != 0 || cols > QUANT_ACT_MAX_COLS) {
        if (why) *why = "a K-quant matrix's rows must be whole superblocks of 256 weights (at most 32768)";
        return -1;
    }
    return 0;
}

/* Each thread's Q8_K copy of the batch's x, kept between calls (no allocation in a decode step once the
 * largest batch has run) and freed when the thread ends; no thread waits for another's copy. */
static pthread_key_t act_key;
static pthread_once_t act_once = PTHREAD_ONCE_INIT;
static _Thread_local struct {
    struct quant_block_q8_k *blocks;
    size_t cap;
} act_k;

static void act_key_make(void) {
    (void)pthread_key_create(&act_key, free);
}

static struct quant_block_q8_k *act_blocks(size_t n) {
    if (n > act_k.cap) {
        pthread_once(&act_once, act_key_make);
        void *p = realloc(act_k.blocks, n * sizeof *act_k.blocks);
        if (!p) abort(); /* a kernel has no error path; 292 bytes a superblock of x */
        act_k.blocks = p, act_k.cap = n;
        (void)pthread_setspecific(act_key, p);
    }
    return act_k.blocks;
}

/* chunks start on whole blocks of MATVEC_ROW_BLOCK rows, so on the groups of 8 of quant_k_matvec_rows */
_Static_assert(MATVEC_ROW_BLOCK % QUANT_K_GROUP_ROWS == 0 && KQUANT_GEMM_ROWS % QUANT_K_GROUP_ROWS == 0,
               "a chunk starts on a group of rows");
static void rows_chunk(float *y, int ldy, const unsigned char *w, enum quant_k_type kt,
                       const struct quant_block_q8_k *xq, int nb, int batch, int rows, int r0, int n) {
    for (int r = r0; r < r0 + n; r += KQUANT_GEMM_ROWS) {
        const int r1 = r + KQUANT_GEMM_ROWS < r0 + n ? r + KQUANT_GEMM_ROWS : r0 + n;
        for (int b = 0; b < batch; b++)
            quant_k_matvec_rows(y + (size_t)b * (size_t)ldy, w, kt, xq + (size_t)b * (size_t)nb, nb, rows, r,
                                r1);
    }
}

void matvec_kquant_team(float *y, int ldy, const void *w, enum fr_dtype t, const float *x, int ldx, int batch,
                        int rows, int cols) {
    const enum quant_k_type kt = matvec_kquant_type(t);
    const int nb = cols / QUANT_QK_K;
    struct quant_block_q8_k *xq = act_blocks((size_t)batch * (size_t)nb);
    for (int b = 0; b < batch; b++)
        quant_k_quantize_act(xq + (size_t)b * (size_t)nb, x + (size_t)b * (size_t)ldx, (size_t)cols);
    struct matvec_plan plan;
    matvec_plan_make(&plan, rows, quant_k_row_bytes(kt, (size_t)cols), kernel_team_size());
    if (kernel_team_active()) {
        struct kernel_share share;
        kernel_share_begin(&share, plan.n_chunks);
        for (int c; (c = kernel_share_next(&share)) >= 0;) {
            int r0, n;
            matvec_plan_chunk(&plan, c, &r0, &n);
            rows_chunk(y, ldy, w, kt, xq, nb, batch, rows, r0, n);
        }
        kernel_share_end(&share);
        return;
    }
#pragma omp for schedule(dynamic, 1)
    for (int c = 0; c < plan.n_chunks; c++) {
        int r0, n;
        matvec_plan_chunk(&plan, c, &r0, &n);
        rows_chunk(y, ldy, w, kt, xq, nb, batch, rows, r0, n);
    }
}

void matvec_kquant(float *y, int ldy, const void *w, enum fr_dtype t, const float *x, int ldx, int batch,
                   int rows, int cols, int threads) {
    if (kernel_team_shares()) {
        matvec_kquant_team(y, ldy, w, t, x, ldx, batch, rows, cols);
        return;
    }
#pragma omp parallel if (matvec_opens_team(rows, cols) && threads > 1) num_threads(threads > 1 ? threads : 1)
    matvec_kquant_team(y, ldy, w, t, x, ldx, batch, rows, cols);
}

void matvec_kquant_ref(float *y, int ldy, const void *w, enum fr_dtype t, const float *x, int ldx, int batch,
                       int rows, int cols) {
    const enum quant_k_type kt = matvec_kquant_type(t);
    float *v = malloc((size_t)cols * sizeof *v);
    if (!v) abort(); /* a reference for tests: no caller can carry on without it */
    for (int r = 0; r < rows; r++) {
        quant_k_matrix_dequantize_row(v, kt, w, rows, cols, r);
        for (int b = 0; b < batch; b++) {
            double acc = 0;
            for (int c = 0; c < cols; c++) acc += (double)v[c] * x[(size_t)b * (size_t)ldx + (size_t)c];
            y[(size_t)b * (size_t)ldy + (size_t)r] = (float)acc;
        }
    }
    free(v);
}
