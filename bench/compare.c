/* Two runs side by side: reads run.json back into struct run_report (the inverse of report_write.c's
 * writer, so a written run reads back field for field), refuses runs that are not comparable, pairs rows
 * by identity and writes compare.md with A, B, B/A and whether the change is outside both runs' spread.
 * Checked in tests/test_report_compare.c (round trip, ratio, spread verdicts, refusal, malformed input). */
#include "bench/compare.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/report_write.h"

/* ---------- reading run.json ---------- */

struct reader {
    const char *name;
    struct fr_err *err;
    int bad; /* first error already recorded */
};

static void rd_fail(struct reader *rd, const char *what, const char *key) {
    if (rd->bad) return;
    rd->bad = 1;
    fr_err_set(rd->err, "%s: malformed run.json: %s '%s'", rd->name, what, key);
}

static const cJSON *rd_item(struct reader *rd, const cJSON *o, const char *key, bool required) {
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!it && required) rd_fail(rd, "missing key", key);
    return it;
}

static double rd_num(struct reader *rd, const cJSON *o, const char *key) {
    const cJSON *it = rd_item(rd, o, key, true);
    if (!it || cJSON_IsNull(it)) return NAN;
    if (!cJSON_IsNumber(it)) {
        rd_fail(rd, "not a number:", key);
        return NAN;
    }
    return it->valuedouble;
}

static long rd_long(struct reader *rd, const cJSON *o, const char *key) {
    double v = rd_num(rd, o, key);
    if (!isfinite(v) || v != floor(v) || fabs(v) > 9e15) {
        rd_fail(rd, "not an integer:", key);
        return 0;
    }
    return (long)v;
}

static bool rd_bool(struct reader *rd, const cJSON *o, const char *key) {
    const cJSON *it = rd_item(rd, o, key, true);
    if (it && !cJSON_IsBool(it)) rd_fail(rd, "not a boolean:", key);
    return it && cJSON_IsTrue(it);
}

static void rd_str(struct reader *rd, const cJSON *o, const char *key, char *out, size_t len) {
    const cJSON *it = rd_item(rd, o, key, true);
    out[0] = '\0';
    if (!it) return;
    if (!cJSON_IsString(it)) {
        rd_fail(rd, "not a string:", key);
        return;
    }
    snprintf(out, len, "%s", it->valuestring);
}

static const cJSON *rd_obj(struct reader *rd, const cJSON *o, const char *key) {
    const cJSON *it = rd_item(rd, o, key, true);
    if (it && !cJSON_IsObject(it)) rd_fail(rd, "not an object:", key);
    return it && cJSON_IsObject(it) ? it : NULL;
}

static const cJSON *rd_arr(struct reader *rd, const cJSON *o, const char *key, int max, int *n) {
    const cJSON *it = rd_item(rd, o, key, true);
    *n = 0;
    if (it && !cJSON_IsArray(it)) rd_fail(rd, "not an array:", key);
    if (!it || !cJSON_IsArray(it)) return NULL;
    int k = cJSON_GetArraySize(it);
    if (k > max) {
        rd_fail(rd, "too many rows in", key);
        return NULL;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, it) if (!cJSON_IsObject(e)) rd_fail(rd, "a row is not an object in", key);
    *n = k;
    return it;
}

static void rd_stats(struct reader *rd, const cJSON *o, struct timing_stats *t) {
    t->median_s = rd_num(rd, o, "measured_s");
    t->min_s = rd_num(rd, o, "min_s");
    t->max_s = rd_num(rd, o, "max_s");
    t->mean_s = NAN;
    t->reps = (int)rd_long(rd, o, "reps");
    t->cv = rd_num(rd, o, "cv");
    t->noisy = rd_bool(rd, o, "noisy");
}

