/* The sampler's vector row passes (the table of sampler_simd.h), written once over 16-lane primitives and
 * included by sampler_avx2.c (each 16-lane value a pair of 8-lane registers) and sampler_avx512.c (one
 * register), after they define the primitives; it defines static functions and one table there. Each pass
 * does sampler_scalar.c's operations in the same order, lane i of a block being token 16 b + i, so every
 * instruction set gives the same bits (no FMA: the scalar path has none). The primitives: types sv (16 f32),
 * svi (16 i32), svm (mask), sd16 (16 double sums), sl (an f32 accumulator of level masses, a guide, so its
 * lanes are the ISA's own); sv_* arithmetic and compares (ordered), sv_keep (zero outside a mask), sv_round
 * (nearest even, |x| < 2^22), sv_exp2_scale (y * 2^n rounded once, 0 outside a mask; _normal: n >= -126 and a
 * normal result, one exact multiply), sv_bad (NaN or +inf), sv_keys (bits without the sign), sv_block_sum16
 * (sampler_block_sum16's tree, in double); svi_compress (the mask's lanes in lane order to dst, may write 16,
 * returns the count), svi_blend (b where set), svm_bits (bit i = lane i), sd16_add (lane i += (double)v[i]),
 * sl_add_where (+= v's lanes in a mask); SFN(name) (the ISA-suffixed name), SOPS_TABLE (the table). */
#include <math.h>
#include <string.h>

#include "kernels/sampler_simd.h"

#define SB_INLINE static inline __attribute__((always_inline))

/* ---- loads: full blocks straight from the row, the last partial block through a padded copy ---- */

SB_INLINE sv row_load(const void *row, const int bf16, int i) {
    return bf16 ? sv_load_bf16((const uint16_t *)row + i) : sv_load((const float *)row + i);
}

static sv row_load_tail(const void *row, int bf16, int i, int n, float fill) {
    float t[16];
    for (int j = 0; j < 16; j++)
        t[j] = i + j >= n ? fill
               : bf16     ? bf16_to_f32(((const uint16_t *)row)[i + j])
                          : ((const float *)row)[i + j];
    return sv_load(t);
}

static void store_tail(float *dst, int i, int n, sv v) {
    float t[16];
    sv_store(t, v);
    memcpy(dst + i, t, sizeof(float) * (size_t)(n - i));
}

/* lanes of the block at i that lie below n */
SB_INLINE svm tail_live(int i, int n) {
    return svi_gt(svi_set1(n - i), svi_iota());
}

/* keys in [lo, hi), hi <= 2^31 (keys are < 2^31: signed compares order them) */
SB_INLINE svm keys_in(svi key, uint32_t lo, uint32_t hi) {
    svm under = svi_gt(svi_set1((int32_t)lo), key), over = svi_gt(key, svi_set1((int32_t)(hi - 1)));
    return svm_andnot(svm_or(under, over), svm_all());
}

/* ---- scan: max and bad values ---- */

SB_INLINE void scan_block(sv v, sv *m, svm *bad) {
    *bad = svm_or(*bad, sv_bad(v));
    *m = sv_max(*m, v);
}

SB_INLINE bool scan_t(const void *row, const int bf16, int n, float *max) {
    sv m = sv_set1(-INFINITY);
    svm bad = svm_none();
    int i = 0;
    for (; i + 16 <= n; i += 16) scan_block(row_load(row, bf16, i), &m, &bad);
    if (i < n) scan_block(row_load_tail(row, bf16, i, n, -INFINITY), &m, &bad);
    *max = sv_reduce_max(m); /* max is exact in any order */
    return svm_bits(bad) != 0;
}

static bool SFN(scan)(const void *row, enum fr_dtype dtype, int n, float *max) {
    return dtype == FR_DTYPE_BF16 ? scan_t(row, 1, n, max) : scan_t(row, 0, n, max);
}

/* ---- argmax: per lane the largest value and its first index, then across lanes ---- */

SB_INLINE void argmax_block(sv v, svi idx, sv *best, svi *at, svm *bad) {
    *bad = svm_or(*bad, sv_bad(v));
    svm up = sv_cmp_gt(v, *best); /* strictly: a lane keeps its first index of its max */
    *best = sv_max(*best, v);
    *at = svi_blend(*at, idx, up);
}

