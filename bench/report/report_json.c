/* run.json writer and reader over the field tables of bench/report/report.c: one generic row writer, one
 * generic row reader, and the few nested parts (counters, per-block counter values, per-step block seconds)
 * by hand. Checked in tests/test_report_write.c (keys, nulls) and tests/test_report_compare.c (round trip,
 * malformed input). */
#include "bench/report/report_json.h"
#include "bench/report/results_dir.h"

#include "kernels/dtype.h"
#include "roofline/samples.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------- writing ---------- */

/* A number in the CSV files' exact round-trip text (cJSON's own printing stops at 15 significant digits
 * when that reads back within an epsilon, so run.json and the CSVs would disagree in the last bits). */
static void add_num(cJSON *o, const char *key, double v) {
    char text[REPORT_FMT_LEN];
    report_fmt_exact(v, text);
    if (text[0])
        cJSON_AddRawToObject(o, key, text);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *json_row(enum report_table t, const void *row) {
    int n;
    const struct report_field *fs = report_table_fields(t, &n);
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < n; i++) {
        const struct report_field *f = &fs[i];
        if (!(f->where & REPORT_IN_JSON)) continue;
        const void *p = report_field_at(row, f->offset);
        switch (f->type) {
        case REPORT_F_STR:
            cJSON_AddStringToObject(o, f->name, p);
            break;
        case REPORT_F_DOUBLE:
            add_num(o, f->name, *(const double *)p);
            break;
        case REPORT_F_INT:
            cJSON_AddNumberToObject(o, f->name, *(const int *)p);
            break;
        case REPORT_F_LONG:
            cJSON_AddNumberToObject(o, f->name, (double)*(const long *)p);
            break;
        case REPORT_F_LONG_OPT:
            add_num(o, f->name, *(const long *)p >= 0 ? (double)*(const long *)p : NAN);
            break;
        case REPORT_F_BOOL:
            cJSON_AddBoolToObject(o, f->name, *(const bool *)p);
            break;
        case REPORT_F_ABOVE_ROOF:
            cJSON_AddBoolToObject(
                o, f->name,
                report_is_above_roof(*(const bool *)p, *(const double *)report_field_at(row, f->aux)));
            break;
        case REPORT_F_KIND:
            cJSON_AddStringToObject(o, f->name,
                                    report_ceiling_kind_name(*(const enum report_ceiling_kind *)p));
            break;
        case REPORT_F_UNIT:
            cJSON_AddStringToObject(o, f->name, report_ceiling_unit(*(const enum report_ceiling_kind *)p));
            break;
        case REPORT_F_DERIVED:
            break;
        }
    }
    return o;
}

static cJSON *json_counters(const struct report_counters *c) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "available", c->available);
    cJSON_AddStringToObject(o, "reason", c->reason);
    cJSON *ev = cJSON_AddArrayToObject(o, "events");
    for (int i = 0; i < c->n_events; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", c->events[i].name);
        cJSON_AddBoolToObject(e, "available", c->events[i].available);
        cJSON_AddStringToObject(e, "reason", c->events[i].reason);
        if (c->events[i].source[0]) cJSON_AddStringToObject(e, "source", c->events[i].source);
        cJSON_AddItemToArray(ev, e);
    }
    cJSON_AddNumberToObject(o, "threads", c->threads);
    if (c->calibration[0]) cJSON_AddStringToObject(o, "calibration", c->calibration);
    if (c->disturbed_rule[0]) cJSON_AddStringToObject(o, "disturbed_rule", c->disturbed_rule);
    if (c->hardware[0]) cJSON_AddStringToObject(o, "hardware", c->hardware);
    return o;
}

/* name -> value per counter event (null when not counted). */
static void add_counter_values(cJSON *row, const char *key, const struct report_counters *c,
                               const double *v) {
    cJSON *o = cJSON_AddObjectToObject(row, key);
    for (int e = 0; e < c->n_events; e++) add_num(o, c->events[e].name, v[e]);
}

