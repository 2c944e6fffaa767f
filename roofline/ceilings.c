/* Measured ceilings (see ceilings.h for the rules). The read, copy and triad kernels split their arrays
 * statically over the bound OpenMP threads (the same split that first-touched the pages); the read kernel
 * and the FMA kernel come in AVX-512, AVX2+FMA and baseline versions: the set the kernels run
 * (kernel_isa_active: the CPU's best, or the one --isa pins), so ceilings and kernels use the same ISA.
 * Validation, STREAM-style but exact: the read arrays hold i & 3, so every sum is an integer the f32 blocks
 * of the kernels add exactly; copy and triad outputs are compared element by element; every FMA lane must
 * equal a scalar fmaf recurrence; sgemm on small-integer matrices is checked entry for entry at 64 places.
 * Checked in tests/test_ceilings.c on small arrays. */
#include "roofline/ceilings.h"

#include <cJSON.h>
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fr_check.h"
#include "kernels/huge_map.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/quant_k.h"
#include "kernels/sampler.h"
#include "kernels/team.h"
#include "roofline/ceilings_kernels.h"
#include "roofline/matrix_engine.h"
#include "roofline/timing.h"

static const struct {
    const char *all, *one, *unit;
} ceiling_keys[] = {
    [CEILING_DRAM_READ] = {"dram_read_gbs", "dram_read_1core_gbs", "GB/s"},
    [CEILING_DRAM_COPY] = {"dram_copy_gbs", "dram_copy_1core_gbs", "GB/s"},
    [CEILING_DRAM_TRIAD] = {"dram_triad_gbs", "dram_triad_1core_gbs", "GB/s"},
    [CEILING_L1_READ] = {"l1_read_gbs", "l1_read_1core_gbs", "GB/s"},
    [CEILING_L2_READ] = {"l2_read_gbs", "l2_read_1core_gbs", "GB/s"},
    [CEILING_L3_READ] = {"l3_read_gbs", "l3_read_1core_gbs", "GB/s"},
    [CEILING_PEAK_FLOPS] = {"peak_gflops", "peak_1core_gflops", "GFLOP/s"},
    [CEILING_SGEMM] = {"sgemm_gflops", "sgemm_1core_gflops", "GFLOP/s"},
    [CEILING_EXP] = {"exp_gexps", "exp_1core_gexps", "Gexp/s"},
    [CEILING_CALL] = {"call_mcalls", "call_1core_mcalls", "Mcall/s"},
    [CEILING_FORK] = {"fork_mcalls", "fork_1core_mcalls", "Mcall/s"},
    [CEILING_SAMPLER_EXP] = {"sampler_exp_gexps", "sampler_exp_1core_gexps", "Gexp/s"},
    [CEILING_Q8_0_DOT] = {"q8_0_gflops", "q8_0_1core_gflops", "GFLOP/s"},
    [CEILING_Q4_0_DOT] = {"q4_0_gflops", "q4_0_1core_gflops", "GFLOP/s"},
    [CEILING_Q4_K_DOT] = {"q4_k_gflops", "q4_k_1core_gflops", "GFLOP/s"},
    [CEILING_Q6_K_DOT] = {"q6_k_gflops", "q6_k_1core_gflops", "GFLOP/s"},
    [CEILING_Q5_K_DOT] = {"q5_k_gflops", "q5_k_1core_gflops", "GFLOP/s"},
    [CEILING_BARRIER] = {"barrier_mcalls", "barrier_1core_mcalls", "Mcall/s"},
    [CEILING_AMX_BF16] = {"amx_bf16_gflops", "amx_bf16_1core_gflops", "GFLOP/s"},
    [CEILING_AMX_INT8] = {"amx_int8_gops", "amx_int8_1core_gops", "GOP/s"},
};
_Static_assert(sizeof ceiling_keys / sizeof ceiling_keys[0] == CEILING_COUNT, "one key per ceiling");

const char *ceilings_key(enum ceiling_kind kind, bool one_core) {
    if ((unsigned)kind >= CEILING_COUNT) return "unknown";
    return one_core ? ceiling_keys[kind].one : ceiling_keys[kind].all;
}

const char *ceilings_unit(enum ceiling_kind kind) {
    return (unsigned)kind < CEILING_COUNT ? ceiling_keys[kind].unit : "";
}

int ceilings_quant_kind(int t) {
    switch (t) {
    case FR_DTYPE_Q8_0:
        return CEILING_Q8_0_DOT;
    case FR_DTYPE_Q4_0:
        return CEILING_Q4_0_DOT;
    case FR_DTYPE_Q4_K:
        return CEILING_Q4_K_DOT;
    case FR_DTYPE_Q5_K:
        return CEILING_Q5_K_DOT;
    case FR_DTYPE_Q6_K:
        return CEILING_Q6_K_DOT;
    default:
        return -1;
    }
}

typedef double (*read_fn)(const float *a, size_t n, long passes);
typedef float (*fma_fn)(long iters, float mul, float add);

/* Baseline read: 16 f32 accumulators the compiler keeps in SSE registers, folded like the SIMD kernels. */
static double read_generic(const float *a, size_t n, long passes) {
    float acc[16] = {0};
    double total = 0;
    size_t n16 = n & ~(size_t)15, pending = 0;
    for (long p = 0; p < passes; p++) {
        for (size_t i = 0; i < n16; i += 16) {
            for (int k = 0; k < 16; k++) acc[k] += a[i + (size_t)k];
            pending += 16;
            if (pending >= CEILINGS_FOLD_FLOATS) {
                for (int k = 0; k < 16; k++) total += acc[k], acc[k] = 0;
                pending = 0;
            }
        }
        for (size_t i = n16; i < n; i++) total += a[i];
    }
    for (int k = 0; k < 16; k++) total += acc[k];
    return total;
}

/* The independent check: a plain scalar loop, 8-way unrolled, sharing no code with the kernels above. */
static double read_plain(const float *a, size_t n, long passes) {
    double total = 0;
    for (long p = 0; p < passes; p++)
        for (size_t lo = 0; lo < n; lo += CEILINGS_FOLD_FLOATS) {
            size_t hi = lo + CEILINGS_FOLD_FLOATS < n ? lo + CEILINGS_FOLD_FLOATS : n, i = lo;
            float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
            for (; i + 8 <= hi; i += 8) {
                s0 += a[i], s1 += a[i + 1], s2 += a[i + 2], s3 += a[i + 3];
                s4 += a[i + 4], s5 += a[i + 5], s6 += a[i + 6], s7 += a[i + 7];
            }
            for (; i < hi; i++) s0 += a[i];
            total += (double)((s0 + s1) + (s2 + s3)) + (double)((s4 + s5) + (s6 + s7));
        }
    return total;
}

#define FMA_SCALAR_FLOPS_PER_ITER (8.0 * 2)
/* Baseline "FMA": a multiply and an add per chain (no fused instruction in baseline x86-64), 8 chains. */
static float fma_scalar(long iters, float mul, float add) {
    float acc[8] = {0};
    for (long it = 0; it < iters; it++)
        for (int k = 0; k < 8; k++) acc[k] = acc[k] * mul + add;
    for (int k = 1; k < 8; k++)
        if (acc[k] != acc[0]) return -1.0f;
    return acc[0];
}

/* The DRAM read kernels the ceilings choose from (ceilings_measure): the active ISA's and, below AVX-512,
 * AVX2's, with software prefetch, and AVX2's without, in one stream and in two. Which one reads DRAM fastest
 * moved from run to run on a Zen 5 VM by up to 17 % (ceilings_kernels.h), so each run measures them. */
static const struct {
    const char *name;
    read_fn fn;
    enum kernel_isa isa;
} read_kernels[] = {
    {"avx512", ceilings_read_avx512, KERNEL_ISA_AVX512},
    {"avx2", ceilings_read_avx2, KERNEL_ISA_AVX2},
    {"avx2 without software prefetch", ceilings_read_avx2_hw, KERNEL_ISA_AVX2},
    {"avx2 in two streams", ceilings_read_avx2_two_streams, KERNEL_ISA_AVX2},
    {"scalar", read_generic, KERNEL_ISA_SCALAR},
};
#define READ_KERNELS ((int)(sizeof read_kernels / sizeof read_kernels[0]))

/* The indexes of read_kernels the active ISA runs, into idx[CEILINGS_READ_KERNELS_MAX]; returns how many. */
static int read_candidates(int *idx) {
    enum kernel_isa a = kernel_isa_active();
    int n = 0;
    for (int k = 0; k < READ_KERNELS && n < CEILINGS_READ_KERNELS_MAX; k++)
        if (read_kernels[k].isa <= a &&
            (a == KERNEL_ISA_SCALAR) == (read_kernels[k].isa == KERNEL_ISA_SCALAR))
            idx[n++] = k;
    return n;
}

/* The active ISA's own read kernel, with software prefetch: the cache reads', the counters' calibration's,
 * and ceilings_read_team's before any choice. kernel_isa_active() implies the CPU runs it (AVX-512
 * F/BW/VL/DQ with AVX2 and FMA; AVX2 with FMA). */
