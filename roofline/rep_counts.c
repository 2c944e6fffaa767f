/* Per-repetition counting for the timing harness (see rep_counts.h). Checked in tests/test_counters.c: with
 * the fake source (a preemption or a migration on chosen repetitions marks exactly those and they leave the
 * median, a voluntary switch marks nothing; utilization and energy from known per-run values), and with
 * PAPI's software events and getrusage where this machine counts them. */
#include "roofline/rep_counts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool usable(const struct counters *c) {
    return c && c->available;
}

/* The steal clock now, or NaN where it is not read or the read fails. */
static double steal_now(struct rep_counts *rc) {
    double s = NAN;
    if (rc->steal && steal_read_s(rc->steal, &s, NULL) != 0) s = NAN;
    return s;
}

static void hook_begin(void *ctx, int rep) {
    (void)rep;
    struct rep_counts *rc = ctx;
    if (rc->before) rc->before(rc->before_ctx);
    rc->steal_begin_s = steal_now(rc); /* outermost: the steal of everything the counters see */
    if (usable(rc->team)) counters_start(rc->team);
    if (usable(rc->energy)) counters_start(rc->energy); /* innermost: the package energy of the region */
}

static bool hook_end(void *ctx, int rep, double wall_s) {
    struct rep_counts *rc = ctx;
    bool energy_ok = usable(rc->energy) && counters_stop(rc->energy) == 0;
    bool team_ok = usable(rc->team) && counters_stop(rc->team) == 0;
    double steal_end_s = steal_now(rc);
    if (rep < 0 || rep >= rc->max_reps) return false;
    if (rep + 1 > rc->n) rc->n = rep + 1;
    rc->wall_s[rep] = wall_s;
    rc->disturbed[rep] = rc->faulted[rep] = rc->switched[rep] = false;
    rc->cause[rep] = 0;
    rc->steal_s[rep] = steal_end_s - rc->steal_begin_s; /* NaN when either read failed */
    /* the share of the whole machine's CPU time the host took while the repetition ran */
    if (rc->steal && rc->steal_s[rep] > rc->steal_share * wall_s * rc->steal->cpus)
        rc->cause[rep] |= REP_CAUSE_STEAL;
    if (energy_ok) {
        rc->energy_j += counters_energy_j(rc->energy);
        rc->energy_reps++;
    }
    rc->disturbed[rep] = (rc->cause[rep] & REP_CAUSE_DISTURBING) != 0;
    if (!team_ok) return rc->disturbed[rep];
    struct counters *c = rc->team;
    rc->counted_reps++;
    rc->window_thread_s += c->window_thread_s;
    for (int e = 0; e < c->n_events; e++) {
        rc->sum[e] += (double)c->values[e];
        rc->sum_max[e] += (double)c->thread_max[e];
    }
    long long involuntary = counters_role_value(c, COUNTERS_ROLE_INVOLUNTARY_SWITCHES);
    rc->switched[rep] = counters_role_value(c, COUNTERS_ROLE_CONTEXT_SWITCHES) > 0 || involuntary > 0;
    /* A preemption disturbs when the thread lost more than preempt_share of its window: the VM's own tooling
     * and kernel threads take a few tens of microseconds from most 20-40 ms repetitions, which left too few
     * clean ones. Where that loss cannot be read, any involuntary switch disturbs; without the involuntary
     * count, a switch cannot be told from a wait, and each is taken as a preemption. */
    int beyond = counters_preempted_beyond(c, rc->preempt_share);
    bool preempted = beyond >= 0 ? beyond == 1 : involuntary >= 0 ? involuntary > 0 : rc->switched[rep];
    if (preempted) rc->cause[rep] |= REP_CAUSE_PREEMPTED;
    if (counters_role_value(c, COUNTERS_ROLE_MIGRATIONS) > 0) rc->cause[rep] |= REP_CAUSE_MIGRATED;
    rc->faulted[rep] = counters_role_value(c, COUNTERS_ROLE_PAGE_FAULTS) > 0 ||
                       counters_role_value(c, COUNTERS_ROLE_MAJOR_FAULTS) > 0;
    if (rc->faulted[rep]) rc->cause[rep] |= REP_CAUSE_FAULTED;
    rc->disturbed[rep] = (rc->cause[rep] & REP_CAUSE_DISTURBING) != 0;
    return rc->disturbed[rep];
}

int rep_counts_init(struct rep_counts *rc, struct counters *team, struct counters *energy, int max_reps,
                    struct fr_err *err) {
    *rc = (struct rep_counts){.team = team,
                              .energy = energy,
                              .max_reps = max_reps,
                              .steal_share = REP_COUNTS_STEAL_SHARE,
                              .preempt_share = REP_COUNTS_PREEMPT_SHARE,
                              .steal_begin_s = NAN};
    rc->wall_s = calloc((size_t)max_reps, sizeof *rc->wall_s);
    rc->cause = calloc((size_t)max_reps, sizeof *rc->cause);
    rc->steal_s = calloc((size_t)max_reps, sizeof *rc->steal_s);
    rc->disturbed = calloc((size_t)max_reps, sizeof *rc->disturbed);
    rc->faulted = calloc((size_t)max_reps, sizeof *rc->faulted);
    rc->switched = calloc((size_t)max_reps, sizeof *rc->switched);
    if (max_reps < 1 || !rc->wall_s || !rc->disturbed || !rc->faulted || !rc->switched || !rc->cause ||
        !rc->steal_s) {
        rep_counts_free(rc);
        return fr_err_set(err, "rep_counts: cannot hold %d repetitions", max_reps);
    }
    rc->hooks = (struct timing_hooks){hook_begin, hook_end, rc};
    return 0;
}

