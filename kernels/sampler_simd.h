/* Private to the sampler, its lowest layer: the row passes, a table with one implementation per instruction
 * set (scalar in sampler_scalar.c; AVX2 and AVX-512 from the one body in sampler_simd_body.h), and the
 * dispatch that picks one. sampler_topp.c and sampler.c both sit above this header and include it; it
 * includes neither. Every table computes bit-identical results: same operations, same order. */
#ifndef FR_SAMPLER_SIMD_H
#define FR_SAMPLER_SIMD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/dtype.h"
#include "kernels/kernels.h" /* enum kernel_isa */

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

/* key of level j: values >= 2^(-SAMPLER_LEVEL_STEP * (j + 1)) have keys >= it */
#define SAMPLER_LEVEL_KEY(j) ((uint32_t)(127 - SAMPLER_LEVEL_STEP * ((j) + 1)) << 23)

struct sampler_row_ops {
    /* max of the row; returns true if any element is NaN or +inf (then *max is meaningless) */
    bool (*scan)(const void *row, enum fr_dtype dtype, int n, float *max);
    /* index of the largest element, lowest index on ties (-inf only: n - 1 or any -inf index is fine, the
     * caller rejects the row); returns true if any element is NaN or +inf */
    bool (*argmax)(const void *row, enum fr_dtype dtype, int n, int *index);
    /* e[i] = exp((x[i] - m) / t); acc[i % 16] += e[i] in index order, in double. With mass, also levels() of
     * e (f32 sums: a guide) in the same pass. */
    void (*exp_sum)(float *e, const void *row, enum fr_dtype dtype, int n, float m, float t, double *acc,
                    float *mass);
    /* y[i] = sampler_exp(x[i]) for x <= 0: the softmax's exp alone, run as exp_sum runs it (the sampler's
     * exp roof is measured with it) */
    void (*exp)(float *y, const float *x, int n);
    /* p[i] = p[i] * r */
    void (*scale)(float *p, int n, float r);
    /* mass[j] ~ sum of the elements whose key >= SAMPLER_LEVEL_KEY(j) (f32 sums: a guide, not exact) */
    void (*levels)(const float *p, int n, float *mass);
    /* ids of the elements whose key (f32 bits without the sign) lies in [lo, hi), in index order, and with
     * keys (else NULL) their keys; each array may be written up to 16 entries past the count */
    int (*collect)(uint32_t *ids, uint32_t *keys, const float *p, int n, uint32_t lo, uint32_t hi);
    /* With scaled: first scaled[i] = p[i] * r (scaled may be p), then the rest on the scaled values.
     * collect(ids, NULL, p, n, t, 2^31), and in the same pass *below = the index of the largest element whose
     * key is < t (lowest index on ties), -1 if none */
    int (*collect_top)(uint32_t *ids, const float *p, float *scaled, float r, int n, uint32_t t, int *below);
    /* ids[i] and keys[i] for the i whose key lies in [lo, hi), in order, to ids_out and keys_out (which
     * do not overlap the inputs and may be written up to 16 entries past the count); keys < 2^31 */
    int (*select_keys)(uint32_t *ids_out, uint32_t *keys_out, const uint32_t *ids, const uint32_t *keys,
                       int n, uint32_t lo, uint32_t hi);
    /* index of the smallest element whose key is in [lo, hi) (highest index on ties); one exists */
    int (*min_in_range)(const float *p, int n, uint32_t lo, uint32_t hi);
    /* the draw's CDF: sum of the 16-token block sums in block order (sampler_block_sum16's pairwise tree,
     * in double; the last block zero-padded), and the last index with p > 0 (-1 if none) */
    double (*draw_total)(const float *p, int n, int *last);
    /* the first block whose running sum (as above) exceeds target, and that sum before it; -1 if none */
    int (*draw_block)(const float *p, int n, double target, double *before);
    /* out[i] = kept ? p[i] / kf : 0, kept = key > kc || (key == kc && i <= ic); out may be p. With blocks
     * (one double per 16-token block), also each block sum of the result, the total and the last
     * positive index as draw_total gives them, in the same pass. */
    void (*finish)(float *out, const float *p, int n, uint32_t kc, int ic, float kf, double *blocks,
                   double *total, int *last);
    /* The top-p filter's bins over the whole row: for every element, count[key >> 20] += 1 and
     * low[key >> 20] += key & 0xfffff (integers, so exact in any order). The SAMPLER_HOT_BINS bins of hot
     * (distinct, else a bin would be counted twice; -1: none) are summed in vector lanes, the others one
     * element at a time: fast when hot holds the crowded bins. count and low hold SAMPLER_KEY_BINS entries.
     * NULL in the scalar table, where sampler_topp.c's own histogram runs instead. */
    void (*bin_sums)(const float *p, int n, const int *hot, uint64_t *count, uint64_t *low);
};

/* Bins bin_sums sums in vector lanes (distinct), and the bins a key below 2^31 can fall in. */
#define SAMPLER_HOT_BINS 4
#define SAMPLER_KEY_BINS 2048

extern const struct sampler_row_ops sampler_ops_scalar;
extern const struct sampler_row_ops sampler_ops_avx2;
extern const struct sampler_row_ops sampler_ops_avx512;
/* the table of sampler_isa_active(); of a given ISA (NULL if the CPU lacks it) */
const struct sampler_row_ops *sampler_ops(void);
const struct sampler_row_ops *sampler_ops_for(enum kernel_isa isa);

/* Every pass of x against ref on one row of logits (sampler_check.c); returns how many outputs differ and
 * names the first pass that differs in *first (NULL if none). work: sampler_check_work_bytes(n). */
int sampler_ops_compare(const struct sampler_row_ops *x, const struct sampler_row_ops *ref, const float *row,
                        int n, float temperature, void *work, const char **first);

/* A 16-value block's sum in double, pairwise: (p[j] + p[j+8]), then halves again down to one. */
static inline double sampler_block_sum16(const float *p) {
    double s[8];
    for (int j = 0; j < 8; j++) s[j] = (double)p[j] + (double)p[j + 8];
    for (int w = 4; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) s[j] += s[j + w];
    return s[0];
}

static inline uint32_t sampler_key(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u & 0x7fffffffu; /* -0 sorts with +0 */
}

#endif
