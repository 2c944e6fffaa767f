/* Counters around measured regions, from a pluggable event source: PAPI, or a fake source for tests.
 * Each requested event is tried; one that cannot be counted is reported once with the source's own reason
 * (PAPI_strerror for PAPI) and the rest go on. When no event can be counted, available is false and reason
 * says why; callers then go on with wall time. Nothing is ever estimated in a counter's place.
 * Every thread of the OpenMP team is counted: PAPI counts the calling thread only, so each team thread opens
 * its own event set (PAPI_thread_init with pthread_self) and starts and stops it itself, in a parallel region
 * of the same team size as the measured region. After a stop, values[] holds the sum over the team and
 * thread_max[] the largest single thread. rusage::INVOLUNTARY-SWITCHES (getrusage(RUSAGE_THREAD).ru_nivcsw,
 * read in each thread beside its event set) is counted by this module itself whenever the source does not,
 * so on Linux it is counted even where PAPI counts nothing: it is the count that says another task took the
 * CPU. Energy (RAPL / powercap) is package-wide: its own set, counted by the calling thread only. The default
 * events and what each measures: docs/counters.md. */
#ifndef FR_COUNTERS_H
#define FR_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/fr_err.h"

struct cJSON;

#define COUNTERS_MAX_EVENTS  12
#define COUNTERS_MAX_THREADS 256
#define COUNTERS_NAME_LEN    64
#define COUNTERS_REASON_LEN  256
#define COUNTERS_UNITS_LEN   16

/* The event this module counts itself (getrusage), when the source does not: the calling thread's involuntary
 * context switches (preemptions). */
#define COUNTERS_EVENT_INVOLUNTARY "rusage::INVOLUNTARY-SWITCHES"

/* An event source. open, add, start, stop and close of one handle are all called in the thread the handle
 * counts (open in thread `thread` of the team). Each function that can fail says why in `why` (one line) and
 * returns non-zero. add fills units (e.g. "nJ", "" when the source gives none). */
struct counters_source {
    const char *name;
    int (*open)(const void *config, int thread, void **handle, struct fr_err *why);
    int (*add)(void *handle, const char *event, char units[COUNTERS_UNITS_LEN], struct fr_err *why);
    int (*start)(void *handle, struct fr_err *why);
    int (*stop)(void *handle, long long *values, struct fr_err *why); /* values in the order added */
    void (*close)(void *handle);
    /* Which source counted the event added last, for a source that puts several behind one (NULL: this
     * source's name). */
    const char *(*origin)(void *handle);
};

const struct counters_source *counters_source_papi(void); /* config: NULL */

/* A gain of 1 more of one event, in one thread, on chosen runs: e.g. a switch on chosen repetitions. */
struct counters_fake_bump {
    const char *event; /* NULL ends a list of bumps */
    const long *runs;  /* terminated by -1 */
    int thread;
};

/* The fake source: accepts the named events and makes each gain its per_run value per start/stop, in every
 * thread. Runs are counted per handle from 0, counters_open's probe being run 0. Each of bumps (when
 * non-NULL; a list ended by a NULL event) gains 1 more of its event in its thread on each of its runs: a
 * context switch, a preemption or a migration on chosen repetitions. The fake offers
 * COUNTERS_EVENT_INVOLUNTARY like any other event when it is named in events (so tests choose its values);
 * when it is not, this module counts it from getrusage, as with PAPI. */
struct counters_fake_config {
    const char *refuse_all;    /* non-NULL: opening fails with this reason */
    const char *const *events; /* accepted names, NULL-terminated; others: "event not offered by fake" */
    const long long *per_run;  /* one value per accepted name */
    const char *const *units;  /* NULL, or one unit string per accepted name (e.g. "nJ") */
    const char *refuse_start;  /* non-NULL: starting fails with this reason */
    const struct counters_fake_bump *bumps;
};
const struct counters_source *counters_source_fake(void); /* config: struct counters_fake_config */

/* What an event measures, for the figures derived from it (utilization, disturbed repetitions, IPC, DRAM
 * bytes, energy); recognised by name. */
enum counters_role {
    COUNTERS_ROLE_OTHER,
    COUNTERS_ROLE_TASK_CLOCK_NS, /* perf::TASK-CLOCK: nanoseconds on a CPU */
    COUNTERS_ROLE_CONTEXT_SWITCHES,
    COUNTERS_ROLE_MIGRATIONS,
    COUNTERS_ROLE_PAGE_FAULTS,
    COUNTERS_ROLE_MAJOR_FAULTS,
    COUNTERS_ROLE_CYCLES,
    COUNTERS_ROLE_INSTRUCTIONS,
    COUNTERS_ROLE_LLC_MISSES,
    COUNTERS_ROLE_FP_OPS,
    COUNTERS_ROLE_ENERGY,               /* joules = value x joules_per_unit */
    COUNTERS_ROLE_INVOLUNTARY_SWITCHES, /* switched out while runnable: preempted */
    COUNTERS_ROLE_COUNT
};

struct counters_event {
    char name[COUNTERS_NAME_LEN];
    bool counted;
    char reason[COUNTERS_REASON_LEN]; /* why it is not counted */
    bool llc_misses;                  /* counts last-level cache misses (used by the calibration) */
    enum counters_role role;
    char units[COUNTERS_UNITS_LEN]; /* as the source names them; "" when none */
    double joules_per_unit;         /* energy events: from units (nJ, uJ, mJ, J); NaN otherwise */
    bool by_rusage;                 /* counted by this module (getrusage), not by the source */
    char
        source[COUNTERS_NAME_LEN]; /* what counted it: "papi", "perf_event", "getrusage"; "" if not counted */
};

