/* Plots: the inputs scripts/plots.sh reads (plot_vars.gp with titles, roofs, ranges and labels, and the
 * plot_*.dat tables), and running the script, telling "gnuplot is not installed" (the script's exit status
 * REPORT_PLOTS_EXIT_NO_GNUPLOT) apart from a real failure, whose last line of stderr becomes the message.
 * Checked in tests/test_report_plots.c (every image drawn, PNG magic, empty runs, missing gnuplot). */
#include "bench/report/report_plots.h"
#include "bench/report/report_batch.h"
#include "bench/report/report_prefill.h"

#include "model/datadir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

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
    bool above_roof;    /* drawn with a red ring: an accounting error */
    double roof_gflops; /* flops / predicted_s: the point's own roof, the one of the level that binds it */
    double label_y;     /* label height in the inset */
};

/* Points that can be drawn on log-log axes; the others are named in *not_drawn for the key. */
static int roof_points(const struct run_report *r, struct roof_point *pts, char *not_drawn, size_t nd_len) {
    int n = 0;
    not_drawn[0] = '\0';
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        double ai = report_ratio(b->flops, b->bytes), gf = report_ratio(b->flops, b->measured.median_s) / 1e9;
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
        p->above_roof = report_is_above_roof(b->above_roof, b->efficiency);
        p->roof_gflops = report_ratio(b->flops, b->predicted_s) / 1e9;
        snprintf(p->label, sizeof p->label, "%s [%s roof]%s", b->name, b->bound[0] ? b->bound : "n/a",
                 p->above_roof ? " (ABOVE ROOF: accounting error)" : "");
    }
    const struct report_step *s = report_headline_step(r);
    if (s) {
        double ai = report_ratio(s->flops, s->bytes), gf = report_ratio(s->flops, s->measured.median_s) / 1e9;
        if (ai > 0 && gf > 0 && isfinite(gf)) {
            struct roof_point *p = &pts[n++];
            p->intensity = ai, p->gflops = gf;
            p->reads_weights = false;
            p->above_roof = report_is_above_roof(s->above_roof, s->efficiency);
            p->roof_gflops = report_ratio(s->flops, s->predicted_s) / 1e9;
            snprintf(p->label, sizeof p->label, "whole decode step (T=%ld)%s", s->context,
                     p->above_roof ? " (ABOVE ROOF: accounting error)" : "");
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
    for (int i = 0; i < r->n_prefill; i++) { /* the prefill's points lie far right of the decode blocks */
        const struct report_prefill *p = &r->prefill[i];
        double ai = report_ratio(p->flops, p->bytes), gf = report_ratio(p->flops, p->measured.median_s) / 1e9;
        if (ai > 0 && gf > 0 && isfinite(gf)) xhi = fmax(xhi, ai), yhi = fmax(yhi, gf);
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
        extent(report_ratio(1.0, s->predicted_s), &lo, &hi, &k);
        extent(report_ratio(1.0, s->measured.median_s), &lo, &hi, &k);
        extent(report_ratio(1.0, s->measured.min_s), &lo, &hi, NULL);
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

int report_plots_write_inputs(const struct run_report *r, const char *dir, struct fr_err *err) {
    struct roof_point pts[BLOCK_COUNT + 1];
    char not_drawn[160]; /* one key line: longer lists end in "..." */
    int n_pts = roof_points(r, pts, not_drawn, sizeof not_drawn);
    struct series ser[REPORT_MAX_SAMPLER];
    int n_ser = sampler_series(r, ser);
    const struct report_step *hs = report_headline_step(r);

    FILE *f = report_file_open(dir, "plot_vars.gp", err);
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
            report_headline_step(r) && n_pts > 0 && strncmp(pts[n_pts - 1].label, "whole", 5) == 0 ? n_pts
                                                                                                   : 0);
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
    if (report_batch_write_plot_inputs(r, dir, f, err) != 0 ||
        report_prefill_write_plot_inputs(r, dir, f, err) != 0) {
        fclose(f);
        return -1;
    }
    if (report_file_close(f, dir, "plot_vars.gp", err) != 0) return -1;

    /* Roofline points: one line per point, in point_name order. */
    if (!(f = report_file_open(dir, "plot_points.dat", err))) return -1;
    fputs("# intensity_flop_per_byte measured_gflop_per_s reads_weights label_y name above_roof "
          "roof_gflop_per_s\n",
          f);
    for (int i = 0; i < n_pts; i++) {
        gp_num(f, pts[i].intensity);
        fputc(' ', f);
        gp_num(f, pts[i].gflops);
        fprintf(f, " %d ", pts[i].reads_weights);
        gp_num(f, pts[i].label_y);
        fputs(" \"", f);
        for (const char *c = pts[i].label; *c && *c != ' '; c++) fputc(*c, f);
        fprintf(f, "\" %d ", pts[i].above_roof);
        gp_num(f, pts[i].roof_gflops);
        fputc('\n', f);
    }
    if (report_file_close(f, dir, "plot_points.dat", err) != 0) return -1;

    /* Breakdown: per block, predicted, microbenchmark and in-step milliseconds per decode step; the label
     * carries the block's share of the measured step (in-step times when observed, else microbenchmarks). */
    if (!(f = report_file_open(dir, "plot_breakdown.dat", err))) return -1;
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
        double share = sum_in > 0 ? report_ratio(in, sum_in) : report_ratio(b->measured.median_s, sum_micro);
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
    if (report_file_close(f, dir, "plot_breakdown.dat", err) != 0) return -1;

    /* Sampler: one gnuplot data block (index) per series, sorted by vocabulary size. */
    if (!(f = report_file_open(dir, "plot_sampler.dat", err))) return -1;
    fputs("# vocab measured_us min_us max_us; one block per series_name\n", f);
    for (int k = 0; k < n_ser; k++) {
        const struct report_sampler *rows[REPORT_MAX_SAMPLER] = {NULL};
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
    if (report_file_close(f, dir, "plot_sampler.dat", err) != 0) return -1;

    /* Context sweep: tokens/s predicted and measured (with the spread from max_s and min_s). */
    if (!(f = report_file_open(dir, "plot_steps.dat", err))) return -1;
    fputs("# context predicted_tokens_per_s measured_tokens_per_s slowest fastest\n", f);
    const struct report_step *steps[REPORT_MAX_STEPS] = {NULL};
    for (int i = 0; i < r->n_steps; i++) steps[i] = &r->steps[i];
    qsort(steps, (size_t)r->n_steps, sizeof steps[0], cmp_step_context);
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = steps[i];
        fprintf(f, "%ld ", s->context);
        gp_num(f, report_ratio(1.0, s->predicted_s));
        fputc(' ', f);
        gp_num(f, report_ratio(1.0, s->measured.median_s));
        fputc(' ', f);
        gp_num(f, report_ratio(1.0, s->measured.max_s));
        fputc(' ', f);
        gp_num(f, report_ratio(1.0, s->measured.min_s));
        fputc('\n', f);
    }
    return report_file_close(f, dir, "plot_steps.dat", err);
}

/* Finds the folder holding plots.sh; 0 on success. $FORGE_ROOFLINE_SCRIPTS, when set, is the only place
 * looked in (an explicit setting is never passed over); otherwise model/datadir.h's places. */
static int find_scripts(char *out, size_t len, struct fr_err *err) {
    struct datadir_places places;
    datadir_places_of("scripts", "FORGE_ROOFLINE_SCRIPTS", NULL, &places);
    char found[DATADIR_PATH_LEN + 16];
    int at = datadir_find_file(&places, "plots.sh", found, sizeof found);
    bool env = places.n > 0 && places.label[0][0] == '$';
    if (env && at != 0) return fr_err_set(err, "FORGE_ROOFLINE_SCRIPTS='%s' has no plots.sh", places.dir[0]);
    if (at >= 0) {
        snprintf(out, len, "%s", places.dir[at]);
        return 0;
    }
    char looked[DATADIR_MAX_PLACES * (DATADIR_PATH_LEN + 64)];
    datadir_list_places(&places, looked, sizeof looked);
    return fr_err_set(err, "cannot find plots.sh in %s (set FORGE_ROOFLINE_SCRIPTS)", looked);
}

/* Keeps the last non-empty line of the child's stderr. */
static void last_line(const char *buf, size_t n, char *out, size_t len) {
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) n--;
    size_t start = n;
    while (start > 0 && buf[start - 1] != '\n') start--;
    size_t k = n - start < len - 1 ? n - start : len - 1;
    memcpy(out, buf + start, k);
    out[k] = '\0';
}

int report_plots_draw_mode(const char *mode, const char *dir, struct fr_err *err) {
    char scripts[PATH_MAX], script[PATH_MAX + 16];
    if (find_scripts(scripts, sizeof scripts, err) != 0) return REPORT_PLOTS_FAILED;
    snprintf(script, sizeof script, "%s/plots.sh", scripts);

    int fds[2];
    if (pipe(fds) != 0) {
        fr_err_set(err, "plots: pipe: %s", strerror(errno));
        return REPORT_PLOTS_FAILED;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *argv[5];
    int argc = 0;
    argv[argc++] = (char *)"sh";
    argv[argc++] = script;
    if (mode) argv[argc++] = (char *)mode;
    argv[argc++] = (char *)dir;
    argv[argc] = NULL;
    pid_t pid;
    int rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        fr_err_set(err, "plots: cannot run /bin/sh: %s", strerror(rc));
        return REPORT_PLOTS_FAILED;
    }
    /* Keep the tail of stderr: the last line is the one that says what went wrong. */
    char tail[4096];
    size_t used = 0;
    for (;;) {
        char chunk[1024];
        ssize_t got = read(fds[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (used + (size_t)got > sizeof tail) {
            size_t drop = used + (size_t)got - sizeof tail;
            if (drop > used) drop = used;
            memmove(tail, tail + drop, used - drop);
            used -= drop;
        }
        size_t take = (size_t)got < sizeof tail ? (size_t)got : sizeof tail;
        memcpy(tail + used, chunk + ((size_t)got - take), take);
        used += take;
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            fr_err_set(err, "plots: waitpid: %s", strerror(errno));
            return REPORT_PLOTS_FAILED;
        }
    char line[400];
    last_line(tail, used, line, sizeof line);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return REPORT_PLOTS_DRAWN;
    if (WIFEXITED(status) && WEXITSTATUS(status) == REPORT_PLOTS_EXIT_NO_GNUPLOT) {
        fr_err_set(err, "gnuplot is not installed, plots skipped");
        return REPORT_PLOTS_NO_GNUPLOT;
    }
    if (WIFEXITED(status))
        fr_err_set(err, "plots.sh failed (exit %d): %s", WEXITSTATUS(status), line[0] ? line : "no message");
    else
        fr_err_set(err, "plots.sh killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return REPORT_PLOTS_FAILED;
}

int report_plots_draw(const char *dir, struct fr_err *err) {
    return report_plots_draw_mode(NULL, dir, err);
}
