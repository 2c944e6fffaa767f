/* Prompt processing in the report (bench/report/report_prefill.h). */
#include "bench/report/report_prefill.h"

#include <math.h>
#include <string.h>

#include "bench/report/report_csv.h"

static bool is_total(const struct report_prefill *p) {
    return strcmp(p->block, "prefill") == 0;
}

const struct report_prefill *report_prefill_total(const struct run_report *r, long n, long depth) {
    for (int i = 0; i < r->n_prefill; i++)
        if (is_total(&r->prefill[i]) && r->prefill[i].prompt_len == n && r->prefill[i].depth == depth)
            return &r->prefill[i];
    return NULL;
}

int report_prefill_write_csv(const struct run_report *r, const char *dir, struct fr_err *err) {
    if (r->n_prefill == 0) return 0;
    return report_csv_write_table(dir, "prefill.csv", REPORT_TABLE_PREFILL, r->prefill, sizeof r->prefill[0],
                                  r->n_prefill, err);
}

/* "pp512" or "pp512 after 4096", llama-bench's name of the figure. */
static void pp_name(const struct report_prefill *p, char *buf, size_t len) {
    if (p->depth > 0)
        snprintf(buf, len, "pp%ld after %ld cached", p->prompt_len, p->depth);
    else
        snprintf(buf, len, "pp%ld", p->prompt_len);
}

/* The prefill's blocks measured above their roof, named with their bound: the "Accounting errors" finding
 * covers the decode blocks, and the prefill rows are not paired with a read, so a memory-bound one is held
 * against the run's DRAM roof while the DRAM read moves by up to 2x between minutes. */
static void above_roof_blocks(FILE *f, const struct run_report *r, const struct report_prefill *total) {
    int n = 0;
    for (int i = 0; i < r->n_prefill; i++) {
        const struct report_prefill *p = &r->prefill[i];
        if (is_total(p) || !p->above_roof || p->prompt_len != total->prompt_len || p->depth != total->depth)
            continue;
        char eff[REPORT_FMT_LEN];
        report_fmt_pct(p->efficiency, eff);
        fprintf(f, "%s`%s` at %s of its %s roof", n++ ? ", " : "; measured above their roof: ", p->block, eff,
                p->bound);
    }
    if (n)
        fputs(" (an accounting error, or, memory-bound and unpaired, a faster DRAM minute than the roof's)",
              f);
}

void report_prefill_finding(FILE *f, const struct run_report *r) {
    for (int i = 0; i < r->n_prefill; i++) {
        const struct report_prefill *p = &r->prefill[i];
        if (!is_total(p)) continue;
        char name[64], tps[REPORT_FMT_LEN], eff[REPORT_FMT_LEN], ttft[REPORT_FMT_LEN], pre[REPORT_FMT_LEN],
            smp[REPORT_FMT_LEN];
        pp_name(p, name, sizeof name);
        report_fmt_md(p->tokens_per_s, 1, 1, tps);
        report_fmt_pct(p->efficiency, eff);
        report_fmt_md(p->ttft_s, 1e3, 1, ttft);
        report_fmt_md(p->measured.median_s, 1e3, 1, pre);
        report_fmt_md(p->sample_s, 1e3, 3, smp);
        fprintf(
            f,
            "- Prompt processing: %s %s tokens/s (%s of its %s roof%s); time to first token %s ms (prefill "
            "%s ms, first draw %s ms)",
            name, tps, eff, p->bound, p->above_roof ? ", ABOVE IT: an accounting error" : "", ttft, pre, smp);
        above_roof_blocks(f, r, p);
        fputs(".\n", f);
    }
    if (r->n_prefill > 0) fputc('\n', f);
}

static void md_blocks(FILE *f, const struct run_report *r, const struct report_prefill *total) {
    fputs("| block | ms | share | GFLOP/s | FLOP/byte | roof ms | bound | % of roof |\n"
          "|---|--:|--:|--:|--:|--:|---|--:|\n",
          f);
    for (int i = 0; i < r->n_prefill; i++) {
        const struct report_prefill *p = &r->prefill[i];
        if (p->prompt_len != total->prompt_len || p->depth != total->depth) continue;
        char ms[REPORT_FMT_LEN], sh[REPORT_FMT_LEN], gf[REPORT_FMT_LEN], ai[REPORT_FMT_LEN],
            roof[REPORT_FMT_LEN], eff[REPORT_FMT_LEN];
        report_fmt_md(p->measured.median_s, 1e3, 2, ms);
        report_fmt_pct(p->share, sh);
        report_fmt_md(report_ratio(p->flops, p->measured.median_s), 1e-9, 1, gf);
        report_fmt_md(report_ratio(p->flops, p->bytes), 1, 1, ai);
        report_fmt_md(p->predicted_s, 1e3, 2, roof);
        report_fmt_pct(p->efficiency, eff);
        fprintf(f, "| %s%s%s | %s | %s | %s | %s | %s | %s | %s%s |\n", is_total(p) ? "**" : "",
                is_total(p) ? "whole prefill" : p->block, is_total(p) ? "**" : "", ms, sh, gf, ai, roof,
                p->bound, eff, p->above_roof ? " (ABOVE ROOF)" : "");
    }
    fputc('\n', f);
}