char *report_json_string(const struct run_report *r) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "schema", REPORT_SCHEMA);
    cJSON_AddItemToObject(root, "provenance", json_row(REPORT_TABLE_PROVENANCE, &r->prov));
    cJSON_AddItemToObject(root, "counters", json_counters(&r->counters));
    cJSON_AddItemToObject(root, "energy", json_counters(&r->energy));
    cJSON *ce = cJSON_AddArrayToObject(root, "ceilings");
    for (int i = 0; i < r->n_ceilings; i++)
        cJSON_AddItemToArray(ce, json_row(REPORT_TABLE_CEILING, &r->ceilings[i]));
    cJSON_AddItemToObject(root, "model", json_row(REPORT_TABLE_MODEL, &r->model));
    cJSON_AddNumberToObject(root, "blocks_context", (double)r->blocks_context);
    cJSON *bl = cJSON_AddArrayToObject(root, "blocks");
    for (int i = 0; i < r->n_blocks; i++) {
        cJSON *o = json_row(REPORT_TABLE_BLOCK, &r->blocks[i]);
        cJSON *c = cJSON_AddObjectToObject(o, "counters");
        for (int e = 0; e < r->counters.n_events; e++)
            add_num(c, r->counters.events[e].name, r->blocks[i].counters[e]);
        add_counter_values(o, "counters_thread_max", &r->counters, r->blocks[i].counters_max);
        cJSON_AddItemToArray(bl, o);
    }
    cJSON *st = cJSON_AddArrayToObject(root, "steps");
    for (int i = 0; i < r->n_steps; i++) {
        cJSON *o = json_row(REPORT_TABLE_STEP, &r->steps[i]);
        cJSON *bs = cJSON_AddObjectToObject(o, "blocks_s");
        for (int b = 0; b < BLOCK_COUNT; b++)
            add_num(bs, block_name((enum block_id)b), r->steps[i].block_s[b]);
        add_counter_values(o, "counters", &r->counters, r->steps[i].counters);
        add_counter_values(o, "counters_thread_max", &r->counters, r->steps[i].counters_max);
        cJSON_AddItemToArray(st, o);
    }
    cJSON *sa = cJSON_AddArrayToObject(root, "sampler");
    for (int i = 0; i < r->n_sampler; i++)
        cJSON_AddItemToArray(sa, json_row(REPORT_TABLE_SAMPLER, &r->sampler[i]));
    if (r->n_batch > 0) { /* the batch sweep: only in runs that had one */
        cJSON *ba = cJSON_AddArrayToObject(root, "batch");
        for (int i = 0; i < r->n_batch; i++)
            cJSON_AddItemToArray(ba, json_row(REPORT_TABLE_BATCH, &r->batch[i]));
        const struct report_batch_ridge *rr = &r->batch_ridge;
        cJSON *o = cJSON_AddObjectToObject(root, "batch_ridge"); /* null: no ridge (memory-bound at any B) */
        cJSON_AddNumberToObject(o, "context", (double)rr->context);
        for (int t = 0; t < REPORT_RIDGE_TYPES; t++) {
            char k[16];
            snprintf(k, sizeof k, "step_%s", fr_dtype_name((enum fr_dtype)t));
            add_num(o, k, rr->step[t]);
            snprintf(k, sizeof k, "proj_%s", fr_dtype_name((enum fr_dtype)t));
            add_num(o, k, rr->proj[t]);
        }
        add_num(o, "proj_measured", rr->proj_measured);
        add_num(o, "leaves_memory_roof_batch", rr->leaves_memory_roof_batch);
        cJSON_AddStringToObject(o, "note", rr->note);
        cJSON_AddStringToObject(o, "onednn", rr->onednn); /* what the oneDNN rows ran; "" without them */
    }
    if (r->n_prefill > 0) { /* prompt processing: only in runs that had it */
        cJSON *o = cJSON_AddObjectToObject(root, "prefill");
        cJSON_AddStringToObject(o, "note", r->prefill_note);
        cJSON *rows = cJSON_AddArrayToObject(o, "rows");
        for (int i = 0; i < r->n_prefill; i++)
            cJSON_AddItemToArray(rows, json_row(REPORT_TABLE_PREFILL, &r->prefill[i]));
    }
    if (r->samples_rows > 0) { /* every repetition, beside run.json (roofline/samples.h) */
        cJSON *o = cJSON_AddObjectToObject(root, "samples");
        cJSON_AddStringToObject(o, "file", SAMPLES_FILE);
        cJSON_AddStringToObject(o, "schema", SAMPLES_SCHEMA);
        cJSON_AddNumberToObject(o, "rows", r->samples_rows);
    }
    if (r->n_fidelity > 0) { /* a quantised run: its decode against bf16's (bench/quant_fidelity.h) */
        cJSON *o = cJSON_AddObjectToObject(root, "quant_vs_bf16");
        cJSON_AddStringToObject(o, "source", r->fidelity_source);
        cJSON *fa = cJSON_AddArrayToObject(o, "formats");
        for (int i = 0; i < r->n_fidelity; i++) {
            const struct report_fidelity *q = &r->fidelity[i];
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "dtype", q->dtype);
            cJSON_AddNumberToObject(e, "steps", q->steps);
            cJSON_AddNumberToObject(e, "top1_agree", q->top1_agree);
            add_num(e, "kl_mean", q->kl_mean);
            add_num(e, "kl_max", q->kl_max);
            cJSON_AddItemToArray(fa, e);
        }
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

