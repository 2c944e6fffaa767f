/* The output contract of DESIGN.md, written from struct run_report: run.json (cJSON, schema
 * forge-roofline/1), the CSV files, report.md, the stdout summary, and the plot inputs that
 * scripts/plots.sh reads. Unmeasured values are null / empty / "n/a", never a number; a row above its roof
 * is called an accounting error in words. Checked in tests/test_report_write.c (keys, headers, rows, nulls,
 * flags) and tests/test_report_plots.c (images). */
#include "bench/report_write.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------- small helpers ---------- */

static FILE *open_in(const char *dir, const char *name, struct fr_err *err) {
    char path[2048];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
        fr_err_set(err, "path too long: %s/%s", dir, name);
        return NULL;
    }
    FILE *f = fopen(path, "w");
    if (!f) fr_err_set(err, "cannot write '%s': %s", path, strerror(errno));
    return f;
}

static int close_checked(FILE *f, const char *dir, const char *name, struct fr_err *err) {
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return fr_err_set(err, "error writing '%s/%s'", dir, name);
    return 0;
}

static double ratio(double num, double den) {
    return (isfinite(num) && isfinite(den) && den > 0) ? num / den : NAN;
}

/* The step shown beside the blocks: the one at blocks_context, else the first. NULL when none. */
static const struct report_step *headline_step(const struct run_report *r) {
    for (int i = 0; i < r->n_steps; i++)
        if (r->steps[i].context == r->blocks_context) return &r->steps[i];
    return r->n_steps > 0 ? &r->steps[0] : NULL;
}

/* ---------- run.json ---------- */

static void add_num(cJSON *o, const char *key, double v) {
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static void add_stats(cJSON *o, const struct timing_stats *t) {
    add_num(o, "measured_s", t->median_s);
    add_num(o, "min_s", t->min_s);
    add_num(o, "max_s", t->max_s);
    cJSON_AddNumberToObject(o, "reps", t->reps);
    add_num(o, "cv", t->cv);
    cJSON_AddBoolToObject(o, "noisy", t->noisy);
}

static cJSON *json_provenance(const struct report_provenance *p) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "version", p->version);
    cJSON_AddStringToObject(o, "git_commit", p->git_commit);
    cJSON_AddStringToObject(o, "command_line", p->command_line);
    cJSON_AddStringToObject(o, "host", p->host);
    cJSON_AddStringToObject(o, "utc", p->utc_stamp);
    cJSON_AddStringToObject(o, "cpu", p->cpu_model);
    cJSON_AddStringToObject(o, "topology", p->topology);
    cJSON_AddNumberToObject(o, "threads", p->threads);
    cJSON_AddStringToObject(o, "dtype", p->dtype);
    cJSON_AddStringToObject(o, "kv_dtype", p->kv_dtype);
    cJSON_AddStringToObject(o, "gemv_backend", p->gemv_backend);
    cJSON_AddBoolToObject(o, "quick", p->quick);
    add_num(o, "timer_resolution_s", p->timer_resolution_s);
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
        cJSON_AddItemToArray(ev, e);
    }
    return o;
}

static cJSON *json_ceiling(const struct report_ceiling *c) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", c->name);
    cJSON_AddStringToObject(o, "kind", c->kind == REPORT_CEILING_COMPUTE ? "compute" : "bandwidth");
    cJSON_AddStringToObject(o, "unit", report_ceiling_unit(c->kind));
    add_num(o, "value", c->value);
    add_num(o, "median", c->median);
    add_num(o, "min", c->min);
    add_num(o, "max", c->max);
    cJSON_AddNumberToObject(o, "reps", c->reps);
    cJSON_AddBoolToObject(o, "one_core", c->one_core);
    cJSON_AddBoolToObject(o, "roof", c->roof);
    return o;
}

static cJSON *json_model(const struct report_model *m) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", m->name);
    add_num(o, "params", m->params);
    cJSON_AddNumberToObject(o, "hidden", m->hidden);
    cJSON_AddNumberToObject(o, "intermediate", m->intermediate);
    cJSON_AddNumberToObject(o, "layers", m->n_layers);
    cJSON_AddNumberToObject(o, "heads", m->n_heads);
    cJSON_AddNumberToObject(o, "kv_heads", m->n_kv_heads);
    cJSON_AddNumberToObject(o, "head_dim", m->head_dim);
    cJSON_AddNumberToObject(o, "vocab", m->vocab);
    cJSON_AddBoolToObject(o, "tied_embeddings", m->tied_embeddings);
    add_num(o, "weight_bytes", m->weight_bytes);
    return o;
}

static cJSON *json_block(const struct run_report *r, const struct report_block *b) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", b->name);
    cJSON_AddNumberToObject(o, "calls", (double)b->calls);
    add_num(o, "flops", b->flops);
    add_num(o, "bytes", b->bytes);
    add_num(o, "predicted_s", b->predicted_s);
    add_stats(o, &b->measured);
    add_num(o, "efficiency", b->efficiency);
    cJSON_AddStringToObject(o, "bound", b->bound);
    cJSON_AddBoolToObject(o, "above_roof", report_is_above_roof(b->above_roof, b->efficiency));
    cJSON *c = cJSON_AddObjectToObject(o, "counters");
    for (int e = 0; e < r->counters.n_events; e++) add_num(c, r->counters.events[e].name, b->counters[e]);
    return o;
}

static cJSON *json_step(const struct report_step *s) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "context", (double)s->context);
    add_num(o, "bytes", s->bytes);
    add_num(o, "flops", s->flops);
    add_num(o, "predicted_s", s->predicted_s);
    add_stats(o, &s->measured);
    add_num(o, "tokens_per_s", s->tokens_per_s);
    add_num(o, "efficiency", s->efficiency);
    cJSON_AddBoolToObject(o, "above_roof", report_is_above_roof(s->above_roof, s->efficiency));
    cJSON *bs = cJSON_AddObjectToObject(o, "blocks_s");
    for (int b = 0; b < BLOCK_COUNT; b++) add_num(bs, block_name((enum block_id)b), s->block_s[b]);
    return o;
}

