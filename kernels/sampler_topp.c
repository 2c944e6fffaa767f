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

#define BIN_SHIFT   20   /* bin = key >> 20: exponent and 3 mantissa bits, 2^(1/8) wide */
#define BINS        2048 /* keys are < 2^31 */
#define COPIES      4    /* interleaved histograms break the store-to-load chain on a crowded bin */
#define COUNT_SHIFT 40   /* histogram word: count << 40 | sum of key bits 8..19 (a mass floor) */
#define MAX_FAST_N  (1 << 24)
#define SUB_BITS    10 /* within a bin, the low 20 key bits sort in two 10-bit passes */
#define SUB_SIZE    1024
#define SMALL_BIN   4096 /* a bin this small is cheap to take along */

struct topp_work {
    uint64_t *hist;   /* [COPIES][BINS] */
    uint32_t *start;  /* [BINS] offset of each candidate bin */
    uint32_t *radix;  /* [2][SUB_SIZE] */
    uint32_t *region;             /* [n + 16] region-1 candidates in id order */
    uint32_t *ids, *keys;         /* [n + 16] one round's candidates (id order), then sort temporaries */
    uint32_t *seg_ids, *seg_keys; /* [n] candidates grouped by bin, high bins first */
};

size_t sampler_top_p_scratch_bytes(int n) {
    if (n < 1) n = 1;
    return 64 + sizeof(uint64_t) * COPIES * BINS + sizeof(uint32_t) * (BINS + 2 * SUB_SIZE) +
           5 * sizeof(uint32_t) * ((size_t)n + 16);
}

