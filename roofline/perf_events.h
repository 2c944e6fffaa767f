/* The kernel's software events read with perf_event_open directly, as a counters source, and the run's
 * source that puts it behind PAPI: PAPI counts every event it can, the kernel the software events it cannot.
 * Debian 12's PAPI turns its perf_event component off altogether on a CPU libpfm4 does not know ("no default
 * PMU found", the Zen 5 VMs), and with it the software events the kernel offers any process about itself
 * (perf_event_paranoid 2). Each event says which source counted it (counters_event.source).
 *
 * Events: perf::TASK-CLOCK, perf::CONTEXT-SWITCHES (perf::CS), perf::CPU-MIGRATIONS, perf::PAGE-FAULTS,
 * perf::MINOR-FAULTS, perf::MAJOR-FAULTS. Each handle is one group in the calling thread (pid 0, any CPU),
 * enabled, disabled and read as a group. Switches and migrations are counted by the kernel on the kernel's
 * side of the task: with the kernel excluded (perf_event_paranoid 2 without CAP_PERFMON) they would read 0,
 * so they are refused then with that reason; task clock and page faults are counted with the kernel excluded.
 */
#ifndef FR_PERF_EVENTS_H
#define FR_PERF_EVENTS_H

#include "roofline/counters.h"

/* The perf_event source alone. config: NULL. */
const struct counters_source *perf_events_source(void);

/* The run's source: `first` (PAPI) for every event it counts, perf_events_source for the software events it
 * does not. first_skipped non-NULL: first is not used at all, and the text says why (e.g. the environment
 * asked so); its events are then refused with that reason. */
struct perf_events_fallback_config {
    const struct counters_source *first;
    const void *first_config;
    const char *first_skipped;
};
const struct counters_source *perf_events_source_fallback(void); /* config: perf_events_fallback_config */

#endif
