/* Private to the sampler: the row passes that have AVX2 and AVX-512 twins beside the scalar one in
 * sampler.c / sampler_topp.c. Every twin computes bit-identical results: same operations, same order. */
#ifndef FR_SAMPLER_SIMD_H
#define FR_SAMPLER_SIMD_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/dtype.h"

/* The exp polynomial (Cephes expf coefficients, Cody-Waite reduction), shared by every path. */
#define SAMPLER_EXP_LO     (-104.0f)
#define SAMPLER_LOG2E      1.44269504088896341f
#define SAMPLER_ROUND_MAG  12582912.0f /* 1.5 * 2^23: x + MAG - MAG rounds |x| < 2^22 to nearest even */
#define SAMPLER_LN2_HI     0.693359375f
#define SAMPLER_LN2_LO     (-2.12194440e-4f)
#define SAMPLER_EXP_P0     1.9875691500e-4f
#define SAMPLER_EXP_P1     1.3981999507e-3f
#define SAMPLER_EXP_P2     8.3334519073e-3f
#define SAMPLER_EXP_P3     4.1665795894e-2f
#define SAMPLER_EXP_P4     1.6666665459e-1f
#define SAMPLER_EXP_P5     5.0000001201e-1f
#define SAMPLER_LANES      16 /* double partial sums of the softmax denominator */
#define SAMPLER_LEVELS     4  /* top-p pre-filter levels 2^-6, 2^-12, 2^-18, 2^-24 */
#define SAMPLER_LEVEL_STEP 6

struct sampler_row_ops {
    /* max of the row; returns true if any element is NaN or +inf (then *max is meaningless) */
    bool (*scan)(const void *row, enum fr_dtype dtype, int n, float *max);
    /* first index whose value == v (v is in the row) */
    int (*find)(const void *row, enum fr_dtype dtype, int n, float v);
    /* e[i] = exp((x[i] - m) / t); acc[i % 16] += e[i] in index order, in double */
    void (*exp_sum)(float *e, const void *row, enum fr_dtype dtype, int n, float m, float t, double *acc);
    /* p[i] = p[i] * r; with mass, also levels() of the result in the same pass */
    void (*scale)(float *p, int n, float r, float *mass);
    /* mass[j] ~ sum of the elements >= 2^(-SAMPLER_LEVEL_STEP * (j + 1)) (f32 sums: a guide, not exact) */
    void (*levels)(const float *p, int n, float *mass);
    /* ids of the elements whose key (f32 bits without the sign) lies in [lo, hi), in index order */
    int (*collect)(uint32_t *ids, const float *p, int n, uint32_t lo, uint32_t hi);
    /* collect(ids, p, n, t, 2^31), and in the same pass *below = the index of the largest element whose
     * key is < t (lowest index on ties), -1 if none */
    int (*collect_top)(uint32_t *ids, const float *p, int n, uint32_t t, int *below);
    /* index of the smallest element whose key is in [lo, hi) (highest index on ties); one exists */
    int (*min_in_range)(const float *p, int n, uint32_t lo, uint32_t hi);
    /* the draw's CDF: sum of the 16-token block sums in block order (block_sum16's pairwise tree, in
     * double; the last block zero-padded), and the last index with p > 0 (-1 if none) */
    double (*draw_total)(const float *p, int n, int *last);
    /* the first block whose running sum (as above) exceeds target, and that sum before it; -1 if none */
    int (*draw_block)(const float *p, int n, double target, double *before);
    /* out[i] = kept ? p[i] / kf : 0, kept = key > kc || (key == kc && i <= ic); out may be p. With total,
     * also draw_total() of the result in the same pass. */
    void (*finish)(float *out, const float *p, int n, uint32_t kc, int ic, float kf, double *total,
                   int *last);
};

extern const struct sampler_row_ops sampler_ops_scalar;
extern const struct sampler_row_ops sampler_ops_avx2;
extern const struct sampler_row_ops sampler_ops_avx512;
const struct sampler_row_ops *sampler_ops(void);

/* A 16-value block's sum in double, pairwise: (p[j] + p[j+8]), then halves again down to one. */
static inline double sampler_block_sum16(const float *p) {
    double s[8];
    for (int j = 0; j < 8; j++) s[j] = (double)p[j] + (double)p[j + 8];
    for (int w = 4; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) s[j] += s[j + w];
    return s[0];
}

/* The fast filter with the pieces the chain already has: levels (NULL: computed here) and, when total is
 * given, the draw's total and last positive index of the output (both set only if it returns with
 * *total >= 0; top_p >= 1 leaves *total = -1). */
int sampler_top_p_fast_fused(float *out, const float *probs, int n, float top_p, void *scratch,
                             const float *levels, double *total, int *last);
/* sampler_draw given draw_total's results */
int sampler_draw_given(const float *probs, int n, double u, double total, int last);

static inline uint32_t sampler_key(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u & 0x7fffffffu; /* -0 sorts with +0 */
}

#endif
