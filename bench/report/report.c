/* struct run_report helpers: the field tables every writer and the reader walk, initialisation to "nothing
 * measured", the above-roof rule, and the number formats every writer shares (exact round-trip text for
 * CSV, fixed decimals or "n/a" for markdown). Checked in tests/test_report_write.c and, for the
 * write-then-read symmetry, tests/test_report_compare.c. */
#include "bench/report/report.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void stats_init(struct timing_stats *t) {
    t->median_s = t->min_s = t->max_s = t->mean_s = t->cv = NAN;
    t->ci_lo_s = t->ci_hi_s = t->ci_level = NAN;
    t->reps = 0;
    t->noisy = false;
}

void report_init(struct run_report *r) {
    memset(r, 0, sizeof *r);
    r->prov.timer_resolution_s = NAN;
    r->prov.core_speed_low = NAN;
    r->model.params = r->model.weight_bytes = NAN;
    r->blocks_context = -1;
    for (int i = 0; i < REPORT_MAX_CEILINGS; i++) {
        struct report_ceiling *c = &r->ceilings[i];
        c->value = c->median = c->min = c->max = NAN;
    }
    for (int i = 0; i < BLOCK_COUNT; i++) {
        struct report_block *b = &r->blocks[i];
        b->flops = b->bytes = b->predicted_s = b->efficiency = NAN;
        for (int l = 0; l < 4; l++) b->level_bytes[l] = NAN;
        b->exps = b->kernel_calls = b->forks = b->barriers = b->floor_s = b->levels_sum_s = b->second_s = NAN;
        stats_init(&b->measured);
        for (int e = 0; e < REPORT_MAX_EVENTS; e++) b->counters[e] = b->counters_max[e] = NAN;
        b->utilization = b->measured_all_s = b->ipc = b->dram_bytes_counted = b->steal_s = NAN;
        b->paired_read_gbs = b->paired_efficiency = b->own_read_gbs = b->own_read_efficiency = NAN;
    }
    for (int i = 0; i < REPORT_MAX_STEPS; i++) {
        struct report_step *s = &r->steps[i];
        s->bytes = s->flops = s->predicted_s = s->tokens_per_s = s->efficiency = NAN;
        s->dram_bytes = s->dram_gbs = s->paired_read_gbs = s->paired_efficiency = NAN;
        s->weights_read_gbs = s->weights_read_efficiency = NAN;
        stats_init(&s->measured);
        for (int b = 0; b < BLOCK_COUNT; b++) s->block_s[b] = NAN;
        s->unattributed_s = NAN;
        for (int e = 0; e < REPORT_MAX_EVENTS; e++) s->counters[e] = s->counters_max[e] = NAN;
        s->utilization = s->measured_all_s = s->ipc = s->energy_j = s->energy_j_per_token = s->steal_s = NAN;
    }
    for (int i = 0; i < REPORT_MAX_SAMPLER; i++) {
        r->sampler[i].nucleus = -1;
        stats_init(&r->sampler[i].measured);
    }
    for (int i = 0; i < REPORT_MAX_BATCH; i++) {
        struct report_batch *b = &r->batch[i];
        b->flops = b->bytes = b->dram_bytes = b->predicted_s = b->memory_roof_s = b->compute_roof_s = NAN;
        b->tokens_per_s = b->efficiency = b->proj_flops = b->proj_bytes = b->proj_predicted_s = b->proj_s =
            NAN;
        b->paired_read_gbs = b->paired_efficiency = NAN;
        stats_init(&b->measured);
    }
    for (int i = 0; i < REPORT_MAX_PREFILL; i++) {
        struct report_prefill *p = &r->prefill[i];
        p->flops = p->bytes = p->dram_bytes = p->predicted_s = p->memory_roof_s = p->compute_roof_s = NAN;
        p->share = p->efficiency = p->tokens_per_s = p->sample_s = p->ttft_s = NAN;
        stats_init(&p->measured);
    }
    struct report_batch_ridge *rr = &r->batch_ridge;
    rr->context = -1;
    for (int t = 0; t < REPORT_RIDGE_TYPES; t++) rr->step[t] = rr->proj[t] = NAN;
    rr->proj_measured = NAN;
    rr->leaves_memory_roof_batch = NAN;
}

