/* Each core's compute speed at one moment: attention over a small bf16 KV set in L2, on one core at a time.
 * On a VM one core's arithmetic can run far below another's for minutes while memory reads hardly move: on
 * the 2-core Zen 5 VM, attention from L2 (this probe's shape, AVX2) ran at 21.0 GB/s on one vCPU against
 * 29.9 on the other (AVX-512 29.8 against 41.0), while the two read L2 at 195 and 208 GB/s and the
 * peak-FMA kernel ran within 2 % on both; at other moments that kernel too ran 23 % slower on one vCPU.
 * Most likely another guest's work on the host's sibling hyperthread. The state can flip within seconds:
 * this probe, 12 times in a row on that VM (AVX2), found core 1 at 68-77 % of core 0 in 6 of them and at
 * 95-99 % in the other 6. The paired read cannot see this, so
 * a run probes each core as it starts and as it ends and says how far apart the cores were (report.md's
 * setup line and findings, run.json's provenance, `machine`). */
#ifndef FR_CORE_SPEED_H
#define FR_CORE_SPEED_H

#include <stddef.h>

#define CORE_SPEED_MAX_CORES 256
/* The probe's shape: one KV head, Qwen3-0.6B's 2 query heads of 128 per KV head, 256 bf16 positions (128 KiB
 * of K and V). Each core's figure is the median of CORE_SPEED_RUNS runs of CORE_SPEED_CALLS calls, about
 * 0.5 ms a run: the median, not the best, since what the blocks meet is the core's usual speed. */
#define CORE_SPEED_POS   256
#define CORE_SPEED_CALLS 100
#define CORE_SPEED_RUNS  15
/* Cores are reported as uneven when one probe found the slowest below this fraction of the fastest: in the
 * even state two probed cores of the Zen 5 VM read 0.90-0.99 of each other, in the slow one 0.68-0.77. */
#define CORE_SPEED_UNEVEN 0.85

struct core_speed {
    int cores;                        /* cores probed (the team's threads); 0: not probed */
    double gbs[CORE_SPEED_MAX_CORES]; /* GB/s of K and V, the median run of each */
};

/* Probes the cores of the team of `threads` OpenMP threads, thread i bound to core i (machine_bind_threads),
 * one at a time while the others wait at a barrier, with the active ISA's kernels. Returns 0, or -1 when a
 * buffer could not be allocated or the output was not finite (s->cores is then 0). */
int core_speed_probe(struct core_speed *s, int threads);
/* The slowest core over the fastest one of the same probe, the lower of the two probes': how uneven the cores
 * were at one moment (the start and the end of a run can differ anyway, the machine's load or clock having
 * moved); NaN when no probe held two cores. */
double core_speed_low(const struct core_speed *start, const struct core_speed *end);
/* core_speed_low in words for the line after core_speed_describe's: "; the slowest core at 77 % of the
 * fastest in one probe", "" when NaN. */
void core_speed_low_words(double low, char *buf, size_t len);
/* The probes in words, e.g. "cores 0 / 1: 29.9 / 21.0 GB/s at the start, 29.5 / 29.8 at the end
 * (attention from L2, avx2, ...)"; "" when neither was probed. */
void core_speed_describe(const struct core_speed *start, const struct core_speed *end, const char *isa,
                         char *buf, size_t len);

#endif
