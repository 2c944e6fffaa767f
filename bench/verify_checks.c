/* The verify table: each optimized piece against its plain reference on seeded data (the llm.c habit),
 * with the measured error in the line. The first check is the sampling chapter's: 64 seeded logit rows at
 * Qwen3's vocabulary, the fast nucleus filter against the sort-based one, and 64 seeded draws from both.
 * Inputs come from bench/sampler_rows.c, so every run checks the same rows. */
#include "bench/verify_checks.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sampler_rows.h"
#include "kernels/sampler.h"

#define QWEN3_VOCAB 151936

const char *verify_status_name(enum verify_status s) {
    return s == VERIFY_PASSED ? "PASSED" : s == VERIFY_FAILED ? "FAILED" : "SKIPPED";
}

static enum verify_status out_of_memory(char *detail, size_t cap) {
    snprintf(detail, cap, "out of memory");
    return VERIFY_FAILED;
}

/* Fast and reference top-p over `rows` seeded rows; max |fast - ref| over every probability, and how many
 * of the seeded draws (one per row, step = row) land on the same token. */
struct topp_run {
    int n, rows;
    float temperature, top_p; /* top_p < 0: a seeded mix per row */
    bool mix_kinds, bf16;
};

static enum verify_status topp_compare(const struct topp_run *r, const char *what, char *detail, size_t cap) {
    int n = r->n;
    float *logits = malloc(sizeof(float) * (size_t)n), *probs = malloc(sizeof(float) * (size_t)n);
    float *fast = malloc(sizeof(float) * (size_t)n), *ref = malloc(sizeof(float) * (size_t)n);
    uint16_t *h = malloc(sizeof(uint16_t) * (size_t)n);
    void *scratch = malloc(sampler_top_p_scratch_bytes(n));
    if (!logits || !probs || !fast || !ref || !h || !scratch) {
        free(logits), free(probs), free(fast), free(ref), free(h), free(scratch);
        return out_of_memory(detail, cap);
    }
    static const float mix[] = {0.0f, 0.5f, 0.8f, 0.9f, 0.95f, 0.99f, 0.999f, 1.0f};
    double max_diff = 0;
    int same = 0, sizes_differ = 0, bits_differ = 0, kmin = n, kmax = 0;
    uint64_t seed = 0x5eed;
    for (int row = 0; row < r->rows; row++) {
        enum sampler_row_kind kind =
            r->mix_kinds ? (enum sampler_row_kind)(row % SAMPLER_ROW_KIND_COUNT) : SAMPLER_ROW_REALISTIC;
        sampler_rows_fill(logits, n, kind, 8000 + (uint64_t)row);
        float top_p = r->top_p >= 0 ? r->top_p : mix[sampler_rows_next(&seed) % (sizeof mix / sizeof mix[0])];
        const void *src = logits;
        if (r->bf16) {
            for (int i = 0; i < n; i++) h[i] = bf16_from_f32(logits[i]);
            src = h;
        }
        if (sampler_softmax(probs, src, r->bf16 ? FR_DTYPE_BF16 : FR_DTYPE_F32, n, r->temperature, NULL)) {
            snprintf(detail, cap, "%s: softmax failed on row %d", what, row);
            same = -1;
            break;
        }
        int kf = sampler_top_p_fast_into(fast, probs, n, top_p, scratch);
        int kr = sampler_top_p_ref_into(ref, probs, n, top_p, scratch);
        sizes_differ += kf != kr;
        kmin = kr < kmin ? kr : kmin;
        kmax = kr > kmax ? kr : kmax;
        for (int i = 0; i < n; i++) {
            double d = fabs((double)fast[i] - ref[i]);
            max_diff = d > max_diff ? d : max_diff;
        }
        bits_differ += memcmp(fast, ref, sizeof(float) * (size_t)n) != 0; /* also -0 vs +0, NaN */
        double u = sampler_uniform(0xC0FFEE, (uint64_t)row);
        same += sampler_draw(fast, n, u) == sampler_draw(ref, n, u);
    }
    free(logits), free(probs), free(fast), free(ref), free(h), free(scratch);
    if (same < 0) return VERIFY_FAILED;
    bool ok = max_diff == 0 && bits_differ == 0 && same == r->rows && sizes_differ == 0;
    char tp[32];
    if (r->top_p >= 0)
        snprintf(tp, sizeof tp, "%g", (double)r->top_p);
    else
        snprintf(tp, sizeof tp, "mix");
    snprintf(detail, cap,
             "%s: %d rows x %d%s, T %g, top_p %s, nucleus %d..%d: max |fast - sort| %.2e, %d rows not "
             "bitwise equal, draws agree %d/%d",
             what, r->rows, n, r->bf16 ? " bf16" : "", (double)r->temperature, tp, kmin, kmax, max_diff,
             bits_differ, same, r->rows);
    return ok ? VERIFY_PASSED : VERIFY_FAILED;
}

static enum verify_status check_topp_chapter(char *detail, size_t cap) {
    struct topp_run r = {QWEN3_VOCAB, 64, 0.8f, 0.9f, false, false};
    return topp_compare(&r, "top-p fast vs sort", detail, cap);
}

