/* forge-roofline history {list|show ROW|plot ROW|import DIR...|export}: the run store (bench/history/).
 * Also the append that the full run and compare make when their folder is complete (cli_history_append).
 * Checked end to end in tests/test_history_cli.c; docs/history.md is the user's guide. */
#include <cjson/cJSON.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/cli/cli.h"
#include "bench/history/history.h"
#include "bench/history/history_change.h"
#include "bench/report/report_write.h"

#define HISTORY_MAX_SHIFTS 64

static void usage(FILE *f) {
    fputs("usage: forge-roofline history COMMAND [--history STORE] [options]\n"
          "  list                     the runs in the store\n"
          "  show ROW                 a row's series per machine, model and options, with its shifts\n"
          "  plot ROW [--out DIR]     the series as history.png/.svg (raw and paired-read-normalised,\n"
          "                           shifts marked); one series: narrow it with --machine or --model\n"
          "  import DIR...            append completed run folders (and compare folders)\n"
          "  export --format csv|jsonl  everything, to stdout\n"
          "ROW: step@4096, block:attention@4096, sampler@151936 (the full chain), sampler:greedy@151936,\n"
          "     batch:8@1024, ceiling:dram_read (docs/history.md lists them)\n"
          "  --history STORE   a SQLite file or postgresql://user@host/db (default results/history.sqlite)\n"
          "  --since STAMP     runs from this UTC date or stamp on (2026-11-29, 20261129T1730)\n"
          "  --machine KEY     a machine key prefix or a host name\n"
          "  --model NAME      one model\n"
          "  --format md|csv|json  (list, show; default md)\n",
          f);
}

/* The default store of a results folder: beside its runs. */
static void default_store(const char *folder, char *out, size_t len) {
    char copy[2048];
    snprintf(copy, sizeof copy, "%s", folder);
    snprintf(out, len, "%s/history.sqlite", dirname(copy));
}

int cli_history_append(const char *where, const char *dir, bool compare) {
    char def[2100];
    if (!where) {
        default_store(dir, def, sizeof def);
        where = def;
    }
    struct history_store *s = NULL;
    struct history_open_opts o = {.write = true};
    struct fr_err err = {{0}};
    struct history_append_result res;
    int rc = history_open(where, &o, &s, &err);
    if (rc == 0) {
        rc = compare ? history_append_compare(s, dir, &res, &err)
                     : history_append_run(s, dir, NULL, &res, &err);
        history_close(s);
    }
    bool pg = strncmp(where, "postgres", 8) == 0;
    if (rc != 0)
        return cli_fail("history: %s; %s is complete (append it later: forge-roofline history import %s)",
                        err.msg, dir, dir);
    if (res.duplicate)
        fprintf(stderr, "forge-roofline: history: %s is already in %s\n", dir,
                pg ? "the postgresql store" : where);
    else if (compare)
        fprintf(stderr, "forge-roofline: history: compare appended to %s (%d rows)\n",
                pg ? "the postgresql store" : where, res.rows);
    else
        fprintf(stderr, "forge-roofline: history: run appended to %s (machine %s, %d rows, %s)\n",
                pg ? "the postgresql store" : where, res.machine_key, res.rows,
                res.has_samples ? "with its raw samples" : "no samples.csv: the rows' medians only");
    if (res.unmatched_samples)
        fprintf(stderr, "forge-roofline: history: %d samples of %s name no row of its run.json (kept)\n",
                res.unmatched_samples, dir);
    return CLI_EXIT_OK;
}

/* ---- options ---- */

enum fmt { FMT_MD, FMT_CSV, FMT_JSON };

struct hist_args {
    const char *store, *row, *out;
    struct history_filter filter;
    enum fmt fmt;
    bool fmt_given;
    const char *export_fmt;
    char **dirs;
    int n_dirs;
};

