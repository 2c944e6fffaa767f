/* The tile loop of prefill_attention (kernels/attention_prefill.h), compiled once per ISA: the including file
 * defines APB(name) to give each copy its own names, and its compiler flags pick the vector width. Plain C
 * whose innermost loops have constant trip counts, which gcc -O3 unrolls into registers: one APB_MR x 32
 * block of f32 accumulators that every loaded B row feeds APB_MR times (AVX-512 8 rows, 16 zmm; AVX2 2 rows,
 * 8 ymm, which leaves AVX2's 16 registers room for B: 4 rows spilled, 8 % slower). APB_FMA(a, b, c) is a * b
 * + c as the ISA computes it: ISO C (-std=c11) leaves gcc contracting nothing, so the vector builds name fmaf
 * (one vfmadd; a multiply and an add were twice the uops), the baseline build a plain multiply-add (its fmaf
 * would be a libm call). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/attention_prefill.h"
#include "kernels/attention_prefill_tile.h"
#include "kernels/dtype.h"
#include "kernels/kernels.h"

/* The copies' own names, called through these so that clang-format sees calls */
#define APB_MK_ROWS       APB(mk_rows)
#define APB_MK_ANY        APB(mk_any)
#define APB_SMALL_GEMM    APB(small_gemm)
#define APB_LOAD_BLOCK    APB(load_block)
#define APB_BLOCK_SOFTMAX APB(block_softmax)

/* C[r][0:32] (+)= sum_i A(r, i) B[i][0:32] for r < APB_MR, A(r, i) = a[r * ars + i * ais] (a strided view:
 * the scores are read transposed), B rows ldb apart, C rows ldc apart. APB_MR is the including file's: as
 * many rows as keep the accumulators and B's row in the ISA's registers. */
static void APB(mk_rows)(float *c, int ldc, const float *a, int ars, int ais, const float *b, int ldb, int k,
                         int acc_in) {
    float acc[APB_MR][32];
    for (int r = 0; r < APB_MR; r++)
        for (int j = 0; j < 32; j++) acc[r][j] = acc_in ? c[r * ldc + j] : 0.0f;
    for (int i = 0; i < k; i++) {
        const float *br = b + (size_t)i * (size_t)ldb;
        for (int r = 0; r < APB_MR; r++) {
            const float s = a[r * ars + i * ais];
            for (int j = 0; j < 32; j++) acc[r][j] = APB_FMA(s, br[j], acc[r][j]);
        }
    }
    for (int r = 0; r < APB_MR; r++)
        for (int j = 0; j < 32; j++) c[r * ldc + j] = acc[r][j];
}

/* The same for any rows and columns (the tile's edges): plain loops. */
static void APB(mk_any)(float *c, int ldc, const float *a, int ars, int ais, const float *b, int ldb, int k,
                        int rows, int cols, int acc_in) {
    for (int r = 0; r < rows; r++) {
        float *cr = c + (size_t)r * (size_t)ldc;
        if (!acc_in)
            for (int j = 0; j < cols; j++) cr[j] = 0.0f;
        for (int i = 0; i < k; i++) {
            const float s = a[r * ars + i * ais];
            const float *br = b + (size_t)i * (size_t)ldb;
            for (int j = 0; j < cols; j++) cr[j] = APB_FMA(s, br[j], cr[j]);
        }
    }
}

/* C [rows][cols] (+)= A [rows][k] B [k][cols], cut into APB_MR x 32 blocks and edges. */
static void APB(small_gemm)(float *c, int ldc, const float *a, int ars, int ais, const float *b, int ldb,
                            int k, int rows, int cols, int acc_in) {
    const int rm = rows / APB_MR * APB_MR, c32 = cols & ~31;
    for (int r = 0; r < rm; r += APB_MR)
        for (int j = 0; j < c32; j += 32)
            APB_MK_ROWS(c + (size_t)r * (size_t)ldc + j, ldc, a + (size_t)r * (size_t)ars, ars, ais, b + j,
                        ldb, k, acc_in);
    if (c32 < cols) APB_MK_ANY(c + c32, ldc, a, ars, ais, b + c32, ldb, k, rm, cols - c32, acc_in);
    if (rm < rows)
        APB_MK_ANY(c + (size_t)rm * (size_t)ldc, ldc, a + (size_t)rm * (size_t)ars, ars, ais, b, ldb, k,
                   rows - rm, cols, acc_in);
}

/* Widens positions [j0, j0 + jn) of one KV head's K and V rows into kf and vf [TILE_K][head_dim]: contiguous
 * runs, which the compiler vectorizes (the scores are computed as K Q^T so that K needs no transpose). */
