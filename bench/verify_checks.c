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
#include "model/prefill_check.h"

#define QWEN3_VOCAB 151936

const char *verify_status_name(enum verify_status s) {
    static const char *const names[VERIFY_STATUS_COUNT] = {"PASSED", "FAILED", "SKIPPED", "MEASURED"};
    return (unsigned)s < VERIFY_STATUS_COUNT ? names[s] : "?";
}

static enum verify_status out_of_memory(char *detail, size_t cap) {
    snprintf(detail, cap, "out of memory");
    return VERIFY_FAILED;
}

int verify_isa_list(int (*force)(enum kernel_isa), enum kernel_isa *isas, char *what, size_t cap) {
    const enum kernel_isa active = kernel_isa_active(); /* the ISA the run is pinned to */
    int k = 0;
    size_t len = 0;
    what[0] = 0;
    for (int i = 0; i <= (int)active; i++) {
        if (force((enum kernel_isa)i) != 0) continue;
        isas[k++] = (enum kernel_isa)i;
        len += (size_t)snprintf(what + len, cap > len ? cap - len : 0, "%s%s", k > 1 ? "+" : "",
                                kernel_isa_name((enum kernel_isa)i));
    }
    force(active);
    return k;
}

/* The sampler's: verify_isa_list over sampler_isa_force. */
static int isa_list(enum kernel_isa *isas, char *what, size_t cap) {
    return verify_isa_list(sampler_isa_force, isas, what, cap);
}

/* Fast (on every ISA of isa_list) and reference top-p over `rows` seeded rows; max |fast - ref| over every
 * probability, and how many of the seeded draws (one per row, step = row) land on the same token on every
 * ISA. With a seeded mix of top_p (top_p < 0), a row counts only if its top_p lies strictly inside (0, 1)
 * and its nucleus strictly between 1 and n tokens (at 0, 1 or a one-token nucleus both filters just copy
 * or one-hot the row): rows are drawn until `rows` count, and the skipped ones are reported. */