static struct topp_work work_layout(void *scratch, int n) {
    struct topp_work w;
    w.hist = (uint64_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    w.start = (uint32_t *)(w.hist + COPIES * BINS);
    w.radix = w.start + BINS;
    w.region = w.radix + 2 * SUB_SIZE;
    w.ids = w.region + n + 16;
    w.keys = w.ids + n + 16;
    w.seg_ids = w.keys + n + 16;
    w.seg_keys = w.seg_ids + n + 16;
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
    return sampler_top_p_ref_into(probs, probs, n, top_p, scratch);
}

int sampler_top_p_ref_into(float *out, const float *probs, int n, float top_p, void *scratch) {
    if (!(top_p < 1.0f)) { /* keeps all, probabilities unchanged */
        if (out != probs) memcpy(out, probs, sizeof(float) * (size_t)n);
        return n;
    }
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
    for (int i = 0; i < n; i++) out[i] = keep[i] ? probs[i] / mass_f : 0.0f;
    return kept;
}

/* ---- fast ---- */

/* Stable sort of one bin's (id, key)[m] by key descending. All keys share their top 11 bits, so an LSD
 * radix over the low 20 bits of ~key suffices; passes whose digit is constant are skipped, short bins go
 * by insertion. tid / tk are temporaries of m entries. */
static void sort_bin(uint32_t *id, uint32_t *k, uint32_t *tid, uint32_t *tk, int m, uint32_t *count) {
    if (m <= 32) {
        for (int i = 1; i < m; i++) {
            uint32_t ki = k[i], ii = id[i];
            int j = i - 1;
            while (j >= 0 && k[j] < ki) k[j + 1] = k[j], id[j + 1] = id[j], j--;
            k[j + 1] = ki, id[j + 1] = ii;
        }
        return;
    }
    memset(count, 0, sizeof(uint32_t) * 2 * SUB_SIZE);
    for (int i = 0; i < m; i++) {
        uint32_t d = ~k[i];
        count[d & (SUB_SIZE - 1)]++;
        count[SUB_SIZE + ((d >> SUB_BITS) & (SUB_SIZE - 1))]++;
    }
    uint32_t *sid = id, *sk = k, *did = tid, *dk = tk;
    for (int pass = 0; pass < 2; pass++) {
        uint32_t *c = count + pass * SUB_SIZE;
        int shift = pass * SUB_BITS;
        if (c[((~sk[0]) >> shift) & (SUB_SIZE - 1)] == (uint32_t)m) continue; /* constant digit */
        uint32_t sum = 0;
        for (int d = 0; d < SUB_SIZE; d++) {
            uint32_t t = c[d];
            c[d] = sum;
            sum += t;
        }
        for (int i = 0; i < m; i++) {
            uint32_t pos = c[((~sk[i]) >> shift) & (SUB_SIZE - 1)]++;
            did[pos] = sid[i];
            dk[pos] = sk[i];
        }
        uint32_t *t1 = sid, *t2 = sk;
        sid = did, sk = dk, did = t1, dk = t2;
    }
    if (sid != id) {
        memcpy(id, sid, sizeof(uint32_t) * (size_t)m);
        memcpy(k, sk, sizeof(uint32_t) * (size_t)m);
    }
}

/* Adds the keys of p[ids[0..m)] (ids NULL: every i < n whose key is < below) to the histogram. */
static void histogram_add(uint64_t *hist, const float *p, const uint32_t *ids, int m, uint32_t below) {
    const uint64_t one = (uint64_t)1 << COUNT_SHIFT;
    memset(hist + BINS, 0, sizeof(uint64_t) * (COPIES - 1) * BINS);
    int i = 0;
    for (; i + COPIES <= m; i += COPIES)
        for (int c = 0; c < COPIES; c++) {
            uint32_t k = sampler_key(p[ids ? ids[i + c] : (uint32_t)(i + c)]);
            if (!ids && k >= below) continue;
            hist[c * BINS + (k >> BIN_SHIFT)] += one + ((k >> 8) & 0xfffu);
        }
    for (; i < m; i++) {
        uint32_t k = sampler_key(p[ids ? ids[i] : (uint32_t)i]);
        if (!ids && k >= below) continue;
        hist[k >> BIN_SHIFT] += one + ((k >> 8) & 0xfffu);
    }
    for (int b = 0; b < BINS; b++)
        for (int c = 1; c < COPIES; c++) hist[b] += hist[c * BINS + b];
}

static inline uint32_t bin_count(const uint64_t *hist, int b) { return (uint32_t)(hist[b] >> COUNT_SHIFT); }

/* A lower bound on the bin's mass, within 2^-15 of it: the dropped key bits 0..7 weigh < 2^8 ulps each. */
static double bin_mass_floor(const uint64_t *hist, int b) {
    double count = (double)(hist[b] >> COUNT_SHIFT);
    double bits = (double)(hist[b] & (((uint64_t)1 << COUNT_SHIFT) - 1));
    int e = b >> 3, lead = (e ? 8 : 0) + (b & 7); /* implicit bit + the 3 mantissa bits of the bin */
    return ldexp(count * lead * 1048576.0 + bits * 256.0, (e ? e : 1) - 150);
}

/* ulp of the smallest value a bin can hold: every value in the bin and above is a multiple of it */
static double bin_ulp(int b) { return ldexp(1.0, ((b >> 3) ? (b >> 3) : 1) - 150); }

/* would the next token in sorted order, of probability v, be dropped? (the reference's prefix test) */
static inline bool drops(double run, float v, float top_p) { return !((float)(run + v) - v < top_p); }

struct walk {
    double run, run_kept; /* the reference's double running sum: through the last visited / kept token */
    int kept, ic;         /* nucleus size; the last kept token's id */
    uint32_t kc;          /* and key */
    bool cut;             /* the first dropped token was found */
};

/* One bin's candidates (id order) in the reference's walk. If every running sum stays exact (all values
 * are multiples of the bin's ulp and the sum stays below 2^53 of them), the order inside the bin cannot
 * change any sum, so a bin whose smallest token is kept is taken whole without sorting it. */
static void walk_bin(struct walk *wk, const float *probs, uint32_t *sid, uint32_t *sk, int c, int b, float top_p,
                     struct topp_work *w) {
    if (wk->kept > 0) { /* the bin's largest token comes next: if it drops, nothing here is kept */
        uint32_t top = 0;
        for (int j = 0; j < c; j++) top = sk[j] > top ? sk[j] : top;
        float v;
        memcpy(&v, &top, sizeof v);
        if (drops(wk->run, v, top_p)) {
            wk->cut = true;
            return;
        }
    }
    if (c > 32) {
        double part[4] = {0, 0, 0, 0};
        uint32_t low = 0xffffffffu;
        int low_id = 0;
        for (int j = 0; j < c; j++) {
            part[j & 3] += probs[sid[j]];
            if (sk[j] <= low) low = sk[j], low_id = (int)sid[j]; /* last in id order among the smallest */
        }
        double whole = wk->run + ((part[0] + part[1]) + (part[2] + part[3]));
        float v;
        memcpy(&v, &low, sizeof v);
        if (whole < 0x1p53 * bin_ulp(b) && (float)whole - v < top_p) {
            wk->run = wk->run_kept = whole; /* exact: equals the reference's sequential sum */
            wk->kept += c;
            wk->kc = low, wk->ic = low_id;
            return;
        }
    }
    sort_bin(sid, sk, w->ids, w->keys, c, w->radix);
    for (int j = 0; j < c; j++) {
        float pj = probs[sid[j]];
        if (wk->kept > 0 && drops(wk->run, pj, top_p)) {
            wk->cut = true; /* prefixes never decrease along the sorted order: all later ones drop too */
            return;
        }
        wk->run += pj;
        wk->kept++;
        wk->kc = sk[j], wk->ic = (int)sid[j];
        wk->run_kept = wk->run;
    }
}

int sampler_top_p_fast(float *probs, int n, float top_p, void *scratch) {
    return sampler_top_p_fast_into(probs, probs, n, top_p, scratch);
}

int sampler_top_p_fast_into(float *out, const float *probs, int n, float top_p, void *scratch) {
    if (!(top_p < 1.0f)) {
        if (out != probs) memcpy(out, probs, sizeof(float) * (size_t)n);
        return n;
    }
    if (n > MAX_FAST_N) return sampler_top_p_ref_into(out, probs, n, top_p, scratch); /* 24-bit counts */
    const struct sampler_row_ops *ops = sampler_ops();
    struct topp_work w = work_layout(scratch, n);

    /* Region 1: the tokens at or above the highest power-of-two level whose (approximate) mass covers
     * top_p, histogrammed alone, so a peaked row never histograms its long tail. Region 2, the rest, is
     * histogrammed only if the nucleus runs past region 1. */
    float level_mass[SAMPLER_LEVELS];
    ops->levels(probs, n, level_mass);
    uint32_t t0 = 0;
    for (int j = 0; j < SAMPLER_LEVELS; j++)
        if (level_mass[j] >= top_p * 1.001f + 1e-6f) {
            t0 = (uint32_t)(127 - SAMPLER_LEVEL_STEP * (j + 1)) << 23;
            break;
        }
    memset(w.hist, 0, sizeof(uint64_t) * BINS);
    int m1 = ops->collect(w.region, probs, n, t0, 0x80000000u);
    histogram_add(w.hist, probs, w.region, m1, 0);
    bool region2 = t0 == 0; /* the histogram already covers every token */

    struct walk wk = {0};
    double mass = 0; /* mass floor of the bins taken */
    int taken = 0, hi = BINS;
    while (!wk.cut && hi > 0) {
        if (!region2 && hi <= (int)(t0 >> BIN_SHIFT)) {
            histogram_add(w.hist, probs, NULL, n, t0);
            region2 = true;
        }
        /* threshold: bins from the top until their mass floor covers top_p; after a run-past, at least as
         * many new tokens as already taken, so the rounds stay O(log n) */
        int lo = hi, fresh = 0, floor_bin = region2 ? 0 : (int)(t0 >> BIN_SHIFT);
        while (lo > floor_bin) {
            lo--;
            uint32_t c = bin_count(w.hist, lo);
            if (!c) continue;
            fresh += (int)c;
            mass += bin_mass_floor(w.hist, lo);
            if (mass >= top_p && fresh >= taken) break;
        }
        /* the first dropped token is usually the top of the next nonempty bin: take it along if small,
         * which spares the pass that would look for it */
        for (int b = lo - 1; b >= floor_bin && fresh > 0; b--) {
            uint32_t c = bin_count(w.hist, b);
            if (!c) continue;
            if (c <= SMALL_BIN) lo = b, fresh += (int)c, mass += bin_mass_floor(w.hist, b);
            break;
        }
        if (fresh == 0) {
            hi = lo;
            continue;
        }
        /* candidates grouped by bin (high first), id order within a bin: the first radix pass for free */
        uint32_t off = 0;
        for (int b = hi - 1; b >= lo; b--) w.start[b] = off, off += bin_count(w.hist, b);
        uint32_t hi_key = hi == BINS ? 0x80000000u : (uint32_t)hi << BIN_SHIFT;
        int m;
        if (!region2 || t0 == 0) { /* still inside region 1: filter its list instead of the row */
            m = 0;
            for (int j = 0; j < m1; j++) {
                uint32_t k = sampler_key(probs[w.region[j]]);
                w.ids[m] = w.region[j];
                m += (k >= (uint32_t)lo << BIN_SHIFT) & (k < hi_key);
            }
        } else {
            m = ops->collect(w.ids, probs, n, (uint32_t)lo << BIN_SHIFT, hi_key);
        }
        for (int j = 0; j < m; j++) {
            uint32_t id = w.ids[j], k = sampler_key(probs[id]), pos = w.start[k >> BIN_SHIFT]++;
            w.seg_ids[pos] = id;
            w.seg_keys[pos] = k;
        }
        uint32_t at = 0;
        for (int b = hi - 1; b >= lo && !wk.cut; b--) {
            int c = (int)bin_count(w.hist, b);
            if (!c) continue;
            walk_bin(&wk, probs, w.seg_ids + at, w.seg_keys + at, c, b, top_p, &w);
            at += (uint32_t)c;
        }
        taken += m;
        hi = lo;
        if (!wk.cut && lo > 0) { /* the largest token below the candidates comes next */
            int next = ops->max_below(probs, n, (uint32_t)lo << BIN_SHIFT);
            if (next < 0) break;
            wk.cut = drops(wk.run, probs[next], top_p);
        }
    }

    /* kept mass in id order; exact (so order-free) when run_kept < 2^53 ulps of the smallest kept value */
    int exp_bits = (int)(wk.kc >> 23);
    double ulp = exp_bits == 0 ? 0x1p-149 : ldexp(1.0, exp_bits - 150);
    double kept_mass = wk.run_kept;
    if (!(wk.run_kept < 0x1p53 * ulp)) {
        kept_mass = 0;
        for (int i = 0; i < n; i++) {
            uint32_t k = sampler_key(probs[i]);
            if (k > wk.kc || (k == wk.kc && i <= wk.ic)) kept_mass += probs[i];
        }
    }
    ops->finish(out, probs, n, wk.kc, wk.ic, (float)kept_mass);
    return wk.kept;
}