static void rd_provenance(struct reader *rd, const cJSON *o, struct report_provenance *p) {
    if (!o) return;
    rd_str(rd, o, "version", p->version, sizeof p->version);
    rd_str(rd, o, "git_commit", p->git_commit, sizeof p->git_commit);
    rd_str(rd, o, "command_line", p->command_line, sizeof p->command_line);
    rd_str(rd, o, "host", p->host, sizeof p->host);
    rd_str(rd, o, "utc", p->utc_stamp, sizeof p->utc_stamp);
    rd_str(rd, o, "cpu", p->cpu_model, sizeof p->cpu_model);
    rd_str(rd, o, "topology", p->topology, sizeof p->topology);
    p->threads = (int)rd_long(rd, o, "threads");
    rd_str(rd, o, "dtype", p->dtype, sizeof p->dtype);
    rd_str(rd, o, "kv_dtype", p->kv_dtype, sizeof p->kv_dtype);
    rd_str(rd, o, "gemv_backend", p->gemv_backend, sizeof p->gemv_backend);
    p->quick = rd_bool(rd, o, "quick");
    p->timer_resolution_s = rd_num(rd, o, "timer_resolution_s");
}

static void rd_counters(struct reader *rd, const cJSON *o, struct report_counters *c) {
    if (!o) return;
    c->available = rd_bool(rd, o, "available");
    rd_str(rd, o, "reason", c->reason, sizeof c->reason);
    const cJSON *ev = rd_arr(rd, o, "events", REPORT_MAX_EVENTS, &c->n_events);
    int i = 0;
    const cJSON *e;
    if (ev) cJSON_ArrayForEach(e, ev) {
            rd_str(rd, e, "name", c->events[i].name, sizeof c->events[i].name);
            c->events[i].available = rd_bool(rd, e, "available");
            rd_str(rd, e, "reason", c->events[i].reason, sizeof c->events[i].reason);
            i++;
        }
}

static void rd_ceilings(struct reader *rd, const cJSON *root, struct run_report *r) {
    const cJSON *arr = rd_arr(rd, root, "ceilings", REPORT_MAX_CEILINGS, &r->n_ceilings);
    int i = 0;
    const cJSON *e;
    if (arr) cJSON_ArrayForEach(e, arr) {
            struct report_ceiling *c = &r->ceilings[i++];
            char kind[32];
            rd_str(rd, e, "name", c->name, sizeof c->name);
            rd_str(rd, e, "kind", kind, sizeof kind);
            c->kind = strcmp(kind, "compute") == 0 ? REPORT_CEILING_COMPUTE : REPORT_CEILING_BANDWIDTH;
            c->value = rd_num(rd, e, "value");
            c->median = rd_num(rd, e, "median");
            c->min = rd_num(rd, e, "min");
            c->max = rd_num(rd, e, "max");
            c->reps = (int)rd_long(rd, e, "reps");
            c->one_core = rd_bool(rd, e, "one_core");
            c->roof = rd_bool(rd, e, "roof");
        }
}

static void rd_model(struct reader *rd, const cJSON *o, struct report_model *m) {
    if (!o) return;
    rd_str(rd, o, "name", m->name, sizeof m->name);
    m->params = rd_num(rd, o, "params");
    m->hidden = (int)rd_long(rd, o, "hidden");
    m->intermediate = (int)rd_long(rd, o, "intermediate");
    m->n_layers = (int)rd_long(rd, o, "layers");
    m->n_heads = (int)rd_long(rd, o, "heads");
    m->n_kv_heads = (int)rd_long(rd, o, "kv_heads");
    m->head_dim = (int)rd_long(rd, o, "head_dim");
    m->vocab = (int)rd_long(rd, o, "vocab");
    m->tied_embeddings = rd_bool(rd, o, "tied_embeddings");
    m->weight_bytes = rd_num(rd, o, "weight_bytes");
}

