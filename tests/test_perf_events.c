/* The kernel's software events read with perf_event_open (roofline/perf_events.h): a thread's page faults
 * and context switches against that thread's own getrusage counts (two independent accounts of the kernel),
 * task clock within its counted window; the fallback behind a first source that offers only a hardware event
 * (each event names the source that counted it); the first source skipped (FORGE_ROOFLINE_NO_PAPI), said
 * once as the hardware note; and the CLI's `list` under FORGE_ROOFLINE_NO_PAPI=1. Where the kernel refuses
 * perf_event_open altogether (a container's seccomp, paranoid 3), the refusal must carry a reason, and the
 * checks that need counts are skipped and say so. */
#include <criterion/criterion.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "roofline/counters.h"
#include "roofline/perf_events.h"
#include "tests/cli_run.h"

static void thread_usage(long *minflt, long *switches) {
    struct rusage ru;
    cr_assert_eq(getrusage(RUSAGE_THREAD, &ru), 0);
    *minflt = ru.ru_minflt;
    *switches = ru.ru_nvcsw + ru.ru_nivcsw;
}

Test(perf_events, counts_a_threads_faults_and_switches_as_getrusage_does) {
    omp_set_num_threads(1);
    struct counters c;
    struct fr_err err = {{0}};
    cr_assert_eq(counters_open(&c, perf_events_source(), NULL,
                               "perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES,perf::TASK-CLOCK", 1, &err),
                 0, "%s", err.msg);
    if (!c.available) {
        cr_expect_gt(strlen(c.reason), 0, "refused without a reason");
        counters_close(&c);
        cr_skip_test("the kernel refuses perf_event_open here: %s", c.reason);
    }
    for (int i = 0; i < 3; i++)
        cr_assert(c.events[i].counted, "%s: %s", c.events[i].name, c.events[i].reason);
    cr_expect_str_eq(c.events[0].source, "perf_event");
    const size_t pages = 256, page = (size_t)sysconf(_SC_PAGESIZE);
    char *buf = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(buf, MAP_FAILED);
    madvise(buf, pages * page, MADV_NOHUGEPAGE); /* one fault a page */
    long flt0, sw0, flt1, sw1;
    cr_assert_eq(counters_start(&c), 0, "%s", c.reason);
    thread_usage(&flt0, &sw0);
    for (size_t p = 0; p < pages; p++) buf[p * page] = 1;
    for (int s = 0; s < 5; s++) usleep(200); /* a sleep is a voluntary switch */
    thread_usage(&flt1, &sw1);
    cr_assert_eq(counters_stop(&c), 0, "%s", c.reason);
    munmap(buf, pages * page);
    long long faults = c.values[0], switches = c.values[1], task_ns = c.values[2];
    /* the counted window holds the getrusage window and the two getrusage calls around it, nothing more */
    cr_expect(faults >= flt1 - flt0 && faults <= flt1 - flt0 + 4, "perf faults %lld, getrusage %ld", faults,
              flt1 - flt0);
    cr_expect_geq(flt1 - flt0, (long)pages / 2, "the touches fault: getrusage %ld", flt1 - flt0);
    cr_expect(switches >= sw1 - sw0 && switches <= sw1 - sw0 + 2, "perf switches %lld, getrusage %ld",
              switches, sw1 - sw0);
    cr_expect_geq(switches, 5, "five sleeps switch out five times: %lld", switches);
    cr_expect(task_ns > 0 && task_ns <= (long long)(c.window_s[0] * 1e9 * 1.01) + 100000,
              "task clock %lld ns in a window of %.6f s", task_ns, c.window_s[0]);
    counters_close(&c);
}

Test(perf_events, refuses_what_it_does_not_know) {
    omp_set_num_threads(1);
    struct counters c;
    struct fr_err err = {{0}};
    cr_assert_eq(counters_open(&c, perf_events_source(), NULL, "PAPI_TOT_CYC", 1, &err), 0, "%s", err.msg);
    cr_expect_not(c.available);
    cr_expect(strstr(c.events[0].reason, "not one of the kernel's software events"), "%s",
              c.events[0].reason);
    counters_close(&c);
}

