/* Checks of the figures of a full run's run.json, for the end-to-end test: every measured and predicted
 * figure of every block, step and sampler row is finite and positive, min <= median <= max, each derived
 * figure equals what its inputs give (efficiency = predicted / measured, tokens/s = 1 / measured, DRAM GB/s
 * = DRAM bytes / measured, a block's paired efficiency = its DRAM GB/s / its paired read; a block with DRAM
 * bytes also has a read of its own bytes, one without has none), no step reads
 * weights that would come from cache, every ceiling is a figure or says why not, rows without top-p have no
 * nucleus, and the plan of repetitions agrees with the ceilings' own repetition counts and is in report.md.
 */
#ifndef FR_TESTS_RUN_FIGURES_H
#define FR_TESTS_RUN_FIGURES_H

#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The number under key, NaN when absent, null or not a number. */
static inline double rf_num(const cJSON *row, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static inline void rf_expect_positive(const char *what, const cJSON *row, const char *key) {
    double v = rf_num(row, key);
    cr_expect(isfinite(v) && v > 0, "%s: %s = %g, not a finite positive figure", what, key, v);
}

/* got equals want up to the rounding of one division or multiplication (both read back exactly). */
static inline void rf_expect_derived(const char *what, const char *key, double got, double want) {
    cr_expect(isfinite(got) && fabs(got - want) <= 1e-12 * fabs(want),
              "%s: %s = %.17g, its inputs give %.17g", what, key, got, want);
}

/* The timing figures of a measured row: positive, ordered, at least one repetition. */
static inline void rf_expect_timing(const char *what, const cJSON *row) {
    const char *keys[] = {"measured_s", "min_s", "max_s"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) rf_expect_positive(what, row, keys[i]);
    double med = rf_num(row, "measured_s");
    cr_expect(rf_num(row, "min_s") <= med && med <= rf_num(row, "max_s"), "%s: min <= median <= max", what);
    cr_expect_geq(rf_num(row, "reps"), 1, "%s: reps", what);
}

/* A block or step row: timing, predicted time, bytes, efficiency = predicted / measured. */
static inline void rf_expect_predicted_row(const char *what, const cJSON *row) {
    rf_expect_timing(what, row);
    rf_expect_positive(what, row, "predicted_s");
    rf_expect_positive(what, row, "bytes");
    double flops = rf_num(row, "flops");
    cr_expect(isfinite(flops) && flops >= 0, "%s: flops = %g", what, flops);
    rf_expect_positive(what, row, "efficiency");
    rf_expect_derived(what, "efficiency", rf_num(row, "efficiency"),
                      rf_num(row, "predicted_s") / rf_num(row, "measured_s"));
}

static inline void rf_check_blocks(const cJSON *blocks) {
    const cJSON *b;
    cJSON_ArrayForEach(b, blocks) {
        char what[96];
        snprintf(what, sizeof what, "block %s", cJSON_GetObjectItem(b, "name")->valuestring);
        rf_expect_predicted_row(what, b);
        /* a block with DRAM bytes is timed after eviction reads: judged against them too; others are not */
        if (rf_num(b, "dram_bytes") > 0) {
            rf_expect_positive(what, b, "paired_read_gbs");
            rf_expect_derived(what, "paired_efficiency", rf_num(b, "paired_efficiency"),
                              rf_num(b, "dram_bytes") / rf_num(b, "measured_s") / 1e9 /
                                  rf_num(b, "paired_read_gbs"));
            /* and against a read of its own bytes (a median of per-repetition ratios: not derived here) */
            rf_expect_positive(what, b, "own_read_gbs");
            rf_expect_positive(what, b, "own_read_efficiency");
        } else {
            cr_expect(isnan(rf_num(b, "paired_efficiency")), "%s: no DRAM bytes, yet a paired efficiency",
                      what);
            cr_expect(isnan(rf_num(b, "own_read_efficiency")), "%s: no DRAM bytes, yet an own-bytes read",
                      what);
        }
    }
}

static inline void rf_check_steps(const cJSON *steps, int n_blocks) {
    const cJSON *s;
    cJSON_ArrayForEach(s, steps) {
        char what[96];
        snprintf(what, sizeof what, "step at context %.0f", rf_num(s, "context"));
        rf_expect_predicted_row(what, s);
        double med = rf_num(s, "measured_s");
        rf_expect_derived(what, "tokens_per_s", rf_num(s, "tokens_per_s"), 1.0 / med);
        rf_expect_positive(what, s, "dram_bytes");
        rf_expect_derived(what, "dram_gbs", rf_num(s, "dram_gbs"), rf_num(s, "dram_bytes") / med / 1e9);
        rf_expect_positive(what, s, "paired_read_gbs");
        rf_expect_positive(what, s, "paired_efficiency");
        /* the tiny config's weights are far smaller than the paired read: their read would come from cache */
        cr_expect(isnan(rf_num(s, "weights_read_gbs")) && isnan(rf_num(s, "weights_read_efficiency")),
                  "%s: a read of weights smaller than the paired read's buffer", what);
        const cJSON *bs = cJSON_GetObjectItem(s, "blocks_s"), *b;
        cr_expect_eq(cJSON_GetArraySize(bs), n_blocks, "%s: blocks_s has every block", what);
        cJSON_ArrayForEach(b, bs) {
            cr_expect(cJSON_IsNumber(b) && isfinite(b->valuedouble) && b->valuedouble > 0,
                      "%s: blocks_s.%s is not a finite positive time", what, b->string);
        }
    }
}

static inline void rf_check_sampler(const cJSON *sampler) {
    const cJSON *s;
    cJSON_ArrayForEach(s, sampler) {
        const char *v = cJSON_GetObjectItem(s, "variant")->valuestring;
        char what[128];
        snprintf(what, sizeof what, "sampler %s %s %.0f", v, cJSON_GetObjectItem(s, "row_kind")->valuestring,
                 rf_num(s, "vocab"));
        rf_expect_timing(what, s);
        const cJSON *nucleus = cJSON_GetObjectItem(s, "nucleus");
        if (strcmp(v, "greedy") == 0 || strcmp(v, "softmax") == 0)
            cr_expect(cJSON_IsNull(nucleus), "%s: no top-p, so no nucleus (null)", what);
        else
            cr_expect(cJSON_IsNumber(nucleus) && nucleus->valuedouble >= 1 &&
                          nucleus->valuedouble <= rf_num(s, "vocab"),
                      "%s: nucleus", what);
    }
}

/* Each ceiling is a figure (best = the fastest run, median/min/max ordered, reps) or null with a reason. */
static inline void rf_check_ceilings(const cJSON *ceilings) {
    const cJSON *c;
    cJSON_ArrayForEach(c, ceilings) {
        const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
        if (cJSON_IsNull(cJSON_GetObjectItem(c, "value"))) {
            const cJSON *why = cJSON_GetObjectItem(c, "why");
            cr_expect(cJSON_IsString(why) && why->valuestring[0], "ceiling %s: not measured, and no reason",
                      name);
            continue;
        }
        const char *keys[] = {"value", "median", "min", "max"};
        for (size_t i = 0; i < 4; i++) rf_expect_positive(name, c, keys[i]);
        cr_expect(rf_num(c, "min") <= rf_num(c, "median") && rf_num(c, "median") <= rf_num(c, "max") &&
                      rf_num(c, "value") == rf_num(c, "max"),
                  "ceiling %s: best is the max, min <= median <= max", name);
        cr_expect_geq(rf_num(c, "reps"), 1, "ceiling %s", name);
    }
}

/* provenance.plan says how many runs the DRAM read ceiling is the best of: the ceiling's own count agrees,
 * and report.md carries the plan. */
static inline void rf_check_plan(const cJSON *run, const char *report_md) {
    const cJSON *plan = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "provenance"), "plan");
    cr_assert(cJSON_IsString(plan) && plan->valuestring[0], "provenance.plan missing");
    const char *at = strstr(plan->valuestring, "DRAM read ");
    int runs = 0;
    cr_assert(at && sscanf(at, "DRAM read %d runs", &runs) == 1, "plan: '%s'", plan->valuestring);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(run, "ceilings")) {
        if (strcmp(cJSON_GetObjectItem(c, "name")->valuestring, "dram_read_gbs") == 0)
            cr_expect_eq(rf_num(c, "reps"), runs, "the plan says %d runs", runs);
    }
    cr_expect(report_md && strstr(report_md, plan->valuestring), "report.md lacks the plan '%s'",
              plan->valuestring);
}

#endif