static read_fn pick_read(const char **isa) {
    int cand[CEILINGS_READ_KERNELS_MAX];
    read_candidates(cand); /* the ISA's own comes first */
    *isa = kernel_isa_name(kernel_isa_active());
    return read_kernels[cand[0]].fn;
}

/* The all-threads read kernel the last ceilings_measure chose, and the ISA it chose for (-1: none). */
static int read_chosen = -1, read_chosen_isa = -1;

static read_fn team_read(void) {
    int k = __atomic_load_n(&read_chosen, __ATOMIC_RELAXED);
    if (k >= 0 && __atomic_load_n(&read_chosen_isa, __ATOMIC_RELAXED) == (int)kernel_isa_active())
        return read_kernels[k].fn;
    const char *isa;
    return pick_read(&isa);
}

static fma_fn pick_fma(const char **isa, double *flops_per_iter, bool *fused) {
    enum kernel_isa k = kernel_isa_active();
    *isa = kernel_isa_name(k);
    *fused = true;
    if (k == KERNEL_ISA_AVX512)
        return *flops_per_iter = CEILINGS_FMA_AVX512_FLOPS_PER_ITER, ceilings_fma_avx512;
    if (k == KERNEL_ISA_AVX2) return *flops_per_iter = CEILINGS_FMA_AVX2_FLOPS_PER_ITER, ceilings_fma_avx2;
    *fused = false;
    return *flops_per_iter = FMA_SCALAR_FLOPS_PER_ITER, fma_scalar;
}

void ceilings_opts_test_sizes(struct ceilings_opts *o) {
    *o = (struct ceilings_opts){.quick = true,
                                .dram_array_bytes = (size_t)1 << 20,
                                .set_bytes = {(size_t)8 << 10, (size_t)64 << 10, (size_t)256 << 10},
                                .cache_rep_bytes = (size_t)1 << 20,
                                .sgemm_n = 64,
                                .fma_iters = 1000};
}

size_t ceilings_dram_bytes(const struct machine *m, bool *capped) {
    size_t rule = 4 * m->llc_total_bytes, bytes = rule;
    size_t cap = (size_t)(m->os_memory_bytes / CEILINGS_DRAM_MEMORY_SHARE);
    if (cap > 0 && bytes > cap) bytes = cap;
    if (bytes < CEILINGS_DRAM_MIN_BYTES) bytes = CEILINGS_DRAM_MIN_BYTES;
    if (capped) *capped = bytes < rule;
    return bytes;
}

double ceilings_read_sum(const float *a, size_t n) {
    const char *isa;
    return pick_read(&isa)(a, n, 1);
}

/* Thread t's part of n floats out of T: chunks of whole 256-byte blocks, so each starts aligned. */
static void split(size_t n, int nthreads, int t, size_t *lo, size_t *hi) {
    size_t chunk = ((n + (size_t)nthreads - 1) / (size_t)nthreads + 63) & ~(size_t)63;
    *lo = (size_t)t * chunk < n ? (size_t)t * chunk : n;
    *hi = *lo + chunk < n ? *lo + chunk : n;
}

/* Floats of one chunk of the dynamic read: the matvec's largest chunk. */
#define READ_CHUNK_FLOATS (MATVEC_CHUNK_MAX_BYTES / sizeof(float))

/* The read the decode step is compared with: chunks handed out dynamically over the current team size, as
 * the matvec hands out its row chunks, so one thread slowed by a neighbour does not hold the others up. The
 * chunks of all n spans (whole floats of each) go out in one parallel region, span after span. */
static double read_spans_dynamic(read_fn fn, const struct mem_span *s, int n, int threads) {
    long first[n + 1]; /* first[i]: span i's first chunk; first[n]: the chunks of all of them */
    first[0] = 0;
    for (int i = 0; i < n; i++)
        first[i + 1] =
            first[i] + (long)((s[i].bytes / sizeof(float) + READ_CHUNK_FLOATS - 1) / READ_CHUNK_FLOATS);
    double total = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(+ : total)
    for (long k = 0; k < first[n]; k++) {
        int lo = 0, hi = n - 1; /* chunk k's span: the last i with first[i] <= k (never an empty one) */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (first[mid] <= k)
                lo = mid;
            else
                hi = mid - 1;
        }
        size_t floats = s[lo].bytes / sizeof(float), c0 = (size_t)(k - first[lo]) * READ_CHUNK_FLOATS,
               c1 = c0 + READ_CHUNK_FLOATS < floats ? c0 + READ_CHUNK_FLOATS : floats;
        total += fn((const float *)s[lo].p + c0, c1 - c0, 1);
    }
    return total;
}

static double read_dynamic(read_fn fn, const float *a, size_t n, int threads) {
    const struct mem_span whole = {a, n * sizeof(float)};
    return read_spans_dynamic(fn, &whole, 1, threads);
}

double ceilings_read_team(const float *a, size_t n, int threads) {
    return read_dynamic(team_read(), a, n, threads);
}

double ceilings_read_team_spans(const struct mem_span *s, int n, int threads) {
    return n > 0 ? read_spans_dynamic(team_read(), s, n, threads) : 0.0;
}

/* Sum of (i & 3) over i in [0, n): exact. */
static double pattern_sum(size_t n) {
    size_t r = n % 4;
    return (double)(n / 4) * 6.0 + (double)(r * (r - (r > 0)) / 2);
}

struct run_ctx {
    int threads;
    const float *a; /* [n] = i & 3: read source, copy source, triad operand */
    float *b, *c;   /* [n]: copy destination; triad destination c = b + 3a */
    size_t n;
    size_t slice_n; /* floats of one slice of the slice read */
    read_fn read;
    long passes;       /* cache reads: passes over each thread's set */
    const float *sets; /* [threads][set_stride]: one working set per thread */
    float *work;       /* exp: [threads][2][set_stride] input then output; call, fork: [threads][16] */
    size_t set_n, set_stride;
    void (*vexp)(float *y, const float *x, int n); /* the exp under test: kernel_vexp or sampler_exp_row */
    fma_fn fma;
    long iters;
    float mul, add, fma_expected;
    int sgemm_n;
    const float *ga, *gb;      /* [n][n] sgemm operands */
    float *gc;                 /* [n][n] sgemm result */
    const unsigned char *qmat; /* [threads][qstride] block-format matrices, qrows x qcols each */
    size_t qstride;
    int qrows, qcols, qtype;
    const float *qx;  /* [qcols] */
    float *qy;        /* [threads][qy_stride] each thread's y */
    const float *qy0; /* [qrows] y of the kernel's first call: every run must give it again */
    const struct quant_block_q8_k *kx; /* the K-quant roofs' x, quantised once */
    size_t qy_stride;
    int (*tile_loop)(long iters); /* the matrix engine's loop (matrix_engine.h) and its rounds a run */
    long tile_iters;
    double expected;
    long bad; /* runs whose result failed validation */
    double got;
};

static void run_read(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
    double total = read_dynamic(x->read, x->a, x->n, x->threads);
    if (total != x->expected) x->bad++, x->got = total;
}

/* One slice of the DRAM array per repetition, the slices in turn: a slice was last read 7 slices (3.5 x the
 * LLC at the minimum array size) ago, so it comes from DRAM; a repetition lasts about as long as one
 * matvec of a layer, so the best of them sees the quiet moments a block sees on a shared machine. */
static void run_read_slice(void *vctx, long rep) {
    struct run_ctx *x = vctx;
    size_t lo = (size_t)(rep % CEILINGS_READ_SLICES) * x->slice_n;
    double total = read_dynamic(x->read, x->a + lo, x->slice_n, x->threads);
    if (total != pattern_sum(x->slice_n)) x->bad++, x->got = total;
}

static void run_copy(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
#pragma omp parallel num_threads(x->threads)
    {
        size_t lo, hi;
        split(x->n, kernel_team_size(), kernel_team_thread(), &lo, &hi);
        const float *restrict src = x->a;
        float *restrict dst = x->b;
        for (size_t i = lo; i < hi; i++) dst[i] = src[i];
    }
}

static void run_triad(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
    const float scalar = 3.0f;
#pragma omp parallel num_threads(x->threads)
    {
        size_t lo, hi;
        split(x->n, kernel_team_size(), kernel_team_thread(), &lo, &hi);
        const float *restrict a = x->a, *restrict b = x->b;
        float *restrict c = x->c;
        for (size_t i = lo; i < hi; i++) c[i] = b[i] + scalar * a[i];
    }
}

static void run_cache(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
    double total = 0;
#pragma omp parallel num_threads(x->threads) reduction(+ : total)
    total += x->read(x->sets + (size_t)kernel_team_thread() * x->set_stride, x->set_n, x->passes);
    if (total != x->expected) x->bad++, x->got = total;
}

static void run_fma(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
    long bad = 0;
#pragma omp parallel num_threads(x->threads) reduction(+ : bad)
    {
        float r = x->fma(x->iters, x->mul, x->add);
        if (r != x->fma_expected) bad++;
    }
    x->bad += bad;
}