static void rd_blocks(struct reader *rd, const cJSON *root, struct run_report *r) {
    const cJSON *arr = rd_arr(rd, root, "blocks", BLOCK_COUNT, &r->n_blocks);
    int i = 0;
    const cJSON *e;
    if (arr) cJSON_ArrayForEach(e, arr) {
            struct report_block *b = &r->blocks[i++];
            rd_str(rd, e, "name", b->name, sizeof b->name);
            const struct block_desc *d = block_by_name(b->name);
            b->id = d ? d->id : BLOCK_COUNT; /* an unknown block still pairs by name */
            b->calls = rd_long(rd, e, "calls");
            b->flops = rd_num(rd, e, "flops");
            b->bytes = rd_num(rd, e, "bytes");
            b->predicted_s = rd_num(rd, e, "predicted_s");
            rd_stats(rd, e, &b->measured);
            b->efficiency = rd_num(rd, e, "efficiency");
            rd_str(rd, e, "bound", b->bound, sizeof b->bound);
            b->above_roof = rd_bool(rd, e, "above_roof");
            const cJSON *c = rd_obj(rd, e, "counters");
            for (int k = 0; c && k < r->counters.n_events; k++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, r->counters.events[k].name);
                b->counters[k] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
            }
        }
}

static void rd_steps(struct reader *rd, const cJSON *root, struct run_report *r) {
    const cJSON *arr = rd_arr(rd, root, "steps", REPORT_MAX_STEPS, &r->n_steps);
    int i = 0;
    const cJSON *e;
    if (arr) cJSON_ArrayForEach(e, arr) {
            struct report_step *s = &r->steps[i++];
            s->context = rd_long(rd, e, "context");
            s->bytes = rd_num(rd, e, "bytes");
            s->flops = rd_num(rd, e, "flops");
            s->predicted_s = rd_num(rd, e, "predicted_s");
            rd_stats(rd, e, &s->measured);
            s->tokens_per_s = rd_num(rd, e, "tokens_per_s");
            s->efficiency = rd_num(rd, e, "efficiency");
            s->above_roof = rd_bool(rd, e, "above_roof");
            const cJSON *bs = rd_obj(rd, e, "blocks_s");
            for (int b = 0; bs && b < BLOCK_COUNT; b++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(bs, block_name((enum block_id)b));
                s->block_s[b] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
            }
        }
}

static void rd_sampler(struct reader *rd, const cJSON *root, struct run_report *r) {
    const cJSON *arr = rd_arr(rd, root, "sampler", REPORT_MAX_SAMPLER, &r->n_sampler);
    int i = 0;
    const cJSON *e;
    if (arr) cJSON_ArrayForEach(e, arr) {
            struct report_sampler *s = &r->sampler[i++];
            rd_str(rd, e, "variant", s->variant, sizeof s->variant);
            rd_str(rd, e, "row_kind", s->row_kind, sizeof s->row_kind);
            s->vocab = rd_long(rd, e, "vocab");
            double nuc = rd_num(rd, e, "nucleus");
            s->nucleus = isfinite(nuc) ? (long)nuc : -1;
            rd_stats(rd, e, &s->measured);
        }
}

int compare_parse_run(const char *json, size_t len, const char *name, struct run_report *r,
                      struct fr_err *err) {
    report_init(r);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root) {
        long off = end ? (long)(end - json) : -1;
        return fr_err_set(err, "%s: not valid JSON (near byte %ld)", name, off);
    }
    struct reader rd = {name, err, 0};
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    if (!cJSON_IsObject(root) || !cJSON_IsString(schema) || strcmp(schema->valuestring, REPORT_SCHEMA) != 0) {
        cJSON_Delete(root);
        return fr_err_set(err, "%s: not a forge-roofline run (\"schema\" is not \"%s\")", name,
                          REPORT_SCHEMA);
    }
    rd_provenance(&rd, rd_obj(&rd, root, "provenance"), &r->prov);
    rd_counters(&rd, rd_obj(&rd, root, "counters"), &r->counters);
    rd_ceilings(&rd, root, r);
    rd_model(&rd, rd_obj(&rd, root, "model"), &r->model);
    r->blocks_context = rd_long(&rd, root, "blocks_context");
    rd_blocks(&rd, root, r);
    rd_steps(&rd, root, r);
    rd_sampler(&rd, root, r);
    cJSON_Delete(root);
    return rd.bad ? -1 : 0;
}