static cJSON *json_sampler(const struct report_sampler *s) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "variant", s->variant);
    cJSON_AddStringToObject(o, "row_kind", s->row_kind);
    cJSON_AddNumberToObject(o, "vocab", (double)s->vocab);
    if (s->nucleus >= 0)
        cJSON_AddNumberToObject(o, "nucleus", (double)s->nucleus);
    else
        cJSON_AddNullToObject(o, "nucleus");
    add_stats(o, &s->measured);
    return o;
}

char *report_json_string(const struct run_report *r) {
    cJSON *root = cJSON_CreateObject();
    if (!root) return NULL;
    cJSON_AddStringToObject(root, "schema", REPORT_SCHEMA);
    cJSON_AddItemToObject(root, "provenance", json_provenance(&r->prov));
    cJSON_AddItemToObject(root, "counters", json_counters(&r->counters));
    cJSON *ce = cJSON_AddArrayToObject(root, "ceilings");
    for (int i = 0; i < r->n_ceilings; i++) cJSON_AddItemToArray(ce, json_ceiling(&r->ceilings[i]));
    cJSON_AddItemToObject(root, "model", json_model(&r->model));
    cJSON_AddNumberToObject(root, "blocks_context", (double)r->blocks_context);
    cJSON *bl = cJSON_AddArrayToObject(root, "blocks");
    for (int i = 0; i < r->n_blocks; i++) cJSON_AddItemToArray(bl, json_block(r, &r->blocks[i]));
    cJSON *st = cJSON_AddArrayToObject(root, "steps");
    for (int i = 0; i < r->n_steps; i++) cJSON_AddItemToArray(st, json_step(&r->steps[i]));
    cJSON *sa = cJSON_AddArrayToObject(root, "sampler");
    for (int i = 0; i < r->n_sampler; i++) cJSON_AddItemToArray(sa, json_sampler(&r->sampler[i]));
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

static int write_json(const struct run_report *r, const char *dir, struct fr_err *err) {
    char *text = report_json_string(r);
    if (!text) return fr_err_set(err, "out of memory building run.json");
    FILE *f = open_in(dir, "run.json", err);
    if (!f) {
        free(text);
        return -1;
    }
    fputs(text, f);
    fputc('\n', f);
    free(text);
    return close_checked(f, dir, "run.json", err);
}

/* ---------- CSV ---------- */

static void csv_str(FILE *f, const char *s, bool last) {
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', f);
        for (const char *p = s; *p; p++) {
            if (*p == '"') fputc('"', f);
            fputc(*p, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputc(last ? '\n' : ',', f);
}

static void csv_num(FILE *f, double v, bool last) {
    char buf[REPORT_FMT_LEN];
    report_fmt_exact(v, buf);
    fputs(buf, f);
    fputc(last ? '\n' : ',', f);
}

static void csv_bool(FILE *f, bool v, bool last) {
    csv_str(f, v ? "1" : "0", last);
}

static void csv_stats(FILE *f, const struct timing_stats *t) {
    csv_num(f, t->median_s, false);
    csv_num(f, t->min_s, false);
    csv_num(f, t->max_s, false);
    csv_num(f, t->reps, false);
    csv_num(f, t->cv, false);
    csv_bool(f, t->noisy, false);
}

static int write_blocks_csv(const struct run_report *r, const char *dir, struct fr_err *err) {
    FILE *f = open_in(dir, "blocks.csv", err);
    if (!f) return -1;
    fputs("name,calls,flops,bytes,intensity_flop_per_byte,predicted_s,measured_s,min_s,max_s,reps,cv,noisy,"
          "efficiency,bound,above_roof,measured_gflop_per_s,measured_gb_per_s",
          f);
    for (int e = 0; e < r->counters.n_events; e++) fprintf(f, ",%s", r->counters.events[e].name);
    fputc('\n', f);
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        csv_str(f, b->name, false);
        csv_num(f, (double)b->calls, false);
        csv_num(f, b->flops, false);
        csv_num(f, b->bytes, false);
        csv_num(f, ratio(b->flops, b->bytes), false);
        csv_num(f, b->predicted_s, false);
        csv_stats(f, &b->measured);
        csv_num(f, b->efficiency, false);
        csv_str(f, b->bound, false);
        csv_bool(f, report_is_above_roof(b->above_roof, b->efficiency), false);
        csv_num(f, ratio(b->flops, b->measured.median_s) / 1e9, false);
        csv_num(f, ratio(b->bytes, b->measured.median_s) / 1e9, r->counters.n_events == 0);
        for (int e = 0; e < r->counters.n_events; e++)
            csv_num(f, b->counters[e], e == r->counters.n_events - 1);
    }
    return close_checked(f, dir, "blocks.csv", err);
}

static int write_steps_csv(const struct run_report *r, const char *dir, struct fr_err *err) {
    FILE *f = open_in(dir, "steps.csv", err);
    if (!f) return -1;
    fputs("context,bytes,flops,predicted_s,measured_s,min_s,max_s,reps,cv,noisy,tokens_per_s,"
          "predicted_tokens_per_s,efficiency,above_roof",
          f);
    for (int b = 0; b < BLOCK_COUNT; b++) fprintf(f, ",%s_s", block_name((enum block_id)b));
    fputc('\n', f);
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        csv_num(f, (double)s->context, false);
        csv_num(f, s->bytes, false);
        csv_num(f, s->flops, false);
        csv_num(f, s->predicted_s, false);
        csv_stats(f, &s->measured);
        csv_num(f, s->tokens_per_s, false);
        csv_num(f, ratio(1.0, s->predicted_s), false);
        csv_num(f, s->efficiency, false);
        csv_bool(f, report_is_above_roof(s->above_roof, s->efficiency), false);
        for (int b = 0; b < BLOCK_COUNT; b++) csv_num(f, s->block_s[b], b == BLOCK_COUNT - 1);
    }
    return close_checked(f, dir, "steps.csv", err);
}

static int write_sampler_csv(const struct run_report *r, const char *dir, struct fr_err *err) {
    FILE *f = open_in(dir, "sampler.csv", err);
    if (!f) return -1;
    fputs("variant,row_kind,vocab,nucleus,measured_s,min_s,max_s,reps,cv,noisy\n", f);
    for (int i = 0; i < r->n_sampler; i++) {
        const struct report_sampler *s = &r->sampler[i];
        csv_str(f, s->variant, false);
        csv_str(f, s->row_kind, false);
        csv_num(f, (double)s->vocab, false);
        csv_num(f, s->nucleus >= 0 ? (double)s->nucleus : NAN, false);
        csv_num(f, s->measured.median_s, false);
        csv_num(f, s->measured.min_s, false);
        csv_num(f, s->measured.max_s, false);
        csv_num(f, s->measured.reps, false);
        csv_num(f, s->measured.cv, false);
        csv_bool(f, s->measured.noisy, true);
    }
    return close_checked(f, dir, "sampler.csv", err);
}

static int write_ceilings_csv(const struct run_report *r, const char *dir, struct fr_err *err) {
    FILE *f = open_in(dir, "ceilings.csv", err);
    if (!f) return -1;
    fputs("name,kind,unit,best,median,min,max,reps,one_core,roof\n", f);
    for (int i = 0; i < r->n_ceilings; i++) {
        const struct report_ceiling *c = &r->ceilings[i];
        csv_str(f, c->name, false);
        csv_str(f, c->kind == REPORT_CEILING_COMPUTE ? "compute" : "bandwidth", false);
        csv_str(f, report_ceiling_unit(c->kind), false);
        csv_num(f, c->value, false);
        csv_num(f, c->median, false);
        csv_num(f, c->min, false);
        csv_num(f, c->max, false);
        csv_num(f, c->reps, false);
        csv_bool(f, c->one_core, false);
        csv_bool(f, c->roof, true);
    }
    return close_checked(f, dir, "ceilings.csv", err);
}

/* ---------- plot inputs ---------- */

/* A gnuplot single-quoted string: only the quote itself needs doubling. */
void report_gp_str(FILE *f, const char *s) {
    fputc('\'', f);
    for (const char *p = s; *p; p++) {
        if (*p == '\'') fputc('\'', f);
        if (*p != '\n' && *p != '\r') fputc(*p, f);
    }
    fputc('\'', f);
}

static void gp_num(FILE *f, double v) {
    char buf[REPORT_FMT_LEN];
    report_fmt_exact(v, buf);
    fputs(buf[0] ? buf : "NaN", f);
}

static bool plots_roof(const struct run_report *r, const struct report_ceiling *c) {
    if (!isfinite(c->value) || c->value <= 0) return false;
    bool any_marked = false;
    for (int i = 0; i < r->n_ceilings; i++) any_marked |= r->ceilings[i].roof;
    return any_marked ? c->roof : !c->one_core; /* unmarked: every all-core ceiling is a roof */
}

static void gp_roofs_kind(FILE *f, const struct run_report *r, enum report_ceiling_kind kind,
                          const char *prefix) {
    int n = 0;
    for (int i = 0; i < r->n_ceilings; i++)
        n += r->ceilings[i].kind == kind && plots_roof(r, &r->ceilings[i]);
    /* gnuplot evaluates an element of an empty `for` once: a zero-size list still gets one defined entry. */
    fprintf(f, "n_%s = %d\narray %s_val[%d]\narray %s_name[%d]\n%s_val[1] = NaN\n%s_name[1] = ''\n", prefix,
            n, prefix, n > 0 ? n : 1, prefix, n > 0 ? n : 1, prefix, prefix);
    int k = 0;
    for (int i = 0; i < r->n_ceilings; i++) {
        const struct report_ceiling *c = &r->ceilings[i];
        if (c->kind != kind || !plots_roof(r, c)) continue;
        k++;
        char label[160], val[REPORT_FMT_LEN];
        report_fmt_md(c->value, 1.0, c->value >= 100 ? 0 : 1, val);
        snprintf(label, sizeof label, "%s%s: %s %s", c->name, c->one_core ? " (1 core)" : "", val,
                 report_ceiling_unit(kind));
        fprintf(f, "%s_val[%d] = ", prefix, k);
        gp_num(f, c->value);
        fprintf(f, "\n%s_name[%d] = ", prefix, k);
        report_gp_str(f, label);
        fputc('\n', f);
    }
}

void report_gp_roofs(FILE *f, const struct run_report *r, const char *prefix) {
    char bw[32], peak[32];
    snprintf(bw, sizeof bw, "%sbw", prefix);
    snprintf(peak, sizeof peak, "%speak", prefix);
    gp_roofs_kind(f, r, REPORT_CEILING_BANDWIDTH, bw);
    gp_roofs_kind(f, r, REPORT_CEILING_COMPUTE, peak);
}

struct roof_point {
    char label[96];
    double intensity, gflops;
    bool reads_weights; /* a weight-streaming matvec: these share one intensity and get a zoomed inset */
    double label_y;     /* label height in the inset */
};

/* Points that can be drawn on log-log axes; the others are named in *not_drawn for the key. */
static int roof_points(const struct run_report *r, struct roof_point *pts, char *not_drawn, size_t nd_len) {
    int n = 0;
    not_drawn[0] = '\0';
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        double ai = ratio(b->flops, b->bytes), gf = ratio(b->flops, b->measured.median_s) / 1e9;
        if (!(ai > 0) || !(gf > 0) || !isfinite(gf)) {
            size_t used = strlen(not_drawn);
            const char *why = !isfinite(b->flops) ? "no prediction"
                              : b->flops > 0      ? "not measured"
                                                  : "no FLOPs";
            if (used + 40 < nd_len)
                snprintf(not_drawn + used, nd_len - used, "%s%s (%s)", used ? ", " : "", b->name, why);
            else if (used + 5 < nd_len && strcmp(not_drawn + used - 3, "...") != 0)
                snprintf(not_drawn + used, nd_len - used, ", ...");
            continue;
        }
        struct roof_point *p = &pts[n++];
        p->intensity = ai, p->gflops = gf;
        p->reads_weights = (unsigned)b->id < BLOCK_COUNT && block_table()[b->id].reads_weights;
        snprintf(p->label, sizeof p->label, "%s%s", b->name,
                 report_is_above_roof(b->above_roof, b->efficiency) ? " (ABOVE ROOF: accounting error)" : "");
    }
    const struct report_step *s = headline_step(r);
    if (s) {
        double ai = ratio(s->flops, s->bytes), gf = ratio(s->flops, s->measured.median_s) / 1e9;
        if (ai > 0 && gf > 0 && isfinite(gf)) {
            struct roof_point *p = &pts[n++];
            p->intensity = ai, p->gflops = gf;
            p->reads_weights = false;
            snprintf(p->label, sizeof p->label, "whole decode step (T=%ld)%s", s->context,
                     report_is_above_roof(s->above_roof, s->efficiency) ? " (ABOVE ROOF: accounting error)"
                                                                        : "");
        }
    }
    return n;
}