struct topp_run {
    int n, rows;
    float temperature, top_p; /* top_p < 0: a seeded mix per row */
    bool mix_kinds, bf16;
    int threads; /* the softmax's */
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
    static const float mix[] = {0.5f, 0.8f, 0.9f, 0.95f, 0.99f, 0.999f};
    enum kernel_isa isas[KERNEL_ISA_COUNT];
    char names[64];
    int ni = isa_list(isas, names, sizeof names);
    double max_diff = 0;
    int same = 0, sizes_differ = 0, bits_differ = 0, kmin = n, kmax = 0, counted = 0, skipped = 0;
    float tmin = 1, tmax = 0;
    uint64_t seed = 0x5eed;
    for (int row = 0; counted < r->rows && row < 8 * r->rows; row++) {
        enum sampler_row_kind kind =
            r->mix_kinds ? (enum sampler_row_kind)(row % SAMPLER_ROW_KIND_COUNT) : SAMPLER_ROW_REALISTIC;
        sampler_rows_fill(logits, n, kind, 8000 + (uint64_t)row);
        float top_p = r->top_p >= 0 ? r->top_p : mix[sampler_rows_next(&seed) % (sizeof mix / sizeof mix[0])];
        const void *src = logits;
        if (r->bf16) {
            for (int i = 0; i < n; i++) h[i] = bf16_from_f32(logits[i]);
            src = h;
        }
        if (sampler_softmax(probs, src, r->bf16 ? FR_DTYPE_BF16 : FR_DTYPE_F32, n, r->temperature, r->threads,
                            NULL)) {
            snprintf(detail, cap, "%s: softmax failed on row %d", what, row);
            same = -1;
            break;
        }
        int kr = sampler_top_p_ref_into(ref, probs, n, top_p, scratch);
        if (r->top_p < 0 && (kr <= 1 || kr >= n)) {
            skipped++;
            continue;
        }
        counted++;
        kmin = kr < kmin ? kr : kmin;
        kmax = kr > kmax ? kr : kmax;
        tmin = top_p < tmin ? top_p : tmin;
        tmax = top_p > tmax ? top_p : tmax;
        double u = sampler_uniform(0xC0FFEE, (uint64_t)row);
        int want = sampler_draw(ref, n, u), row_same = 1;
        for (int k = 0; k < ni; k++) {
            sampler_isa_force(isas[k]);
            int kf = sampler_top_p_fast_into(fast, probs, n, top_p, scratch);
            sizes_differ += kf != kr;
            for (int i = 0; i < n; i++) {
                double d = fabs((double)fast[i] - ref[i]);
                max_diff = d > max_diff ? d : max_diff;
            }
            bits_differ += memcmp(fast, ref, sizeof(float) * (size_t)n) != 0; /* also -0 vs +0, NaN */
            row_same &= sampler_draw(fast, n, u) == want;
        }
        sampler_isa_force(kernel_isa_active());
        same += row_same;
    }
    free(logits), free(probs), free(fast), free(ref), free(h), free(scratch);
    if (same < 0) return VERIFY_FAILED;
    bool ok = max_diff == 0 && bits_differ == 0 && same == r->rows && counted == r->rows && sizes_differ == 0;
    char tp[64], sk[64] = "";
    if (r->top_p >= 0)
        snprintf(tp, sizeof tp, "%g", (double)r->top_p);
    else
        snprintf(tp, sizeof tp, "in [%g, %g]", (double)tmin, (double)tmax);
    if (skipped) snprintf(sk, sizeof sk, " (%d rows with nucleus 1 or n not counted)", skipped);
    snprintf(detail, cap,
             "%s: %d rows x %d%s, T %g, top_p %s, nucleus %d..%d%s, %s: max |fast - sort| %.2e, %d row runs "
             "not bitwise equal, draws agree %d/%d",
             what, counted, n, r->bf16 ? " bf16" : "", (double)r->temperature, tp, kmin, kmax, sk, names,
             max_diff, bits_differ, same, r->rows);
    return ok ? VERIFY_PASSED : VERIFY_FAILED;
}

static enum verify_status check_topp_chapter(char *detail, size_t cap, int threads) {
    struct topp_run r = {QWEN3_VOCAB, 64, 0.8f, 0.9f, false, false, threads};
    return topp_compare(&r, "top-p fast vs sort", detail, cap);
}

static enum verify_status check_topp_mix(char *detail, size_t cap, int threads) {
    struct topp_run r = {32000, 64, 1.0f, -1.0f, true, true, threads};
    return topp_compare(&r, "top-p fast vs sort, realistic/flat/tied rows", detail, cap);
}

/* sampler_pick, the fused chain the decode step runs, against the unfused sort chain (scalar softmax,
 * reference filter, draw) on every ISA of isa_list: the same token at every step. */
