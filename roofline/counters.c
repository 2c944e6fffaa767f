/* Counters around measured regions (see counters.h). The PAPI source adds events one at a time, so an event
 * that cannot be added (absent, or in conflict with the ones already added) is reported with PAPI's own
 * reason and the others stay. Checked in tests/test_counters.c: the counting path with the fake source
 * (values asserted), the fallback with the fake source refusing, and PAPI on whatever this machine offers
 * (available, or not with a reason; never values without counting). */
#include "roofline/counters.h"

#include <cJSON.h>
#include <papi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fr_check.h"

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
};

static int papi_open(const void *config, void **handle, struct fr_err *why) {
    (void)config;
    struct papi_handle *h = NULL;
    if (PAPI_is_initialized() == PAPI_NOT_INITED) {
        int v = PAPI_library_init(PAPI_VER_CURRENT);
        if (v != PAPI_VER_CURRENT)
            return fr_err_set(why, "PAPI_library_init: %s",
                              v < 0 ? PAPI_strerror(v) : "header/library version mismatch");
    }
    h = malloc(sizeof *h);
    FR_CHECK_ALLOC(h, why, fail);
    h->eventset = PAPI_NULL;
    FR_CHECK_PAPI(PAPI_create_eventset(&h->eventset), why, fail);
    *handle = h;
    return 0;
fail:
    free(h);
    return -1;
}

static int papi_add(void *handle, const char *event, struct fr_err *why) {
    struct papi_handle *h = handle;
    int code, rc = PAPI_event_name_to_code(event, &code);
    if (rc != PAPI_OK) return fr_err_set(why, "PAPI_event_name_to_code: %s", PAPI_strerror(rc));
    rc = PAPI_add_event(h->eventset, code);
    if (rc != PAPI_OK) return fr_err_set(why, "PAPI_add_event: %s", PAPI_strerror(rc));
    return 0;
}

static int papi_start(void *handle, struct fr_err *why) {
    struct papi_handle *h = handle;
    int rc = PAPI_start(h->eventset);
    return rc == PAPI_OK ? 0 : fr_err_set(why, "PAPI_start: %s", PAPI_strerror(rc));
}

