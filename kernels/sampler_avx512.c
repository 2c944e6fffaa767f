/* AVX-512 twins of the sampler's row passes (sampler_simd.h). Each does the scalar pass's operations in
 * the same order on 16 lanes (no FMA contraction: the scalar path has no FMA to match), so results are
 * bit-identical to sampler.c's scalar path; tests/test_sampler.c checks that on every pass. */
#include <immintrin.h>
#include <math.h>

#include "kernels/sampler_simd.h"

/* 16 values of the row as f32 from index i, lanes past n set to `fill` */
static inline __m512 load16(const void *row, enum fr_dtype dtype, int i, int n, float fill) {
    int left = n - i;
    __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
    if (dtype == FR_DTYPE_BF16) {
        __m256i h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)row + i);
        __m512 v = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
        return _mm512_mask_blend_ps(m, _mm512_set1_ps(fill), v);
    }
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), m, (const float *)row + i);
}

static inline __mmask16 tail_mask(int i, int n) {
    int left = n - i;
    return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
}

static bool scan_avx512(const void *row, enum fr_dtype dtype, int n, float *max) {
    __m512 m = _mm512_set1_ps(-INFINITY), inf = _mm512_set1_ps(INFINITY);
    __mmask16 bad = 0;
    for (int i = 0; i < n; i += 16) {
        __m512 v = load16(row, dtype, i, n, -INFINITY);
        bad |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(v, inf, _CMP_EQ_OQ);
        m = _mm512_max_ps(m, v);
    }
    *max = _mm512_reduce_max_ps(m); /* max is exact in any order */
    return bad != 0;
}

static int find_avx512(const void *row, enum fr_dtype dtype, int n, float v) {
    __m512 t = _mm512_set1_ps(v);
    for (int i = 0; i < n; i += 16) {
        __mmask16 eq =
            _mm512_mask_cmp_ps_mask(tail_mask(i, n), load16(row, dtype, i, n, 0.0f), t, _CMP_EQ_OQ);
        if (eq) return i + __builtin_ctz(eq);
    }
    return n - 1;
}

/* sampler_exp on 16 lanes. Rounding t with roundscale equals the scalar (t + 1.5 * 2^23) - 1.5 * 2^23 for
 * |t| < 2^22, and scalef rounds y * 2^n once, as the scalar's two exact-then-rounded factors do. */
static inline __m512 exp16(__m512 x) {
    __mmask16 live = _mm512_cmp_ps_mask(x, _mm512_set1_ps(SAMPLER_EXP_LO), _CMP_GE_OQ);
    x = _mm512_max_ps(x, _mm512_set1_ps(SAMPLER_EXP_LO)); /* keeps dead lanes (-inf) finite */
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(SAMPLER_LOG2E)),
                                    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_sub_ps(x, _mm512_mul_ps(n, _mm512_set1_ps(SAMPLER_LN2_HI)));
    r = _mm512_sub_ps(r, _mm512_mul_ps(n, _mm512_set1_ps(SAMPLER_LN2_LO)));
    __m512 z = _mm512_mul_ps(r, r);
    __m512 y = _mm512_set1_ps(SAMPLER_EXP_P0);
    y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(SAMPLER_EXP_P1));
    y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(SAMPLER_EXP_P2));
    y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(SAMPLER_EXP_P3));
    y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(SAMPLER_EXP_P4));
    y = _mm512_add_ps(_mm512_mul_ps(y, r), _mm512_set1_ps(SAMPLER_EXP_P5));
    y = _mm512_add_ps(_mm512_mul_ps(y, z), r);
    y = _mm512_add_ps(y, _mm512_set1_ps(1.0f));
    return _mm512_maskz_scalef_ps(live, y, n);
}

