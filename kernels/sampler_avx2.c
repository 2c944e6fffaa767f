/* AVX2 twins of the sampler's row passes (sampler_simd.h), for CPUs without AVX-512: 16 values per step as
 * two 8-lane halves, the last partial step through a padded copy, and the scalar pass's operations in the
 * same order (no FMA), so results are bit-identical to sampler.c's scalar path and to the AVX-512 one;
 * tests/test_sampler*.c check that on every pass. Keys (f32 bits without the sign) are < 2^31, so signed
 * 32-bit compares order them. */
#include <immintrin.h>
#include <math.h>
#include <string.h>

#include "kernels/sampler_simd.h"

/* 16 values of the row as f32 from index i, lanes past n set to fill */
static inline void load16(const void *row, enum fr_dtype dtype, int i, int n, float fill, __m256 *a,
                          __m256 *b) {
    if (n - i >= 16) {
        if (dtype == FR_DTYPE_BF16) {
            const __m128i *h = (const __m128i *)((const uint16_t *)row + i);
            *a = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(h)), 16));
            *b = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(h + 1)), 16));
        } else {
            *a = _mm256_loadu_ps((const float *)row + i);
            *b = _mm256_loadu_ps((const float *)row + i + 8);
        }
        return;
    }
    float t[16];
    for (int j = 0; j < 16; j++) {
        if (i + j >= n)
            t[j] = fill;
        else if (dtype == FR_DTYPE_BF16)
            t[j] = bf16_to_f32(((const uint16_t *)row)[i + j]);
        else
            t[j] = ((const float *)row)[i + j];
    }
    *a = _mm256_loadu_ps(t);
    *b = _mm256_loadu_ps(t + 8);
}

static inline void loadp(const float *p, int i, int n, __m256 *a, __m256 *b) {
    load16(p, FR_DTYPE_F32, i, n, 0.0f, a, b);
}

static inline void store16(float *dst, int i, int n, __m256 a, __m256 b) {
    if (n - i >= 16) {
        _mm256_storeu_ps(dst + i, a);
        _mm256_storeu_ps(dst + i + 8, b);
        return;
    }
    float t[16];
    _mm256_storeu_ps(t, a);
    _mm256_storeu_ps(t + 8, b);
    memcpy(dst + i, t, sizeof(float) * (size_t)(n - i));
}

static inline __m256i keys8(__m256 v) {
    return _mm256_and_si256(_mm256_castps_si256(v), _mm256_set1_epi32(0x7fffffff));
}

/* lanes of the half starting at i + off that lie below n */
static inline __m256i live8(int i, int off, int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n - i - off), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static bool scan_avx2(const void *row, enum fr_dtype dtype, int n, float *max) {
    __m256 m = _mm256_set1_ps(-INFINITY), inf = _mm256_set1_ps(INFINITY), bad = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 16) {
        __m256 a, b;
        load16(row, dtype, i, n, -INFINITY, &a, &b);
        bad = _mm256_or_ps(
            bad, _mm256_or_ps(_mm256_cmp_ps(a, a, _CMP_UNORD_Q), _mm256_cmp_ps(a, inf, _CMP_EQ_OQ)));
        bad = _mm256_or_ps(
            bad, _mm256_or_ps(_mm256_cmp_ps(b, b, _CMP_UNORD_Q), _mm256_cmp_ps(b, inf, _CMP_EQ_OQ)));
        m = _mm256_max_ps(m, _mm256_max_ps(a, b));
    }
    float t[8];
    _mm256_storeu_ps(t, m);
    float r = t[0];
    for (int j = 1; j < 8; j++) r = t[j] > r ? t[j] : r; /* max is exact in any order */
    *max = r;
    return _mm256_movemask_ps(bad) != 0;
}

static int find_avx2(const void *row, enum fr_dtype dtype, int n, float v) {
    __m256 t = _mm256_set1_ps(v);
    for (int i = 0; i < n; i += 16) {
        __m256 a, b;
        load16(row, dtype, i, n, NAN, &a, &b); /* NaN never compares equal */
        unsigned eq = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(a, t, _CMP_EQ_OQ)) |
                      (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(b, t, _CMP_EQ_OQ)) << 8;
        if (eq) return i + __builtin_ctz(eq);
    }
    return n - 1;
}