int report_disturbed_kept(const struct timing_stats *m, int disturbed_reps) {
    int kept = disturbed_reps - m->excluded_reps;
    return kept > 0 ? kept : 0;
}

double report_ratio(double num, double den) {
    return (isfinite(num) && isfinite(den) && den > 0) ? num / den : NAN;
}

const struct report_step *report_headline_step(const struct run_report *r) {
    for (int i = 0; i < r->n_steps; i++)
        if (r->steps[i].context == r->blocks_context) return &r->steps[i];
    return r->n_steps > 0 ? &r->steps[0] : NULL;
}

FILE *report_file_open(const char *dir, const char *name, struct fr_err *err) {
    char path[2048];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
        fr_err_set(err, "path too long: %s/%s", dir, name);
        return NULL;
    }
    FILE *f = fopen(path, "w");
    if (!f) fr_err_set(err, "cannot write '%s': %s", path, strerror(errno));
    return f;
}

int report_file_close(FILE *f, const char *dir, const char *name, struct fr_err *err) {
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return fr_err_set(err, "error writing '%s/%s'", dir, name);
    return 0;
}

bool report_is_above_roof(bool flagged, double efficiency) {
    return flagged || (isfinite(efficiency) && efficiency > 1.0);
}

const char *report_ceiling_unit(enum report_ceiling_kind kind) {
    switch (kind) {
    case REPORT_CEILING_COMPUTE:
    case REPORT_CEILING_ENGINE:
        return "GFLOP/s";
    case REPORT_CEILING_ENGINE_INT:
        return "GOP/s";
    case REPORT_CEILING_EXP:
        return "Gexp/s";
    case REPORT_CEILING_OVERHEAD:
        return "Mcall/s";
    case REPORT_CEILING_BANDWIDTH:
        break;
    }
    return "GB/s";
}

static const char *const ceiling_kind_names[] = {"bandwidth", "compute", "exp",
                                                 "overhead",  "engine",  "engine_int"};

const char *report_ceiling_kind_name(enum report_ceiling_kind kind) {
    return (unsigned)kind < sizeof ceiling_kind_names / sizeof ceiling_kind_names[0]
               ? ceiling_kind_names[kind]
               : "bandwidth";
}

