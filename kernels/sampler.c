/* Sampler core, the top of the sampler's layers: parameter and row checks, greedy argmax, the f32 softmax,
 * Philox4x32-10, the inverse-CDF draw and sampler_pick, which chains them over the row passes
 * (sampler_simd.h) and the fast top-p filter (sampler_topp.h); neither of those includes this file's
 * declarations. Checked in tests/test_sampler.c: argmax and softmax against the plain _ref twins, Philox
 * against the Random123 known-answer vectors, sampler_pick against the separate pieces and the sort
 * reference, every path against the others bit for bit. */
#include "kernels/sampler.h"

#include <math.h>
#include <string.h>

#include "kernels/sampler_simd.h"
#include "kernels/sampler_split.h"
#include "kernels/sampler_topp.h"

static inline float row_at(const void *row, enum fr_dtype dtype, int i) {
    return dtype == FR_DTYPE_BF16 ? bf16_to_f32(((const uint16_t *)row)[i]) : ((const float *)row)[i];
}

/* ---- checks ---- */

int sampler_check_params(const struct sampler_params *p, struct fr_err *err) {
    if (!(p->temperature >= 0.0f))
        return fr_err_set(err, "temperature must be >= 0 (got %g)", (double)p->temperature);
    if (isinf(p->temperature)) return fr_err_set(err, "temperature must be finite");
    if (!(p->top_p >= 0.0f && p->top_p <= 1.0f))
        return fr_err_set(err, "top_p must be in [0, 1] (got %g)", (double)p->top_p);
    return 0;
}

/* A row the scan flagged (or found all -inf): name the first offending index. */
static int row_error(const void *row, enum fr_dtype dtype, int n, struct fr_err *err) {
    for (int i = 0; i < n; i++) {
        float v = row_at(row, dtype, i);
        if (v != v) return fr_err_set(err, "NaN at index %d", i);
        if (v == INFINITY) return fr_err_set(err, "+inf at index %d", i);
    }
    return fr_err_set(err, "every value is -inf");
}

static int check_shape(const void *row, int n, struct fr_err *err) {
    if (!row || n < 1) return fr_err_set(err, "empty row (vocabulary %d)", n);
    return 0;
}

int sampler_check_probs(const float *probs, int n, struct fr_err *err) {
    if (check_shape(probs, n, err)) return -1;
    bool any = false;
    for (int i = 0; i < n; i++) {
        float v = probs[i];
        if (!(v >= 0.0f) || v == INFINITY)
            return fr_err_set(err, "probability %g at index %d (must be finite and >= 0)", (double)v, i);
        any |= v > 0.0f;
    }
    if (!any) return fr_err_set(err, "every probability is 0");
    return 0;
}

/* ---- greedy ---- */

int sampler_argmax(const void *row, enum fr_dtype dtype, int n, int *index, struct fr_err *err) {
    if (check_shape(row, n, err)) return -1;
    int at;
    if (sampler_ops()->argmax(row, dtype, n, &at) || row_at(row, dtype, at) == -INFINITY)
        return row_error(row, dtype, n, err);
    *index = at;
    return 0;
}

int sampler_argmax_ref(const void *row, enum fr_dtype dtype, int n, int *index, struct fr_err *err) {
    if (check_shape(row, n, err)) return -1;
    int best = -1;
    float bv = -INFINITY;
    for (int i = 0; i < n; i++) {
        float v = row_at(row, dtype, i);
        if (v != v || v == INFINITY) return row_error(row, dtype, n, err);
        if (v > bv) bv = v, best = i;
    }
    if (best < 0) return row_error(row, dtype, n, err);
    *index = best;
    return 0;
}

void sampler_exp_row(float *y, const float *x, int n) {
    sampler_ops()->exp(y, x, n);
}

/* ---- softmax ---- */

static int check_softmax(const void *row, int n, float temperature, struct fr_err *err) {
    if (check_shape(row, n, err)) return -1;
    if (!(temperature > 0.0f) || isinf(temperature))
        return fr_err_set(err, "softmax needs a finite temperature > 0 (got %g)", (double)temperature);
    return 0;
}

static const void *row_from(const void *row, enum fr_dtype dtype, int i) {
    return (const char *)row + (size_t)i * fr_dtype_size(dtype);
}

/* One softmax over the threads of a split run (sampler_split.h): the max and the exp values part by part,
 * each part's sum in lanes of its own. */
