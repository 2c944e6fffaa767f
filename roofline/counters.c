/* Counters around measured regions (see counters.h). The PAPI source adds events one at a time, so an event
 * that cannot be added (absent, or in conflict with the ones already added) is reported with PAPI's own
 * reason and the others stay. Every thread of the team has its own event set, opened, started and stopped in
 * that thread. The perf_event component counts in the user and kernel domains (PAPI_set_cmp_domain), since
 * context switches and migrations happen in the kernel: in PAPI's default user domain they read 0. The
 * involuntary context switches come from getrusage(RUSAGE_THREAD), read in each thread just inside its event
 * set's start and stop, so they cover the timed window and as little else as possible.
 * Checked in tests/test_counters.c: the counting path with the fake source (values, per-thread sums and
 * maxima, energy units asserted), the fallback with the fake source refusing (the getrusage count alone),
 * and PAPI on whatever this machine offers (available, or not with a reason; never values without
 * counting), including a two-thread busy region whose summed task-clock is about twice its wall time. */
#include "roofline/counters.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <papi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "kernels/fr_check.h"
#include "kernels/team.h"
#include "roofline/timing.h"

/* Copies up to n - 1 bytes of each piece into dst (messages are cut, never overflow). */
static void text_join(char *dst, size_t n, const char *a, const char *sep, const char *b) {
    size_t len = 0;
    const char *parts[3] = {a, sep, b};
    for (int i = 0; i < 3; i++)
        for (const char *q = parts[i]; q && *q && len + 1 < n; q++) dst[len++] = *q;
    dst[len] = '\0';
}

/* ---- PAPI source ---- */

struct papi_handle {
    int eventset;
    pthread_t owner; /* the system thread that opened it: PAPI counts the calling thread */
};

static unsigned long papi_thread_id(void) {
    return (unsigned long)pthread_self();
}

/* Why the kernel domain could not be set ("" when it was): context switches and migrations are then refused
 * rather than read as 0. Written once by the first open, in the calling thread, before any team opens. */
static char papi_kernel_domain_why[COUNTERS_REASON_LEN];

static int papi_init(struct fr_err *why) {
    if (PAPI_is_initialized() != PAPI_NOT_INITED) return 0;
    int v = PAPI_library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT)
        return fr_err_set(why, "PAPI_library_init: %s",
                          v < 0 ? PAPI_strerror(v) : "header/library version mismatch");
    int rc = PAPI_thread_init(papi_thread_id);
    if (rc != PAPI_OK) return fr_err_set(why, "PAPI_thread_init: %s", PAPI_strerror(rc));
    int cidx = PAPI_get_component_index("perf_event");
    rc = cidx < 0 ? cidx : PAPI_set_cmp_domain(PAPI_DOM_ALL, cidx);
    if (rc != PAPI_OK)
        snprintf(papi_kernel_domain_why, sizeof papi_kernel_domain_why,
                 "counted in the kernel, and PAPI_set_cmp_domain(PAPI_DOM_ALL, perf_event) failed: %s",
                 PAPI_strerror(rc));
    return 0;
}

static int papi_open(const void *config, int thread, void **handle, struct fr_err *why) {
    (void)config;
    struct papi_handle *h = NULL;
    if (thread == 0 && papi_init(why) != 0) return -1;
    if (thread > 0) FR_CHECK_PAPI(PAPI_register_thread(), why, fail);
    h = malloc(sizeof *h);
    FR_CHECK_ALLOC(h, why, fail);
    h->eventset = PAPI_NULL;
    h->owner = pthread_self();
    FR_CHECK_PAPI(PAPI_create_eventset(&h->eventset), why, fail);
    *handle = h;
    return 0;
fail:
    free(h);
    return -1;
}

/* Appends to why's message, when component cidx is disabled, the reason PAPI gives for it: on a CPU that
 * libpfm4 does not know (Debian 12's on a Zen 5), "perf_event is disabled: Error libpfm4 no default PMU
 * found", which turns off its software events too. */
static void papi_explain_disabled(int cidx, struct fr_err *why) {
    const PAPI_component_info_t *ci = cidx >= 0 ? PAPI_get_component_info(cidx) : NULL;
    if (!why || !ci || !ci->disabled) return;
    char msg[sizeof why->msg];
    snprintf(msg, sizeof msg, "%s", why->msg);
    fr_err_set(why, "%s (PAPI component %s is disabled: %s)", msg, ci->name, ci->disabled_reason);
}

/* Names why PAPI does not know the event (rc): for "component:::event", the missing or disabled component;
 * for the others (presets and libpfm4's "pmu::event"), which the perf_event component names, that component
 * when it is disabled. */
