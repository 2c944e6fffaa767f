/* Roofline arithmetic. Checked in tests/test_roofline.c against hand-computed numbers (ridge point,
 * attainable rate on both sides of it, predicted time, efficiency, the above-roof flag, and the terms of
 * the cache-aware prediction: which one binds, one-core against all-threads rates, missing rates). */
#include "roofline/roofline.h"

#include <math.h>
#include <stdio.h>

static bool positive_finite(double v) {
    return isfinite(v) && v > 0;
}
static bool nonneg_finite(double v) {
    return isfinite(v) && v >= 0;
}

int roofline_check(const struct roofline *r, struct fr_err *err) {
    if (!positive_finite(r->peak_gflops))
        return fr_err_set(err, "roof: peak %g GFLOP/s is not positive", r->peak_gflops);
    if (!positive_finite(r->bw_gbs))
        return fr_err_set(err, "roof: bandwidth %g GB/s is not positive", r->bw_gbs);
    if (!nonneg_finite(r->above_roof_tol))
        return fr_err_set(err, "roof: tolerance %g is negative", r->above_roof_tol);
    return 0;
}

double roofline_attainable_gflops(const struct roofline *r, double ai) {
    double mem = r->bw_gbs * ai;
    return mem < r->peak_gflops ? mem : r->peak_gflops;
}

double roofline_ridge_ai(const struct roofline *r) {
    return r->peak_gflops / r->bw_gbs;
}

double roofline_predicted_s(const struct roofline *r, double flops, double bytes) {
    double mem_s = bytes / (r->bw_gbs * 1e9), compute_s = flops / (r->peak_gflops * 1e9);
    return mem_s > compute_s ? mem_s : compute_s;
}

double roofline_predicted_split_s(const struct roofline *r, double flops, double dram_bytes,
                                  double cache_bytes, enum roofline_bound *bound) {
    double mem_s = dram_bytes / (r->bw_gbs * 1e9) + cache_bytes / (r->cache_gbs * 1e9);
    double compute_s = flops / (r->peak_gflops * 1e9);
    if (bound) *bound = compute_s > mem_s ? ROOFLINE_COMPUTE_BOUND : ROOFLINE_MEMORY_BOUND;
    return mem_s > compute_s ? mem_s : compute_s;
}

const char *roofline_bound_name(enum roofline_bound b) {
    return b == ROOFLINE_COMPUTE_BOUND ? "compute" : "memory";
}

int roofline_evaluate(const struct roofline *r, const struct roofline_point *p, struct roofline_eval *out,
                      struct fr_err *err) {
    *out = (struct roofline_eval){0};
    if (roofline_check(r, err)) return -1;
    if (!nonneg_finite(p->flops) || !nonneg_finite(p->bytes))
        return fr_err_set(err, "point: flops %g and bytes %g must be finite and >= 0", p->flops, p->bytes);
    if (p->flops == 0 && p->bytes == 0) return fr_err_set(err, "point: no flops and no bytes");
    if (!nonneg_finite(p->seconds))
        return fr_err_set(err, "point: time %g s is not a finite number >= 0", p->seconds);
    out->ai = p->bytes > 0 ? p->flops / p->bytes : INFINITY;
    out->attainable_gflops = roofline_attainable_gflops(r, out->ai);
    out->predicted_s = roofline_predicted_s(r, p->flops, p->bytes);
    /* Compute-bound when the FLOPs take longer than the bytes; a tie (the ridge) counts as memory-bound. */
    double mem_s = p->bytes / (r->bw_gbs * 1e9), compute_s = p->flops / (r->peak_gflops * 1e9);
    out->bound = compute_s > mem_s ? ROOFLINE_COMPUTE_BOUND : ROOFLINE_MEMORY_BOUND;
    if (p->seconds > 0) {
        out->measured = true;
        out->achieved_gflops = p->flops / p->seconds / 1e9;
        out->achieved_gbs = p->bytes / p->seconds / 1e9;
        out->efficiency = out->predicted_s / p->seconds;
        out->above_roof = out->efficiency > 1.0 + r->above_roof_tol;
    }
    return 0;
}

static const char *const term_names[ROOFLINE_TERM_COUNT] = {"DRAM", "L1",  "L2",       "L3",
                                                            "FMA",  "exp", "overhead", "int8 dot"};

const char *roofline_term_name(enum roofline_term t) {
    return (unsigned)t < ROOFLINE_TERM_COUNT ? term_names[t] : "?";
}

