/* Measured ceilings of the machine, by STREAM's rules: DRAM arrays at least 4x the last-level cache (from
 * hwloc), the best of >= 10 timed runs is the ceiling and median/min/max/reps travel with it, every kernel
 * validates its own result (a failed validation is an error, never a figure). Figures: DRAM read (sum; the
 * decode denominator), copy and triad; read bandwidth of each cache level; peak f32 FLOP/s of an FMA kernel;
 * OpenBLAS sgemm; the throughput of the vector exp the kernels use (kernel_vexp) and of the sampler's own exp
 * (sampler_exp_row); the rate of two fixed costs, a kernel call that opens no parallel region and an OpenMP
 * parallel region's fork + join (their reciprocals are the overhead floors of the roofline). Each with all
 * threads (one per core, bound by the caller) and with one thread. The DRAM read splits its array into chunks
 * of the matvec's largest (MATVEC_CHUNK_MAX_BYTES) handed out dynamically, as the matvec does, so a slow
 * thread does not hold the others up, with the fastest read kernel the ISA runs (ceilings.read_kernel).
 * GB = 1e9 bytes. STREAM's byte counts: read n*4, copy 2*n*4, triad 3*n*4 (write-allocate not counted). */
#ifndef FR_CEILINGS_H
#define FR_CEILINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/fr_err.h"
#include "kernels/mem_span.h"
#include "kernels/quant_k.h"
#include "roofline/topology.h"

struct cJSON;

#define CEILINGS_READ_SLICES 8

/* The smallest array a DRAM read uses, whatever 4x the LLC gives: a last-level cache that resists
 * thrashing (AMD's L3) keeps part of an array read over and over, about LLC / array of it. Measured on the
 * 2-core Zen 4 VM (hwloc: 32 MiB L3), one array re-read, huge pages, two threads: 128 MiB 42.2 GB/s,
 * 256 MiB 37.8, 512 MiB 36.5, 1 GiB 36.0 (one thread 34.3, 32.3, 31.9, 31.5); the same sizes read from
 * alternating regions, so nothing is kept: 31.1-31.6 on one thread at every size. */
#define CEILINGS_DRAM_MIN_BYTES ((size_t)512 << 20)

/* The DRAM arrays take at most this share of the machine's memory (1/32: 768 MiB of 24 GiB): the read,
 * copy and triad arrays live at once, beside the run's own read array and the weights, and a VM may report
 * the L3 of a whole socket (one 2-core Zen 5 VM: two L3s of 508 MiB, so 4x them asked for 4 GiB per array,
 * a full run held 12.5 GB and two runs at once ran out of memory), never below CEILINGS_DRAM_MIN_BYTES. */
#define CEILINGS_DRAM_MEMORY_SHARE 32

/* Bytes of each DRAM array on machine m: STREAM's rule, 4x the total LLC, at least CEILINGS_DRAM_MIN_BYTES,
 * at most 1/CEILINGS_DRAM_MEMORY_SHARE of the memory the OS reports (when it does): *capped says whether
 * the cap cut it below the rule (NULL: not asked). */
size_t ceilings_dram_bytes(const struct machine *m, bool *capped);

enum ceiling_kind {
    CEILING_DRAM_READ,
    CEILING_DRAM_COPY,
    CEILING_DRAM_TRIAD,
    CEILING_L1_READ,
    CEILING_L2_READ,
    CEILING_L3_READ,
    CEILING_PEAK_FLOPS,
    CEILING_SGEMM,
    CEILING_EXP,         /* Gexp/s of the kernels' vector exp (kernel_vexp), inputs and outputs in L1 */
    CEILING_CALL,        /* Mcall/s of a kernel call that opens no parallel region: 1 / the call floor */
    CEILING_FORK,        /* Mcall/s of an OpenMP parallel region (fork + join barrier): 1 / the fork floor */
    CEILING_SAMPLER_EXP, /* Gexp/s of the sampler's own exp (sampler_exp_row), inputs and outputs in L1 */
    /* GFLOP/s of the Q8_0 / Q4_0 matvec (kernels/quant.h) on matrices in L2: the format's compute roof, 2
     * FLOPs a weight (G weights/s = half), the dequantisation work (x's quantisation, the scales'
     * products) inside the measured time; on the active ISA's loop (ceilings.quant_loop) */
    CEILING_Q8_0_DOT,
    CEILING_Q4_0_DOT,
    /* GFLOP/s of the Q4_K / Q6_K / Q5_K matvec (kernels/quant_k.h) on matrices in L2, by the same rules:
     * x's Q8_K quantisation out of it, the scales' and mins' work in it */
    CEILING_Q4_K_DOT,
    CEILING_Q6_K_DOT,
    CEILING_Q5_K_DOT,
    /* Mcall/s of the kernel team's spin barrier (kernels/team.h), every thread arriving together: 1 / the
     * floor of each barrier a kernel call meets on the step's team (a matvec panel's work-share, attention's
     * syncs), where a call opens no region of its own */
    CEILING_BARRIER,
    /* The matrix engine (roofline/matrix_engine.h): GFLOP/s of TDPBF16PS and GOP/s of TDPBUSD in a
     * register-resident tile loop, 2 x 16 x 16 x K a tile product; unavailable with the CPU's, the
     * kernel's or the permission's reason where the tiles cannot run */
    CEILING_AMX_BF16,
    CEILING_AMX_INT8,
    CEILING_COUNT
};