static enum verify_status check_pick(char *detail, size_t cap, int threads) {
    enum { ROWS = 12, STEPS = 8 };
    int n = QWEN3_VOCAB;
    float *x = malloc(sizeof(float) * (size_t)n), *p = malloc(sizeof(float) * (size_t)n);
    void *scratch = malloc(sampler_scratch_bytes(n));
    if (!x || !p || !scratch) {
        free(x), free(p), free(scratch);
        return out_of_memory(detail, cap);
    }
    static const float tps[] = {0.5f, 0.9f, 0.99f, 1.0f};
    enum kernel_isa isas[KERNEL_ISA_COUNT];
    char names[64];
    int ni = isa_list(isas, names, sizeof names), agree = 0, total = 0;
    for (int row = 0; row < ROWS; row++) {
        sampler_rows_fill(x, n, (enum sampler_row_kind)(row % SAMPLER_ROW_KIND_COUNT), 9300 + (uint64_t)row);
        struct sampler_params prm = {row % 2 ? 0.8f : 1.1f, tps[row % 4], 77};
        sampler_isa_force(KERNEL_ISA_SCALAR);
        sampler_softmax(p, x, FR_DTYPE_F32, n, prm.temperature, threads, NULL);
        sampler_top_p_ref(p, n, prm.top_p, scratch);
        for (uint64_t step = 0; step < STEPS; step++) {
            sampler_isa_force(KERNEL_ISA_SCALAR);
            int want = sampler_draw(p, n, sampler_uniform(prm.seed, step));
            for (int k = 0; k < ni; k++) {
                sampler_isa_force(isas[k]);
                int got = -1;
                sampler_pick(x, n, &prm, step, scratch, threads, &got, NULL);
                agree += got == want;
                total++;
            }
        }
    }
    sampler_isa_force(kernel_isa_active());
    free(x), free(p), free(scratch);
    snprintf(detail, cap,
             "sampler_pick (fused) vs softmax + sort top-p + draw: %d rows x %d, T 0.8/1.1, top_p 0.5..1, %d "
             "steps each, %s: tokens agree %d/%d",
             ROWS, n, STEPS, names, agree, total);
    return agree == total ? VERIFY_PASSED : VERIFY_FAILED;
}