SB_INLINE bool argmax_t(const void *row, const int bf16, int n, int *index) {
    sv best = sv_set1(-INFINITY);
    svi at = svi_set1(n - 1), idx = svi_iota(), step = svi_set1(16);
    svm bad = svm_none();
    int i = 0;
    for (; i + 16 <= n; i += 16, idx = svi_add(idx, step))
        argmax_block(row_load(row, bf16, i), idx, &best, &at, &bad);
    if (i < n) argmax_block(row_load_tail(row, bf16, i, n, -INFINITY), idx, &best, &at, &bad);
    float b[16];
    int32_t a[16];
    sv_store(b, best);
    svi_store(a, at);
    float m = sv_reduce_max(best);
    int res = n - 1;
    for (int l = 0; l < 16; l++)
        if (b[l] == m && a[l] < res) res = a[l];
    *index = res;
    return svm_bits(bad) != 0;
}

static bool SFN(argmax)(const void *row, enum fr_dtype dtype, int n, int *index) {
    return dtype == FR_DTYPE_BF16 ? argmax_t(row, 1, n, index) : argmax_t(row, 0, n, index);
}

/* ---- the softmax's exp and sum ---- */

/* Above this every lane of a block is normal after scaling: n = round(x log2 e) >= -124, and y >= 0.7, so
 * y * 2^n >= 2^-125 is exact in one multiply by a normal 2^n, and no lane is below SAMPLER_EXP_LO. */
#define SAMPLER_EXP_NORMAL_LO (-86.0f)

/* sampler_exp on 16 lanes of K blocks at once, step by step across the blocks: the polynomial is one long
 * dependent chain, so independent chains side by side keep the vector units busy. With normal (every lane
 * >= SAMPLER_EXP_NORMAL_LO), the clamp, the live mask and the two-step scaling are left out: the same
 * bits, since each of them is then exact or does nothing. */
SB_INLINE void expk(sv *x, const int k, const int normal) {
    svm live[2];
    sv n[2], r[2], z[2], y[2];
    for (int q = 0; q < k && !normal; q++) live[q] = sv_cmp_ge(x[q], sv_set1(SAMPLER_EXP_LO));
    for (int q = 0; q < k && !normal; q++)
        x[q] = sv_max(x[q], sv_set1(SAMPLER_EXP_LO)); /* dead lanes (-inf) finite */
    for (int q = 0; q < k; q++) n[q] = sv_round(sv_mul(x[q], sv_set1(SAMPLER_LOG2E)));
    for (int q = 0; q < k; q++) r[q] = sv_sub(x[q], sv_mul(n[q], sv_set1(SAMPLER_LN2_HI)));
    for (int q = 0; q < k; q++) r[q] = sv_sub(r[q], sv_mul(n[q], sv_set1(SAMPLER_LN2_LO)));
    for (int q = 0; q < k; q++) z[q] = sv_mul(r[q], r[q]);
    for (int q = 0; q < k; q++) y[q] = sv_add(sv_mul(sv_set1(SAMPLER_EXP_P0), r[q]), sv_set1(SAMPLER_EXP_P1));
    for (int q = 0; q < k; q++) y[q] = sv_add(sv_mul(y[q], r[q]), sv_set1(SAMPLER_EXP_P2));
    for (int q = 0; q < k; q++) y[q] = sv_add(sv_mul(y[q], r[q]), sv_set1(SAMPLER_EXP_P3));
    for (int q = 0; q < k; q++) y[q] = sv_add(sv_mul(y[q], r[q]), sv_set1(SAMPLER_EXP_P4));
    for (int q = 0; q < k; q++) y[q] = sv_add(sv_mul(y[q], r[q]), sv_set1(SAMPLER_EXP_P5));
    for (int q = 0; q < k; q++) y[q] = sv_add(sv_mul(y[q], z[q]), r[q]);
    for (int q = 0; q < k; q++) y[q] = sv_add(y[q], sv_set1(1.0f));
    for (int q = 0; q < k; q++)
        x[q] = normal ? sv_exp2_scale_normal(y[q], n[q]) : sv_exp2_scale(y[q], n[q], live[q]);
}

