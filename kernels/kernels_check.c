/* The self-check table of kernels_check.h: each optimized kernel on the active ISA against its _ref twin on
 * seeded data. Tolerances are those of tests/test_kernels_*.c, which explain them; u = 2^-24. Buffers are
 * static (kernels never allocate), so the checks are not reentrant. */
#include <math.h>
#include <string.h>

#include "kernels/gemm.h"
#include "kernels/kernels.h"
#include "kernels/col_panels.h"
#include "kernels/kernels_check.h"
#include "kernels/quant.h"
#include "kernels/quant_k.h"

#define U32 0x1.0p-24

/* matvec: one mid-size shape, not a multiple of any vector width */
#define MV_ROWS 203
#define MV_COLS 1000
/* attention: enough positions that the flash-decoding split runs on two threads */
#define AT_POS   400
#define AT_HEADS 8
#define AT_KV    2
#define AT_DIM   128
#define NORM_N   1027

#define TOL_MATVEC    (MV_COLS * U32)            /* relative to sum_c |w x| of the row */
#define TOL_RMSNORM   ((NORM_N / 2.0 + 4) * U32) /* relative to |ref| */
#define TOL_HEADS     ((AT_DIM / 2.0 + 4) * U32) /* relative to |ref| */
#define TOL_SWIGLU    (8 * U32)                  /* relative to |ref| + 1e-30 */
#define TOL_ROPE      (4 * U32)                  /* relative to |a| + |b| of the rotated pair */
#define TOL_ATTENTION 1e-4                       /* relative to |ref| + 0.2 (2e-5 absolute, 1e-4 relative) */

static float chk_w32[MV_ROWS * MV_COLS], chk_x[MV_COLS], chk_y[MV_ROWS], chk_ref[MV_ROWS];
static uint16_t chk_w16[MV_ROWS * MV_COLS];
static float chk_a[4096], chk_b[4096], chk_c[4096], chk_d[4096];
static float chk_q[AT_HEADS * AT_DIM], chk_out[AT_HEADS * AT_DIM], chk_oref[AT_HEADS * AT_DIM];
static float chk_scratch[AT_HEADS * AT_POS], chk_k32[AT_POS * AT_KV * AT_DIM],
    chk_v32[AT_POS * AT_KV * AT_DIM];
static uint16_t chk_k16[AT_POS * AT_KV * AT_DIM], chk_v16[AT_POS * AT_KV * AT_DIM];

/* splitmix64, uniform in [lo, hi) */
static float chk_uniform(uint64_t *s, float lo, float hi) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return lo + (hi - lo) * (float)((double)(z >> 11) * 0x1.0p-53);
}

static void chk_fill(float *x, size_t n, uint64_t seed, float lo, float hi) {
    for (size_t i = 0; i < n; i++) x[i] = chk_uniform(&seed, lo, hi);
}

static double chk_rel(float got, float ref, double scale) {
    return fabs((double)got - (double)ref) / scale;
}

/* Column panels of the panelled checks: 384 + 384 + 232 of MV_COLS (col_panels.h) */
#define MV_PANEL 384

/* sum over c of |W[r][c] x[c]|, W stored at panel width pw */
static double chk_mag(enum fr_dtype t, int pw, int r, const float *x) {
    double mag = 1e-30;
    for (int c = 0; c < MV_COLS; c++) {
        size_t i = col_panel_index(MV_ROWS, MV_COLS, pw, r, c);
        double wv = t == FR_DTYPE_BF16 ? bf16_to_f32(chk_w16[i]) : chk_w32[i];
        mag += fabs(wv * x[c]);
    }
    return mag;
}

static int chk_matvec(double *max_err, int threads, enum fr_dtype t, int pw) {
    chk_fill(chk_w32, MV_ROWS * MV_COLS, 1, -1.0f, 1.0f);
    chk_fill(chk_x, MV_COLS, 2, -2.0f, 2.0f);
    if (t == FR_DTYPE_BF16)
        for (size_t i = 0; i < MV_ROWS * MV_COLS; i++) chk_w16[i] = bf16_from_f32(chk_w32[i]);
    const void *w = t == FR_DTYPE_BF16 ? (const void *)chk_w16 : (const void *)chk_w32;
    if (matvec_panels(chk_y, w, t, chk_x, MV_ROWS, MV_COLS, pw, MATVEC_BACKEND_FORGE, threads, NULL) != 0)
        return *max_err = INFINITY, 1;
    matvec_ref_panels(chk_ref, w, t, chk_x, MV_ROWS, MV_COLS, pw);
    *max_err = 0.0;
    for (int r = 0; r < MV_ROWS; r++)
        *max_err = fmax(*max_err, chk_rel(chk_y[r], chk_ref[r], chk_mag(t, pw, r, chk_x)));
    return !(*max_err <= TOL_MATVEC);
}

