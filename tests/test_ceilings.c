/* The ceiling kernels on small arrays: exact read sums (tails included) for every ISA this CPU has, FMA
 * lanes against a scalar fmaf recurrence, and a whole small ceilings_measure whose figures are consistent
 * (no timing is asserted, only that every figure was measured, validated and well-formed). */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roofline/ceilings.h"
#include "roofline/matrix_engine.h"
#include "roofline/ceilings_kernels.h"
#include "roofline/roofs.h"
#include "tests/kernels_test_util.h"

static float *pattern(size_t n) {
    float *a = malloc(n * sizeof *a);
    cr_assert(a);
    for (size_t i = 0; i < n; i++) a[i] = (float)(i & 3);
    return a;
}

static double exact_sum(size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)(i & 3);
    return s;
}

/* Sizes around the 128-float blocks and the fold, and one past several folds. */
static const size_t sizes[] = {
    0, 1, 63, 64, 127, 128, 1000, CEILINGS_FOLD_FLOATS + 129, 3 * CEILINGS_FOLD_FLOATS};

Test(ceilings, read_sum_exact) {
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        float *a = pattern(n + 1);
        cr_expect_eq(ceilings_read_sum(a, n), exact_sum(n), "n = %zu", n);
        free(a);
    }
}

/* A harness's read choice (forge-tune's): every candidate validated on the pattern, the choice named with
 * each candidate's GB/s, and the team read then sums with it; an array that is not the pattern is refused. */
Test(ceilings, choose_team_read) {
    const size_t n = 3 * CEILINGS_FOLD_FLOATS + 129;
    float *a = pattern(n);
    char desc[384];
    struct fr_err err = {{0}};
    cr_assert_eq(ceilings_choose_team_read(a, n, 2, 2, desc, sizeof desc, &err), 0, "%s", err.msg);
    cr_expect(strstr(desc, "the fastest by median of the") && strstr(desc, "for 2 rounds") &&
                  strstr(desc, "GB/s, 2 threads)"),
              "%s", desc);
    cr_expect_eq(ceilings_read_team(a, n, 2), exact_sum(n));
    a[n / 2] += 1.0f;
    cr_expect_neq(ceilings_choose_team_read(a, n, 2, 1, desc, sizeof desc, &err), 0);
    cr_expect(strstr(err.msg, "validation FAILED"), "%s", err.msg);
    free(a);
}

/* The SIMD read and FMA kernels, one test per ISA: skipped with the reason where this machine cannot run
 * them (test_isa_require honours FORGE_ROOFLINE_MAX_ISA as the kernels do). */
static void simd_kernels_exact(enum kernel_isa isa) {
    test_isa_require(isa);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        float *a = pattern(n + 1);
        double got = isa == KERNEL_ISA_AVX512 ? ceilings_read_avx512(a, n, 3) : ceilings_read_avx2(a, n, 3);
        cr_expect_eq(got, 3 * exact_sum(n), "%s, n = %zu", kernel_isa_name(isa), n);
        if (isa == KERNEL_ISA_AVX2) {
            cr_expect_eq(ceilings_read_avx2_hw(a, n, 3), 3 * exact_sum(n), "avx2 without prefetch, n = %zu",
                         n);
            cr_expect_eq(ceilings_read_avx2_two_streams(a, n, 3), 3 * exact_sum(n),
                         "avx2 two streams, n = %zu", n);
        }
        free(a);
    }
    if (isa == KERNEL_ISA_AVX2) { /* past one fold of the kernel without software prefetch */
        size_t n = CEILINGS_HW_FOLD_FLOATS + 129;
        float *a = pattern(n);
        cr_expect_eq(ceilings_read_avx2_hw(a, n, 2), 2 * exact_sum(n), "avx2 without prefetch, n = %zu", n);
        cr_expect_eq(ceilings_read_avx2_two_streams(a, n, 2), 2 * exact_sum(n), "avx2 two streams, n = %zu",
                     n);
        free(a);
    }
    float want = 0;
    for (int i = 0; i < 5000; i++) want = fmaf(want, 0.9999f, 1e-4f);
    float got = isa == KERNEL_ISA_AVX512 ? ceilings_fma_avx512(5000, 0.9999f, 1e-4f)
                                         : ceilings_fma_avx2(5000, 0.9999f, 1e-4f);
    cr_expect_eq(got, want, "%s FMA lanes against fmaf", kernel_isa_name(isa));
    kernel_isa_force(KERNEL_ISA_COUNT);
}