/* Each thread converts its own L1-resident input to its own output `passes` times with x->vexp: kernel_vexp,
 * the entry point over the vector exp of kernels/kernels_simd_body.h that the kernels' softmax and SiLU
 * use, or sampler_exp_row, the sampler's own bit-exact exp as its softmax runs it. */
static void run_exp(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
#pragma omp parallel num_threads(x->threads)
    {
        size_t t = (size_t)kernel_team_thread();
        const float *in = x->work + t * 2 * x->set_stride;
        float *out = x->work + t * 2 * x->set_stride + x->set_stride;
        for (long p = 0; p < x->passes; p++) x->vexp(out, in, (int)x->set_n);
    }
}

/* Each thread runs the block matvec over its own L2-resident matrix `passes` times (measure_quant). */
static void run_quant(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
    long bad = 0;
#pragma omp parallel num_threads(x->threads) reduction(+ : bad)
    {
        size_t t = (size_t)kernel_team_thread();
        float *y = x->qy + t * x->qy_stride;
        if (x->kx) /* a K-quant roof: x quantised once, outside the run */
            for (long p = 0; p < x->passes; p++)
                quant_k_matvec_rows(y, x->qmat + t * x->qstride, (enum quant_k_type)x->qtype, x->kx,
                                    x->qcols / QUANT_QK_K, x->qrows, 0, x->qrows);
        else
            matvec_quant_thread(y, x->qmat + t * x->qstride, (enum fr_dtype)x->qtype, x->qx, x->qrows,
                                x->qcols, x->passes);
        bad += memcmp(y, x->qy0, sizeof(float) * (size_t)x->qrows) != 0;
    }
    x->bad += bad;
}

/* Every thread runs the tile loop, which checks its own accumulators */
static void run_tiles(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
    long bad = 0;
#pragma omp parallel num_threads(x->threads) reduction(+ : bad)
    bad += x->tile_loop(x->tile_iters) != 0;
    x->bad += bad;
}

/* Floats of each thread's slot in the call and fork buffers: 256 bytes, so no two threads share a line. */
#define OVERHEAD_SLOT 64

/* A kernel call that opens no parallel region: vec_add over 16 floats (whole vectors on every ISA, so no
 * masked or scalar tail), `passes` times: the dispatch through the active ISA's table, the call and one or
 * two vector operations; all threads at once, each in its own slot. */
static void run_call(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
#pragma omp parallel num_threads(x->threads)
    {
        float *mine = x->work + (size_t)kernel_team_thread() * OVERHEAD_SLOT;
        for (long p = 0; p < x->passes; p++) vec_add(mine, mine + 16, 16);
    }
}

/* `passes` empty parallel regions of x->threads threads, opened from the calling thread as a kernel opens
 * one: the fork, the join's barrier, and nothing else. Each thread bumps its own counter so the region is
 * not optimized away and the caller can check that every thread ran every region. */
static void run_fork(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
    float *hits = x->work;
    for (long p = 0; p < x->passes; p++) {
#pragma omp parallel num_threads(x->threads)
        hits[(size_t)kernel_team_thread() * OVERHEAD_SLOT] += 1.0f;
    }
}

/* `passes` barriers of a kernel team (kernels/team.h) in one parallel region of x->threads threads, as the
 * step's team meets between and inside its kernel calls; each thread counts its own so the caller can check
 * that every thread passed every barrier. The region's one fork and join are spread over all of them (under
 * 1 % of a run at the plan's counts). */
static void run_barrier(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
    struct kernel_team team;
    kernel_team_init(&team);
    float *hits = x->work;
#pragma omp parallel num_threads(x->threads)
    {
        kernel_team_join(&team);
        float *mine = hits + (size_t)kernel_team_thread() * OVERHEAD_SLOT;
        for (long p = 0; p < x->passes; p++) {
            kernel_team_barrier();
            mine[0] += 1.0f;
        }
        kernel_team_leave();
    }
}

static void run_sgemm(void *vctx, long rep) {
    (void)rep;
    struct run_ctx *x = vctx;
    int n = x->sgemm_n;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, x->ga, n, x->gb, n, 0.0f, x->gc, n);
}

static void figure_from_stats(const struct timing_stats *st, double work, struct ceiling_figure *f) {
    *f = (struct ceiling_figure){.measured = true,
                                 .best = work / st->min_s / 1e9,
                                 .median = work / st->median_s / 1e9,
                                 .min = work / st->max_s / 1e9,
                                 .max = work / st->min_s / 1e9,
                                 .reps = st->reps,
                                 .noisy = st->noisy};
}

static int check_runs(const struct run_ctx *x, const struct timing_stats *st, const char *what,
                      struct fr_err *err) {
    if (x->bad)
        return fr_err_set(err, "%s: validation FAILED in %ld runs (last result %.17g, expected %.17g)", what,
                          x->bad, x->got, x->expected);
    if (!(st->min_s > 0)) return fr_err_set(err, "%s: a run took no measurable time", what);
    return 0;
}

/* Runs fn under o and turns the times into a figure of `work` units (bytes or FLOPs) per run. */
static int measure(timing_fn fn, struct run_ctx *x, const struct timing_opts *o, double work,
                   struct ceiling_figure *f, const char *what, struct fr_err *err) {
    struct timing_stats st;
    x->bad = 0;
    if (timing_measure(fn, x, o, &st) != 0)
        return fr_err_set(err, "%s: timing buffer allocation failed", what);
    if (check_runs(x, &st, what, err)) return -1;
    figure_from_stats(&st, work, f);
    return 0;
}

/* The plain-loop check: the read kernel and the plain loop alternate, run for run, so both see the same
 * noise. The headline difference is the median over the pairs of the plain loop's bandwidth over the
 * kernel's (robust on a shared machine); bests and medians are compared too. */
static int measure_plain(struct run_ctx *x, const struct timing_opts *o, double bytes, struct ceilings *c,
                         struct fr_err *err) {
    struct timing_stats sk = {0}, sp = {0};
    struct run_ctx y = *x; /* the same arrays and threads, the plain loop */
    y.read = read_plain;
    x->bad = y.bad = 0;
    double ratio = NAN; /* median of t_kernel / t_plain = plain bandwidth / kernel bandwidth */
    if (timing_measure_pair(run_read, x, run_read, &y, o, &sk, &sp, &ratio) != 0)
        return fr_err_set(err, "plain read check: timing buffer allocation failed");
    if (check_runs(x, &sk, "read kernel (paired)", err) || check_runs(&y, &sp, "plain read loop", err))
        return -1;
    figure_from_stats(&sk, bytes, &c->read_paired);
    figure_from_stats(&sp, bytes, &c->plain_read);
    c->plain_diff_pct = 100.0 * (1.0 - ratio);
    c->plain_diff_best_pct = 100.0 * (c->read_paired.best - c->plain_read.best) / c->read_paired.best;
    return 0;
}

static void unavailable(struct ceiling_figure *f, const char *why) {
    *f = (struct ceiling_figure){0};
    snprintf(f->why, sizeof f->why, "%s", why);
}

/* Mapped as the weights and the KV cache are (kernels/huge_map.c): the read roof must stream the same kind of
 * pages as the blocks it bounds. */
float *ceilings_stream_alloc(size_t n) {
    return huge_map_alloc(n * sizeof(float));
}

void ceilings_stream_free(float *a, size_t n) {
    huge_map_free(a, n * sizeof(float));
}

double ceilings_huge_fraction(const void *p, size_t bytes) {
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f || bytes == 0) {
        if (f) fclose(f);
        return NAN;
    }
    uintptr_t lo = (uintptr_t)p, hi = lo + bytes;
    unsigned long long overlap = 0, huge = 0, kib = 0;
    char line[512];
    bool in = false;
    while (fgets(line, sizeof line, f)) {
        unsigned long long a = 0, b = 0;
        char c0 = 0;
        if (sscanf(line, "%llx-%llx %c", &a, &b, &c0) == 3) { /* a mapping's first line */
            in = a < hi && b > lo;
            if (in) overlap = (unsigned long long)((b < hi ? b : hi) - (a > lo ? a : lo));
        } else if (in && sscanf(line, "AnonHugePages: %llu kB", &kib) == 1) {
            huge += kib * 1024 < overlap ? kib * 1024 : overlap;
        }
    }
    fclose(f);
    return (double)huge / (double)bytes;
}

/* Page-aligned (2 MiB for large arrays, so transparent huge pages can back them). */
static float *alloc_floats(size_t n) {
    size_t bytes = n * sizeof(float), align = bytes >= ((size_t)8 << 20) ? ((size_t)2 << 20) : 4096;
    bytes = (bytes + align - 1) / align * align;
    return aligned_alloc(align, bytes ? bytes : align);
}

/* Rounds of the read kernels' selection (select_read): at most READ_ROUNDS_MAX. */
#define READ_ROUNDS_MAX 7