/* matvec of Q8_0 / Q4_0 weights (kernels/quant.h): MV_ROWS x MV_QCOLS (31 blocks a row), against
 * matvec_ref (the same quantised x and integer dot products, summed in double); error / sum |w x| of the
 * row with w dequantised. */
#define MV_QCOLS 992
static int chk_matvec_block(double *max_err, int threads, enum fr_dtype t) {
    chk_fill(chk_w32, MV_ROWS * MV_QCOLS, 5, -1.0f, 1.0f);
    chk_fill(chk_x, MV_QCOLS, 6, -2.0f, 2.0f);
    quant_quantize_row(chk_w16, t, chk_w32, (size_t)MV_ROWS * MV_QCOLS); /* chk_w16 as bytes */
    quant_matrix_pack(chk_w16, t, MV_ROWS, MV_QCOLS);
    if (matvec(chk_y, chk_w16, t, chk_x, MV_ROWS, MV_QCOLS, MATVEC_BACKEND_FORGE, threads, NULL) != 0)
        return *max_err = INFINITY, 1;
    matvec_ref(chk_ref, chk_w16, t, chk_x, MV_ROWS, MV_QCOLS);
    *max_err = 0.0;
    for (int r = 0; r < MV_ROWS; r++) {
        quant_matrix_dequantize(chk_a, t, chk_w16, MV_ROWS, MV_QCOLS, r, 0, MV_QCOLS);
        double mag = 1e-30;
        for (int c = 0; c < MV_QCOLS; c++) mag += fabs((double)chk_a[c] * chk_x[c]);
        *max_err = fmax(*max_err, chk_rel(chk_y[r], chk_ref[r], mag));
    }
    return !(*max_err <= TOL_MATVEC);
}

static int chk_matvec_q8_0(double *e, int threads) {
    return chk_matvec_block(e, threads, FR_DTYPE_Q8_0);
}
static int chk_matvec_q4_0(double *e, int threads) {
    return chk_matvec_block(e, threads, FR_DTYPE_Q4_0);
}

/* K-quants: 203 x 768 (three superblocks a row), quant_k_matvec against quant_k_dot_ref on the same Q8_K
 * activations; error / sum|w x| of the dequantised values */
#define MV_KCOLS 768
static struct quant_block_q8_k chk_kx[MV_KCOLS / QUANT_QK_K];

static int chk_matvec_k(double *max_err, int threads, enum quant_k_type t) {
    chk_fill(chk_w32, MV_ROWS * MV_KCOLS, 5, -1.0f, 1.0f);
    chk_fill(chk_x, MV_KCOLS, 6, -2.0f, 2.0f);
    const size_t rb = quant_k_row_bytes(t, MV_KCOLS);
    unsigned char *w = (unsigned char *)chk_w16;
    for (int r = 0; r < MV_ROWS; r++)
        quant_k_quantize_row(w + rb * (size_t)r, t, chk_w32 + r * MV_KCOLS, MV_KCOLS);
    /* the matvec reads memory order (25 groups of 8 and 3 rows after them), the reference file order */
    quant_k_matrix_pack(w, t, MV_ROWS, MV_KCOLS);
    if (quant_k_matvec(chk_y, w, t, chk_x, MV_ROWS, MV_KCOLS, threads) != 0) return *max_err = INFINITY, 1;
    quant_k_quantize_act(chk_kx, chk_x, MV_KCOLS);
    *max_err = 0.0;
    unsigned char row[MV_KCOLS / QUANT_QK_K * sizeof(struct quant_block_q6_k)];
    for (int r = 0; r < MV_ROWS; r++) {
        quant_k_matrix_row(row, t, w, MV_ROWS, MV_KCOLS, r);
        quant_k_dequantize_row(chk_a, t, row, MV_KCOLS);
        double mag = 1e-30;
        for (int c = 0; c < MV_KCOLS; c++) mag += fabs((double)chk_a[c] * chk_x[c]);
        *max_err = fmax(
            *max_err, chk_rel(chk_y[r], (float)quant_k_dot_ref(t, row, chk_kx, MV_KCOLS / QUANT_QK_K), mag));
    }
    return !(*max_err <= TOL_MATVEC);
}
static int chk_matvec_q4_k(double *e, int threads) {
    return chk_matvec_k(e, threads, QUANT_K_Q4_K);
}
static int chk_matvec_q6_k(double *e, int threads) {
    return chk_matvec_k(e, threads, QUANT_K_Q6_K);
}
static int chk_matvec_q5_k(double *e, int threads) {
    return chk_matvec_k(e, threads, QUANT_K_Q5_K);
}

