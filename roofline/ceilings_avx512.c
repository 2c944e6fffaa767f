/* AVX-512 inner loops of the ceilings: a read-only sum with 8 independent zmm accumulators (128 floats per
 * iteration) and a register-resident FMA loop with 16 zmm accumulators (Zen 4 and Intel cores need 8 FMAs in
 * flight: 2 pipes x latency 4). Checked in tests/test_ceilings.c against exact sums and a scalar fmaf loop.
 */
#include <immintrin.h>
#include <stdint.h>

#include "roofline/ceilings_kernels.h"

static double fold(__m512 *acc, float *tail) {
    __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])),
                             _mm512_add_ps(_mm512_add_ps(acc[4], acc[5]), _mm512_add_ps(acc[6], acc[7])));
    double d = (double)_mm512_reduce_add_ps(s) + (double)*tail;
    for (int k = 0; k < 8; k++) acc[k] = _mm512_setzero_ps();
    *tail = 0;
    return d;
}

double ceilings_read_avx512(const float *a, size_t n, long passes) {
    __m512 acc[8];
    float tail = 0;
    double total = 0;
    size_t pending = 0;
    for (int k = 0; k < 8; k++) acc[k] = _mm512_setzero_ps();
    size_t n128 = n & ~(size_t)127;
    for (long p = 0; p < passes; p++) {
        for (size_t lo = 0; lo < n128; lo += CEILINGS_FOLD_FLOATS) {
            size_t hi = lo + CEILINGS_FOLD_FLOATS < n128 ? lo + CEILINGS_FOLD_FLOATS : n128;
            for (size_t i = lo; i < hi; i += 128) {
                uintptr_t pf =
                    (uintptr_t)(a + i) + CEILINGS_PREFETCH_FLOATS * sizeof(float); /* may pass the end */
                for (int l = 0; l < 8; l++) _mm_prefetch((const char *)(pf + 64 * (uintptr_t)l), _MM_HINT_T1);
                acc[0] = _mm512_add_ps(acc[0], _mm512_loadu_ps(a + i));
                acc[1] = _mm512_add_ps(acc[1], _mm512_loadu_ps(a + i + 16));
                acc[2] = _mm512_add_ps(acc[2], _mm512_loadu_ps(a + i + 32));
                acc[3] = _mm512_add_ps(acc[3], _mm512_loadu_ps(a + i + 48));
                acc[4] = _mm512_add_ps(acc[4], _mm512_loadu_ps(a + i + 64));
                acc[5] = _mm512_add_ps(acc[5], _mm512_loadu_ps(a + i + 80));
                acc[6] = _mm512_add_ps(acc[6], _mm512_loadu_ps(a + i + 96));
                acc[7] = _mm512_add_ps(acc[7], _mm512_loadu_ps(a + i + 112));
            }
            pending += hi - lo;
            if (pending >= CEILINGS_FOLD_FLOATS) total += fold(acc, &tail), pending = 0;
        }
        for (size_t i = n128; i < n; i++) tail += a[i];
    }
    return total + fold(acc, &tail);
}

float ceilings_fma_avx512(long iters, float mul, float add) {
    __m512 m = _mm512_set1_ps(mul), c = _mm512_set1_ps(add);
    __m512 acc[16];
    for (int k = 0; k < 16; k++) acc[k] = _mm512_setzero_ps();
    for (long it = 0; it < iters; it++) {
        /* Unrolled by hand so the 16 chains stay in registers and independent. */
        acc[0] = _mm512_fmadd_ps(acc[0], m, c);
        acc[1] = _mm512_fmadd_ps(acc[1], m, c);
        acc[2] = _mm512_fmadd_ps(acc[2], m, c);
        acc[3] = _mm512_fmadd_ps(acc[3], m, c);
        acc[4] = _mm512_fmadd_ps(acc[4], m, c);
        acc[5] = _mm512_fmadd_ps(acc[5], m, c);
        acc[6] = _mm512_fmadd_ps(acc[6], m, c);
        acc[7] = _mm512_fmadd_ps(acc[7], m, c);
        acc[8] = _mm512_fmadd_ps(acc[8], m, c);
        acc[9] = _mm512_fmadd_ps(acc[9], m, c);
        acc[10] = _mm512_fmadd_ps(acc[10], m, c);
        acc[11] = _mm512_fmadd_ps(acc[11], m, c);
        acc[12] = _mm512_fmadd_ps(acc[12], m, c);
        acc[13] = _mm512_fmadd_ps(acc[13], m, c);
        acc[14] = _mm512_fmadd_ps(acc[14], m, c);
        acc[15] = _mm512_fmadd_ps(acc[15], m, c);
    }
    /* Every lane of every chain holds the same value; a chain that differs would show in the min/max. */
    __m512 lo = acc[0], hi = acc[0];
    for (int k = 1; k < 16; k++) lo = _mm512_min_ps(lo, acc[k]), hi = _mm512_max_ps(hi, acc[k]);
    float l = _mm512_reduce_min_ps(lo), h = _mm512_reduce_max_ps(hi);
    return l == h ? l : -1.0f;
}