/* An option with a value: stores it where it goes. Returns 0, or the exit status of a usage error. */
static int parse_value(const char *cmd, const char *o, const char *v, struct hist_args *a) {
    if (strcmp(o, "--history") == 0) {
        a->store = v;
    } else if (strcmp(o, "--since") == 0) {
        a->filter.since = v;
    } else if (strcmp(o, "--machine") == 0) {
        a->filter.machine = v;
    } else if (strcmp(o, "--model") == 0) {
        a->filter.model = v;
    } else if (strcmp(o, "--out") == 0) {
        if (strcmp(cmd, "plot") != 0) return cli_usage_error("history %s: --out applies to plot only", cmd);
        a->out = v;
    } else { /* --format */
        a->fmt_given = true;
        if (strcmp(cmd, "export") == 0) {
            if (strcmp(v, "csv") != 0 && strcmp(v, "jsonl") != 0)
                return cli_usage_error("history export: --format must be csv or jsonl (got '%s')", v);
            a->export_fmt = v;
        } else if (strcmp(v, "md") == 0 || strcmp(v, "csv") == 0 || strcmp(v, "json") == 0) {
            a->fmt = v[0] == 'm' ? FMT_MD : v[0] == 'c' ? FMT_CSV : FMT_JSON;
        } else {
            return cli_usage_error("history %s: --format must be md, csv or json (got '%s')", cmd, v);
        }
    }
    return 0;
}

static int parse(int argc, char **argv, const char *cmd, struct hist_args *a) {
    static const char *const valued[] = {"--history", "--since", "--machine", "--model", "--format", "--out"};
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        bool takes = false;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++)
            takes = takes || strcmp(o, valued[k]) == 0;
        if (takes) {
            if (i + 1 >= argc || !argv[i + 1][0])
                return cli_usage_error("history %s: %s needs a value", cmd, o);
            int rc = parse_value(cmd, o, argv[++i], a);
            if (rc) return rc;
        } else if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            usage(stdout);
            return -1;
        } else if (o[0] == '-' && o[1]) {
            return cli_usage_error("history %s: unknown option '%s' (try history --help)", cmd, o);
        } else if (strcmp(cmd, "import") == 0) {
            a->dirs[a->n_dirs++] = argv[i];
        } else if ((strcmp(cmd, "show") == 0 || strcmp(cmd, "plot") == 0) && !a->row) {
            a->row = o;
        } else {
            return cli_usage_error("history %s: unexpected argument '%s'", cmd, o);
        }
    }
    return 0;
}

/* ---- output helpers ---- */

/* Prints a JSON document built for stdout and frees it. */
static int json_print(cJSON *doc) {
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text) return cli_fail("history: out of memory");
    puts(text);
    free(text);
    return CLI_EXIT_OK;
}

static void csv_str(FILE *f, const char *s) {
    if (strpbrk(s, ",\"\n")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"') fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
}
static void csv_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.10g", v);
}

/* ---- list ---- */

struct list_ctx {
    enum fmt fmt;
    int n;
    cJSON *json; /* --format json: the runs, printed at the end */
};