static void gp_range(FILE *f, const struct run_report *r, const struct roof_point *pts, int n) {
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0, bw_min = INFINITY, peak_max = 0;
    for (int i = 0; i < n; i++) {
        if (!(pts[i].intensity > 0) || !(pts[i].gflops > 0) || !isfinite(pts[i].gflops)) continue;
        xlo = fmin(xlo, pts[i].intensity), xhi = fmax(xhi, pts[i].intensity);
        ylo = fmin(ylo, pts[i].gflops), yhi = fmax(yhi, pts[i].gflops);
    }
    for (int i = 0; i < r->n_ceilings; i++) {
        const struct report_ceiling *c = &r->ceilings[i];
        if (!plots_roof(r, c)) continue;
        if (c->kind == REPORT_CEILING_BANDWIDTH) bw_min = fmin(bw_min, c->value);
        if (c->kind == REPORT_CEILING_COMPUTE) peak_max = fmax(peak_max, c->value);
    }
    if (peak_max > 0) yhi = fmax(yhi, peak_max);
    if (peak_max > 0 && isfinite(bw_min)) xhi = fmax(xhi, peak_max / bw_min); /* the ridge point */
    if (!isfinite(xlo)) xlo = 0.1, xhi = fmax(xhi, 10);
    if (!isfinite(ylo)) ylo = isfinite(bw_min) ? bw_min * xlo : 0.1, yhi = fmax(yhi, ylo * 100);
    if (isfinite(bw_min)) ylo = fmin(ylo, bw_min * xlo / 3);
    fprintf(f, "x_lo = %.6g\nx_hi = %.6g\ny_lo = %.6g\ny_hi = %.6g\n", xlo / 4, xhi * 4, ylo / 4, yhi * 3);
}

