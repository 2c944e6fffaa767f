/* Top-p (nucleus) filter: the sort-based reference, written literally from DESIGN.md, and a fast path that
 * never sorts the whole vocabulary yet returns the same bits on every row.
 * Fast path: a histogram of the probabilities' top 11 bits (exponent + 3 mantissa bits) gives a threshold
 * bin whose lower-bound mass covers top_p; only tokens at or above it are collected (in id order) and radix
 * sorted, so the walk sees exactly the first candidates of the reference's sorted order, and its double
 * running sum is the reference's, step for step. Bins never split ties (equal values share a bin). If the
 * nucleus runs past the candidates the threshold is lowered and the next bins are appended. The
 * renormalizing sum is the reference's id-order double sum; when every kept value is a multiple of the
 * smallest kept value's ulp and the sum stays below 2^53 of those ulps, every partial sum is exact in any
 * order, so the sorted-order sum already equals it and the id-order pass is skipped.
 * Checked in tests/test_sampler_topp.c: fast == reference bitwise on seeded realistic, flat, tied, dyadic
 * and tiny rows, f32 and bf16. */
#include "kernels/sampler.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/sampler_simd.h"

#define HIST_SHIFT 20
#define HIST_BINS  2048 /* keys are < 2^31 */
#define HIST_COPIES 4   /* interleaved copies break the store-to-load chain on a crowded bin */
#define RADIX_BITS 8
#define RADIX_SIZE 256

struct topp_work {
    uint32_t *hist;  /* [HIST_COPIES][HIST_BINS] */
    uint32_t *radix; /* [4][RADIX_SIZE] */
    uint32_t *ids, *keys, *ids2, *keys2; /* [n] each */
};

size_t sampler_top_p_scratch_bytes(int n) {
    if (n < 1) n = 1;
    return 64 + sizeof(uint32_t) * (HIST_COPIES * HIST_BINS + 4 * RADIX_SIZE) + 4 * sizeof(uint32_t) * (size_t)n;
}