/* amount / rate, or an error when there is an amount and no usable rate. */
static int term(double amount, double rate, double scale, const char *what, double *out, struct fr_err *err) {
    *out = 0;
    if (!nonneg_finite(amount))
        return fr_err_set(err, "work: %s %g is not a finite number >= 0", what, amount);
    if (amount == 0) return 0;
    if (!positive_finite(rate)) return fr_err_set(err, "roof: no measured %s rate (%g)", what, rate);
    *out = amount / (rate * scale);
    return 0;
}

int roofline_predict(const struct roofline_rates *all, const struct roofline_rates *one,
                     const struct roofline_work *w, struct roofline_prediction *out, struct fr_err *err) {
    *out = (struct roofline_prediction){0};
    const struct roofline_rates *r = w->parallel ? all : one;
    static const char *const level_what[ROOFLINE_LEVELS] = {"DRAM read", "L1 read", "L2 read", "L3 read"};
    for (int l = 0; l < ROOFLINE_LEVELS; l++) {
        if (term(w->level_bytes[l], r->level_gbs[l], 1e9, level_what[l], &out->term_s[l], err)) return -1;
        out->levels_sum_s += out->term_s[l];
    }
    const struct roofline_rates *re = w->exps_parallel ? all : r;
    if (term(w->flops, r->peak_gflops, 1e9, "FMA", &out->term_s[ROOFLINE_TERM_FMA], err) ||
        term(w->exps, w->sampler_exp ? re->sampler_exp_gexps : re->exp_gexps, 1e9,
             w->sampler_exp ? "sampler exp" : "exp", &out->term_s[ROOFLINE_TERM_EXP], err) ||
        term(w->quant_weights, r->quant_gweights, 1e9, "block-format matvec (int8 dot)",
             &out->term_s[ROOFLINE_TERM_INT8], err))
        return -1;
    for (int t = 0; t < FR_DTYPE_COUNT; t++) {
        char what[48];
        snprintf(what, sizeof what, "%s matvec (int8 dot)", fr_dtype_name((enum fr_dtype)t));
        if (term(w->quant_type_weights[t], r->quant_type_gweights[t], 1e9, what, &out->quant_type_s[t], err))
            return -1;
        out->term_s[ROOFLINE_TERM_INT8] += out->quant_type_s[t];
    }
    double call_s = 0, fork_s = 0, barrier_s = 0;
    if (w->calls > 0 && !(nonneg_finite(r->call_s) && r->call_s > 0))
        return fr_err_set(err, "roof: no measured call floor (%g s)", r->call_s);
    if (w->forks > 0 && !(nonneg_finite(r->fork_s) && r->fork_s > 0))
        return fr_err_set(err, "roof: no measured fork floor (%g s)", r->fork_s);
    if (w->barriers > 0 && !(nonneg_finite(r->barrier_s) && r->barrier_s > 0))
        return fr_err_set(err, "roof: no measured team barrier floor (%g s)", r->barrier_s);
    if (!nonneg_finite(w->calls) || !nonneg_finite(w->forks) || !nonneg_finite(w->barriers))
        return fr_err_set(err, "work: calls %g, forks %g and barriers %g must be finite and >= 0", w->calls,
                          w->forks, w->barriers);
    if (w->calls > 0) call_s = w->calls * r->call_s;
    if (w->forks > 0) fork_s = w->forks * r->fork_s;
    if (w->barriers > 0) barrier_s = w->barriers * r->barrier_s;
    out->term_s[ROOFLINE_TERM_OVERHEAD] = call_s + fork_s + barrier_s;
    out->bound = ROOFLINE_TERM_DRAM;
    for (int t = 0; t < ROOFLINE_TERM_COUNT; t++)
        if (out->term_s[t] > out->term_s[out->bound]) out->bound = (enum roofline_term)t;
    out->predicted_s = out->term_s[out->bound];
    if (!(out->predicted_s > 0)) return fr_err_set(err, "work: no bytes, FLOPs, exps or calls");
    out->second = out->bound == ROOFLINE_TERM_DRAM ? ROOFLINE_TERM_L1 : ROOFLINE_TERM_DRAM;
    for (int t = 0; t < ROOFLINE_TERM_COUNT; t++)
        if (t != (int)out->bound && out->term_s[t] > out->term_s[out->second])
            out->second = (enum roofline_term)t;
    out->second_s = out->term_s[out->second];
    return 0;
}