static inline void acc_add(__m512d *lo, __m512d *hi, __m512 v) {
    *lo = _mm512_add_pd(*lo, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    *hi =
        _mm512_add_pd(*hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}

static void exp_sum_avx512(float *e, const void *row, enum fr_dtype dtype, int n, float m, float t,
                           double *acc) {
    __m512 vm = _mm512_set1_ps(m), vt = _mm512_set1_ps(t);
    __m512d lo = _mm512_loadu_pd(acc), hi = _mm512_loadu_pd(acc + 8); /* lanes i % 16 = 0..7, 8..15 */
    int i = 0;
    /* two independent exps per step: the polynomial is a long dependent chain, one alone stalls */
    for (; i + 32 <= n; i += 32) {
        __m512 v0 = exp16(_mm512_div_ps(_mm512_sub_ps(load16(row, dtype, i, n, m), vm), vt));
        __m512 v1 = exp16(_mm512_div_ps(_mm512_sub_ps(load16(row, dtype, i + 16, n, m), vm), vt));
        _mm512_storeu_ps(e + i, v0);
        _mm512_storeu_ps(e + i + 16, v1);
        acc_add(&lo, &hi, v0); /* lane order kept: element i before element i + 16 */
        acc_add(&lo, &hi, v1);
    }
    for (; i < n; i += 16) {
        __mmask16 k = tail_mask(i, n);
        __m512 x = load16(row, dtype, i, n, m);
        __m512 v = _mm512_maskz_mov_ps(k, exp16(_mm512_div_ps(_mm512_sub_ps(x, vm), vt))); /* dead lanes: 0 */
        _mm512_mask_storeu_ps(e + i, k, v);
        acc_add(&lo, &hi, v);
    }
    _mm512_storeu_pd(acc, lo);
    _mm512_storeu_pd(acc + 8, hi);
}

/* The level masses, acc_j += v where v's key >= 2^(-6(j+1)), in four named accumulators: kept in an
 * array, GCC stores the whole array back every step. */
#define LEVELS_DECLARE                                                                                       \
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0, acc2 = acc0, acc3 = acc0;                                \
    const __m512i sign_ = _mm512_set1_epi32(0x7fffffff)
#define LEVEL_ADD(j, key, v)                                                                                 \
    acc##j = _mm512_mask_add_ps(                                                                             \
        acc##j, _mm512_cmpge_epu32_mask(key, _mm512_set1_epi32((127 - SAMPLER_LEVEL_STEP * (j + 1)) << 23)), \
        acc##j, v)
#define LEVELS_ADD(v)                                                                                        \
    do {                                                                                                     \
        __m512i key_ = _mm512_and_si512(_mm512_castps_si512(v), sign_);                                      \
        LEVEL_ADD(0, key_, v), LEVEL_ADD(1, key_, v), LEVEL_ADD(2, key_, v), LEVEL_ADD(3, key_, v);          \
    } while (0)
#define LEVELS_OUT(mass)                                                                                     \
    do {                                                                                                     \
        const __m512 all_[SAMPLER_LEVELS] = {acc0, acc1, acc2, acc3};                                        \
        for (int j_ = 0; j_ < SAMPLER_LEVELS; j_++) (mass)[j_] = _mm512_reduce_add_ps(all_[j_]);             \
    } while (0)
_Static_assert(SAMPLER_LEVELS == 4, "LEVELS_ADD names four accumulators");

static void levels_avx512(const float *p, int n, float *mass) {
    LEVELS_DECLARE;
    for (int i = 0; i < n; i += 16) {
        __m512 v = _mm512_maskz_loadu_ps(tail_mask(i, n), p + i);
        LEVELS_ADD(v);
    }
    LEVELS_OUT(mass);
}

static void scale_avx512(float *p, int n, float r, float *mass) {
    __m512 vr = _mm512_set1_ps(r);
    if (!mass) {
        for (int i = 0; i < n; i += 16) {
            __mmask16 k = tail_mask(i, n);
            _mm512_mask_storeu_ps(p + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, p + i), vr));
        }
        return;
    }
    LEVELS_DECLARE;
    for (int i = 0; i < n; i += 16) {
        __mmask16 k = tail_mask(i, n);
        __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, p + i), vr);
        _mm512_mask_storeu_ps(p + i, k, v);
        LEVELS_ADD(v);
    }
    LEVELS_OUT(mass);
}

