/* Top-p: the defined edge cases against hand-worked answers, and sampler_top_p_fast == sampler_top_p_ref
 * bit for bit on seeded rows (realistic, flat, heavy ties, dyadic, wide-range, small vocabularies; f32 and
 * bf16 logits; scalar and AVX-512 passes). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sampler_rows.h"
#include "kernels/sampler.h"
#include "kernels/sampler_topp.h"
#include "kernels/team.h"

struct bufs {
    float *a, *b;
    void *scratch;
};

static struct bufs bufs_new(int n) {
    struct bufs x = {malloc(sizeof(float) * (size_t)n), malloc(sizeof(float) * (size_t)n),
                     malloc(sampler_top_p_scratch_bytes(n))};
    cr_assert(x.a && x.b && x.scratch);
    return x;
}

static void bufs_free(struct bufs *x) {
    free(x->a), free(x->b), free(x->scratch);
}

/* Runs both filters on probs[n] with every available ISA; expects identical bits and nucleus sizes.
 * Returns the nucleus size. */
static int expect_same(const float *probs, int n, float top_p, struct bufs *x, const char *what) {
    memcpy(x->a, probs, sizeof(float) * (size_t)n);
    int kr = sampler_top_p_ref(x->a, n, top_p, x->scratch);
    for (int isa = 0; isa < KERNEL_ISA_COUNT; isa++) {
        if (sampler_isa_force((enum kernel_isa)isa) != 0) continue;
        memcpy(x->b, probs, sizeof(float) * (size_t)n);
        int kf = sampler_top_p_fast(x->b, n, top_p, x->scratch);
        cr_expect_eq(kf, kr, "%s: nucleus %d vs %d (n %d, top_p %.9g, isa %d)", what, kf, kr, n,
                     (double)top_p, isa);
        if (memcmp(x->a, x->b, sizeof(float) * (size_t)n) != 0) {
            int first = -1;
            for (int i = 0; i < n && first < 0; i++)
                if (memcmp(x->a + i, x->b + i, sizeof(float))) first = i;
            cr_expect_fail("%s: fast != ref at index %d: %.9g vs %.9g (n %d, top_p %.9g, isa %d)", what,
                           first, (double)x->b[first], (double)x->a[first], n, (double)top_p, isa);
        }
    }
    sampler_isa_force(KERNEL_ISA_COUNT);
    return kr;
}

static const float top_ps[] = {0.0f, 1e-8f, 0.1f, 0.5f, 0.8f, 0.9f, 0.95f, 0.99f, 0.999f, 0.9999999f, 1.0f};
#define N_TOP_PS (int)(sizeof top_ps / sizeof top_ps[0])

/* ---- defined behaviour, worked by hand ---- */