static inline __m256 exp8(__m256 x) {
    __m256 live = _mm256_cmp_ps(x, _mm256_set1_ps(SAMPLER_EXP_LO), _CMP_GE_OQ);
    x = _mm256_max_ps(x, _mm256_set1_ps(SAMPLER_EXP_LO)); /* keeps dead lanes (-inf) finite */
    __m256 mag = _mm256_set1_ps(SAMPLER_ROUND_MAG);
    __m256 n = _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(x, _mm256_set1_ps(SAMPLER_LOG2E)), mag), mag);
    __m256 r = _mm256_sub_ps(x, _mm256_mul_ps(n, _mm256_set1_ps(SAMPLER_LN2_HI)));
    r = _mm256_sub_ps(r, _mm256_mul_ps(n, _mm256_set1_ps(SAMPLER_LN2_LO)));
    __m256 z = _mm256_mul_ps(r, r);
    __m256 y = _mm256_set1_ps(SAMPLER_EXP_P0);
    y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(SAMPLER_EXP_P1));
    y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(SAMPLER_EXP_P2));
    y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(SAMPLER_EXP_P3));
    y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(SAMPLER_EXP_P4));
    y = _mm256_add_ps(_mm256_mul_ps(y, r), _mm256_set1_ps(SAMPLER_EXP_P5));
    y = _mm256_add_ps(_mm256_mul_ps(y, z), r);
    y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
    __m256i ni = _mm256_cvttps_epi32(n), zero = _mm256_setzero_si256();
    __m256i n1 = _mm256_sub_epi32(zero, _mm256_srli_epi32(_mm256_sub_epi32(zero, ni), 1));
    __m256i n2 = _mm256_sub_epi32(ni, n1);
    __m256i bias = _mm256_set1_epi32(127);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
    return _mm256_and_ps(live, _mm256_mul_ps(_mm256_mul_ps(y, s1), s2));
}

static void exp_sum_avx2(float *e, const void *row, enum fr_dtype dtype, int n, float m, float t,
                         double *acc) {
    __m256 vm = _mm256_set1_ps(m), vt = _mm256_set1_ps(t);
    __m256d a0 = _mm256_loadu_pd(acc), a1 = _mm256_loadu_pd(acc + 4); /* lanes i % 16 = 0..3, 4..7 */
    __m256d a2 = _mm256_loadu_pd(acc + 8), a3 = _mm256_loadu_pd(acc + 12);
    for (int i = 0; i < n; i += 16) {
        __m256 x, y;
        load16(row, dtype, i, n, m, &x, &y);
        __m256 va = exp8(_mm256_div_ps(_mm256_sub_ps(x, vm), vt));
        __m256 vb = exp8(_mm256_div_ps(_mm256_sub_ps(y, vm), vt));
        if (n - i < 16) { /* dead lanes (exp(0) of the fill) add nothing */
            va = _mm256_and_ps(va, _mm256_castsi256_ps(live8(i, 0, n)));
            vb = _mm256_and_ps(vb, _mm256_castsi256_ps(live8(i, 8, n)));
        }
        store16(e, i, n, va, vb);
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(va)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(va, 1)));
        a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm256_castps256_ps128(vb)));
        a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm256_extractf128_ps(vb, 1)));
    }
    _mm256_storeu_pd(acc, a0);
    _mm256_storeu_pd(acc + 4, a1);
    _mm256_storeu_pd(acc + 8, a2);
    _mm256_storeu_pd(acc + 12, a3);
}

/* the level masses: acc[j] += v where v's key >= 2^(-6(j+1)) (key > level - 1) */
static inline void levels_add(__m256 *acc, __m256 v) {
    __m256i key = keys8(v);
    for (int j = 0; j < SAMPLER_LEVELS; j++) {
        __m256i thr = _mm256_set1_epi32(((127 - SAMPLER_LEVEL_STEP * (j + 1)) << 23) - 1);
        acc[j] = _mm256_add_ps(acc[j], _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_cmpgt_epi32(key, thr))));
    }
}

static inline void levels_out(const __m256 *acc, float *mass) {
    for (int j = 0; j < SAMPLER_LEVELS; j++) {
        float t[8];
        _mm256_storeu_ps(t, acc[j]);
        mass[j] = ((t[0] + t[1]) + (t[2] + t[3])) + ((t[4] + t[5]) + (t[6] + t[7]));
    }
}