struct plan {
    struct timing_opts dram_read, dram_rw, cache, peak, sgemm, slices;
    int read_rounds;
    size_t cache_rep_bytes;
    double exp_per_rep;                /* exps each thread computes in one timed run */
    long calls_per_rep, forks_per_rep; /* calls and parallel regions in one timed run */
    long barriers_per_rep;             /* the team's barriers in one timed run (one region) */
};

static struct plan plan_for(bool quick) {
    if (quick)
        return (struct plan){.dram_read = {.warmup = 1, .min_reps = 10, .max_reps = 10},
                             .dram_rw = {.warmup = 1, .min_reps = 5, .max_reps = 5},
                             .cache = {.warmup = 1, .min_reps = 30, .max_reps = 30},
                             .peak = {.warmup = 1, .min_reps = 5, .max_reps = 5},
                             .sgemm = {.warmup = 1, .min_reps = 3, .max_reps = 3},
                             .slices = {.warmup = 1, .min_reps = 24, .max_reps = 24},
                             .read_rounds = 3,
                             .cache_rep_bytes = (size_t)16 << 20,
                             .exp_per_rep = 1 << 22,
                             .calls_per_rep = 20000,
                             .forks_per_rep = 500,
                             .barriers_per_rep = 5000};
    return (struct plan){.dram_read = {.warmup = 2, .min_reps = 20, .max_reps = 400, .min_time_s = 0.3},
                         .dram_rw = {.warmup = 1, .min_reps = 10, .max_reps = 200, .min_time_s = 0.2},
                         .cache = {.warmup = 2, .min_reps = 10, .max_reps = 400, .min_time_s = 0.1},
                         .peak = {.warmup = 1, .min_reps = 10, .max_reps = 400, .min_time_s = 0.1},
                         .sgemm = {.warmup = 1, .min_reps = 10, .max_reps = 10},
                         .slices = {.warmup = 1, .min_reps = 40, .max_reps = 400, .min_time_s = 0.1},
                         .read_rounds = READ_ROUNDS_MAX,
                         .cache_rep_bytes = (size_t)64 << 20,
                         .exp_per_rep = 1 << 23,
                         .calls_per_rep = 50000,
                         .forks_per_rep = 1000,
                         .barriers_per_rep = 10000};
}

void ceilings_describe_plan(const struct ceilings_opts *opts, char *buf, size_t len) {
    struct plan p = plan_for(opts->quick);
    char read[64], rw[64], cache[64], peak[64], sgemm[64], slices[64];
    timing_describe_opts(&p.dram_read, read, sizeof read);
    timing_describe_opts(&p.dram_rw, rw, sizeof rw);
    timing_describe_opts(&p.cache, cache, sizeof cache);
    timing_describe_opts(&p.peak, peak, sizeof peak);
    timing_describe_opts(&p.sgemm, sgemm, sizeof sgemm);
    timing_describe_opts(&p.slices, slices, sizeof slices);
    int n = opts->sgemm_n > 0 ? opts->sgemm_n : (opts->quick ? 1024 : 2048);
    snprintf(buf, len,
             "ceilings are the best of: DRAM read %s; DRAM copy and triad %s; each cache level %s; FMA %s; "
             "sgemm (n %d) %s; exp, kernel call and fork %s; DRAM read in eighths %s",
             read, rw, cache, peak, n, sgemm, peak, slices);
}

/* Zeroes dst[0..n) with the threads' split (the pages stay where they were first touched), so a run's
 * validation cannot be passed by the output of an earlier run. */
static void zero_split(float *dst, size_t n, int threads) {
#pragma omp parallel num_threads(threads)
    {
        size_t lo, hi;
        split(n, kernel_team_size(), kernel_team_thread(), &lo, &hi);
        memset(dst + lo, 0, (hi - lo) * sizeof(float));
    }
}

/* Runs each candidate read kernel (read_candidates) over the whole DRAM array in turn, `rounds` rounds, each
 * run validated; returns the index (into read_kernels) of the one with the fastest median and leaves each
 * one's median GB/s in gbs[]. */
static int select_read(struct run_ctx *x, const int *cand, int nc, int rounds, double *gbs,
                       struct fr_err *err) {
    double t[CEILINGS_READ_KERNELS_MAX][READ_ROUNDS_MAX];
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < nc; k++) {
            x->read = read_kernels[cand[k]].fn;
            x->bad = 0;
            double t0 = timing_now_s();
            run_read(x, r);
            t[k][r] = timing_now_s() - t0;
            if (x->bad)
                return fr_err_set(err, "DRAM read (%s): validation FAILED (sum %.17g, expected %.17g)",
                                  read_kernels[cand[k]].name, x->got, x->expected);
        }
    int best = 0;
    for (int k = 0; k < nc; k++) {
        struct timing_stats st;
        timing_stats_from_samples(t[k], rounds, &st);
        gbs[k] = (double)x->n * sizeof(float) / st.median_s / 1e9;
        if (gbs[k] > gbs[best]) best = k;
    }
    return cand[best];
}

int ceilings_choose_team_read(const float *a, size_t n, int threads, int rounds, char *desc, size_t len,
                              struct fr_err *err) {
    struct run_ctx x = {.threads = threads, .a = a, .n = n, .expected = pattern_sum(n)};
    int cand[CEILINGS_READ_KERNELS_MAX], nc = read_candidates(cand);
    double gbs[CEILINGS_READ_KERNELS_MAX] = {0};
    rounds = rounds < 1 ? 1 : rounds > READ_ROUNDS_MAX ? READ_ROUNDS_MAX : rounds;
    int k = select_read(&x, cand, nc, rounds, gbs, err);
    if (k < 0) return -1;
    __atomic_store_n(&read_chosen, k, __ATOMIC_RELAXED);
    __atomic_store_n(&read_chosen_isa, (int)kernel_isa_active(), __ATOMIC_RELAXED);
    int used = snprintf(desc, len, "%s, the fastest by median of the %d that ran in turn for %d rounds (",
                        read_kernels[k].name, nc, rounds);
    for (int i = 0; i < nc && used > 0 && (size_t)used < len; i++)
        used += snprintf(desc + used, len - (size_t)used, "%s%s %.1f", i ? ", " : "",
                         read_kernels[cand[i]].name, gbs[i]);
    if (used > 0 && (size_t)used < len)
        snprintf(desc + used, len - (size_t)used, " GB/s, %d threads)", threads);
    return 0;
}

/* DRAM read (the fastest read kernel, chosen by select_read, and the plain loop), copy and triad, all
 * threads then one. */
static int measure_dram(struct run_ctx *x, const struct plan *p, int threads, struct ceilings *c,
                        struct fr_err *err) {
    int rc = -1;
    read_fn read_entry = x->read;
    float *a = ceilings_stream_alloc(x->n), *b = ceilings_stream_alloc(x->n),
          *cc = ceilings_stream_alloc(x->n);
    FR_CHECK_ALLOC(a, err, out);
    FR_CHECK_ALLOC(b, err, out);
    FR_CHECK_ALLOC(cc, err, out);
    size_t n = x->n;
#pragma omp parallel num_threads(threads)
    {
        size_t lo, hi;
        split(n, kernel_team_size(), kernel_team_thread(), &lo, &hi);
        for (size_t i = lo; i < hi; i++) a[i] = (float)(i & 3), b[i] = 0, cc[i] = 0; /* first touch */
    }
    x->a = a, x->b = b, x->c = cc, x->expected = pattern_sum(n);
    double bytes = (double)n * sizeof(float);
    int cand[CEILINGS_READ_KERNELS_MAX], chosen[2];
    c->read_kernels = read_candidates(cand);
    c->read_rounds = p->read_rounds;
    for (int k = 0; k < c->read_kernels; k++) c->read_kernel_names[k] = read_kernels[cand[k]].name;
    for (int one = 0; one < 2; one++) {
        struct ceiling_figure *f = one ? c->one : c->all;
        x->threads = one ? 1 : threads;
        if (one && threads == 1) { /* the same single thread: its choice stands */
            chosen[1] = chosen[0];
            memcpy(c->read_gbs[1], c->read_gbs[0], sizeof c->read_gbs[0]);
        } else {
            chosen[one] = select_read(x, cand, c->read_kernels, p->read_rounds, c->read_gbs[one], err);
        }
        if (chosen[one] < 0) goto out;
        c->read_kernel[one] = read_kernels[chosen[one]].name;
        x->read = read_kernels[chosen[one]].fn;
        if (measure(run_read, x, &p->dram_read, bytes, &f[CEILING_DRAM_READ], "DRAM read", err)) goto out;
        /* the all-threads choice serves the rest: the plain check, the slice read, ceilings_read_team */
        x->read = read_kernels[chosen[0]].fn;
        if (!one) {
            __atomic_store_n(&read_chosen, chosen[0], __ATOMIC_RELAXED);
            __atomic_store_n(&read_chosen_isa, (int)kernel_isa_active(), __ATOMIC_RELAXED);
        }
        if (!one && measure_plain(x, &p->dram_read, bytes, c, err)) goto out;
        if (!one) {
            x->slice_n = n / CEILINGS_READ_SLICES / 64 * 64;
            x->expected = pattern_sum(x->slice_n);
            if (x->slice_n > 0 && measure(run_read_slice, x, &p->slices, (double)x->slice_n * sizeof(float),
                                          &c->read_slice, "DRAM read (slices)", err))
                goto out;
            x->expected = pattern_sum(n);
        }
        zero_split(b, n, threads);
        if (measure(run_copy, x, &p->dram_rw, 2 * bytes, &f[CEILING_DRAM_COPY], "DRAM copy", err)) goto out;
        if (memcmp(a, b, n * sizeof(float)) != 0) {
            fr_err_set(err, "DRAM copy: validation FAILED (destination differs from source)");
            goto out;
        }
        zero_split(cc, n, threads);
        if (measure(run_triad, x, &p->dram_rw, 3 * bytes, &f[CEILING_DRAM_TRIAD], "DRAM triad", err))
            goto out;
        for (size_t i = 0; i < n; i++)
            if (cc[i] != 4.0f * (float)(i & 3)) {
                fr_err_set(err, "DRAM triad: validation FAILED at element %zu: %g, expected %g", i, cc[i],
                           4.0 * (double)(i & 3));
                goto out;
            }
    }
    rc = 0;
out:
    x->a = x->b = x->c = NULL;
    x->read = read_entry; /* the cache reads keep the ISA's prefetching kernel */
    ceilings_stream_free(cc, x->n);
    ceilings_stream_free(b, x->n);
    ceilings_stream_free(a, x->n);
    return rc;
}

