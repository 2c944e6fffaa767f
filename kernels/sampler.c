/* Sampler core: parameter and row checks, greedy argmax, the f32 softmax with its own exp, Philox4x32-10,
 * the inverse-CDF draw and sampler_pick, which chains them. The scalar row passes here are the portable
 * path; sampler_avx512.c repeats them operation for operation, so every machine picks the same token.
 * Checked in tests/test_sampler.c: argmax and softmax against the plain _ref twins, exp against double
 * exp, Philox against the Random123 known-answer vectors, every path against the others bit for bit. */
#include "kernels/sampler.h"

#include <math.h>
#include <string.h>

#include "kernels/sampler_simd.h"

/* ---- element access ---- */

static inline float row_at(const void *row, enum fr_dtype dtype, int i) {
    return dtype == FR_DTYPE_BF16 ? bf16_to_f32(((const uint16_t *)row)[i]) : ((const float *)row)[i];
}

static inline float f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- the exp of the softmax (x <= 0) ---- */

float sampler_exp(float x) {
    if (!(x >= SAMPLER_EXP_LO)) return 0.0f;
    float n = (x * SAMPLER_LOG2E + SAMPLER_ROUND_MAG) - SAMPLER_ROUND_MAG;
    float r = x - n * SAMPLER_LN2_HI;
    r = r - n * SAMPLER_LN2_LO;
    float z = r * r;
    float y = SAMPLER_EXP_P0;
    y = y * r + SAMPLER_EXP_P1;
    y = y * r + SAMPLER_EXP_P2;
    y = y * r + SAMPLER_EXP_P3;
    y = y * r + SAMPLER_EXP_P4;
    y = y * r + SAMPLER_EXP_P5;
    y = y * z + r;
    y = y + 1.0f;
    /* 2^n in two normal factors so results down to the smallest subnormal round once */
    int ni = (int)n;
    int n1 = -((-ni) >> 1), n2 = ni - n1;
    return (y * f32_from_bits((uint32_t)(n1 + 127) << 23)) * f32_from_bits((uint32_t)(n2 + 127) << 23);
}

/* ---- scalar row passes ---- */

static bool scan_scalar(const void *row, enum fr_dtype dtype, int n, float *max) {
    float m = -INFINITY;
    bool bad = false;
    for (int i = 0; i < n; i++) {
        float v = row_at(row, dtype, i);
        bad |= (v != v) | (v == INFINITY);
        m = v > m ? v : m;
    }
    *max = m;
    return bad;
}

static int find_scalar(const void *row, enum fr_dtype dtype, int n, float v) {
    for (int i = 0; i < n; i++)
        if (row_at(row, dtype, i) == v) return i;
    return n - 1;
}

static void exp_sum_scalar(float *e, const void *row, enum fr_dtype dtype, int n, float m, float t,
                           double *acc) {
    for (int i = 0; i < n; i++) {
        float v = sampler_exp((row_at(row, dtype, i) - m) / t);
        e[i] = v;
        acc[i % SAMPLER_LANES] += v;
    }
}

static void levels_scalar(const float *p, int n, float *mass) {
    /* each value lands in the bucket of the highest level it reaches; level j sums buckets 0..j */
    double bucket[SAMPLER_LEVELS + 1] = {0};
    for (int i = 0; i < n; i++) {
        int below = 127 - (int)(sampler_key(p[i]) >> 23); /* binades below 1 */
        int j = below <= SAMPLER_LEVEL_STEP ? 0 : (below + SAMPLER_LEVEL_STEP - 1) / SAMPLER_LEVEL_STEP - 1;
        bucket[j < SAMPLER_LEVELS ? j : SAMPLER_LEVELS] += p[i];
    }
    double run = 0;
    for (int j = 0; j < SAMPLER_LEVELS; j++) mass[j] = (float)(run += bucket[j]);
}

static void scale_scalar(float *p, int n, float r, float *mass) {
    for (int i = 0; i < n; i++) p[i] = p[i] * r;
    if (mass) levels_scalar(p, n, mass);
}

static int collect_scalar(uint32_t *ids, const float *p, int n, uint32_t lo, uint32_t hi) {
    int m = 0;
    for (int i = 0; i < n; i++) {
        uint32_t k = sampler_key(p[i]);
        ids[m] = (uint32_t)i;
        m += (k >= lo) & (k < hi);
    }
    return m;
}

