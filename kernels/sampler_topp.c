/* Top-p (nucleus) filter: the sort-based reference, written literally from the semantics in sampler.h, and a
 * fast path that never sorts the whole vocabulary yet returns the same bits on every row. Fast path: tokens
 * are binned by the top 11 bits of their probability's bits (equal values share a bin, so bins never split
 * ties, and bins in descending order are the sorted order cut into runs); a bin's exact sum comes from
 * integer counts and sums of its low key bits. Bins are taken whole from the top while the running sum stays
 * exact and the cut cannot fall in them; only the bins where it may fall are collected, split again on the
 * next 10 key bits, and the part holding the cut is radix sorted and walked as the reference walks it. A
 * power-of-two pre-filter keeps a peaked row from histogramming its tail. The whole argument, the sizes it
 * holds for and the SIMD row ops it uses: docs/tuning/sampler.md, "The fast top-p". Checked in
 * tests/test_sampler_topp.c: fast == reference bitwise on seeded realistic, flat, tied, dyadic, wide-range
 * and tiny rows, f32 and bf16, scalar, AVX2 and AVX-512, and past 2^20 tokens. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/sampler_simd.h"
#include "kernels/sampler_topp.h"

#define BIN_SHIFT 20               /* bin = key >> 20 */
#define BINS      SAMPLER_KEY_BINS /* keys are < 2^31 */
#define COPIES    8                /* interleaved histograms break the store-to-load chain on a crowded bin */
/* Words from one copy to the next: a 64-byte line more than BINS, so that the same bin of two copies
 * differs in the low 12 bits of its address. At exactly BINS words (16 KiB) apart, a load from one copy
 * waited on the store just before it to another (4 KiB aliasing): on the AVX2 path of a Zen 4 VM this
 * padding took the chain on a flat 151,936-token row from 366 to 345 us (medians, alternated). */
#define HIST_STRIDE (BINS + 8)
#define CNT_SHIFT   44        /* histogram word: count << 44 | sum of the low 20 key bits (exact, < 2^40) */
#define CHUNK       (1 << 20) /* tokens per flush of the words: counts fit their 20 bits */
#define SUB_BITS    10        /* within a bin, the low 20 key bits sort in two 10-bit passes */
#define SUB_SIZE    1024
/* sub-bin histogram word: count << 37 | sum of the low 10 key bits (< 2^26 * 2^10), counts < 2^27; one
 * word a sub-bin leaves w->radix free for sorting the sub-bin that holds the cut */
#define SUB_CNT_SHIFT 37
#define SUB_ONE       ((uint64_t)1 << SUB_CNT_SHIFT)

struct topp_work {
    uint64_t *hist;               /* [COPIES][HIST_STRIDE] count and low key bits per bin */
    double *sum;                  /* [BINS] exact per-bin sums */
    uint32_t *count;              /* [BINS] */
    uint32_t *radix;              /* [2][SUB_SIZE] */
    uint32_t *region;             /* [n + 16] tokens above the pre-filter level, id order */
    uint32_t *coll, *coll_keys;   /* [n + 16] each: the tokens of the bins where the cut may fall (id order)
                                   * and their keys */
    uint32_t *ids, *keys;         /* [n + 16] sort temporaries */
    uint32_t *seg_ids, *seg_keys; /* [n + 16] one bin's tokens (id order), then sort temporaries */
    uint32_t *seg_tmp_ids, *seg_tmp_keys; /* [n + 16] one sub-bin's tokens */
    uint64_t *sub_hist;                   /* [SUB_SIZE] per sub-bin: count and sum of the low 10 key bits */
    uint64_t *bin_count, *bin_low;        /* [BINS] each: the row op bin_sums' counts and low-bit sums */
};

size_t sampler_top_p_scratch_bytes(int n) {
    if (n < 1) n = 1;
    return 64 + sizeof(uint64_t) * (COPIES * HIST_STRIDE + SUB_SIZE + 2 * BINS) +
           (sizeof(double) + sizeof(uint32_t)) * BINS + sizeof(uint32_t) * (2 * SUB_SIZE) +
           9 * sizeof(uint32_t) * ((size_t)n + 16);
}