struct ceiling_figure {
    bool measured;                 /* false: unavailable, `why` says why */
    double best, median, min, max; /* GB/s or GFLOP/s: best = the fastest run (= max) is the ceiling */
    int reps;
    bool noisy; /* coefficient of variation of the run times above TIMING_NOISY_CV */
    char why[128];
};

#define CEILINGS_READ_KERNELS_MAX 4

struct ceilings {
    struct ceiling_figure all[CEILING_COUNT]; /* all threads of the machine, one per core */
    struct ceiling_figure one[CEILING_COUNT]; /* one thread (the caller's, bound to core 0) */
    /* The plain-loop check, all threads, DRAM array: an independent plain scalar loop and the read kernel,
     * alternating run for run (timing_measure_pair) so both see the same noise. */
    struct ceiling_figure plain_read, read_paired;
    /* The DRAM read in short repetitions: one eighth of the DRAM array each, the slices in turn (each comes
     * from DRAM: 7 slices were read since), all threads. Its best sees the quiet moments of a shared
     * machine as a short block does; the DRAM roof is the best of it and the full-array read. */
    struct ceiling_figure read_slice;
    double plain_diff_pct; /* 100 * (1 - median over pairs of plain GB/s / kernel GB/s); > 0: plain slower */
    double plain_diff_best_pct; /* 100 * (kernel best - plain best) / kernel best */
    int threads;
    const char *read_isa, *fma_isa; /* the active ISA, "avx512", "avx2" or "scalar" (cache reads, FMA) */
    /* The DRAM read kernel, [0] all threads, [1] one: of the read kernels the ISA runs (ceilings_kernels.h:
     * its own and AVX2's below AVX-512 with software prefetch, AVX2's without), the fastest by median over
     * read_rounds rounds that run them in turn on the DRAM array before the read is measured with it.
     * read_kernels names them, read_gbs[one][k] is kernel k's median in those rounds. The all-threads one
     * also serves the slice read, the plain-loop check and ceilings_read_team. */
    const char *read_kernel[2];
    int read_kernels, read_rounds;
    const char *read_kernel_names[CEILINGS_READ_KERNELS_MAX];
    double read_gbs[2][CEILINGS_READ_KERNELS_MAX];
    size_t dram_array_bytes; /* each array of read / copy / triad */
    bool dram_array_capped;  /* ceilings_dram_bytes() cut it below 4x the LLC */
    size_t set_bytes[3];     /* per-thread working sets of the L1, L2, L3 reads (0: level absent) */
    int sgemm_n;
    long fma_iters;
    size_t exp_n; /* floats each thread's exp run converts per pass (L1-resident input and output) */
    /* The block formats' roofs: each thread's matrix, quant_rows[k] x quant_cols (k 0: Q8_0, 1: Q4_0, at
     * most half the L2 share), and the loop that ran it (kernel_quant_describe) */
    int quant_rows[2], quant_cols;
    const char *quant_loop;
    int quant_k_rows[QUANT_K_COUNT]; /* the same for each K-quant (quant_cols columns), and their loop */
    const char *quant_k_loop;
};

/* Sizes and repetition counts; zeros take the defaults (the STREAM rule and full-mode counts). */
struct ceilings_opts {
    bool quick;              /* fewer repetitions (DRAM read still >= 10 runs), sgemm 1024^3 */
    size_t dram_array_bytes; /* 0: ceilings_dram_bytes() */
    size_t set_bytes[3];     /* 0: half of L1d, half of L2, half of the L3 share of one core */
    size_t cache_rep_bytes;  /* bytes one timed cache-read run reads; 0: 64 MiB (quick: 16 MiB) */
    int sgemm_n;             /* 0: 2048 (quick: 1024) */
    long fma_iters;          /* FMA iterations of one timed run; 0: 200000 */
};

/* Tiny arrays and few iterations for the end-to-end tests (`machine --test-sizes`, the full run's
 * `--test-sizes`): quick, a 1 MiB DRAM array, 8/64/256 KiB cache sets, sgemm 64^3. Not this machine's
 * ceilings, and the run says so. */
void ceilings_opts_test_sizes(struct ceilings_opts *o);
#define CEILINGS_TEST_SIZES_NOTE "test sizes (1 MiB arrays): not this machine's ceilings"