Test(ceilings, avx2_read_and_fma_exact) {
    simd_kernels_exact(KERNEL_ISA_AVX2);
}
Test(ceilings, avx512_read_and_fma_exact) {
    simd_kernels_exact(KERNEL_ISA_AVX512);
}

static const struct ceilings_opts small = {.quick = true,
                                           .dram_array_bytes = 256 << 10,
                                           .set_bytes = {4 << 10, 32 << 10, 128 << 10},
                                           .cache_rep_bytes = 256 << 10,
                                           .sgemm_n = 48,
                                           .fma_iters = 500};

static void expect_figure(const struct ceiling_figure *f, const char *key) {
    cr_expect(f->measured, "%s not measured: %s", key, f->why);
    cr_expect_gt(f->best, 0, "%s", key);
    cr_expect_eq(f->best, f->max, "%s: best is the fastest run", key);
    cr_expect_leq(f->min, f->median, "%s", key);
    cr_expect_leq(f->median, f->max, "%s", key);
    cr_expect_geq(f->reps, 3, "%s", key);
}

/* The DRAM read kernel is one of the candidates the ISA runs, the fastest by its medians, and said so. */
static void expect_read_choice(const struct ceilings *c) {
    int want = kernel_isa_active() == KERNEL_ISA_AVX512 ? 4 : kernel_isa_active() == KERNEL_ISA_AVX2 ? 3 : 1;
    cr_assert_eq(c->read_kernels, want, "%s runs %d read kernels", kernel_isa_name(kernel_isa_active()),
                 want);
    for (int one = 0; one < 2; one++) {
        int chosen = -1;
        for (int k = 0; k < c->read_kernels; k++) {
            cr_expect_gt(c->read_gbs[one][k], 0, "%s", c->read_kernel_names[k]);
            if (strcmp(c->read_kernel_names[k], c->read_kernel[one]) == 0) chosen = k;
        }
        cr_assert_geq(chosen, 0, "the choice %s is a candidate", c->read_kernel[one]);
        for (int k = 0; k < c->read_kernels; k++)
            cr_expect_leq(c->read_gbs[one][k], c->read_gbs[one][chosen], "%s beat the choice %s",
                          c->read_kernel_names[k], c->read_kernel[one]);
    }
    char words[512];
    ceilings_describe_read(c, words, sizeof words);
    cr_expect(strstr(words, c->read_kernel[0]) && strstr(words, "the fastest by median"), "%s", words);
}

Test(ceilings, small_measure_validates) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(
        machine_from_synthetic(
            &m, "pack:1 l3:1(size=1048576) l2:2(size=262144) l1d:1(size=32768) core:1 pu:1", 0, &err),
        0, "%s", err.msg);
    cr_assert_eq(m.threads, 2);
    struct ceilings c;
    cr_assert_eq(ceilings_measure(&m, &small, &c, &err), 0, "%s", err.msg);
    char engine_why[MATRIX_ENGINE_WHY_LEN];
    const struct matrix_engine_probe probe = matrix_engine_probe();
    for (int k = 0; k < CEILING_COUNT; k++) {
        /* the matrix engine's figures exist only where its tiles may run; elsewhere they give the reason */
        if ((k == CEILING_AMX_BF16 || k == CEILING_AMX_INT8) &&
            !matrix_engine_usable(&probe, k == CEILING_AMX_INT8, engine_why)) {
            cr_expect_not(c.all[k].measured);
            cr_expect_str_eq(c.all[k].why, engine_why);
            cr_expect_str_eq(c.one[k].why, engine_why);
            continue;
        }
        expect_figure(&c.all[k], ceilings_key((enum ceiling_kind)k, false));
        expect_figure(&c.one[k], ceilings_key((enum ceiling_kind)k, true));
    }
    expect_figure(&c.plain_read, "plain_read_gbs");
    expect_figure(&c.read_paired, "read_paired_gbs");
    cr_expect_eq(c.plain_read.reps, c.read_paired.reps);
    cr_expect_geq(c.all[CEILING_DRAM_READ].reps, 10, "DRAM read: STREAM's >= 10 runs even in quick mode");
    cr_expect_geq(c.one[CEILING_DRAM_READ].reps, 10);
    cr_expect_eq(c.dram_array_bytes, (size_t)256 << 10);
    cr_expect_eq(c.threads, 2);
    cr_expect(isfinite(c.plain_diff_pct));
    expect_read_choice(&c);

    cJSON *j = ceilings_to_json(&c);
    cr_assert(j);
    cr_expect_str_eq(cJSON_GetObjectItem(j, "read_kernel")->valuestring, c.read_kernel[0]);
    cJSON *sel = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "read_selection"), "kernels");
    cr_expect_eq(cJSON_GetArraySize(sel), c.read_kernels);
    const char *keys[] = {"dram_read_gbs",       "dram_copy_gbs",    "dram_triad_gbs", "l1_read_gbs",
                          "l2_read_gbs",         "l3_read_gbs",      "peak_gflops",    "sgemm_gflops",
                          "dram_read_1core_gbs", "peak_1core_gflops"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        cJSON *f = cJSON_GetObjectItem(j, keys[i]);
        cr_expect(cJSON_IsObject(f), "%s", keys[i]);
        cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(f, "best")), "%s.best", keys[i]);
        cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(f, "reps")), "%s.reps", keys[i]);
    }
    cJSON_Delete(j);
}

