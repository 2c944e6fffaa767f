/* The sampler's bottom layer: the exp of the softmax, the scalar row passes (the portable path, and the
 * definition the AVX2 and AVX-512 passes of sampler_simd_body.h repeat operation for operation), and the
 * dispatch that picks a table for the CPU. Checked in tests/test_sampler*.c and by `verify`
 * (sampler.simd): every pass of every ISA against these, bit for bit; the exp against double exp. */
#include <math.h>
#include <string.h>

#include "kernels/sampler.h"
#include "kernels/sampler_simd.h"

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
        bad |= !(v < INFINITY);
        m = v > m ? v : m;
    }
    *max = m;
    return bad;
}

static bool argmax_scalar(const void *row, enum fr_dtype dtype, int n, int *index) {
    float m = -INFINITY;
    int at = n - 1;
    bool bad = false;
    for (int i = 0; i < n; i++) {
        float v = row_at(row, dtype, i);
        bad |= !(v < INFINITY);
        if (v > m) m = v, at = i;
    }
    *index = at;
    return bad;
}

static void levels_add(double *bucket, float v) {
    /* each value lands in the bucket of the highest level it reaches; level j sums buckets 0..j */
    int below = 127 - (int)(sampler_key(v) >> 23); /* binades below 1 */
    int j = below <= SAMPLER_LEVEL_STEP ? 0 : (below + SAMPLER_LEVEL_STEP - 1) / SAMPLER_LEVEL_STEP - 1;
    bucket[j < SAMPLER_LEVELS ? j : SAMPLER_LEVELS] += v;
}

static void levels_out(const double *bucket, float *mass) {
    double run = 0;
    for (int j = 0; j < SAMPLER_LEVELS; j++) mass[j] = (float)(run += bucket[j]);
}

static void exp_sum_scalar(float *e, const void *row, enum fr_dtype dtype, int n, float m, float t,
                           double *acc, float *mass) {
    double bucket[SAMPLER_LEVELS + 1] = {0};
    for (int i = 0; i < n; i++) {
        float v = sampler_exp((row_at(row, dtype, i) - m) / t);
        e[i] = v;
        acc[i % SAMPLER_LANES] += v;
        if (mass) levels_add(bucket, v);
    }
    if (mass) levels_out(bucket, mass);
}

static void exp_scalar(float *y, const float *x, int n) {
    for (int i = 0; i < n; i++) y[i] = sampler_exp(x[i]);
}

static void levels_scalar(const float *p, int n, float *mass) {
    double bucket[SAMPLER_LEVELS + 1] = {0};
    for (int i = 0; i < n; i++) levels_add(bucket, p[i]);
    levels_out(bucket, mass);
}

static void scale_scalar(float *p, int n, float r) {
    for (int i = 0; i < n; i++) p[i] = p[i] * r;
}

static int collect_scalar(uint32_t *ids, uint32_t *keys, const float *p, int n, uint32_t lo, uint32_t hi) {
    int m = 0;
    for (int i = 0; i < n; i++) {
        uint32_t k = sampler_key(p[i]);
        ids[m] = (uint32_t)i;
        if (keys) keys[m] = k;
        m += (k >= lo) & (k < hi);
    }
    return m;
}

static int select_keys_scalar(uint32_t *ids_out, uint32_t *keys_out, const uint32_t *ids,
                              const uint32_t *keys, int n, uint32_t lo, uint32_t hi) {
    int m = 0;
    for (int i = 0; i < n; i++) {
        ids_out[m] = ids[i], keys_out[m] = keys[i];
        m += (keys[i] >= lo) & (keys[i] < hi);
    }
    return m;
}

static int collect_top_scalar(uint32_t *ids, const float *p, float *scaled, float r, int n, uint32_t t,
                              int *below) {
    if (scaled) {
        for (int i = 0; i < n; i++) scaled[i] = p[i] * r;
        p = scaled;
    }
    int best = -1;
    uint32_t bk = 0;
    for (int i = 0; i < n; i++) {
        uint32_t k = sampler_key(p[i]);
        if (k < t && (best < 0 || k > bk)) best = i, bk = k;
    }
    *below = best;
    return collect_scalar(ids, NULL, p, n, t, 0x80000000u);
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

static void finish_scalar(float *out, const float *p, int n, uint32_t kc, int ic, float kf, double *blocks,
                          double *total, int *last) {
    for (int i = 0; i < n; i++) {
        uint32_t k = sampler_key(p[i]);
        bool kept = k > kc || (k == kc && i <= ic);
        out[i] = kept ? p[i] / kf : 0.0f;
    }
    if (!blocks) return;
    float pad[16];
    *total = draw_total_scalar(out, n, last);
    for (int b = 0; b * 16 < n; b++) { /* a block with no positive token: exactly 0 */
        const float *v = block16(out, n, b, pad);
        bool pos = false;
        for (int j = 0; j < 16; j++) pos |= v[j] > 0.0f;
        blocks[b] = pos ? sampler_block_sum16(v) : 0.0;
    }
}

const struct sampler_row_ops sampler_ops_scalar = {
    .scan = scan_scalar,
    .argmax = argmax_scalar,
    .exp_sum = exp_sum_scalar,
    .exp = exp_scalar,
    .scale = scale_scalar,
    .levels = levels_scalar,
    .collect = collect_scalar,
    .collect_top = collect_top_scalar,
    .select_keys = select_keys_scalar,
    .min_in_range = min_in_range_scalar,
    .draw_total = draw_total_scalar,
    .draw_block = draw_block_scalar,
    .finish = finish_scalar,
    .bin_sums = NULL, /* sampler_topp.c's histogram: eight interleaved copies, the fast scalar form */
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

const struct sampler_row_ops *sampler_ops_for(enum kernel_isa isa) {
    if (!cpu_runs(isa)) return NULL;
    return isa == KERNEL_ISA_AVX512 ? &sampler_ops_avx512
           : isa == KERNEL_ISA_AVX2 ? &sampler_ops_avx2
                                    : &sampler_ops_scalar;
}

const struct sampler_row_ops *sampler_ops(void) {
    enum kernel_isa isa = sampler_isa_active();
    return isa == KERNEL_ISA_AVX512 ? &sampler_ops_avx512
           : isa == KERNEL_ISA_AVX2 ? &sampler_ops_avx2
                                    : &sampler_ops_scalar;
}