static int cmp_point_gflops(const void *a, const void *b) {
    const struct roof_point *x = *(const struct roof_point *const *)a,
                            *y = *(const struct roof_point *const *)b;
    return (x->gflops > y->gflops) - (x->gflops < y->gflops);
}

/* The zoomed inset around the weight-reading matvecs, which share one intensity on the main plot: its
 * linear ranges, and label heights spread apart so that no two labels overlap. */
static void gp_zoom(FILE *f, const struct run_report *r, struct roof_point *pts, int n) {
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0, bw = INFINITY;
    struct roof_point *zp[BLOCK_COUNT + 1];
    int k = 0;
    for (int i = 0; i < n; i++) {
        pts[i].label_y = NAN;
        if (!pts[i].reads_weights) continue;
        zp[k++] = &pts[i];
        xlo = fmin(xlo, pts[i].intensity), xhi = fmax(xhi, pts[i].intensity);
        ylo = fmin(ylo, pts[i].gflops), yhi = fmax(yhi, pts[i].gflops);
    }
    for (int i = 0; i < r->n_ceilings; i++)
        if (r->ceilings[i].kind == REPORT_CEILING_BANDWIDTH && plots_roof(r, &r->ceilings[i]))
            bw = fmin(bw, r->ceilings[i].value);
    if (k < 2) {
        fputs("zoom_n = 0\nzoom_x_lo = 1\nzoom_x_hi = 2\nzoom_y_lo = 1\nzoom_y_hi = 2\n", f);
        return;
    }
    if (isfinite(bw)) yhi = fmax(yhi, bw * xhi);
    double xpad = fmax((xhi - xlo) * 0.15, xhi * 0.05), ypad = (yhi - ylo) * 0.1 + yhi * 0.02;
    xlo -= xpad, xhi += 3 * xpad, ylo -= ypad, yhi += ypad;
    qsort(zp, (size_t)k, sizeof zp[0], cmp_point_gflops);
    double gap = (yhi - ylo) * 0.075, prev = -INFINITY;
    for (int i = 0; i < k; i++) prev = zp[i]->label_y = fmax(zp[i]->gflops, prev + gap);
    if (prev > yhi - gap / 2) yhi = prev + gap / 2;
    fprintf(f, "zoom_n = %d\nzoom_x_lo = %.6g\nzoom_x_hi = %.6g\nzoom_y_lo = %.6g\nzoom_y_hi = %.6g\n", k,
            xlo, xhi, ylo, yhi);
    fprintf(f, "zoom_dx = %.6g\n", xpad * 0.8);
}

struct series {
    const char *variant, *row_kind;
};

static int sampler_series(const struct run_report *r, struct series *ser) {
    int n = 0;
    for (int i = 0; i < r->n_sampler; i++) {
        const struct report_sampler *s = &r->sampler[i];
        int k = 0;
        while (k < n &&
               !(strcmp(ser[k].variant, s->variant) == 0 && strcmp(ser[k].row_kind, s->row_kind) == 0))
            k++;
        if (k == n) ser[n++] = (struct series){s->variant, s->row_kind};
    }
    return n;
}

/* Index of series i's variant (or row kind) among the distinct ones, in order of first appearance. */
static int key_index(const struct series *ser, int i, bool by_variant) {
    int distinct = 0;
    for (int j = 0; j <= i; j++) {
        const char *kj = by_variant ? ser[j].variant : ser[j].row_kind;
        bool first = true;
        for (int q = 0; q < j && first; q++)
            first = strcmp(kj, by_variant ? ser[q].variant : ser[q].row_kind) != 0;
        if (strcmp(kj, by_variant ? ser[i].variant : ser[i].row_kind) == 0) return distinct;
        distinct += first;
    }
    return distinct;
}