/* gemm: the matvec shape for GM_BATCH rows of X, against gemm_ref; error per output / sum|w x| of it */
#define GM_BATCH 7
static float chk_gx[GM_BATCH * MV_COLS], chk_gy[GM_BATCH * MV_ROWS], chk_gref[GM_BATCH * MV_ROWS];

static int chk_gemm(double *max_err, int threads, enum fr_dtype t, int pw) {
    chk_fill(chk_w32, MV_ROWS * MV_COLS, 3, -1.0f, 1.0f);
    chk_fill(chk_gx, GM_BATCH * MV_COLS, 4, -2.0f, 2.0f);
    if (t == FR_DTYPE_BF16)
        for (size_t i = 0; i < MV_ROWS * MV_COLS; i++) chk_w16[i] = bf16_from_f32(chk_w32[i]);
    const void *w = t == FR_DTYPE_BF16 ? (const void *)chk_w16 : (const void *)chk_w32;
    if (gemm(chk_gy, MV_ROWS, w, t, chk_gx, MV_COLS, GM_BATCH, MV_ROWS, MV_COLS, pw, NULL,
             MATVEC_BACKEND_FORGE, threads, NULL) != 0)
        return *max_err = INFINITY, 1;
    gemm_ref(chk_gref, MV_ROWS, w, t, chk_gx, MV_COLS, GM_BATCH, MV_ROWS, MV_COLS, pw);
    *max_err = 0.0;
    for (int b = 0; b < GM_BATCH; b++)
        for (int r = 0; r < MV_ROWS; r++) {
            size_t o = (size_t)b * MV_ROWS + (size_t)r;
            *max_err =
                fmax(*max_err, chk_rel(chk_gy[o], chk_gref[o], chk_mag(t, pw, r, chk_gx + b * MV_COLS)));
        }
    return !(*max_err <= TOL_MATVEC);
}

static int chk_gemm_bf16(double *e, int threads) {
    return chk_gemm(e, threads, FR_DTYPE_BF16, MV_COLS);
}
static int chk_gemm_f32(double *e, int threads) {
    return chk_gemm(e, threads, FR_DTYPE_F32, MV_COLS);
}
static int chk_gemm_bf16_panels(double *e, int threads) {
    return chk_gemm(e, threads, FR_DTYPE_BF16, MV_PANEL);
}

static int chk_matvec_bf16(double *e, int threads) {
    return chk_matvec(e, threads, FR_DTYPE_BF16, MV_COLS);
}
static int chk_matvec_f32(double *e, int threads) {
    return chk_matvec(e, threads, FR_DTYPE_F32, MV_COLS);
}
static int chk_matvec_bf16_panels(double *e, int threads) {
    return chk_matvec(e, threads, FR_DTYPE_BF16, MV_PANEL);
}

static int chk_rmsnorm(double *max_err, int threads) {
    (void)threads; /* runs on the calling thread */
    chk_fill(chk_a, NORM_N, 3, -3.0f, 3.0f);
    chk_fill(chk_b, NORM_N, 4, 0.5f, 1.5f);
    rmsnorm(chk_c, chk_a, chk_b, NORM_N, 1e-6f);
    rmsnorm_ref(chk_d, chk_a, chk_b, NORM_N, 1e-6f);
    *max_err = 0.0;
    for (int i = 0; i < NORM_N; i++)
        *max_err = fmax(*max_err, chk_rel(chk_c[i], chk_d[i], fabs((double)chk_d[i]) + 1e-30));
    return !(*max_err <= TOL_RMSNORM);
}