int report_ceiling_kind_parse(const char *name) {
    for (size_t i = 0; i < sizeof ceiling_kind_names / sizeof ceiling_kind_names[0]; i++)
        if (strcmp(name, ceiling_kind_names[i]) == 0) return (int)i;
    return -1;
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

void report_fmt_pct(double share, char *buf) {
    report_fmt_md(share, 100, 0, buf);
    if (isfinite(share * 100)) strcat(buf, " %");
}

/* ---------- field tables ---------- */

#define BOTH (REPORT_IN_JSON | REPORT_IN_CSV)
#define F_STR(T, key, member)                                                                                \
    { key, NULL, REPORT_F_STR, offsetof(T, member), sizeof(((T *)0)->member), 0, NULL, BOTH }
#define F_STR_OPT(T, key, member)                                                                            \
    {                                                                                                        \
        key, NULL, REPORT_F_STR, offsetof(T, member), sizeof(((T *)0)->member), 0, NULL,                     \
            BOTH | REPORT_OPTIONAL                                                                           \
    }
#define F_NUM(T, key, type, member)                                                                          \
    { key, NULL, type, offsetof(T, member), 0, 0, NULL, BOTH }
/* A numeric field added after run.json files already existed: read back as left by init when absent. */
#define F_NUM_OPT(T, key, type, member)                                                                      \
    { key, NULL, type, offsetof(T, member), 0, 0, NULL, BOTH | REPORT_OPTIONAL }
#define F_DERIVED(key, fn)                                                                                   \
    { key, NULL, REPORT_F_DERIVED, 0, 0, 0, fn, REPORT_IN_CSV }
/* The timing columns every measured row carries. */
#define F_STATS(T)                                                                                           \
    F_NUM(T, "measured_s", REPORT_F_DOUBLE, measured.median_s),                                              \
        F_NUM(T, "min_s", REPORT_F_DOUBLE, measured.min_s),                                                  \
        F_NUM(T, "max_s", REPORT_F_DOUBLE, measured.max_s), F_NUM(T, "reps", REPORT_F_INT, measured.reps),   \
        F_NUM(T, "cv", REPORT_F_DOUBLE, measured.cv), F_NUM(T, "noisy", REPORT_F_BOOL, measured.noisy)
/* The median's confidence interval and the disturbed repetitions left out: appended at the end of each
 * measured table so existing CSV columns keep their places. */
#define F_CI(T)                                                                                              \
    F_NUM_OPT(T, "ci_lo_s", REPORT_F_DOUBLE, measured.ci_lo_s),                                              \
        F_NUM_OPT(T, "ci_hi_s", REPORT_F_DOUBLE, measured.ci_hi_s),                                          \
        F_NUM_OPT(T, "ci_level", REPORT_F_DOUBLE, measured.ci_level),                                        \
        F_NUM_OPT(T, "excluded_reps", REPORT_F_INT, measured.excluded_reps)
/* What the counters around each timed repetition say (appended after the older columns). */
#define F_COUNTED(T)                                                                                         \
    F_NUM_OPT(T, "utilization", REPORT_F_DOUBLE, utilization),                                               \
        F_NUM_OPT(T, "disturbed_reps", REPORT_F_INT, disturbed_reps),                                        \
        F_NUM_OPT(T, "faulted_reps", REPORT_F_INT, faulted_reps),                                            \
        F_NUM_OPT(T, "measured_all_s", REPORT_F_DOUBLE, measured_all_s),                                     \
        F_NUM_OPT(T, "ipc", REPORT_F_DOUBLE, ipc)
/* The hypervisor's steal around each repetition (roofline/steal.h): appended last. */
#define F_STEAL(T)                                                                                           \
    F_NUM_OPT(T, "steal_reps", REPORT_F_INT, steal_reps), F_NUM_OPT(T, "steal_s", REPORT_F_DOUBLE, steal_s)
#define F_ABOVE(T)                                                                                           \
    {                                                                                                        \
        "above_roof", NULL, REPORT_F_ABOVE_ROOF, offsetof(T, above_roof), 0, offsetof(T, efficiency), NULL,  \
            BOTH                                                                                             \
    }

static double block_intensity(const void *row) {
    const struct report_block *b = row;
    return report_ratio(b->flops, b->bytes);
}
static double block_gflops(const void *row) {
    const struct report_block *b = row;
    return report_ratio(b->flops, b->measured.median_s) / 1e9;
}
static double block_gbs(const void *row) {
    const struct report_block *b = row;
    return report_ratio(b->bytes, b->measured.median_s) / 1e9;
}
static double step_predicted_tps(const void *row) {
    const struct report_step *s = row;
    return report_ratio(1.0, s->predicted_s);
}

#define P struct report_provenance
static const struct report_field prov_fields[] = {
    F_STR(P, "version", version),
    F_STR(P, "git_commit", git_commit),
    F_STR(P, "command_line", command_line),
    F_STR(P, "host", host),
    F_STR(P, "utc", utc_stamp),
    F_STR(P, "cpu", cpu_model),
    F_STR(P, "topology", topology),
    F_NUM(P, "threads", REPORT_F_INT, threads),
    F_STR(P, "dtype", dtype),
    F_STR(P, "kv_dtype", kv_dtype),
    F_STR(P, "gemv_backend", gemv_backend),
    F_NUM(P, "quick", REPORT_F_BOOL, quick),
    F_NUM(P, "timer_resolution_s", REPORT_F_DOUBLE, timer_resolution_s),
    F_STR_OPT(P, "isa", isa),
    F_STR_OPT(P, "plan", plan),
    F_STR_OPT(P, "roof_notes", roof_notes),
    F_STR_OPT(P, "blas_core", blas_core),
    F_STR_OPT(P, "read_kernel", read_kernel),
    F_STR_OPT(P, "gemv_threads", gemv_threads),
    F_STR_OPT(P, "mm_state", mm_state),
    F_NUM_OPT(P, "damon_on", REPORT_F_BOOL, damon_on),
    F_STR_OPT(P, "core_speed", core_speed),
    F_NUM_OPT(P, "core_speed_low", REPORT_F_DOUBLE, core_speed_low),
    F_STR_OPT(P, "weights", weights_source),
    F_STR_OPT(P, "weights_file", weights_file),
    F_STR_OPT(P, "weights_format", weights_format),
    F_STR_OPT(P, "weights_sha256", weights_sha256),
    F_STR_OPT(P, "weights_conversion", weights_conversion),
    F_STR_OPT(P, "weights_mix", weights_mix),
    F_STR_OPT(P, "sampler_logits", sampler_logits),
    F_STR_OPT(P, "kernel", kernel),
    F_STR_OPT(P, "lockstep", lockstep),
};
#undef P

#define M struct report_model
static const struct report_field model_fields[] = {
    F_STR(M, "name", name),
    F_NUM(M, "params", REPORT_F_DOUBLE, params),
    F_NUM(M, "hidden", REPORT_F_INT, hidden),
    F_NUM(M, "intermediate", REPORT_F_INT, intermediate),
    F_NUM(M, "layers", REPORT_F_INT, n_layers),
    F_NUM(M, "heads", REPORT_F_INT, n_heads),
    F_NUM(M, "kv_heads", REPORT_F_INT, n_kv_heads),
    F_NUM(M, "head_dim", REPORT_F_INT, head_dim),
    F_NUM(M, "vocab", REPORT_F_INT, vocab),
    F_NUM(M, "tied_embeddings", REPORT_F_BOOL, tied_embeddings),
    F_NUM(M, "weight_bytes", REPORT_F_DOUBLE, weight_bytes),
};
#undef M

#define C struct report_ceiling
static const struct report_field ceiling_fields[] = {
    F_STR(C, "name", name),
    F_NUM(C, "kind", REPORT_F_KIND, kind),
    F_NUM(C, "unit", REPORT_F_UNIT, kind),
    {"value", "best", REPORT_F_DOUBLE, offsetof(C, value), 0, 0, NULL, BOTH},
    F_NUM(C, "median", REPORT_F_DOUBLE, median),
    F_NUM(C, "min", REPORT_F_DOUBLE, min),
    F_NUM(C, "max", REPORT_F_DOUBLE, max),
    F_NUM(C, "reps", REPORT_F_INT, reps),
    F_NUM(C, "one_core", REPORT_F_BOOL, one_core),
    F_NUM(C, "roof", REPORT_F_BOOL, roof),
    F_NUM(C, "noisy", REPORT_F_BOOL, noisy),
    F_STR(C, "why", why),
};
#undef C

#define B struct report_block
static const struct report_field block_fields[] = {
    F_STR(B, "name", name),
    F_NUM(B, "calls", REPORT_F_LONG, calls),
    F_NUM(B, "flops", REPORT_F_DOUBLE, flops),
    F_NUM(B, "bytes", REPORT_F_DOUBLE, bytes),
    F_DERIVED("intensity_flop_per_byte", block_intensity),
    F_NUM(B, "predicted_s", REPORT_F_DOUBLE, predicted_s),
    F_STATS(B),
    F_NUM(B, "efficiency", REPORT_F_DOUBLE, efficiency),
    F_STR(B, "bound", bound),
    F_ABOVE(B),
    F_DERIVED("measured_gflop_per_s", block_gflops),
    F_DERIVED("measured_gb_per_s", block_gbs),
    F_CI(B),
    F_NUM_OPT(B, "dram_bytes", REPORT_F_DOUBLE, level_bytes[0]),
    F_NUM_OPT(B, "l1_bytes", REPORT_F_DOUBLE, level_bytes[1]),
    F_NUM_OPT(B, "l2_bytes", REPORT_F_DOUBLE, level_bytes[2]),
    F_NUM_OPT(B, "l3_bytes", REPORT_F_DOUBLE, level_bytes[3]),
    F_NUM_OPT(B, "exps", REPORT_F_DOUBLE, exps),
    F_NUM_OPT(B, "kernel_calls", REPORT_F_DOUBLE, kernel_calls),
    F_NUM_OPT(B, "forks", REPORT_F_DOUBLE, forks),
    F_NUM_OPT(B, "team_barriers", REPORT_F_DOUBLE, barriers),
    F_NUM_OPT(B, "overhead_floor_s", REPORT_F_DOUBLE, floor_s),
    F_NUM_OPT(B, "predicted_levels_sum_s", REPORT_F_DOUBLE, levels_sum_s),
    F_NUM_OPT(B, "overhead_bound", REPORT_F_BOOL, overhead_bound),
    F_COUNTED(B),
    F_NUM_OPT(B, "dram_bytes_counted", REPORT_F_DOUBLE, dram_bytes_counted),
    F_NUM_OPT(B, "switched_reps", REPORT_F_INT, switched_reps),
    F_NUM_OPT(B, "paired_read_gbs", REPORT_F_DOUBLE, paired_read_gbs),
    F_NUM_OPT(B, "paired_efficiency", REPORT_F_DOUBLE, paired_efficiency),
    F_NUM_OPT(B, "own_read_gbs", REPORT_F_DOUBLE, own_read_gbs),
    F_NUM_OPT(B, "own_read_efficiency", REPORT_F_DOUBLE, own_read_efficiency),
    F_STR_OPT(B, "second_bound", second_bound),
    F_NUM_OPT(B, "second_term_s", REPORT_F_DOUBLE, second_s),
    F_STEAL(B),
    F_STR_OPT(B, "format", format),
};
#undef B

#define S struct report_step
static const struct report_field step_fields[] = {
    F_NUM(S, "context", REPORT_F_LONG, context),
    F_NUM(S, "bytes", REPORT_F_DOUBLE, bytes),
    F_NUM(S, "flops", REPORT_F_DOUBLE, flops),
    F_NUM(S, "predicted_s", REPORT_F_DOUBLE, predicted_s),
    F_STATS(S),
    F_NUM(S, "tokens_per_s", REPORT_F_DOUBLE, tokens_per_s),
    F_DERIVED("predicted_tokens_per_s", step_predicted_tps),
    F_NUM(S, "efficiency", REPORT_F_DOUBLE, efficiency),
    F_NUM(S, "dram_bytes", REPORT_F_DOUBLE, dram_bytes),
    F_NUM(S, "dram_gbs", REPORT_F_DOUBLE, dram_gbs),
    F_NUM(S, "paired_read_gbs", REPORT_F_DOUBLE, paired_read_gbs),
    F_NUM(S, "paired_efficiency", REPORT_F_DOUBLE, paired_efficiency),
    F_NUM_OPT(S, "weights_read_gbs", REPORT_F_DOUBLE, weights_read_gbs),
    F_NUM_OPT(S, "weights_read_efficiency", REPORT_F_DOUBLE, weights_read_efficiency),
    F_ABOVE(S),
    F_CI(S),
    F_NUM_OPT(S, "unattributed_s", REPORT_F_DOUBLE, unattributed_s),
    F_COUNTED(S),
    F_NUM_OPT(S, "energy_j", REPORT_F_DOUBLE, energy_j),
    F_NUM_OPT(S, "energy_j_per_token", REPORT_F_DOUBLE, energy_j_per_token),
    F_NUM_OPT(S, "switched_reps", REPORT_F_INT, switched_reps),
    F_STEAL(S),
};
#undef S

static double batch_memory_pct(const void *row) {
    const struct report_batch *b = row;
    return 100 * report_ratio(b->memory_roof_s, b->measured.median_s);
}
static double batch_compute_pct(const void *row) {
    const struct report_batch *b = row;
    return 100 * report_ratio(b->compute_roof_s, b->measured.median_s);
}
static double batch_paired_pct(const void *row) {
    const struct report_batch *b = row;
    return 100 * b->paired_efficiency;
}
static double batch_proj_gflops(const void *row) {
    const struct report_batch *b = row;
    return report_ratio(b->proj_flops, b->proj_s) / 1e9;
}

#define X struct report_batch
static const struct report_field batch_fields[] = {
    F_NUM(X, "batch", REPORT_F_LONG, batch),
    F_NUM(X, "context", REPORT_F_LONG, context),
    F_STR(X, "backend", backend),
    F_STR(X, "dtype", dtype),
    F_NUM(X, "flops", REPORT_F_DOUBLE, flops),
    F_NUM(X, "bytes", REPORT_F_DOUBLE, bytes),
    F_NUM(X, "dram_bytes", REPORT_F_DOUBLE, dram_bytes),
    F_NUM(X, "predicted_s", REPORT_F_DOUBLE, predicted_s),
    F_NUM(X, "memory_roof_s", REPORT_F_DOUBLE, memory_roof_s),
    F_NUM(X, "compute_roof_s", REPORT_F_DOUBLE, compute_roof_s),
    F_STATS(X),
    F_NUM(X, "tokens_per_s", REPORT_F_DOUBLE, tokens_per_s),
    F_NUM(X, "efficiency", REPORT_F_DOUBLE, efficiency),
    F_ABOVE(X),
    F_DERIVED("memory_roof_pct", batch_memory_pct),
    F_DERIVED("compute_roof_pct", batch_compute_pct),
    F_NUM(X, "proj_flops", REPORT_F_DOUBLE, proj_flops),
    F_NUM(X, "proj_bytes", REPORT_F_DOUBLE, proj_bytes),
    F_NUM(X, "proj_predicted_s", REPORT_F_DOUBLE, proj_predicted_s),
    F_NUM(X, "proj_s", REPORT_F_DOUBLE, proj_s),
    F_DERIVED("proj_gflop_per_s", batch_proj_gflops),
    F_NUM_OPT(X, "paired_read_gbs", REPORT_F_DOUBLE, paired_read_gbs),
    F_NUM_OPT(X, "paired_efficiency", REPORT_F_DOUBLE, paired_efficiency),
    F_DERIVED("paired_memory_roof_pct", batch_paired_pct),
};
#undef X

static double prefill_intensity(const void *row) {
    const struct report_prefill *p = row;
    return report_ratio(p->flops, p->bytes);
}
static double prefill_gflops(const void *row) {
    const struct report_prefill *p = row;
    return report_ratio(p->flops, p->measured.median_s) / 1e9;
}

#define P struct report_prefill
static const struct report_field prefill_fields[] = {
    F_NUM(P, "prompt_len", REPORT_F_LONG, prompt_len),
    F_NUM(P, "depth", REPORT_F_LONG, depth),
    F_STR(P, "block", block),
    F_STR(P, "dtype", dtype),
    F_NUM(P, "flops", REPORT_F_DOUBLE, flops),
    F_NUM(P, "bytes", REPORT_F_DOUBLE, bytes),
    F_NUM(P, "dram_bytes", REPORT_F_DOUBLE, dram_bytes),
    F_DERIVED("intensity_flop_per_byte", prefill_intensity),
    F_NUM(P, "predicted_s", REPORT_F_DOUBLE, predicted_s),
    F_NUM(P, "memory_roof_s", REPORT_F_DOUBLE, memory_roof_s),
    F_NUM(P, "compute_roof_s", REPORT_F_DOUBLE, compute_roof_s),
    F_STR(P, "bound", bound),
    F_STATS(P),
    F_NUM(P, "share", REPORT_F_DOUBLE, share),
    F_NUM(P, "efficiency", REPORT_F_DOUBLE, efficiency),
    F_ABOVE(P),
    F_DERIVED("measured_gflop_per_s", prefill_gflops),
    F_CI(P),
    F_NUM(P, "tokens_per_s", REPORT_F_DOUBLE, tokens_per_s),
    F_NUM(P, "sample_s", REPORT_F_DOUBLE, sample_s),
    F_NUM(P, "ttft_s", REPORT_F_DOUBLE, ttft_s),
};
#undef P

#define Z struct report_sampler
static const struct report_field sampler_fields[] = {
    F_STR(Z, "variant", variant),
    F_STR(Z, "row_kind", row_kind),
    F_NUM(Z, "vocab", REPORT_F_LONG, vocab),
    F_NUM(Z, "nucleus", REPORT_F_LONG_OPT, nucleus),
    F_STATS(Z),
    F_CI(Z),
};
#undef Z

const struct report_field *report_table_fields(enum report_table t, int *n) {
#define TABLE(a) (*n = (int)(sizeof a / sizeof a[0]), a)
    switch (t) {
    case REPORT_TABLE_PROVENANCE:
        return TABLE(prov_fields);
    case REPORT_TABLE_MODEL:
        return TABLE(model_fields);
    case REPORT_TABLE_CEILING:
        return TABLE(ceiling_fields);
    case REPORT_TABLE_BLOCK:
        return TABLE(block_fields);
    case REPORT_TABLE_STEP:
        return TABLE(step_fields);
    case REPORT_TABLE_SAMPLER:
        return TABLE(sampler_fields);
    case REPORT_TABLE_BATCH:
        return TABLE(batch_fields);
    case REPORT_TABLE_PREFILL:
        return TABLE(prefill_fields);
    default:
        *n = 0;
        return NULL;
    }
#undef TABLE
}