static void papi_explain_missing(const char *event, int rc, struct fr_err *why) {
    const char *sep = strstr(event, ":::");
    if (!sep) {
        papi_explain_disabled(PAPI_get_component_index("perf_event"), why);
        return;
    }
    if (sep == event || (size_t)(sep - event) >= 64) return;
    char comp[64];
    memcpy(comp, event, (size_t)(sep - event));
    comp[sep - event] = '\0';
    int cidx = PAPI_get_component_index(comp);
    if (cidx < 0) {
        fr_err_set(why, "PAPI_event_name_to_code: %s (this PAPI has no '%s' component)", PAPI_strerror(rc),
                   comp);
        return;
    }
    papi_explain_disabled(cidx, why);
}

static bool name_is_kernel_only(const char *name) {
    return strcasestr(name, "CONTEXT-SWITCHES") || strcasestr(name, "MIGRATIONS") ||
           strcasecmp(name, "perf::CS") == 0;
}

static int papi_add(void *handle, const char *event, char units[COUNTERS_UNITS_LEN], struct fr_err *why) {
    struct papi_handle *h = handle;
    units[0] = '\0';
    if (papi_kernel_domain_why[0] && name_is_kernel_only(event))
        return fr_err_set(why, "%s", papi_kernel_domain_why);
    int code, rc = PAPI_event_name_to_code(event, &code);
    if (rc != PAPI_OK) {
        fr_err_set(why, "PAPI_event_name_to_code: %s", PAPI_strerror(rc));
        papi_explain_missing(event, rc, why);
        return -1;
    }
    rc = PAPI_add_event(h->eventset, code);
    if (rc != PAPI_OK) {
        fr_err_set(why, "PAPI_add_event: %s", PAPI_strerror(rc));
        papi_explain_disabled(PAPI_get_event_component(code), why);
        return -1;
    }
    PAPI_event_info_t info;
    if (PAPI_get_event_info(code, &info) == PAPI_OK) text_join(units, COUNTERS_UNITS_LEN, info.units, 0, 0);
    return 0;
}

static int papi_owned(const struct papi_handle *h, struct fr_err *why) {
    if (pthread_equal(h->owner, pthread_self())) return 0;
    return fr_err_set(why,
                      "OpenMP thread %d runs on another system thread than the one that opened its "
                      "event set (the team changed)",
                      kernel_team_thread());
}

static int papi_start(void *handle, struct fr_err *why) {
    struct papi_handle *h = handle;
    if (papi_owned(h, why) != 0) return -1;
    int rc = PAPI_start(h->eventset);
    if (rc == PAPI_OK) return 0;
    return fr_err_set(
        why, "PAPI_start: %s%s", PAPI_strerror(rc),
        rc == PAPI_EPERM ? " (user and kernel domains need perf_event_paranoid <= 1 or CAP_PERFMON)" : "");
}

static int papi_stop(void *handle, long long *values, struct fr_err *why) {
    struct papi_handle *h = handle;
    if (papi_owned(h, why) != 0) return -1;
    int rc = PAPI_stop(h->eventset, values);
    return rc == PAPI_OK ? 0 : fr_err_set(why, "PAPI_stop: %s", PAPI_strerror(rc));
}

static void papi_close(void *handle) {
    struct papi_handle *h = handle;
    if (!h) return;
    if (h->eventset != PAPI_NULL) {
        PAPI_cleanup_eventset(h->eventset);
        PAPI_destroy_eventset(&h->eventset);
    }
    free(h);
}

static const struct counters_source papi_source = {"papi",    papi_open,  papi_add, papi_start,
                                                   papi_stop, papi_close, NULL};

const struct counters_source *counters_source_papi(void) {
    return &papi_source;
}

/* ---- fake source, for tests ---- */

struct fake_handle {
    const struct counters_fake_config *cfg;
    int thread;
    long run;                          /* start/stop pairs so far */
    int n, added[COUNTERS_MAX_EVENTS]; /* cfg->events index of each added event */
};

static int fake_open(const void *config, int thread, void **handle, struct fr_err *why) {
    const struct counters_fake_config *cfg = config;
    if (!cfg) return fr_err_set(why, "fake source: no configuration");
    if (cfg->refuse_all) return fr_err_set(why, "%s", cfg->refuse_all);
    struct fake_handle *h = calloc(1, sizeof *h);
    FR_CHECK_ALLOC(h, why, fail);
    h->cfg = cfg;
    h->thread = thread;
    *handle = h;
    return 0;
fail:
    return -1;
}

static int fake_add(void *handle, const char *event, char units[COUNTERS_UNITS_LEN], struct fr_err *why) {
    struct fake_handle *h = handle;
    units[0] = '\0';
    for (int i = 0; h->cfg->events && h->cfg->events[i]; i++)
        if (strcmp(h->cfg->events[i], event) == 0) {
            if (h->n >= COUNTERS_MAX_EVENTS) return fr_err_set(why, "fake source: too many events");
            h->added[h->n++] = i;
            if (h->cfg->units) text_join(units, COUNTERS_UNITS_LEN, h->cfg->units[i], 0, 0);
            return 0;
        }
    return fr_err_set(why, "event not offered by the fake source");
}