static int cmp_sampler_vocab(const void *a, const void *b) {
    const struct report_sampler *x = *(const struct report_sampler *const *)a;
    const struct report_sampler *y = *(const struct report_sampler *const *)b;
    return (x->vocab > y->vocab) - (x->vocab < y->vocab);
}

static int cmp_step_context(const void *a, const void *b) {
    const struct report_step *x = *(const struct report_step *const *)a;
    const struct report_step *y = *(const struct report_step *const *)b;
    return (x->context > y->context) - (x->context < y->context);
}

static void extent(double v, double *lo, double *hi, int *n) {
    if (!isfinite(v) || v <= 0) return;
    *lo = fmin(*lo, v), *hi = fmax(*hi, v);
    if (n) (*n)++;
}

/* Counts and ranges the scripts need (gnuplot's `stats` stops with an error on a file without valid points,
 * so the scripts never call it): each plot draws a "nothing measured" panel when its count is 0. */
static void gp_extents(FILE *f, const struct run_report *r, const struct report_step *hs) {
    double lo = INFINITY, hi = 0;
    int n = 0;
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        int k = 0;
        extent(b->predicted_s * 1e3, &lo, &hi, &k);
        extent(b->measured.median_s * 1e3, &lo, &hi, &k);
        if (hs && (unsigned)b->id < BLOCK_COUNT) extent(hs->block_s[b->id] * 1e3, &lo, &hi, &k);
        n += k > 0;
    }
    fprintf(f, "n_breakdown = %d\nn_breakdown_rows = %d\nbd_lo = %.6g\nbd_hi = %.6g\n", n, r->n_blocks,
            n ? lo : 1, n ? hi : 10);
    lo = INFINITY, hi = 0, n = 0;
    double cmin = INFINITY;
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        int k = 0;
        extent(ratio(1.0, s->predicted_s), &lo, &hi, &k);
        extent(ratio(1.0, s->measured.median_s), &lo, &hi, &k);
        extent(ratio(1.0, s->measured.min_s), &lo, &hi, NULL);
        if (k > 0) n++, cmin = fmin(cmin, (double)s->context);
    }
    fprintf(f, "n_context = %d\nctx_min = %.6g\nctx_top = %.6g\n", n, n ? cmin : 0, n ? hi : 1);
    lo = INFINITY, hi = 0, n = 0;
    for (int i = 0; i < r->n_sampler; i++) {
        extent(r->sampler[i].measured.median_s * 1e6, &lo, &hi, &n);
        extent(r->sampler[i].measured.max_s * 1e6, &lo, &hi, NULL);
    }
    fprintf(f, "n_sampler_rows = %d\nsmp_hi_us = %.6g\n", n, n ? hi : 1);
}