int compare_read_run(const char *path, struct run_report *r, struct fr_err *err) {
    char file[2048];
    struct stat st;
    if (stat(path, &st) != 0) return fr_err_set(err, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        if ((size_t)snprintf(file, sizeof file, "%s/run.json", path) >= sizeof file)
            return fr_err_set(err, "%s: path too long", path);
    } else {
        snprintf(file, sizeof file, "%s", path);
    }
    FILE *f = fopen(file, "rb");
    if (!f) return fr_err_set(err, "%s: %s", file, strerror(errno));
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            if (cap > (64u << 20)) {
                free(buf);
                fclose(f);
                return fr_err_set(err, "%s: larger than 64 MiB, not a run.json", file);
            }
            cap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return fr_err_set(err, "%s: out of memory", file);
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return fr_err_set(err, "%s: read error", file);
    }
    int rc = compare_parse_run(buf, len, file, r, err);
    free(buf);
    return rc;
}

/* ---------- checks and pairing ---------- */

int compare_check(const struct run_report *a, const struct run_report *b, struct fr_err *err) {
    char msg[sizeof err->msg];
    size_t used = 0;
    msg[0] = '\0';
#define DIFF(cond, fmt, ...)                                                                                 \
    do {                                                                                                     \
        if ((cond) && used < sizeof msg)                                                                     \
            used +=                                                                                          \
                (size_t)snprintf(msg + used, sizeof msg - used, "%s" fmt, used ? "; " : "", __VA_ARGS__);    \
    } while (0)
    DIFF(strcmp(a->model.name, b->model.name) != 0, "model %s vs %s", a->model.name, b->model.name);
    DIFF(strcmp(a->prov.dtype, b->prov.dtype) != 0, "dtype %s vs %s", a->prov.dtype, b->prov.dtype);
    DIFF(a->prov.threads != b->prov.threads, "threads %d vs %d", a->prov.threads, b->prov.threads);
    DIFF(strcmp(a->prov.cpu_model, b->prov.cpu_model) != 0, "CPU '%s' vs '%s'", a->prov.cpu_model,
         b->prov.cpu_model);
#undef DIFF
    if (used == 0) return 0;
    return fr_err_set(err, "runs are not comparable: %s", msg);
}

enum compare_verdict compare_spread(double a_min, double a_max, double b_min, double b_max) {
    if (!isfinite(a_min) || !isfinite(a_max) || !isfinite(b_min) || !isfinite(b_max)) return COMPARE_UNKNOWN;
    if (b_max < a_min) return COMPARE_FASTER;
    if (b_min > a_max) return COMPARE_SLOWER;
    return COMPARE_SAME;
}

static const char *verdict_md(enum compare_verdict v) {
    switch (v) {
    case COMPARE_FASTER:
        return "**yes: B faster**";
    case COMPARE_SLOWER:
        return "**yes: B slower**";
    case COMPARE_SAME:
        return "no";
    default:
        return "n/a";
    }
}

static enum compare_verdict stats_verdict(const struct timing_stats *a, const struct timing_stats *b) {
    return compare_spread(a->min_s, a->max_s, b->min_s, b->max_s);
}

static double ratio_ba(double a, double b) {
    return (isfinite(a) && isfinite(b) && a > 0) ? b / a : NAN;
}

/* One markdown row: A, B (in `scale` units), B/A, spread verdict. */
static void md_pair(FILE *f, const struct timing_stats *a, const struct timing_stats *b, double scale) {
    char va[REPORT_FMT_LEN], vb[REPORT_FMT_LEN], ra[REPORT_FMT_LEN];
    report_fmt_md(a->median_s, scale, 1, va);
    report_fmt_md(b->median_s, scale, 1, vb);
    report_fmt_md(ratio_ba(a->median_s, b->median_s), 1, 3, ra);
    fprintf(f, " %s | %s | %s | %s |", va, vb, ra, verdict_md(stats_verdict(a, b)));
}

