/* Counters: the counting path with the fake source (values and calibration asserted), the fallback with the
 * fake source refusing (available == false with the reason), malformed --events lists, and PAPI on whatever
 * this machine offers: either counted, or not with a reason, never values without counting. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <string.h>
#include <time.h>

#include "roofline/counters.h"
#include "roofline/rep_counts.h"

static const char *const fake_events[] = {"PAPI_TOT_CYC", "PAPI_L3_TCM", "PAPI_FP_OPS", NULL};
static const long long fake_values[] = {1000, 50, 7};

static void region(void *ctx) {
    (*(int *)ctx)++;
}

Test(counters, fake_counts_defaults) {
    struct counters_fake_config cfg = {.events = fake_events, .per_run = fake_values};
    struct counters c;
    struct fr_err err = {{0}};
    omp_set_num_threads(2); /* a team of two, whatever the machine */
    cr_assert_eq(counters_open(&c, counters_source_fake(), &cfg, NULL, &err), 0, "%s", err.msg);
    cr_expect(c.available);
    cr_expect_eq(c.n_threads, 2);
    cr_expect_eq(c.n_events, 9, "4 hardware and 5 software events");
    cr_expect_eq(c.n_counted, 3);
    cr_expect_str_eq(c.reason, "6 of 9 events cannot be counted");
    cr_expect_str_eq(c.events[4].name, "perf::TASK-CLOCK");
    cr_expect(strstr(c.events[4].reason, "not offered"), "reason: %s", c.events[4].reason);
    cr_expect_str_eq(c.events[0].name, "PAPI_TOT_CYC");
    cr_expect(c.events[0].counted);
    cr_expect_str_eq(c.events[1].name, "PAPI_TOT_INS");
    cr_expect_not(c.events[1].counted);
    cr_expect(strstr(c.events[1].reason, "not offered"), "reason: %s", c.events[1].reason);
    cr_expect(c.events[2].counted && c.events[2].llc_misses);
    cr_expect_str_eq(c.events[3].name, "PAPI_FP_OPS"); /* PAPI_SP_OPS refused, the alternative taken */
    cr_expect(c.events[3].counted);

    cr_assert_eq(counters_start(&c), 0);
    cr_assert_eq(counters_stop(&c), 0);
    /* every thread counts its own 1000 cycles: the sum is the team's, the maximum one thread's */
    cr_expect_eq(c.values[0], 2000);
    cr_expect_eq(c.thread_max[0], 1000);
    cr_expect_eq(c.per_thread[1][0], 1000);
    cr_expect_eq(c.values[1], 0); /* not counted: no value */
    cr_expect_eq(c.values[2], 100);
    cr_expect_eq(c.values[3], 14);
    cr_expect_eq(counters_role_value(&c, COUNTERS_ROLE_CYCLES), 2000);
    cr_expect_eq(counters_role_value(&c, COUNTERS_ROLE_INSTRUCTIONS), -1, "not counted: no value");
    cr_expect_eq(counters_role_value(&c, COUNTERS_ROLE_LLC_MISSES), 100);

    /* 2 threads x 50 misses x 64 B = 6400 B counted over 12800 B known: ratio 0.5. */
    int calls = 0;
    struct counters_calibration cal;
    counters_calibrate(&c, region, &calls, 12800, 64, &cal);
    cr_expect(cal.available, "%s", cal.reason);
    cr_expect_eq(calls, 1);
    cr_expect_str_eq(cal.event, "PAPI_L3_TCM");
    cr_expect_eq(cal.counted_bytes, 6400);
    cr_expect_eq(cal.ratio, 0.5);

    cJSON *j = counters_to_json(&c, &cal);
    cr_assert(j);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(j, "available")));
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "events")), 9);
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "calibration"), "ratio")->valuedouble, 0.5);
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "calibration"), "line_bytes")->valuedouble, 64);
    cJSON_Delete(j);
    /* the line size is the caller's (hwloc's), not a constant: 128-byte lines count twice the bytes */
    counters_calibrate(&c, region, &calls, 6400, 128, &cal);
    cr_expect(cal.available, "%s", cal.reason);
    cr_expect_eq(cal.counted_bytes, 12800, "2 threads x 50 misses x 128 B");
    /* an unknown line size (hwloc gives 0) is unavailable, with the reason, and nothing is counted */
    calls = 0;
    counters_calibrate(&c, region, &calls, 6400, 0, &cal);
    cr_expect_not(cal.available);
    cr_expect_eq(calls, 0);
    cr_expect(strstr(cal.reason, "cache-line size") != NULL, "%s", cal.reason);
    counters_close(&c);
}