static int list_one(void *ctx, const struct history_run_info *r) {
    struct list_ctx *c = ctx;
    FILE *f = stdout;
    if (c->fmt == FMT_MD) {
        if (c->n == 0)
            fputs("| run | utc | host | machine | commit | model | options | rows | samples | folder |\n"
                  "|--:|---|---|---|---|---|---|--:|--:|---|\n",
                  f);
        char samples[32];
        snprintf(samples, sizeof samples, "%d", r->samples);
        fprintf(f, "| %lld | %s | %s | %s | %s%s | %s | %s | %d | %s | %s |\n", r->id, r->utc, r->host,
                r->machine_key, r->commit, r->dirty ? " (dirty)" : "", r->model, r->options, r->rows,
                r->has_samples ? samples : "none", r->folder);
    } else if (c->fmt == FMT_CSV) {
        if (c->n == 0) fputs("run,utc,host,machine,commit,dirty,model,options,rows,samples,folder\n", f);
        fprintf(f, "%lld,%s,", r->id, r->utc);
        csv_str(f, r->host);
        fprintf(f, ",%s,%s,%d,", r->machine_key, r->commit, r->dirty);
        csv_str(f, r->model);
        fputc(',', f);
        csv_str(f, r->options);
        fprintf(f, ",%d,%d,", r->rows, r->samples);
        csv_str(f, r->folder);
        fputc('\n', f);
    } else {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "run", (double)r->id);
        cJSON_AddStringToObject(o, "utc", r->utc);
        cJSON_AddStringToObject(o, "host", r->host);
        cJSON_AddStringToObject(o, "machine", r->machine_key);
        cJSON_AddStringToObject(o, "commit", r->commit);
        cJSON_AddBoolToObject(o, "dirty", r->dirty);
        cJSON_AddStringToObject(o, "model", r->model);
        cJSON_AddStringToObject(o, "options", r->options);
        cJSON_AddNumberToObject(o, "rows", r->rows);
        cJSON_AddNumberToObject(o, "samples", r->samples);
        cJSON_AddBoolToObject(o, "has_samples", r->has_samples);
        cJSON_AddStringToObject(o, "folder", r->folder);
        cJSON_AddItemToArray(c->json, o);
    }
    c->n++;
    return 0;
}

/* ---- show ---- */

/* A series' points, and where they have a paired read, the points normalised by it: value x (its paired
 * read over the series' median paired read), so a slower machine state is not taken for slower code. */
struct analysed {
    double *norm; /* NaN where the point has no paired read */
    bool any_norm, all_norm;
    struct history_shift shifts[HISTORY_MAX_SHIFTS], norm_shifts[HISTORY_MAX_SHIFTS];
    int n_shifts, n_norm_shifts;
};

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int analyse(const struct history_series *sr, struct analysed *an, struct fr_err *err) {
    *an = (struct analysed){0};
    int n = sr->n;
    an->norm = malloc(sizeof *an->norm * (size_t)(n + 1));
    double *vals = malloc(sizeof *vals * (size_t)(n + 1)), *pr = malloc(sizeof *pr * (size_t)(n + 1));
    int rc = -1;
    if (!an->norm || !vals || !pr) {
        fr_err_set(err, "out of memory");
        goto done;
    }
    int np = 0;
    bool timed = strcmp(sr->unit, "s") == 0;
    for (int i = 0; i < n; i++) {
        vals[i] = sr->points[i].value;
        if (timed && isfinite(sr->points[i].paired_read_gbs) && sr->points[i].paired_read_gbs > 0)
            pr[np++] = sr->points[i].paired_read_gbs;
    }
    an->any_norm = np > 0, an->all_norm = np == n && n > 0;
    double ref = NAN;
    if (np) {
        qsort(pr, (size_t)np, sizeof *pr, cmp_d);
        ref = np % 2 ? pr[np / 2] : 0.5 * (pr[np / 2 - 1] + pr[np / 2]);
    }
    for (int i = 0; i < n; i++) {
        double p = sr->points[i].paired_read_gbs;
        an->norm[i] = timed && isfinite(p) && p > 0 ? sr->points[i].value * p / ref : NAN;
    }
    an->n_shifts = history_change_detect(vals, n, an->shifts, HISTORY_MAX_SHIFTS, err);
    if (an->n_shifts < 0) goto done;
    if (an->all_norm) {
        an->n_norm_shifts = history_change_detect(an->norm, n, an->norm_shifts, HISTORY_MAX_SHIFTS, err);
        if (an->n_norm_shifts < 0) goto done;
    }
    rc = 0;
done:
    free(vals);
    free(pr);
    if (rc) free(an->norm), an->norm = NULL;
    return rc;
}