struct counters {
    const struct counters_source *src;
    const void *open_config;             /* the source's configuration */
    int n_threads;                       /* team size: one handle per OpenMP thread */
    void *handles[COUNTERS_MAX_THREADS]; /* handle of thread t, opened and used in thread t */
    bool source_on;                      /* the source opened and counts at least one event */
    int n_rusage;                        /* counted events read from getrusage */
    bool available;                      /* at least one event is counted */
    /* When no hardware event (cycles, instructions, LLC misses, FP ops) asked for is counted: that no PMU
     * counts here and the first one's reason, said once for the run; "" otherwise. */
    char hardware_note[COUNTERS_REASON_LEN];
    char reason[COUNTERS_REASON_LEN]; /* why not, or which events are missing; "" when all are counted */
    int n_events;                     /* events asked (defaults or --events) */
    struct counters_event events[COUNTERS_MAX_EVENTS];
    int n_counted;
    int counted_index[COUNTERS_MAX_EVENTS];    /* events[] index of the i-th counted event */
    int role_index[COUNTERS_ROLE_COUNT];       /* events[] index of the counted event of each role, or -1 */
    long long values[COUNTERS_MAX_EVENTS];     /* per events[] index, after counters_stop: sum over threads */
    long long thread_max[COUNTERS_MAX_EVENTS]; /* per events[] index: the largest single thread */
    long long (*per_thread)[COUNTERS_MAX_EVENTS]; /* [n_threads][event]: each thread's own value */
    double *started_s;                            /* [n_threads] monotonic time each thread's set started */
    long long *rusage_start;                      /* [n_threads] getrusage count at each thread's start */
    double *window_s;       /* [n_threads] after a stop: each thread's counted window, start to stop */
    double window_thread_s; /* after a stop: sum over threads of each one's counted window, start to stop */
    bool running;
};

/* Checks a comma-separated event list without opening anything: non-zero with err naming --events when it is
 * malformed (empty name, name too long, more than COUNTERS_MAX_EVENTS). NULL is the default list. */
int counters_check_events(const char *events_csv, struct fr_err *err);

/* Opens the source in every thread of a team of `threads` threads (the run's) and adds the events of the
 * comma-separated list, or the defaults when events_csv is NULL: PAPI_TOT_CYC, PAPI_TOT_INS, an LLC-miss
 * event (PAPI_L3_TCM, else PAPI_L3_DCM, else perf::LLC-LOAD-MISSES), PAPI_SP_OPS (else PAPI_FP_OPS), then
 * perf::TASK-CLOCK, perf::CONTEXT-SWITCHES, perf::CPU-MIGRATIONS, perf::PAGE-FAULTS, perf::MAJOR-FAULTS,
 * COUNTERS_EVENT_INVOLUNTARY. A start/stop probe runs once so a source that accepts events but cannot start
 * them is known as unavailable here (its events then say why, and the getrusage count stays). Returns
 * non-zero only for a malformed list or an allocation failure (err filled); an unavailable source is not an
 * error. Always pair with counters_close, called in the same team. */
int counters_open(struct counters *c, const struct counters_source *src, const void *config,
                  const char *events_csv, int threads, struct fr_err *err);
/* The energy set, counted by the calling thread alone (energy is package-wide): package energy
 * (rapl:::PACKAGE_ENERGY:PACKAGE0, else powercap:::ENERGY_UJ:ZONE0) and DRAM energy
 * (rapl:::DRAM_ENERGY:PACKAGE0, else powercap:::ENERGY_UJ:ZONE0_SUBZONE0). Same contract as counters_open. */
int counters_open_energy(struct counters *c, const struct counters_source *src, const void *config,
                         struct fr_err *err);
/* Start and stop around a region, in every thread of the team (a parallel region each when the team has more
 * than one thread; call them outside any parallel region). Return 0 when the values were counted; non-zero
 * when not (c->available and c->reason say why). */
int counters_start(struct counters *c);
int counters_stop(struct counters *c);
void counters_close(struct counters *c);

/* The value of the counted event of a role after a stop (sum over threads), or -1 when no event of that role
 * is counted. */
long long counters_role_value(const struct counters *c, enum counters_role role);
/* After a stop: 1 when a thread was switched out involuntarily and lost more than `share` of its window
 * (the window less its task clock: time it was runnable or asleep, not running), 0 when no thread did, -1
 * when it cannot be told (no involuntary or task-clock count, or a task clock above its window). */
int counters_preempted_beyond(const struct counters *c, double share);
/* Joules counted by the energy events after a stop (sum over them), NaN when none is counted. */
double counters_energy_j(const struct counters *c);

/* Counter-derived bytes over known bytes: the region reads known_bytes from DRAM once; LLC misses x
 * line_bytes is what the counters saw. line_bytes is the LLC's line size (hwloc); 0 (unknown) makes the
 * calibration unavailable, never a guess. */
struct counters_calibration {
    bool available;
    char reason[COUNTERS_REASON_LEN];
    char event[COUNTERS_NAME_LEN];
    double known_bytes, counted_bytes, ratio;
    double line_bytes; /* bytes per counted miss: the LLC's line size from hwloc */
};
void counters_calibrate(struct counters *c, void (*region)(void *ctx), void *ctx, double known_bytes,
                        double line_bytes, struct counters_calibration *out);

/* {available, reason, source, threads, hardware?, events: [{name, counted, source?, reason?}], calibration?};
 * NULL on allocation failure. cal may be NULL. */
struct cJSON *counters_to_json(const struct counters *c, const struct counters_calibration *cal);

#endif