/* ---------- reading ---------- */

struct reader {
    const char *name;
    struct fr_err *err;
    int bad; /* an error is recorded: keep the first */
};

static void rd_fail(struct reader *rd, const char *what, const char *key) {
    if (rd->bad) return;
    rd->bad = 1;
    fr_err_set(rd->err, "%s: malformed run.json: %s '%s'", rd->name, what, key);
}

static const cJSON *rd_item(struct reader *rd, const cJSON *o, const char *key) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it) rd_fail(rd, "missing key", key);
    return it;
}

static double rd_num(struct reader *rd, const cJSON *o, const char *key) {
    const cJSON *it = rd_item(rd, o, key);
    if (!it || cJSON_IsNull(it)) return NAN;
    if (!cJSON_IsNumber(it)) {
        rd_fail(rd, "not a number:", key);
        return NAN;
    }
    return it->valuedouble;
}

static long rd_long(struct reader *rd, const cJSON *o, const char *key, long lo, long hi) {
    double v = rd_num(rd, o, key);
    if (!isfinite(v) || v != floor(v) || v < (double)lo || v > (double)hi) {
        rd_fail(rd, "not an integer in range:", key);
        return 0;
    }
    return (long)v;
}

static bool rd_bool(struct reader *rd, const cJSON *o, const char *key) {
    const cJSON *it = rd_item(rd, o, key);
    if (it && !cJSON_IsBool(it)) rd_fail(rd, "not a boolean:", key);
    return it && cJSON_IsTrue(it);
}

static const char *rd_str(struct reader *rd, const cJSON *o, const char *key) {
    const cJSON *it = rd_item(rd, o, key);
    if (it && !cJSON_IsString(it)) rd_fail(rd, "not a string:", key);
    return it && cJSON_IsString(it) ? it->valuestring : "";
}

static const cJSON *rd_obj(struct reader *rd, const cJSON *o, const char *key) {
    const cJSON *it = rd_item(rd, o, key);
    if (it && !cJSON_IsObject(it)) rd_fail(rd, "not an object:", key);
    return it && cJSON_IsObject(it) ? it : NULL;
}

/* An array of objects with at most max rows: returns its first row (walk with ->next), *n its length;
 * NULL and 0 when empty or on error. */
static const cJSON *rd_arr(struct reader *rd, const cJSON *o, const char *key, int max, int *n) {
    const cJSON *it = rd_item(rd, o, key);
    *n = 0;
    if (it && !cJSON_IsArray(it)) rd_fail(rd, "not an array:", key);
    if (!it || !cJSON_IsArray(it)) return NULL;
    if (cJSON_GetArraySize(it) > max) {
        rd_fail(rd, "too many rows in", key);
        return NULL;
    }
    for (const cJSON *e = it->child; e; e = e->next)
        if (!cJSON_IsObject(e)) {
            rd_fail(rd, "a row is not an object in", key);
            return NULL;
        }
    *n = cJSON_GetArraySize(it);
    return it->child;
}