Test(counters, fake_counts_named_events) {
    struct counters_fake_config cfg = {.events = fake_events, .per_run = fake_values};
    struct counters c;
    struct fr_err err = {{0}};
    omp_set_num_threads(1);
    cr_assert_eq(counters_open(&c, counters_source_fake(), &cfg, "PAPI_FP_OPS,PAPI_TOT_CYC", &err), 0, "%s",
                 err.msg);
    cr_expect(c.available);
    cr_expect_str_eq(c.reason, "");
    cr_assert_eq(counters_start(&c), 0);
    cr_assert_eq(counters_stop(&c), 0);
    cr_expect_eq(c.values[0], 7);
    cr_expect_eq(c.values[1], 1000);
    /* No LLC-miss event among them: the calibration says so. */
    int calls = 0;
    struct counters_calibration cal;
    counters_calibrate(&c, region, &calls, 6400, 64, &cal);
    cr_expect_not(cal.available);
    cr_expect_eq(calls, 0);
    cr_expect(strstr(cal.reason, "miss"), "reason: %s", cal.reason);
    counters_close(&c);
}

Test(counters, fallback_when_source_refuses) {
    struct counters_fake_config cfg = {.refuse_all = "no virtual PMU in this VM"};
    struct counters c;
    struct fr_err err = {{0}};
    cr_assert_eq(counters_open(&c, counters_source_fake(), &cfg, NULL, &err), 0, "%s", err.msg);
    cr_expect_not(c.available);
    cr_expect(strstr(c.reason, "no virtual PMU in this VM"), "reason: %s", c.reason);
    cr_expect_eq(c.n_counted, 0);
    cr_expect_eq(c.n_events, 9);
    for (int i = 0; i < c.n_events; i++) {
        cr_expect_not(c.events[i].counted);
        cr_expect(strstr(c.events[i].reason, "no virtual PMU"), "event %d: %s", i, c.events[i].reason);
    }
    cr_expect_neq(counters_start(&c), 0);
    cr_expect_neq(counters_stop(&c), 0);
    int calls = 0;
    struct counters_calibration cal;
    counters_calibrate(&c, region, &calls, 6400, 64, &cal);
    cr_expect_not(cal.available);
    cr_expect(strstr(cal.reason, "no virtual PMU"), "reason: %s", cal.reason);
    cJSON *j = counters_to_json(&c, &cal);
    cr_assert(j);
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(j, "available")));
    cr_expect(strstr(cJSON_GetObjectItem(j, "reason")->valuestring, "no virtual PMU"));
    cJSON_Delete(j);
    counters_close(&c);
}

Test(counters, fallback_when_no_event_or_start_fails) {
    static const char *const none[] = {NULL};
    struct counters_fake_config cfg = {.events = none};
    struct counters c;
    struct fr_err err = {{0}};
    cr_assert_eq(counters_open(&c, counters_source_fake(), &cfg, NULL, &err), 0);
    cr_expect_not(c.available);
    cr_expect(strstr(c.reason, "none of the 9 events"), "reason: %s", c.reason);
    counters_close(&c);

    struct counters_fake_config late = {
        .events = fake_events, .per_run = fake_values, .refuse_start = "EPERM"};
    cr_assert_eq(counters_open(&c, counters_source_fake(), &late, "PAPI_TOT_CYC", &err), 0);
    cr_expect_not(c.available, "a source that cannot start is unavailable after the probe");
    cr_expect(strstr(c.reason, "EPERM"), "reason: %s", c.reason);
    cr_expect_not(c.events[0].counted);
    counters_close(&c);
}

