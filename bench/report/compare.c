/* Two runs side by side (read with bench/report/report_json.h): refuses runs that are not comparable, pairs
 * rows by identity and writes compare.md with A, B, B/A and whether the change is outside both runs' spread.
 * Checked in tests/test_report_compare.c (round trip, ratio, spread verdicts, refusal, malformed input). */
#include "bench/report/compare.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/report/report_write.h"

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

/* One markdown row: A, B (in `scale` units), B/A, spread verdict. */
static void md_pair(FILE *f, const struct timing_stats *a, const struct timing_stats *b, double scale) {
    char va[REPORT_FMT_LEN], vb[REPORT_FMT_LEN], ra[REPORT_FMT_LEN];
    report_fmt_md(a->median_s, scale, 1, va);
    report_fmt_md(b->median_s, scale, 1, vb);
    report_fmt_md(report_ratio(b->median_s, a->median_s), 1, 3, ra);
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

__attribute__((format(printf, 3, 4))) static void append(char *buf, size_t len, const char *fmt, ...) {
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

/* Intensity and GFLOP/s of a row for log axes: NaN unless positive. */
static double positive_ratio(double n, double d) {
    return n > 0 ? report_ratio(n, d) : NAN;
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
        double ai_a = positive_ratio(x->flops, x->bytes),
               gf_a = positive_ratio(x->flops, x->measured.median_s) / 1e9;
        double ai_b = positive_ratio(y->flops, y->bytes),
               gf_b = positive_ratio(y->flops, y->measured.median_s) / 1e9;
        double rt = report_ratio(y->measured.median_s, x->measured.median_s);
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

int compare_write(const struct run_report *a, const struct run_report *b, const char *label_a,
                  const char *label_b, const char *mismatch, const char *out_dir, struct fr_err *err) {
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST)
        return fr_err_set(err, "cannot create '%s': %s", out_dir, strerror(errno));
    FILE *md = report_file_open(out_dir, "compare.md", err);
    if (!md) return -1;
    write_md(md, a, b, label_a, label_b, mismatch);
    if (report_file_close(md, out_dir, "compare.md", err) != 0) return -1;
    FILE *vars = report_file_open(out_dir, "compare_vars.gp", err);
    if (!vars) return -1;
    FILE *pts = report_file_open(out_dir, "compare_points.dat", err);
    if (!pts) {
        fclose(vars);
        return -1;
    }
    write_plot_inputs(vars, pts, a, b, label_a, label_b);
    int rc = report_file_close(vars, out_dir, "compare_vars.gp", err);
    if (report_file_close(pts, out_dir, "compare_points.dat", err) != 0) rc = -1;
    return rc;
}