static void describe_machine(FILE *f, const struct history_series *sr) {
    const struct history_machine *m = &sr->machine;
    fprintf(f, "%s, %s, %d threads, %s, %s, %s", m->cpu, m->isa, m->threads, m->topology, m->kernel,
            m->mm_state);
}

static void md_shift(FILE *f, const struct history_series *sr, const struct history_shift *s,
                     const char *what) {
    const struct history_point *a = &sr->points[s->index - 1], *b = &sr->points[s->index];
    fprintf(f,
            "- %s shift of %+.1f %% (95 %% interval %+.1f to %+.1f %%, confidence %.3f) at run %lld (%s): "
            "between commit %s%s (run %lld, %s) and %s%s\n",
            what, 100 * s->size, 100 * s->size_lo, 100 * s->size_hi, s->confidence, b->run_id, b->utc,
            a->commit, a->dirty ? " (dirty)" : "", a->run_id, a->utc, b->commit, b->dirty ? " (dirty)" : "");
}

static void show_md(const struct history_series *sr, const struct analysed *an) {
    FILE *f = stdout;
    fprintf(f, "## %s: machine %s (hosts %s)\n\n", sr->key, sr->machine.key, sr->hosts);
    describe_machine(f, sr);
    fprintf(f, "; model %s, %s; %d runs\n\n", sr->model, sr->options, sr->n);
    fprintf(f,
            "| run | utc | commit | point (%s) | run.json median | min | max | reps | samples | paired "
            "read GB/s "
            "| normalised |\n|--:|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n",
            sr->unit);
    for (int i = 0; i < sr->n; i++) {
        const struct history_point *p = &sr->points[i];
        fprintf(f, "| %lld | %s | %s%s | %.6g | %.6g | %.6g | %.6g | %d | ", p->run_id, p->utc, p->commit,
                p->dirty ? " (dirty)" : "", p->value, p->median, p->min, p->max, p->reps);
        if (p->samples)
            fprintf(f, "%d (%d disturbed) | ", p->samples, p->disturbed);
        else
            fputs("none | ", f);
        if (isfinite(p->paired_read_gbs))
            fprintf(f, "%.1f | ", p->paired_read_gbs);
        else
            fputs("n/a | ", f);
        if (isfinite(an->norm[i]))
            fprintf(f, "%.6g |\n", an->norm[i]);
        else
            fputs("n/a |\n", f);
    }
    fputc('\n', f);
    fprintf(f, "Shifts (PELT on the log of the points, penalty %.0f ln n, at least %d runs a side):\n",
            HISTORY_CHANGE_PENALTY, HISTORY_CHANGE_MIN_SEGMENT);
    if (sr->n < 2 * HISTORY_CHANGE_MIN_SEGMENT)
        fprintf(f, "- too few runs to look for one (%d; %d needed)\n", sr->n, 2 * HISTORY_CHANGE_MIN_SEGMENT);
    else if (an->n_shifts == 0)
        fputs("- none in the raw points\n", f);
    for (int i = 0; i < an->n_shifts; i++) md_shift(f, sr, &an->shifts[i], "raw:");
    if (an->all_norm && sr->n >= 2 * HISTORY_CHANGE_MIN_SEGMENT) {
        if (an->n_norm_shifts == 0) fputs("- none in the paired-read-normalised points\n", f);
        for (int i = 0; i < an->n_norm_shifts; i++) md_shift(f, sr, &an->norm_shifts[i], "normalised:");
    } else if (an->any_norm) {
        fputs("- normalised points not searched: some runs have no paired read\n", f);
    }
    fputc('\n', f);
}

/* The shift that starts at point i, if any. */
static const struct history_shift *shift_at(const struct history_shift *s, int n, int i) {
    for (int k = 0; k < n; k++)
        if (s[k].index == i) return &s[k];
    return NULL;
}

