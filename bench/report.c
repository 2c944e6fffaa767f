/* struct run_report helpers: initialisation to "nothing measured", the above-roof rule, and the number
 * formats every writer shares (exact round-trip text for CSV, fixed decimals or "n/a" for markdown).
 * Checked in tests/test_report_write.c. */
#include "bench/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void stats_init(struct timing_stats *t) {
    t->median_s = t->min_s = t->max_s = t->mean_s = t->cv = NAN;
    t->reps = 0;
    t->noisy = false;
}

void report_init(struct run_report *r) {
    memset(r, 0, sizeof *r);
    r->prov.timer_resolution_s = NAN;
    r->model.params = r->model.weight_bytes = NAN;
    r->blocks_context = -1;
    for (int i = 0; i < REPORT_MAX_CEILINGS; i++) {
        struct report_ceiling *c = &r->ceilings[i];
        c->value = c->median = c->min = c->max = NAN;
    }
    for (int i = 0; i < BLOCK_COUNT; i++) {
        struct report_block *b = &r->blocks[i];
        b->flops = b->bytes = b->predicted_s = b->efficiency = NAN;
        stats_init(&b->measured);
        for (int e = 0; e < REPORT_MAX_EVENTS; e++) b->counters[e] = NAN;
    }
    for (int i = 0; i < REPORT_MAX_STEPS; i++) {
        struct report_step *s = &r->steps[i];
        s->bytes = s->flops = s->predicted_s = s->tokens_per_s = s->efficiency = NAN;
        stats_init(&s->measured);
        for (int b = 0; b < BLOCK_COUNT; b++) s->block_s[b] = NAN;
    }
    for (int i = 0; i < REPORT_MAX_SAMPLER; i++) {
        r->sampler[i].nucleus = -1;
        stats_init(&r->sampler[i].measured);
    }
}

bool report_is_above_roof(bool flagged, double efficiency) {
    return flagged || (isfinite(efficiency) && efficiency > 1.0);
}

const char *report_ceiling_unit(enum report_ceiling_kind kind) {
    return kind == REPORT_CEILING_COMPUTE ? "GFLOP/s" : "GB/s";
}

void report_fmt_exact(double v, char *buf) {
    if (!isfinite(v)) {
        buf[0] = '\0';
        return;
    }
    /* Integers print without an exponent up to 2^53; other values in the shortest round-trip form. */
    if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        snprintf(buf, REPORT_FMT_LEN, "%.0f", v);
        return;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, REPORT_FMT_LEN, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

void report_fmt_md(double v, double scale, int decimals, char *buf) {
    if (!isfinite(v) || !isfinite(v * scale)) {
        snprintf(buf, REPORT_FMT_LEN, "n/a");
        return;
    }
    snprintf(buf, REPORT_FMT_LEN, "%.*f", decimals, v * scale);
}