static void rd_row(struct reader *rd, enum report_table t, const cJSON *o, void *row) {
    if (!o) return;
    int n;
    const struct report_field *fs = report_table_fields(t, &n);
    for (int i = 0; i < n; i++) {
        const struct report_field *f = &fs[i];
        if (!(f->where & REPORT_IN_JSON)) continue;
        if ((f->where & REPORT_OPTIONAL) && !cJSON_GetObjectItemCaseSensitive(o, f->name)) continue;
        void *p = (char *)row + f->offset;
        switch (f->type) {
        case REPORT_F_STR:
            snprintf(p, f->size, "%s", rd_str(rd, o, f->name));
            break;
        case REPORT_F_DOUBLE:
            *(double *)p = rd_num(rd, o, f->name);
            break;
        case REPORT_F_INT:
            *(int *)p = (int)rd_long(rd, o, f->name, INT_MIN, INT_MAX);
            break;
        case REPORT_F_LONG:
            *(long *)p = rd_long(rd, o, f->name, LONG_MIN / 2, LONG_MAX / 2);
            break;
        case REPORT_F_LONG_OPT: {
            const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, f->name);
            *(long *)p = it && !cJSON_IsNull(it) ? rd_long(rd, o, f->name, 0, LONG_MAX / 2) : -1;
            break;
        }
        case REPORT_F_BOOL:
        case REPORT_F_ABOVE_ROOF:
            *(bool *)p = rd_bool(rd, o, f->name);
            break;
        case REPORT_F_KIND: {
            int kind = report_ceiling_kind_parse(rd_str(rd, o, f->name));
            if (kind < 0) rd_fail(rd, "unknown value of", f->name);
            *(enum report_ceiling_kind *)p =
                kind < 0 ? REPORT_CEILING_BANDWIDTH : (enum report_ceiling_kind)kind;
            break;
        }
        case REPORT_F_UNIT:
        case REPORT_F_DERIVED:
            break;
        }
    }
}

static void rd_counters(struct reader *rd, const cJSON *o, struct report_counters *c) {
    if (!o) return;
    c->available = rd_bool(rd, o, "available");
    snprintf(c->reason, sizeof c->reason, "%s", rd_str(rd, o, "reason"));
    int i = 0;
    for (const cJSON *e = rd_arr(rd, o, "events", REPORT_MAX_EVENTS, &c->n_events); e; e = e->next, i++) {
        snprintf(c->events[i].name, sizeof c->events[i].name, "%s", rd_str(rd, e, "name"));
        c->events[i].available = rd_bool(rd, e, "available");
        snprintf(c->events[i].reason, sizeof c->events[i].reason, "%s", rd_str(rd, e, "reason"));
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(e, "source"); /* absent in older runs */
        snprintf(c->events[i].source, sizeof c->events[i].source, "%s",
                 cJSON_IsString(src) ? src->valuestring : "");
    }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "threads"); /* absent in older runs */
    c->threads = cJSON_IsNumber(t) ? (int)t->valuedouble : 0;
    const cJSON *cal = cJSON_GetObjectItemCaseSensitive(o, "calibration");
    snprintf(c->calibration, sizeof c->calibration, "%s", cJSON_IsString(cal) ? cal->valuestring : "");
    const cJSON *rule = cJSON_GetObjectItemCaseSensitive(o, "disturbed_rule"); /* absent in older runs */
    snprintf(c->disturbed_rule, sizeof c->disturbed_rule, "%s",
             cJSON_IsString(rule) ? rule->valuestring : "");
    const cJSON *hw = cJSON_GetObjectItemCaseSensitive(o, "hardware");
    snprintf(c->hardware, sizeof c->hardware, "%s", cJSON_IsString(hw) ? hw->valuestring : "");
}

/* An object that older runs lack: NULL when absent. */
static const cJSON *opt_obj(const cJSON *o, const char *key) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsObject(it) ? it : NULL;
}

/* An optional object of name -> number (or null) into values[i] for names[i]. */
static void rd_values(const cJSON *o, const char *const *names, int n, double *values) {
    for (int i = 0; i < n; i++) {
        const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, names[i]) : NULL;
        values[i] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
    }
}

/* Rows pair by identity in compare: two rows of one identity would pair with the wrong row. */
static void rd_unique(struct reader *rd, const struct run_report *r) {
    for (int i = 0; i < r->n_blocks; i++)
        for (int j = 0; j < i; j++)
            if (strcmp(r->blocks[i].name, r->blocks[j].name) == 0)
                rd_fail(rd, "two rows of one block in", "blocks");
    for (int i = 0; i < r->n_steps; i++)
        for (int j = 0; j < i; j++)
            if (r->steps[i].context == r->steps[j].context)
                rd_fail(rd, "two rows of one context in", "steps");
    for (int i = 0; i < r->n_sampler; i++)
        for (int j = 0; j < i; j++) {
            const struct report_sampler *x = &r->sampler[i], *y = &r->sampler[j];
            if (strcmp(x->variant, y->variant) == 0 && strcmp(x->row_kind, y->row_kind) == 0 &&
                x->vocab == y->vocab)
                rd_fail(rd, "two rows of one variant, row kind and vocabulary in", "sampler");
        }
}