static int fake_start(void *handle, struct fr_err *why) {
    struct fake_handle *h = handle;
    return h->cfg->refuse_start ? fr_err_set(why, "%s", h->cfg->refuse_start) : 0;
}

/* The bumps of one event in this handle's thread on its current run. */
static long long fake_bumps(const struct fake_handle *h, int event) {
    long long n = 0;
    for (const struct counters_fake_bump *b = h->cfg->bumps; b && b->event; b++) {
        if (b->thread != h->thread || strcmp(h->cfg->events[event], b->event) != 0) continue;
        for (const long *r = b->runs; r && *r >= 0; r++) n += *r == h->run;
    }
    return n;
}

static int fake_stop(void *handle, long long *values, struct fr_err *why) {
    (void)why;
    struct fake_handle *h = handle;
    for (int i = 0; i < h->n; i++) values[i] = h->cfg->per_run[h->added[i]] + fake_bumps(h, h->added[i]);
    h->run++;
    return 0;
}

static void fake_close(void *handle) {
    free(handle);
}

static const struct counters_source fake_source = {"fake",    fake_open,  fake_add, fake_start,
                                                   fake_stop, fake_close, NULL};

const struct counters_source *counters_source_fake(void) {
    return &fake_source;
}

/* ---- getrusage: the calling thread's involuntary context switches, counted by this module ---- */

static int rusage_involuntary(long long *count, struct fr_err *why) {
#ifdef RUSAGE_THREAD
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        return fr_err_set(why, "getrusage(RUSAGE_THREAD): %s", strerror(errno));
    *count = ru.ru_nivcsw;
    return 0;
#else
    (void)count;
    return fr_err_set(why, "getrusage(RUSAGE_THREAD) is Linux-only");
#endif
}

/* ---- event lists ---- */

/* One slot per quantity, alternatives in order of preference. */
struct slot {
    const char *names[4];
};

static const struct slot perf_slots[] = {
    {{"PAPI_TOT_CYC"}},
    {{"PAPI_TOT_INS"}},
    {{"PAPI_L3_TCM", "PAPI_L3_DCM", "perf::LLC-LOAD-MISSES"}},
    {{"PAPI_SP_OPS", "PAPI_FP_OPS"}},
    {{"perf::TASK-CLOCK"}},
    {{"perf::CONTEXT-SWITCHES"}},
    {{"perf::CPU-MIGRATIONS"}},
    {{"perf::PAGE-FAULTS"}},
    {{"perf::MAJOR-FAULTS"}},
    {{COUNTERS_EVENT_INVOLUNTARY}},
};

static const struct slot energy_slots[] = {
    {{"rapl:::PACKAGE_ENERGY:PACKAGE0", "powercap:::ENERGY_UJ:ZONE0"}},
    {{"rapl:::DRAM_ENERGY:PACKAGE0", "powercap:::ENERGY_UJ:ZONE0_SUBZONE0"}},
};

static bool name_is_llc_misses(const char *name) {
    size_t n = strlen(name);
    if (strncmp(name, "PAPI_L3_", 8) == 0 && n > 8 && name[n - 1] == 'M') return true;
    return strcasestr(name, "LLC") && strcasestr(name, "MISS");
}

static double joules_per_unit(const char *units) {
    static const struct {
        const char *unit;
        double j;
    } table[] = {{"nJ", 1e-9}, {"uJ", 1e-6}, {"mJ", 1e-3}, {"J", 1.0}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(units, table[i].unit) == 0) return table[i].j;
    return NAN;
}

static enum counters_role role_of(const char *name, const char *units) {
    static const struct {
        const char *pattern;
        enum counters_role role;
    } table[] = {
        {"INVOLUNTARY-SWITCHES", COUNTERS_ROLE_INVOLUNTARY_SWITCHES},
        {"TASK-CLOCK", COUNTERS_ROLE_TASK_CLOCK_NS},
        {"CONTEXT-SWITCHES", COUNTERS_ROLE_CONTEXT_SWITCHES},
        {"MIGRATIONS", COUNTERS_ROLE_MIGRATIONS},
        {"MAJOR-FAULTS", COUNTERS_ROLE_MAJOR_FAULTS},
        {"PAGE-FAULTS", COUNTERS_ROLE_PAGE_FAULTS},
        {"PAPI_TOT_CYC", COUNTERS_ROLE_CYCLES},
        {"CPU-CYCLES", COUNTERS_ROLE_CYCLES},
        {"PAPI_TOT_INS", COUNTERS_ROLE_INSTRUCTIONS},
        {"perf::INSTRUCTIONS", COUNTERS_ROLE_INSTRUCTIONS},
        {"PAPI_SP_OPS", COUNTERS_ROLE_FP_OPS},
        {"PAPI_FP_OPS", COUNTERS_ROLE_FP_OPS},
    };
    if (isfinite(joules_per_unit(units))) return COUNTERS_ROLE_ENERGY;
    if (name_is_llc_misses(name)) return COUNTERS_ROLE_LLC_MISSES;
    if (strcasecmp(name, "perf::CS") == 0) return COUNTERS_ROLE_CONTEXT_SWITCHES;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcasestr(name, table[i].pattern)) return table[i].role;
    return COUNTERS_ROLE_OTHER;
}