static int write_plot_inputs(const struct run_report *r, const char *dir, struct fr_err *err) {
    struct roof_point pts[BLOCK_COUNT + 1];
    char not_drawn[160]; /* one key line: longer lists end in "..." */
    int n_pts = roof_points(r, pts, not_drawn, sizeof not_drawn);
    struct series ser[REPORT_MAX_SAMPLER];
    int n_ser = sampler_series(r, ser);
    const struct report_step *hs = headline_step(r);

    FILE *f = open_in(dir, "plot_vars.gp", err);
    if (!f) return -1;
    fputs("# Written by forge-roofline for scripts/plots.sh; regenerated with each run.\n", f);
    char title[512];
    snprintf(title, sizeof title, "%s, %s weights, %d thread%s, %s", r->model.name, r->prov.dtype,
             r->prov.threads, r->prov.threads == 1 ? "" : "s",
             r->prov.cpu_model[0] ? r->prov.cpu_model : r->prov.host);
    fputs("run_title = ", f);
    report_gp_str(f, title);
    fputc('\n', f);
    report_gp_roofs(f, r, "");
    gp_range(f, r, pts, n_pts);
    gp_zoom(f, r, pts, n_pts);
    fprintf(f, "step_point = %d\n",
            headline_step(r) && n_pts > 0 && strncmp(pts[n_pts - 1].label, "whole", 5) == 0 ? n_pts : 0);
    fprintf(f, "n_points = %d\narray point_name[%d]\npoint_name[1] = ''\n", n_pts, n_pts > 0 ? n_pts : 1);
    for (int i = 0; i < n_pts; i++) {
        fprintf(f, "point_name[%d] = ", i + 1);
        report_gp_str(f, pts[i].label);
        fputc('\n', f);
    }
    fputs("not_drawn = ", f);
    report_gp_str(f, not_drawn[0] ? "not drawn: " : "");
    fputs(" . ", f);
    report_gp_str(f, not_drawn);
    /* Colour by variant, dash and symbol fill by row kind: equal curves of two row kinds stay visible. */
    fprintf(f,
            "\nn_series = %d\narray series_name[%d]\narray series_variant[%d]\narray series_kind[%d]\n"
            "series_name[1] = ''\nseries_variant[1] = 0\nseries_kind[1] = 0\n",
            n_ser, n_ser > 0 ? n_ser : 1, n_ser > 0 ? n_ser : 1, n_ser > 0 ? n_ser : 1);
    for (int i = 0; i < n_ser; i++) {
        char nm[160];
        snprintf(nm, sizeof nm, "%s, %s rows", ser[i].variant, ser[i].row_kind);
        fprintf(f, "series_name[%d] = ", i + 1);
        report_gp_str(f, nm);
        int v = key_index(ser, i, true), k = key_index(ser, i, false);
        fprintf(f, "\nseries_variant[%d] = %d\nseries_kind[%d] = %d\n", i + 1, v, i + 1, k);
    }
    fputs("step_s = ", f);
    gp_num(f, hs ? hs->measured.median_s : NAN);
    fprintf(f, "\nstep_context = %ld\nblocks_context = %ld\n", hs ? hs->context : -1L, r->blocks_context);
    gp_extents(f, r, hs);
    if (close_checked(f, dir, "plot_vars.gp", err) != 0) return -1;

    /* Roofline points: one line per point, in point_name order. */
    if (!(f = open_in(dir, "plot_points.dat", err))) return -1;
    fputs("# intensity_flop_per_byte measured_gflop_per_s reads_weights label_y name\n", f);
    for (int i = 0; i < n_pts; i++) {
        gp_num(f, pts[i].intensity);
        fputc(' ', f);
        gp_num(f, pts[i].gflops);
        fprintf(f, " %d ", pts[i].reads_weights);
        gp_num(f, pts[i].label_y);
        fputs(" \"", f);
        for (const char *c = pts[i].label; *c && *c != ' '; c++) fputc(*c, f);
        fputs("\"\n", f);
    }
    if (close_checked(f, dir, "plot_points.dat", err) != 0) return -1;

    /* Breakdown: per block, predicted, microbenchmark and in-step milliseconds per decode step; the label
     * carries the block's share of the measured step (in-step times when observed, else microbenchmarks). */
    if (!(f = open_in(dir, "plot_breakdown.dat", err))) return -1;
    fputs("# row label predicted_ms measured_ms in_step_ms\n", f);
    double sum_in = 0, sum_micro = 0;
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        double in = hs && (unsigned)b->id < BLOCK_COUNT ? hs->block_s[b->id] : NAN;
        if (isfinite(in)) sum_in += in;
        if (isfinite(b->measured.median_s)) sum_micro += b->measured.median_s;
    }
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        double in = hs && (unsigned)b->id < BLOCK_COUNT ? hs->block_s[b->id] : NAN;
        double share = sum_in > 0 ? ratio(in, sum_in) : ratio(b->measured.median_s, sum_micro);
        char pct[REPORT_FMT_LEN];
        if (isfinite(share) && share < 0.0005)
            snprintf(pct, sizeof pct, "<0.1 %%");
        else if (isfinite(share))
            snprintf(pct, sizeof pct, "%.*f %%", share < 0.1 ? 1 : 0, share * 100);
        else
            snprintf(pct, sizeof pct, "n/a");
        fprintf(f, "%d \"%s  %s\" ", i, b->name, pct);
        gp_num(f, b->predicted_s * 1e3);
        fputc(' ', f);
        gp_num(f, b->measured.median_s * 1e3);
        fputc(' ', f);
        gp_num(f, in * 1e3);
        fputc('\n', f);
    }
    fprintf(f, "# share basis: %s\n", sum_in > 0 ? "in-step" : "microbenchmark");
    if (close_checked(f, dir, "plot_breakdown.dat", err) != 0) return -1;

    /* Sampler: one gnuplot data block (index) per series, sorted by vocabulary size. */
    if (!(f = open_in(dir, "plot_sampler.dat", err))) return -1;
    fputs("# vocab measured_us min_us max_us; one block per series_name\n", f);
    for (int k = 0; k < n_ser; k++) {
        const struct report_sampler *rows[REPORT_MAX_SAMPLER];
        int n = 0;
        for (int i = 0; i < r->n_sampler; i++)
            if (strcmp(r->sampler[i].variant, ser[k].variant) == 0 &&
                strcmp(r->sampler[i].row_kind, ser[k].row_kind) == 0)
                rows[n++] = &r->sampler[i];
        qsort(rows, (size_t)n, sizeof rows[0], cmp_sampler_vocab);
        if (k > 0) fputs("\n\n", f);
        for (int i = 0; i < n; i++) {
            fprintf(f, "%ld ", rows[i]->vocab);
            gp_num(f, rows[i]->measured.median_s * 1e6);
            fputc(' ', f);
            gp_num(f, rows[i]->measured.min_s * 1e6);
            fputc(' ', f);
            gp_num(f, rows[i]->measured.max_s * 1e6);
            fputc('\n', f);
        }
    }
    if (close_checked(f, dir, "plot_sampler.dat", err) != 0) return -1;

    /* Context sweep: tokens/s predicted and measured (with the spread from max_s and min_s). */
    if (!(f = open_in(dir, "plot_steps.dat", err))) return -1;
    fputs("# context predicted_tokens_per_s measured_tokens_per_s slowest fastest\n", f);
    const struct report_step *steps[REPORT_MAX_STEPS];
    for (int i = 0; i < r->n_steps; i++) steps[i] = &r->steps[i];
    qsort(steps, (size_t)r->n_steps, sizeof steps[0], cmp_step_context);
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = steps[i];
        fprintf(f, "%ld ", s->context);
        gp_num(f, ratio(1.0, s->predicted_s));
        fputc(' ', f);
        gp_num(f, ratio(1.0, s->measured.median_s));
        fputc(' ', f);
        gp_num(f, ratio(1.0, s->measured.max_s));
        fputc(' ', f);
        gp_num(f, ratio(1.0, s->measured.min_s));
        fputc('\n', f);
    }
    return close_checked(f, dir, "plot_steps.dat", err);
}

int report_write_data(const struct run_report *r, const char *dir, struct fr_err *err) {
    if (write_json(r, dir, err) || write_blocks_csv(r, dir, err) || write_steps_csv(r, dir, err) ||
        write_sampler_csv(r, dir, err) || write_ceilings_csv(r, dir, err) || write_plot_inputs(r, dir, err))
        return -1;
    return 0;
}

/* ---------- markdown ---------- */

static void md_flags(char *out, size_t len, const struct timing_stats *t, bool above) {
    char cv[REPORT_FMT_LEN];
    report_fmt_md(t->cv, 100.0, 1, cv);
    snprintf(out, len, "%s%s%s%s%s", above ? "**above roof: accounting error**" : "",
             above && t->noisy ? "; " : "", t->noisy ? "noisy (cv " : "", t->noisy ? cv : "",
             t->noisy ? " %)" : "");
}

