/* The sampler's ISA self-check: every row pass of one instruction set run beside the scalar passes on the
 * same row, outputs compared bit for bit (values, indices, counts, sums). The level masses are a guide of
 * the pre-filter (each ISA sums them in its own lane layout, sampler_simd.h) and are not compared; every
 * other output is. Used by `verify` (sampler.simd); tests/test_sampler.c checks that a table with one
 * wrong pass is caught and that every ISA passes. */
#include <string.h>

#include "kernels/sampler.h"
#include "kernels/sampler_simd.h"

struct cmp_buf {
    float *fa, *fb, *fp; /* [n] */
    uint32_t *ia, *ib;   /* [n + 16] ids */
    uint32_t *ka, *kb;   /* [n + 16] keys */
    uint32_t *is, *ks;   /* [n + 16] select_keys' input ids and keys */
    double *da, *db;     /* [n / 16 + 1] */
    uint16_t *h;         /* [n] the row as bf16 */
};

size_t sampler_check_work_bytes(int n) {
    if (n < 1) n = 1;
    size_t nn = (size_t)n;
    return 3 * sizeof(float) * nn + 6 * sizeof(uint32_t) * (nn + 16) + 2 * sizeof(double) * (nn / 16 + 1) +
           sizeof(uint16_t) * nn + 64;
}

static struct cmp_buf cmp_layout(void *work, int n) {
    size_t nn = (size_t)n;
    struct cmp_buf b;
    b.da = (double *)work;
    b.db = b.da + nn / 16 + 1;
    b.fa = (float *)(void *)(b.db + nn / 16 + 1);
    b.fb = b.fa + nn;
    b.fp = b.fb + nn;
    b.ia = (uint32_t *)(void *)(b.fp + nn);
    b.ib = b.ia + nn + 16;
    b.ka = b.ib + nn + 16;
    b.kb = b.ka + nn + 16;
    b.is = b.kb + nn + 16;
    b.ks = b.is + nn + 16;
    b.h = (uint16_t *)(void *)(b.ks + nn + 16);
    return b;
}

static int same(const void *a, const void *b, size_t bytes) {
    return memcmp(a, b, bytes) == 0;
}

#define CHECK(cond, name)                                                                                    \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            bad++;                                                                                           \
            if (!*first) *first = (name);                                                                    \
        }                                                                                                    \
    } while (0)