static const char *const level_names[3] = {"L1d", "L2", "L3"};

static int measure_cache(struct run_ctx *x, const struct plan *p, int threads, struct ceilings *c,
                         struct fr_err *err) {
    for (int lv = 0; lv < 3; lv++) {
        enum ceiling_kind kind = (enum ceiling_kind)(CEILING_L1_READ + lv);
        size_t set_n = c->set_bytes[lv] / sizeof(float) & ~(size_t)63;
        if (set_n == 0) {
            char why[64];
            snprintf(why, sizeof why, "no %s cache in the topology", level_names[lv]);
            unavailable(&c->all[kind], why);
            unavailable(&c->one[kind], why);
            continue;
        }
        size_t stride = set_n + 64; /* a 256-byte gap keeps the threads' sets on separate lines */
        float *sets = alloc_floats(stride * (size_t)threads);
        FR_CHECK_ALLOC(sets, err, fail);
#pragma omp parallel num_threads(threads)
        {
            float *mine = sets + (size_t)kernel_team_thread() * stride;
            for (size_t i = 0; i < stride; i++) mine[i] = (float)(i & 3);
        }
        x->sets = sets, x->set_n = set_n, x->set_stride = stride;
        x->passes = (long)(p->cache_rep_bytes / (set_n * sizeof(float)));
        if (x->passes < 1) x->passes = 1;
        double bytes = (double)set_n * sizeof(float) * (double)x->passes;
        char what[32];
        snprintf(what, sizeof what, "%s read", level_names[lv]);
        int bad = 0;
        for (int one = 0; one < 2 && !bad; one++) {
            x->threads = one ? 1 : threads;
            x->expected = pattern_sum(set_n) * (double)x->passes * x->threads;
            bad = measure(run_cache, x, &p->cache, bytes * x->threads, &(one ? c->one : c->all)[kind], what,
                          err);
        }
        x->sets = NULL;
        free(sets);
        if (bad) return -1;
    }
    return 0;
fail:
    return -1;
}

static int measure_peak(struct run_ctx *x, const struct plan *p, int threads, struct ceilings *c,
                        struct fr_err *err) {
    double per_iter;
    bool fused;
    x->fma = pick_fma(&c->fma_isa, &per_iter, &fused);
    x->iters = c->fma_iters, x->mul = 0.9999f, x->add = 1e-4f;
    float e = 0;
    for (long it = 0; it < x->iters; it++) e = fused ? fmaf(e, x->mul, x->add) : e * x->mul + x->add;
    x->fma_expected = e, x->expected = e;
    for (int one = 0; one < 2; one++) {
        x->threads = one ? 1 : threads;
        double flops = per_iter * (double)x->iters * x->threads;
        if (measure(run_fma, x, &p->peak, flops, &(one ? c->one : c->all)[CEILING_PEAK_FLOPS], "peak FMA",
                    err))
            return -1;
    }
    return 0;
}

/* exp(x) for x in [-16, 0) (what a softmax feeds it), checked after the timed runs at every element: the
 * kernels' exp against double-precision exp (kernels/kernels_simd_body.h bounds its error by 2 ulp), the
 * sampler's bit for bit against sampler_exp, its scalar definition. */
static int measure_exp(struct run_ctx *x, const struct plan *p, int threads, enum ceiling_kind kind,
                       struct ceilings *c, struct fr_err *err) {
    bool sampler = kind == CEILING_SAMPLER_EXP;
    const char *what = sampler ? "sampler exp" : "exp";
    size_t n = c->exp_n, stride = (n + 63) & ~(size_t)63;
    float *buf = alloc_floats(2 * stride * (size_t)threads);
    FR_CHECK_ALLOC(buf, err, fail);
    for (int t = 0; t < threads; t++)
        for (size_t i = 0; i < n; i++)
            buf[(size_t)t * 2 * stride + i] = -16.0f * (float)i / (float)n - 0.001f;
    x->work = buf, x->set_n = n, x->set_stride = stride;
    x->vexp = sampler ? sampler_exp_row : kernel_vexp;
    x->passes = (long)(p->exp_per_rep / (double)n);
    if (x->passes < 1) x->passes = 1;
    int rc = 0;
    for (int one = 0; one < 2 && !rc; one++) {
        x->threads = one ? 1 : threads;
        double exps = (double)n * (double)x->passes * x->threads;
        rc = measure(run_exp, x, &p->peak, exps, &(one ? c->one : c->all)[kind], what, err);
    }
    for (int t = 0; t < threads && !rc; t++)
        for (size_t i = 0; i < n; i++) {
            const float *in = buf + (size_t)t * 2 * stride, *out = in + stride;
            double want = sampler ? (double)sampler_exp(in[i]) : exp((double)in[i]);
            if (sampler ? out[i] != (float)want
                        : !(fabs((double)out[i] - want) <= 4.0 * FLT_EPSILON * want)) {
                rc = fr_err_set(err, "%s: validation FAILED at element %zu: exp(%.9g) = %.9g, expected %.9g",
                                what, i, (double)in[i], (double)out[i], want);
                break;
            }
        }
    x->work = NULL;
    free(buf);
    return rc;
fail:
    return -1;
}

/* The team barrier's rate over x->threads threads into f, each thread's count checked (buf: their slots). */
static int measure_barrier(struct run_ctx *x, const struct plan *p, struct ceiling_figure *f, float *buf,
                           int threads, struct fr_err *err) {
    memset(buf, 0, (size_t)threads * OVERHEAD_SLOT * sizeof(float));
    x->passes = p->barriers_per_rep;
    struct timing_stats st;
    if (timing_measure(run_barrier, x, &p->peak, &st) != 0)
        return fr_err_set(err, "team barrier: timing buffer allocation failed");
    /* counts stay exact in a float up to 2^24: the plan's runs stay far below */
    double want = (double)x->passes * (double)(st.reps + st.excluded_reps + p->peak.warmup);
    for (int t = 0; t < x->threads; t++)
        if ((double)buf[(size_t)t * OVERHEAD_SLOT] != want)
            return fr_err_set(
                err, "team barrier: validation FAILED: thread %d passed %.0f barriers, expected %.0f", t,
                (double)buf[(size_t)t * OVERHEAD_SLOT], want);
    if (!(st.min_s > 0)) return fr_err_set(err, "team barrier: a run took no measurable time");
    figure_from_stats(&st, 1e3 * (double)x->passes, f);
    return 0;
}

/* The overhead floors as rates: calls, forks, team barriers (work = calls, scaled so figure_from_stats' 1e9
 * gives Mcall/s). */
static int measure_overheads(struct run_ctx *x, const struct plan *p, int threads, struct ceilings *c,
                             struct fr_err *err) {
    float *buf = alloc_floats((size_t)threads * OVERHEAD_SLOT);
    FR_CHECK_ALLOC(buf, err, fail);
    int rc = 0;
    x->work = buf;
    for (int one = 0; one < 2 && !rc; one++) {
        x->threads = one ? 1 : threads;
        memset(buf, 0, (size_t)threads * OVERHEAD_SLOT * sizeof(float));
        x->passes = p->calls_per_rep;
        rc = measure(run_call, x, &p->peak, 1e3 * (double)x->passes, &(one ? c->one : c->all)[CEILING_CALL],
                     "kernel call", err);
        if (rc) break;
        memset(buf, 0, (size_t)threads * OVERHEAD_SLOT * sizeof(float));
        x->passes = p->forks_per_rep;
        struct timing_stats st;
        if (timing_measure(run_fork, x, &p->peak, &st) != 0) {
            rc = fr_err_set(err, "fork: timing buffer allocation failed");
            break;
        }
        /* every thread of every region ran: warm-up and timed runs together */
        double want = (double)x->passes * (double)(st.reps + st.excluded_reps + p->peak.warmup);
        for (int t = 0; t < x->threads && !rc; t++)
            if ((double)buf[(size_t)t * OVERHEAD_SLOT] != want)
                rc = fr_err_set(err, "fork: validation FAILED: thread %d ran %.0f regions, expected %.0f", t,
                                (double)buf[(size_t)t * OVERHEAD_SLOT], want);
        if (!rc && !(st.min_s > 0)) rc = fr_err_set(err, "fork: a run took no measurable time");
        if (!rc) figure_from_stats(&st, 1e3 * (double)x->passes, &(one ? c->one : c->all)[CEILING_FORK]);
        if (!rc) rc = measure_barrier(x, p, &(one ? c->one : c->all)[CEILING_BARRIER], buf, threads, err);
    }
    x->work = NULL;
    free(buf);
    return rc;
fail:
    return -1;
}