int report_json_parse(const char *json, size_t len, const char *name, struct run_report *r,
                      struct fr_err *err) {
    report_init(r);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root)
        return fr_err_set(err, "%s: not valid JSON (near byte %ld)", name, end ? (long)(end - json) : -1L);
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsObject(root) || !cJSON_IsString(schema) || strcmp(schema->valuestring, REPORT_SCHEMA) != 0) {
        cJSON_Delete(root);
        return fr_err_set(err, "%s: not a forge-roofline run (\"schema\" is not \"%s\")", name,
                          REPORT_SCHEMA);
    }
    struct reader rd = {name, err, 0};
    rd_row(&rd, REPORT_TABLE_PROVENANCE, rd_obj(&rd, root, "provenance"), &r->prov);
    rd_counters(&rd, rd_obj(&rd, root, "counters"), &r->counters);
    rd_counters(&rd, opt_obj(root, "energy"), &r->energy);
    rd_row(&rd, REPORT_TABLE_MODEL, rd_obj(&rd, root, "model"), &r->model);
    r->blocks_context = rd_long(&rd, root, "blocks_context", -1, LONG_MAX / 2);

    int i = 0;
    for (const cJSON *e = rd_arr(&rd, root, "ceilings", REPORT_MAX_CEILINGS, &r->n_ceilings); e; e = e->next)
        rd_row(&rd, REPORT_TABLE_CEILING, e, &r->ceilings[i++]);

    const char *events[REPORT_MAX_EVENTS];
    for (int k = 0; k < r->counters.n_events; k++) events[k] = r->counters.events[k].name;
    i = 0;
    for (const cJSON *e = rd_arr(&rd, root, "blocks", BLOCK_COUNT, &r->n_blocks); e; e = e->next) {
        struct report_block *b = &r->blocks[i++];
        rd_row(&rd, REPORT_TABLE_BLOCK, e, b);
        const struct block_desc *d = block_by_name(b->name);
        b->id = d ? d->id : BLOCK_COUNT; /* an unknown block still pairs by name */
        rd_values(rd_obj(&rd, e, "counters"), events, r->counters.n_events, b->counters);
        rd_values(opt_obj(e, "counters_thread_max"), events, r->counters.n_events, b->counters_max);
    }

    const char *blocks[BLOCK_COUNT];
    for (int k = 0; k < BLOCK_COUNT; k++) blocks[k] = block_name((enum block_id)k);
    i = 0;
    for (const cJSON *e = rd_arr(&rd, root, "steps", REPORT_MAX_STEPS, &r->n_steps); e; e = e->next) {
        struct report_step *s = &r->steps[i++];
        rd_row(&rd, REPORT_TABLE_STEP, e, s);
        rd_values(rd_obj(&rd, e, "blocks_s"), blocks, BLOCK_COUNT, s->block_s);
        rd_values(opt_obj(e, "counters"), events, r->counters.n_events, s->counters);
        rd_values(opt_obj(e, "counters_thread_max"), events, r->counters.n_events, s->counters_max);
    }

    i = 0;
    for (const cJSON *e = rd_arr(&rd, root, "sampler", REPORT_MAX_SAMPLER, &r->n_sampler); e; e = e->next)
        rd_row(&rd, REPORT_TABLE_SAMPLER, e, &r->sampler[i++]);
    i = 0;
    if (cJSON_GetObjectItemCaseSensitive(root, "batch")) { /* runs without a batch sweep have none */
        for (const cJSON *e = rd_arr(&rd, root, "batch", REPORT_MAX_BATCH, &r->n_batch); e; e = e->next)
            rd_row(&rd, REPORT_TABLE_BATCH, e, &r->batch[i++]);
        const cJSON *o = rd_obj(&rd, root, "batch_ridge");
        struct report_batch_ridge *rr = &r->batch_ridge;
        if (o) {
            rr->context = rd_long(&rd, o, "context", -1, LONG_MAX / 2);
            for (int t = 0; t < REPORT_RIDGE_TYPES; t++) { /* bf16's and f32's in every run */
                char ks[16], kp[16];
                snprintf(ks, sizeof ks, "step_%s", fr_dtype_name((enum fr_dtype)t));
                snprintf(kp, sizeof kp, "proj_%s", fr_dtype_name((enum fr_dtype)t));
                const bool optional = fr_dtype_is_block((enum fr_dtype)t);
                rr->step[t] = optional && !cJSON_GetObjectItemCaseSensitive(o, ks) ? NAN : rd_num(&rd, o, ks);
                rr->proj[t] = optional && !cJSON_GetObjectItemCaseSensitive(o, kp) ? NAN : rd_num(&rd, o, kp);
            }
            rr->proj_measured = rd_num(&rd, o, "proj_measured");
            rr->leaves_memory_roof_batch = rd_num(&rd, o, "leaves_memory_roof_batch");
            snprintf(rr->note, sizeof rr->note, "%s", rd_str(&rd, o, "note"));
            if (cJSON_GetObjectItemCaseSensitive(o, "onednn")) /* runs before the oneDNN rows have none */
                snprintf(rr->onednn, sizeof rr->onednn, "%s", rd_str(&rd, o, "onednn"));
        }
    }
    if (cJSON_GetObjectItemCaseSensitive(root, "prefill")) { /* runs without prompt processing have none */
        const cJSON *o = rd_obj(&rd, root, "prefill");
        if (o) {
            snprintf(r->prefill_note, sizeof r->prefill_note, "%s", rd_str(&rd, o, "note"));
            i = 0;
            for (const cJSON *e = rd_arr(&rd, o, "rows", REPORT_MAX_PREFILL, &r->n_prefill); e; e = e->next)
                rd_row(&rd, REPORT_TABLE_PREFILL, e, &r->prefill[i++]);
        }
    }
    if (cJSON_GetObjectItemCaseSensitive(root, "samples")) { /* runs before samples.csv have none */
        const cJSON *o = rd_obj(&rd, root, "samples");
        if (o && strcmp(rd_str(&rd, o, "schema"), SAMPLES_SCHEMA) != 0)
            rd_fail(&rd, "an unknown samples schema in", "samples");
        if (o) r->samples_rows = (int)rd_long(&rd, o, "rows", 0, INT_MAX);
    }
    if (cJSON_GetObjectItemCaseSensitive(root, "quant_vs_bf16")) { /* quantised runs only */
        const cJSON *o = rd_obj(&rd, root, "quant_vs_bf16");
        if (o) snprintf(r->fidelity_source, sizeof r->fidelity_source, "%s", rd_str(&rd, o, "source"));
        i = 0;
        for (const cJSON *e = o ? rd_arr(&rd, o, "formats", REPORT_MAX_FIDELITY, &r->n_fidelity) : NULL; e;
             e = e->next) {
            struct report_fidelity *q = &r->fidelity[i++];
            snprintf(q->dtype, sizeof q->dtype, "%s", rd_str(&rd, e, "dtype"));
            q->steps = (int)rd_long(&rd, e, "steps", 0, INT_MAX);
            q->top1_agree = (int)rd_long(&rd, e, "top1_agree", 0, q->steps);
            q->kl_mean = rd_num(&rd, e, "kl_mean"), q->kl_max = rd_num(&rd, e, "kl_max");
        }
    }
    cJSON_Delete(root);
    rd_unique(&rd, r);
    return rd.bad ? -1 : 0;
}