/* How many runs each ceiling is the best of under opts (quick or full), in words for run.json and the
 * report, e.g. "DRAM read best of 10 runs; DRAM copy and triad 5 runs; ...". */
void ceilings_describe_plan(const struct ceilings_opts *opts, char *buf, size_t len);

/* Key of a figure in JSON and CSV: "dram_read_gbs", or "dram_read_1core_gbs" when one_core. */
const char *ceilings_key(enum ceiling_kind kind, bool one_core);
const char *ceilings_unit(enum ceiling_kind kind); /* "GB/s", "GFLOP/s", "GOP/s", "Gexp/s" or "Mcall/s" */
/* The compute roof of block format t (Q8_0 or Q4_0): CEILING_Q8_0_DOT or CEILING_Q4_0_DOT; -1 for others. */
int ceilings_quant_kind(int t);

/* Measures every ceiling with m->threads threads (bind them first: machine_bind_threads). Returns non-zero
 * with err filled on allocation failure or when a kernel fails its own validation. */
int ceilings_measure(const struct machine *m, const struct ceilings_opts *opts, struct ceilings *c,
                     struct fr_err *err);

/* Only the quantised formats' roofs (Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, all threads and one) on the active ISA,
 * with ceilings_measure's sizes; the other figures of c are left unmeasured. */
int ceilings_measure_quant(const struct machine *m, const struct ceilings_opts *opts, struct ceilings *c,
                           struct fr_err *err);
/* Each quantised format's roof of c replaced by later's where later measured it faster (a ceiling is the
 * fastest run seen: a compute-bound format's roof measured while a core ran slow would sit under the blocks
 * it bounds), each change appended to notes as "q4_k_gflops 82.7 -> 109.8 (when)". Returns the count. */
int ceilings_raise_quant(struct ceilings *c, const struct ceilings *later, const char *when, char *notes,
                         size_t notes_len);

/* The same read over `threads` threads (the run's), for a read measured alongside other work, e.g.
 * alternated with decode steps: with the all-threads read kernel the last ceilings_measure of
 * this process chose for the active ISA (before any: the ISA's prefetching kernel). Returns the sum. */
double ceilings_read_team(const float *a, size_t n, int threads);
/* Chooses the all-threads read kernel for ceilings_read_team as ceilings_measure does (the ISA's candidates
 * in turn over a[0..n) for `rounds` rounds, at most 7, each run validated: a[i] must hold (float)(i & 3), as
 * the ceilings' DRAM array does; the fastest by median), without measuring any ceiling: a harness that
 * pairs a kernel with the read then pairs it with the read a full run pairs its steps with. desc names the
 * choice and each candidate's median GB/s. Returns 0, or -1 with err filled when a read fails validation. */
int ceilings_choose_team_read(const float *a, size_t n, int threads, int rounds, char *desc, size_t len,
                              struct fr_err *err);
/* The same read over n spans (the whole floats of each), their chunks handed out in turn in one parallel
 * region: a read of where a block of the decode step reads. Returns the sum (of whatever the bytes hold). */
double ceilings_read_team_spans(const struct mem_span *s, int n, int threads);
/* The read kernel choice in words, for the roof notes and machine: "DRAM read kernel avx2 without software
 * prefetch (one core: ...), the fastest by median of the 3 that ran in turn for 7 rounds (avx512 64.6 / 35.3,
 * ... GB/s, 2 threads / one core)". */
void ceilings_describe_read(const struct ceilings *c, char *buf, size_t len);
/* An array of n floats for a streamed read (the DRAM read, the read paired with the steps), backed as the
 * model's weights are: anonymous pages advised for transparent huge pages. NULL when the mapping fails;
 * release with ceilings_stream_free(a, n). */
float *ceilings_stream_alloc(size_t n);
void ceilings_stream_free(float *a, size_t n);
/* The share of [p, p + bytes) that transparent huge pages back, from /proc/self/smaps (each mapping that
 * overlaps the range counts its AnonHugePages, at most its overlap); NaN when smaps cannot be read. The run
 * compares its read array with the weights: a read on smaller pages than the weights is no roof for them. */
double ceilings_huge_fraction(const void *p, size_t bytes);
/* One thread's read-only sum of a[0..n) with the fastest kernel this CPU has (for counter calibration). */
double ceilings_read_sum(const float *a, size_t n);

/* The figures as a cJSON object: one object per key {best, median, min, max, reps, noisy} (or {available:
 * false, reason}), plus plain_read_gbs, read_paired_gbs, dram_read_slice_gbs, plain_read_diff_pct,
 * plain_read_diff_best_pct, isa and sizes. NULL on allocation failure. */
struct cJSON *ceilings_to_json(const struct ceilings *c);

#endif