static const struct report_block *find_block(const struct run_report *r, const char *name) {
    for (int i = 0; i < r->n_blocks; i++)
        if (strcmp(r->blocks[i].name, name) == 0) return &r->blocks[i];
    return NULL;
}

static void md_run_line(FILE *f, const char *tag, const char *label, const struct run_report *r) {
    fprintf(f, "- **%s**: `%s`: %s, %s weights, %d thread%s, %s, commit %s, %s\n", tag, label, r->model.name,
            r->prov.dtype, r->prov.threads, r->prov.threads == 1 ? "" : "s", r->prov.cpu_model,
            r->prov.git_commit[0] ? r->prov.git_commit : "unknown", r->prov.utc_stamp);
}

/* One row of one run in a compare section. Rows pair when their `cells` (the identity columns) match. */
struct cmp_row {
    char cells[160]; /* identity cells of the markdown row, e.g. "| topp_fast | flat | 151936 |" */
    char label[128]; /* the same identity in words, for the "only in" line */
    const struct timing_stats *t;
    double tokens_per_s; /* steps only */
};

enum cmp_section { CMP_BLOCKS, CMP_STEPS, CMP_SAMPLER };

static int cmp_rows(const struct run_report *r, enum cmp_section sec, struct cmp_row *out) {
    int n = sec == CMP_BLOCKS ? r->n_blocks : sec == CMP_STEPS ? r->n_steps : r->n_sampler;
    for (int i = 0; i < n; i++) {
        struct cmp_row *o = &out[i];
        o->tokens_per_s = NAN;
        if (sec == CMP_BLOCKS) {
            snprintf(o->cells, sizeof o->cells, "| %s |", r->blocks[i].name);
            snprintf(o->label, sizeof o->label, "block %s", r->blocks[i].name);
            o->t = &r->blocks[i].measured;
        } else if (sec == CMP_STEPS) {
            snprintf(o->cells, sizeof o->cells, "| %ld |", r->steps[i].context);
            snprintf(o->label, sizeof o->label, "context %ld", r->steps[i].context);
            o->t = &r->steps[i].measured;
            o->tokens_per_s = r->steps[i].tokens_per_s;
        } else {
            const struct report_sampler *x = &r->sampler[i];
            snprintf(o->cells, sizeof o->cells, "| %s | %s | %ld |", x->variant, x->row_kind, x->vocab);
            snprintf(o->label, sizeof o->label, "%s/%s/%ld", x->variant, x->row_kind, x->vocab);
            o->t = &x->measured;
        }
    }
    return n;
}

static const struct cmp_row *cmp_find(const struct cmp_row *rows, int n, const char *cells) {
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].cells, cells) == 0) return &rows[i];
    return NULL;
}

