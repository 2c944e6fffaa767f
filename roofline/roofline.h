/* Layer: roofline/ (topology, ceilings, the timing harness, the counters, roofline math) includes kernels/
 * only and knows nothing of the model; bench/ uses it, never the other way round.
 * The roofline model, model-agnostic: a roof is a peak compute rate and a bandwidth; a point is the FLOPs
 * and bytes of a piece of work and, when measured, its time. attainable(AI) = min(peak, bw * AI), ridge at
 * AI = peak / bw, predicted time = max(bytes / bw, flops / peak), efficiency = predicted / measured.
 * Units: GFLOP/s and GB/s (1e9), arithmetic intensity in FLOP per byte, times in seconds. */
#ifndef FR_ROOFLINE_H
#define FR_ROOFLINE_H

#include <stdbool.h>

#include "kernels/fr_err.h"

struct roofline {
    double peak_gflops;
    double bw_gbs;
    double
        cache_gbs; /* bandwidth of the cache that holds cache-resident bytes (roofline_predicted_split_s) */
    /* A point whose efficiency exceeds 1 + above_roof_tol is flagged above its roof (0: strictly). */
    double above_roof_tol;
};

enum roofline_bound { ROOFLINE_MEMORY_BOUND, ROOFLINE_COMPUTE_BOUND };

struct roofline_point {
    double flops, bytes;
    double seconds; /* measured time; 0 for a prediction only */
};

struct roofline_eval {
    double ai;                /* flops / bytes (INFINITY when bytes == 0) */
    double attainable_gflops; /* min(peak, bw * ai) */
    double predicted_s;       /* max(bytes / bw, flops / peak) */
    enum roofline_bound bound;
    bool measured;          /* the point had a time; the fields below are 0 otherwise */
    double achieved_gflops; /* flops / seconds */
    double achieved_gbs;    /* bytes / seconds */
    double efficiency;      /* predicted_s / seconds */
    bool above_roof;        /* faster than the roof allows: an accounting error, never a success */
};

/* Returns non-zero for a roof without positive finite peak and bandwidth. */
int roofline_check(const struct roofline *r, struct fr_err *err);
double roofline_attainable_gflops(const struct roofline *r, double ai);
double roofline_ridge_ai(const struct roofline *r);
double roofline_predicted_s(const struct roofline *r, double flops, double bytes);
/* Evaluates p against r. Errors: a bad roof, negative or non-finite flops, bytes or seconds, no work. */
int roofline_evaluate(const struct roofline *r, const struct roofline_point *p, struct roofline_eval *out,
                      struct fr_err *err);
/* Work whose bytes come from two levels: max(dram_bytes / bw + cache_bytes / cache_gbs, flops / peak); *bound
 * (may be NULL) says which term won (a tie counts as memory-bound). */
double roofline_predicted_split_s(const struct roofline *r, double flops, double dram_bytes,
                                  double cache_bytes, enum roofline_bound *bound);
const char *roofline_bound_name(enum roofline_bound b); /* "memory" or "compute" */

#endif