static void APB(load_block)(float *kf, float *vf, const void *k, const void *v, int kv_bf16, int j0, int jn,
                            int hd) {
    const size_t n = (size_t)jn * (size_t)hd, at = (size_t)j0 * (size_t)hd;
    if (kv_bf16) {
        const uint16_t *kr = (const uint16_t *)k + at, *vr = (const uint16_t *)v + at;
        for (size_t i = 0; i < n; i++) kf[i] = bf16_to_f32(kr[i]);
        for (size_t i = 0; i < n; i++) vf[i] = bf16_to_f32(vr[i]);
    } else {
        memcpy(kf, (const float *)k + at, n * sizeof(float));
        memcpy(vf, (const float *)v + at, n * sizeof(float));
    }
}

/* Online softmax over one block's transposed scores st[j][t] (j < jn keys, t < rows queries): masks the keys
 * past each query's position, updates the running max m and sum l, rescales the output rows when the max
 * grows, and leaves the weights exp(score - max) in st. mxp [rows] is scratch for the new maxima. */
static void APB(block_softmax)(float *st, float *m, float *l, float *mxp, float *o, int rows, int jn, int j0,
                               int p0, int i0, int g, int hd) {
    /* only a block past the tile's first position holds keys some query may not see: mask those, a query
     * position (g rows) at a time, no division in the loops */
    if (j0 + jn - 1 > p0 + i0)
        for (int t0 = 0; t0 < rows; t0 += g) {
            const int first_hidden = p0 + i0 + t0 / g + 1 - j0; /* keys from here on lie past the position */
            for (int j = first_hidden > 0 ? first_hidden : 0; j < jn; j++)
                for (int t = t0; t < t0 + g; t++) st[(size_t)j * (size_t)rows + (size_t)t] = -INFINITY;
        }
    for (int t = 0; t < rows; t++) mxp[t] = m[t];
    for (int j = 0; j < jn; j++) {
        const float *row = st + (size_t)j * (size_t)rows;
        for (int t = 0; t < rows; t++) mxp[t] = row[t] > mxp[t] ? row[t] : mxp[t];
    }
    for (int j = 0; j < jn; j++) {
        float *row = st + (size_t)j * (size_t)rows;
        for (int t = 0; t < rows; t++) row[t] -= mxp[t];
        kernel_vexp(row, row, rows);
    }
    for (int t = 0; t < rows; t++) {
        if (mxp[t] != m[t]) {
            const float corr = expf(m[t] - mxp[t]);
            float *orow = o + (size_t)t * (size_t)hd;
            for (int d = 0; d < hd; d++) orow[d] *= corr;
            l[t] *= corr;
            m[t] = mxp[t];
        }
    }
    for (int j = 0; j < jn; j++) {
        const float *row = st + (size_t)j * (size_t)rows;
        for (int t = 0; t < rows; t++) l[t] += row[t];
    }
}

/* One tile: query rows [i0, i1) of the prompt, the `group` query heads of KV head kvh. Rows of the tile are
 * ordered position-major: tile row t = (i - i0) * group + g. */
void APB(prefill_attention_tile)(const struct prefill_tile_args *a, struct prefill_tile_scratch *s, int kvh,
                                 int i0, int i1) {
    const int hd = a->head_dim, g = a->group, rows = (i1 - i0) * g, tk = PREFILL_ATT_TILE_K;
    const size_t head_off = (size_t)kvh * a->head_stride * (a->kv_bf16 ? 2 : 4);
    const void *k = (const char *)a->k + head_off, *v = (const char *)a->v + head_off;
    /* the tile's queries transposed, qt[d][t], pre-scaled: the B operand of K Q^T */
    for (int t = 0; t < rows; t++) {
        const float *q = a->q + (size_t)(i0 + t / g) * a->ldq + (size_t)(kvh * g + t % g) * (size_t)hd;
        for (int d = 0; d < hd; d++) s->qt[(size_t)d * (size_t)rows + (size_t)t] = q[d] * a->scale;
        s->m[t] = -INFINITY;
        s->l[t] = 0.0f;
    }
    memset(s->o, 0, (size_t)rows * (size_t)hd * sizeof(float));
    const int end = a->p0 + i1; /* one past the tile's last position */
    for (int j0 = 0; j0 < end; j0 += tk) {
        const int jn = end - j0 < tk ? end - j0 : tk;
        APB_LOAD_BLOCK(s->kf, s->vf, k, v, a->kv_bf16, j0, jn, hd);
        APB_SMALL_GEMM(s->st, rows, s->kf, hd, 1, s->qt, rows, hd, jn, rows, 0);
        APB_BLOCK_SOFTMAX(s->st, s->m, s->l, s->mx, s->o, rows, jn, j0, a->p0, i0, g, hd);
        APB_SMALL_GEMM(s->o, hd, s->st, 1, rows, s->vf, hd, jn, rows, hd, 1);
    }
    for (int t = 0; t < rows; t++) {
        float *out = a->out + (size_t)(i0 + t / g) * a->ldo + (size_t)(kvh * g + t % g) * (size_t)hd;
        const float inv = 1.0f / s->l[t];
        for (int d = 0; d < hd; d++) out[d] = s->o[(size_t)t * (size_t)hd + (size_t)d] * inv;
    }
}