static void md_setup(FILE *f, const struct run_report *r) {
    const struct report_provenance *p = &r->prov;
    char res[REPORT_FMT_LEN];
    report_fmt_md(p->timer_resolution_s, 1e9, 0, res);
    fprintf(f,
            "Setup: forge-roofline %s%s%s%s on %s (%s), %s, %d thread%s, weights %s, KV cache %s, gemv %s, "
            "timer resolution %s ns, %s%s.\n\n",
            p->version, p->git_commit[0] ? " (" : "", p->git_commit, p->git_commit[0] ? ")" : "", p->host,
            p->cpu_model[0] ? p->cpu_model : "CPU unknown", p->topology[0] ? p->topology : "topology unknown",
            p->threads, p->threads == 1 ? "" : "s", p->dtype, p->kv_dtype, p->gemv_backend, res, p->utc_stamp,
            p->quick ? ", quick run (fewer repetitions)" : "");
    const struct report_model *m = &r->model;
    char params[REPORT_FMT_LEN], wb[REPORT_FMT_LEN];
    report_fmt_md(m->params, 1e-6, 1, params);
    report_fmt_md(m->weight_bytes, 1e-9, 3, wb);
    fprintf(
        f,
        "Model: %s, %s M parameters, hidden %d, intermediate %d, %d layers, %d query / %d KV heads of %d, "
        "vocab %d, %s embeddings; %s GB of weights per decode step.\n\n",
        m->name, params, m->hidden, m->intermediate, m->n_layers, m->n_heads, m->n_kv_heads, m->head_dim,
        m->vocab, m->tied_embeddings ? "tied" : "untied", wb);
}

static void md_ceilings(FILE *f, const struct run_report *r) {
    fputs("## Ceilings\n\n| ceiling | cores | best | median | min | max | unit | reps |\n"
          "|---|---|--:|--:|--:|--:|---|--:|\n",
          f);
    for (int i = 0; i < r->n_ceilings; i++) {
        const struct report_ceiling *c = &r->ceilings[i];
        char v[4][REPORT_FMT_LEN];
        report_fmt_md(c->value, 1, 1, v[0]);
        report_fmt_md(c->median, 1, 1, v[1]);
        report_fmt_md(c->min, 1, 1, v[2]);
        report_fmt_md(c->max, 1, 1, v[3]);
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %d |\n", c->name, c->one_core ? "1" : "all", v[0],
                v[1], v[2], v[3], report_ceiling_unit(c->kind), c->reps);
    }
    if (r->n_ceilings == 0) fputs("| (none measured) | | | | | | | |\n", f);
    fputs("\nGB = 1e9 bytes. Best of the repetitions is the roof (STREAM's rule).\n\n", f);
}

static void md_blocks(FILE *f, const struct run_report *r, bool full) {
    fprintf(f, "## Blocks of one decode step (context %ld)\n\n", r->blocks_context);
    if (full)
        fputs("| block | calls | MFLOP | MB | predicted µs | measured µs | min µs | max µs | reps | "
              "efficiency | "
              "bound | flags |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n",
              f);
    else
        fputs("| block | predicted µs | measured µs | efficiency | bound | flags "
              "|\n|---|--:|--:|--:|---|---|\n",
              f);
    double sum_pred = 0, sum_meas = 0;
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        char mf[REPORT_FMT_LEN], mb[REPORT_FMT_LEN], pr[REPORT_FMT_LEN], me[REPORT_FMT_LEN],
            lo[REPORT_FMT_LEN], hi[REPORT_FMT_LEN], ef[REPORT_FMT_LEN], flags[160];
        report_fmt_md(b->flops, 1e-6, 3, mf);
        report_fmt_md(b->bytes, 1e-6, 3, mb);
        report_fmt_md(b->predicted_s, 1e6, 1, pr);
        report_fmt_md(b->measured.median_s, 1e6, 1, me);
        report_fmt_md(b->measured.min_s, 1e6, 1, lo);
        report_fmt_md(b->measured.max_s, 1e6, 1, hi);
        report_fmt_md(b->efficiency, 100, 0, ef);
        if (isfinite(b->efficiency)) strcat(ef, " %");
        md_flags(flags, sizeof flags, &b->measured, report_is_above_roof(b->above_roof, b->efficiency));
        const char *bound = b->bound[0] ? b->bound : "n/a";
        if (full)
            fprintf(f, "| %s | %ld | %s | %s | %s | %s | %s | %s | %d | %s | %s | %s |\n", b->name, b->calls,
                    mf, mb, pr, me, lo, hi, b->measured.reps, ef, bound, flags);
        else
            fprintf(f, "| %s | %s | %s | %s | %s | %s |\n", b->name, pr, me, ef, bound, flags);
        sum_pred += b->predicted_s;
        sum_meas += b->measured.median_s;
    }
    char sp[REPORT_FMT_LEN], sm[REPORT_FMT_LEN];
    report_fmt_md(sum_pred, 1e6, 1, sp);
    report_fmt_md(sum_meas, 1e6, 1, sm);
    if (full)
        fprintf(f, "| **sum of blocks** | | | | %s | %s | | | | | | |\n\n", sp, sm);
    else
        fprintf(f, "| **sum of blocks** | %s | %s | | | |\n\n", sp, sm);
}

static void md_steps(FILE *f, const struct run_report *r) {
    fputs("## Decode steps\n\n| context | MB read | predicted ms | measured ms | min ms | max ms | reps | "
          "tokens/s "
          "| roof tokens/s | efficiency | flags |\n|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n",
          f);
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        char mb[REPORT_FMT_LEN], pr[REPORT_FMT_LEN], me[REPORT_FMT_LEN], lo[REPORT_FMT_LEN],
            hi[REPORT_FMT_LEN], tps[REPORT_FMT_LEN], ptps[REPORT_FMT_LEN], ef[REPORT_FMT_LEN], flags[160];
        report_fmt_md(s->bytes, 1e-6, 1, mb);
        report_fmt_md(s->predicted_s, 1e3, 3, pr);
        report_fmt_md(s->measured.median_s, 1e3, 3, me);
        report_fmt_md(s->measured.min_s, 1e3, 3, lo);
        report_fmt_md(s->measured.max_s, 1e3, 3, hi);
        report_fmt_md(s->tokens_per_s, 1, 1, tps);
        report_fmt_md(ratio(1.0, s->predicted_s), 1, 1, ptps);
        report_fmt_md(s->efficiency, 100, 0, ef);
        if (isfinite(s->efficiency)) strcat(ef, " %");
        md_flags(flags, sizeof flags, &s->measured, report_is_above_roof(s->above_roof, s->efficiency));
        fprintf(f, "| %ld | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", s->context, mb, pr, me, lo,
                hi, s->measured.reps, tps, ptps, ef, flags);
    }
    if (r->n_steps == 0) fputs("| (none measured) | | | | | | | | | | |\n", f);
    fputc('\n', f);
}