Test(ceilings, default_sets_and_missing_level) {
    /* No L3 here: the L3 figure is unavailable with its reason. The L1 and L2 sets default to half of the
     * level's share of one core (8 KiB / 2, 64 KiB / 2). */
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_from_synthetic(&m, "pack:1 l2:1(size=65536) l1d:1(size=8192) core:1 pu:1", 0, &err),
                 0, "%s", err.msg);
    struct ceilings_opts o = small;
    o.set_bytes[0] = o.set_bytes[1] = o.set_bytes[2] = 0;
    struct ceilings c;
    cr_assert_eq(ceilings_measure(&m, &o, &c, &err), 0, "%s", err.msg);
    cr_expect_eq(c.set_bytes[0], 4096);
    cr_expect_eq(c.set_bytes[1], 32768);
    cr_expect_eq(c.set_bytes[2], 0);
    cr_expect_not(c.all[CEILING_L3_READ].measured);
    cr_expect_not(c.one[CEILING_L3_READ].measured);
    cr_expect(strstr(c.all[CEILING_L3_READ].why, "L3"), "why: %s", c.all[CEILING_L3_READ].why);
    cr_expect(c.all[CEILING_L2_READ].measured);
    cr_expect_eq(c.threads, 1);
    expect_read_choice(&c); /* one thread: one choice serves both */
    cr_expect_str_eq(c.read_kernel[1], c.read_kernel[0]);
    char words[512];
    ceilings_describe_read(&c, words, sizeof words);
    cr_expect(strstr(words, "GB/s, 1 thread / one core)"), "%s", words);
    cJSON *j = ceilings_to_json(&c);
    cr_assert(j);
    cJSON *l3 = cJSON_GetObjectItem(j, "l3_read_gbs");
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(l3, "available")));
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(l3, "best")));
    cr_expect(cJSON_IsString(cJSON_GetObjectItem(l3, "reason")));
    cJSON_Delete(j);
}

Test(ceilings, keys_and_units) {
    cr_expect_str_eq(ceilings_key(CEILING_DRAM_READ, false), "dram_read_gbs");
    cr_expect_str_eq(ceilings_key(CEILING_DRAM_READ, true), "dram_read_1core_gbs");
    cr_expect_str_eq(ceilings_key(CEILING_SGEMM, false), "sgemm_gflops");
    cr_expect_str_eq(ceilings_unit(CEILING_PEAK_FLOPS), "GFLOP/s");
    cr_expect_str_eq(ceilings_unit(CEILING_L2_READ), "GB/s");
}

/* Issue 15: an unmeasured L2 ceiling used to turn the cache roof into the DRAM roof silently. Now a missing
 * level takes the next slower measured one, and the notes say so; an all-threads rate below one core's
 * is raised to it, said too; a faster observed read raises the DRAM roof, a slower one never lowers it. */
static struct ceiling_figure fig(double best) {
    return (struct ceiling_figure){
        .measured = true, .best = best, .median = best, .min = best, .max = best, .reps = 10};
}