void rep_counts_reset(struct rep_counts *rc) {
    rc->n = rc->counted_reps = rc->energy_reps = 0;
    rc->energy_j = rc->window_thread_s = 0;
    memset(rc->sum, 0, sizeof rc->sum);
    memset(rc->sum_max, 0, sizeof rc->sum_max);
}

void rep_counts_free(struct rep_counts *rc) {
    free(rc->steal_s);
    free(rc->cause);
    free(rc->switched);
    free(rc->faulted);
    free(rc->disturbed);
    free(rc->wall_s);
    rc->wall_s = rc->steal_s = NULL, rc->disturbed = rc->faulted = rc->switched = NULL, rc->cause = NULL;
}

void rep_counts_mark_samples(const struct rep_counts *rc, struct sample_set *set, int first) {
    for (int i = 0; i < rc->n && first + i < set->n; i++)
        rep_counts_cause_text(rc->cause[i], set->s[first + i].cause, sizeof set->s[first + i].cause);
}

/* sum of the role's event over repetitions, or NaN when it is not counted */
static double role_sum(const struct rep_counts *rc, enum counters_role role) {
    int i = rc->team ? rc->team->role_index[role] : -1;
    return i >= 0 ? rc->sum[i] : NAN;
}

void rep_counts_summarize(const struct rep_counts *rc, struct rep_counts_summary *out) {
    *out = (struct rep_counts_summary){.reps = rc->n};
    out->counted = rc->n > 0 && rc->counted_reps == rc->n && usable(rc->team);
    out->utilization = out->ipc = out->energy_j = out->median_all_s = NAN;
    for (int e = 0; e < COUNTERS_MAX_EVENTS; e++) out->per_rep[e] = out->thread_max[e] = NAN;
    double steal = 0;
    int steal_read = 0;
    out->steal_s = NAN;
    for (int i = 0; i < rc->n; i++) {
        out->disturbed_reps += rc->disturbed[i];
        if (rc->disturbed[i]) out->disturbed_causes |= rc->cause[i] & REP_CAUSE_DISTURBING;
        out->faulted_reps += rc->faulted[i];
        out->switched_reps += rc->switched[i];
        out->steal_reps += (rc->cause[i] & REP_CAUSE_STEAL) != 0;
        if (isfinite(rc->steal_s[i])) steal += rc->steal_s[i], steal_read++;
    }
    if (steal_read == rc->n && rc->n > 0) out->steal_s = steal / rc->n;
    struct timing_stats all;
    if (rc->n > 0 && timing_stats_compute(rc->wall_s, rc->n, NULL, &all) == 0)
        out->median_all_s = all.median_s;
    if (rc->energy_reps == rc->n && rc->n > 0) out->energy_j = rc->energy_j / rc->n;
    if (!out->counted) return;
    const struct counters *c = rc->team;
    for (int e = 0; e < c->n_events; e++)
        if (c->events[e].counted) {
            out->per_rep[e] = rc->sum[e] / rc->n;
            out->thread_max[e] = rc->sum_max[e] / rc->n;
        }
    double task_ns = role_sum(rc, COUNTERS_ROLE_TASK_CLOCK_NS);
    if (rc->window_thread_s > 0) out->utilization = task_ns * 1e-9 / rc->window_thread_s;
    double cyc = role_sum(rc, COUNTERS_ROLE_CYCLES), ins = role_sum(rc, COUNTERS_ROLE_INSTRUCTIONS);
    if (cyc > 0) out->ipc = ins / cyc;
}

int rep_counts_cause_text(unsigned cause, char *buf, size_t len) {
    static const char *const words[] = {"preempted", "migrated", "steal", "faulted"};
    int used = 0;
    if (len) buf[0] = '\0';
    for (int b = 0; b < 4; b++)
        if (cause & (1u << b)) {
            int n = snprintf(buf + used, (size_t)used < len ? len - (size_t)used : 0, "%s%s", used ? "+" : "",
                             words[b]);
            used += n > 0 ? n : 0;
        }
    return used;
}

const char *rep_counts_rule(const struct counters *team) {
    if (!team || !team->available) return "not judged: no counters";
    bool inv = team->role_index[COUNTERS_ROLE_INVOLUNTARY_SWITCHES] >= 0,
         cs = team->role_index[COUNTERS_ROLE_CONTEXT_SWITCHES] >= 0,
         mig = team->role_index[COUNTERS_ROLE_MIGRATIONS] >= 0;
    bool tc = team->role_index[COUNTERS_ROLE_TASK_CLOCK_NS] >= 0;
    if (inv && tc && mig)
        return "a thread was preempted (involuntary switch) and lost over 1 % of its window (less its task "
               "clock; any preemption where unread), or migrated";
    if (inv && tc)
        return "a thread was preempted (involuntary switch) and lost over 1 % of its window (less its task "
               "clock; any preemption where unread); migrations are not counted";
    if (inv && mig) return "a thread was preempted (involuntary context switch) or migrated";
    if (inv) return "a thread was preempted (involuntary context switch); migrations are not counted";
    if (cs && mig)
        return "a thread was switched out or migrated (involuntary switches are not counted apart, so a "
               "wait at a barrier counts too)";
    if (cs)
        return "a thread was switched out (involuntary switches are not counted apart); migrations are not "
               "counted";
    if (mig) return "a thread was migrated; switches are not counted";
    return "not judged: no switch or migration event is counted";
}
