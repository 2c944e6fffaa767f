/* forge-roofline machine end to end (the sanitized binary, through tests/cli_run): bad options exit 2, and
 * --format json with tiny test sizes carries the documented keys and passes validation. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "tests/cli_run.h"

Test(cmd_machine, bad_options_exit_2) {
    static const char *const bad[] = {
        "--format xml", "--threads 0", "--threads two", "--threads 100000",
        "--bogus",      "--threads",   "--quick=1",     "--events PAPI_TOT_CYC,,X",
    };
    static struct cli_result r;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[96];
        snprintf(args, sizeof args, "machine %s", bad[i]);
        cli_run(&r, 0, args);
        cr_expect_eq(r.status, 2, "'%s' exited %d", args, r.status);
        cr_expect(strstr(r.err, "forge-roofline: machine:"), "'%s' stderr: %s", args, r.err);
    }
}

/* A run started on fewer processors than the machine has (taskset -c N) keeps to them: more threads than it
 * may use are refused, and its one thread is bound inside its set, not to core 0 (binding with hwloc can
 * widen a process's mask, which is what it did before). The child inherits this thread's mask. */
Test(cmd_machine, keeps_to_its_cpu_affinity, .timeout = 120) {
    cpu_set_t all, one;
    cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
    if (CPU_COUNT(&all) < 2) cr_skip_test("one processor: no narrower set to start on");
    int last = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &all)) last = cpu;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
    static struct cli_result r;
    cli_run(&r, 0, "machine --threads 2 --test-sizes");
    cr_expect_eq(r.status, 2, "stderr: %s", r.err);
    cr_expect(strstr(r.err, "may run on 1 of the machine's"), "stderr: %s", r.err);
    cli_run(&r, 0, "machine --format json --test-sizes");
    sched_setaffinity(0, sizeof all, &all);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cJSON *j = cJSON_Parse(r.out);
    cr_assert(j, "not JSON: %s", r.out);
    cJSON *usable = cJSON_GetObjectItem(j, "usable_cores");
    cr_expect(cJSON_IsNumber(usable) && usable->valuedouble == 1, "usable_cores missing or not 1");
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "setup"), "threads")->valuedouble, 1);
    char pu[32];
    snprintf(pu, sizeof pu, "PUs P#%d\"", last);
    cr_expect(strstr(r.out, pu), "bound outside the set it started on (want %s): %s", pu, r.out);
    cJSON_Delete(j);
}

Test(cmd_machine, help_exits_0) {
    static struct cli_result r;
    cli_run(&r, 0, "machine --help");
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "--format"));
}

static void expect_figure(cJSON *ceilings, const char *key) {
    cJSON *f = cJSON_GetObjectItem(ceilings, key);
    cr_assert(cJSON_IsObject(f), "ceilings.%s missing", key);
    const char *fields[] = {"best", "median", "min", "max", "reps"};
    for (size_t i = 0; i < 5; i++)
        cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(f, fields[i])), "%s.%s", key, fields[i]);
}

Test(cmd_machine, json_keys, .timeout = 120) {
    static struct cli_result r;
    cli_run(&r, 0, "machine --format json --test-sizes --threads 1");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cJSON *j = cJSON_Parse(r.out);
    cr_assert(j, "not JSON: %s", r.out);
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "cores")));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "pus")));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "numa_nodes")));
    cJSON *caches = cJSON_GetObjectItem(j, "caches");
    cr_assert(cJSON_IsObject(caches));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(caches, "l1d")));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(caches, "l2")));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(caches, "l3")));
    cJSON *setup = cJSON_GetObjectItem(j, "setup");
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(setup, "timer_resolution_s")));
    cr_expect_eq(cJSON_GetObjectItem(setup, "threads")->valuedouble, 1);
    cJSON *ceil = cJSON_GetObjectItem(j, "ceilings");
    cr_assert(cJSON_IsObject(ceil));
    const char *keys[] = {"dram_read_gbs",       "dram_copy_gbs",        "dram_triad_gbs",
                          "peak_gflops",         "sgemm_gflops",         "dram_read_1core_gbs",
                          "dram_copy_1core_gbs", "dram_triad_1core_gbs", "peak_1core_gflops",
                          "sgemm_1core_gflops",  "plain_read_gbs"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) expect_figure(ceil, keys[i]);
    /* Cache levels exist as objects whether or not this machine has them. */
    const char *levels[] = {"l1_read_gbs", "l2_read_gbs", "l3_read_gbs"};
    for (size_t i = 0; i < 3; i++)
        cr_expect(cJSON_IsObject(cJSON_GetObjectItem(ceil, levels[i])), "%s", levels[i]);
    cr_expect_geq(cJSON_GetObjectItem(cJSON_GetObjectItem(ceil, "dram_read_gbs"), "reps")->valuedouble, 10);
    cJSON *cn = cJSON_GetObjectItem(j, "counters");
    cr_assert(cJSON_IsObject(cn));
    cJSON *avail = cJSON_GetObjectItem(cn, "available");
    cr_expect(cJSON_IsBool(avail));
    cr_expect(cJSON_IsString(cJSON_GetObjectItem(cn, "reason")));
    if (cJSON_IsFalse(avail)) cr_expect_gt(strlen(cJSON_GetObjectItem(cn, "reason")->valuestring), 0);
    cr_expect(cJSON_IsArray(cJSON_GetObjectItem(cn, "events")));
    /* the calibration's bytes per counted miss are the LLC line size hwloc gives, not a constant */
    cJSON *line = cJSON_GetObjectItem(caches, "llc_line_bytes");
    cJSON *cal_line = cJSON_GetObjectItem(cJSON_GetObjectItem(cn, "calibration"), "line_bytes");
    cr_expect(cJSON_IsNumber(line) && cJSON_IsNumber(cal_line) && line->valuedouble == cal_line->valuedouble,
              "caches.llc_line_bytes and counters.calibration.line_bytes differ or are missing");
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "validation"), "passed")));
    cJSON_Delete(j);
}

Test(cmd_machine, markdown_order, .timeout = 120) {
    static struct cli_result r;
    cli_run(&r, 0, "machine --test-sizes --threads 1");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    const char *out = r.out, *setup = strstr(out, "## Setup"), *topo = strstr(out, "## Topology"),
               *ceil = strstr(out, "## Ceilings"), *cn = strstr(out, "## Counters"),
               *agree = strstr(out, "plain loop"), *val = strstr(out, "validation: PASSED");
    cr_assert(setup && topo && ceil && cn && agree && val, "output: %s", out);
    cr_expect(setup < topo && topo < ceil && ceil < cn && cn < agree && agree < val);
    cr_expect(strstr(setup, "resolution"));
}