/* A format roof's buffers: each thread's own copy of a matrix of `rows` rows of row_bytes (page-aligned
 * copies, at most half an L2 share each), and y for every thread plus `extra` more. */
struct roof_mats {
    int rows;
    size_t mat, stride, ys;
    unsigned char *mats;
    float *y;
};

/* The rows that fit (set_bytes[1]); 0 with both figures of `kind` unavailable when none does, -1 out of
 * memory, else 1 with the buffers */
static int roof_mats_alloc(struct roof_mats *m, struct ceilings *c, enum ceiling_kind kind, size_t row_bytes,
                           int threads, int extra) {
    *m = (struct roof_mats){.rows = (int)(c->set_bytes[1] / row_bytes)};
    if (m->rows < 1) {
        unavailable(&c->all[kind], "no L2 cache in the topology to hold the matrix");
        unavailable(&c->one[kind], "no L2 cache in the topology to hold the matrix");
        return 0;
    }
    m->mat = (size_t)m->rows * row_bytes, m->stride = (m->mat + 4095) / 4096 * 4096;
    m->ys = ((size_t)m->rows + 63) / 64 * 64;
    m->mats = aligned_alloc(4096, m->stride * (size_t)threads);
    m->y = alloc_floats(m->ys * (size_t)(threads + extra));
    if (!m->mats || !m->y) {
        free(m->mats), free(m->y);
        return -1;
    }
    return 1;
}

/* The first thread's matrix copied to the others, the passes set, then both figures of `kind` timed */
static int roof_mats_measure(struct run_ctx *x, const struct plan *p, const struct roof_mats *m, int threads,
                             timing_fn run, struct ceilings *c, enum ceiling_kind kind, const char *name,
                             struct fr_err *err) {
    for (int th = 1; th < threads; th++) memcpy(m->mats + (size_t)th * m->stride, m->mats, m->mat);
    x->passes = (long)(p->cache_rep_bytes / m->mat);
    if (x->passes < 1) x->passes = 1;
    char what[32];
    snprintf(what, sizeof what, "%s roof", name);
    for (int one = 0; one < 2; one++) {
        x->threads = one ? 1 : threads;
        double flops = 2.0 * m->rows * x->qcols * (double)x->passes * x->threads;
        if (measure(run, x, &p->cache, flops, &(one ? c->one : c->all)[kind], what, err)) return -1;
    }
    return 0;
}

/* Columns of the format roof's matrices: Qwen3-0.6B's hidden size, the width of qkv and gate_up. */
#define QUANT_ROOF_COLS 1024

/* A seeded value in [-1, 1) for element i (a 32-bit LCG hash): the matrices and x of measure_quant. */
static float quant_seeded(uint32_t i) {
    uint32_t h = i * 2654435761u + 0x9e3779b9u;
    h ^= h >> 15, h *= 0x2c1b3c6du, h ^= h >> 12;
    return (float)(h >> 8) / 8388608.0f - 1.0f;
}

/* The block formats' compute roofs (ceilings.h CEILING_Q8_0_DOT, CEILING_Q4_0_DOT): every thread runs the
 * active ISA's block matvec (matvec_quant_thread: x quantised once a repetition, then the passes) over its
 * own copy of one matrix of at most half its L2 share, so DRAM does not bind; work = 2 FLOPs a weight. x's
 * quantisation stays out of the roof: with one per pass over the matrix's ~900 rows, the LM head (one per
 * 76,000 rows a thread) measured 101 % of the roof on the Zen 4 VM (--isa avx2, q4_0).
 * Validated: every run's y bit for bit against the kernel's first call, and that y against quant_matvec_ref
 * within 2 cols 2^-24 sum|w x| (kernels/quant.h's tolerance: the integer dot products are exact, only the
 * f32 sums of the block products differ). */
static int measure_quant(struct run_ctx *x, const struct plan *p, int threads, struct ceilings *c,
                         struct fr_err *err) {
    const int cols = QUANT_ROOF_COLS;
    c->quant_cols = cols;
    c->quant_loop = kernel_quant_describe();
    float *xv = alloc_floats((size_t)cols), *row = alloc_floats((size_t)cols);
    FR_CHECK_ALLOC(xv, err, fail);
    FR_CHECK_ALLOC(row, err, fail);
    for (int i = 0; i < cols; i++) xv[i] = quant_seeded((uint32_t)i + 7777u);
    for (int k = 0; k < 2; k++) {
        const enum fr_dtype t = k ? FR_DTYPE_Q4_0 : FR_DTYPE_Q8_0;
        const enum ceiling_kind kind = (enum ceiling_kind)ceilings_quant_kind(t);
        const size_t row_bytes = fr_dtype_bytes(t, (size_t)cols);
        struct roof_mats m;
        const int got = roof_mats_alloc(&m, c, kind, row_bytes, threads, 2);
        c->quant_rows[k] = m.rows;
        if (got < 0) goto fail_alloc;
        if (got == 0) continue;
        const int rows = m.rows;
        unsigned char *mats = m.mats;
        for (int r = 0; r < rows; r++) {
            for (int i = 0; i < cols; i++) row[i] = quant_seeded((uint32_t)(r * cols + i));
            quant_quantize_row(mats + (size_t)r * row_bytes, t, row, (size_t)cols);
        }
        quant_matrix_pack(mats, t, rows, cols);
        float *y0 = m.y + m.ys * (size_t)threads, *yref = y0 + m.ys;
        matvec_quant_thread(y0, mats, t, xv, rows, cols, 1);
        quant_matvec_ref(yref, mats, t, xv, rows, cols, 0);
        /* |w| <= 1 + a Q4_0 step at the clamped end (9/8), so sum|w x| <= 9/8 sum|x| */
        double mag = 0;
        for (int i = 0; i < cols; i++) mag += 1.125 * fabs((double)xv[i]);
        const double tol = 2.0 * cols * 0x1p-24 * mag;
        int rc = 0;
        for (int r = 0; r < rows && !rc; r++) {
            if (!(fabs((double)y0[r] - yref[r]) <= tol))
                rc = fr_err_set(err, "%s roof: validation FAILED at row %d: %.9g, reference %.9g",
                                fr_dtype_name(t), r, (double)y0[r], (double)yref[r]);
        }
        x->qmat = mats, x->qstride = m.stride, x->qrows = rows, x->qcols = cols, x->qtype = (int)t;
        x->qx = xv, x->qy = m.y, x->qy0 = y0, x->qy_stride = m.ys;
        if (!rc) rc = roof_mats_measure(x, p, &m, threads, run_quant, c, kind, fr_dtype_name(t), err);
        x->qmat = NULL, x->qy = NULL, x->qy0 = NULL, x->qx = NULL;
        free(m.mats), free(m.y);
        if (rc) {
            free(xv), free(row);
            return -1;
        }
    }
    free(xv), free(row);
    return 0;
fail_alloc:
    fr_err_set(err, "quantised roof: out of memory");
fail:
    free(xv), free(row);
    return -1;
}

/* Rounds of four tile products a timed run: about 1.4 ms at 16 cycles a product and 3 GHz */
#define TILE_LOOP_ROUNDS 65536

/* The matrix engine's ceilings, all threads and one: first one short checked loop on this thread with
 * traps caught (the loops have run on no AMX machine yet), then the timed runs. */
static int measure_matrix_engine(struct run_ctx *x, const struct plan *p, int threads, struct ceilings *c,
                                 struct fr_err *err) {
    const struct matrix_engine_probe probe = matrix_engine_probe();
    for (int int8 = 0; int8 < 2; int8++) {
        const enum ceiling_kind kind = int8 ? CEILING_AMX_INT8 : CEILING_AMX_BF16;
        int (*loop)(long) = int8 ? matrix_engine_int8_loop : matrix_engine_bf16_loop;
        char why[MATRIX_ENGINE_WHY_LEN];
        if (!matrix_engine_usable(&probe, int8, why) || matrix_engine_try(loop, 64, why) != 0) {
            unavailable(&c->all[kind], why);
            unavailable(&c->one[kind], why);
            continue;
        }
        x->tile_loop = loop, x->tile_iters = TILE_LOOP_ROUNDS;
        const double per_run =
            4.0 * TILE_LOOP_ROUNDS * (int8 ? MATRIX_ENGINE_INT8_OP : MATRIX_ENGINE_BF16_FLOP);
        for (int one = 0; one < 2; one++) {
            x->threads = one ? 1 : threads;
            if (measure(run_tiles, x, &p->peak, per_run * x->threads, &(one ? c->one : c->all)[kind],
                        int8 ? "AMX int8" : "AMX bf16", err))
                return -1;
        }
    }
    return 0;
}