static void show_csv(const struct history_series *sr, const struct analysed *an, bool header) {
    FILE *f = stdout;
    if (header)
        fputs("row,machine,model,options,unit,run,utc,commit,dirty,point,median,min,max,reps,samples,"
              "disturbed,"
              "paired_read_gbs,normalised,shift_size,shift_confidence,normalised_shift_size,"
              "normalised_shift_confidence\n",
              f);
    for (int i = 0; i < sr->n; i++) {
        const struct history_point *p = &sr->points[i];
        fprintf(f, "%s,%s,", sr->key, sr->machine.key);
        csv_str(f, sr->model);
        fputc(',', f);
        csv_str(f, sr->options);
        fprintf(f, ",%s,%lld,%s,%s,%d,", sr->unit, p->run_id, p->utc, p->commit, p->dirty);
        double nums[] = {p->value, p->median, p->min, p->max};
        for (int k = 0; k < 4; k++) csv_num(f, nums[k]), fputc(',', f);
        fprintf(f, "%d,%d,%d,", p->reps, p->samples, p->disturbed);
        csv_num(f, p->paired_read_gbs);
        fputc(',', f);
        csv_num(f, an->norm[i]);
        const struct history_shift *s = shift_at(an->shifts, an->n_shifts, i);
        const struct history_shift *t = shift_at(an->norm_shifts, an->n_norm_shifts, i);
        fputc(',', f);
        if (s)
            fprintf(f, "%.6g,%.6g", s->size, s->confidence);
        else
            fputc(',', f);
        fputc(',', f);
        if (t)
            fprintf(f, "%.6g,%.6g", t->size, t->confidence);
        else
            fputc(',', f);
        fputc('\n', f);
    }
}

static cJSON *json_shifts(const struct history_series *sr, const struct history_shift *s, int n) {
    cJSON *arr = cJSON_CreateArray();
    for (int k = 0; k < n; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "index", s[k].index);
        cJSON_AddNumberToObject(o, "run", (double)sr->points[s[k].index].run_id);
        history_json_num(o, "size", s[k].size);
        history_json_num(o, "size_lo", s[k].size_lo);
        history_json_num(o, "size_hi", s[k].size_hi);
        history_json_num(o, "confidence", s[k].confidence);
        cJSON_AddStringToObject(o, "commit_before", sr->points[s[k].index - 1].commit);
        cJSON_AddStringToObject(o, "commit_after", sr->points[s[k].index].commit);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *json_series(const struct history_series *sr, const struct analysed *an) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "row", sr->key);
    cJSON *m = cJSON_AddObjectToObject(o, "machine");
    cJSON_AddStringToObject(m, "key", sr->machine.key);
    cJSON_AddStringToObject(m, "cpu", sr->machine.cpu);
    cJSON_AddStringToObject(m, "isa", sr->machine.isa);
    cJSON_AddNumberToObject(m, "threads", sr->machine.threads);
    cJSON_AddStringToObject(m, "topology", sr->machine.topology);
    cJSON_AddStringToObject(m, "kernel", sr->machine.kernel);
    cJSON_AddStringToObject(m, "mm_state", sr->machine.mm_state);
    cJSON_AddStringToObject(o, "hosts", sr->hosts);
    cJSON_AddStringToObject(o, "model", sr->model);
    cJSON_AddStringToObject(o, "options", sr->options);
    cJSON_AddStringToObject(o, "unit", sr->unit);
    cJSON *pts = cJSON_AddArrayToObject(o, "points");
    for (int i = 0; i < sr->n; i++) {
        const struct history_point *p = &sr->points[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "run", (double)p->run_id);
        cJSON_AddStringToObject(x, "utc", p->utc);
        cJSON_AddStringToObject(x, "commit", p->commit);
        cJSON_AddBoolToObject(x, "dirty", p->dirty);
        history_json_num(x, "point", p->value);
        history_json_num(x, "median", p->median);
        history_json_num(x, "min", p->min);
        history_json_num(x, "max", p->max);
        cJSON_AddNumberToObject(x, "reps", p->reps);
        cJSON_AddNumberToObject(x, "samples", p->samples);
        cJSON_AddNumberToObject(x, "disturbed", p->disturbed);
        history_json_num(x, "paired_read_gbs", p->paired_read_gbs);
        history_json_num(x, "normalised", an->norm[i]);
        cJSON_AddItemToArray(pts, x);
    }
    cJSON_AddItemToObject(o, "shifts", json_shifts(sr, an->shifts, an->n_shifts));
    cJSON_AddItemToObject(o, "normalised_shifts", json_shifts(sr, an->norm_shifts, an->n_norm_shifts));
    return o;
}

