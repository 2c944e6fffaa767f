/* Counters: the counting path with the fake source (values and calibration asserted), the fallback with the
 * fake source refusing (available == false with the reason), malformed --events lists, and PAPI on whatever
 * this machine offers: either counted, or not with a reason, never values without counting. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <string.h>

#include "roofline/counters.h"

static const char *const fake_events[] = {"PAPI_TOT_CYC", "PAPI_L3_TCM", "PAPI_FP_OPS", NULL};
static const long long fake_values[] = {1000, 50, 7};

static void region(void *ctx) {
    (*(int *)ctx)++;
}

Test(counters, fake_counts_defaults) {
    struct counters_fake_config cfg = {.events = fake_events, .per_run = fake_values};
    struct counters c;
    struct fr_err err = {{0}};
    cr_assert_eq(counters_open(&c, counters_source_fake(), &cfg, NULL, &err), 0, "%s", err.msg);
    cr_expect(c.available);
    cr_expect_eq(c.n_events, 4);
    cr_expect_eq(c.n_counted, 3);
    cr_expect_str_eq(c.reason, "1 of 4 events cannot be counted");
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
    cr_expect_eq(c.values[0], 1000);
    cr_expect_eq(c.values[1], 0); /* not counted: no value */
    cr_expect_eq(c.values[2], 50);
    cr_expect_eq(c.values[3], 7);

    /* 50 misses x 64 B = 3200 B counted over 6400 B known: ratio 0.5. */
    int calls = 0;
    struct counters_calibration cal;
    counters_calibrate(&c, region, &calls, 6400, 64, &cal);
    cr_expect(cal.available, "%s", cal.reason);
    cr_expect_eq(calls, 1);
    cr_expect_str_eq(cal.event, "PAPI_L3_TCM");
    cr_expect_eq(cal.counted_bytes, 3200);
    cr_expect_eq(cal.ratio, 0.5);

    cJSON *j = counters_to_json(&c, &cal);
    cr_assert(j);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(j, "available")));
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "events")), 4);
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "calibration"), "ratio")->valuedouble, 0.5);
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "calibration"), "line_bytes")->valuedouble, 64);
    cJSON_Delete(j);
    /* the line size is the caller's (hwloc's), not a constant: 128-byte lines count twice the bytes */
    counters_calibrate(&c, region, &calls, 6400, 128, &cal);
    cr_expect(cal.available, "%s", cal.reason);
    cr_expect_eq(cal.counted_bytes, 6400);
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
    cr_expect_eq(c.n_events, 4);
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
    cr_expect(strstr(c.reason, "none of the 4 events"), "reason: %s", c.reason);
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
    cr_expect_neq(counters_open(&c, counters_source_fake(), &cfg, "A,B,C,D,E,F,G,H,I", &err), 0);
    char longname[100];
    memset(longname, 'X', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    cr_expect_neq(counters_open(&c, counters_source_fake(), &cfg, longname, &err), 0);
}

Test(counters, papi_counts_or_says_why) {
    struct counters c;
    struct fr_err err = {{0}};
    cr_assert_eq(counters_open(&c, counters_source_papi(), NULL, NULL, &err), 0, "%s", err.msg);
    cr_expect_eq(c.n_events, 4);
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