Test(top_p, dyadic_boundaries) {
    float p[5] = {0.125f, 0.5f, 0.0625f, 0.25f, 0.0625f}; /* sorted: 0.5, 0.25, 0.125, 0.0625, 0.0625 */
    struct bufs x = bufs_new(5);
    /* prefixes 0, 0.5, 0.75, 0.875, 0.9375 exactly: "< top_p" decides at equality */
    struct {
        float top_p;
        int kept;
    } cases[] = {{0.0f, 1},   {0.5f, 1},    {0.50000006f, 2}, {0.75f, 2}, {0.7500001f, 3},
                 {0.875f, 3}, {0.9375f, 4}, {0.93750006f, 5}, {0.99f, 5}, {1.0f, 5}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        cr_expect_eq(expect_same(p, 5, cases[c].top_p, &x, "dyadic"), cases[c].kept, "top_p %.9g",
                     (double)cases[c].top_p);
    expect_same(p, 5, 0.75f, &x, "dyadic");
    /* kept 0.5 and 0.25, each divided by the kept mass 0.75f */
    for (int i = 0; i < 5; i++) cr_expect_eq(x.a[i], i == 1 ? 0.5f / 0.75f : i == 3 ? 0.25f / 0.75f : 0.0f);
    bufs_free(&x);
}

Test(top_p, ties_straddling_the_boundary_keep_lowest_ids) {
    float p[6] = {0.1f, 0.3f, 0.05f, 0.3f, 0.3f, 0.05f};
    struct bufs x = bufs_new(6);
    /* sorted 0.3(1) 0.3(3) 0.3(4) 0.1(0) 0.05(2) 0.05(5); prefixes ~0, 0.3, 0.6: top_p 0.5 keeps ids 1, 3 */
    cr_expect_eq(expect_same(p, 6, 0.5f, &x, "ties"), 2);
    for (int i = 0; i < 6; i++) cr_expect_eq(x.a[i] > 0, i == 1 || i == 3, "id %d", i);
    cr_expect_eq(x.a[1], x.a[3]);
    float q[4] = {0.25f, 0.25f, 0.25f, 0.25f};
    cr_expect_eq(expect_same(q, 4, 0.5f, &x, "flat ties"), 2);
    cr_expect_eq(x.a[0], 0.5f);
    cr_expect_eq(x.a[1], 0.5f);
    cr_expect_eq(x.a[2], 0.0f);
    bufs_free(&x);
}

Test(top_p, top_token_only_and_no_filter) {
    float p[5] = {0.2f, 0.1f, 0.4f, 0.2f, 0.1f};
    struct bufs x = bufs_new(5);
    for (int k = 0; k < 2; k++) {
        cr_expect_eq(expect_same(p, 5, k ? 1e-8f : 0.0f, &x, "top only"), 1);
        for (int i = 0; i < 5; i++) cr_expect_eq(x.a[i], i == 2 ? 1.0f : 0.0f);
    }
    cr_expect_eq(expect_same(p, 5, 1.0f, &x, "no filter"), 5);
    cr_expect_eq(memcmp(x.a, p, sizeof p), 0, "top_p 1 returns the probabilities unchanged");
    bufs_free(&x);
}

Test(top_p, running_sum_never_reaches_top_p) {
    float p[6] = {0.1f, 0.0f, 0.05f, 0.2f, 0.0f, 0.05f}; /* mass 0.4 < 0.9: everything is kept */
    struct bufs x = bufs_new(6);
    cr_expect_eq(expect_same(p, 6, 0.9f, &x, "short"), 6);
    double s = 0;
    for (int i = 0; i < 6; i++) s += x.a[i];
    cr_expect_leq(fabs(s - 1.0), 1e-6, "renormalized to %.9g", s);
    cr_expect_eq(x.a[1], 0.0f);
    bufs_free(&x);
}

Test(top_p, vocabulary_of_one) {
    struct bufs x = bufs_new(1);
    float p = 0.3f;
    for (int t = 0; t < N_TOP_PS; t++) {
        cr_expect_eq(expect_same(&p, 1, top_ps[t], &x, "one"), 1);
        cr_expect_eq(x.a[0], top_ps[t] < 1.0f ? 1.0f : 0.3f);
    }
    bufs_free(&x);
}

/* ---- fast == reference on seeded rows ---- */

static void softmax_rows(int n, int rows, float temperature, enum sampler_row_kind kind, bool bf16,
                         uint64_t seed) {
    float *logits = malloc(sizeof(float) * (size_t)n), *probs = malloc(sizeof(float) * (size_t)n);
    uint16_t *h = malloc(sizeof(uint16_t) * (size_t)n);
    struct bufs x = bufs_new(n);
    for (int r = 0; r < rows; r++) {
        sampler_rows_fill(logits, n, kind, seed + (uint64_t)r);
        const void *row = logits;
        if (bf16) {
            for (int i = 0; i < n; i++) h[i] = bf16_from_f32(logits[i]);
            row = h;
        }
        cr_assert_eq(sampler_softmax(probs, row, bf16 ? FR_DTYPE_BF16 : FR_DTYPE_F32, n, temperature,
                                     kernel_team_procs(), NULL),
                     0);
        for (int t = 0; t < N_TOP_PS; t++) expect_same(probs, n, top_ps[t], &x, sampler_row_kind_name(kind));
    }
    bufs_free(&x);
    free(logits), free(probs), free(h);
}

Test(top_p, fast_equals_ref_realistic_151936) {
    softmax_rows(151936, 3, 0.8f, SAMPLER_ROW_REALISTIC, false, 11);
}
Test(top_p, fast_equals_ref_realistic_bf16) {
    softmax_rows(151936, 2, 1.0f, SAMPLER_ROW_REALISTIC, true, 21);
}
Test(top_p, fast_equals_ref_flat) {
    softmax_rows(32000, 2, 1.0f, SAMPLER_ROW_FLAT, false, 31);
}
Test(top_p, fast_equals_ref_ties) {
    softmax_rows(32000, 2, 0.7f, SAMPLER_ROW_TIES, true, 41);
}
Test(top_p, fast_equals_ref_hot) {
    softmax_rows(65536, 2, 0.3f, SAMPLER_ROW_REALISTIC, false, 51);
}

/* small vocabularies and hand-built probability rows: random zeros, duplicates, dyadic values, subnormals,
 * values spread over 140 binades, unnormalized mass */
Test(top_p, fast_equals_ref_small_random_rows) {
    enum { NMAX = 300 };
    float p[NMAX];
    struct bufs x = bufs_new(NMAX);
    uint64_t s = 77;
    for (int trial = 0; trial < 1500; trial++) {
        int n = 1 + (int)(sampler_rows_next(&s) % NMAX);
        int style = trial % 5;
        bool any = false;
        for (int i = 0; i < n; i++) {
            double u = sampler_rows_uniform(&s);
            float v;
            if (style == 0)
                v = (float)u; /* plain */
            else if (style == 1)
                v = (float)ldexp(1.0, -(int)(u * 12)); /* dyadic */
            else if (style == 2)
                v = (float)((int)(u * 4)) * 0.125f; /* ties and zeros */
            else if (style == 3)
                v = (float)ldexp(1.0 + u, -(int)(140 * sampler_rows_uniform(&s))); /* wide */
            else
                v = (float)(u * 1e-39); /* subnormal */
            p[i] = v;
            any |= v > 0;
        }
        if (!any) p[0] = 1.0f;
        double sum = 0;
        for (int i = 0; i < n; i++) sum += p[i];
        if (trial % 2) /* half the rows normalized, half left as they are */
            for (int i = 0; i < n; i++) p[i] = (float)(p[i] / sum);
        for (int t = 0; t < N_TOP_PS; t++) expect_same(p, n, top_ps[t], &x, "small");
        float tp = (float)sampler_rows_uniform(&s);
        expect_same(p, n, tp, &x, "small, random top_p");
    }
    bufs_free(&x);
}

Test(top_p, negative_zero_is_zero) {
    float p[5] = {0.5f, -0.0f, 0.25f, 0.0f, 0.25f};
    struct bufs x = bufs_new(5);
    for (int t = 0; t < N_TOP_PS; t++) expect_same(p, 5, top_ps[t], &x, "-0");
    float q[3] = {-0.0f, 0.0f, 0.0f}; /* not a distribution, but the filters must still agree */
    q[2] = 1e-45f;
    for (int t = 0; t < N_TOP_PS; t++) expect_same(q, 3, top_ps[t], &x, "-0 tail");
    bufs_free(&x);
}

/* The renormalizing sum is taken in id order, and order matters here: 2^18 tokens of 2^-80 come first by
 * id and add up to one ulp of 2^-10, which pushes the kept mass 2^-10 (1 + 2^-24) past the f32 rounding
 * tie; summed in sorted order each of them is lost against 2^-10 and the tie rounds down instead. */
Test(top_p, kept_mass_is_summed_in_id_order) {
    enum { TINY = 1 << 18, N = TINY + 2 };
    float *p = malloc(sizeof(float) * N);
    for (int i = 0; i < TINY; i++) p[i] = 0x1p-80f;
    p[TINY] = 0x1p-10f;
    p[TINY + 1] = 0x1p-34f;
    struct bufs x = bufs_new(N);
    cr_expect_eq(expect_same(p, N, 0.5f, &x, "id-order mass"), N);
    float kf = 0x1p-10f * (1.0f + 0x1p-23f); /* the id-order sum, rounded up past the tie */
    cr_expect_eq(x.a[TINY], 0x1p-10f / kf);
    cr_expect_eq(x.a[0], 0x1p-80f / kf);
    bufs_free(&x);
    free(p);
}

/* Past 2^20 tokens (beyond the histogram words' 20-bit counts, where the fast filter once handed the row to
 * the sort reference) the fast filter still runs its own histogram, and still equals the reference. */
Test(top_p, fast_path_past_two_to_the_twenty, .timeout = 120) {
    enum { N = (1 << 20) + 4099 };
    float *logits = malloc(sizeof(float) * N), *probs = malloc(sizeof(float) * N);
    struct bufs x = bufs_new(N);
    for (int kind = 0; kind < 2; kind++) {
        sampler_rows_fill(logits, N, kind ? SAMPLER_ROW_FLAT : SAMPLER_ROW_REALISTIC, 61);
        cr_assert_eq(sampler_softmax(probs, logits, FR_DTYPE_F32, N, 1.0f, kernel_team_procs(), NULL), 0);
        int kr = sampler_top_p_ref_into(x.a, probs, N, 0.9f, x.scratch);
        long binned = 0;
        struct sampler_topp_in in = {probs, NULL, 1.0f, NULL, 1.0, &binned};
        int kf = sampler_top_p_fast_fused(x.b, &in, N, 0.9f, x.scratch, NULL);
        cr_expect_gt(binned, kind ? N / 2 : 0, "kind %d: the fast filter histogrammed %ld tokens", kind,
                     binned);
        cr_expect_eq(kf, kr, "kind %d: nucleus %d vs %d", kind, kf, kr);
        cr_expect_eq(memcmp(x.a, x.b, sizeof(float) * N), 0, "kind %d: fast != reference", kind);
    }
    bufs_free(&x);
    free(logits), free(probs);
}

/* A whole flush of 2^20 tokens in one bin (every probability equal): the bin counts 2^20, one more than a
 * histogram word's 20 count bits hold, so the copies' words are taken apart before they are added. */
Test(top_p, a_whole_flush_in_one_bin, .timeout = 120) {
    enum { N = (1 << 20) + 16 };
    float *probs = malloc(sizeof(float) * N);
    struct bufs x = bufs_new(N);
    for (int i = 0; i < N; i++) probs[i] = 1.0f / (float)N;
    float tps[] = {0.5f, 0.99f};
    for (size_t t = 0; t < sizeof tps / sizeof tps[0]; t++) {
        int kr = sampler_top_p_ref_into(x.a, probs, N, tps[t], x.scratch);
        int kf = sampler_top_p_fast_into(x.b, probs, N, tps[t], x.scratch);
        cr_expect_eq(kf, kr, "top_p %g: nucleus %d vs %d", (double)tps[t], kf, kr);
        cr_expect_eq(memcmp(x.a, x.b, sizeof(float) * N), 0, "top_p %g: fast != reference", (double)tps[t]);
    }
    bufs_free(&x);
    free(probs);
}