struct softmax_pass {
    const struct sampler_row_ops *ops;
    const void *row;
    enum fr_dtype dtype;
    float *e;
    int n;
    float temperature, max;
    bool bad; /* a NaN or +inf in the row */
    float part_max[SAMPLER_PARTS];
    bool part_bad[SAMPLER_PARTS];
    double part_acc[SAMPLER_PARTS][SAMPLER_LANES];
};

/* Runs each(s, k, lo, hi) for every part k = [lo, hi) that thread t of `threads` takes. */
static void each_part(struct softmax_pass *s, int t, int threads,
                      void (*each)(struct softmax_pass *, int k, int lo, int hi)) {
    int k0, k1;
    sampler_parts_of(t, threads, &k0, &k1);
    for (int k = k0; k < k1; k++) {
        int lo, hi;
        sampler_part(s->n, k, &lo, &hi);
        each(s, k, lo, hi);
    }
}

static void scan_part(struct softmax_pass *s, int k, int lo, int hi) {
    s->part_max[k] = -INFINITY;
    s->part_bad[k] =
        hi > lo && s->ops->scan(row_from(s->row, s->dtype, lo), s->dtype, hi - lo, &s->part_max[k]);
}

static void exp_part(struct softmax_pass *s, int k, int lo, int hi) {
    memset(s->part_acc[k], 0, sizeof s->part_acc[k]);
    if (hi > lo)
        s->ops->exp_sum(s->e + lo, row_from(s->row, s->dtype, lo), s->dtype, hi - lo, s->max, s->temperature,
                        s->part_acc[k], NULL);
}

static void scan_pass(void *ctx, int t, int threads) {
    each_part(ctx, t, threads, scan_part);
}

static void exp_pass(void *ctx, int t, int threads) {
    each_part(ctx, t, threads, exp_part);
}

/* The max of the row; then, unless it is bad or all -inf, the exp values. */
static void softmax_passes(void *ctx) {
    struct softmax_pass *s = ctx;
    sampler_phase(scan_pass, s);
    s->max = -INFINITY;
    for (int k = 0; k < SAMPLER_PARTS; k++) {
        s->bad |= s->part_bad[k];
        if (s->part_max[k] > s->max) s->max = s->part_max[k];
    }
    /* subtracting the max first keeps (x - m) / T <= 0 for any T > 0: no overflow, the top exp is 1 */
    if (!s->bad && s->max != -INFINITY) sampler_phase(exp_pass, s);
}

/* The softmax up to its last step: e[n] = exp((row - max) / temperature) and their sum, in double: each
 * part's sum lane by lane (lane i % 16), the parts' lanes added in part order, then the lanes pairwise; the
 * same bits on any number of threads (sampler_split.h). *sum >= 1: the max contributes exp(0). */
static int softmax_exp(float *e, const void *row, enum fr_dtype dtype, int n, float temperature, int threads,
                       double *sum, struct fr_err *err) {
    if (check_softmax(row, n, temperature, err)) return -1;
    struct softmax_pass s = {
        .ops = sampler_ops(), .row = row, .dtype = dtype, .e = e, .n = n, .temperature = temperature};
    sampler_split_run(n, threads, softmax_passes, &s);
    if (s.bad || s.max == -INFINITY) return row_error(row, dtype, n, err);
    double acc[SAMPLER_LANES] = {0};
    for (int k = 0; k < SAMPLER_PARTS; k++)
        for (int j = 0; j < SAMPLER_LANES; j++) acc[j] += s.part_acc[k][j];
    for (int w = SAMPLER_LANES / 2; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) acc[j] += acc[j + w];
    *sum = acc[0];
    return 0;
}

/* The last step: times the f32 reciprocal of the sum, as PyTorch's softmax does (a multiply instead of a
 * divide per token, half an ulp more error). */
static float softmax_scale(double sum) {
    return (float)(1.0 / sum);
}

int sampler_softmax(float *probs, const void *row, enum fr_dtype dtype, int n, float temperature, int threads,
                    struct fr_err *err) {
    double sum = 1;
    if (softmax_exp(probs, row, dtype, n, temperature, threads, &sum, err)) return -1;
    sampler_ops()->scale(probs, n, softmax_scale(sum));
    return 0;
}

int sampler_softmax_threads(int n, int threads) {
    return sampler_split_threads(n, threads);
}

int sampler_softmax_ref(float *probs, const void *row, enum fr_dtype dtype, int n, float temperature,
                        struct fr_err *err) {
    if (check_softmax(row, n, temperature, err)) return -1;
    float m = -INFINITY;
    for (int i = 0; i < n; i++) {
        float v = row_at(row, dtype, i);
        if (v != v || v == INFINITY) return row_error(row, dtype, n, err);
        if (v > m) m = v;
    }
    if (m == -INFINITY) return row_error(row, dtype, n, err);
    double sum = 0;
    for (int i = 0; i < n; i++) {
        probs[i] = expf((row_at(row, dtype, i) - m) / temperature);
        sum += probs[i];
    }
    for (int i = 0; i < n; i++) probs[i] = (float)(probs[i] / sum);
    return 0;
}