/* Adds a name to thread 0's source handle (src_why: the source did not open, and why), or, for
 * COUNTERS_EVENT_INVOLUNTARY that the source refuses, to this module's getrusage count. */
static int add_one(struct counters *c, const char *src_why, const char *name, struct counters_event *e,
                   struct fr_err *why) {
    e->by_rusage = false;
    if (src_why) fr_err_set(why, "%s", src_why);
    if (!src_why && c->src->add(c->handles[0], name, e->units, why) == 0) {
        const char *origin = c->src->origin ? c->src->origin(c->handles[0]) : NULL;
        text_join(e->source, sizeof e->source, origin ? origin : c->src->name, NULL, NULL);
        return 0;
    }
    if (strcmp(name, COUNTERS_EVENT_INVOLUNTARY) != 0) return -1;
    long long probe;
    struct fr_err own = {{0}};
    if (rusage_involuntary(&probe, &own) != 0) {
        char src_msg[sizeof why->msg];
        text_join(src_msg, sizeof src_msg, why->msg, NULL, NULL);
        text_join(why->msg, sizeof why->msg, src_msg, "; and ", own.msg);
        return -1;
    }
    e->units[0] = '\0';
    e->by_rusage = true;
    text_join(e->source, sizeof e->source, "getrusage", NULL, NULL);
    return 0;
}

/* Appends an alternative's refusal to reason: "the same reason" when it repeats the first name's (PAPI's
 * disabled perf_event component refuses every event alike), else its own, or the name alone where the text
 * would not fit, rather than a reason cut off mid-word. */
static void reason_add_alternative(char *reason, size_t size, const char *name, const char *why,
                                   const char *first_why) {
    size_t len = strlen(reason);
    if (strcmp(why, first_why) == 0) {
        snprintf(reason + len, size - len, "; also tried %s: the same reason", name);
        return;
    }
    int n = snprintf(reason + len, size - len, "; also tried %s: %s", name, why);
    if (n < 0 || (size_t)n >= size - len) snprintf(reason + len, size - len, "; also tried %s", name);
}

/* Tries the alternatives of one slot; the first that adds is the event, else the first name with its
 * reason. */
static void add_slot(struct counters *c, const char *src_why, const char *const *names, int n_names) {
    struct counters_event *e = &c->events[c->n_events++];
    char first_why[sizeof((struct fr_err *)0)->msg] = "";
    text_join(e->name, sizeof e->name, names[0], NULL, NULL);
    e->llc_misses = name_is_llc_misses(names[0]);
    e->joules_per_unit = NAN;
    for (int i = 0; i < n_names && names[i]; i++) {
        struct fr_err why = {{0}};
        if (add_one(c, src_why, names[i], e, &why) == 0) {
            text_join(e->name, sizeof e->name, names[i], NULL, NULL);
            e->llc_misses = name_is_llc_misses(names[i]);
            e->joules_per_unit = joules_per_unit(e->units);
            e->role = role_of(names[i], e->units);
            e->counted = true;
            e->reason[0] = '\0';
            c->counted_index[c->n_counted++] = c->n_events - 1;
            if (e->by_rusage)
                c->n_rusage++;
            else
                c->source_on = true;
            return;
        }
        if (i == 0) {
            text_join(e->reason, sizeof e->reason, why.msg, NULL, NULL);
            snprintf(first_why, sizeof first_why, "%s", why.msg);
        } else {
            reason_add_alternative(e->reason, sizeof e->reason, names[i], why.msg, first_why);
        }
    }
}

static void index_roles(struct counters *c) {
    for (int r = 0; r < COUNTERS_ROLE_COUNT; r++) c->role_index[r] = -1;
    for (int i = c->n_counted - 1; i >= 0; i--)
        c->role_index[c->events[c->counted_index[i]].role] = c->counted_index[i];
}