Test(counters, malformed_lists) {
    struct counters_fake_config cfg = {.events = fake_events, .per_run = fake_values};
    struct counters c;
    struct fr_err err = {{0}};
    cr_expect_neq(counters_open(&c, counters_source_fake(), &cfg, "", &err), 0);
    cr_expect_neq(counters_open(&c, counters_source_fake(), &cfg, "PAPI_TOT_CYC,,PAPI_TOT_INS", &err), 0);
    cr_expect(strstr(err.msg, "empty"), "message: %s", err.msg);
    cr_expect_neq(counters_open(&c, counters_source_fake(), &cfg, "A,B,C,D,E,F,G,H,I,J,K,L,M", &err), 0);
    char longname[100];
    memset(longname, 'X', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    cr_expect_neq(counters_open(&c, counters_source_fake(), &cfg, longname, &err), 0);
}

Test(counters, papi_counts_or_says_why) {
    struct counters c;
    struct fr_err err = {{0}};
    cr_assert_eq(counters_open(&c, counters_source_papi(), NULL, NULL, &err), 0, "%s", err.msg);
    cr_expect_eq(c.n_events, 9);
    if (c.available) {
        cr_expect_gt(c.n_counted, 0);
        cr_expect_eq(counters_start(&c), 0, "%s", c.reason);
        cr_expect_eq(counters_stop(&c), 0, "%s", c.reason);
    } else {
        cr_expect_gt(strlen(c.reason), 0, "unavailable without a reason");
        cr_expect_eq(c.n_counted, 0);
        for (int i = 0; i < c.n_events; i++) cr_expect_gt(strlen(c.events[i].reason), 0, "event %d", i);
        cr_expect_neq(counters_start(&c), 0);
    }
    counters_close(&c);
}

/* The fake team reports a context switch in thread 1 on runs 3 and 5 (run 0 is counters_open's probe, so
 * timed repetitions 2 and 4): exactly those are marked, left out of the statistics and counted. */
static const char *const sw_events[] = {"perf::TASK-CLOCK",  "perf::CONTEXT-SWITCHES", "perf::CPU-MIGRATIONS",
                                        "perf::PAGE-FAULTS", "perf::MAJOR-FAULTS",     NULL};
static const long long sw_values[] = {1000000, 0, 0, 0, 0}; /* 1 ms of task-clock per thread per run */

static void work(void *ctx, long rep) {
    (void)rep;
    (*(int *)ctx)++;
}

Test(counters, disturbed_repetitions_with_fake_source) {
    static const long runs[] = {3, 5, -1};
    struct counters_fake_config cfg = {.events = sw_events,
                                       .per_run = sw_values,
                                       .bump_event = "perf::CONTEXT-SWITCHES",
                                       .bump_runs = runs,
                                       .bump_thread = 1};
    struct counters c;
    struct fr_err err = {{0}};
    omp_set_num_threads(2);
    cr_assert_eq(counters_open(&c, counters_source_fake(), &cfg, NULL, &err), 0, "%s", err.msg);
    cr_assert(c.available, "%s", c.reason);
    struct rep_counts rc;
    cr_assert_eq(rep_counts_init(&rc, &c, NULL, 8, &err), 0);
    struct timing_opts o = {.warmup = 2, .min_reps = 8, .max_reps = 8, .hooks = &rc.hooks};
    struct timing_stats st;
    int calls = 0;
    cr_assert_eq(timing_measure(work, &calls, &o, &st), 0);
    cr_expect_eq(calls, 10);
    cr_expect_eq(st.excluded_reps, 2);
    cr_expect_eq(st.reps, 6, "statistics over the 6 undisturbed repetitions");
    for (int i = 0; i < 8; i++) cr_expect_eq(rc.disturbed[i], i == 2 || i == 4, "repetition %d", i);
    struct rep_counts_summary s;
    rep_counts_summarize(&rc, &s);
    cr_expect(s.counted);
    cr_expect_eq(s.reps, 8);
    cr_expect_eq(s.disturbed_reps, 2);
    cr_expect_eq(s.faulted_reps, 0);
    const int tc = c.role_index[COUNTERS_ROLE_TASK_CLOCK_NS],
              cs = c.role_index[COUNTERS_ROLE_CONTEXT_SWITCHES];
    cr_assert(tc >= 0 && cs >= 0);
    cr_expect_eq(s.per_rep[tc], 2e6, "task-clock summed over two threads");
    cr_expect_eq(s.thread_max[tc], 1e6);
    cr_expect_eq(s.per_rep[cs], 0.25, "two switches over eight repetitions");
    cr_expect(isnan(s.per_rep[0]), "PAPI_TOT_CYC is not offered: no value");
    cr_expect(isnan(s.ipc), "no cycles counted: no IPC");
    cr_expect(isnan(s.energy_j), "no energy set: no energy");
    rep_counts_free(&rc);
    counters_close(&c);
}

/* Utilization from known task-clock over the counted windows; page faults flag their repetition. */
Test(counters, utilization_and_faults_from_known_counts) {
    static const long runs[] = {2, -1};
    struct counters_fake_config cfg = {.events = sw_events,
                                       .per_run = sw_values,
                                       .bump_event = "perf::PAGE-FAULTS",
                                       .bump_runs = runs,
                                       .bump_thread = 0};
    struct counters c;
    struct fr_err err = {{0}};
    omp_set_num_threads(2);
    cr_assert_eq(counters_open(&c, counters_source_fake(), &cfg, NULL, &err), 0, "%s", err.msg);
    struct rep_counts rc;
    cr_assert_eq(rep_counts_init(&rc, &c, NULL, 4, &err), 0);
    /* 4 repetitions, each 2 threads x 1 ms of task-clock; the windows are the threads' own, start to stop */
    for (int i = 0; i < 4; i++) {
        rc.hooks.begin(rc.hooks.ctx, i);
        cr_expect_not(rc.hooks.end(rc.hooks.ctx, i, 1e-3));
    }
    struct rep_counts_summary s;
    rep_counts_summarize(&rc, &s);
    cr_assert_gt(rc.window_thread_s, 0);
    cr_expect(fabs(s.utilization - 8e-3 / rc.window_thread_s) < 1e-12, "utilization %g", s.utilization);
    cr_expect_eq(s.faulted_reps, 1);
    cr_expect(rc.faulted[1], "run 2 is timed repetition 1");
    cr_expect_eq(s.median_all_s, 1e-3);
    rep_counts_reset(&rc);
    cr_expect_eq(rc.window_thread_s, 0);
    rep_counts_free(&rc);
    counters_close(&c);
}

/* Energy: the units the source gives turn counts into joules (nJ and uJ here), summed over the events. */
Test(counters, energy_with_fake_source) {
    static const char *const names[] = {"rapl:::PACKAGE_ENERGY:PACKAGE0", "rapl:::DRAM_ENERGY:PACKAGE0",
                                        NULL};
    static const char *const units[] = {"nJ", "uJ"};
    static const long long per_run[] = {5000000000LL, 2000000};
    struct counters_fake_config cfg = {.events = names, .per_run = per_run, .units = units};
    struct counters e;
    struct fr_err err = {{0}};
    cr_assert_eq(counters_open_energy(&e, counters_source_fake(), &cfg, &err), 0, "%s", err.msg);
    cr_assert(e.available, "%s", e.reason);
    cr_expect_eq(e.n_threads, 1, "energy is package-wide: the calling thread alone");
    cr_expect_eq(e.events[0].role, COUNTERS_ROLE_ENERGY);
    struct rep_counts rc;
    cr_assert_eq(rep_counts_init(&rc, NULL, &e, 3, &err), 0);
    for (int i = 0; i < 3; i++) rc.hooks.begin(rc.hooks.ctx, i), rc.hooks.end(rc.hooks.ctx, i, 0.5);
    struct rep_counts_summary s;
    rep_counts_summarize(&rc, &s);
    cr_expect(fabs(s.energy_j - 7.0) < 1e-9, "5 J package + 2 J DRAM per repetition, got %g", s.energy_j);
    cr_expect_not(s.counted, "no team counters");
    cr_expect(isnan(s.utilization));
    rep_counts_free(&rc);
    counters_close(&e);

    /* a source without the events: unavailable, each with the reason */
    static const char *const none[] = {NULL};
    struct counters_fake_config empty = {.events = none};
    cr_assert_eq(counters_open_energy(&e, counters_source_fake(), &empty, &err), 0);
    cr_expect_not(e.available);
    cr_expect_eq(e.n_events, 2);
    cr_expect(strstr(e.events[0].reason, "not offered"), "%s", e.events[0].reason);
    counters_close(&e);
}

static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* PAPI's software events in a two-thread busy region: each thread spins until it has used 30 ms of CPU
 * (its own CLOCK_THREAD_CPUTIME_ID, the kernel's independent account). The summed task-clock must lie
 * between the two threads' busy CPU time and the process's CPU time over the counted window, the per-thread
 * maximum near one thread's; when no thread was switched out or migrated, the sum is about twice the
 * region's wall time. Skipped, with PAPI's reason, where PAPI refuses. */
Test(counters, papi_two_thread_task_clock) {
    struct counters c;
    struct fr_err err = {{0}};
    omp_set_num_threads(2);
    cr_assert_eq(counters_open(&c, counters_source_papi(), NULL,
                               "perf::TASK-CLOCK,perf::CONTEXT-SWITCHES,perf::CPU-MIGRATIONS", &err),
                 0, "%s", err.msg);
    if (!c.available || c.role_index[COUNTERS_ROLE_TASK_CLOCK_NS] < 0) {
        cr_log_warn("SKIPPED: PAPI does not count perf::TASK-CLOCK here: %s", c.reason);
        counters_close(&c);
        cr_skip_test("PAPI does not count perf::TASK-CLOCK here: %s", c.reason);
    }
    double cpu[2] = {0, 0};
    struct timespec p0, p1, w0, w1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p0);
    cr_assert_eq(counters_start(&c), 0, "%s", c.reason);
    clock_gettime(CLOCK_MONOTONIC, &w0);
#pragma omp parallel num_threads(2)
    {
        double t0 = thread_cpu_s();
        volatile double x = 0;
        while (thread_cpu_s() - t0 < 0.03) x += 1;
        cpu[omp_get_thread_num()] = thread_cpu_s() - t0;
    }
    clock_gettime(CLOCK_MONOTONIC, &w1);
    cr_assert_eq(counters_stop(&c), 0, "%s", c.reason);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p1);
    double wall = (double)(w1.tv_sec - w0.tv_sec) + 1e-9 * (double)(w1.tv_nsec - w0.tv_nsec);
    double proc = (double)(p1.tv_sec - p0.tv_sec) + 1e-9 * (double)(p1.tv_nsec - p0.tv_nsec);
    double task = (double)counters_role_value(&c, COUNTERS_ROLE_TASK_CLOCK_NS) * 1e-9;
    double tmax = (double)c.thread_max[c.role_index[COUNTERS_ROLE_TASK_CLOCK_NS]] * 1e-9;
    /* at least both threads' busy CPU time (one thread alone would show about half), at most the process's
     * CPU time over the counted window (which adds the barrier spin and the start and stop regions) */
    cr_expect(task >= 0.95 * (cpu[0] + cpu[1]) && task <= 1.05 * proc + 1e-3,
              "task-clock %.4f s, threads' busy CPU time %.4f + %.4f s, process CPU time %.4f s", task,
              cpu[0], cpu[1], proc);
    cr_expect(tmax < 0.7 * task, "one thread's maximum %.4f s of the team's %.4f s", tmax, task);
    long long cs = counters_role_value(&c, COUNTERS_ROLE_CONTEXT_SWITCHES);
    long long mig = counters_role_value(&c, COUNTERS_ROLE_MIGRATIONS);
    if (cs == 0 && mig == 0)
        cr_expect(task / wall > 1.8 && task / wall < 2.05, "undisturbed: task-clock %.4f s over wall %.4f s",
                  task, wall);
    else
        cr_log_info("region disturbed (%lld switches, %lld migrations): task-clock/wall %.2f not checked", cs,
                    mig, task / wall);
    counters_close(&c);
}

/* With hardware events: IPC = instructions / cycles, summed over the team. */
Test(counters, ipc_from_fake_hardware_events) {
    static const char *const hw[] = {"PAPI_TOT_CYC", "PAPI_TOT_INS", NULL};
    static const long long per_run[] = {2000, 3000};
    struct counters_fake_config cfg = {.events = hw, .per_run = per_run};
    struct counters c;
    struct fr_err err = {{0}};
    omp_set_num_threads(2);
    cr_assert_eq(counters_open(&c, counters_source_fake(), &cfg, NULL, &err), 0, "%s", err.msg);
    struct rep_counts rc;
    cr_assert_eq(rep_counts_init(&rc, &c, NULL, 2, &err), 0);
    for (int i = 0; i < 2; i++) rc.hooks.begin(rc.hooks.ctx, i), rc.hooks.end(rc.hooks.ctx, i, 1e-3);
    struct rep_counts_summary s;
    rep_counts_summarize(&rc, &s);
    cr_expect_eq(s.ipc, 1.5);
    cr_expect(isnan(s.utilization), "no task-clock counted: no utilization");
    cr_expect_eq(s.disturbed_reps, 0, "no switch events counted: nothing is marked");
    rep_counts_free(&rc);
    counters_close(&c);
}