/* The K-quant formats' compute roofs (CEILING_Q4_K_DOT, _Q6_K_, _Q5_K_), as measure_quant's: each
 * thread's own copy of a matrix of at most half its L2 share, 2 FLOPs a weight. Validated: every run's y
 * bit for bit against the first call's, and that y against quant_k_dot_ref within 4e-6 of sum|w x|
 * (the integer sums are exact, only the f32 sums of the superblocks differ). */
static int measure_quant_k(struct run_ctx *x, const struct plan *p, int threads, struct ceilings *c,
                           struct fr_err *err) {
    const int cols = QUANT_ROOF_COLS, nb = cols / QUANT_QK_K;
    c->quant_k_loop = quant_k_describe();
    float *xv = alloc_floats((size_t)cols), *row = alloc_floats((size_t)cols);
    struct quant_block_q8_k *kx = malloc((size_t)nb * sizeof *kx);
    unsigned char *kfile = malloc(quant_k_row_bytes(QUANT_K_Q6_K, (size_t)cols)); /* the widest superblock */
    if (!xv || !row || !kx || !kfile) {
        free(xv), free(row), free(kx), free(kfile);
        return fr_err_set(err, "K-quant roof: out of memory");
    }
    int rc = 0;
    for (int i = 0; i < cols; i++) xv[i] = quant_seeded((uint32_t)i + 7777u);
    quant_k_quantize_act(kx, xv, (size_t)cols);
    static const enum ceiling_kind kinds[QUANT_K_COUNT] = {[QUANT_K_Q4_K] = CEILING_Q4_K_DOT,
                                                           [QUANT_K_Q6_K] = CEILING_Q6_K_DOT,
                                                           [QUANT_K_Q5_K] = CEILING_Q5_K_DOT};
    for (int k = 0; k < QUANT_K_COUNT && !rc; k++) {
        const enum quant_k_type t = (enum quant_k_type)k;
        const enum ceiling_kind kind = kinds[k];
        const size_t rb = quant_k_row_bytes(t, (size_t)cols);
        struct roof_mats m;
        const int got = roof_mats_alloc(&m, c, kind, rb, threads, 1);
        c->quant_k_rows[k] = m.rows;
        if (got < 0) rc = fr_err_set(err, "K-quant roof: out of memory");
        if (got <= 0) continue;
        for (int r = 0; r < m.rows; r++) {
            for (int i = 0; i < cols; i++) row[i] = quant_seeded((uint32_t)(r * cols + i));
            quant_k_quantize_row(m.mats + (size_t)r * rb, t, row, (size_t)cols);
        }
        float *y0 = m.y + m.ys * (size_t)threads;
        quant_k_matrix_pack(m.mats, t, m.rows, cols);
        quant_k_matvec_rows(y0, m.mats, t, kx, nb, m.rows, 0, m.rows);
        for (int r = 0; r < m.rows && !rc; r++) {
            double mag = 0;
            quant_k_matrix_row(kfile, t, m.mats, m.rows, cols, r); /* the reference reads file order */
            quant_k_dequantize_row(row, t, kfile, (size_t)cols);
            for (int i = 0; i < cols; i++) mag += fabs((double)row[i] * (double)xv[i]);
            const double ref = quant_k_dot_ref(t, kfile, kx, nb);
            if (!(fabs((double)y0[r] - ref) <= 4e-6 * mag + 1e-30))
                rc = fr_err_set(err, "%s roof: validation FAILED at row %d: %.9g, reference %.9g",
                                quant_k_name(t), r, (double)y0[r], ref);
        }
        x->qmat = m.mats, x->qstride = m.stride, x->qrows = m.rows, x->qcols = cols, x->qtype = (int)t;
        x->kx = kx, x->qy = m.y, x->qy0 = y0, x->qy_stride = m.ys;
        if (!rc) rc = roof_mats_measure(x, p, &m, threads, run_quant, c, kind, quant_k_name(t), err);
        x->qmat = NULL, x->qy = NULL, x->qy0 = NULL, x->kx = NULL;
        free(m.mats), free(m.y);
    }
    free(xv), free(row), free(kx), free(kfile);
    return rc ? -1 : 0;
}

static int measure_sgemm(struct run_ctx *x, const struct plan *p, int threads, struct ceilings *c,
                         struct fr_err *err) {
    int rc = -1, n = c->sgemm_n;
    size_t nn = (size_t)n * (size_t)n;
    float *ga = alloc_floats(nn), *gb = alloc_floats(nn), *gc = alloc_floats(nn);
    FR_CHECK_ALLOC(ga, err, out);
    FR_CHECK_ALLOC(gb, err, out);
    FR_CHECK_ALLOC(gc, err, out);
    /* Small integers: every product and partial sum is an exact f32 integer whatever the blocking order. */
    for (size_t i = 0; i < nn; i++) ga[i] = (float)((int)(i % 5) - 2), gb[i] = (float)((int)(i % 3) - 1);
    x->ga = ga, x->gb = gb, x->gc = gc, x->sgemm_n = n;
    int saved = openblas_get_num_threads();
    double flops = 2.0 * n * (double)n * n;
    for (int one = 0; one < 2; one++) {
        openblas_set_num_threads(one ? 1 : threads);
        memset(gc, 0, nn * sizeof(float));
        if (measure(run_sgemm, x, &p->sgemm, flops, &(one ? c->one : c->all)[CEILING_SGEMM], "sgemm", err))
            goto restore;
        for (int k = 0; k < 64; k++) {
            size_t i = (size_t)(k * 37) % (size_t)n, j = (size_t)(k * 91 + 5) % (size_t)n;
            double want = 0;
            for (size_t l = 0; l < (size_t)n; l++)
                want += (double)ga[i * (size_t)n + l] * gb[l * (size_t)n + j];
            if ((double)gc[i * (size_t)n + j] != want) {
                fr_err_set(err, "sgemm: validation FAILED at C[%zu][%zu]: %g, expected %g", i, j,
                           (double)gc[i * (size_t)n + j], want);
                goto restore;
            }
        }
    }
    rc = 0;
restore:
    openblas_set_num_threads(saved);
out:
    x->ga = x->gb = NULL, x->gc = NULL;
    free(gc);
    free(gb);
    free(ga);
    return rc;
}

/* Each thread's working set of the cache reads (and the format roofs' matrices): half its share of each
 * level, unless opts sets it. */
static void set_sizes(const struct machine *m, const struct ceilings_opts *o, struct ceilings *c) {
    size_t level_bytes[3] = {m->l1d_bytes, m->l2_bytes, m->l3_bytes};
    int level_count[3] = {m->l1d_count, m->l2_count, m->l3_count};
    for (int lv = 0; lv < 3; lv++) {
        size_t share = m->cores > 0 ? level_bytes[lv] * (size_t)level_count[lv] / (size_t)m->cores : 0;
        c->set_bytes[lv] = o->set_bytes[lv] ? o->set_bytes[lv] : share / 2;
    }
}

int ceilings_measure_quant(const struct machine *m, const struct ceilings_opts *opts, struct ceilings *c,
                           struct fr_err *err) {
    static const struct ceilings_opts none;
    const struct ceilings_opts *o = opts ? opts : &none;
    *c = (struct ceilings){0};
    for (int k = 0; k < CEILING_COUNT; k++) {
        unavailable(&c->all[k], "not measured (only the quantised formats' roofs were)");
        unavailable(&c->one[k], "not measured (only the quantised formats' roofs were)");
    }
    int threads = m->threads > 0 ? m->threads : 1;
    c->threads = threads;
    struct plan p = plan_for(o->quick);
    if (o->cache_rep_bytes) p.cache_rep_bytes = o->cache_rep_bytes;
    set_sizes(m, o, c);
    struct run_ctx x = {0};
    if (measure_quant(&x, &p, threads, c, err)) return -1;
    return measure_quant_k(&x, &p, threads, c, err);
}