/* two blocks: the short form when every lane allows it */
SB_INLINE void exp32(sv *v) {
    const sv lo = sv_set1(SAMPLER_EXP_NORMAL_LO);
    if (svm_bits(svm_and(sv_cmp_ge(v[0], lo), sv_cmp_ge(v[1], lo))) == 0xffffu)
        expk(v, 2, 1);
    else
        expk(v, 2, 0);
}

SB_INLINE sv exp16(sv x) {
    expk(&x, 1, 0);
    return x;
}

/* the level masses: lv[j] += v where v's key >= SAMPLER_LEVEL_KEY(j) */
SB_INLINE void levels_add(sl *lv, sv v) {
    svi key = sv_keys(v);
#pragma GCC unroll 4
    for (int j = 0; j < SAMPLER_LEVELS; j++)
        lv[j] = sl_add_where(lv[j], v, svi_gt(key, svi_set1((int32_t)SAMPLER_LEVEL_KEY(j) - 1)));
}

SB_INLINE void levels_out(const sl *lv, float *mass) {
    for (int j = 0; j < SAMPLER_LEVELS; j++) mass[j] = sl_reduce(lv[j]);
}

SB_INLINE void exp_sum_t(float *e, const void *row, const int bf16, int n, float m, float t, double *acc,
                         float *mass, const int with_levels) {
    sv vm = sv_set1(m), vt = sv_set1(t);
    sl lv[SAMPLER_LEVELS];
    for (int j = 0; j < SAMPLER_LEVELS; j++) lv[j] = sl_zero();
    sd16 a = sd16_load(acc);
    int i = 0;
    for (; i + 32 <= n; i += 32) { /* two blocks a step; each added to the sums in index order */
        sv v[2] = {sv_div(sv_sub(row_load(row, bf16, i), vm), vt),
                   sv_div(sv_sub(row_load(row, bf16, i + 16), vm), vt)};
        exp32(v);
        for (int q = 0; q < 2; q++) {
            sv_store(e + i + 16 * q, v[q]);
            sd16_add(&a, v[q]);
            if (with_levels) levels_add(lv, v[q]);
        }
    }
    for (; i < n; i += 16) { /* the tail fills with m: exp(0) in the dead lanes, zeroed before use */
        sv v = i + 16 <= n ? row_load(row, bf16, i) : row_load_tail(row, bf16, i, n, m);
        v = exp16(sv_div(sv_sub(v, vm), vt));
        if (i + 16 > n) v = sv_keep(v, tail_live(i, n));
        if (i + 16 <= n)
            sv_store(e + i, v);
        else
            store_tail(e, i, n, v);
        sd16_add(&a, v);
        if (with_levels) levels_add(lv, v);
    }
    sd16_store(acc, a);
    if (with_levels) levels_out(lv, mass);
}

static void SFN(exp_sum)(float *e, const void *row, enum fr_dtype dtype, int n, float m, float t, double *acc,
                         float *mass) {
    if (dtype == FR_DTYPE_BF16)
        mass ? exp_sum_t(e, row, 1, n, m, t, acc, mass, 1) : exp_sum_t(e, row, 1, n, m, t, acc, mass, 0);
    else
        mass ? exp_sum_t(e, row, 0, n, m, t, acc, mass, 1) : exp_sum_t(e, row, 0, n, m, t, acc, mass, 0);
}

static void SFN(exp)(float *y, const float *x, int n) {
    int i = 0;
    for (; i + 32 <= n; i += 32) { /* two blocks a step, as exp_sum */
        sv v[2] = {sv_load(x + i), sv_load(x + i + 16)};
        exp32(v);
        sv_store(y + i, v[0]);
        sv_store(y + i + 16, v[1]);
    }
    for (; i < n; i += 16) {
        sv v = exp16(i + 16 <= n ? sv_load(x + i) : row_load_tail(x, 0, i, n, 0.0f));
        if (i + 16 <= n)
            sv_store(y + i, v);
        else
            store_tail(y, i, n, v);
    }
}

static void SFN(scale)(float *p, int n, float r) {
    sv vr = sv_set1(r);
    int i = 0;
    for (; i + 16 <= n; i += 16) sv_store(p + i, sv_mul(sv_load(p + i), vr));
    if (i < n) store_tail(p, i, n, sv_mul(row_load_tail(p, 0, i, n, 0.0f), vr));
}