static int chk_rmsnorm_heads(double *max_err, int threads) {
    (void)threads; /* runs on the calling thread */
    enum { N = AT_HEADS * AT_DIM };
    chk_fill(chk_a, N, 5, -2.0f, 2.0f);
    chk_fill(chk_b, AT_DIM, 6, 0.5f, 1.5f);
    memcpy(chk_c, chk_a, N * sizeof *chk_a);
    memcpy(chk_d, chk_a, N * sizeof *chk_a);
    rmsnorm_heads(chk_c, chk_b, AT_HEADS, AT_DIM, 1e-6f);
    rmsnorm_heads_ref(chk_d, chk_b, AT_HEADS, AT_DIM, 1e-6f);
    *max_err = 0.0;
    for (int i = 0; i < N; i++)
        *max_err = fmax(*max_err, chk_rel(chk_c[i], chk_d[i], fabs((double)chk_d[i]) + 1e-30));
    return !(*max_err <= TOL_HEADS);
}

static int chk_swiglu(double *max_err, int threads) {
    (void)threads; /* runs on the calling thread */
    enum { N = 3072 };
    chk_fill(chk_a, N, 7, -20.0f, 20.0f);
    chk_fill(chk_b, N, 8, -2.0f, 2.0f);
    swiglu(chk_c, chk_a, chk_b, N);
    swiglu_ref(chk_d, chk_a, chk_b, N);
    *max_err = 0.0;
    for (int i = 0; i < N; i++)
        *max_err = fmax(*max_err, chk_rel(chk_c[i], chk_d[i], fabs((double)chk_d[i]) + 1e-30));
    return !(*max_err <= TOL_SWIGLU);
}

static int chk_rope(double *max_err, int threads) {
    (void)threads; /* runs on the calling thread */
    enum { N = AT_HEADS * AT_DIM, HALF = AT_DIM / 2 };
    float cs[HALF], sn[HALF];
    chk_fill(chk_a, N, 9, -1.0f, 1.0f);
    memcpy(chk_c, chk_a, N * sizeof *chk_a);
    memcpy(chk_d, chk_a, N * sizeof *chk_a);
    rope_tables(cs, sn, AT_DIM, 4321, 1e6);
    rope_apply(chk_c, cs, sn, AT_HEADS, AT_DIM);
    rope_apply_ref(chk_d, AT_HEADS, AT_DIM, 4321, 1e6);
    *max_err = 0.0;
    for (int h = 0; h < AT_HEADS; h++)
        for (int i = 0; i < HALF; i++) {
            int j = h * AT_DIM + i;
            double mag = fabs((double)chk_a[j]) + fabs((double)chk_a[j + HALF]) + 1e-30;
            *max_err = fmax(*max_err, fmax(chk_rel(chk_c[j], chk_d[j], mag),
                                           chk_rel(chk_c[j + HALF], chk_d[j + HALF], mag)));
        }
    return !(*max_err <= TOL_ROPE);
}

static int chk_attention(double *max_err, int threads, enum fr_dtype t) {
    enum { NKV = AT_POS * AT_KV * AT_DIM };
    chk_fill(chk_q, AT_HEADS * AT_DIM, 10, -1.0f, 1.0f);
    chk_fill(chk_k32, NKV, 11, -1.0f, 1.0f);
    chk_fill(chk_v32, NKV, 12, -1.0f, 1.0f);
    const void *k = chk_k32, *v = chk_v32;
    if (t == FR_DTYPE_BF16) {
        kv_store(chk_k16, FR_DTYPE_BF16, chk_k32, NKV);
        kv_store(chk_v16, FR_DTYPE_BF16, chk_v32, NKV);
        k = chk_k16, v = chk_v16;
    }
    /* head-major, each head's rows right after the previous head's */
    const size_t stride = (size_t)AT_POS * AT_DIM;
    attention(chk_out, chk_q, k, v, t, AT_POS, stride, AT_HEADS, AT_KV, AT_DIM, chk_scratch, threads);
    attention_ref(chk_oref, chk_q, k, v, t, AT_POS, stride, AT_HEADS, AT_KV, AT_DIM, chk_scratch);
    *max_err = 0.0;
    for (int i = 0; i < AT_HEADS * AT_DIM; i++)
        *max_err = fmax(*max_err, chk_rel(chk_out[i], chk_oref[i], fabs((double)chk_oref[i]) + 0.2));
    return !(*max_err <= TOL_ATTENTION);
}

static int chk_attention_bf16(double *e, int threads) {
    return chk_attention(e, threads, FR_DTYPE_BF16);
}
static int chk_attention_f32(double *e, int threads) {
    return chk_attention(e, threads, FR_DTYPE_F32);
}

