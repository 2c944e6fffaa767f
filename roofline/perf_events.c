/* perf_event_open as a counters source, and the PAPI-then-kernel source (see perf_events.h). Checked in
 * tests/test_perf_events.c: the page faults and context switches it counts in a thread against that thread's
 * own getrusage counts, task clock against wall time, and the fallback behind a fake first source that
 * offers only a hardware event (each event naming its source, a two-thread team's task clock summed). */
#include "roofline/perf_events.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- the perf_event source ---- */

static const struct {
    const char *name;
    unsigned long long config;
    int in_kernel; /* counted on the kernel's side of the task: reads 0 with the kernel excluded */
} sw_events[] = {
    {"perf::TASK-CLOCK", PERF_COUNT_SW_TASK_CLOCK, 0},
    {"perf::CONTEXT-SWITCHES", PERF_COUNT_SW_CONTEXT_SWITCHES, 1},
    {"perf::CS", PERF_COUNT_SW_CONTEXT_SWITCHES, 1},
    {"perf::CPU-MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS, 1},
    {"perf::PAGE-FAULTS", PERF_COUNT_SW_PAGE_FAULTS, 0},
    {"perf::MINOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MIN, 0},
    {"perf::MAJOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MAJ, 0},
};
#define N_SW_EVENTS (int)(sizeof sw_events / sizeof sw_events[0])

static int sw_event_index(const char *name) {
    for (int i = 0; i < N_SW_EVENTS; i++)
        if (strcasecmp(name, sw_events[i].name) == 0) return i;
    return -1;
}

struct perf_handle {
    int n;                       /* events in the group */
    int fd[COUNTERS_MAX_EVENTS]; /* fd[0] leads the group */
    pid_t tid;                   /* the thread the group counts (opened in it) */
};

static int perf_open(const void *config, int thread, void **handle, struct fr_err *why) {
    (void)config, (void)thread;
    struct perf_handle *h = calloc(1, sizeof *h);
    if (!h) return fr_err_set(why, "perf_event: out of memory");
    h->tid = (pid_t)syscall(SYS_gettid);
    *handle = h;
    return 0;
}

static int sys_perf_event_open(struct perf_event_attr *attr, int group_fd) {
    return (int)syscall(SYS_perf_event_open, attr, 0 /* this thread */, -1 /* any CPU */, group_fd,
                        PERF_FLAG_FD_CLOEXEC);
}

static int perf_add(void *handle, const char *event, char units[COUNTERS_UNITS_LEN], struct fr_err *why) {
    struct perf_handle *h = handle;
    units[0] = '\0';
    int k = sw_event_index(event);
    if (k < 0) return fr_err_set(why, "perf_event: not one of the kernel's software events");
    if (h->n >= COUNTERS_MAX_EVENTS) return fr_err_set(why, "perf_event: too many events");
    if ((pid_t)syscall(SYS_gettid) != h->tid)
        return fr_err_set(why, "perf_event: added from another thread than the one it counts");
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = sw_events[k].config;
    attr.disabled = h->n == 0; /* the leader starts the group */
    attr.read_format = PERF_FORMAT_GROUP;
    attr.exclude_hv = 1;
    int group = h->n ? h->fd[0] : -1;
    int fd = sys_perf_event_open(&attr, group);
    int e = errno;
    if (fd < 0 && (e == EACCES || e == EPERM)) {
        if (sw_events[k].in_kernel)
            return fr_err_set(
                why,
                "perf_event_open: %s (counted in the kernel, which needs perf_event_paranoid <= 1 "
                "or CAP_PERFMON; with the kernel excluded it would read 0)",
                strerror(e));
        attr.exclude_kernel = 1; /* task clock and faults count the same with the kernel excluded */
        fd = sys_perf_event_open(&attr, group);
        e = errno;
    }
    if (fd < 0) {
        const char *hint = e == ENOENT || e == ENODEV || e == ENOSYS ? " (this kernel has no software PMU)"
                           : e == EACCES || e == EPERM ? " (see /proc/sys/kernel/perf_event_paranoid)"
                                                       : "";
        return fr_err_set(why, "perf_event_open: %s%s", strerror(e), hint);
    }
    h->fd[h->n++] = fd;
    if (sw_events[k].config == PERF_COUNT_SW_TASK_CLOCK) snprintf(units, COUNTERS_UNITS_LEN, "ns");
    return 0;
}

static int perf_start(void *handle, struct fr_err *why) {
    struct perf_handle *h = handle;
    if (h->n == 0) return 0;
    if (ioctl(h->fd[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP) != 0 ||
        ioctl(h->fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) != 0)
        return fr_err_set(why, "perf_event: enabling the group: %s", strerror(errno));
    return 0;
}

static int perf_stop(void *handle, long long *values, struct fr_err *why) {
    struct perf_handle *h = handle;
    if (h->n == 0) return 0;
    if (ioctl(h->fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP) != 0)
        return fr_err_set(why, "perf_event: disabling the group: %s", strerror(errno));
    uint64_t buf[1 + COUNTERS_MAX_EVENTS]; /* PERF_FORMAT_GROUP: nr, then one value per member */
    ssize_t got = read(h->fd[0], buf, sizeof buf);
    if (got < (ssize_t)sizeof(uint64_t) || buf[0] != (uint64_t)h->n ||
        got < (ssize_t)((1 + (size_t)h->n) * sizeof(uint64_t)))
        return fr_err_set(why, "perf_event: reading the group: %s",
                          got < 0 ? strerror(errno) : "short read or member count differs");
    for (int i = 0; i < h->n; i++) values[i] = (long long)buf[1 + i];
    return 0;
}

static void perf_close(void *handle) {
    struct perf_handle *h = handle;
    if (!h) return;
    for (int i = h->n - 1; i >= 0; i--) close(h->fd[i]); /* members before their leader */
    free(h);
}

static const struct counters_source perf_source = {"perf_event", perf_open,  perf_add, perf_start,
                                                   perf_stop,    perf_close, NULL};

const struct counters_source *perf_events_source(void) {
    return &perf_source;
}

/* ---- PAPI first, the kernel for the software events it does not count ---- */

struct fallback_handle {
    const struct perf_events_fallback_config *cfg;
    void *first;                         /* NULL: the first source is skipped or did not open */
    char first_why[COUNTERS_REASON_LEN]; /* why not, when first is NULL */
    void *kernel;                        /* the perf_event handle */
    int n, n_first;                      /* events added, of which to the first source */
    bool by_first[COUNTERS_MAX_EVENTS];
    const char *last_origin;
};

static int fallback_open(const void *config, int thread, void **handle, struct fr_err *why) {
    const struct perf_events_fallback_config *cfg = config;
    if (!cfg || !cfg->first) return fr_err_set(why, "fallback source: no first source");
    struct fallback_handle *h = calloc(1, sizeof *h);
    if (!h) return fr_err_set(why, "fallback source: out of memory");
    h->cfg = cfg;
    struct fr_err first_why = {{0}};
    int n = 0;
    if (cfg->first_skipped)
        n = snprintf(h->first_why, sizeof h->first_why, "%s not used: %s", cfg->first->name,
                     cfg->first_skipped);
    else if (cfg->first->open(cfg->first_config, thread, &h->first, &first_why) != 0)
        n = snprintf(h->first_why, sizeof h->first_why, "%s: %s", cfg->first->name, first_why.msg),
        h->first = NULL;
    if (n >= (int)sizeof h->first_why) h->first_why[sizeof h->first_why - 1] = '\0'; /* cut, said as is */
    if (perf_open(NULL, thread, &h->kernel, why) != 0) {
        if (h->first) cfg->first->close(h->first);
        free(h);
        return -1;
    }
    *handle = h;
    return 0;
}

static int fallback_add(void *handle, const char *event, char units[COUNTERS_UNITS_LEN], struct fr_err *why) {
    struct fallback_handle *h = handle;
    if (h->n >= COUNTERS_MAX_EVENTS) return fr_err_set(why, "fallback source: too many events");
    struct fr_err first_why = {{0}}, kernel_why = {{0}};
    if (h->first && h->cfg->first->add(h->first, event, units, &first_why) == 0) {
        h->by_first[h->n++] = true, h->n_first++;
        h->last_origin = h->cfg->first->name;
        return 0;
    }
    if (!h->first) snprintf(first_why.msg, sizeof first_why.msg, "%s", h->first_why);
    if (sw_event_index(event) < 0) return fr_err_set(why, "%s", first_why.msg);
    if (perf_add(h->kernel, event, units, &kernel_why) == 0) {
        h->by_first[h->n++] = false;
        h->last_origin = perf_source.name;
        return 0;
    }
    return fr_err_set(why, "%s; and %s", first_why.msg, kernel_why.msg);
}

static int fallback_start(void *handle, struct fr_err *why) {
    struct fallback_handle *h = handle;
    if (h->n_first > 0 && h->cfg->first->start(h->first, why) != 0) return -1;
    if (perf_start(h->kernel, why) == 0) return 0;
    long long discard[COUNTERS_MAX_EVENTS];
    struct fr_err ignored = {{0}};
    if (h->n_first > 0) h->cfg->first->stop(h->first, discard, &ignored);
    return -1;
}

static int fallback_stop(void *handle, long long *values, struct fr_err *why) {
    struct fallback_handle *h = handle;
    long long first[COUNTERS_MAX_EVENTS] = {0}, kernel[COUNTERS_MAX_EVENTS] = {0};
    int rc = perf_stop(h->kernel, kernel, why);
    if (h->n_first > 0 && h->cfg->first->stop(h->first, first, rc ? NULL : why) != 0) rc = -1;
    if (rc) return -1;
    for (int i = 0, a = 0, b = 0; i < h->n; i++) values[i] = h->by_first[i] ? first[a++] : kernel[b++];
    return 0;
}

static void fallback_close(void *handle) {
    struct fallback_handle *h = handle;
    if (!h) return;
    perf_close(h->kernel);
    if (h->first) h->cfg->first->close(h->first);
    free(h);
}

static const char *fallback_origin(void *handle) {
    return ((struct fallback_handle *)handle)->last_origin;
}

static const struct counters_source fallback_source = {"papi+perf_event", fallback_open, fallback_add,
                                                       fallback_start,    fallback_stop, fallback_close,
                                                       fallback_origin};

const struct counters_source *perf_events_source_fallback(void) {
    return &fallback_source;
}