void report_prefill_write_md(FILE *f, const struct run_report *r) {
    if (r->n_prefill == 0) {
        if (r->prefill_note[0]) fprintf(f, "## Prompt processing\n\n%s.\n\n", r->prefill_note);
        return;
    }
    fputs(
        "## Prompt processing\n\n"
        "The prompt's tokens through every layer in one pass: the projections as GEMMs over all its rows "
        "(each matrix read once), causal attention by tiles, the KV cache written for every position; "
        "final_norm and the LM head for the last position only, as engines run it. Time to first token = "
        "the prefill + the first draw from its logits. Roofs: DRAM read and L2 read for the bytes, peak FMA "
        "for the FLOPs (the GEMMs work in f32 whatever the weights' format).\n\n",
        f);
    fputs(
        "| prompt | tokens/s | prefill ms | first draw ms | time to first token ms | roof ms | bound | % of "
        "roof |\n|---|--:|--:|--:|--:|--:|---|--:|\n",
        f);
    for (int i = 0; i < r->n_prefill; i++) {
        const struct report_prefill *p = &r->prefill[i];
        if (!is_total(p)) continue;
        char name[64], tps[REPORT_FMT_LEN], pre[REPORT_FMT_LEN], smp[REPORT_FMT_LEN], tt[REPORT_FMT_LEN],
            roof[REPORT_FMT_LEN], eff[REPORT_FMT_LEN];
        pp_name(p, name, sizeof name);
        report_fmt_md(p->tokens_per_s, 1, 1, tps);
        report_fmt_md(p->measured.median_s, 1e3, 1, pre);
        report_fmt_md(p->sample_s, 1e3, 3, smp);
        report_fmt_md(p->ttft_s, 1e3, 1, tt);
        report_fmt_md(p->predicted_s, 1e3, 1, roof);
        report_fmt_pct(p->efficiency, eff);
        fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name, tps, pre, smp, tt, roof, p->bound,
                eff);
    }
    fputc('\n', f);
    for (int i = 0; i < r->n_prefill; i++) {
        const struct report_prefill *p = &r->prefill[i];
        if (!is_total(p)) continue;
        char name[64];
        pp_name(p, name, sizeof name);
        fprintf(f, "### %s, block by block\n\n", name);
        md_blocks(f, r, p);
    }
    if (r->prefill_note[0]) fprintf(f, "Repetitions: %s.\n\n", r->prefill_note);
}

int report_prefill_write_plot_inputs(const struct run_report *r, const char *dir, FILE *vars,
                                     struct fr_err *err) {
    FILE *f = report_file_open(dir, "plot_prefill.dat", err);
    if (!f) return -1;
    fputs("# intensity_flop_per_byte measured_gflop_per_s whole_prefill label\n", f);
    int n = 0;
    long first = r->n_prefill > 0 ? r->prefill[0].prompt_len : 0; /* one prompt length's points: the first */
    for (int i = 0; i < r->n_prefill; i++) {
        const struct report_prefill *p = &r->prefill[i];
        double ai = report_ratio(p->flops, p->bytes), gf = report_ratio(p->flops, p->measured.median_s) / 1e9;
        /* the blocks under 1 % of the prefill would only crowd the plot; prefill.csv has them */
        if (p->prompt_len != first || !(ai > 0) || !(gf > 0) || !isfinite(gf) ||
            (!is_total(p) && p->share < 0.01))
            continue;
        fprintf(f, "%.9g %.9g %d \"%s\"\n", ai, gf, is_total(p), is_total(p) ? "prefill" : p->block);
        n++;
    }
    fprintf(vars, "n_prefill_pts = %d\nprefill_len = %ld\n", n, first);
    return report_file_close(f, dir, "plot_prefill.dat", err);
}