/* ---- plot ---- */

static int plot_series(const struct history_series *sr, const struct analysed *an, const char *out) {
    if (mkdir(out, 0777) != 0) {
        struct stat st;
        if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))
            return cli_usage_error("history plot: cannot make the folder '%s'", out);
    }
    char path[2200];
    snprintf(path, sizeof path, "%s/history.dat", out);
    FILE *f = fopen(path, "w");
    if (!f) return cli_fail("history plot: cannot write %s", path);
    /* index, raw point, normalised point (NaN where none), the raw segment's level */
    fputs("# index point normalised level utc commit\n", f);
    for (int i = 0, k = 0; i < sr->n; i++) {
        while (k < an->n_shifts && an->shifts[k].index <= i) k++;
        double level = k < an->n_shifts ? an->shifts[k].before : an->n_shifts ? an->shifts[k - 1].after : NAN;
        fprintf(f, "%d %.10g %.10g %.10g %s %s\n", i, sr->points[i].value, an->norm[i], level,
                sr->points[i].utc, sr->points[i].commit);
    }
    int bad = fclose(f) != 0;
    snprintf(path, sizeof path, "%s/history_vars.gp", out);
    f = fopen(path, "w");
    if (bad || !f) return cli_fail("history plot: cannot write %s", path);
    fputs("plot_title = ", f);
    char title[1024];
    snprintf(title, sizeof title, "%s on %s (%s, %s, %d threads), %s %s", sr->key, sr->machine.key,
             sr->machine.cpu, sr->machine.isa, sr->machine.threads, sr->model, sr->options);
    report_gp_str(f, title);
    fputs("\nunit = ", f);
    report_gp_str(f, sr->unit);
    fprintf(f, "\nn_points = %d\nhas_norm = %d\nn_shifts = %d\n", sr->n, an->any_norm, an->n_shifts);
    fprintf(f, "array shift_x[%d]\narray shift_label[%d]\n", an->n_shifts > 0 ? an->n_shifts : 1,
            an->n_shifts > 0 ? an->n_shifts : 1);
    for (int k = 0; k < an->n_shifts; k++) {
        char label[160];
        snprintf(label, sizeof label, "%+.1f %% (conf. %.3f) %s..%s", 100 * an->shifts[k].size,
                 an->shifts[k].confidence, sr->points[an->shifts[k].index - 1].commit,
                 sr->points[an->shifts[k].index].commit);
        fprintf(f, "shift_x[%d] = %.1f\nshift_label[%d] = ", k + 1, an->shifts[k].index - 0.5, k + 1);
        report_gp_str(f, label);
        fputc('\n', f);
    }
    if (fclose(f) != 0) return cli_fail("history plot: cannot write %s", path);
    struct fr_err err = {{0}};
    int rc = report_plots_draw_mode("--history", out, &err);
    if (rc == REPORT_PLOTS_NO_GNUPLOT)
        return cli_fail("history plot: %s (the data is in %s/history.dat)", err.msg, out);
    if (rc != REPORT_PLOTS_DRAWN) return cli_fail("history plot: %s", err.msg);
    fprintf(stderr, "forge-roofline: history plot in %s/history.png and .svg\n", out);
    return CLI_EXIT_OK;
}

/* ---- the subcommands ---- */

