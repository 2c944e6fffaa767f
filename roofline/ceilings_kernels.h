/* The inner loops of the ceilings, one per ISA (ceilings_avx512.c, ceilings_avx2.c, and the baseline ones in
 * ceilings.c); private to the ceilings module, which picks the one of the kernels' active ISA at run time.
 *
 * Read kernels sum n floats `passes` times. They accumulate in f32 vector registers and fold into a double
 * every CEILINGS_FOLD_FLOATS elements, so for data of small integers (the ceilings use i & 3) the sum is
 * exact and the caller can validate it bit for bit.
 * FMA kernels run `iters` iterations of acc = fma(acc, mul, add) on independent register accumulators (enough
 * of them to cover the FMA latency) and return one lane of one accumulator: every lane follows the same
 * recurrence, so the caller checks it against a scalar fmaf loop. */
#ifndef FR_CEILINGS_KERNELS_H
#define FR_CEILINGS_KERNELS_H

#include <stddef.h>

#define CEILINGS_FOLD_FLOATS 65536

/* The read kernels prefetch into L2 this many floats ahead (4 KiB), one line per 64 bytes read: the
 * hardware prefetchers stall at every 4 KiB page, and the decode step's matvec prefetches too, so a read
 * ceiling without it would sit below what the matvec reaches (measured: ~8 % on this Zen 4 VM). The
 * distance was 8 KiB until one core was measured on its own: these kernels on 1 GiB of huge pages, 512 /
 * 1024 / 2048 floats ahead alternated (Zen 4 VM, three runs of 7, medians), one thread: AVX2 29.4-31.2 /
 * 29.1-31.1 / 26.0-28.3 GB/s, AVX-512 29.8-31.2 / 28.8-31.1 / 27.4-28.6; two threads (six runs of 5):
 * AVX2 1024 at or above 2048 in five, AVX-512 within 1 GB/s of it. */
#define CEILINGS_PREFETCH_FLOATS 1024

double ceilings_read_avx512(const float *a, size_t n, long passes);
double ceilings_read_avx2(const float *a, size_t n, long passes);

/* The AVX2 read without software prefetch (_hw: the hardware prefetchers alone), each fold of the sums one
 * uninterrupted loop of CEILINGS_HW_FOLD_FLOATS floats (exact still: a lane sums at most 2^17 values of at
 * most 3 between folds). On a Zen 5 VM plain loops without prefetch at times read DRAM 5-17 % faster than
 * the prefetching kernels, at other times as fast (medians of 7, alternated in one process, 1 GiB of huge
 * pages, one and two threads, 2 MiB calls as read_dynamic makes them); broken into loops of 64 Ki floats
 * they read at half the speed, and so did the AVX-512 kernel without its prefetch (13.7-30.1 GB/s against
 * 24.0-52.0 with it, the selection rounds of four full runs), which is why it is not a candidate. The
 * ceilings measure the candidates and keep the fastest (ceilings.c select_read). */
#define CEILINGS_HW_FOLD_FLOATS ((size_t)1 << 22)
double ceilings_read_avx2_hw(const float *a, size_t n, long passes);

/* The same read without software prefetch in two streams: the two halves of the n floats side by side, 128
 * bytes of each in turn (exact as the one above: a lane still sums 2^16 values between folds). One core of
 * the Zen 5 VM keeps more lines in flight over two streams than over one. A harness alternating the kernels
 * over 1 GiB (each thread its half, medians of 9, four runs): two streams 1.14-1.28x the one-stream read on
 * one thread and 1.13-1.28x on two; four streams 1.27-1.29x, no faster. In full runs (2 MiB calls) it was
 * chosen every time, 4-14 % above the best other kernel on two threads and 3-22 % on one core. Without it
 * the read ceiling sat below the decode step's matvec, which reads two rows at once (kernels_simd_body.h,
 * mv_dot_row_pair_bf16): 0.96-1.16x the one-stream read in the same harness. */
double ceilings_read_avx2_two_streams(const float *a, size_t n, long passes);

/* Floating-point operations one call does: 2 per lane per accumulator per iteration. */
#define CEILINGS_FMA_AVX512_FLOPS_PER_ITER (16.0 * 16 * 2) /* 16 zmm accumulators x 16 lanes */
#define CEILINGS_FMA_AVX2_FLOPS_PER_ITER   (12.0 * 8 * 2)  /* 12 ymm accumulators x 8 lanes */
float ceilings_fma_avx512(long iters, float mul, float add);
float ceilings_fma_avx2(long iters, float mul, float add);

#endif
