/* AVX2+FMA inner loops of the ceilings: a read-only sum with 8 independent ymm accumulators (64 floats per
 * iteration) and a register-resident FMA loop with 12 ymm accumulators (2 FMA pipes x latency 4-5 need 8-10
 * in flight; 12 plus the two constants fit the 16 ymm registers). Checked in tests/test_ceilings.c against
 * exact sums and a scalar fmaf loop. */
#include <immintrin.h>
#include <stdbool.h>
#include <stdint.h>

#include "roofline/ceilings_kernels.h"

static float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static double fold(__m256 *acc, float *tail) {
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])),
                             _mm256_add_ps(_mm256_add_ps(acc[4], acc[5]), _mm256_add_ps(acc[6], acc[7])));
    double d = (double)hsum(s) + (double)*tail;
    for (int k = 0; k < 8; k++) acc[k] = _mm256_setzero_ps();
    *tail = 0;
    return d;
}

/* The read: software prefetch CEILINGS_PREFETCH_FLOATS ahead with `prefetch` (a constant), else the hardware
 * prefetchers alone over one loop per fold (ceilings_kernels.h). */
static inline __attribute__((always_inline)) double read_body(const float *a, size_t n, long passes,
                                                              const bool prefetch) {
    const size_t fold_floats = prefetch ? CEILINGS_FOLD_FLOATS : CEILINGS_HW_FOLD_FLOATS;
    __m256 acc[8];
    float tail = 0;
    double total = 0;
    size_t pending = 0;
    for (int k = 0; k < 8; k++) acc[k] = _mm256_setzero_ps();
    size_t n64 = n & ~(size_t)63;
    for (long p = 0; p < passes; p++) {
        for (size_t lo = 0; lo < n64; lo += fold_floats) {
            size_t hi = lo + fold_floats < n64 ? lo + fold_floats : n64;
            for (size_t i = lo; i < hi; i += 64) {
                if (prefetch) {
                    uintptr_t pf =
                        (uintptr_t)(a + i) + CEILINGS_PREFETCH_FLOATS * sizeof(float); /* may pass the end */
                    for (int l = 0; l < 4; l++)
                        _mm_prefetch((const char *)(pf + 64 * (uintptr_t)l), _MM_HINT_T1);
                }
                acc[0] = _mm256_add_ps(acc[0], _mm256_loadu_ps(a + i));
                acc[1] = _mm256_add_ps(acc[1], _mm256_loadu_ps(a + i + 8));
                acc[2] = _mm256_add_ps(acc[2], _mm256_loadu_ps(a + i + 16));
                acc[3] = _mm256_add_ps(acc[3], _mm256_loadu_ps(a + i + 24));
                acc[4] = _mm256_add_ps(acc[4], _mm256_loadu_ps(a + i + 32));
                acc[5] = _mm256_add_ps(acc[5], _mm256_loadu_ps(a + i + 40));
                acc[6] = _mm256_add_ps(acc[6], _mm256_loadu_ps(a + i + 48));
                acc[7] = _mm256_add_ps(acc[7], _mm256_loadu_ps(a + i + 56));
            }
            pending += hi - lo;
            if (pending >= fold_floats) total += fold(acc, &tail), pending = 0;
        }
        for (size_t i = n64; i < n; i++) tail += a[i];
    }
    return total + fold(acc, &tail);
}

double ceilings_read_avx2(const float *a, size_t n, long passes) {
    return read_body(a, n, passes, true);
}

double ceilings_read_avx2_hw(const float *a, size_t n, long passes) {
    return read_body(a, n, passes, false);
}

double ceilings_read_avx2_two_streams(const float *a, size_t n, long passes) {
    __m256 acc[8];
    float tail = 0;
    double total = 0;
    size_t pending = 0, half = (n / 2) & ~(size_t)31, step = CEILINGS_HW_FOLD_FLOATS / 2;
    const float *b = a + half;
    for (int k = 0; k < 8; k++) acc[k] = _mm256_setzero_ps();
    for (long p = 0; p < passes; p++) {
        for (size_t lo = 0; lo < half; lo += step) {
            size_t hi = lo + step < half ? lo + step : half;
            for (size_t i = lo; i < hi; i += 32) {
                acc[0] = _mm256_add_ps(acc[0], _mm256_loadu_ps(a + i));
                acc[1] = _mm256_add_ps(acc[1], _mm256_loadu_ps(a + i + 8));
                acc[2] = _mm256_add_ps(acc[2], _mm256_loadu_ps(a + i + 16));
                acc[3] = _mm256_add_ps(acc[3], _mm256_loadu_ps(a + i + 24));
                acc[4] = _mm256_add_ps(acc[4], _mm256_loadu_ps(b + i));
                acc[5] = _mm256_add_ps(acc[5], _mm256_loadu_ps(b + i + 8));
                acc[6] = _mm256_add_ps(acc[6], _mm256_loadu_ps(b + i + 16));
                acc[7] = _mm256_add_ps(acc[7], _mm256_loadu_ps(b + i + 24));
            }
            pending += 2 * (hi - lo);
            if (pending >= CEILINGS_HW_FOLD_FLOATS) total += fold(acc, &tail), pending = 0;
        }
        for (size_t i = 2 * half; i < n; i++) tail += a[i]; /* fewer than 64 */
    }
    return total + fold(acc, &tail);
}

float ceilings_fma_avx2(long iters, float mul, float add) {
    __m256 m = _mm256_set1_ps(mul), c = _mm256_set1_ps(add);
    __m256 acc[12];
    for (int k = 0; k < 12; k++) acc[k] = _mm256_setzero_ps();
    for (long it = 0; it < iters; it++) {
        acc[0] = _mm256_fmadd_ps(acc[0], m, c);
        acc[1] = _mm256_fmadd_ps(acc[1], m, c);
        acc[2] = _mm256_fmadd_ps(acc[2], m, c);
        acc[3] = _mm256_fmadd_ps(acc[3], m, c);
        acc[4] = _mm256_fmadd_ps(acc[4], m, c);
        acc[5] = _mm256_fmadd_ps(acc[5], m, c);
        acc[6] = _mm256_fmadd_ps(acc[6], m, c);
        acc[7] = _mm256_fmadd_ps(acc[7], m, c);
        acc[8] = _mm256_fmadd_ps(acc[8], m, c);
        acc[9] = _mm256_fmadd_ps(acc[9], m, c);
        acc[10] = _mm256_fmadd_ps(acc[10], m, c);
        acc[11] = _mm256_fmadd_ps(acc[11], m, c);
    }
    /* Every lane of every chain holds the same value; a chain that differs would show in the min/max. */
    __m256 lo = acc[0], hi = acc[0];
    for (int k = 1; k < 12; k++) lo = _mm256_min_ps(lo, acc[k]), hi = _mm256_max_ps(hi, acc[k]);
    float lv[8], hv[8];
    _mm256_storeu_ps(lv, lo);
    _mm256_storeu_ps(hv, hi);
    float l = lv[0], h = hv[0];
    for (int k = 1; k < 8; k++) l = lv[k] < l ? lv[k] : l, h = hv[k] > h ? hv[k] : h;
    return l == h ? l : -1.0f;
}
