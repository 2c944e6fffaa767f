/* Markdown of the counters (see report_counted.h). Values that were not counted print "n/a", never a number.
 * Checked in tests/test_report_write.c (the lines and the section on a fixture with counters). */
#include "bench/report/report_counted.h"

#include <math.h>
#include <string.h>

static void md_event_list(FILE *f, const char *what, const struct report_counters *c) {
    if (!c->available) {
        fprintf(f, "%s: unavailable (%s)", what, c->reason[0] ? c->reason : "no reason given");
        return;
    }
    fprintf(f, "%s", what);
    if (c->threads > 0) fprintf(f, " (every thread of %d counted, summed)", c->threads);
    fputc(':', f);
    /* the hardware events' shared reason is said once, in the note after the list */
    for (int i = 0; i < c->n_events; i++) {
        const struct report_event *e = &c->events[i];
        fprintf(f, "%s %s ", i ? ";" : "", e->name);
        if (e->available)
            fprintf(f, "counted%s%s%s", e->source[0] ? " (" : "", e->source, e->source[0] ? ")" : "");
        else if (c->hardware[0] && strncmp(e->name, "PAPI_", 5) == 0)
            fprintf(f, "unavailable (no PMU, below)");
        else
            fprintf(f, "unavailable — %s", e->reason);
    }
    if (c->hardware[0]) fprintf(f, ". Hardware events: %s", c->hardware);
}

int report_counted_write_csv(const struct run_report *r, const char *dir, struct fr_err *err) {
    FILE *f = report_file_open(dir, "counters.csv", err);
    if (!f) return -1;
    fputs("set,event,counted,source,reason\n", f);
    const struct report_counters *sets[2] = {&r->counters, &r->energy};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < sets[s]->n_events; i++) {
            const struct report_event *e = &sets[s]->events[i];
            fprintf(f, "%s,%s,%d,%s,\"", s ? "energy" : "team", e->name, e->available, e->source);
            for (const char *q = e->available ? "" : e->reason; *q; q++) {
                if (*q == '"') fputc('"', f); /* CSV doubles a quote inside a quoted field */
                fputc(*q, f);
            }
            fputs("\"\n", f);
        }
    return report_file_close(f, dir, "counters.csv", err);
}

void report_md_counters(FILE *f, const struct run_report *r) {
    md_event_list(f, "Counters", &r->counters);
    fputs(r->counters.available ? ".\n\n" : "; figures are wall time only.\n\n", f);
    if (r->counters.calibration[0])
        fprintf(f, "Counter-derived DRAM bytes (calibration): %s.\n\n", r->counters.calibration);
    if (r->energy.n_events == 0 && !r->energy.reason[0]) return; /* a run that did not try */
    md_event_list(f, "Energy", &r->energy);
    fputs(".\n\n", f);
}

static void md_counted_head(FILE *f, const char *first, const struct report_counters *c, bool energy) {
    fprintf(
        f,
        "| %s | utilization | disturbed reps | switched reps | faulted reps | steal reps | steal ms/rep | "
        "median µs | median µs, all reps | IPC |%s",
        first, energy ? " J/step | J/token |" : "");
    for (int e = 0; e < c->n_events; e++)
        if (c->events[e].available) fprintf(f, " %s |", c->events[e].name);
    fprintf(f, "\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|%s", energy ? "--:|--:|" : "");
    for (int e = 0; e < c->n_events; e++)
        if (c->events[e].available) fputs("--:|", f);
    fputc('\n', f);
}

/* One row's disturbed repetitions: their share of the row's repetitions, and the steal among them. */
struct md_disturbed {
    int disturbed, steal_reps;
    double steal_s;
};