static void md_sampler(FILE *f, const struct run_report *r) {
    fputs("## Sampler\n\n| variant | row kind | vocab | nucleus | median µs | min µs | max µs | reps | flags "
          "|\n"
          "|---|---|--:|--:|--:|--:|--:|--:|---|\n",
          f);
    for (int i = 0; i < r->n_sampler; i++) {
        const struct report_sampler *s = &r->sampler[i];
        char me[REPORT_FMT_LEN], lo[REPORT_FMT_LEN], hi[REPORT_FMT_LEN], nuc[REPORT_FMT_LEN], flags[160];
        report_fmt_md(s->measured.median_s, 1e6, 1, me);
        report_fmt_md(s->measured.min_s, 1e6, 1, lo);
        report_fmt_md(s->measured.max_s, 1e6, 1, hi);
        report_fmt_md(s->nucleus >= 0 ? (double)s->nucleus : NAN, 1, 0, nuc);
        md_flags(flags, sizeof flags, &s->measured, false);
        fprintf(f, "| %s | %s | %ld | %s | %s | %s | %s | %d | %s |\n", s->variant, s->row_kind, s->vocab,
                nuc, me, lo, hi, s->measured.reps, flags);
    }
    if (r->n_sampler == 0) fputs("| (none measured) | | | | | | | | |\n", f);
    fputc('\n', f);
}

static void md_counters(FILE *f, const struct run_report *r) {
    const struct report_counters *c = &r->counters;
    if (!c->available) {
        fprintf(f, "Counters: unavailable (%s); figures are wall time only.\n\n",
                c->reason[0] ? c->reason : "no reason given");
        return;
    }
    fputs("Counters:", f);
    for (int i = 0; i < c->n_events; i++)
        fprintf(f, "%s %s %s%s%s", i ? ";" : "", c->events[i].name,
                c->events[i].available ? "counted" : "unavailable", c->events[i].available ? "" : " — ",
                c->events[i].available ? "" : c->events[i].reason);
    fputs(".\n\n", f);
}

/* One accounting-error line; `what` names the row. */
static void md_accounting(FILE *f, const char *what, double efficiency) {
    char ef[REPORT_FMT_LEN];
    report_fmt_md(efficiency, 100, 0, ef);
    fprintf(f,
            "- **Accounting error:** %s measured faster than its roof allows (efficiency %s %%). The byte or "
            "FLOP count, or the ceiling, is wrong for it; this is not a speed-up.\n",
            what, ef);
}

/* Rows above their roof and noisy rows, in words. */
static void md_findings(FILE *f, const struct run_report *r) {
    int n_above = 0, n_noisy = 0;
    char what[128];
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        if (report_is_above_roof(b->above_roof, b->efficiency)) {
            snprintf(what, sizeof what, "block `%s`", b->name);
            md_accounting(f, what, b->efficiency);
            n_above++;
        }
        n_noisy += b->measured.noisy;
    }
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        if (report_is_above_roof(s->above_roof, s->efficiency)) {
            snprintf(what, sizeof what, "the decode step at context %ld", s->context);
            md_accounting(f, what, s->efficiency);
            n_above++;
        }
        n_noisy += s->measured.noisy;
    }
    for (int i = 0; i < r->n_sampler; i++) n_noisy += r->sampler[i].measured.noisy;
    if (n_noisy > 0)
        fprintf(f,
                "- %d row%s noisy (coefficient of variation above %.0f %%): read %s median with its min and "
                "max.\n",
                n_noisy, n_noisy == 1 ? " is" : "s are", TIMING_NOISY_CV * 100,
                n_noisy == 1 ? "its" : "their");
    if (n_above == 0 && n_noisy == 0) fputs("- No row is above its roof and no row is noisy.\n", f);
    fputc('\n', f);
}

int report_write_markdown(const struct run_report *r, const char *dir, enum report_plots_result plots,
                          const char *plots_note, struct fr_err *err) {
    FILE *f = open_in(dir, "report.md", err);
    if (!f) return -1;
    fprintf(f, "# forge-roofline: %s decode on %s\n\n", r->model.name,
            r->prov.cpu_model[0] ? r->prov.cpu_model : r->prov.host);
    md_setup(f, r);
    fprintf(f, "Command: `%s`\n\n", r->prov.command_line);
    fputs("## Findings\n\n", f);
    md_findings(f, r);
    md_counters(f, r);
    md_ceilings(f, r);
    md_blocks(f, r, true);
    md_steps(f, r);
    md_sampler(f, r);
    fputs("## Plots\n\n", f);
    if (plots == REPORT_PLOTS_DRAWN) {
        static const char *const names[] = {"roofline", "breakdown", "sampler", "context"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            fprintf(f, "![%s](%s.png)  \n[%s.svg](%s.svg)\n\n", names[i], names[i], names[i], names[i]);
    } else {
        fprintf(f, "Plots were not drawn: %s. Redraw with `make plots RUN=<this folder>`.\n\n",
                plots_note && *plots_note ? plots_note : "unknown reason");
    }
    fputs("Data: run.json, blocks.csv, steps.csv, sampler.csv, ceilings.csv.\n", f);
    return close_checked(f, dir, "report.md", err);
}

int report_write_summary(const struct run_report *r, FILE *out) {
    md_setup(out, r);
    md_blocks(out, r, false);
    md_steps(out, r);
    md_findings(out, r);
    return ferror(out) ? -1 : 0;
}

int report_write_run(const struct run_report *r, const char *dir, enum report_plots_result *plots,
                     struct fr_err *plots_err, struct fr_err *err) {
    if (report_write_data(r, dir, err) != 0) return -1;
    struct fr_err perr = {{0}};
    int p = report_plots_draw(dir, &perr);
    *plots = (enum report_plots_result)p;
    if (plots_err) *plots_err = perr;
    if (report_write_markdown(r, dir, *plots, perr.msg, err) != 0) return -1;
    if (p == REPORT_PLOTS_FAILED) {
        fr_err_set(err, "%s", perr.msg);
        return -1;
    }
    return 0;
}