/* ids of the elements with key in [lo, hi), in index order; with below, also the index of the largest
 * element whose key is < lo (lowest index on ties; -1 if none) */
static inline int collect_range(uint32_t *ids, const float *p, int n, uint32_t lo, uint32_t hi, int *below) {
    __m512i vlo = _mm512_set1_epi32((int)lo), vhi = _mm512_set1_epi32((int)hi),
            sign = _mm512_set1_epi32(0x7fffffff);
    __m512i best = _mm512_set1_epi32(-1), at = _mm512_setzero_si512(); /* -1: no key yet (keys < 2^31) */
    __m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i step = _mm512_set1_epi32(16);
    int m = 0;
    for (int i = 0; i < n; i += 16) {
        __mmask16 k = tail_mask(i, n);
        __m512i key = _mm512_and_si512(_mm512_maskz_loadu_epi32(k, p + i), sign);
        __mmask16 in = _mm512_mask_cmpge_epu32_mask(k, key, vlo) & _mm512_cmplt_epu32_mask(key, vhi);
        if (in) {
            /* compress in a register and store all 16 lanes (ids has 16 spare entries): a compress
             * straight to memory is microcoded and slow on some cores (Zen 4) */
            _mm512_storeu_si512(ids + m, _mm512_maskz_compress_epi32(in, idx));
            m += __builtin_popcount(in);
        }
        if (below) { /* strictly greater (signed: -1 is below every key) keeps a lane's earliest index */
            __mmask16 up = _mm512_mask_cmpgt_epi32_mask(_mm512_mask_cmplt_epu32_mask(k, key, vlo), key, best);
            best = _mm512_mask_mov_epi32(best, up, key);
            at = _mm512_mask_mov_epi32(at, up, idx);
        }
        idx = _mm512_add_epi32(idx, step);
    }
    if (below) {
        int32_t kb[16], ib[16];
        _mm512_storeu_si512(kb, best);
        _mm512_storeu_si512(ib, at);
        int32_t rk = -1;
        *below = -1;
        for (int l = 0; l < 16; l++)
            if (kb[l] >= 0 && (kb[l] > rk || (kb[l] == rk && ib[l] < *below))) rk = kb[l], *below = ib[l];
    }
    return m;
}

static int collect_avx512(uint32_t *ids, const float *p, int n, uint32_t lo, uint32_t hi) {
    return collect_range(ids, p, n, lo, hi, NULL);
}

static int collect_top_avx512(uint32_t *ids, const float *p, int n, uint32_t t, int *below) {
    return collect_range(ids, p, n, t, 0x80000000u, below);
}

static int min_in_range_avx512(const float *p, int n, uint32_t lo, uint32_t hi) {
    __m512i vlo = _mm512_set1_epi32((int)lo), vhi = _mm512_set1_epi32((int)hi),
            sign = _mm512_set1_epi32(0x7fffffff);
    __m512i best = _mm512_set1_epi32(-1), at = _mm512_set1_epi32(-1); /* unsigned max: no key yet */
    __m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i step = _mm512_set1_epi32(16);
    for (int i = 0; i < n; i += 16) {
        __mmask16 k = tail_mask(i, n);
        __m512i key = _mm512_and_si512(_mm512_maskz_loadu_epi32(k, p + i), sign);
        __mmask16 in = _mm512_mask_cmpge_epu32_mask(k, key, vlo) & _mm512_cmplt_epu32_mask(key, vhi);
        /* <= keeps the latest index of a lane's minimum */
        __mmask16 down = _mm512_mask_cmple_epu32_mask(in, key, best);
        best = _mm512_mask_mov_epi32(best, down, key);
        at = _mm512_mask_mov_epi32(at, down, idx);
        idx = _mm512_add_epi32(idx, step);
    }
    uint32_t kb[16];
    int32_t ib[16];
    _mm512_storeu_si512(kb, best);
    _mm512_storeu_si512(ib, at);
    int res = -1;
    uint32_t rk = 0xffffffffu;
    for (int l = 0; l < 16; l++)
        if (ib[l] >= 0 && (kb[l] < rk || (kb[l] == rk && ib[l] > res))) rk = kb[l], res = ib[l];
    return res;
}