static void md_counted_row(FILE *f, const struct report_counters *c, double util, struct md_disturbed d,
                           const struct timing_stats *t, int switched, int faulted, double med,
                           double med_all, double ipc, const double *ej, const double *values) {
    int disturbed = d.disturbed;
    char u[REPORT_FMT_LEN], m[REPORT_FMT_LEN], ma[REPORT_FMT_LEN], ip[REPORT_FMT_LEN];
    report_fmt_pct(util, u);
    report_fmt_md(med, 1e6, 1, m);
    report_fmt_md(med_all, 1e6, 1, ma);
    report_fmt_md(ipc, 1, 2, ip);
    /* timing_stats_compute keeps every repetition when too few are clean */
    bool all_kept = disturbed > 0 && t->excluded_reps == 0;
    char kept[64] = "";
    if (all_kept)
        snprintf(kept, sizeof kept, " (all kept: %s)",
                 disturbed == t->reps ? "no clean one" : "fewer than " TIMING_MIN_CLEAN_STR " clean");
    int all = t->reps + t->excluded_reps;
    char share[32] = "";
    if (all > 0 && disturbed > 0) snprintf(share, sizeof share, " (%.0f %%)", 100.0 * disturbed / all);
    char st[REPORT_FMT_LEN];
    report_fmt_md(d.steal_s, 1e3, 1, st);
    fprintf(f, " %s | %d of %d%s%s | %d | %d | %d | %s | %s | %s | %s |", u, disturbed, all, share, kept,
            switched, faulted, d.steal_reps, st, m, ma, ip);
    if (ej) {
        char j[2][REPORT_FMT_LEN];
        report_fmt_md(ej[0], 1, 3, j[0]);
        report_fmt_md(ej[1], 1, 3, j[1]);
        fprintf(f, " %s | %s |", j[0], j[1]);
    }
    for (int e = 0; e < c->n_events; e++)
        if (c->events[e].available) {
            char v[REPORT_FMT_LEN];
            report_fmt_md(values[e], 1, 1, v);
            fprintf(f, " %s |", v);
        }
    fputc('\n', f);
}

void report_md_counted(FILE *f, const struct run_report *r) {
    const struct report_counters *c = &r->counters;
    fputs("## Counters per block and step\n\n", f);
    if (!c->available) {
        fprintf(f, "Not counted: %s.\n\n", c->reason[0] ? c->reason : "no reason given");
        return;
    }
    md_counted_head(f, "block", c, false);
    for (int i = 0; i < r->n_blocks; i++) {
        const struct report_block *b = &r->blocks[i];
        fprintf(f, "| %s |", b->name);
        md_counted_row(f, c, b->utilization,
                       (struct md_disturbed){b->disturbed_reps, b->steal_reps, b->steal_s}, &b->measured,
                       b->switched_reps, b->faulted_reps, b->measured.median_s, b->measured_all_s, b->ipc,
                       NULL, b->counters);
    }
    fputc('\n', f);
    md_counted_head(f, "context", c, true);
    for (int i = 0; i < r->n_steps; i++) {
        const struct report_step *s = &r->steps[i];
        double ej[2] = {s->energy_j, s->energy_j_per_token};
        fprintf(f, "| %ld |", s->context);
        md_counted_row(f, c, s->utilization,
                       (struct md_disturbed){s->disturbed_reps, s->steal_reps, s->steal_s}, &s->measured,
                       s->switched_reps, s->faulted_reps, s->measured.median_s, s->measured_all_s, s->ipc, ej,
                       s->counters);
    }
    fprintf(f,
            "\nCounts are per step (a block's calls of one step), summed over the team's threads; "
            "utilization = task-clock / (wall x threads). Disturbed = preempted, migrated or stolen from: a "
            "repetition is "
            "disturbed when %s during it: it is left out of the median (\"median µs\"; \"all reps\" keeps "
            "it); when every repetition is disturbed, all are kept and the row is flagged noisy. A switched "
            "repetition had any context switch, voluntary ones included: a thread of the team sleeping at a "
            "barrier while it waits for its own team switches voluntarily, which disturbs nothing. ",
            r->counters.disturbed_rule[0] ? r->counters.disturbed_rule
                                          : "any thread was switched out or migrated");
    fputs("Utilization is over each thread's counted window, which adds the start and stop regions to the "
          "timed one: on a loaded machine they wait for descheduled threads and dominate short blocks. A "
          "faulted repetition took page faults (first touch or reclaim), so it is not a steady-state figure. "
          "Energy: ",
          f);
    if (r->energy.available)
        fputs("package and DRAM joules where counted (RAPL / powercap).\n\n", f);
    else
        fprintf(f, "unavailable (%s).\n\n", r->energy.reason[0] ? r->energy.reason : "not tried");
}