static void SFN(levels)(const float *p, int n, float *mass) {
    sl lv[SAMPLER_LEVELS];
    for (int j = 0; j < SAMPLER_LEVELS; j++) lv[j] = sl_zero();
    int i = 0;
    for (; i + 16 <= n; i += 16) levels_add(lv, sv_load(p + i));
    if (i < n) levels_add(lv, row_load_tail(p, 0, i, n, 0.0f));
    levels_out(lv, mass);
}

/* ---- collecting ids by key ---- */

/* ids (and with keys, the keys) of the block's keys in [lo, hi) (lanes in live); with below, the largest key
 * < lo per lane (strictly greater: a lane keeps its earliest index; best starts at -1, below every key) */
SB_INLINE int collect_block(uint32_t *ids, uint32_t *keys, int m, sv v, svi idx, svm live, uint32_t lo,
                            uint32_t hi, svi *best, svi *at, const int with_below) {
    svi key = sv_keys(v);
    svm in = svm_and(live, keys_in(key, lo, hi));
    if (svm_bits(in)) {
        if (keys) svi_compress(keys + m, in, key);
        m += svi_compress(ids + m, in, idx);
    }
    if (with_below) {
        svm up = svm_and(svm_and(live, svi_gt(svi_set1((int32_t)lo), key)), svi_gt(key, *best));
        *best = svi_blend(*best, key, up);
        *at = svi_blend(*at, idx, up);
    }
    return m;
}

SB_INLINE int below_out(svi best, svi at) {
    int32_t kb[16], ib[16], rk = -1, res = -1;
    svi_store(kb, best);
    svi_store(ib, at);
    for (int l = 0; l < 16; l++)
        if (kb[l] >= 0 && (kb[l] > rk || (kb[l] == rk && ib[l] < res))) rk = kb[l], res = ib[l];
    return res;
}

SB_INLINE int collect_t(uint32_t *ids, uint32_t *keys, const float *p, float *scaled, float r, int n,
                        uint32_t lo, uint32_t hi, int *below, const int with_scale, const int with_below) {
    svi best = svi_set1(-1), at = svi_set1(-1), idx = svi_iota(), step = svi_set1(16);
    sv vr = sv_set1(r);
    int m = 0, i = 0;
    for (; i + 16 <= n; i += 16, idx = svi_add(idx, step)) {
        sv v = sv_load(p + i);
        if (with_scale) v = sv_mul(v, vr), sv_store(scaled + i, v);
        m = collect_block(ids, keys, m, v, idx, svm_all(), lo, hi, &best, &at, with_below);
    }
    if (i < n) {
        sv v = row_load_tail(p, 0, i, n, 0.0f);
        if (with_scale) v = sv_mul(v, vr), store_tail(scaled, i, n, v);
        m = collect_block(ids, keys, m, v, idx, tail_live(i, n), lo, hi, &best, &at, with_below);
    }
    if (with_below) *below = below_out(best, at);
    return m;
}

static int SFN(collect)(uint32_t *ids, uint32_t *keys, const float *p, int n, uint32_t lo, uint32_t hi) {
    return keys ? collect_t(ids, keys, p, NULL, 1.0f, n, lo, hi, NULL, 0, 0)
                : collect_t(ids, NULL, p, NULL, 1.0f, n, lo, hi, NULL, 0, 0);
}

static int SFN(collect_top)(uint32_t *ids, const float *p, float *scaled, float r, int n, uint32_t t,
                            int *below) {
    return scaled ? collect_t(ids, NULL, p, scaled, r, n, t, 0x80000000u, below, 1, 1)
                  : collect_t(ids, NULL, p, NULL, r, n, t, 0x80000000u, below, 0, 1);
}

static int SFN(select_keys)(uint32_t *ids_out, uint32_t *keys_out, const uint32_t *ids, const uint32_t *keys,
                            int n, uint32_t lo, uint32_t hi) {
    int m = 0, i = 0;
    for (; i + 16 <= n; i += 16) {
        svi key = svi_load(keys + i);
        svm in = keys_in(key, lo, hi);
        if (svm_bits(in)) {
            svi_compress(keys_out + m, in, key);
            m += svi_compress(ids_out + m, in, svi_load(ids + i));
        }
    }
    for (; i < n; i++) {
        ids_out[m] = ids[i], keys_out[m] = keys[i];
        m += (keys[i] >= lo) & (keys[i] < hi);
    }
    return m;
}