/* block sums in sampler_block_sum16's order: (p[j] + p[j+8]) in 8 double lanes, then halves */
static inline double block_sum16_avx512(__m512 v) {
    __m512d s =
        _mm512_add_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(v)),
                      _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
    __m256d t = _mm256_add_pd(_mm512_castpd512_pd256(s), _mm512_extractf64x4_pd(s, 1));
    __m128d u = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
    return _mm_cvtsd_f64(_mm_add_sd(u, _mm_unpackhi_pd(u, u)));
}

static double draw_total_avx512(const float *p, int n, int *last) {
    double total = 0;
    *last = -1;
    __m512 zero = _mm512_setzero_ps();
    for (int i = 0; i < n; i += 16) {
        __m512 v = _mm512_maskz_loadu_ps(tail_mask(i, n), p + i);
        __mmask16 pos = _mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ);
        if (!pos) continue; /* an all-zero block adds exactly 0 */
        *last = i + 31 - __builtin_clz((unsigned)pos);
        total += block_sum16_avx512(v);
    }
    return total;
}

static int draw_block_avx512(const float *p, int n, double target, double *before) {
    double c = 0;
    __m512 zero = _mm512_setzero_ps();
    for (int i = 0; i < n; i += 16) {
        __m512 v = _mm512_maskz_loadu_ps(tail_mask(i, n), p + i);
        if (!_mm512_cmp_ps_mask(v, zero, _CMP_NEQ_UQ)) continue;
        double next = c + block_sum16_avx512(v);
        if (next > target) {
            *before = c;
            return i / 16;
        }
        c = next;
    }
    return -1;
}

static void finish_avx512(float *out, const float *p, int n, uint32_t kc, int ic, float kf, double *total,
                          int *last) {
    __m512i vkc = _mm512_set1_epi32((int)kc), vic = _mm512_set1_epi32(ic),
            sign = _mm512_set1_epi32(0x7fffffff);
    __m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i step = _mm512_set1_epi32(16);
    __m512 vkf = _mm512_set1_ps(kf), zero = _mm512_setzero_ps();
    double sum = 0;
    int end = -1;
    for (int i = 0; i < n; i += 16) {
        __mmask16 k = tail_mask(i, n);
        __m512 v = _mm512_maskz_loadu_ps(k, p + i);
        __m512i key = _mm512_and_si512(_mm512_castps_si512(v), sign);
        __mmask16 kept = _mm512_cmpgt_epu32_mask(key, vkc) |
                         (_mm512_cmpeq_epi32_mask(key, vkc) & _mm512_cmple_epi32_mask(idx, vic));
        __m512 r = _mm512_maskz_div_ps(kept, v, vkf);
        _mm512_mask_storeu_ps(out + i, k, r);
        idx = _mm512_add_epi32(idx, step);
        if (!total) continue;
        __mmask16 pos = _mm512_cmp_ps_mask(r, zero, _CMP_GT_OQ); /* the draw's blocks, as draw_total */
        if (pos) {
            end = i + 31 - __builtin_clz((unsigned)pos);
            sum += block_sum16_avx512(r);
        }
    }
    if (total) *total = sum, *last = end;
}

const struct sampler_row_ops sampler_ops_avx512 = {
    scan_avx512,       find_avx512,       exp_sum_avx512,     scale_avx512,
    levels_avx512,     collect_avx512,    collect_top_avx512, min_in_range_avx512,
    draw_total_avx512, draw_block_avx512, finish_avx512,
};