/* Stops counting the source's events (all events when all_events), each with the reason. */
static void drop_counted(struct counters *c, const char *why, bool all_events) {
    int kept = 0;
    for (int i = 0; i < c->n_counted; i++) {
        struct counters_event *e = &c->events[c->counted_index[i]];
        if (e->by_rusage && !all_events) {
            c->counted_index[kept++] = c->counted_index[i];
            continue;
        }
        e->counted = false;
        e->source[0] = '\0';
        text_join(e->reason, sizeof e->reason, why, NULL, NULL);
    }
    c->n_counted = kept;
    c->n_rusage = kept;
    c->source_on = false;
    c->available = kept > 0;
    index_roles(c);
}

static void mark_unavailable(struct counters *c, const char *why) {
    text_join(c->reason, sizeof c->reason, why, NULL, NULL);
    drop_counted(c, why, true);
}

/* Splits the list into names; non-zero with err naming --events when malformed. */
static int parse_events(const char *events_csv, char names[][COUNTERS_NAME_LEN], int *n_names,
                        struct fr_err *err) {
    *n_names = 0;
    if (!events_csv) return 0;
    const char *p = events_csv;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == 0) return fr_err_set(err, "--events: empty event name in '%s'", events_csv);
        if (len >= COUNTERS_NAME_LEN)
            return fr_err_set(err, "--events: event name too long in '%s'", events_csv);
        if (*n_names >= COUNTERS_MAX_EVENTS)
            return fr_err_set(err, "--events: at most %d events", COUNTERS_MAX_EVENTS);
        memcpy(names[*n_names], p, len);
        names[(*n_names)++][len] = '\0';
        if (!comma) return 0;
        p = comma + 1;
    }
}

int counters_check_events(const char *events_csv, struct fr_err *err) {
    char names[COUNTERS_MAX_EVENTS][COUNTERS_NAME_LEN];
    int n;
    return parse_events(events_csv, names, &n, err);
}

/* Runs fn(c, t, why) in every thread t of the team; the first failure's reason, prefixed with the thread when
 * the team has more than one, goes to msg. Returns the number of threads that failed. */
static int team_run(struct counters *c, int from, int (*fn)(struct counters *, int, struct fr_err *),
                    char *msg, size_t msg_n) {
    int failed = 0;
    if (c->n_threads == 1 || from >= c->n_threads) {
        struct fr_err why = {{0}};
        if (from == 0 && fn(c, 0, &why) != 0) {
            failed = 1;
            if (msg) text_join(msg, msg_n, c->src->name, ": ", why.msg);
        }
        return failed;
    }
    int team = 0;
#pragma omp parallel num_threads(c->n_threads) reduction(+ : failed)
    {
        int t = kernel_team_thread();
        if (t == 0) team = kernel_team_size();
        struct fr_err why = {{0}};
        if (t >= from && fn(c, t, &why) != 0) {
            failed++;
#pragma omp critical(counters_team_why)
            if (msg && !msg[0]) {
                char head[64];
                snprintf(head, sizeof head, "%s: thread %d", c->src->name, t);
                text_join(msg, msg_n, head, ": ", why.msg);
            }
        }
    }
    if (team != c->n_threads && !failed) {
        snprintf(msg, msg_n, "%s: asked a team of %d threads, the runtime gave %d", c->src->name,
                 c->n_threads, team);
        failed = 1;
    }
    return failed;
}

static int thread_open(struct counters *c, int t, struct fr_err *why) {
    return c->src->open(c->open_config, t, &c->handles[t], why);
}

static int thread_add_counted(struct counters *c, int t, struct fr_err *why) {
    for (int i = 0; i < c->n_counted; i++) {
        char units[COUNTERS_UNITS_LEN];
        struct fr_err one = {{0}};
        if (c->events[c->counted_index[i]].by_rusage) continue;
        if (c->src->add(c->handles[t], c->events[c->counted_index[i]].name, units, &one) != 0)
            return fr_err_set(why, "%s: %s", c->events[c->counted_index[i]].name, one.msg);
    }
    return 0;
}

static int thread_close(struct counters *c, int t, struct fr_err *why) {
    (void)why;
    if (c->handles[t]) c->src->close(c->handles[t]);
    c->handles[t] = NULL;
    return 0;
}

/* The window is read outside the start and stop calls, so it holds every nanosecond the set counted (the
 * syscalls' own time included): task-clock / window cannot exceed 1 but by clock granularity. getrusage is
 * read inside the source's start and stop, nearest the timed window. */
static int thread_start(struct counters *c, int t, struct fr_err *why) {
    c->started_s[t] = timing_now_s();
    if (c->source_on && c->src->start(c->handles[t], why) != 0) return -1;
    return c->n_rusage > 0 ? rusage_involuntary(&c->rusage_start[t], why) : 0;
}