static int papi_stop(void *handle, long long *values, struct fr_err *why) {
    struct papi_handle *h = handle;
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

static const struct counters_source papi_source = {"papi",     papi_open, papi_add,
                                                   papi_start, papi_stop, papi_close};

const struct counters_source *counters_source_papi(void) {
    return &papi_source;
}

/* ---- fake source, for tests ---- */

struct fake_handle {
    const struct counters_fake_config *cfg;
    int n, added[COUNTERS_MAX_EVENTS]; /* cfg->events index of each added event */
};

static int fake_open(const void *config, void **handle, struct fr_err *why) {
    const struct counters_fake_config *cfg = config;
    if (!cfg) return fr_err_set(why, "fake source: no configuration");
    if (cfg->refuse_all) return fr_err_set(why, "%s", cfg->refuse_all);
    struct fake_handle *h = calloc(1, sizeof *h);
    FR_CHECK_ALLOC(h, why, fail);
    h->cfg = cfg;
    *handle = h;
    return 0;
fail:
    return -1;
}

static int fake_add(void *handle, const char *event, struct fr_err *why) {
    struct fake_handle *h = handle;
    for (int i = 0; h->cfg->events && h->cfg->events[i]; i++)
        if (strcmp(h->cfg->events[i], event) == 0) {
            if (h->n >= COUNTERS_MAX_EVENTS) return fr_err_set(why, "fake source: too many events");
            h->added[h->n++] = i;
            return 0;
        }
    return fr_err_set(why, "event not offered by the fake source");
}

static int fake_start(void *handle, struct fr_err *why) {
    struct fake_handle *h = handle;
    return h->cfg->refuse_start ? fr_err_set(why, "%s", h->cfg->refuse_start) : 0;
}

static int fake_stop(void *handle, long long *values, struct fr_err *why) {
    (void)why;
    struct fake_handle *h = handle;
    for (int i = 0; i < h->n; i++) values[i] = h->cfg->per_run[h->added[i]];
    return 0;
}

static void fake_close(void *handle) {
    free(handle);
}

static const struct counters_source fake_source = {"fake",     fake_open, fake_add,
                                                   fake_start, fake_stop, fake_close};

const struct counters_source *counters_source_fake(void) {
    return &fake_source;
}

/* ---- event lists ---- */

/* The default events: one slot per quantity, alternatives in order of preference. */
static const struct {
    const char *names[4];
    bool llc_misses;
} default_slots[] = {
    {{"PAPI_TOT_CYC"}, false},
    {{"PAPI_TOT_INS"}, false},
    {{"PAPI_L3_TCM", "PAPI_L3_DCM", "perf::LLC-LOAD-MISSES"}, true},
    {{"PAPI_SP_OPS", "PAPI_FP_OPS"}, false},
};

static bool name_is_llc_misses(const char *name) {
    size_t n = strlen(name);
    if (strncmp(name, "PAPI_L3_", 8) == 0 && n > 8 && name[n - 1] == 'M') return true;
    return strcasestr(name, "LLC") && strcasestr(name, "MISS");
}

/* Tries the alternatives of one slot; the first that adds is the event, else the first name with its reason.
 */
static void add_slot(struct counters *c, const char *const *names, int n_names, bool llc) {
    struct counters_event *e = &c->events[c->n_events++];
    text_join(e->name, sizeof e->name, names[0], NULL, NULL);
    e->llc_misses = llc || name_is_llc_misses(names[0]);
    for (int i = 0; i < n_names && names[i]; i++) {
        struct fr_err why = {{0}};
        if (c->src->add(c->handle, names[i], &why) == 0) {
            text_join(e->name, sizeof e->name, names[i], NULL, NULL);
            e->counted = true;
            e->reason[0] = '\0';
            c->counted_index[c->n_counted++] = c->n_events - 1;
            return;
        }
        if (i == 0) {
            text_join(e->reason, sizeof e->reason, why.msg, NULL, NULL);
        } else {
            size_t len = strlen(e->reason);
            snprintf(e->reason + len, sizeof e->reason - len, "%s%s", i == 1 ? "; also tried " : ", ",
                     names[i]);
        }
    }
}

static void mark_unavailable(struct counters *c, const char *why) {
    c->available = false;
    text_join(c->reason, sizeof c->reason, why, NULL, NULL);
    for (int i = 0; i < c->n_counted; i++) {
        struct counters_event *e = &c->events[c->counted_index[i]];
        e->counted = false;
        text_join(e->reason, sizeof e->reason, why, NULL, NULL);
    }
    c->n_counted = 0;
}

int counters_open(struct counters *c, const struct counters_source *src, const void *config,
                  const char *events_csv, struct fr_err *err) {
    *c = (struct counters){.src = src};
    /* Parse the list first: a malformed list is a usage error whatever the source can do. */
    char names[COUNTERS_MAX_EVENTS][COUNTERS_NAME_LEN];
    int n_names = 0;
    if (events_csv) {
        const char *p = events_csv;
        for (;;) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            if (len == 0) return fr_err_set(err, "--events: empty event name in '%s'", events_csv);
            if (len >= COUNTERS_NAME_LEN)
                return fr_err_set(err, "--events: event name too long in '%s'", events_csv);
            if (n_names >= COUNTERS_MAX_EVENTS)
                return fr_err_set(err, "--events: at most %d events", COUNTERS_MAX_EVENTS);
            memcpy(names[n_names], p, len);
            names[n_names++][len] = '\0';
            if (!comma) break;
            p = comma + 1;
        }
    }
    struct fr_err why = {{0}};
    if (src->open(config, &c->handle, &why) != 0) {
        c->handle = NULL;
        text_join(c->reason, sizeof c->reason, src->name, ": ", why.msg);
    }
    if (events_csv) {
        for (int i = 0; i < n_names; i++) {
            const char *one[1] = {names[i]};
            if (c->handle) {
                add_slot(c, one, 1, false);
            } else {
                struct counters_event *e = &c->events[c->n_events++];
                text_join(e->name, sizeof e->name, names[i], NULL, NULL);
                text_join(e->reason, sizeof e->reason, c->reason, NULL, NULL);
                e->llc_misses = name_is_llc_misses(names[i]);
            }
        }
    } else {
        for (size_t s = 0; s < sizeof default_slots / sizeof default_slots[0]; s++) {
            int n = 0;
            while (n < 4 && default_slots[s].names[n]) n++;
            if (c->handle) {
                add_slot(c, default_slots[s].names, n, default_slots[s].llc_misses);
            } else {
                struct counters_event *e = &c->events[c->n_events++];
                text_join(e->name, sizeof e->name, default_slots[s].names[0], NULL, NULL);
                text_join(e->reason, sizeof e->reason, c->reason, NULL, NULL);
                e->llc_misses = default_slots[s].llc_misses;
            }
        }
    }
    if (!c->handle) return 0;
    if (c->n_counted == 0) {
        char head[128];
        snprintf(head, sizeof head, "%s: none of the %d events can be counted (%.60s", src->name, c->n_events,
                 c->events[0].name);
        text_join(c->reason, sizeof c->reason, head, ": ", c->events[0].reason);
        size_t len = strlen(c->reason);
        if (len + 1 < sizeof c->reason) c->reason[len] = ')', c->reason[len + 1] = '\0';
        return 0;
    }
    c->available = true;
    /* The probe: some sources accept events and only refuse when they start. */
    if (counters_start(c) != 0 || counters_stop(c) != 0) return 0;
    if (c->n_counted < c->n_events)
        snprintf(c->reason, sizeof c->reason, "%d of %d events cannot be counted", c->n_events - c->n_counted,
                 c->n_events);
    return 0;
}

int counters_start(struct counters *c) {
    if (!c->available) return -1;
    struct fr_err why = {{0}};
    if (c->src->start(c->handle, &why) != 0) {
        char msg[COUNTERS_REASON_LEN];
        text_join(msg, sizeof msg, c->src->name, ": ", why.msg);
        mark_unavailable(c, msg);
        return -1;
    }
    c->running = true;
    return 0;
}

int counters_stop(struct counters *c) {
    if (!c->available || !c->running) return -1;
    c->running = false;
    long long raw[COUNTERS_MAX_EVENTS] = {0};
    struct fr_err why = {{0}};
    if (c->src->stop(c->handle, raw, &why) != 0) {
        char msg[COUNTERS_REASON_LEN];
        text_join(msg, sizeof msg, c->src->name, ": ", why.msg);
        mark_unavailable(c, msg);
        return -1;
    }
    memset(c->values, 0, sizeof c->values);
    for (int i = 0; i < c->n_counted; i++) c->values[c->counted_index[i]] = raw[i];
    return 0;
}

void counters_close(struct counters *c) {
    if (c->handle) c->src->close(c->handle);
    c->handle = NULL;
    c->available = false;
    c->running = false;
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
              (events = cJSON_AddArrayToObject(o, "events"));
    for (int i = 0; ok && i < c->n_events; i++) {
        cJSON *e = cJSON_CreateObject();
        ok = e && cJSON_AddStringToObject(e, "name", c->events[i].name) &&
             cJSON_AddBoolToObject(e, "counted", c->events[i].counted) &&
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