static int open_store(const struct hist_args *a, bool write, struct history_store **s) {
    struct history_open_opts o = {.write = write};
    struct fr_err err = {{0}};
    if (!write && strncmp(a->store, "postgres", 8) != 0) {
        struct stat st;
        if (stat(a->store, &st) != 0)
            return cli_usage_error("history: no store at %s (a full run or history import makes one)",
                                   a->store);
    }
    if (history_open(a->store, &o, s, &err) != 0) return cli_fail("history: %s", err.msg);
    return 0;
}

static int do_show(const struct hist_args *a, struct history_store *s, bool plot) {
    char key[HISTORY_KEY_LEN];
    if (!a->row)
        return cli_usage_error("history %s: needs a ROW (e.g. step@4096; try history --help)",
                               plot ? "plot" : "show");
    if (history_folder_row_key(a->row, key, sizeof key) != 0)
        return cli_usage_error("history: '%s' is not a row (step@C, block:NAME@C, sampler@V, "
                               "sampler:VARIANT@V, batch:B@C, ceiling:NAME)",
                               a->row);
    struct history_series *sr = NULL;
    int n = 0, rc = CLI_EXIT_OK;
    struct fr_err err = {{0}};
    if (history_read_series(s, key, &a->filter, &sr, &n, &err) != 0) return cli_fail("history: %s", err.msg);
    if (n == 0) {
        history_free_series(sr, n);
        return cli_usage_error(
            "history: no run in the store has row %s%s", key,
            a->filter.since || a->filter.machine || a->filter.model ? " (with these filters)" : "");
    }
    if (plot && n > 1) {
        fprintf(stderr, "forge-roofline: history plot: %d series have row %s:\n", n, key);
        for (int i = 0; i < n; i++)
            fprintf(stderr, "  --machine %s --model %s (%s, %d runs)\n", sr[i].machine.key, sr[i].model,
                    sr[i].options, sr[i].n);
        history_free_series(sr, n);
        return cli_usage_error("history plot: pick one with --machine and --model");
    }
    cJSON *json = cJSON_CreateArray();
    for (int i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        struct analysed an;
        if (analyse(&sr[i], &an, &err) != 0) {
            rc = cli_fail("history: %s", err.msg);
            break;
        }
        if (plot) {
            char out[2100], safe[HISTORY_KEY_LEN];
            snprintf(safe, sizeof safe, "%s", key);
            for (char *p = safe; *p; p++)
                if (*p == ':' || *p == '@' || *p == '/') *p = '-';
            if (a->out)
                snprintf(out, sizeof out, "%s", a->out);
            else if (strncmp(a->store, "postgres", 8) == 0)
                snprintf(out, sizeof out, "history-%s", safe);
            else {
                char copy[2048];
                snprintf(copy, sizeof copy, "%s", a->store);
                snprintf(out, sizeof out, "%s/history-%s", dirname(copy), safe);
            }
            rc = plot_series(&sr[i], &an, out);
        } else if (a->fmt == FMT_MD) {
            show_md(&sr[i], &an);
        } else if (a->fmt == FMT_CSV) {
            show_csv(&sr[i], &an, i == 0);
        } else {
            cJSON_AddItemToArray(json, json_series(&sr[i], &an));
        }
        free(an.norm);
    }
    history_free_series(sr, n);
    if (rc == CLI_EXIT_OK && !plot && a->fmt == FMT_JSON) return json_print(json);
    cJSON_Delete(json);
    return rc;
}