static enum verify_status check_greedy(char *detail, size_t cap, int threads) {
    (void)threads; /* on the calling thread */
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

static enum verify_status check_softmax(char *detail, size_t cap, int threads) {
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
            sampler_softmax(k ? b : a, x, FR_DTYPE_F32, n, t, threads, NULL);
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

static enum verify_status check_exp(char *detail, size_t cap, int threads) {
    (void)threads; /* on the calling thread */
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

static enum verify_status check_philox(char *detail, size_t cap, int threads) {
    (void)threads; /* on the calling thread */
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

static enum verify_status check_draw(char *detail, size_t cap, int threads) {
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
        sampler_softmax(p, x, FR_DTYPE_F32, n, 1.0f, threads, NULL);
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

/* Every row pass of each vector ISA the run may use (isa_list) against the scalar passes, bit for bit
 * (kernels/sampler_check.c), on seeded rows of several kinds and sizes: tails of every kind, f32 and bf16. */
static enum verify_status check_simd(char *detail, size_t cap, int threads) {
    (void)threads; /* on the calling thread */
    static const int sizes[] = {1, 15, 17, 1000, 32003, QWEN3_VOCAB};
    enum { NSIZES = sizeof sizes / sizeof sizes[0] };
    float *x = malloc(sizeof(float) * QWEN3_VOCAB);
    void *work = malloc(sampler_check_work_bytes(QWEN3_VOCAB));
    if (!x || !work) {
        free(x), free(work);
        return out_of_memory(detail, cap);
    }
    enum kernel_isa isas[KERNEL_ISA_COUNT];
    char names[64];
    int ni = isa_list(isas, names, sizeof names), rows = 0, differ = 0;
    const char *first = NULL;
    for (int k = 0; k < ni; k++) {
        if (isas[k] == KERNEL_ISA_SCALAR) continue;
        for (int si = 0; si < NSIZES; si++)
            for (int kind = 0; kind < SAMPLER_ROW_KIND_COUNT; kind++) {
                sampler_rows_fill(x, sizes[si], (enum sampler_row_kind)kind, 9400 + (uint64_t)si);
                const char *f = NULL;
                int d = sampler_isa_compare(isas[k], x, sizes[si], kind ? 0.8f : 1.0f, work, &f);
                differ += d != 0;
                if (d && !first) first = f ? f : "(ISA not run)";
                rows++;
            }
    }
    free(x), free(work);
    if (!rows) {
        snprintf(detail, cap, "sampler vector passes: none in use (%s), nothing to compare with scalar",
                 names);
        return VERIFY_SKIPPED;
    }
    snprintf(
        detail, cap,
        "sampler row passes vs scalar, bit for bit, %s: %d rows (sizes 1..%d, realistic/flat/tied, f32 and "
        "bf16): %d differ%s%s",
        names, rows, QWEN3_VOCAB, differ, first ? ", first in " : "", first ? first : "");
    return differ ? VERIFY_FAILED : VERIFY_PASSED;
}

/* Prompt processing against token-by-token decode (model/prefill_check.h) on a small Qwen3-shaped model of
 * synthetic bf16 weights (head_dim 128 and GQA 2 as Qwen3-0.6B; 2 layers, hidden 256, vocab 1000), 37
 * prompt tokens after 5 prefilled ones (no tile divides either), every ISA, bf16 and f32 caches. */
static enum verify_status check_prefill(char *detail, size_t cap, int threads) {
    struct qwen3_config c = {.name = "verify-prefill",
                             .hidden = 256,
                             .intermediate = 384,
                             .n_layers = 2,
                             .n_heads = 4,
                             .n_kv_heads = 2,
                             .head_dim = 128,
                             .vocab = 1000,
                             .max_context = 64,
                             .rms_eps = 1e-6,
                             .rope_theta = 1e6,
                             .tied_embeddings = true};
    struct qwen3_weights w;
    struct fr_err err = {{0}};
    if (qwen3_weights_alloc(&w, &c, FR_DTYPE_BF16, &err) != 0) {
        snprintf(detail, cap, "%s", err.msg);
        return VERIFY_FAILED;
    }
    qwen3_weights_init_synthetic(&w, 0x9f11);
    enum kernel_isa isas[KERNEL_ISA_COUNT];
    char names[64];
    int n_isa = verify_isa_list(kernel_isa_force, isas, names, sizeof names), failed = 0;
    double worst[2] = {0, 0}, worst_next = 0;
    long mismatches = 0;
    const enum kernel_isa active = kernel_isa_active();
    for (int i = 0; i < n_isa && !err.msg[0]; i++)
        for (int kv = 0; kv < 2 && !err.msg[0]; kv++) {
            kernel_isa_force(isas[i]);
            struct prefill_check_result r;
            if (prefill_check_against_steps(&w, kv ? FR_DTYPE_F32 : FR_DTYPE_BF16, MATVEC_BACKEND_FORGE,
                                            threads, 5, 37, NULL, &r, &err) != 0)
                break;
            worst[kv] = fmax(worst[kv], r.logits_err / r.logits_scale);
            worst_next = fmax(worst_next, r.next_err / r.tolerance);
            mismatches += r.kv_mismatches;
            failed += !prefill_check_passed(&r);
        }
    kernel_isa_force(active);
    qwen3_weights_free(&w);
    if (err.msg[0]) {
        snprintf(detail, cap, "%s", err.msg);
        return VERIFY_FAILED;
    }
    snprintf(
        detail, cap,
        "prefill of 37 tokens after 5 vs 42 decode steps, %s: last logits within %.1e of the largest with a "
        "bf16 KV cache (tolerance %.0e), %.1e with f32 (%.0e); the next step at %.2f of its tolerance; %ld "
        "KV values off",
        names, worst[0], PREFILL_CHECK_TOL_BF16_KV, worst[1], PREFILL_CHECK_TOL_F32_KV, worst_next,
        mismatches);
    return failed ? VERIFY_FAILED : VERIFY_PASSED;
}

const struct verify_check verify_checks[] = {
    {"sampler.top_p", check_topp_chapter},
    {"sampler.top_p_mix", check_topp_mix},
    {"sampler.greedy", check_greedy},
    {"sampler.softmax", check_softmax},
    {"sampler.exp", check_exp},
    {"sampler.philox", check_philox},
    {"sampler.draw", check_draw},
    {"sampler.simd", check_simd},
    {"sampler.pick", check_pick},
    {"prefill.vs_steps", check_prefill},
};
const int verify_check_count = (int)(sizeof verify_checks / sizeof verify_checks[0]);