/* per lane the smallest key in [lo, hi) and its latest index (<=), then across lanes */
SB_INLINE void min_block(sv v, svi idx, svm live, uint32_t lo, uint32_t hi, svi *best, svi *at) {
    svi key = sv_keys(v);
    svm down = svm_andnot(svi_gt(key, *best), svm_and(live, keys_in(key, lo, hi)));
    *best = svi_blend(*best, key, down);
    *at = svi_blend(*at, idx, down);
}

static int SFN(min_in_range)(const float *p, int n, uint32_t lo, uint32_t hi) {
    svi best = svi_set1(0x7fffffff), at = svi_set1(-1), idx = svi_iota(), step = svi_set1(16);
    int i = 0;
    for (; i + 16 <= n; i += 16, idx = svi_add(idx, step))
        min_block(sv_load(p + i), idx, svm_all(), lo, hi, &best, &at);
    if (i < n) min_block(row_load_tail(p, 0, i, n, 0.0f), idx, tail_live(i, n), lo, hi, &best, &at);
    int32_t kb[16], ib[16], rk = 0x7fffffff;
    svi_store(kb, best);
    svi_store(ib, at);
    int res = -1;
    for (int l = 0; l < 16; l++)
        if (ib[l] >= 0 && (kb[l] < rk || (kb[l] == rk && ib[l] > res))) rk = kb[l], res = ib[l];
    return res;
}

/* ---- the draw's CDF ---- */

/* positive lanes of v as bits; if any, the block's sum is added and *last moved to the last of them */
SB_INLINE double draw_block_sum(sv v, int i, double *total, int *last) {
    unsigned pos = svm_bits(sv_cmp_gt(v, sv_set1(0.0f)));
    if (!pos) return 0.0; /* an all-zero block adds exactly 0 */
    *last = i + 31 - __builtin_clz(pos);
    double s = sv_block_sum16(v);
    *total += s;
    return s;
}

static double SFN(draw_total)(const float *p, int n, int *last) {
    double total = 0;
    *last = -1;
    int i = 0;
    for (; i + 16 <= n; i += 16) draw_block_sum(sv_load(p + i), i, &total, last);
    if (i < n) draw_block_sum(row_load_tail(p, 0, i, n, 0.0f), i, &total, last);
    return total;
}

static int SFN(draw_block)(const float *p, int n, double target, double *before) {
    double c = 0;
    for (int i = 0; i < n; i += 16) {
        sv v = i + 16 <= n ? sv_load(p + i) : row_load_tail(p, 0, i, n, 0.0f);
        if (svm_bits(sv_cmp_eq(v, sv_set1(0.0f))) == 0xffffu) continue; /* adds exactly 0 */
        double next = c + sv_block_sum16(v);
        if (next > target) {
            *before = c;
            return i / 16;
        }
        c = next;
    }
    return -1;
}

/* ---- the filter's last pass ---- */

SB_INLINE sv finish_block(sv v, svi idx, uint32_t kc, int ic, sv vkf) {
    svi key = sv_keys(v), vkc = svi_set1((int32_t)kc);
    svm tie = svm_andnot(svi_gt(idx, svi_set1(ic)), svi_eq(key, vkc));
    svm kept = svm_or(svi_gt(key, vkc), tie);
    if (!svm_bits(kept)) return sv_set1(0.0f); /* no division for a block that keeps nothing */
    return sv_keep(sv_div(v, vkf), kept);
}

SB_INLINE void finish_t(float *out, const float *p, int n, uint32_t kc, int ic, float kf, double *blocks,
                        double *total, int *last, const int with_blocks) {
    sv vkf = sv_set1(kf);
    svi idx = svi_iota(), step = svi_set1(16);
    double sum = 0;
    int end = -1, i = 0;
    for (; i + 16 <= n; i += 16, idx = svi_add(idx, step)) {
        sv r = finish_block(sv_load(p + i), idx, kc, ic, vkf);
        sv_store(out + i, r);
        if (with_blocks) blocks[i / 16] = draw_block_sum(r, i, &sum, &end);
    }
    if (i < n) { /* padding lanes: index >= n > ic and value 0, never kept */
        sv r = finish_block(row_load_tail(p, 0, i, n, 0.0f), idx, kc, ic, vkf);
        store_tail(out, i, n, r);
        if (with_blocks) blocks[i / 16] = draw_block_sum(r, i, &sum, &end);
    }
    if (with_blocks) *total = sum, *last = end;
}

