/* Layer: roofline/ (topology, ceilings, the timing harness, the counters, roofline math) includes kernels/
 * only and knows nothing of the model; bench/ uses it, never the other way round.
 * The roofline model, model-agnostic: a roof is a peak compute rate and a bandwidth; a point is the FLOPs
 * and bytes of a piece of work and, when measured, its time. attainable(AI) = min(peak, bw * AI), ridge at
 * AI = peak / bw, predicted time = max(bytes / bw, flops / peak), efficiency = predicted / measured.
 * Units: GFLOP/s and GB/s (1e9), arithmetic intensity in FLOP per byte, times in seconds. */
#ifndef FR_ROOFLINE_H
#define FR_ROOFLINE_H

#include <stdbool.h>

#include "kernels/dtype.h"
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

/* ---- the cache-aware roofline with an exp roof and an overhead floor ----
 * A piece of work reads bytes from each memory level, does FLOPs and exps, and makes kernel calls, some of
 * which open an OpenMP parallel region (forks) and some of which meet the step's kernel team at its barrier
 * (the overhead term: calls, forks and barriers at their measured floors, added). Each is served by its own
 * resource with its own measured rate; the predicted time is the largest of the terms (the binding roof),
 * never their sum: the levels, the FMA pipes and the exp's instructions overlap in an out-of-order core with
 * prefetching, so a sum is no bound (a measured point could beat it). A parallel piece of work uses the
 * all-threads rates, a serial one the one-core rates. */
enum roofline_term {
    ROOFLINE_TERM_DRAM,
    ROOFLINE_TERM_L1,
    ROOFLINE_TERM_L2,
    ROOFLINE_TERM_L3,
    ROOFLINE_TERM_FMA,
    ROOFLINE_TERM_EXP,
    ROOFLINE_TERM_OVERHEAD,
    ROOFLINE_TERM_INT8, /* a quantised matvec (Q8_0, Q4_0, the K-quants) on its format's measured roof */
    ROOFLINE_TERM_COUNT
};
#define ROOFLINE_LEVELS 4 /* the memory terms come first: DRAM, L1, L2, L3 */

struct roofline_rates {
    double level_gbs[ROOFLINE_LEVELS]; /* read bandwidth of DRAM, L1, L2, L3 */
    double peak_gflops;
    double exp_gexps;         /* the kernels' vector exp (softmax in attention, SiLU) */
    double sampler_exp_gexps; /* the sampler's bit-exact exp (its softmax) */
    double call_s, fork_s;    /* fixed cost of a kernel call without / with a parallel region */
    double barrier_s;         /* fixed cost of one barrier of the step's kernel team (kernels/team.h) */
    /* G weights/s of a quantised format's matvec (ceilings.h CEILING_Q8_0_DOT, ..., CEILING_Q6_K_DOT:
     * GFLOP/s at 2 a weight, halved), its dequantisation included; NaN where the format's roof was not
     * measured. quant_gweights: one format's (roofs_set_quant), for work that names no format;
     * quant_type_gweights[t]: format t's (roofs_set_quant_types; NaN for a type that is not quantised). */
    double quant_gweights;
    double quant_type_gweights[FR_DTYPE_COUNT];
};

struct roofline_work {
    double level_bytes[ROOFLINE_LEVELS];
    double flops, exps;
    double calls, forks; /* calls that open no parallel region, calls that do */
    double barriers;     /* barriers of the step's kernel team met inside those calls */
    bool parallel;       /* runs on the whole team: the all-threads rates apply */
    bool sampler_exp;    /* its exps are the sampler's: sampler_exp_gexps applies instead of exp_gexps */
    bool exps_parallel;  /* its exps (only) run on the whole team: the all-threads exp rate applies to them */
    /* Weights of quantised matvecs (their FLOPs not in flops): quant_weights on quant_gweights, and
     * quant_type_weights[t] on quant_type_gweights[t], each format on its own roof. The int8 dot term is
     * the sum of the formats' times (a mixed block's matvecs run one after the other). */
    double quant_weights;
    double quant_type_weights[FR_DTYPE_COUNT];
};

struct roofline_prediction {
    double term_s[ROOFLINE_TERM_COUNT];
    double predicted_s;       /* the largest term */
    enum roofline_term bound; /* the term that is largest (ties: the earlier term) */
    double levels_sum_s;      /* the memory terms summed (the non-overlapping alternative, for comparison) */
    /* The largest of the other terms (ties: the earlier; second_s 0 when there is none): what the binding
     * resource must overlap with for the prediction to hold. */
    enum roofline_term second;
    double second_s;
    /* The int8 dot term per format (indexed by enum fr_dtype; quant_weights' share not in it). */
    double quant_type_s[FR_DTYPE_COUNT];
};

/* Names as the bound column prints them: "DRAM", "L1", "L2", "L3", "FMA", "exp", "overhead", "int8 dot".
 * "int8 dot" whichever quantised formats the block runs: the format column (report.md, blocks.csv,
 * run.json `format`) names them, and the term is priced on each one's own roof. */
const char *roofline_term_name(enum roofline_term t);
/* Checks the rates a piece of work needs (positive and finite where its amount is > 0); err names the rate.
 */
int roofline_predict(const struct roofline_rates *all, const struct roofline_rates *one,
                     const struct roofline_work *w, struct roofline_prediction *out, struct fr_err *err);
/* Work whose second term is at least this share of its binding one is co-bound: the max of the two is met
 * only if they overlap completely, and their sum is what it would take with no overlap at all. */
#define ROOFLINE_COBOUND_SHARE 0.5
/* A point is overhead-bound when it measured within this factor of its overhead floor. */
#define ROOFLINE_OVERHEAD_FACTOR 1.5

#endif