static void levels_avx2(const float *p, int n, float *mass) {
    __m256 acc[SAMPLER_LEVELS];
    for (int j = 0; j < SAMPLER_LEVELS; j++) acc[j] = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 16) {
        __m256 a, b;
        loadp(p, i, n, &a, &b);
        levels_add(acc, a);
        levels_add(acc, b);
    }
    levels_out(acc, mass);
}

static void scale_avx2(float *p, int n, float r, float *mass) {
    __m256 vr = _mm256_set1_ps(r), acc[SAMPLER_LEVELS];
    for (int j = 0; j < SAMPLER_LEVELS; j++) acc[j] = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 16) {
        __m256 a, b;
        loadp(p, i, n, &a, &b);
        a = _mm256_mul_ps(a, vr), b = _mm256_mul_ps(b, vr); /* padding lanes: 0 * r = 0 */
        store16(p, i, n, a, b);
        if (mass) levels_add(acc, a), levels_add(acc, b);
    }
    if (mass) levels_out(acc, mass);
}

/* ids of the elements with key in [lo, hi), in index order; with below, also the index of the largest
 * element whose key is < lo (lowest index on ties; -1 if none) */
static inline int collect_range(uint32_t *ids, const float *p, int n, uint32_t lo, uint32_t hi, int *below) {
    __m256i vlo = _mm256_set1_epi32((int)lo), vhi1 = _mm256_set1_epi32((int)(hi - 1));
    __m256i best = _mm256_set1_epi32(-1), at = _mm256_setzero_si256(); /* -1: no key yet */
    __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), step = _mm256_set1_epi32(8);
    int m = 0;
    for (int i = 0; i < n; i += 16) {
        __m256 v[2];
        loadp(p, i, n, &v[0], &v[1]);
        for (int h = 0; h < 2; h++) {
            __m256i key = keys8(v[h]), live = live8(i, 8 * h, n);
            __m256i under = _mm256_and_si256(live, _mm256_cmpgt_epi32(vlo, key));
            __m256i in = _mm256_andnot_si256(_mm256_or_si256(under, _mm256_cmpgt_epi32(key, vhi1)), live);
            unsigned bits = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(in));
            while (bits) {
                ids[m++] = (uint32_t)(i + 8 * h + __builtin_ctz(bits));
                bits &= bits - 1;
            }
            if (below) { /* strictly greater keeps a lane's earliest index */
                __m256i up = _mm256_and_si256(under, _mm256_cmpgt_epi32(key, best));
                best = _mm256_blendv_epi8(best, key, up);
                at = _mm256_blendv_epi8(at, idx, up);
            }
            idx = _mm256_add_epi32(idx, step);
        }
    }
    if (below) {
        int32_t kb[8], ib[8];
        _mm256_storeu_si256((__m256i *)kb, best);
        _mm256_storeu_si256((__m256i *)ib, at);
        int32_t rk = -1;
        *below = -1;
        for (int l = 0; l < 8; l++)
            if (kb[l] >= 0 && (kb[l] > rk || (kb[l] == rk && ib[l] < *below))) rk = kb[l], *below = ib[l];
    }
    return m;
}

static int collect_avx2(uint32_t *ids, const float *p, int n, uint32_t lo, uint32_t hi) {
    return collect_range(ids, p, n, lo, hi, NULL);
}

static int collect_top_avx2(uint32_t *ids, const float *p, int n, uint32_t t, int *below) {
    return collect_range(ids, p, n, t, 0x80000000u, below);
}

static int min_in_range_avx2(const float *p, int n, uint32_t lo, uint32_t hi) {
    __m256i vlo = _mm256_set1_epi32((int)lo), vhi1 = _mm256_set1_epi32((int)(hi - 1));
    __m256i best = _mm256_set1_epi32(0x7fffffff), at = _mm256_set1_epi32(-1); /* -1: none yet */
    __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), step = _mm256_set1_epi32(8);
    for (int i = 0; i < n; i += 16) {
        __m256 v[2];
        loadp(p, i, n, &v[0], &v[1]);
        for (int h = 0; h < 2; h++) {
            __m256i key = keys8(v[h]), live = live8(i, 8 * h, n);
            __m256i out = _mm256_or_si256(_mm256_cmpgt_epi32(vlo, key), _mm256_cmpgt_epi32(key, vhi1));
            /* key <= best keeps a lane's latest index */
            __m256i down = _mm256_andnot_si256(_mm256_or_si256(out, _mm256_cmpgt_epi32(key, best)), live);
            best = _mm256_blendv_epi8(best, key, down);
            at = _mm256_blendv_epi8(at, idx, down);
            idx = _mm256_add_epi32(idx, step);
        }
    }
    int32_t kb[8], ib[8];
    _mm256_storeu_si256((__m256i *)kb, best);
    _mm256_storeu_si256((__m256i *)ib, at);
    int res = -1;
    int32_t rk = 0x7fffffff;
    for (int l = 0; l < 8; l++)
        if (ib[l] >= 0 && (kb[l] < rk || (kb[l] == rk && ib[l] > res))) rk = kb[l], res = ib[l];
    return res;
}