int ceilings_raise_quant(struct ceilings *c, const struct ceilings *later, const char *when, char *notes,
                         size_t notes_len) {
    static const enum ceiling_kind kinds[] = {CEILING_Q8_0_DOT, CEILING_Q4_0_DOT, CEILING_Q4_K_DOT,
                                              CEILING_Q5_K_DOT, CEILING_Q6_K_DOT};
    int n = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        for (int one = 0; one <= 1; one++) {
            struct ceiling_figure *f = one ? &c->one[kinds[i]] : &c->all[kinds[i]];
            const struct ceiling_figure *g = one ? &later->one[kinds[i]] : &later->all[kinds[i]];
            /* under 0.1 % faster is no news: the roof keeps its first measurement */
            if (!g->measured || (f->measured && !(g->best > f->best * 1.001))) continue;
            size_t used = strlen(notes);
            if (used + 1 < notes_len) {
                char was[32] = "unmeasured";
                if (f->measured) snprintf(was, sizeof was, "%.1f", f->best);
                snprintf(notes + used, notes_len - used, "%s%s %s -> %.1f (%s)", used ? "; " : "",
                         ceilings_key(kinds[i], one), was, g->best, when);
            }
            *f = *g;
            n++;
        }
    return n;
}

int ceilings_measure(const struct machine *m, const struct ceilings_opts *opts, struct ceilings *c,
                     struct fr_err *err) {
    static const struct ceilings_opts none;
    const struct ceilings_opts *o = opts ? opts : &none;
    *c = (struct ceilings){0};
    int threads = m->threads > 0 ? m->threads : 1;
    c->threads = threads;
    struct plan p = plan_for(o->quick);
    if (o->cache_rep_bytes) p.cache_rep_bytes = o->cache_rep_bytes;

    size_t dram = o->dram_array_bytes ? o->dram_array_bytes : ceilings_dram_bytes(m, &c->dram_array_capped);
    c->dram_array_bytes = dram / sizeof(float) / 64 * 64 * sizeof(float);
    if (c->dram_array_bytes == 0) return fr_err_set(err, "DRAM array of %zu bytes is too small", dram);
    set_sizes(m, o, c);
    c->sgemm_n = o->sgemm_n > 0 ? o->sgemm_n : (o->quick ? 1024 : 2048);
    c->fma_iters = o->fma_iters > 0 ? o->fma_iters : 200000;
    /* a quarter of L1d per thread for input and output together, at most 4096 floats each */
    c->exp_n = m->l1d_bytes >= 4096 ? m->l1d_bytes / 8 / sizeof(float) : 256;
    if (c->exp_n > 4096) c->exp_n = 4096;

    struct run_ctx x = {.n = c->dram_array_bytes / sizeof(float)};
    x.read = pick_read(&c->read_isa);
    if (measure_dram(&x, &p, threads, c, err)) return -1;
    if (measure_cache(&x, &p, threads, c, err)) return -1;
    if (measure_peak(&x, &p, threads, c, err)) return -1;
    if (measure_exp(&x, &p, threads, CEILING_EXP, c, err)) return -1;
    if (measure_exp(&x, &p, threads, CEILING_SAMPLER_EXP, c, err)) return -1;
    if (measure_overheads(&x, &p, threads, c, err)) return -1;
    if (measure_quant(&x, &p, threads, c, err)) return -1;
    if (measure_quant_k(&x, &p, threads, c, err)) return -1;
    if (measure_matrix_engine(&x, &p, threads, c, err)) return -1;
    return measure_sgemm(&x, &p, threads, c, err); /* last: OpenBLAS threads spin a while after a call */
}

static cJSON *figure_to_json(const struct ceiling_figure *f) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    bool ok = cJSON_AddBoolToObject(o, "available", f->measured) != NULL;
    if (f->measured) {
        ok = ok && cJSON_AddNumberToObject(o, "best", f->best) &&
             cJSON_AddNumberToObject(o, "median", f->median) && cJSON_AddNumberToObject(o, "min", f->min) &&
             cJSON_AddNumberToObject(o, "max", f->max) && cJSON_AddNumberToObject(o, "reps", f->reps) &&
             cJSON_AddBoolToObject(o, "noisy", f->noisy);
    } else {
        ok = ok && cJSON_AddNullToObject(o, "best") && cJSON_AddNullToObject(o, "median") &&
             cJSON_AddNullToObject(o, "min") && cJSON_AddNullToObject(o, "max") &&
             cJSON_AddNumberToObject(o, "reps", 0) && cJSON_AddStringToObject(o, "reason", f->why);
    }
    if (!ok) cJSON_Delete(o), o = NULL;
    return o;
}

static bool add_figure(cJSON *obj, const char *key, const struct ceiling_figure *f) {
    cJSON *fj = figure_to_json(f);
    if (!fj) return false;
    cJSON_AddItemToObject(obj, key, fj);
    return true;
}

/* read_kernel, read_kernel_1core and read_selection: {rounds, kernels: [{name, median_gbs,
 * median_1core_gbs}]}
 */
static bool add_read_choice(cJSON *o, const struct ceilings *c) {
    bool ok = cJSON_AddStringToObject(o, "read_kernel", c->read_kernel[0] ? c->read_kernel[0] : "none") &&
              cJSON_AddStringToObject(o, "read_kernel_1core", c->read_kernel[1] ? c->read_kernel[1] : "none");
    cJSON *sel = ok ? cJSON_AddObjectToObject(o, "read_selection") : NULL;
    cJSON *list = sel ? cJSON_AddArrayToObject(sel, "kernels") : NULL;
    ok = list && cJSON_AddNumberToObject(sel, "rounds", c->read_rounds);
    for (int k = 0; ok && k < c->read_kernels; k++) {
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddItemToArray(list, e) &&
             cJSON_AddStringToObject(e, "name", c->read_kernel_names[k]) &&
             cJSON_AddNumberToObject(e, "median_gbs", c->read_gbs[0][k]) &&
             cJSON_AddNumberToObject(e, "median_1core_gbs", c->read_gbs[1][k]);
    }
    return ok;
}

void ceilings_describe_read(const struct ceilings *c, char *buf, size_t len) {
    if (!c->read_kernel[0] || c->read_kernels < 1) {
        snprintf(buf, len, "the DRAM read kernel: none chosen");
        return;
    }
    int at = snprintf(buf, len,
                      "DRAM read kernel %s (one core: %s), the fastest by median of the %d that ran in turn "
                      "for %d rounds (",
                      c->read_kernel[0], c->read_kernel[1], c->read_kernels, c->read_rounds);
    for (int k = 0; k < c->read_kernels && at >= 0 && (size_t)at < len; k++)
        at += snprintf(buf + at, len - (size_t)at, "%s%s %.1f / %.1f", k ? ", " : "", c->read_kernel_names[k],
                       c->read_gbs[0][k], c->read_gbs[1][k]);
    if (at >= 0 && (size_t)at < len)
        snprintf(buf + at, len - (size_t)at, " GB/s, %d thread%s / one core)", c->threads,
                 c->threads == 1 ? "" : "s");
}

cJSON *ceilings_to_json(const struct ceilings *c) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    bool ok = true;
    for (int k = 0; k < CEILING_COUNT && ok; k++)
        ok = add_figure(o, ceilings_key((enum ceiling_kind)k, false), &c->all[k]);
    for (int k = 0; k < CEILING_COUNT && ok; k++)
        ok = add_figure(o, ceilings_key((enum ceiling_kind)k, true), &c->one[k]);
    ok = ok && add_figure(o, "plain_read_gbs", &c->plain_read);
    ok = ok && add_figure(o, "read_paired_gbs", &c->read_paired);
    ok = ok && add_figure(o, "dram_read_slice_gbs", &c->read_slice);
    ok = ok && cJSON_AddNumberToObject(o, "plain_read_diff_pct", c->plain_diff_pct);
    ok = ok && cJSON_AddNumberToObject(o, "plain_read_diff_best_pct", c->plain_diff_best_pct);
    ok = ok && cJSON_AddNumberToObject(o, "threads", c->threads);
    ok = ok && cJSON_AddStringToObject(o, "read_isa", c->read_isa ? c->read_isa : "none");
    ok = ok && cJSON_AddStringToObject(o, "fma_isa", c->fma_isa ? c->fma_isa : "none");
    ok = ok && add_read_choice(o, c);
    ok = ok && cJSON_AddNumberToObject(o, "dram_array_bytes", (double)c->dram_array_bytes);
    ok = ok && cJSON_AddBoolToObject(o, "dram_array_capped", c->dram_array_capped);
    ok = ok && cJSON_AddNumberToObject(o, "l1_set_bytes", (double)c->set_bytes[0]);
    ok = ok && cJSON_AddNumberToObject(o, "l2_set_bytes", (double)c->set_bytes[1]);
    ok = ok && cJSON_AddNumberToObject(o, "l3_set_bytes", (double)c->set_bytes[2]);
    ok = ok && cJSON_AddNumberToObject(o, "sgemm_n", c->sgemm_n);
    ok = ok && cJSON_AddNumberToObject(o, "exp_n", (double)c->exp_n);
    ok = ok && cJSON_AddStringToObject(o, "quant_loop", c->quant_loop ? c->quant_loop : "none");
    ok = ok && cJSON_AddNumberToObject(o, "quant_cols", c->quant_cols);
    ok = ok && cJSON_AddNumberToObject(o, "q8_0_rows", c->quant_rows[0]);
    ok = ok && cJSON_AddNumberToObject(o, "q4_0_rows", c->quant_rows[1]);
    if (!ok) cJSON_Delete(o), o = NULL;
    return o;
}
