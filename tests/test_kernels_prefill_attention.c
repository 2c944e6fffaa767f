/* Tiled causal prefill attention (kernels/attention_prefill.h) against attention_ref run once per query row
 * over that row's positions [0, p0 + i], for every ISA the CPU runs, on shapes that cut tiles unevenly:
 * prompts not a multiple of the 32-row query tile or the 64-position key block, GQA groups of 1, 2 and 3
 * (tile rows not a multiple of the 4-row micro-kernel), head_dim 40 (not a multiple of its 32 columns), a
 * prompt after cached positions, bf16 and f32 caches, one and two threads. Tolerance 2e-5 absolute +
 * 2e-5 relative: the two sum the same products in another f32 order, and the tile's online softmax rescales
 * where the reference subtracts the row max once. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/attention_prefill.h"
#include "kernels/kernels.h"

static float frand(uint64_t *s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((*s >> 40) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

static void check_shape(int n_heads, int n_kv, int hd, int p0, int n, enum fr_dtype t, int threads) {
    const int total = p0 + n, stride = total + 3; /* a cache sized for more positions than used */
    const size_t esz = t == FR_DTYPE_BF16 ? 2 : 4, ld = (size_t)(n_heads * hd) + 5;
    void *k = malloc((size_t)n_kv * (size_t)stride * (size_t)hd * esz);
    void *v = malloc((size_t)n_kv * (size_t)stride * (size_t)hd * esz);
    float *q = malloc((size_t)n * ld * sizeof(float)), *out = malloc((size_t)n * ld * sizeof(float));
    float *ref = malloc((size_t)(n_heads * hd) * sizeof(float));
    float *scratch = malloc((size_t)n_heads * (size_t)total * sizeof(float));
    cr_assert(k && v && q && out && ref && scratch);
    uint64_t seed = 99;
    for (size_t i = 0; i < (size_t)n_kv * (size_t)stride * (size_t)hd; i++) {
        /* scores up to a few units: softmax far from uniform */
        float a = 2.0f * frand(&seed), b = frand(&seed);
        if (t == FR_DTYPE_BF16)
            ((uint16_t *)k)[i] = bf16_from_f32(a), ((uint16_t *)v)[i] = bf16_from_f32(b);
        else
            ((float *)k)[i] = a, ((float *)v)[i] = b;
    }
    for (size_t i = 0; i < (size_t)n * ld; i++) q[i] = 2.0f * frand(&seed);
    for (int isa = 0; isa < KERNEL_ISA_COUNT; isa++) {
        if (kernel_isa_force((enum kernel_isa)isa) != 0) continue;
        cr_assert_eq(prefill_attention(out, ld, q, ld, k, v, t, p0, n, (size_t)stride * (size_t)hd, n_heads,
                                       n_kv, hd, threads),
                     0);
        int bad = 0;
        double worst = 0;
        for (int i = 0; i < n; i++) {
            attention_ref(ref, q + (size_t)i * ld, k, v, t, p0 + i + 1, (size_t)stride * (size_t)hd, n_heads,
                          n_kv, hd, scratch);
            for (int j = 0; j < n_heads * hd; j++) {
                double d = fabs(out[(size_t)i * ld + (size_t)j] - ref[j]);
                worst = fmax(worst, d);
                if (!(d <= 2e-5 + 2e-5 * fabs(ref[j])) && bad++ < 3)
                    cr_log_error("%s row %d elt %d: tiled %.7f ref %.7f",
                                 kernel_isa_name((enum kernel_isa)isa), i, j, out[(size_t)i * ld + (size_t)j],
                                 ref[j]);
            }
        }
        cr_expect_eq(bad, 0, "%s heads %d/%d d %d p0 %d n %d %s threads %d: %d off, worst %.3g",
                     kernel_isa_name((enum kernel_isa)isa), n_heads, n_kv, hd, p0, n, fr_dtype_name(t),
                     threads, bad, worst);
    }
    kernel_isa_force(KERNEL_ISA_COUNT);
    free(k), free(v), free(q), free(out), free(ref), free(scratch);
}

Test(kernels_prefill_attention, qwen3_group_2_d128_odd_prompts) {
    check_shape(4, 2, 128, 0, 1, FR_DTYPE_BF16, 2);
    check_shape(4, 2, 128, 0, 33, FR_DTYPE_BF16, 2);
    check_shape(4, 2, 128, 0, 97, FR_DTYPE_F32, 1);
}

Test(kernels_prefill_attention, after_cached_positions) {
    check_shape(4, 2, 128, 70, 45, FR_DTYPE_BF16, 2); /* blocks straddle the cached / prompt boundary */
    check_shape(2, 2, 64, 5, 64, FR_DTYPE_F32, 2);
}

Test(kernels_prefill_attention, groups_and_head_dims_off_the_micro_kernel) {
    check_shape(6, 2, 40, 3, 37, FR_DTYPE_BF16, 2); /* group 3, head_dim 40 */
    check_shape(3, 3, 32, 0, 7, FR_DTYPE_F32, 2);   /* group 1 */
    check_shape(8, 2, 16, 11, 5, FR_DTYPE_BF16, 1); /* group 4, head_dim under one micro-kernel */
}

Test(kernels_prefill_attention, kv_positions_follow_the_tiles) {
    /* tiles of 32 rows: rows 0..31 read p0 + 32 positions, the next tile p0 + its end */
    cr_expect_eq(prefill_attention_kv_positions(0, 1), 1.0);
    cr_expect_eq(prefill_attention_kv_positions(0, 32), 32.0);
    cr_expect_eq(prefill_attention_kv_positions(0, 33), 32.0 + 33.0);
    cr_expect_eq(prefill_attention_kv_positions(10, 64), 42.0 + 74.0);
    cr_expect_eq(prefill_attention_kv_positions(5, 0), 0.0);
}