/* ---- Philox4x32-10 and the draw ---- */

void sampler_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u; /* Weyl key schedule */
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

double sampler_uniform(uint64_t seed, uint64_t step) {
    const uint32_t ctr[4] = {(uint32_t)step, (uint32_t)(step >> 32), 0, 0};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t out[4];
    sampler_philox4x32_10(ctr, key, out);
    uint64_t bits = (((uint64_t)out[0] << 32) | out[1]) >> 11; /* 53 bits */
    return (double)bits * 0x1p-53;
}

/* Inside block b, token by token: the block's own sum crossed the target, so if rounding keeps these
 * partial sums short of it, its last positive token is the one. */
static int draw_in_block(const float *probs, int n, int b, double before, double target, int last) {
    double c = before;
    int end = b * 16 + 16 < n ? b * 16 + 16 : n, pick = -1;
    for (int i = b * 16; i < end; i++) {
        if (!(probs[i] > 0.0f)) continue;
        c += probs[i];
        pick = i;
        if (c > target) return i;
    }
    return pick >= 0 ? pick : last;
}

int sampler_draw(const float *probs, int n, double u) {
    if (!probs || n < 1) return -1;
    const struct sampler_row_ops *ops = sampler_ops();
    int last;
    double total = ops->draw_total(probs, n, &last), before = 0;
    if (last < 0) return -1;
    int b = ops->draw_block(probs, n, u * total, &before);
    if (b < 0) return last; /* u * total rounded up to total: the end of the CDF */
    return draw_in_block(probs, n, b, before, u * total, last);
}

/* sampler_draw over block sums the filter already has: the same running sum, block by block */
static int draw_blocks(const float *probs, int n, double u, const struct sampler_draw_blocks *db) {
    if (db->last < 0) return -1;
    double target = u * db->total, c = 0;
    for (int b = 0; b * 16 < n; b++) {
        double next = c + db->sums[b];
        if (next > target) return draw_in_block(probs, n, b, c, target, db->last);
        c = next;
    }
    return db->last;
}

/* ---- the chain ---- */

size_t sampler_scratch_bytes(int vocab) {
    if (vocab < 1) vocab = 1;
    size_t blocks = sizeof(double) * (((size_t)vocab + 15) / 16);
    return 64 + (size_t)vocab * sizeof(float) + 64 + blocks + 64 + sampler_top_p_scratch_bytes(vocab);
}

static void *align64(void *p) {
    return (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

int sampler_pick_row(const void *row, enum fr_dtype dtype, int vocab, const struct sampler_params *p,
                     uint64_t step, void *scratch, int threads, int *token, struct fr_err *err) {
    if (sampler_check_params(p, err)) return -1;
    if (p->temperature == 0.0f) return sampler_argmax(row, dtype, vocab, token, err);
    if (check_shape(row, vocab, err)) return -1;
    if (!scratch) return fr_err_set(err, "no scratch buffer");
    float *probs = align64(scratch);
    double *sums = align64(probs + vocab);
    void *work = align64(sums + (vocab + 15) / 16);
    /* The pieces fused where one pass can feed the next: the filter's first pass scales the exp values into
     * probabilities, its last pass leaves the draw its block sums. Bit for bit the separate pieces
     * (tests/test_sampler.c, `verify` sampler.pick). */
    double sum = 1;
    if (softmax_exp(probs, row, dtype, vocab, p->temperature, threads, &sum, err)) return -1;
    struct sampler_topp_in in = {probs, probs, softmax_scale(sum), NULL, sum, NULL};
    struct sampler_draw_blocks db = {sums, -1, -1};
    sampler_top_p_fast_fused(probs, &in, vocab, p->top_p, work, &db);
    double u = sampler_uniform(p->seed, step);
    int t = db.total >= 0 ? draw_blocks(probs, vocab, u, &db) : sampler_draw(probs, vocab, u);
    if (t < 0) return fr_err_set(err, "no token with positive probability");
    *token = t;
    return 0;
}

int sampler_pick(const float *logits, int vocab, const struct sampler_params *p, uint64_t step, void *scratch,
                 int threads, int *token, struct fr_err *err) {
    return sampler_pick_row(logits, FR_DTYPE_F32, vocab, p, step, scratch, threads, token, err);
}