/* sampler_block_sum16's order: (p[j] + p[j+8]) in 8 double lanes, then halves */
static inline double block_sum16_avx2(__m256 a, __m256 b) {
    __m256d lo =
        _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(a)), _mm256_cvtps_pd(_mm256_castps256_ps128(b)));
    __m256d hi = _mm256_add_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)),
                               _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1)));
    __m256d t = _mm256_add_pd(lo, hi);
    __m128d u = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
    return _mm_cvtsd_f64(_mm_add_sd(u, _mm_unpackhi_pd(u, u)));
}

static double draw_total_avx2(const float *p, int n, int *last) {
    double total = 0;
    *last = -1;
    __m256 zero = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 16) {
        __m256 a, b;
        loadp(p, i, n, &a, &b);
        unsigned pos = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(a, zero, _CMP_GT_OQ)) |
                       (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(b, zero, _CMP_GT_OQ)) << 8;
        if (!pos) continue; /* an all-zero block adds exactly 0 */
        *last = i + 31 - __builtin_clz(pos);
        total += block_sum16_avx2(a, b);
    }
    return total;
}

static int draw_block_avx2(const float *p, int n, double target, double *before) {
    double c = 0;
    __m256 zero = _mm256_setzero_ps();
    for (int i = 0; i < n; i += 16) {
        __m256 a, b;
        loadp(p, i, n, &a, &b);
        if (!_mm256_movemask_ps(
                _mm256_or_ps(_mm256_cmp_ps(a, zero, _CMP_NEQ_UQ), _mm256_cmp_ps(b, zero, _CMP_NEQ_UQ))))
            continue;
        double next = c + block_sum16_avx2(a, b);
        if (next > target) {
            *before = c;
            return i / 16;
        }
        c = next;
    }
    return -1;
}

static void finish_avx2(float *out, const float *p, int n, uint32_t kc, int ic, float kf, double *total,
                        int *last) {
    __m256i vkc = _mm256_set1_epi32((int)kc), vic = _mm256_set1_epi32(ic);
    __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), step = _mm256_set1_epi32(8);
    __m256 vkf = _mm256_set1_ps(kf), zero = _mm256_setzero_ps();
    double sum = 0;
    int end = -1;
    for (int i = 0; i < n; i += 16) {
        __m256 v[2];
        loadp(p, i, n, &v[0], &v[1]);
        for (int h = 0; h < 2; h++) {
            __m256i key = keys8(v[h]);
            __m256i tie = _mm256_andnot_si256(_mm256_cmpgt_epi32(idx, vic), _mm256_cmpeq_epi32(key, vkc));
            __m256i kept = _mm256_or_si256(_mm256_cmpgt_epi32(key, vkc), tie);
            v[h] = _mm256_and_ps(_mm256_castsi256_ps(kept), _mm256_div_ps(v[h], vkf));
            idx = _mm256_add_epi32(idx, step);
        }
        store16(out, i, n, v[0], v[1]);
        if (!total) continue;
        unsigned pos = (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(v[0], zero, _CMP_GT_OQ)) |
                       (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(v[1], zero, _CMP_GT_OQ)) << 8;
        if (pos) { /* the draw's blocks, as draw_total (padding lanes are 0) */
            end = i + 31 - __builtin_clz(pos);
            sum += block_sum16_avx2(v[0], v[1]);
        }
    }
    if (total) *total = sum, *last = end;
}

const struct sampler_row_ops sampler_ops_avx2 = {
    scan_avx2,        find_avx2,         exp_sum_avx2,    scale_avx2,      levels_avx2, collect_avx2,
    collect_top_avx2, min_in_range_avx2, draw_total_avx2, draw_block_avx2, finish_avx2,
};
