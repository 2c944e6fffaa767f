/* provenance.plan, the words that say what each figure of a run is the best or median of: the ceilings'
 * part follows the quick and full repetition counts, the field round-trips through run.json, and a run.json
 * written before the field existed still reads (the key is optional, the field stays empty). */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report/report_json.h"
#include "roofline/ceilings.h"
#include "roofline/timing.h"
#include "tests/report_fixture.h"

Test(report_plan, timing_opts_in_words) {
    char buf[64];
    timing_describe_opts(&(struct timing_opts){1, 10, 10, 0.0, NULL, NULL}, buf, sizeof buf);
    cr_expect_str_eq(buf, "10 runs");
    timing_describe_opts(&(struct timing_opts){1, 1, 1, 0.0, NULL, NULL}, buf, sizeof buf);
    cr_expect_str_eq(buf, "1 run");
    timing_describe_opts(&(struct timing_opts){2, 20, 400, 0.3, NULL, NULL}, buf, sizeof buf);
    cr_expect_str_eq(buf, "20 to 400 runs, at least 0.3 s");
    timing_describe_opts(&(struct timing_opts){2, 3, 50, 0.0, NULL, NULL}, buf, sizeof buf);
    cr_expect_str_eq(buf, "3 to 50 runs");
}

Test(report_plan, ceilings_quick_and_full) {
    char quick[512], full[512];
    ceilings_describe_plan(&(struct ceilings_opts){.quick = true}, quick, sizeof quick);
    ceilings_describe_plan(&(struct ceilings_opts){.quick = false}, full, sizeof full);
    cr_expect(strstr(quick, "DRAM read 10 runs;") && strstr(quick, "sgemm (n 1024) 3 runs"), "%s", quick);
    cr_expect(strstr(quick, "each cache level 30 runs"), "%s", quick);
    cr_expect(strstr(quick, "exp, kernel call and fork 5 runs; DRAM read in eighths 24 runs"), "%s", quick);
    /* the full run keeps STREAM's rule: at least 10 runs for every ceiling */
    cr_expect(strstr(full, "DRAM read 20 to 400 runs") && strstr(full, "sgemm (n 2048) 10 runs"), "%s", full);
    cr_expect(strstr(full, "each cache level 10 to 400 runs"), "%s", full);
}

Test(report_plan, round_trips_and_is_optional) {
    struct run_report *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    cr_assert(a && b);
    report_fixture_fill(a, 1.0);
    snprintf(a->prov.plan, sizeof a->prov.plan, "ceilings are the best of: DRAM read 10 runs");
    char *text = report_json_string(a);
    cr_assert_not_null(text);
    struct fr_err err = {{0}};
    cr_assert_eq(report_json_parse(text, strlen(text), "a", b, &err), 0, "%s", err.msg);
    cr_expect_str_eq(b->prov.plan, a->prov.plan);
    /* an older run.json: no "plan" key */
    cJSON *j = cJSON_Parse(text);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(j, "provenance"), "plan");
    char *old = cJSON_PrintUnformatted(j);
    cr_assert_eq(report_json_parse(old, strlen(old), "old", b, &err), 0, "%s", err.msg);
    cr_expect_str_eq(b->prov.plan, "");
    /* but a plan that is not a string is malformed */
    cJSON_AddNumberToObject(cJSON_GetObjectItem(j, "provenance"), "plan", 3);
    char *bad = cJSON_PrintUnformatted(j);
    cr_expect_neq(report_json_parse(bad, strlen(bad), "bad", b, &err), 0);
    cr_expect(strstr(err.msg, "plan") != NULL, "%s", err.msg);
    cJSON_Delete(j);
    free(text), free(old), free(bad), free(a), free(b);
}