static void append(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...) {
    size_t used = strlen(buf);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static void md_only(FILE *f, const char *which, const struct cmp_row *x, int nx, const struct cmp_row *y,
                    int ny) {
    char only[1024] = "";
    for (int i = 0; i < nx; i++)
        if (!cmp_find(y, ny, x[i].cells)) append(only, sizeof only, "%s%s", only[0] ? ", " : "", x[i].label);
    if (only[0]) fprintf(f, "Only in %s: %s.\n\n", which, only);
}

/* One section: a row per identity found in both runs, in A's order, then the rows found in only one. */
static void md_section(FILE *f, const struct run_report *a, const struct run_report *b, enum cmp_section sec,
                       const char *heading, double scale) {
    struct cmp_row ra[REPORT_MAX_SAMPLER], rb[REPORT_MAX_SAMPLER];
    int na = cmp_rows(a, sec, ra), nb = cmp_rows(b, sec, rb);
    fputs(heading, f);
    for (int i = 0; i < na; i++) {
        const struct cmp_row *y = cmp_find(rb, nb, ra[i].cells);
        if (!y) continue;
        fputs(ra[i].cells, f);
        md_pair(f, ra[i].t, y->t, scale);
        if (sec == CMP_STEPS) {
            char ta[REPORT_FMT_LEN], tb[REPORT_FMT_LEN];
            report_fmt_md(ra[i].tokens_per_s, 1, 2, ta);
            report_fmt_md(y->tokens_per_s, 1, 2, tb);
            fprintf(f, " %s | %s |", ta, tb);
        }
        fputc('\n', f);
    }
    fputc('\n', f);
    md_only(f, "A", ra, na, rb, nb);
    md_only(f, "B", rb, nb, ra, na);
}

static void write_md(FILE *f, const struct run_report *a, const struct run_report *b, const char *label_a,
                     const char *label_b, const char *mismatch) {
    fputs("# forge-roofline compare\n\n", f);
    md_run_line(f, "A", label_a, a);
    md_run_line(f, "B", label_b, b);
    fputc('\n', f);
    if (mismatch) fprintf(f, "> **Warning:** compared with --force although %s.\n\n", mismatch);
    fputs("B/A below 1 means B is faster. \"Outside spread\" is yes only when the two runs' [min, max] "
          "intervals do not overlap; otherwise the difference is within the noise of the runs.\n\n",
          f);
    char heading[256];
    snprintf(heading, sizeof heading,
             "## Blocks (context A %ld, B %ld)\n\n| block | A µs | B µs | B/A | outside spread |\n"
             "|---|--:|--:|--:|---|\n",
             a->blocks_context, b->blocks_context);
    md_section(f, a, b, CMP_BLOCKS, heading, 1e6);
    md_section(
        f, a, b, CMP_STEPS,
        "## Decode steps\n\n| context | A ms | B ms | B/A | outside spread | A tokens/s | B tokens/s |\n"
        "|--:|--:|--:|--:|---|--:|--:|\n",
        1e3);
    md_section(f, a, b, CMP_SAMPLER,
               "## Sampler\n\n| variant | row kind | vocab | A µs | B µs | B/A | outside spread |\n"
               "|---|---|--:|--:|--:|--:|---|\n",
               1e6);
    fputs("## Plot\n\n![compare](compare.png)  \n[compare.svg](compare.svg)\n", f);
}

/* ---------- plot inputs ---------- */

static double div_or_nan(double n, double d) {
    return (isfinite(n) && isfinite(d) && d > 0 && n > 0) ? n / d : NAN;
}

static void gp_val(FILE *f, double v) {
    char buf[REPORT_FMT_LEN];
    report_fmt_exact(v, buf);
    fprintf(f, " %s", buf[0] ? buf : "NaN");
}

static int write_plot_inputs(FILE *vars, FILE *pts, const struct run_report *a, const struct run_report *b,
                             const char *label_a, const char *label_b) {
    fputs("# Written by forge-roofline compare for scripts/compare.gp.\ntitle_a = ", vars);
    char t[600];
    snprintf(t, sizeof t, "A: %s (%s)", label_a,
             a->prov.git_commit[0] ? a->prov.git_commit : a->prov.utc_stamp);
    report_gp_str(vars, t);
    fputs("\ntitle_b = ", vars);
    snprintf(t, sizeof t, "B: %s (%s)", label_b,
             b->prov.git_commit[0] ? b->prov.git_commit : b->prov.utc_stamp);
    report_gp_str(vars, t);
    fputs("\nrun_title = ", vars);
    snprintf(t, sizeof t, "%s, %s weights, %d threads, %s", a->model.name, a->prov.dtype, a->prov.threads,
             a->prov.cpu_model);
    report_gp_str(vars, t);
    fputc('\n', vars);
    report_gp_roofs(vars, a, "a_");
    report_gp_roofs(vars, b, "b_");

    fputs("# row name ai_a gflops_a ai_b gflops_b ratio_b_over_a verdict(0 n/a,1 same,2 faster,3 slower)\n",
          pts);
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0, rlo = INFINITY, rhi = 0;
    int n = 0;
    for (int i = 0; i < a->n_blocks; i++) {
        const struct report_block *x = &a->blocks[i], *y = find_block(b, x->name);
        if (!y) continue;
        double ai_a = div_or_nan(x->flops, x->bytes), gf_a = div_or_nan(x->flops, x->measured.median_s) / 1e9;
        double ai_b = div_or_nan(y->flops, y->bytes), gf_b = div_or_nan(y->flops, y->measured.median_s) / 1e9;
        double rt = ratio_ba(x->measured.median_s, y->measured.median_s);
        fprintf(pts, "%d \"%s\"", n++, x->name);
        gp_val(pts, ai_a);
        gp_val(pts, gf_a);
        gp_val(pts, ai_b);
        gp_val(pts, gf_b);
        gp_val(pts, rt);
        fprintf(pts, " %d\n", (int)stats_verdict(&x->measured, &y->measured));
        double ai[2] = {ai_a, ai_b}, gf[2] = {gf_a, gf_b};
        for (int k = 0; k < 2; k++)
            if (isfinite(ai[k]) && isfinite(gf[k])) {
                xlo = fmin(xlo, ai[k]), xhi = fmax(xhi, ai[k]);
                ylo = fmin(ylo, gf[k]), yhi = fmax(yhi, gf[k]);
            }
        if (isfinite(rt) && rt > 0) rlo = fmin(rlo, rt), rhi = fmax(rhi, rt);
    }
    double bw = INFINITY, peak = 0;
    for (int i = 0; i < a->n_ceilings; i++) {
        const struct report_ceiling *c = &a->ceilings[i];
        if (!isfinite(c->value) || c->value <= 0 || c->one_core) continue;
        if (c->kind == REPORT_CEILING_BANDWIDTH) bw = fmin(bw, c->value);
        if (c->kind == REPORT_CEILING_COMPUTE) peak = fmax(peak, c->value);
    }
    if (!isfinite(xlo)) xlo = 0.1, xhi = 10, ylo = 0.1, yhi = 100;
    if (peak > 0) yhi = fmax(yhi, peak);
    if (peak > 0 && isfinite(bw)) xhi = fmax(xhi, peak / bw);
    if (isfinite(bw)) ylo = fmin(ylo, bw * xlo / 3);
    if (!isfinite(rlo)) rlo = rhi = 1;
    rlo = fmin(rlo, 1.0), rhi = fmax(rhi, 1.0);
    fprintf(vars,
            "n_rows = %d\nx_lo = %.6g\nx_hi = %.6g\ny_lo = %.6g\ny_hi = %.6g\nr_lo = %.6g\nr_hi = %.6g\n", n,
            xlo / 4, xhi * 4, ylo / 4, yhi * 3, rlo / 1.25, rhi * 1.25);
    return 0;
}

static int open_pair(const char *dir, const char *name, FILE **f, struct fr_err *err) {
    char path[2048];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return fr_err_set(err, "path too long: %s/%s", dir, name);
    *f = fopen(path, "w");
    if (!*f) return fr_err_set(err, "cannot write '%s': %s", path, strerror(errno));
    return 0;
}

static int close_one(FILE *f, const char *dir, const char *name, struct fr_err *err) {
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return fr_err_set(err, "error writing '%s/%s'", dir, name);
    return 0;
}

int compare_write(const struct run_report *a, const struct run_report *b, const char *label_a,
                  const char *label_b, const char *mismatch, const char *out_dir, struct fr_err *err) {
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST)
        return fr_err_set(err, "cannot create '%s': %s", out_dir, strerror(errno));
    FILE *md, *vars, *pts;
    if (open_pair(out_dir, "compare.md", &md, err) != 0) return -1;
    write_md(md, a, b, label_a, label_b, mismatch);
    if (close_one(md, out_dir, "compare.md", err) != 0) return -1;
    if (open_pair(out_dir, "compare_vars.gp", &vars, err) != 0) return -1;
    if (open_pair(out_dir, "compare_points.dat", &pts, err) != 0) {
        fclose(vars);
        return -1;
    }
    write_plot_inputs(vars, pts, a, b, label_a, label_b);
    int rc = close_one(vars, out_dir, "compare_vars.gp", err);
    if (close_one(pts, out_dir, "compare_points.dat", err) != 0) rc = -1;
    return rc;
}