static int thread_stop(struct counters *c, int t, struct fr_err *why) {
    long long raw[COUNTERS_MAX_EVENTS] = {0}, involuntary = 0;
    struct fr_err own = {{0}};
    int rusage_rc = c->n_rusage > 0 ? rusage_involuntary(&involuntary, &own) : 0;
    if (c->source_on && c->src->stop(c->handles[t], raw, why) != 0) return -1;
    if (rusage_rc != 0) return fr_err_set(why, "%s", own.msg);
    c->window_s[t] = timing_now_s() - c->started_s[t];
    long long *mine = c->per_thread[t];
    memset(mine, 0, sizeof c->per_thread[t]);
    for (int i = 0, k = 0; i < c->n_counted; i++) {
        int e = c->counted_index[i];
        mine[e] = c->events[e].by_rusage ? involuntary - c->rusage_start[t] : raw[k++];
    }
    return 0;
}

/* One start and stop of every thread, outside any measurement; non-zero with msg when either fails. */
static int team_probe(struct counters *c, char *msg, size_t msg_n) {
    int failed = team_run(c, 0, thread_start, msg, msg_n);
    int stop_failed = team_run(c, 0, thread_stop, failed ? NULL : msg, msg_n);
    return failed || stop_failed;
}

/* reason = head ": " event_why ")", event_why cut before its first "; also tried" where the whole would not
 * fit (so that a long reason is shortened at a boundary, not mid-word). */
static void reason_quote_event(char *reason, size_t size, const char *head, const char *event_why) {
    const char *alt = strstr(event_why, "; also tried");
    int whole = (int)strlen(event_why);
    if (alt && strlen(head) + 2 + (size_t)whole + 2 > size) whole = (int)(alt - event_why);
    snprintf(reason, size, "%s: %.*s)", head, whole, event_why);
}

/* The run-level reason once the events are added: which are missing, or, when the source counts none of
 * them, that getrusage's count is all there is. */
static void describe_missing(struct counters *c, const char *src_why) {
    if (c->n_counted == 0) {
        if (src_why) return; /* the source did not open: c->reason says why */
        char head[128];
        snprintf(head, sizeof head, "%s: none of the %d events can be counted (%.60s", c->src->name,
                 c->n_events, c->events[0].name);
        reason_quote_event(c->reason, sizeof c->reason, head, c->events[0].reason);
    } else if (!c->source_on && c->n_counted < c->n_events) {
        int first = 0; /* the first event the source was asked for, with its reason */
        while (first < c->n_events && c->events[first].counted) first++;
        char head[160];
        snprintf(head, sizeof head,
                 "only getrusage's involuntary switches are counted; %s counts none of %d (%.60s",
                 c->src->name, c->n_events - c->n_counted, c->events[first].name);
        reason_quote_event(c->reason, sizeof c->reason, head, c->events[first].reason);
    } else if (c->n_counted < c->n_events) {
        snprintf(c->reason, sizeof c->reason, "%d of %d events cannot be counted", c->n_events - c->n_counted,
                 c->n_events);
    } else {
        c->reason[0] = '\0';
    }
}

static bool role_is_hardware(enum counters_role r) {
    return r == COUNTERS_ROLE_CYCLES || r == COUNTERS_ROLE_INSTRUCTIONS || r == COUNTERS_ROLE_LLC_MISSES ||
           r == COUNTERS_ROLE_FP_OPS;
}

/* Says once for the run that no hardware event is counted (a VM without a virtual PMU, or a PAPI that knows
 * no PMU of this CPU), rather than leaving each row's reader to find the same reason per event. */
static void note_hardware(struct counters *c) {
    int asked = 0, first = -1;
    c->hardware_note[0] = '\0';
    for (int i = 0; i < c->n_events; i++) {
        if (!role_is_hardware(role_of(c->events[i].name, ""))) continue;
        if (c->events[i].counted) return;
        if (asked++ == 0) first = i;
    }
    if (asked == 0) return;
    int n = snprintf(c->hardware_note, sizeof c->hardware_note,
                     "no hardware PMU counts here: none of the %d hardware events is counted (%.60s: %.120s)",
                     asked, c->events[first].name, c->events[first].reason);
    if (n >= (int)sizeof c->hardware_note) c->hardware_note[sizeof c->hardware_note - 2] = ')';
}