static struct topp_work work_layout(void *scratch, int n) {
    struct topp_work w;
    w.hist = (uint64_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    w.sub_hist = w.hist + COPIES * HIST_STRIDE;
    w.bin_count = w.sub_hist + SUB_SIZE;
    w.bin_low = w.bin_count + BINS;
    w.sum = (double *)(void *)(w.bin_low + BINS);
    w.count = (uint32_t *)(void *)(w.sum + BINS);
    w.radix = w.count + BINS;
    w.region = w.radix + 2 * SUB_SIZE;
    w.coll = w.region + n + 16;
    w.coll_keys = w.coll + n + 16;
    w.ids = w.coll_keys + n + 16;
    w.keys = w.ids + n + 16;
    w.seg_ids = w.keys + n + 16;
    w.seg_keys = w.seg_ids + n + 16;
    w.seg_tmp_ids = w.seg_keys + n + 16;
    w.seg_tmp_keys = w.seg_tmp_ids + n + 16;
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

/* Adds count tokens of bin b whose low 20 key bits sum to low to the exact per-bin count and sum. */
static void bin_add(struct topp_work *w, int b, uint64_t count, uint64_t low) {
    if (!count) return;
    int e = b >> 3, lead = (e ? 8 : 0) + (b & 7); /* implicit bit + the bin's 3 mantissa bits */
    w->count[b] += (uint32_t)count;
    /* exact: an integer below 2^26 * 16 * 2^20 ulps (n <= 2^26), added to a sum of such below 2^53 ulps */
    w->sum[b] += ldexp((double)(count * (uint64_t)lead * 1048576u + low), (e ? e : 1) - 150);
}

/* Adds the words of bins [blo, bhi] to the exact per-bin counts and sums. Each copy's count and low bits are
 * taken apart before they are added: a chunk of CHUNK tokens all in one bin counts 2^20, which the 20 bits
 * of one word would carry out of. */
static void histogram_flush(struct topp_work *w, int blo, int bhi) {
    const uint64_t one = (uint64_t)1 << CNT_SHIFT;
    for (int b = blo; b <= bhi; b++) {
        uint64_t count = 0, low = 0;
        for (int c = 0; c < COPIES; c++) {
            uint64_t h = w->hist[c * HIST_STRIDE + b];
            count += h >> CNT_SHIFT, low += h & (one - 1);
        }
        bin_add(w, b, count, low);
    }
}

/* Adds the tokens whose keys lie in [lo, hi) to the bin counts and sums: ids[m] when given (every one of them
 * in range), else every p[i], i < m, in range. Only the words of bins [lo, hi) are cleared and read. Values
 * in a bin share their exponent and top 3 mantissa bits, so a bin's sum is ulp * (count * leading bits * 2^20
 * + the sum of the low 20 key bits): integers, exact, and one 64-bit add per token instead of a
 * floating-point chain. The first pass's tokens go through their ids even when they are most of the row:
 * reading them in order instead gained nothing, since the adds, not the ids, are the cost
 * (docs/tuning/sampler.md, "Histogram"). */
static void histogram_add(struct topp_work *w, const float *p, const uint32_t *ids, int m, uint32_t lo,
                          uint32_t hi) {
    const uint64_t one = (uint64_t)1 << CNT_SHIFT;
    int blo = (int)(lo >> BIN_SHIFT), bhi = (int)((hi - 1) >> BIN_SHIFT);
    for (int c0 = 0; c0 < m; c0 += CHUNK) {
        int end = m - c0 < CHUNK ? m : c0 + CHUNK, i = c0;
        for (int c = 0; c < COPIES; c++)
            memset(w->hist + c * HIST_STRIDE + blo, 0, sizeof(uint64_t) * (size_t)(bhi - blo + 1));
        if (ids) {
            for (; i + COPIES <= end; i += COPIES)
                for (int c = 0; c < COPIES; c++) {
                    uint32_t k = sampler_key(p[ids[i + c]]);
                    w->hist[c * HIST_STRIDE + (k >> BIN_SHIFT)] += one | (k & 0xfffffu);
                }
            for (; i < end; i++) {
                uint32_t k = sampler_key(p[ids[i]]);
                w->hist[k >> BIN_SHIFT] += one | (k & 0xfffffu);
            }
        } else {
            for (; i + COPIES <= end; i += COPIES)
                for (int c = 0; c < COPIES; c++) {
                    uint32_t k = sampler_key(p[i + c]);
                    if (k >= lo && k < hi)
                        w->hist[c * HIST_STRIDE + (k >> BIN_SHIFT)] += one | (k & 0xfffffu);
                }
            for (; i < end; i++) {
                uint32_t k = sampler_key(p[i]);
                if (k >= lo && k < hi) w->hist[k >> BIN_SHIFT] += one | (k & 0xfffffu);
            }
        }
        histogram_flush(w, blo, bhi);
    }
}

/* Tokens whose bins histogram_row counts first to find the crowded ones. */
#define HOT_SAMPLE 4096
/* The share of those, in percent, that the hot bins must hold for bin_sums to run: each token outside them
 * costs bin_sums a scalar step several times the histogram's, and below about 85 % bin_sums stopped paying
 * (docs/tuning/sampler.md, "Hot bins"). */
#define HOT_MIN_PERCENT 85

/* The first pass kept every token (a flat row): when the SAMPLER_HOT_BINS bins most crowded among the first
 * HOT_SAMPLE tokens hold at least HOT_MIN_PERCENT of them, all tokens go to the bin counts and sums through
 * the row op bin_sums, in order, those bins summed in vector lanes, and this returns true; else it does
 * nothing and returns false (the caller histograms through the ids). The test matters: on a flat row whose
 * hot bins hold most of it bin_sums is faster, on one whose tokens spread over many bins it is slower
 * (docs/tuning/sampler.md, "Hot bins"). */
static bool histogram_row(struct topp_work *w, const struct sampler_row_ops *ops, const float *p, int n,
                          uint32_t lo, uint32_t hi) {
    const int blo = (int)(lo >> BIN_SHIFT), bhi = (int)((hi - 1) >> BIN_SHIFT); /* every key is in [lo, hi) */
    int seen[BINS], hot[SAMPLER_HOT_BINS], sample = n < HOT_SAMPLE ? n : HOT_SAMPLE, covered = 0;
    memset(seen + blo, 0, sizeof(int) * (size_t)(bhi - blo + 1));
    for (int i = 0; i < sample; i++) seen[sampler_key(p[i]) >> BIN_SHIFT]++;
    for (int j = 0; j < SAMPLER_HOT_BINS; j++) {
        hot[j] = -1;
        for (int b = blo; b <= bhi; b++)
            if (seen[b] > 0 && (hot[j] < 0 || seen[b] > seen[hot[j]])) hot[j] = b;
        if (hot[j] >= 0) covered += seen[hot[j]], seen[hot[j]] = 0;
    }
    if ((long)covered * 100 < (long)HOT_MIN_PERCENT * sample) return false;
    memset(w->bin_count + blo, 0, sizeof(uint64_t) * (size_t)(bhi - blo + 1));
    memset(w->bin_low + blo, 0, sizeof(uint64_t) * (size_t)(bhi - blo + 1));
    ops->bin_sums(p, n, hot, w->bin_count, w->bin_low);
    for (int b = blo; b <= bhi; b++) bin_add(w, b, w->bin_count[b], w->bin_low[b]);
    return true;
}

/* ulp of the smallest value a bin can hold: every value in the bin and above is a multiple of it */
static double bin_ulp(int b) {
    return ldexp(1.0, ((b >> 3) ? (b >> 3) : 1) - 150);
}

static float bin_floor(int b) {
    uint32_t u = (uint32_t)b << BIN_SHIFT;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

struct walk {
    double run, run_kept; /* the reference's double running sum: through the last visited / kept token */
    int kept, ic;         /* nucleus size; the last kept token's id and key (when walked token by token) */
    uint32_t kc;
    int whole_bin; /* >= 0: the last kept token closes this bin, taken whole (its id is found at the end) */
    bool cut;      /* the first dropped token was found */
};

/* Takes bin b whole if the running sum stays exact through it and even its smallest possible value would
 * be kept (prefixes never decrease along the sorted order, so then every token of it is kept). */
static bool take_whole(struct walk *wk, const struct topp_work *w, int b, float top_p) {
    double whole = wk->run + w->sum[b];
    if (!(whole < 0x1p53 * bin_ulp(b)) || !((float)whole - bin_floor(b) < top_p)) return false;
    wk->run = wk->run_kept = whole; /* exact: equals the reference's sequential sum */
    wk->kept += (int)w->count[b];
    wk->whole_bin = b;
    return true;
}

/* the reference's walk over one bin's tokens in sorted order */
static void walk_sorted(struct walk *wk, const float *probs, const uint32_t *sid, const uint32_t *sk, int c,
                        float top_p) {
    for (int j = 0; j < c; j++) {
        float pj = probs[sid[j]];
        if (wk->kept > 0 && !((float)(wk->run + pj) - pj < top_p)) {
            wk->cut = true; /* prefixes never decrease along the sorted order: all later ones drop too */
            return;
        }
        wk->run += pj;
        wk->kept++;
        wk->kc = sk[j], wk->ic = (int)sid[j], wk->whole_bin = -1;
        wk->run_kept = wk->run;
    }
}

/* One bin where the cut may fall, its c tokens in id order. While sums are exact the bin splits again on
 * the next 10 key bits into sub-bins whose exact sums come from integers too: sub-bins that are kept whole
 * need no sort, and only the sub-bin holding the cut is sorted and walked token by token. Otherwise (or
 * for a short bin) the whole bin is sorted and walked. */
static void walk_bin(struct walk *wk, const struct topp_work *w, const struct sampler_row_ops *ops,
                     const float *probs, uint32_t *sid, uint32_t *sk, int c, int b, float top_p) {
    if (c <= 64 || !(wk->run + w->sum[b] < 0x1p53 * bin_ulp(b))) {
        sort_bin(sid, sk, w->ids, w->keys, c, w->radix);
        walk_sorted(wk, probs, sid, sk, c, top_p);
        return;
    }
    uint64_t *sub = w->sub_hist;
    memset(sub, 0, sizeof(uint64_t) * SUB_SIZE);
    for (int j = 0; j < c; j++)
        sub[(sk[j] >> SUB_BITS) & (SUB_SIZE - 1)] += SUB_ONE | (sk[j] & (SUB_SIZE - 1));
    int e = b >> 3, whole_sub = -1;
    for (int s = SUB_SIZE - 1; s >= 0 && !wk->cut; s--) {
        uint64_t cnt = sub[s] >> SUB_CNT_SHIFT, low = sub[s] & (SUB_ONE - 1);
        if (!cnt) continue;
        uint64_t lead =
            ((uint64_t)((e ? 8 : 0) + (b & 7)) << SUB_BITS) | (uint64_t)s; /* 1 + 13 mantissa bits */
        double whole = wk->run + ldexp((double)(cnt * lead * SUB_SIZE + low), (e ? e : 1) - 150);
        uint32_t floor_key = ((uint32_t)b << BIN_SHIFT) | ((uint32_t)s << SUB_BITS);
        float floor_v;
        memcpy(&floor_v, &floor_key, sizeof floor_v);
        if ((float)whole - floor_v < top_p) { /* even its smallest possible value is kept: all of it is */
            wk->run = wk->run_kept = whole;
            wk->kept += (int)cnt;
            whole_sub = s;
            continue;
        }
        /* the sub-bin's tokens, id order, sorted on the last 10 bits and walked */
        int m =
            ops->select_keys(w->seg_tmp_ids, w->seg_tmp_keys, sid, sk, c, floor_key, floor_key + SUB_SIZE);
        int kept_before = wk->kept;
        sort_bin(w->seg_tmp_ids, w->seg_tmp_keys, w->ids, w->keys, m, w->radix);
        walk_sorted(wk, probs, w->seg_tmp_ids, w->seg_tmp_keys, m, top_p);
        if (wk->kept > kept_before) whole_sub = -1; /* the last kept token is known */
    }
    if (whole_sub >= 0) { /* the last kept token closes that sub-bin: its smallest, highest id among ties */
        wk->kc = 0xffffffffu;
        for (int j = 0; j < c; j++)
            if (((sk[j] >> SUB_BITS) & (SUB_SIZE - 1)) == (uint32_t)whole_sub && sk[j] <= wk->kc)
                wk->kc = sk[j], wk->ic = (int)sid[j];
        wk->whole_bin = -1;
    }
}

int sampler_top_p_fast(float *probs, int n, float top_p, void *scratch) {
    return sampler_top_p_fast_into(probs, probs, n, top_p, scratch);
}

int sampler_top_p_fast_into(float *out, const float *probs, int n, float top_p, void *scratch) {
    struct sampler_topp_in in = {probs, NULL, 1.0f, NULL, 1.0, NULL};
    return sampler_top_p_fast_fused(out, &in, n, top_p, scratch, NULL);
}

/* The pre-filter's key: the first level whose (approximate) mass covers top_p with a margin; 0 (every
 * token) if none. Levels of exp values count as levels of p = e * r at the threshold times r, rounded as
 * p is: e >= T gives e * r >= T * r after rounding too, so the collected tokens include them all. The key
 * is rounded down to a bin boundary: bins are histogrammed whole or not at all. */
static uint32_t prefilter_key(const float *mass, double mass_total, float r, float top_p) {
    for (int j = 0; j < SAMPLER_LEVELS; j++)
        if ((double)mass[j] / mass_total >= (double)(top_p * 1.001f + 1e-6f)) {
            float t;
            uint32_t k = SAMPLER_LEVEL_KEY(j);
            memcpy(&t, &k, sizeof t);
            return sampler_key(t * r) & ~(((uint32_t)1 << BIN_SHIFT) - 1); /* down to a bin's start */
        }
    return 0;
}

int sampler_top_p_fast_fused(float *out, const struct sampler_topp_in *in, int n, float top_p, void *scratch,
                             struct sampler_draw_blocks *blocks) {
    const struct sampler_row_ops *ops = sampler_ops();
    if (blocks) blocks->total = -1;
    if (!(top_p < 1.0f)) {
        const float *src = in->probs;
        if (in->scaled) ops->scale(in->scaled, n, in->r), src = in->scaled;
        if (out != src) memcpy(out, src, sizeof(float) * (size_t)n);
        return n;
    }
    struct topp_work w = work_layout(scratch, n);

    float level_mass[SAMPLER_LEVELS];
    /* keys above top_key do not occur: a softmax's largest probability is r (its exp is 1) */
    uint32_t t0 = SAMPLER_LEVEL_KEY(SAMPLER_LEVELS - 1),
             top_key = in->scaled ? sampler_key(in->r) + 1 : 0x80000000u;
    if (in->mass || !in->scaled) {
        if (in->mass)
            memcpy(level_mass, in->mass, sizeof level_mass);
        else
            ops->levels(in->probs, n, level_mass);
        t0 = prefilter_key(level_mass, in->mass_total, in->scaled ? in->r : 1.0f, top_p);
    }
    int t0_bin = (int)(t0 >> BIN_SHIFT);
    memset(w.count, 0, sizeof(uint32_t) * BINS);
    memset(w.sum, 0, sizeof(double) * BINS);
    int below = -1; /* the largest token under the level: the next one after the pre-filtered tokens */
    /* the first pass: scaling where asked, the tokens at or above the pre-filter key, the largest below */
    int m1 = ops->collect_top(w.region, in->probs, in->scaled, in->r, n, t0, &below);
    const float *probs = in->scaled ? in->scaled : in->probs;
    if (!(m1 == n && ops->bin_sums && histogram_row(&w, ops, probs, n, t0, top_key)))
        histogram_add(&w, probs, w.region, m1, t0, top_key);
    bool all_binned = t0 == 0;

    struct walk wk = {.whole_bin = -1};
    int b = BINS - 1;
    while (b >= 0 && !wk.cut) {
        if (!all_binned && b < t0_bin) {
            /* past the pre-filtered tokens: the largest token below them comes next; only if it is kept
             * does the nucleus reach into the tail, which is then histogrammed too */
            if (below < 0) break;
            float v = probs[below];
            if (wk.kept > 0 && !((float)(wk.run + v) - v < top_p)) {
                wk.cut = true;
                break;
            }
            histogram_add(&w, probs, NULL, n, 0, t0);
            all_binned = true;
        }
        if (!w.count[b] || take_whole(&wk, &w, b, top_p)) {
            b--;
            continue;
        }
        /* The cut may fall here: collect bins b down to where the exact mass reaches top_p, plus the
         * next nonempty bin (the first dropped token may be its largest). */
        int floor_bin = all_binned ? 0 : t0_bin, lo = b;
        double mass = wk.run + w.sum[b];
        while (mass < top_p && lo > floor_bin) mass += w.sum[--lo];
        for (int x = lo - 1; x >= floor_bin; x--)
            if (w.count[x]) {
                lo = x;
                break;
            }
        uint32_t lo_key = (uint32_t)lo << BIN_SHIFT, hi_key = (uint32_t)(b + 1) << BIN_SHIFT;
        int m = 0;
        if (lo >= t0_bin && m1 <= n / 8) { /* a short pre-filtered list: filter it rather than the row */
            for (int j = 0; j < m1; j++) {
                uint32_t k = sampler_key(probs[w.region[j]]);
                w.coll[m] = w.region[j], w.coll_keys[m] = k;
                m += (k >= lo_key) & (k < hi_key);
            }
        } else {
            m = ops->collect(w.coll, w.coll_keys, probs, n, lo_key, hi_key);
        }
        /* The collection keeps each token's key, and the bin and sub-bin walked are picked from it by the row
         * op select_keys (SIMD), which ran faster than a gather of probs[id] and a scalar pick
         * (docs/tuning/sampler.md, "select_keys"). */
        for (int x = b; x >= lo && !wk.cut; x--) {
            int c = (int)w.count[x];
            if (!c || take_whole(&wk, &w, x, top_p)) continue;
            /* the bin's c tokens in id order, filtered from the collection only now: the walk usually ends
             * in the first bin it has to walk, so the others are never gathered */
            ops->select_keys(w.seg_ids, w.seg_keys, w.coll, w.coll_keys, m, (uint32_t)x << BIN_SHIFT,
                             (uint32_t)(x + 1) << BIN_SHIFT);
            walk_bin(&wk, &w, ops, probs, w.seg_ids, w.seg_keys, c, x, top_p);
        }
        b = lo - 1;
    }
    if (wk.whole_bin >= 0) { /* the last kept token: the smallest of that bin, the highest id among ties */
        uint32_t lo_key = (uint32_t)wk.whole_bin << BIN_SHIFT, hi_key = (uint32_t)(wk.whole_bin + 1)
                                                                        << BIN_SHIFT;
        if (wk.whole_bin >= t0_bin && m1 <= n / 8) {
            wk.kc = 0xffffffffu;
            for (int j = 0; j < m1; j++) {
                uint32_t k = sampler_key(probs[w.region[j]]);
                if (k >= lo_key && k < hi_key && k <= wk.kc) wk.kc = k, wk.ic = (int)w.region[j];
            }
        } else {
            wk.ic = ops->min_in_range(probs, n, lo_key, hi_key);
            wk.kc = sampler_key(probs[wk.ic]);
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
    if (in->binned)
        for (int x = 0; x < BINS; x++) *in->binned += w.count[x];
    if (blocks)
        ops->finish(out, probs, n, wk.kc, wk.ic, (float)kept_mass, blocks->sums, &blocks->total,
                    &blocks->last);
    else
        ops->finish(out, probs, n, wk.kc, wk.ic, (float)kept_mass, NULL, NULL, NULL);
    return wk.kept;
}
