/* Private to the sampler: the softmax's passes over threads, with the same bits for any number of them.
 * A row is always cut into the same SAMPLER_PARTS parts of whole 16-token blocks, however many threads run,
 * and each thread takes a run of whole parts. The max combines exactly in any order; the sum, whose bits
 * depend on the order of its additions, is summed part by part and the parts' sums are added in part order.
 * One fork a call: sampler_split_run runs the serial steps between passes on the calling thread while the
 * other threads wait in a kernel team (kernels/team.h: a spin barrier) for the passes it hands them with
 * sampler_phase. Below SAMPLER_SPLIT_MIN tokens, inside another parallel region, or with one thread,
 * everything runs on the caller. The top-p filter stays on the calling thread: split the same way it measured
 * slower on two threads (docs/tuning/sampler.md, "Top-p on one thread"). Layering: sampler.h includes this
 * (for the threshold); it includes no sampler header. */
#ifndef FR_SAMPLER_SPLIT_H
#define FR_SAMPLER_SPLIT_H

#define SAMPLER_PARTS 8 /* also the most threads a row's passes use */
/* A row shorter than this runs on one thread: on the 2-core Zen 5 VM a fork and join costs about 3 us, a
 * pass over 32768 tokens 5-20 us. */
#define SAMPLER_SPLIT_MIN 32768

/* Part k's tokens [lo, hi) of a row of n: whole 16-token blocks (the last part ends at n). */
void sampler_part(int n, int k, int *lo, int *hi);
/* The parts [k0, k1) that thread t of `threads` takes. */
void sampler_parts_of(int t, int threads, int *k0, int *k1);

/* A pass over a row: thread t of `threads` does its share (sampler_parts_of). */
typedef void (*sampler_pass)(void *ctx, int t, int threads);

/* The threads a row of n tokens is split over from here by a run of `threads`: 1 below SAMPLER_SPLIT_MIN or
 * inside a parallel region, else threads, at most the processors and SAMPLER_PARTS. */
int sampler_split_threads(int n, int threads);
/* Runs body(ctx) on the calling thread, with the other threads (of `threads`) a row of n tokens is worth
 * waiting to run the passes body hands them through sampler_phase. */
void sampler_split_run(int n, int threads, void (*body)(void *ctx), void *ctx);
/* Runs pass(ctx, t, threads) for every t on the threads of the sampler_split_run the caller is in (one
 * thread, t = 0, outside any), and returns when every share is done. */
void sampler_phase(sampler_pass pass, void *ctx);

#endif