int report_json_read(const char *path, struct run_report *r, struct fr_err *err) {
    char file[2048];
    struct stat st;
    if (stat(path, &st) != 0) return fr_err_set(err, "%s: %s", path, strerror(errno));
    int n = S_ISDIR(st.st_mode) ? snprintf(file, sizeof file, "%s/run.json", path)
                                : snprintf(file, sizeof file, "%s", path);
    if (n < 0 || (size_t)n >= sizeof file) return fr_err_set(err, "%s: path too long", path);
    if (results_dir_check_complete(S_ISDIR(st.st_mode) ? path : file, err) != 0) return -1;
    /* checked before opening too: fopen of a FIFO would wait for a writer */
    if (stat(file, &st) == 0 && !S_ISREG(st.st_mode))
        return fr_err_set(err, "%s: not a regular file under 64 MiB", file);
    FILE *f = fopen(file, "rb");
    if (!f) return fr_err_set(err, "%s: %s", file, strerror(errno));
    /* A run.json of this schema is tens of KB; 64 MiB bounds a wrong file. */
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
        fclose(f);
        return fr_err_set(err, "%s: not a regular file under 64 MiB", file);
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        fclose(f);
        return fr_err_set(err, "%s: out of memory", file);
    }
    size_t len = fread(buf, 1, (size_t)st.st_size, f);
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? fr_err_set(err, "%s: read error", file) : report_json_parse(buf, len, file, r, err);
    free(buf);
    return rc;
}
