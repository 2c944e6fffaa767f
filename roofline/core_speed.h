/* Each core's compute speed at a few moments of a run: attention over a small bf16 KV set in L2, on one core
 * at a time. On a VM a core's arithmetic can run far below its usual speed, for seconds to minutes, while
 * memory reads hardly move: on the 2-core Zen 5 VM, attention from L2 (this probe's shape, AVX2) ran at
 * 21.0 GB/s on one vCPU against 29.9 on the other (AVX-512 29.8 against 41.0), while the two read L2 at 195
 * and 208 GB/s and the peak-FMA kernel ran within 2 % on both; at other moments that kernel too ran 23 %
 * slower on one vCPU. Most likely another guest's work on the host's sibling hyperthread. The state can
 * flip within seconds: this probe, 12 times in a row on that VM (AVX2), found core 1 at 68-77 % of core 0
 * in 6 of them and at 95-99 % in the other 6. The paired read cannot see this, so a run probes every core
 * at the start, between its phases and at the end, and says how far apart the slowest and the fastest
 * probe were (report.md's setup line and findings, run.json's provenance, compare, `machine`). A snapshot:
 * a slow spell between two probes goes unseen. */
#ifndef FR_CORE_SPEED_H
#define FR_CORE_SPEED_H

#include <stddef.h>

#define CORE_SPEED_MAX_CORES  64
#define CORE_SPEED_MAX_PROBES 8
/* The probe's shape: one KV head, Qwen3-0.6B's 2 query heads of 128 per KV head, 256 bf16 positions (128 KiB
 * of K and V). Each core's figure is the median of CORE_SPEED_RUNS runs of CORE_SPEED_CALLS calls, about
 * 0.5 ms a run: the median, not the best, since what the blocks meet is the core's usual speed. */
#define CORE_SPEED_POS   256
#define CORE_SPEED_CALLS 100
#define CORE_SPEED_RUNS  15
/* Reported when the slowest probe of any core ran below this fraction of the fastest: on the Zen 5 VM, the
 * probes of quiet runs read 0.86-0.99 of each other (cores and moments alike), runs with slow spells
 * 0.58-0.78. */
#define CORE_SPEED_MOVED 0.85

/* One moment: each core's GB/s of K and V, the median run. */
struct core_speed {
    const char *when; /* e.g. "at the start" (a string literal) */
    int cores;        /* cores probed: the team's threads, at most CORE_SPEED_MAX_CORES */
    int asked;        /* cores the caller's team has; more than `cores`: the rest were not probed */
    double gbs[CORE_SPEED_MAX_CORES];
};

struct core_speed_log {
    int n; /* moments probed */
    struct core_speed probe[CORE_SPEED_MAX_PROBES];
};

/* Probes the cores of the team of `threads` OpenMP threads, thread i bound to core i (machine_bind_threads),
 * one at a time while the others wait at a barrier, with the active ISA's kernels, and appends the moment to
 * log (nothing past CORE_SPEED_MAX_PROBES). Returns 0, or -1 when a buffer could not be allocated or the
 * output was not finite (nothing is appended). */
int core_speed_probe(struct core_speed_log *log, const char *when, int threads);
/* The slowest probe of any core over the fastest of any, over every moment; NaN when nothing was probed. */
double core_speed_low(const struct core_speed_log *log);
/* The probes in words: "cores 0 / 1: 29.9 / 21.0 GB/s at the start, 29.5 / 29.8 at the end (attention
 * from L2 ...)" (above 4 cores each moment as its range; cores left out named as such); "" when nothing was
 * probed. */
void core_speed_describe(const struct core_speed_log *log, const char *isa, char *buf, size_t len);
/* core_speed_low in words, to follow core_speed_describe's: "; the slowest probe at 77 % of the fastest",
 * "" when NaN. */
void core_speed_low_words(double low, char *buf, size_t len);

#endif