Test(ceilings, roofs_fall_back_and_say_so) {
    struct ceilings c = {0};
    const double all[CEILING_COUNT] = {
        [CEILING_DRAM_READ] = 30,   [CEILING_L1_READ] = 800, [CEILING_L2_READ] = 0, [CEILING_L3_READ] = 150,
        [CEILING_PEAK_FLOPS] = 500, [CEILING_EXP] = 8,       [CEILING_CALL] = 100,  [CEILING_FORK] = 1};
    for (int k = 0; k < CEILING_COUNT; k++) {
        c.all[k] = fig(all[k]);
        c.one[k] = fig(all[k] / 2);
    }
    c.all[CEILING_L2_READ] = c.one[CEILING_L2_READ] =
        (struct ceiling_figure){.why = "no L2 cache in the topology"};
    c.one[CEILING_FORK] = fig(4);   /* a team of one's region: cheaper than the team's fork and join */
    c.one[CEILING_CALL] = fig(200); /* the same call, measured faster on one core than with all at once */
    struct roofline_rates ra, ro;
    char notes[512];
    cr_assert_gt(roofs_from_ceilings(&c, &ra, &ro, notes, sizeof notes), 0);
    cr_expect_eq(ra.level_gbs[ROOFLINE_TERM_L2], 150.0, "L2 takes the L3 ceiling, not DRAM's");
    cr_expect_eq(ro.level_gbs[ROOFLINE_TERM_L2], 75.0);
    cr_expect_eq(ra.level_gbs[ROOFLINE_TERM_L1], 800.0);
    cr_expect(strstr(notes,
                     "L2 read ceiling not measured (no L2 cache in the topology): L2 bytes charged at the "
                     "L3 read ceiling") != NULL,
              "notes: %s", notes);
    cr_expect_float_eq(ra.fork_s, 1e-6, 1e-18, "the team's fork floor is its own measurement");
    cr_expect_float_eq(ro.fork_s, 0.25e-6, 1e-18);
    cr_expect(strstr(notes, "fork") == NULL, "no fork note: %s", notes);
    cr_expect_float_eq(ra.call_s, 5e-9, 1e-20, "the call floor is the lower of the same call's two costs");
    cr_expect(strstr(notes, "all-threads call rate (1/s) 1e+08 < one core's 2e+08: one core's used.") != NULL,
              "notes: %s", notes);
    cr_expect_eq(ra.exp_gexps, 8.0);
    cr_expect_eq(roofs_raise_dram(&ra, 25), 0, "a slower read never lowers the roof");
    cr_expect_eq(roofs_raise_dram(&ra, 33), 1);
    cr_expect_eq(ra.level_gbs[ROOFLINE_TERM_DRAM], 33.0);
    /* nothing missing, nothing slower: no notes */
    c.all[CEILING_L2_READ] = fig(300), c.one[CEILING_L2_READ] = fig(150), c.one[CEILING_CALL] = fig(50);
    cr_expect_eq(roofs_from_ceilings(&c, &ra, &ro, notes, sizeof notes), 0);
    cr_expect_str_eq(notes, "");
}

/* The huge-page share of a range comes from /proc/self/smaps: within [0, 1] for a touched stream array, 0
 * for a range nothing maps, NaN for an empty range. */
Test(ceilings, huge_fraction_of_a_range) {
    size_t n = (size_t)8 << 20; /* 32 MiB: room for whole 2 MiB pages */
    float *a = ceilings_stream_alloc(n);
    cr_assert_not_null(a);
    for (size_t i = 0; i < n; i++) a[i] = 1.0f;
    double f = ceilings_huge_fraction(a, n * sizeof(float));
    cr_expect(f >= 0.0 && f <= 1.0, "fraction %g", f);
    ceilings_stream_free(a, n);
    cr_expect_eq(ceilings_huge_fraction((const void *)(uintptr_t)4096, 4096), 0.0, "page 1 is never mapped");
    cr_expect(isnan(ceilings_huge_fraction(&n, 0)));
}

Test(ceilings, dram_array_size_rule_and_memory_cap) {
    /* 4x the LLC, at least 512 MiB, at most 1/32 of the OS's memory but never below 512 MiB; a synthetic
     * machine (no OS memory) takes the rule alone. */
    const size_t MiB = (size_t)1 << 20;
    struct {
        size_t llc;
        unsigned long long mem;
        size_t want;
        bool capped;
    } cases[] = {
        {32 * MiB, 16ull << 30, 512 * MiB, false},   /* the minimum: 4x is 128 MiB */
        {256 * MiB, 64ull << 30, 1024 * MiB, false}, /* the rule: 1/32 of memory is 2 GiB */
        {508 * MiB, 24ull << 30, 768 * MiB, true},   /* a VM reporting a socket's L3: 1/32 of 24 GiB */
        {508 * MiB, 8ull << 30, 512 * MiB, true},    /* the cap would be 256 MiB: the minimum wins */
        {508 * MiB, 0, 2032 * MiB, false},           /* memory unknown: the rule */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct machine m = {.llc_total_bytes = cases[k].llc, .os_memory_bytes = cases[k].mem};
        bool capped = !cases[k].capped;
        size_t got = ceilings_dram_bytes(&m, &capped);
        cr_expect_eq(got, cases[k].want, "case %zu: %zu MiB, want %zu", k, got / MiB, cases[k].want / MiB);
        cr_expect_eq(capped, cases[k].capped, "case %zu: capped %d", k, (int)capped);
    }
}