int sampler_ops_compare(const struct sampler_row_ops *x, const struct sampler_row_ops *ref, const float *row,
                        int n, float temperature, void *work, const char **first) {
    struct cmp_buf b = cmp_layout(work, n);
    size_t fbytes = sizeof(float) * (size_t)n;
    int bad = 0;
    *first = NULL;
    for (int i = 0; i < n; i++) b.h[i] = bf16_from_f32(row[i]);
    /* scan, argmax, exp_sum on f32 and bf16 rows */
    float m = 0;
    for (int t = 0; t < 2; t++) {
        enum fr_dtype dt = t ? FR_DTYPE_BF16 : FR_DTYPE_F32;
        const void *src = t ? (const void *)b.h : (const void *)row;
        float ma, mb;
        bool ba = x->scan(src, dt, n, &ma), bb = ref->scan(src, dt, n, &mb);
        CHECK(ba == bb && same(&ma, &mb, sizeof ma), "scan");
        int ka = -1, kb = -2;
        ba = x->argmax(src, dt, n, &ka), bb = ref->argmax(src, dt, n, &kb);
        CHECK(ba == bb && ka == kb, "argmax");
        if (!t) m = mb;
        double sa[SAMPLER_LANES] = {0}, sb[SAMPLER_LANES] = {0};
        float mass[SAMPLER_LEVELS];
        x->exp_sum(b.fa, src, dt, n, mb, temperature, sa, t ? mass : NULL);
        ref->exp_sum(b.fb, src, dt, n, mb, temperature, sb, NULL);
        CHECK(same(b.fa, b.fb, fbytes) && same(sa, sb, sizeof sa), "exp_sum");
    }
    /* the exp alone, on the f32 row's softmax inputs */
    for (int i = 0; i < n; i++) b.fp[i] = (row[i] - m) / temperature;
    x->exp(b.fa, b.fp, n);
    ref->exp(b.fb, b.fp, n);
    CHECK(same(b.fa, b.fb, fbytes), "exp");
    /* the probabilities every later pass works on: the reference's softmax of the f32 row */
    double s[SAMPLER_LANES] = {0};
    ref->exp_sum(b.fb, row, FR_DTYPE_F32, n, m, temperature, s, NULL);
    double total = 0;
    for (int j = 0; j < SAMPLER_LANES; j++) total += s[j];
    float r = (float)(1.0 / total);
    memcpy(b.fa, b.fb, fbytes);
    x->scale(b.fa, n, r);
    ref->scale(b.fb, n, r);
    CHECK(same(b.fa, b.fb, fbytes), "scale");
    memcpy(b.fp, b.fb, fbytes);
    const float *p = b.fp;
    /* collect (ids alone and with keys) and select_keys (over every index and its key) over four key
     * ranges: above 2^-12, [2^-20, 2^-14), everything, and the 1024 keys from the middle element's up */
    for (int i = 0; i < n; i++) b.is[i] = (uint32_t)i, b.ks[i] = sampler_key(p[i]);
    uint32_t sub = b.ks[n / 2] & ~1023u;
    const uint32_t ranges[4][2] = {
        {SAMPLER_LEVEL_KEY(1), 0x80000000u}, {0x35800000u, 0x38800000u}, {0, 0x80000000u}, {sub, sub + 1024}};
    for (int k = 0; k < 4; k++) {
        int ca = x->collect(b.ia, NULL, p, n, ranges[k][0], ranges[k][1]);
        int cb = ref->collect(b.ib, NULL, p, n, ranges[k][0], ranges[k][1]);
        CHECK(ca == cb && same(b.ia, b.ib, sizeof(uint32_t) * (size_t)cb), "collect");
        ca = x->collect(b.ia, b.ka, p, n, ranges[k][0], ranges[k][1]);
        cb = ref->collect(b.ib, b.kb, p, n, ranges[k][0], ranges[k][1]);
        CHECK(ca == cb && same(b.ia, b.ib, sizeof(uint32_t) * (size_t)cb) &&
                  same(b.ka, b.kb, sizeof(uint32_t) * (size_t)cb),
              "collect (with keys)");
        ca = x->select_keys(b.ia, b.ka, b.is, b.ks, n, ranges[k][0], ranges[k][1]);
        cb = ref->select_keys(b.ib, b.kb, b.is, b.ks, n, ranges[k][0], ranges[k][1]);
        CHECK(ca == cb && same(b.ia, b.ib, sizeof(uint32_t) * (size_t)cb) &&
                  same(b.ka, b.kb, sizeof(uint32_t) * (size_t)cb),
              "select_keys");
        if (cb > 0) {
            int ma2 = x->min_in_range(p, n, ranges[k][0], ranges[k][1]);
            int mb2 = ref->min_in_range(p, n, ranges[k][0], ranges[k][1]);
            CHECK(ma2 == mb2, "min_in_range");
        }
    }
    /* collect_top, with and without scaling the exp values */
    for (int k = 0; k < 2; k++) {
        int wa = -2, wb = -3, ca, cb;
        uint32_t t = SAMPLER_LEVEL_KEY(2);
        if (k) {
            ref->exp_sum(b.fa, row, FR_DTYPE_F32, n, m, temperature, (double[SAMPLER_LANES]){0}, NULL);
            memcpy(b.fb, b.fa, fbytes);
            float *ea = b.fa, *eb = b.fb;
            ca = x->collect_top(b.ia, ea, ea, r, n, t, &wa);
            cb = ref->collect_top(b.ib, eb, eb, r, n, t, &wb);
            CHECK(same(b.fa, b.fb, fbytes), "collect_top (scaled values)");
        } else {
            ca = x->collect_top(b.ia, p, NULL, 1.0f, n, t, &wa);
            cb = ref->collect_top(b.ib, p, NULL, 1.0f, n, t, &wb);
        }
        CHECK(ca == cb && wa == wb && same(b.ia, b.ib, sizeof(uint32_t) * (size_t)cb), "collect_top");
    }
    /* bin_sums (the scalar table has none: sampler_topp.c's own histogram) against a plain count, with the
     * bins of three elements (distinct) and an empty slot as the hot ones */
    if (x->bin_sums) {
        uint64_t got[2][SAMPLER_KEY_BINS], want[2][SAMPLER_KEY_BINS];
        int hot[SAMPLER_HOT_BINS], h = 0;
        for (int j = 0; j < SAMPLER_HOT_BINS; j++) hot[j] = -1;
        for (int k = 0; k < 3 && h < SAMPLER_HOT_BINS; k++) {
            int bin = (int)(sampler_key(p[(size_t)n * (size_t)k / 3]) >> 20);
            bool dup = false;
            for (int j = 0; j < h; j++) dup = dup || hot[j] == bin;
            if (!dup) hot[h++] = bin;
        }
        memset(got, 0, sizeof got);
        memset(want, 0, sizeof want);
        x->bin_sums(p, n, hot, got[0], got[1]);
        for (int i = 0; i < n; i++) {
            uint32_t k = sampler_key(p[i]);
            want[0][k >> 20]++, want[1][k >> 20] += k & 0xfffffu;
        }
        CHECK(same(got, want, sizeof got), "bin_sums");
    }
    /* finish: keep the keys above the median-ish key of the collection, ties by index */
    uint32_t kc = sampler_key(p[n / 2]);
    int ic = n / 3;
    float kf = 0.75f;
    double ta = -1, tb = -2;
    int la = -5, lb = -6;
    x->finish(b.fa, p, n, kc, ic, kf, b.da, &ta, &la);
    ref->finish(b.fb, p, n, kc, ic, kf, b.db, &tb, &lb);
    CHECK(same(b.fa, b.fb, fbytes) && same(b.da, b.db, sizeof(double) * (size_t)((n + 15) / 16)) &&
              same(&ta, &tb, sizeof ta) && la == lb,
          "finish");
    x->finish(b.fa, p, n, kc, ic, kf, NULL, NULL, NULL);
    CHECK(same(b.fa, b.fb, fbytes), "finish");
    /* the draw's total and block search on the finished row, at five targets */
    double qa = x->draw_total(b.fb, n, &la), qb = ref->draw_total(b.fb, n, &lb);
    CHECK(same(&qa, &qb, sizeof qa) && la == lb, "draw_total");
    for (int k = 0; k <= 4; k++) {
        double target = qb * k / 4.0, pa = -1, pb = -2;
        int ba = x->draw_block(b.fb, n, target, &pa), bb = ref->draw_block(b.fb, n, target, &pb);
        CHECK(ba == bb && (bb < 0 || same(&pa, &pb, sizeof pa)), "draw_block");
    }
    return bad;
}

int sampler_isa_compare(enum kernel_isa isa, const float *row, int n, float temperature, void *work,
                        const char **first) {
    *first = NULL;
    const struct sampler_row_ops *x = sampler_ops_for(isa);
    if (!x) return -1;
    return sampler_ops_compare(x, &sampler_ops_scalar, row, n, temperature, work, first);
}