static const char *const cycles_only[] = {"PAPI_TOT_CYC", NULL};
static const long long thousand[] = {1000};

/* A first source that counts only cycles: the software events come from the kernel, each naming its source,
 * in both threads of the team; the values merge in the order asked. */
Test(perf_events, fallback_takes_the_software_events_the_first_source_refuses) {
    omp_set_num_threads(2);
    struct counters_fake_config fake = {.events = cycles_only, .per_run = thousand};
    struct perf_events_fallback_config cfg = {.first = counters_source_fake(), .first_config = &fake};
    struct counters c;
    struct fr_err err = {{0}};
    cr_assert_eq(counters_open(&c, perf_events_source_fallback(), &cfg, NULL, 2, &err), 0, "%s", err.msg);
    cr_assert(c.available, "%s", c.reason);
    cr_expect(c.events[0].counted);
    cr_expect_str_eq(c.events[0].source, "fake");
    cr_expect_str_eq(c.hardware_note, "", "cycles are counted: no note");
    cr_expect_str_eq(c.events[9].source, "getrusage");
    int tc = c.role_index[COUNTERS_ROLE_TASK_CLOCK_NS];
    if (tc < 0) {
        cr_expect_gt(strlen(c.events[4].reason), 0);
        counters_close(&c);
        cr_skip_test("the kernel refuses perf_event_open here: %s", c.events[4].reason);
    }
    cr_expect_str_eq(c.events[tc].source, "perf_event");
    cr_assert_eq(counters_start(&c), 0, "%s", c.reason);
    volatile double x = 0;
#pragma omp parallel num_threads(2) reduction(+ : x)
    for (int i = 0; i < 2000000; i++) x += i * 1e-9;
    cr_assert_eq(counters_stop(&c), 0, "%s", c.reason);
    cr_expect_eq(c.values[0], 2000, "the fake's cycles in each of two threads");
    cr_expect_gt(c.per_thread[0][tc], 0);
    cr_expect_gt(c.per_thread[1][tc], 0, "the second thread counts its own task clock");
    cr_expect_leq((double)c.values[tc], c.window_thread_s * 1e9 * 1.01 + 200000);
    counters_close(&c);
}

Test(perf_events, first_source_skipped_is_said_once) {
    omp_set_num_threads(1);
    struct counters_fake_config fake = {.events = cycles_only, .per_run = thousand};
    struct perf_events_fallback_config cfg = {
        .first = counters_source_fake(), .first_config = &fake, .first_skipped = "asked not to"};
    struct counters c;
    struct fr_err err = {{0}};
    cr_assert_eq(counters_open(&c, perf_events_source_fallback(), &cfg, NULL, 1, &err), 0, "%s", err.msg);
    cr_expect_not(c.events[0].counted);
    cr_expect_str_eq(c.events[0].reason, "fake not used: asked not to");
    cr_expect(
        strstr(c.hardware_note, "none of the 4 hardware events is counted (PAPI_TOT_CYC: fake not used"),
        "%s", c.hardware_note);
    counters_close(&c);
}

Test(perf_events, list_under_no_papi_names_the_kernel, .timeout = 60) {
    static struct cli_result r;
    setenv("FORGE_ROOFLINE_NO_PAPI", "1", 1);
    cli_run(&r, 1, "list");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "papi not used: FORGE_ROOFLINE_NO_PAPI is set"), "%s", r.out);
    cr_expect(strstr(r.out, "| rusage::INVOLUNTARY-SWITCHES | yes | getrusage |"), "%s", r.out);
    bool kernel = strstr(r.out, "| perf::TASK-CLOCK | yes | perf_event |") != NULL;
    cr_expect(kernel || strstr(r.out, "| perf::TASK-CLOCK | no |  | papi not used"), "%s", r.out);
}
