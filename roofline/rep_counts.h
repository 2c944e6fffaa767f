/* Counters around every timed repetition, as hooks of the timing harness (struct timing_hooks): the team's
 * events and the energy events are started just before the clock is read and stopped just after, so the
 * counting itself (a parallel region each way when the team has more than one thread) stays outside the
 * timed window. Each repetition is judged: disturbed when any thread was preempted (an involuntary context
 * switch: another task took its CPU) and lost more than preempt_share of its window to it (where the task
 * clock tells; counters_preempted_beyond) or migrated during it, or when the hypervisor stole more than
 * steal_share of the machine's CPU time meanwhile (roofline/steal.h, when a steal clock is set), faulted when
 * it took page faults; each repetition keeps its causes (enum rep_cause) for the samples; the harness
 * leaves disturbed ones out of the statistics. A voluntary switch (a thread of the team sleeping at a
 * barrier, waiting for its own team) does not disturb. Where the involuntary switches are not counted, any
 * context switch is taken as a preemption, and the rule says so. From the sums come the utilization
 * (task-clock / (wall x threads), the wall being each thread's counted window), IPC and energy. Nothing is
 * derived from an event that was not counted: the figure stays NaN. */
#ifndef FR_REP_COUNTS_H
#define FR_REP_COUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include "roofline/counters.h"
#include "roofline/steal.h"
#include "roofline/timing.h"

/* Why a repetition is marked, one bit each; every one but REP_CAUSE_FAULTED disturbs it.
 * rep_counts_cause_text writes them as the words of samples.csv's cause column, '+'-joined. */
enum rep_cause {
    REP_CAUSE_PREEMPTED = 1u << 0, /* a thread switched out while runnable (or any switch, see the rule) */
    REP_CAUSE_MIGRATED = 1u << 1,  /* a thread moved to another CPU */
    REP_CAUSE_STEAL = 1u << 2,     /* the hypervisor took more than steal_share of the machine's CPU time */
    REP_CAUSE_FAULTED = 1u << 3,   /* page faults: not a steady-state figure, but not disturbed */
};
#define REP_CAUSE_DISTURBING     (REP_CAUSE_PREEMPTED | REP_CAUSE_MIGRATED | REP_CAUSE_STEAL)
#define REP_COUNTS_STEAL_SHARE   0.01 /* the default: 1 % of the repetition's wall time x CPUs */
#define REP_COUNTS_PREEMPT_SHARE 0.01 /* a preempted thread disturbs past 1 % of its window lost */

struct rep_counts {
    struct counters *team;     /* NULL or unavailable: nothing is counted */
    struct counters *energy;   /* NULL or unavailable: no energy */
    void (*before)(void *ctx); /* untimed work before counting starts (e.g. evicting the caches); NULL */
    void *before_ctx;
    int max_reps;
    int n;                     /* repetitions recorded */
    double *wall_s;            /* [max_reps] timed wall time of each repetition */
    bool *disturbed, *faulted; /* [max_reps] */
    bool *switched;            /* [max_reps] any context switch, voluntary ones included */
    unsigned *cause;           /* [max_reps] enum rep_cause bits of each repetition */
    double *steal_s;           /* [max_reps] machine-wide steal during it (NaN: not read) */
    struct steal_clock *steal; /* NULL: steal is not read (set after init) */
    double steal_share;        /* steal over wall x CPUs above this disturbs (REP_COUNTS_STEAL_SHARE) */
    double preempt_share;      /* a preempted thread's lost window share above this disturbs */
    double steal_begin_s;      /* the steal clock at the repetition's begin (NaN: the read failed) */
    double sum[COUNTERS_MAX_EVENTS],
        sum_max[COUNTERS_MAX_EVENTS]; /* over repetitions: team sum, thread max */
    double energy_j;                  /* over repetitions */
    double window_thread_s;           /* over repetitions: the threads' counted windows, summed */
    int counted_reps, energy_reps;
    struct timing_hooks hooks; /* pass &hooks in struct timing_opts */
};

/* What the counted repetitions say; NaN where the events behind a figure were not counted. */
struct rep_counts_summary {
    bool counted;                        /* every timed repetition was counted */
    int reps;                            /* timed repetitions */
    double per_rep[COUNTERS_MAX_EVENTS]; /* mean per repetition of the sum over threads (by events[] index) */
    double thread_max[COUNTERS_MAX_EVENTS]; /* mean per repetition of the largest single thread */
    double utilization; /* task-clock over the threads' counted windows, each thread from its start to its
                         * stop (about wall x threads: the timed window plus the start and stop regions) */
    double ipc;         /* instructions / cycles */
    double energy_j;    /* mean joules per repetition */
    int disturbed_reps; /* a thread preempted or migrated (see rep_counts_rule) */
    unsigned disturbed_causes; /* enum rep_cause bits of the disturbed repetitions, together */
    int switched_reps;         /* any context switch, voluntary waits included (perf::CONTEXT-SWITCHES) */
    int faulted_reps;          /* page faults during the repetition */
    int steal_reps;            /* the hypervisor stole more than steal_share of the machine during it */
    double steal_s;            /* mean machine-wide steal per repetition (NaN: steal not read) */
    double median_all_s;       /* median wall time over every repetition, disturbed ones included */
};

/* Sets up the hooks for at most max_reps timed repetitions. team and energy may be NULL. Returns -1 on
 * allocation failure (err), else 0. Pair with rep_counts_free. */
int rep_counts_init(struct rep_counts *rc, struct counters *team, struct counters *energy, int max_reps,
                    struct fr_err *err);
void rep_counts_free(struct rep_counts *rc);
/* Forgets the recorded repetitions (for the next measurement with the same counters). */
void rep_counts_reset(struct rep_counts *rc);
void rep_counts_summarize(const struct rep_counts *rc, struct rep_counts_summary *out);
/* The words of cause's bits, '+'-joined in the order of enum rep_cause ("" for none): preempted, migrated,
 * steal, faulted. Returns what snprintf returns. */
int rep_counts_cause_text(unsigned cause, char *buf, size_t len);
/* Writes each recorded repetition's causes (rep_counts_cause_text's words; "" for none) into the
 * samples set->s[first + rep] (the samples the harness appended for this measurement). */
void rep_counts_mark_samples(const struct rep_counts *rc, struct sample_set *set, int first);
/* What marks a repetition disturbed with these counters, in words (e.g. "a thread preempted (involuntary
 * context switch) or migrated"); names what is not counted. team may be NULL. */
const char *rep_counts_rule(const struct counters *team);

#endif