static enum verify_status check_topp_mix(char *detail, size_t cap) {
    struct topp_run r = {32000, 64, 1.0f, -1.0f, true, true};
    return topp_compare(&r, "top-p fast vs sort, realistic/flat/tied rows", detail, cap);
}

/* The instruction sets this CPU runs up to the kernels' (--isa caps them), scalar first; names them in *what.
 */
static int isa_list(enum kernel_isa *isas, char *what, size_t cap) {
    int k = 0;
    size_t len = 0;
    what[0] = 0;
    for (int i = 0; i <= (int)kernel_isa_active(); i++) {
        if (sampler_isa_force((enum kernel_isa)i) != 0) continue;
        isas[k++] = (enum kernel_isa)i;
        len += (size_t)snprintf(what + len, cap > len ? cap - len : 0, "%s%s", k > 1 ? "+" : "",
                                sampler_isa_name((enum kernel_isa)i));
    }
    sampler_isa_force(kernel_isa_active()); /* the ISA the run is pinned to */
    return k;
}

static enum verify_status check_greedy(char *detail, size_t cap) {
    int n = QWEN3_VOCAB, rows = 32, bad = 0;
    float *x = malloc(sizeof(float) * (size_t)n);
    uint16_t *h = malloc(sizeof(uint16_t) * (size_t)n);
    if (!x || !h) {
        free(x), free(h);
        return out_of_memory(detail, cap);
    }
    enum kernel_isa isas[KERNEL_ISA_COUNT];
    char names[64];
    int ni = isa_list(isas, names, sizeof names);
    for (int row = 0; row < rows; row++) {
        sampler_rows_fill(x, n, (enum sampler_row_kind)(row % SAMPLER_ROW_KIND_COUNT), 9000 + (uint64_t)row);
        for (int i = 0; i < n; i++) h[i] = bf16_from_f32(x[i]);
        int ref = -1, refh = -1;
        sampler_argmax_ref(x, FR_DTYPE_F32, n, &ref, NULL);
        sampler_argmax_ref(h, FR_DTYPE_BF16, n, &refh, NULL);
        for (int k = 0; k < ni; k++) {
            sampler_isa_force(isas[k]);
            int a = -2, b = -2;
            sampler_argmax(x, FR_DTYPE_F32, n, &a, NULL);
            sampler_argmax(h, FR_DTYPE_BF16, n, &b, NULL);
            bad += (a != ref) + (b != refh);
        }
    }
    sampler_isa_force(kernel_isa_active());
    free(x), free(h);
    snprintf(detail, cap, "greedy argmax vs reference: %d rows x %d, f32 and bf16, %s: %d mismatches", rows,
             n, names, bad);
    return bad ? VERIFY_FAILED : VERIFY_PASSED;
}

static enum verify_status check_softmax(char *detail, size_t cap) {
    int n = QWEN3_VOCAB, rows = 16;
    float *x = malloc(sizeof(float) * (size_t)n), *a = calloc((size_t)n, sizeof(float));
    float *b = calloc((size_t)n, sizeof(float)), *ref = calloc((size_t)n, sizeof(float));
    if (!x || !a || !b || !ref) {
        free(x), free(a), free(b), free(ref);
        return out_of_memory(detail, cap);
    }
    enum kernel_isa isas[KERNEL_ISA_COUNT];
    char names[64];
    int ni = isa_list(isas, names, sizeof names), isa_diff = 0;
    double worst = 0;
    for (int row = 0; row < rows; row++) {
        sampler_rows_fill(x, n, (enum sampler_row_kind)(row % SAMPLER_ROW_KIND_COUNT), 9100 + (uint64_t)row);
        float t = row % 2 ? 0.8f : 1.3f;
        sampler_softmax_ref(ref, x, FR_DTYPE_F32, n, t, NULL);
        for (int k = 0; k < ni; k++) {
            sampler_isa_force(isas[k]);
            sampler_softmax(k ? b : a, x, FR_DTYPE_F32, n, t, NULL);
            if (k) isa_diff += memcmp(a, b, sizeof(float) * (size_t)n) != 0;
        }
        for (int i = 0; i < n; i++)
            if (ref[i] >= FLT_MIN) {
                double rel = fabs((double)a[i] - ref[i]) / ref[i];
                worst = rel > worst ? rel : worst;
            }
    }
    sampler_isa_force(kernel_isa_active());
    free(x), free(a), free(b), free(ref);
    snprintf(detail, cap,
             "softmax vs expf/double reference: %d rows x %d: max rel err %.2e (bound 1e-06); %s %s", rows, n,
             worst, names, isa_diff ? "differ" : "bitwise equal");
    return worst <= 1e-6 && isa_diff == 0 ? VERIFY_PASSED : VERIFY_FAILED;
}

