/* Hardware counters around measured regions, from a pluggable event source: PAPI, or a fake source for tests.
 * Each requested event is tried; one that cannot be counted is reported once with the source's own reason
 * (PAPI_strerror for PAPI) and the rest go on. When no event can be counted, available is false and reason
 * says why; callers then go on with wall time. Nothing is ever estimated in a counter's place.
 * PAPI counts the calling thread only. */
#ifndef FR_COUNTERS_H
#define FR_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/fr_err.h"

struct cJSON;

#define COUNTERS_MAX_EVENTS 8
#define COUNTERS_NAME_LEN   64
#define COUNTERS_REASON_LEN 256

/* An event source. Each function that can fail says why in `why` (one line) and returns non-zero. */
struct counters_source {
    const char *name;
    int (*open)(const void *config, void **handle, struct fr_err *why);
    int (*add)(void *handle, const char *event, struct fr_err *why);
    int (*start)(void *handle, struct fr_err *why);
    int (*stop)(void *handle, long long *values, struct fr_err *why); /* values in the order added */
    void (*close)(void *handle);
};

const struct counters_source *counters_source_papi(void); /* config: NULL */

/* The fake source: accepts the named events and makes each gain its per_run value per start/stop. */
struct counters_fake_config {
    const char *refuse_all;    /* non-NULL: opening fails with this reason */
    const char *const *events; /* accepted names, NULL-terminated; others: "event not offered by fake" */
    const long long *per_run;  /* one value per accepted name */
    const char *refuse_start;  /* non-NULL: starting fails with this reason */
};
const struct counters_source *counters_source_fake(void); /* config: struct counters_fake_config */

struct counters_event {
    char name[COUNTERS_NAME_LEN];
    bool counted;
    char reason[COUNTERS_REASON_LEN]; /* why it is not counted */
    bool llc_misses;                  /* counts last-level cache misses (used by the calibration) */
};

struct counters {
    const struct counters_source *src;
    void *handle;
    bool available;                   /* at least one event is counted */
    char reason[COUNTERS_REASON_LEN]; /* why not, or which events are missing; "" when all are counted */
    int n_events;                     /* events asked (defaults or --events) */
    struct counters_event events[COUNTERS_MAX_EVENTS];
    int n_counted;
    int counted_index[COUNTERS_MAX_EVENTS]; /* events[] index of the i-th counted event */
    long long values[COUNTERS_MAX_EVENTS];  /* per events[] index, after counters_stop */
    bool running;
};

/* Opens the source and adds the events of the comma-separated list, or the defaults when events_csv is
 * NULL: PAPI_TOT_CYC, PAPI_TOT_INS, an LLC-miss event (PAPI_L3_TCM, else PAPI_L3_DCM, else
 * perf::LLC-LOAD-MISSES), PAPI_SP_OPS (else PAPI_FP_OPS). A start/stop probe runs once so a source that
 * accepts events but cannot start them is known as unavailable here. Returns non-zero only for a malformed
 * list (err filled); an unavailable source is not an error. Always pair with counters_close. */
int counters_open(struct counters *c, const struct counters_source *src, const void *config,
                  const char *events_csv, struct fr_err *err);
/* Start and stop around a region. Return 0 when the values were counted; non-zero when not (c->available
 * and c->reason say why). */
int counters_start(struct counters *c);
int counters_stop(struct counters *c);
void counters_close(struct counters *c);

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

/* {available, reason, source, events: [{name, counted, reason?}], calibration?}; NULL on allocation failure.
 * cal may be NULL. */
struct cJSON *counters_to_json(const struct counters *c, const struct counters_calibration *cal);

#endif