static int open_team(struct counters *c, const struct counters_source *src, const void *config,
                     const char *events_csv, const struct slot *slots, int n_slots, int threads,
                     struct fr_err *err) {
    *c = (struct counters){.src = src, .n_threads = threads, .open_config = config};
    for (int r = 0; r < COUNTERS_ROLE_COUNT; r++) c->role_index[r] = -1;
    /* Parse the list first: a malformed list is a usage error whatever the source can do. */
    char names[COUNTERS_MAX_EVENTS][COUNTERS_NAME_LEN];
    int n_names = 0;
    if (parse_events(events_csv, names, &n_names, err) != 0) return -1;
    if (threads < 1 || threads > COUNTERS_MAX_THREADS)
        return fr_err_set(err, "counters: a team of %d threads (1..%d)", threads, COUNTERS_MAX_THREADS);
    c->per_thread = calloc((size_t)threads, sizeof *c->per_thread);
    c->started_s = calloc((size_t)threads, sizeof *c->started_s);
    c->window_s = calloc((size_t)threads, sizeof *c->window_s);
    c->rusage_start = calloc((size_t)threads, sizeof *c->rusage_start);
    if (!c->per_thread || !c->started_s || !c->window_s || !c->rusage_start) {
        counters_close(c);
        return fr_err_set(err, "counters: out of memory for %d threads", threads);
    }
    /* thread 0 (the caller) first: it initializes the library */
    struct fr_err why0 = {{0}};
    bool opened = thread_open(c, 0, &why0) == 0;
    if (!opened) text_join(c->reason, sizeof c->reason, src->name, ": ", why0.msg);
    opened = opened && team_run(c, 1, thread_open, c->reason, sizeof c->reason) == 0;
    if (!opened) team_run(c, 0, thread_close, NULL, 0);
    const char *src_why = opened ? NULL : c->reason;
    int n = events_csv ? n_names : n_slots;
    for (int i = 0; i < n; i++) {
        const char *one[1] = {names[i]};
        const char *const *alts = events_csv ? one : slots[i].names;
        int n_alts = 0;
        while (n_alts < (events_csv ? 1 : 4) && alts[n_alts]) n_alts++;
        add_slot(c, src_why, alts, n_alts);
    }
    describe_missing(c, src_why);
    note_hardware(c);
    if (c->n_counted == 0) return 0;
    c->available = true;
    index_roles(c);
    char msg[COUNTERS_REASON_LEN] = "";
    if (c->source_on && team_run(c, 1, thread_add_counted, msg, sizeof msg) != 0) drop_counted(c, msg, false);
    /* The probe: some sources accept events and only refuse when they start. Their events are dropped
     * first and getrusage's count is tried alone; when that fails too, nothing is counted. */
    for (int tries = 0; tries < 2 && c->n_counted > 0; tries++) {
        char why[COUNTERS_REASON_LEN] = "";
        if (team_probe(c, why, sizeof why) == 0) break;
        drop_counted(c, why, !c->source_on);
        text_join(msg, sizeof msg, why, NULL, NULL);
    }
    if (c->n_counted == 0)
        text_join(c->reason, sizeof c->reason, msg, NULL, NULL);
    else
        describe_missing(c, src_why);
    note_hardware(c);
    return 0;
}

int counters_open(struct counters *c, const struct counters_source *src, const void *config,
                  const char *events_csv, int threads, struct fr_err *err) {
    return open_team(c, src, config, events_csv, perf_slots, (int)(sizeof perf_slots / sizeof perf_slots[0]),
                     threads < 1 ? 1 : threads, err);
}

int counters_open_energy(struct counters *c, const struct counters_source *src, const void *config,
                         struct fr_err *err) {
    return open_team(c, src, config, NULL, energy_slots, (int)(sizeof energy_slots / sizeof energy_slots[0]),
                     1, err);
}

int counters_start(struct counters *c) {
    if (!c->available) return -1;
    char msg[COUNTERS_REASON_LEN] = "";
    if (team_run(c, 0, thread_start, msg, sizeof msg) != 0) {
        c->running = true;
        team_run(c, 0, thread_stop, NULL, 0); /* stop the threads that did start */
        c->running = false;
        mark_unavailable(c, msg);
        return -1;
    }
    c->running = true;
    return 0;
}

int counters_stop(struct counters *c) {
    if (!c->available || !c->running) return -1;
    c->running = false;
    char msg[COUNTERS_REASON_LEN] = "";
    if (team_run(c, 0, thread_stop, msg, sizeof msg) != 0) {
        mark_unavailable(c, msg);
        return -1;
    }
    memset(c->values, 0, sizeof c->values);
    memset(c->thread_max, 0, sizeof c->thread_max);
    c->window_thread_s = 0;
    for (int t = 0; t < c->n_threads; t++) c->window_thread_s += c->window_s[t];
    for (int t = 0; t < c->n_threads; t++)
        for (int e = 0; e < c->n_events; e++) {
            c->values[e] += c->per_thread[t][e];
            if (c->per_thread[t][e] > c->thread_max[e]) c->thread_max[e] = c->per_thread[t][e];
        }
    return 0;
}

void counters_close(struct counters *c) {
    if (c->per_thread) team_run(c, 0, thread_close, NULL, 0);
    free(c->per_thread);
    free(c->window_s);
    free(c->started_s);
    free(c->rusage_start);
    c->per_thread = NULL, c->started_s = c->window_s = NULL, c->rusage_start = NULL;
    c->available = false;
    c->running = false;
}

