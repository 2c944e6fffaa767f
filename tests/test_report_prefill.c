/* Prompt processing's report rows: run.json round trip (prefill.rows and the note), the pp finding with a
 * block above its roof named, the markdown section's table, and the compare key of a depth. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report/compare_verdict.h"
#include "bench/report/report_json.h"
#include "bench/report/report_prefill.h"

static void row(struct report_prefill *p, const char *block, double measured_s, double predicted_s) {
    p->prompt_len = 512, p->depth = 0;
    snprintf(p->block, sizeof p->block, "%s", block);
    snprintf(p->dtype, sizeof p->dtype, "bf16");
    snprintf(p->bound, sizeof p->bound, "%s", strcmp(block, "lm_head") ? "compute" : "memory");
    p->flops = 4.8e11, p->bytes = 6.4e9, p->dram_bytes = 1.7e9;
    p->measured.median_s = measured_s, p->measured.reps = 3;
    p->predicted_s = predicted_s, p->compute_roof_s = predicted_s, p->memory_roof_s = predicted_s / 10;
    p->efficiency = predicted_s / measured_s;
    p->above_roof = p->efficiency > 1;
}

static void fill(struct run_report *r) {
    report_init(r);
    r->n_prefill = 2;
    row(&r->prefill[0], "prefill", 2.0, 1.1);
    r->prefill[0].share = 1, r->prefill[0].tokens_per_s = 256, r->prefill[0].sample_s = 3e-4;
    r->prefill[0].ttft_s = 2.0003;
    row(&r->prefill[1], "lm_head", 0.006, 0.007);
    r->prefill[1].share = 0.003;
    snprintf(r->prefill_note, sizeof r->prefill_note, "3 to 5 runs");
}

static char *text_of(void (*write)(FILE *, const struct run_report *), const struct run_report *r) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    write(f, r);
    fclose(f);
    return buf;
}

Test(report_prefill, finding_names_pp_ttft_and_a_block_above_its_roof) {
    struct run_report *r = calloc(1, sizeof *r);
    cr_assert(r);
    fill(r);
    char *t = text_of(report_prefill_finding, r);
    cr_expect(strstr(t, "- Prompt processing: pp512 256.0 tokens/s (55 % of its compute roof)"), "%s", t);
    cr_expect(strstr(t, "time to first token 2000.3 ms"), "%s", t);
    cr_expect(strstr(t, "measured above their roof: `lm_head` at 117 % of its memory roof"), "%s", t);
    free(t);
    r->prefill[1].above_roof = false;
    t = text_of(report_prefill_finding, r);
    cr_expect(!strstr(t, "above their roof"), "%s", t);
    free(t);
    t = text_of(report_prefill_write_md, r);
    cr_expect(strstr(t, "## Prompt processing") && strstr(t, "| pp512 | 256.0 |") && strstr(t, "| lm_head |"),
              "%s", t);
    free(t);
    free(r);
}

Test(report_prefill, rows_round_trip_through_run_json) {
    struct run_report *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    cr_assert(a && b);
    fill(a);
    char *text = report_json_string(a);
    cr_assert(text);
    struct fr_err err = {{0}};
    cr_assert_eq(report_json_parse(text, strlen(text), "run.json", b, &err), 0, "%s", err.msg);
    cr_expect_eq(b->n_prefill, 2);
    cr_expect_str_eq(b->prefill[1].block, "lm_head");
    cr_expect_eq(b->prefill[0].ttft_s, a->prefill[0].ttft_s);
    cr_expect_eq(b->prefill[0].measured.median_s, 2.0);
    cr_expect_str_eq(b->prefill_note, "3 to 5 runs");
    cr_expect(report_prefill_total(b, 512, 0) == &b->prefill[0]);
    cr_expect(report_prefill_total(b, 512, 4) == NULL);
    free(text);
    free(a), free(b);
}

Test(report_prefill, compare_keys) {
    char k[64];
    compare_key_prefill_of(512, 0, k, sizeof k);
    cr_expect_str_eq(k, "pp@512");
    compare_key_prefill_of(128, 4096, k, sizeof k);
    cr_expect_str_eq(k, "pp@128+4096");
}