/* Exact kernels: residual add, embedding gather, KV store; error 0 or 1 (mismatch). */
static int chk_exact(double *max_err, int threads) {
    (void)threads; /* runs on the calling thread */
    enum { N = 1027 };
    int bad = 0;
    chk_fill(chk_a, N, 13, -100.0f, 100.0f);
    chk_fill(chk_b, N, 14, -1.0f, 1.0f);
    memcpy(chk_c, chk_b, N * sizeof *chk_b);
    vec_add(chk_c, chk_a, N);
    for (int i = 0; i < N; i++) bad |= chk_c[i] != chk_b[i] + chk_a[i];
    kv_store(chk_w16, FR_DTYPE_BF16, chk_a, N);
    for (int i = 0; i < N; i++) bad |= chk_w16[i] != bf16_from_f32(chk_a[i]);
    embed_gather(chk_c, chk_w16, FR_DTYPE_BF16, 1, 0, N);
    for (int i = 0; i < N; i++) bad |= chk_c[i] != bf16_to_f32(chk_w16[i]);
    *max_err = bad;
    return bad;
}

static const struct kernels_check checks[] = {
    {"matvec_bf16", "203x1000 bf16 weights vs matvec_ref; error / sum|w x|", chk_matvec_bf16, TOL_MATVEC},
    {"matvec_f32", "203x1000 f32 weights vs matvec_ref; error / sum|w x|", chk_matvec_f32, TOL_MATVEC},
    {"matvec_q8_0", "203x992 Q8_0 weights, x quantised per 32-block, vs matvec_ref; error / sum|w x|",
     chk_matvec_q8_0, TOL_MATVEC},
    {"matvec_q4_0", "203x992 Q4_0 weights, x quantised per 32-block, vs matvec_ref; error / sum|w x|",
     chk_matvec_q4_0, TOL_MATVEC},
    {"matvec_q4_k", "203x768 Q4_K weights, x quantised to Q8_K, vs quant_k_dot_ref; error / sum|w x|",
     chk_matvec_q4_k, TOL_MATVEC},
    {"matvec_q6_k", "203x768 Q6_K weights, x quantised to Q8_K, vs quant_k_dot_ref; error / sum|w x|",
     chk_matvec_q6_k, TOL_MATVEC},
    {"matvec_q5_k", "203x768 Q5_K weights, x quantised to Q8_K, vs quant_k_dot_ref; error / sum|w x|",
     chk_matvec_q5_k, TOL_MATVEC},
    {"matvec_bf16_panels",
     "203x1000 bf16 weights in column panels of 384 vs matvec_ref_panels; error / sum|w x|",
     chk_matvec_bf16_panels, TOL_MATVEC},
    {"rmsnorm", "n 1027 vs rmsnorm_ref; relative", chk_rmsnorm, TOL_RMSNORM},
    {"rmsnorm_heads", "8 heads x 128 vs rmsnorm_heads_ref; relative", chk_rmsnorm_heads, TOL_HEADS},
    {"swiglu", "n 3072, gate in [-20, 20] vs swiglu_ref; relative", chk_swiglu, TOL_SWIGLU},
    {"rope", "8 heads x 128, pos 4321, theta 1e6 vs rope_apply_ref; error / (|a| + |b|)", chk_rope, TOL_ROPE},
    {"attention_bf16", "400 positions, 8/2 heads x 128, bf16 KV vs attention_ref; error / (|ref| + 0.2)",
     chk_attention_bf16, TOL_ATTENTION},
    {"attention_f32", "400 positions, 8/2 heads x 128, f32 KV vs attention_ref; error / (|ref| + 0.2)",
     chk_attention_f32, TOL_ATTENTION},
    {"exact", "vec_add, kv_store bf16, embed_gather bit-exact (error 0 or 1)", chk_exact, 0.0},
    {"gemm_bf16", "batch 7 x 203x1000 bf16 weights vs gemm_ref; error / sum|w x|", chk_gemm_bf16, TOL_MATVEC},
    {"gemm_f32", "batch 7 x 203x1000 f32 weights vs gemm_ref; error / sum|w x|", chk_gemm_f32, TOL_MATVEC},
    {"gemm_bf16_panels",
     "batch 7 x 203x1000 bf16 weights in column panels of 384 vs gemm_ref; error / sum|w x|",
     chk_gemm_bf16_panels, TOL_MATVEC},
};

const struct kernels_check *kernels_checks(int *count) {
    *count = (int)(sizeof checks / sizeof checks[0]);
    return checks;
}