static int collect_top_scalar(uint32_t *ids, const float *p, int n, uint32_t t, int *below) {
    int best = -1;
    uint32_t bk = 0;
    for (int i = 0; i < n; i++) {
        uint32_t k = sampler_key(p[i]);
        if (k < t && (best < 0 || k > bk)) best = i, bk = k;
    }
    *below = best;
    return collect_scalar(ids, p, n, t, 0x80000000u);
}

static int min_in_range_scalar(const float *p, int n, uint32_t lo, uint32_t hi) {
    int best = -1;
    uint32_t bk = 0;
    for (int i = 0; i < n; i++) {
        uint32_t k = sampler_key(p[i]);
        if (k >= lo && k < hi && (best < 0 || k <= bk)) best = i, bk = k;
    }
    return best;
}

/* block b of p as 16 values, zero-padded past n */
static inline const float *block16(const float *p, int n, int b, float *pad) {
    if ((b + 1) * 16 <= n) return p + b * 16;
    for (int j = 0; j < 16; j++) pad[j] = b * 16 + j < n ? p[b * 16 + j] : 0.0f;
    return pad;
}

static double draw_total_scalar(const float *p, int n, int *last) {
    double total = 0;
    float pad[16];
    *last = -1;
    for (int b = 0; b * 16 < n; b++) total += sampler_block_sum16(block16(p, n, b, pad));
    for (int i = n - 1; i >= 0 && *last < 0; i--)
        if (p[i] > 0.0f) *last = i;
    return total;
}

static int draw_block_scalar(const float *p, int n, double target, double *before) {
    double c = 0;
    float pad[16];
    for (int b = 0; b * 16 < n; b++) {
        double next = c + sampler_block_sum16(block16(p, n, b, pad));
        if (next > target) {
            *before = c;
            return b;
        }
        c = next;
    }
    return -1;
}

static void finish_scalar(float *out, const float *p, int n, uint32_t kc, int ic, float kf, double *total,
                          int *last) {
    for (int i = 0; i < n; i++) {
        uint32_t k = sampler_key(p[i]);
        bool kept = k > kc || (k == kc && i <= ic);
        out[i] = kept ? p[i] / kf : 0.0f;
    }
    if (total) *total = draw_total_scalar(out, n, last);
}

const struct sampler_row_ops sampler_ops_scalar = {
    scan_scalar,       find_scalar,       exp_sum_scalar,     scale_scalar,
    levels_scalar,     collect_scalar,    collect_top_scalar, min_in_range_scalar,
    draw_total_scalar, draw_block_scalar, finish_scalar,
};

/* ---- dispatch: the best of AVX-512, AVX2, scalar the CPU runs; tests pin one ---- */

static int isa_forced = -1;

static bool cpu_runs(enum kernel_isa isa) {
    __builtin_cpu_init();
    switch (isa) {
    case KERNEL_ISA_SCALAR:
        return true;
    case KERNEL_ISA_AVX2:
        return __builtin_cpu_supports("avx2");
    case KERNEL_ISA_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    default:
        return false;
    }
}

enum kernel_isa sampler_isa_best(void) {
    return cpu_runs(KERNEL_ISA_AVX512) ? KERNEL_ISA_AVX512
           : cpu_runs(KERNEL_ISA_AVX2) ? KERNEL_ISA_AVX2
                                       : KERNEL_ISA_SCALAR;
}

enum kernel_isa sampler_isa_active(void) {
    return isa_forced >= 0 ? (enum kernel_isa)isa_forced : sampler_isa_best();
}

int sampler_isa_force(enum kernel_isa isa) {
    if (isa == KERNEL_ISA_COUNT) {
        isa_forced = -1;
        return 0;
    }
    if (!cpu_runs(isa)) return -1;
    isa_forced = (int)isa;
    return 0;
}

const char *sampler_isa_name(enum kernel_isa isa) {
    return isa == KERNEL_ISA_AVX512 ? "avx512" : isa == KERNEL_ISA_AVX2 ? "avx2" : "scalar";
}

