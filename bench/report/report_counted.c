/* Markdown of the counters (see report_counted.h). Values that were not counted print "n/a", never a number.
 * Checked in tests/test_report_write.c (the lines and the section on a fixture with counters). */
#include "bench/report/report_counted.h"

#include <math.h>
#include <string.h>

/* The alternates an event's reason names ("...; also tried X: the same reason"), as ", X": the reason is
 * then said once for all of them. Returns the length of the reason before its first "; also tried " (all of
 * it when the alternates' reasons differ, which then stay in it verbatim). */
static size_t event_reason_base(const char *reason, char *alts, size_t len) {
    static const char also[] = "; also tried ", same[] = ": the same reason";
    const char *cut = strstr(reason, also);
    alts[0] = '\0';
    if (!cut) return strlen(reason);
    size_t used = 0;
    const char *p = cut;
    while (strncmp(p, also, sizeof also - 1) == 0) {
        const char *name = p + sizeof also - 1, *end = strstr(name, same), *semi = strchr(name, ';');
        if (!end || (semi && semi < end)) break; /* an alternate with a reason of its own */
        if (used < len) used += (size_t)snprintf(alts + used, len - used, ", %.*s", (int)(end - name), name);
        p = end + sizeof same - 1;
        if (*p == '\0') break;
    }
    if (*p != '\0') { /* not only alternates for the same reason: the reason stays whole */
        alts[0] = '\0';
        return strlen(reason);
    }
    return (size_t)(cut - reason);
}

/* "What (every thread of N counted, summed): counted A, B; unavailable (reason): C, D (also tried E)": each
 * reason said once, for every event it stops. */
static void md_event_list(FILE *f, const char *what, const struct report_counters *c) {
    if (!c->available) {
        fprintf(f, "%s: unavailable (%s)", what, c->reason[0] ? c->reason : "no reason given");
        return;
    }
    fprintf(f, "%s", what);
    if (c->threads > 0) fprintf(f, " (every thread of %d counted, summed)", c->threads);
    fputs(": counted", f);
    for (int i = 0, n = 0; i < c->n_events; i++)
        if (c->events[i].available) /* with the source that counted it, where known */
            fprintf(f, "%s %s%s%s%s", n++ ? "," : "", c->events[i].name, c->events[i].source[0] ? " (" : "",
                    c->events[i].source, c->events[i].source[0] ? ")" : "");
    bool said[REPORT_MAX_EVENTS] = {false};
    char alts[REPORT_REASON_LEN], other[REPORT_REASON_LEN];
    for (int i = 0; i < c->n_events; i++) {
        if (c->events[i].available || said[i]) continue;
        size_t len = event_reason_base(c->events[i].reason, alts, sizeof alts);
        fprintf(f, "; unavailable (%.*s):", (int)len, c->events[i].reason);
        for (int k = i, n = 0; k < c->n_events; k++) {
            if (c->events[k].available || said[k]) continue;
            size_t lk = event_reason_base(c->events[k].reason, other, sizeof other);
            if (lk != len || strncmp(c->events[k].reason, c->events[i].reason, len) != 0) continue;
            said[k] = true;
            fprintf(f, "%s %s%s%s%s", n++ ? "," : "", c->events[k].name, other[0] ? " (also tried " : "",
                    other[0] ? other + 2 : "", other[0] ? ")" : "");
        }
    }
    if (c->hardware[0]) fprintf(f, "; %s", c->hardware); /* no PMU: said once for the run */
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
    fputs("- ", f);
    md_event_list(f, "Counters", &r->counters);
    fputs(r->counters.available ? ".\n" : "; figures are wall time only.\n", f);
    if (r->counters.calibration[0])
        fprintf(f, "- Counter-derived DRAM bytes (calibration): %s.\n", r->counters.calibration);
    if (r->energy.n_events > 0 || r->energy.reason[0]) { /* else the run did not try */
        fputs("- ", f);
        md_event_list(f, "Energy", &r->energy);
        fputs(".\n", f);
    }
    fputc('\n', f);
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

/* One row's disturbed repetitions and the host's steal among them. */
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
    char share[32] = "", st[REPORT_FMT_LEN];
    if (all > 0 && disturbed > 0) snprintf(share, sizeof share, " (%.0f %%)", 100.0 * disturbed / all);
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
    if (!c->available) return; /* report_md_counters said why */
    fputs("### Counters per step\n\n", f);
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
    fprintf(
        f,
        "\nCounts are per step, summed over the team's threads (each block's: blocks.csv); utilization = "
        "task-clock / (wall x threads), over each thread's counted window, which adds the start and stop "
        "regions to the timed one (on a loaded machine they wait for descheduled threads). Disturbed = %s "
        "during the repetition: it is left out of the median (\"all reps\" keeps it), unless too few stay "
        "clean. Switched = any context switch, voluntary ones too (a thread sleeping at its team's barrier), "
        "which disturbs nothing. Faulted = took page faults (first touch or reclaim).%s\n\n",
        r->counters.disturbed_rule[0] ? r->counters.disturbed_rule
                                      : "any thread was switched out or migrated",
        r->energy.available ? " Energy: package and DRAM joules where counted (RAPL / powercap)." : "");
}
