/* Several runs of one side of a compare pooled into one (scripts/compare-commits.sh runs each side more than
 * once, alternated). Sits above compare.h: it refuses runs that compare_check would refuse. */
#ifndef FR_COMPARE_POOL_H
#define FR_COMPARE_POOL_H

#include "bench/report/compare_verdict.h"
#include "bench/report/report.h"
#include "kernels/fr_err.h"

/* Pools n runs of one side into out (which may be runs[0]): per row the median of the runs' medians, the
 * min of their mins, the max of their maxes, the sum of their repetitions; noisy or above the roof when any
 * run is; the runs' own ratios (efficiency, paired read GB/s, ceilings) as medians. The runs must share
 * model, dtype, threads, CPU and the blocks' context, else -1 with a one-line err. */
#define COMPARE_MAX_POOLED COMPARE_SIDE_MAX_RUNS
int compare_pool_runs(struct run_report *const *runs, int n, struct run_report *out, struct fr_err *err);

#endif