static enum verify_status check_exp(char *detail, size_t cap) {
    double worst_ulp = 0, worst_sub = 0;
    float at = 0;
    long count = 0;
    for (uint32_t u = 0x80000000u; u <= 0xC2D00000u; u += 31, count++) { /* every 31st f32 in [-104, -0] */
        float x;
        memcpy(&x, &u, sizeof x);
        double exact = exp((double)x), got = sampler_exp(x);
        if (exact >= FLT_MIN) {
            int e;
            frexp(exact, &e);
            double err = fabs(got - exact) / ldexp(1.0, e - 24);
            if (err > worst_ulp) worst_ulp = err, at = x;
        } else {
            double err = fabs(got - exact) / 0x1p-149;
            worst_sub = err > worst_sub ? err : worst_sub;
        }
    }
    snprintf(detail, cap,
             "sampler exp vs double exp: %ld points in [-104, 0]: max %.3f ulp (at %.7g), %.3f subnormal "
             "steps (bounds %d, 1)",
             count, worst_ulp, (double)at, worst_sub, SAMPLER_EXP_MAX_ULP);
    return worst_ulp <= SAMPLER_EXP_MAX_ULP && worst_sub <= 1.0 ? VERIFY_PASSED : VERIFY_FAILED;
}

const uint32_t verify_philox_kat[3][10] = {
    {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
    {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e,
     0xa20bc7c6, 0x6d5451fd},
    {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb,
     0x5001e420, 0x24126ea1},
};

static enum verify_status check_philox(char *detail, size_t cap) {
    const uint32_t(*kat)[10] = verify_philox_kat;
    int ok = 0;
    for (int k = 0; k < 3; k++) {
        uint32_t out[4];
        sampler_philox4x32_10(kat[k], kat[k] + 4, out);
        ok += memcmp(out, kat[k] + 6, sizeof out) == 0;
    }
    snprintf(detail, cap, "Philox4x32-10 vs Random123 known-answer vectors: %d/3", ok);
    return ok == 3 ? VERIFY_PASSED : VERIFY_FAILED;
}

static enum verify_status check_draw(char *detail, size_t cap) {
    int n = QWEN3_VOCAB, rows = 16, draws = 256, zero = 0, isa_diff = 0;
    float *x = malloc(sizeof(float) * (size_t)n), *p = malloc(sizeof(float) * (size_t)n);
    void *scratch = malloc(sampler_top_p_scratch_bytes(n));
    if (!x || !p || !scratch) {
        free(x), free(p), free(scratch);
        return out_of_memory(detail, cap);
    }
    enum kernel_isa isas[KERNEL_ISA_COUNT];
    char names[64];
    int ni = isa_list(isas, names, sizeof names);
    for (int row = 0; row < rows; row++) {
        sampler_rows_fill(x, n, (enum sampler_row_kind)(row % SAMPLER_ROW_KIND_COUNT), 9200 + (uint64_t)row);
        sampler_softmax(p, x, FR_DTYPE_F32, n, 1.0f, NULL);
        sampler_top_p_fast(p, n, row % 4 == 0 ? 1.0f : 0.9f, scratch);
        for (int d = 0; d < draws; d++) {
            double u = d == 0 ? 1.0 - 0x1p-53 : sampler_uniform((uint64_t)row, (uint64_t)d);
            int t[KERNEL_ISA_COUNT] = {-1, -1, -1};
            for (int k = 0; k < ni; k++) {
                sampler_isa_force(isas[k]);
                t[k] = sampler_draw(p, n, u);
            }
            zero += t[0] < 0 || !(p[t[0]] > 0.0f);
            for (int k = 1; k < ni; k++) isa_diff += t[k] != t[0];
        }
    }
    sampler_isa_force(kernel_isa_active());
    free(x), free(p), free(scratch);
    snprintf(detail, cap, "draw: %d draws over %d filtered rows: %d zero-probability tokens; %s %s",
             rows * draws, rows, zero, names, isa_diff ? "differ" : "agree on every draw");
    return zero == 0 && isa_diff == 0 ? VERIFY_PASSED : VERIFY_FAILED;
}

static enum verify_status check_simd_available(char *detail, size_t cap) {
    enum kernel_isa best = sampler_isa_best(), used = kernel_isa_active();
    if (used != KERNEL_ISA_AVX512) {
        snprintf(detail, cap, "sampler avx512 path: %s, using %s (same bits)",
                 best == KERNEL_ISA_AVX512 ? "not used (--isa)" : "CPU lacks AVX-512 F/BW/VL/DQ",
                 sampler_isa_name(used));
        return VERIFY_SKIPPED;
    }
    snprintf(detail, cap, "sampler avx512 path: in use (checked against scalar above)");
    return VERIFY_PASSED;
}

const struct verify_check verify_checks[] = {
    {"sampler.top_p", check_topp_chapter},
    {"sampler.top_p_mix", check_topp_mix},
    {"sampler.greedy", check_greedy},
    {"sampler.softmax", check_softmax},
    {"sampler.exp", check_exp},
    {"sampler.philox", check_philox},
    {"sampler.draw", check_draw},
    {"sampler.simd", check_simd_available},
};
const int verify_check_count = (int)(sizeof verify_checks / sizeof verify_checks[0]);