long long counters_role_value(const struct counters *c, enum counters_role role) {
    int i = c->role_index[role];
    return i >= 0 ? c->values[i] : -1;
}

int counters_preempted_beyond(const struct counters *c, double share) {
    const int inv = c->role_index[COUNTERS_ROLE_INVOLUNTARY_SWITCHES],
              tc = c->role_index[COUNTERS_ROLE_TASK_CLOCK_NS];
    if (inv < 0 || tc < 0) return -1;
    int beyond = 0;
    for (int t = 0; t < c->n_threads; t++) {
        double window = c->window_s[t], task = (double)c->per_thread[t][tc] * 1e-9;
        /* a task clock past its window (by more than the reads' own slack) is not a figure to subtract */
        if (!(window > 0) || task > window * 1.01 + 200e-6) return -1;
        if (c->per_thread[t][inv] > 0 && window - task > share * window) beyond = 1;
    }
    return beyond;
}

double counters_energy_j(const struct counters *c) {
    double j = 0;
    int n = 0;
    for (int i = 0; i < c->n_counted; i++) {
        const struct counters_event *e = &c->events[c->counted_index[i]];
        if (e->role == COUNTERS_ROLE_ENERGY)
            j += (double)c->values[c->counted_index[i]] * e->joules_per_unit, n++;
    }
    return n ? j : NAN;
}

void counters_calibrate(struct counters *c, void (*region)(void *ctx), void *ctx, double known_bytes,
                        double line_bytes, struct counters_calibration *out) {
    *out = (struct counters_calibration){.known_bytes = known_bytes, .line_bytes = line_bytes};
    int idx = -1;
    for (int i = 0; i < c->n_events && idx < 0; i++)
        if (c->events[i].llc_misses && c->events[i].counted) idx = i;
    if (!c->available) {
        text_join(out->reason, sizeof out->reason, "counters unavailable", ": ", c->reason);
        return;
    }
    if (idx < 0) {
        snprintf(out->reason, sizeof out->reason, "no last-level-cache miss event is counted");
        return;
    }
    text_join(out->event, sizeof out->event, c->events[idx].name, NULL, NULL);
    if (!(line_bytes > 0)) {
        snprintf(out->reason, sizeof out->reason, "hwloc gives no cache-line size for the last-level cache");
        return;
    }
    if (counters_start(c) != 0) {
        text_join(out->reason, sizeof out->reason, c->reason, NULL, NULL);
        return;
    }
    region(ctx);
    if (counters_stop(c) != 0) {
        text_join(out->reason, sizeof out->reason, c->reason, NULL, NULL);
        return;
    }
    out->available = true;
    out->counted_bytes = (double)c->values[idx] * line_bytes;
    out->ratio = known_bytes > 0 ? out->counted_bytes / known_bytes : 0;
}

cJSON *counters_to_json(const struct counters *c, const struct counters_calibration *cal) {
    cJSON *o = cJSON_CreateObject(), *events = NULL, *cj = NULL;
    if (!o) return NULL;
    bool ok = cJSON_AddBoolToObject(o, "available", c->available) &&
              cJSON_AddStringToObject(o, "reason", c->reason) &&
              cJSON_AddStringToObject(o, "source", c->src ? c->src->name : "none") &&
              cJSON_AddNumberToObject(o, "threads", c->n_threads) &&
              (!c->hardware_note[0] || cJSON_AddStringToObject(o, "hardware", c->hardware_note)) &&
              (events = cJSON_AddArrayToObject(o, "events"));
    for (int i = 0; ok && i < c->n_events; i++) {
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddStringToObject(e, "name", c->events[i].name) &&
             cJSON_AddBoolToObject(e, "counted", c->events[i].counted) &&
             (!c->events[i].counted || cJSON_AddStringToObject(e, "source", c->events[i].source)) &&
             (c->events[i].counted || cJSON_AddStringToObject(e, "reason", c->events[i].reason));
        if (e) cJSON_AddItemToArray(events, e);
    }
    if (ok && cal) {
        ok = (cj = cJSON_AddObjectToObject(o, "calibration")) &&
             cJSON_AddBoolToObject(cj, "available", cal->available) &&
             cJSON_AddNumberToObject(cj, "line_bytes", cal->line_bytes);
        if (ok && cal->available)
            ok = cJSON_AddStringToObject(cj, "event", cal->event) &&
                 cJSON_AddNumberToObject(cj, "known_bytes", cal->known_bytes) &&
                 cJSON_AddNumberToObject(cj, "counted_bytes", cal->counted_bytes) &&
                 cJSON_AddNumberToObject(cj, "ratio", cal->ratio);
        else if (ok)
            ok = cJSON_AddStringToObject(cj, "reason", cal->reason) != NULL;
    }
    if (!ok) cJSON_Delete(o), o = NULL;
    return o;
}