static struct topp_work work_layout(void *scratch, int n) {
    uint32_t *base = (uint32_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    struct topp_work w;
    w.hist = base;
    w.radix = w.hist + HIST_COPIES * HIST_BINS;
    w.ids = w.radix + 4 * RADIX_SIZE;
    w.keys = w.ids + n;
    w.ids2 = w.keys + n;
    w.keys2 = w.ids2 + n;
    return w;
}

/* ---- reference ---- */

struct prob_id {
    float p;
    uint32_t id;
};

static int cmp_prob_desc(const void *a, const void *b) {
    const struct prob_id *x = a, *y = b;
    if (x->p != y->p) return x->p > y->p ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

int sampler_top_p_ref(float *probs, int n, float top_p, void *scratch) {
    if (!(top_p < 1.0f)) return n; /* keeps all, probabilities unchanged */
    struct prob_id *s = (struct prob_id *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    uint8_t *keep = (uint8_t *)(s + n);
    for (int i = 0; i < n; i++) s[i] = (struct prob_id){probs[i], (uint32_t)i};
    qsort(s, (size_t)n, sizeof *s, cmp_prob_desc);
    /* PyTorch's cumsum(sorted) - sorted for f32: double running sum stored as f32, then an f32 subtraction */
    double cum = 0;
    int kept = 0;
    for (int k = 0; k < n; k++) {
        cum += s[k].p;
        float prefix = (float)cum - s[k].p;
        bool kk = k == 0 || prefix < top_p;
        keep[s[k].id] = kk;
        kept += kk;
    }
    double mass = 0;
    for (int i = 0; i < n; i++)
        if (keep[i]) mass += probs[i];
    float mass_f = (float)mass;
    for (int i = 0; i < n; i++) probs[i] = keep[i] ? probs[i] / mass_f : 0.0f;
    return kept;
}

/* ---- fast ---- */

/* Stable sort of (ids, keys)[m] by key descending: LSD radix on ~key, passes whose digit is constant
 * skipped; short runs by insertion. Result in (*ids, *keys), which may swap with the spare buffers. */
static void sort_candidates(uint32_t **ids, uint32_t **keys, uint32_t **ids2, uint32_t **keys2, int m,
                            uint32_t *count) {
    uint32_t *id = *ids, *k = *keys;
    if (m <= 32) {
        for (int i = 1; i < m; i++) {
            uint32_t ki = k[i], ii = id[i];
            int j = i - 1;
            while (j >= 0 && k[j] < ki) k[j + 1] = k[j], id[j + 1] = id[j], j--;
            k[j + 1] = ki, id[j + 1] = ii;
        }
        return;
    }
    memset(count, 0, sizeof(uint32_t) * 4 * RADIX_SIZE);
    for (int i = 0; i < m; i++) {
        uint32_t d = ~k[i];
        for (int b = 0; b < 4; b++) count[b * RADIX_SIZE + ((d >> (RADIX_BITS * b)) & 0xffu)]++;
    }
    uint32_t *id_out = *ids2, *k_out = *keys2;
    for (int b = 0; b < 4; b++) {
        uint32_t *c = count + b * RADIX_SIZE;
        int shift = RADIX_BITS * b;
        if (c[((~k[0]) >> shift) & 0xffu] == (uint32_t)m) continue; /* one digit value: order unchanged */
        uint32_t sum = 0;
        for (int d = 0; d < RADIX_SIZE; d++) {
            uint32_t t = c[d];
            c[d] = sum;
            sum += t;
        }
        for (int i = 0; i < m; i++) {
            uint32_t pos = c[((~k[i]) >> shift) & 0xffu]++;
            id_out[pos] = id[i];
            k_out[pos] = k[i];
        }
        uint32_t *t1 = id, *t2 = k;
        id = id_out, k = k_out, id_out = t1, k_out = t2;
    }
    *ids = id, *keys = k, *ids2 = id_out, *keys2 = k_out;
}

static void histogram(uint32_t *hist, const float *p, int n) {
    memset(hist, 0, sizeof(uint32_t) * HIST_COPIES * HIST_BINS);
    int i = 0;
    for (; i + HIST_COPIES <= n; i += HIST_COPIES)
        for (int c = 0; c < HIST_COPIES; c++) hist[c * HIST_BINS + (sampler_key(p[i + c]) >> HIST_SHIFT)]++;
    for (; i < n; i++) hist[sampler_key(p[i]) >> HIST_SHIFT]++;
    for (int b = 0; b < HIST_BINS; b++)
        for (int c = 1; c < HIST_COPIES; c++) hist[b] += hist[c * HIST_BINS + b];
}

static double bin_floor(int bin) {
    uint32_t u = (uint32_t)bin << HIST_SHIFT;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

int sampler_top_p_fast(float *probs, int n, float top_p, void *scratch) {
    if (!(top_p < 1.0f)) return n;
    const struct sampler_row_ops *ops = sampler_ops();
    struct topp_work w = work_layout(scratch, n);
    histogram(w.hist, probs, n);

    double run = 0, run_kept = 0, floor_mass = 0; /* running sum in sorted order; lower bound of taken mass */
    int kept = 0, taken = 0, hi = HIST_BINS, ic = 0;
    uint32_t kc = 0;
    bool cut = false;
    while (!cut && hi > 0) {
        /* lower the threshold: until the bins' floor mass covers top_p, at least one more nonempty bin,
         * and (after a run-past) at least as many new tokens as already taken, so rounds stay O(log n) */
        int lo = hi, fresh = 0;
        while (lo > 0) {
            lo--;
            uint32_t c = w.hist[lo];
            fresh += (int)c;
            floor_mass += c * bin_floor(lo);
            if (fresh > 0 && floor_mass >= top_p && fresh >= taken) break;
        }
        if (fresh == 0) break;
        uint32_t hi_key = hi == HIST_BINS ? 0x80000000u : (uint32_t)hi << HIST_SHIFT;
        int m = ops->collect(w.ids, probs, n, (uint32_t)lo << HIST_SHIFT, hi_key);
        for (int j = 0; j < m; j++) w.keys[j] = sampler_key(probs[w.ids[j]]);
        uint32_t *ids = w.ids, *keys = w.keys, *ids2 = w.ids2, *keys2 = w.keys2;
        sort_candidates(&ids, &keys, &ids2, &keys2, m, w.radix);
        /* the reference's walk, continued: same terms, same order */
        for (int j = 0; j < m; j++) {
            float pj = probs[ids[j]];
            run += pj;
            float prefix = (float)run - pj;
            if (kept > 0 && !(prefix < top_p)) {
                cut = true; /* prefixes never decrease along the sorted order: all later ones drop too */
                break;
            }
            kept++;
            kc = keys[j], ic = (int)ids[j];
            run_kept = run;
        }
        taken += m;
        hi = lo;
    }

    /* kept mass in id order; exact (so order-free) when run_kept < 2^53 ulps of the smallest kept value */
    int exp_bits = (int)(kc >> 23);
    double ulp = exp_bits == 0 ? 0x1p-149 : ldexp(1.0, exp_bits - 150);
    double mass = run_kept;
    if (!(run_kept < 0x1p53 * ulp)) {
        mass = 0;
        for (int i = 0; i < n; i++) {
            uint32_t k = sampler_key(probs[i]);
            if (k > kc || (k == kc && i <= ic)) mass += probs[i];
        }
    }
    ops->finish(probs, n, kc, ic, (float)mass);
    return kept;
}