const struct sampler_row_ops *sampler_ops(void) {
    enum kernel_isa isa = sampler_isa_active();
    return isa == KERNEL_ISA_AVX512 ? &sampler_ops_avx512
           : isa == KERNEL_ISA_AVX2 ? &sampler_ops_avx2
                                    : &sampler_ops_scalar;
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
    const struct sampler_row_ops *ops = sampler_ops();
    float m;
    if (ops->scan(row, dtype, n, &m) || m == -INFINITY) return row_error(row, dtype, n, err);
    *index = ops->find(row, dtype, n, m);
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

/* ---- softmax ---- */

static int check_softmax(const void *row, int n, float temperature, struct fr_err *err) {
    if (check_shape(row, n, err)) return -1;
    if (!(temperature > 0.0f) || isinf(temperature))
        return fr_err_set(err, "softmax needs a finite temperature > 0 (got %g)", (double)temperature);
    return 0;
}

/* the softmax; with levels, also the top-p pre-filter's level masses of the result, in the last pass */
static int softmax_levels(float *probs, const void *row, enum fr_dtype dtype, int n, float temperature,
                          float *levels, struct fr_err *err) {
    if (check_softmax(row, n, temperature, err)) return -1;
    const struct sampler_row_ops *ops = sampler_ops();
    float m;
    if (ops->scan(row, dtype, n, &m) || m == -INFINITY) return row_error(row, dtype, n, err);
    /* subtracting the max first keeps (x - m) / T <= 0 for any T > 0: no overflow, the top exp is 1 */
    double acc[SAMPLER_LANES] = {0};
    ops->exp_sum(probs, row, dtype, n, m, temperature, acc);
    for (int w = SAMPLER_LANES / 2; w >= 1; w /= 2)
        for (int j = 0; j < w; j++) acc[j] += acc[j + w];
    /* times the f32 reciprocal of the sum (>= 1: the max element contributes exp(0)), as PyTorch's
     * softmax does: a multiply instead of a divide per token, half an ulp more error */
    ops->scale(probs, n, (float)(1.0 / acc[0]), levels);
    return 0;
}

int sampler_softmax(float *probs, const void *row, enum fr_dtype dtype, int n, float temperature,
                    struct fr_err *err) {
    return softmax_levels(probs, row, dtype, n, temperature, NULL, err);
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

int sampler_draw_given(const float *probs, int n, double u, double total, int last) {
    if (last < 0) return -1;
    double before = 0;
    int b = sampler_ops()->draw_block(probs, n, u * total, &before);
    if (b < 0) return last; /* u * total rounded up to total: the end of the CDF */
    /* inside the block, token by token; the block's own sum crossed the target, so if rounding keeps
     * these partial sums short of it, its last positive token is the one */
    double c = before;
    int end = b * 16 + 16 < n ? b * 16 + 16 : n, pick = -1;
    for (int i = b * 16; i < end; i++) {
        if (!(probs[i] > 0.0f)) continue;
        c += probs[i];
        pick = i;
        if (c > u * total) return i;
    }
    return pick >= 0 ? pick : last;
}

int sampler_draw(const float *probs, int n, double u) {
    if (!probs || n < 1) return -1;
    int last;
    double total = sampler_ops()->draw_total(probs, n, &last);
    return sampler_draw_given(probs, n, u, total, last);
}

/* ---- the chain ---- */

size_t sampler_scratch_bytes(int vocab) {
    if (vocab < 1) vocab = 1;
    return 64 + (size_t)vocab * sizeof(float) + 64 + sampler_top_p_scratch_bytes(vocab);
}

static void *align64(void *p) {
    return (void *)(((uintptr_t)p + 63) & ~(uintptr_t)63);
}

int sampler_pick_row(const void *row, enum fr_dtype dtype, int vocab, const struct sampler_params *p,
                     uint64_t step, void *scratch, int *token, struct fr_err *err) {
    if (sampler_check_params(p, err)) return -1;
    if (p->temperature == 0.0f) return sampler_argmax(row, dtype, vocab, token, err);
    if (check_shape(row, vocab, err)) return -1;
    if (!scratch) return fr_err_set(err, "no scratch buffer");
    float *probs = align64(scratch);
    void *work = align64(probs + vocab);
    /* the pieces fused where one pass can feed the next: the softmax's last pass measures the top-p
     * pre-filter levels, the filter's last pass sums the draw's blocks */
    float levels[SAMPLER_LEVELS];
    if (softmax_levels(probs, row, dtype, vocab, p->temperature, levels, err)) return -1;
    double u = sampler_uniform(p->seed, step), total = -1;
    int last = -1, t;
    sampler_top_p_fast_fused(probs, probs, vocab, p->top_p, work, levels, &total, &last);
    t = total >= 0 ? sampler_draw_given(probs, vocab, u, total, last) : sampler_draw(probs, vocab, u);
    if (t < 0) return fr_err_set(err, "no token with positive probability");
    *token = t;
    return 0;
}

int sampler_pick(const float *logits, int vocab, const struct sampler_params *p, uint64_t step, void *scratch,
                 int *token, struct fr_err *err) {
    return sampler_pick_row(logits, FR_DTYPE_F32, vocab, p, step, scratch, token, err);
}