static int do_import(const struct hist_args *a) {
    if (a->n_dirs == 0) return cli_usage_error("history import: needs one or more run folders");
    struct history_store *s = NULL;
    int rc = open_store(a, true, &s);
    if (rc) return rc;
    int appended = 0, dups = 0, failed = 0;
    for (int i = 0; i < a->n_dirs; i++) {
        const char *dir = a->dirs[i];
        char probe[2100];
        snprintf(probe, sizeof probe, "%s/compare.md", dir);
        struct stat st;
        bool compare = stat(probe, &st) == 0;
        struct history_append_result res;
        struct fr_err err = {{0}};
        int bad = compare ? history_append_compare(s, dir, &res, &err)
                          : history_append_run(s, dir, NULL, &res, &err);
        if (bad) {
            fprintf(stderr, "forge-roofline: history import: %s\n", err.msg);
            failed++;
        } else if (res.duplicate) {
            printf("%s: already in the store (run %lld)\n", dir, res.id);
            dups++;
        } else if (compare) {
            printf("%s: compare %lld, %d rows\n", dir, res.id, res.rows);
            appended++;
        } else {
            printf("%s: run %lld, machine %s, %d rows, %s\n", dir, res.id, res.machine_key, res.rows,
                   res.has_samples ? "with its raw samples" : "no samples.csv: the rows' medians only");
            if (res.has_samples)
                printf("  %d samples%s\n", res.samples, res.unmatched_samples ? " (some name no row)" : "");
            appended++;
        }
    }
    history_close(s);
    printf("history import: %d appended, %d already there, %d failed\n", appended, dups, failed);
    return failed ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

int cmd_history(int argc, char **argv) {
    if (argc < 2)
        return cli_usage_error(
            "history: needs a command: list, show, plot, import, export (try history --help)");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    const char *cmd = argv[1];
    static const char *const cmds[] = {"list", "show", "plot", "import", "export"};
    bool known = false;
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) known = known || strcmp(cmd, cmds[i]) == 0;
    if (!known)
        return cli_usage_error("history: unknown command '%s' (list, show, plot, import, export)", cmd);
    char **dirs = calloc((size_t)argc, sizeof *dirs);
    if (!dirs) return cli_fail("history: out of memory");
    struct hist_args a = {.store = "results/history.sqlite", .dirs = dirs};
    int rc = parse(argc, argv, cmd, &a);
    if (rc) {
        free(dirs);
        return rc < 0 ? CLI_EXIT_OK : rc;
    }
    if (a.fmt_given && (strcmp(cmd, "import") == 0 || strcmp(cmd, "plot") == 0))
        rc = cli_usage_error("history %s: --format does not apply", cmd);
    else if (strcmp(cmd, "export") == 0 && !a.export_fmt)
        rc = cli_usage_error("history export: needs --format csv or jsonl");
    else if ((strcmp(cmd, "export") == 0 || strcmp(cmd, "import") == 0) &&
             (a.filter.since || a.filter.machine || a.filter.model))
        rc = cli_usage_error("history %s: --since, --machine and --model do not apply", cmd);
    if (rc) {
        free(dirs);
        return rc;
    }
    if (strcmp(cmd, "import") == 0) {
        rc = do_import(&a);
        free(dirs);
        return rc;
    }
    free(dirs);
    struct history_store *s = NULL;
    if ((rc = open_store(&a, false, &s)) != 0) return rc;
    struct fr_err err = {{0}};
    if (strcmp(cmd, "list") == 0) {
        struct list_ctx c = {a.fmt, 0, cJSON_CreateArray()};
        if (history_list_runs(s, &a.filter, list_one, &c, &err) != 0)
            rc = cli_fail("history: %s", err.msg);
        else if (a.fmt == FMT_JSON)
            rc = json_print(c.json), c.json = NULL;
        else if (c.n == 0 && a.fmt == FMT_MD)
            fputs("no runs in the store match\n", stdout);
        cJSON_Delete(c.json);
    } else if (strcmp(cmd, "export") == 0) {
        if (history_export(s, strcmp(a.export_fmt, "csv") == 0 ? HISTORY_EXPORT_CSV : HISTORY_EXPORT_JSONL,
                           stdout, &err) != 0)
            rc = cli_fail("history: %s", err.msg);
    } else {
        rc = do_show(&a, s, strcmp(cmd, "plot") == 0);
    }
    history_close(s);
    return rc;
}