static void SFN(finish)(float *out, const float *p, int n, uint32_t kc, int ic, float kf, double *blocks,
                        double *total, int *last) {
    if (blocks)
        finish_t(out, p, n, kc, ic, kf, blocks, total, last, 1);
    else
        finish_t(out, p, n, kc, ic, kf, NULL, NULL, NULL, 0);
}

/* ---- the top-p filter's bins ---- */

/* Vectors between two flushes of the hot bins' lane sums: a lane adds below 2^20 a vector, so 4095 of them
 * stay below 2^32. */
#define BIN_SUMS_FLUSH 4095

SB_INLINE void bin_sums_one(uint32_t k, uint64_t *count, uint64_t *low) {
    count[k >> 20]++, low[k >> 20] += k & 0xfffffu;
}

/* Adds the hot bins' lane sums into low and clears them. */
SB_INLINE void bin_sums_flush(svi *lows, const int *hot, uint64_t *low) {
    for (int j = 0; j < SAMPLER_HOT_BINS; j++) {
        int32_t l[16];
        svi_store(l, lows[j]);
        for (int q = 0; q < 16 && hot[j] >= 0; q++) low[hot[j]] += (uint32_t)l[q];
        lows[j] = svi_set1(0);
    }
}

/* The hot bins' counts are popcounts of their masks, their low bits lane sums. Counts in lanes too spilled
 * AVX2's 16 registers and ran slower (docs/tuning/sampler.md, "Hot bins"). */
static void SFN(bin_sums)(const float *p, int n, const int *hot, uint64_t *count, uint64_t *low) {
    svi bin[SAMPLER_HOT_BINS], lows[SAMPLER_HOT_BINS];
    uint64_t hot_count[SAMPLER_HOT_BINS] = {0};
    for (int j = 0; j < SAMPLER_HOT_BINS; j++) bin[j] = svi_set1(hot[j]), lows[j] = svi_set1(0);
    const svi low_bits = svi_set1(0xfffff);
    int i = 0, since = 0;
    for (; i + 16 <= n; i += 16) {
        svi key = sv_keys(sv_load(p + i)), b = svi_shr20(key), l = svi_and(key, low_bits);
        svm any = svm_none();
        for (int j = 0; j < SAMPLER_HOT_BINS; j++) {
            svm in = svi_eq(b, bin[j]);
            hot_count[j] += (uint64_t)__builtin_popcount(svm_bits(in));
            lows[j] = svi_add_where(lows[j], l, in);
            any = svm_or(any, in);
        }
        for (unsigned rest = ~svm_bits(any) & 0xffffu; rest; rest &= rest - 1)
            bin_sums_one(sampler_key(p[i + __builtin_ctz(rest)]), count, low);
        if (++since == BIN_SUMS_FLUSH) bin_sums_flush(lows, hot, low), since = 0;
    }
    for (; i < n; i++) bin_sums_one(sampler_key(p[i]), count, low);
    bin_sums_flush(lows, hot, low);
    for (int j = 0; j < SAMPLER_HOT_BINS; j++)
        if (hot[j] >= 0) count[hot[j]] += hot_count[j];
}

const struct sampler_row_ops SOPS_TABLE = {
    .scan = SFN(scan),
    .argmax = SFN(argmax),
    .exp_sum = SFN(exp_sum),
    .exp = SFN(exp),
    .scale = SFN(scale),
    .levels = SFN(levels),
    .collect = SFN(collect),
    .collect_top = SFN(collect_top),
    .select_keys = SFN(select_keys),
    .min_in_range = SFN(min_in_range),
    .draw_total = SFN(draw_total),
    .draw_block = SFN(draw_block),
    .finish = SFN(finish),
    .bin_sums = SFN(bin_sums),
};
