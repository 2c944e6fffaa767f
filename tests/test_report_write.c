/* The run.json / CSV / markdown writers against the output contract (docs/run-folder.md), on a hand-filled
 * run_report: every key and header, nulls for unmeasured values, and above-roof rows called accounting
 * errors. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>

#include "bench/report/report_counted.h"
#include "bench/report/report_json.h"
#include "bench/report/report_write.h"
#include "roofline/rep_counts.h"
#include "tests/report_fixture.h"
#include "tests/report_testutil.h"

static struct run_report *fixture(void) {
    struct run_report *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    report_fixture_fill(r, 1.0);
    return r;
}

static cJSON *parse_file(const char *dir, const char *name) {
    char *text = tu_slurp(dir, name);
    cr_assert_not_null(text, "%s not written", name);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(root, "%s does not parse", name);
    return root;
}

static void expect_keys(const cJSON *o, const char *const *keys, const char *where) {
    for (const char *const *k = keys; *k; k++)
        cr_expect(cJSON_HasObjectItem(o, *k), "%s: missing key '%s'", where, *k);
}

Test(report_write, fmt_exact_and_md) {
    char b[REPORT_FMT_LEN];
    report_fmt_exact(NAN, b);
    cr_expect_str_eq(b, "");
    report_fmt_exact(INFINITY, b);
    cr_expect_str_eq(b, "");
    report_fmt_exact(1192099840.0, b);
    cr_expect_str_eq(b, "1192099840");
    report_fmt_exact(0.1, b);
    cr_expect_str_eq(b, "0.1");
    report_fmt_exact(1.0 / 3.0, b);
    cr_expect_eq(strtod(b, NULL), 1.0 / 3.0, "round trip of %s", b);
    report_fmt_md(NAN, 1e6, 1, b);
    cr_expect_str_eq(b, "n/a");
    report_fmt_md(0.0123, 1e3, 2, b);
    cr_expect_str_eq(b, "12.30");
}

Test(report_write, init_leaves_numbers_unmeasured) {
    struct run_report *r = calloc(1, sizeof *r);
    report_init(r);
    cr_expect(isnan(r->blocks[3].measured.median_s));
    cr_expect(isnan(r->steps[0].block_s[BLOCK_LM_HEAD]));
    cr_expect(isnan(r->ceilings[0].value));
    cr_expect_eq(r->sampler[0].nucleus, -1);
    cr_expect_eq(r->n_blocks, 0);
    cr_expect(report_is_above_roof(false, 1.2));
    cr_expect(report_is_above_roof(true, 0.5));
    cr_expect_not(report_is_above_roof(false, 1.0));
    cr_expect_not(report_is_above_roof(false, NAN));
    free(r);
}

Test(report_write, run_json_schema_and_keys) {
    struct run_report *r = fixture();
    r->blocks[BLOCK_EMBED].measured.median_s = NAN; /* unmeasured: must be null, not a number */
    r->blocks[BLOCK_EMBED].efficiency = NAN;
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    struct fr_err err = {{0}};
    cr_assert_eq(report_write_data(r, dir, &err), 0, "%s", err.msg);
    cJSON *root = parse_file(dir, "run.json");

    const cJSON *schema = cJSON_GetObjectItem(root, "schema");
    cr_expect(cJSON_IsString(schema) && strcmp(schema->valuestring, "forge-roofline/1") == 0);
    static const char *const top[] = {"schema", "provenance", "counters", "ceilings", "model",
                                      "blocks", "steps",      "sampler",  NULL};
    expect_keys(root, top, "run.json");
    static const char *const prov[] = {
        "version", "git_commit", "command_line", "host",         "utc",   "cpu", "topology",
        "threads", "dtype",      "kv_dtype",     "gemv_backend", "quick", NULL};
    expect_keys(cJSON_GetObjectItem(root, "provenance"), prov, "provenance");
    static const char *const cnt[] = {"available", "reason", "events", NULL};
    const cJSON *counters = cJSON_GetObjectItem(root, "counters");
    expect_keys(counters, cnt, "counters");
    cr_expect(cJSON_IsFalse(cJSON_GetObjectItem(counters, "available")));
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(counters, "events")), 2);

    const cJSON *blocks = cJSON_GetObjectItem(root, "blocks");
    cr_assert_eq(cJSON_GetArraySize(blocks), BLOCK_COUNT);
    static const char *const blk[] = {"name",  "calls", "flops",      "bytes",    "predicted_s", "measured_s",
                                      "min_s", "max_s", "efficiency", "counters", NULL};
    const cJSON *b;
    cJSON_ArrayForEach(b, blocks) expect_keys(b, blk, "block");
    const cJSON *embed = cJSON_GetArrayItem(blocks, BLOCK_EMBED);
    cr_expect_str_eq(cJSON_GetObjectItem(embed, "name")->valuestring, "embed");
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(embed, "measured_s")), "NaN must be written as null");
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(embed, "efficiency")));
    const cJSON *lm = cJSON_GetArrayItem(blocks, BLOCK_LM_HEAD);
    cr_expect_eq(cJSON_GetObjectItem(lm, "calls")->valuedouble, 1);
    cr_expect_eq(cJSON_GetObjectItem(lm, "bytes")->valuedouble, 151936.0 * 1024 * 2);
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(blocks, BLOCK_QKV_PROJ), "calls")->valuedouble, 28);
    /* Counters were unavailable: each event key is present with null. */
    const cJSON *lmc = cJSON_GetObjectItem(lm, "counters");
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(lmc, "PAPI_TOT_CYC")));

    const cJSON *steps = cJSON_GetObjectItem(root, "steps");
    cr_assert_eq(cJSON_GetArraySize(steps), 5);
    static const char *const stp[] = {"context",    "bytes",        "flops",      "predicted_s",
                                      "measured_s", "tokens_per_s", "efficiency", NULL};
    const cJSON *s;
    cJSON_ArrayForEach(s, steps) expect_keys(s, stp, "step");
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(steps, 2), "context")->valuedouble, 1024);

    const cJSON *sampler = cJSON_GetObjectItem(root, "sampler");
    cr_expect_eq(cJSON_GetArraySize(sampler), 24);
    static const char *const smp[] = {"variant",    "row_kind", "vocab", "nucleus",
                                      "measured_s", "min_s",    "max_s", NULL};
    cJSON_ArrayForEach(s, sampler) expect_keys(s, smp, "sampler");
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(sampler, 0), "nucleus")),
              "greedy: no nucleus");

    const cJSON *ceil = cJSON_GetObjectItem(root, "ceilings");
    cr_expect_eq(cJSON_GetArraySize(ceil), 7);
    const cJSON *l3 = cJSON_GetArrayItem(ceil, 6);
    cr_expect(cJSON_IsNull(cJSON_GetObjectItem(l3, "value")), "an unmeasured ceiling is null");
    cr_expect_str_eq(cJSON_GetObjectItem(l3, "why")->valuestring, "no L3 cache on this machine");
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(ceil, 0), "unit")->valuestring, "GB/s");
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(ceil, 4), "unit")->valuestring, "GFLOP/s");
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "model"), "name")->valuestring,
                     "qwen3-0.6b");
    cJSON_Delete(root);
    tu_rm_flat(dir);
    free(r);
}

Test(report_write, csv_headers_and_rows) {
    struct run_report *r = fixture();
    r->sampler[0].measured.median_s = NAN;
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    struct fr_err err = {{0}};
    cr_assert_eq(report_write_data(r, dir, &err), 0, "%s", err.msg);

    char *blocks = tu_slurp(dir, "blocks.csv");
    cr_assert_not_null(blocks);
    cr_expect(tu_starts(blocks,
                        "name,calls,flops,bytes,intensity_flop_per_byte,predicted_s,measured_s,min_s,max_s,"),
              "blocks.csv header: %.120s", blocks);
    cr_expect(strstr(blocks, ",PAPI_TOT_CYC,PAPI_L3_TCM,PAPI_TOT_CYC_thread_max,PAPI_L3_TCM_thread_max\n") !=
                  NULL,
              "counter columns in the header (sum over threads, then the largest thread)");
    cr_expect(strstr(blocks, ",utilization,disturbed_reps,faulted_reps,measured_all_s,ipc,") != NULL,
              "the counted columns");
    cr_expect(
        strstr(blocks,
               ",dram_bytes_counted,switched_reps,paired_read_gbs,paired_efficiency,own_read_gbs,"
               "own_read_efficiency,second_bound,second_term_s,steal_reps,steal_s,format,PAPI_TOT_CYC,") !=
            NULL,
        "switched_reps, then the paired read's and the own bytes read's columns, then the second term's, "
        "the steal's and the format's, appended after the older columns");
    cr_expect_eq(tu_count_lines(blocks), 1 + BLOCK_COUNT);
    cr_expect(strstr(blocks, "\nlm_head,1,311164928,311164928,1,") != NULL, "lm_head row");
    free(blocks);

    char *steps = tu_slurp(dir, "steps.csv");
    cr_assert_not_null(steps);
    cr_expect(tu_starts(steps, "context,bytes,flops,predicted_s,measured_s,"));
    cr_expect(strstr(steps, ",tokens_per_s,") &&
              strstr(steps, ",lm_head_s,sampler_s,PAPI_TOT_CYC,PAPI_L3_TCM,PAPI_TOT_CYC_thread_max,"));
    cr_expect(strstr(steps, ",utilization,disturbed_reps,faulted_reps,measured_all_s,ipc,energy_j,"
                            "energy_j_per_token,switched_reps,") != NULL,
              "the counted and energy columns");
    cr_expect_eq(tu_count_lines(steps), 6);
    free(steps);

    char *sampler = tu_slurp(dir, "sampler.csv");
    cr_assert_not_null(sampler);
    cr_expect(tu_starts(sampler,
                        "variant,row_kind,vocab,nucleus,measured_s,min_s,max_s,reps,cv,noisy,ci_lo_s,ci_hi_s,"
                        "ci_level,excluded_reps\n"));
    cr_expect(strstr(sampler, "\ngreedy,peaked,1024,,,") != NULL, "empty nucleus and measured_s for NaN");
    cr_expect_eq(tu_count_lines(sampler), 25);
    free(sampler);

    char *ceil = tu_slurp(dir, "ceilings.csv");
    cr_assert_not_null(ceil);
    cr_expect(tu_starts(ceil, "name,kind,unit,best,median,min,max,reps,one_core,roof,noisy,why\n"));
    cr_expect(strstr(ceil, "\ndram_read,bandwidth,GB/s,19.5,") != NULL);
    free(ceil);

    /* A CPU name with a comma and quotes must not break the plot inputs. */
    char *vars = tu_slurp(dir, "plot_vars.gp");
    cr_assert_not_null(vars);
    cr_expect(strstr(vars, "\"quoted\"'") != NULL);
    free(vars);
    tu_rm_flat(dir);
    free(r);
}

/* run.json carries the same bits as the CSV files: a value that needs 17 significant digits is written
 * in the CSV's exact text and reads back equal, not rounded to 15 digits. */
Test(report_write, json_numbers_match_csv_exactly) {
    struct run_report *r = fixture();
    const double v = 43.50819285699541; /* %.15g reads back within an epsilon but not to the same bits */
    r->blocks[BLOCK_LM_HEAD].measured.median_s = v;
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    struct fr_err err = {{0}};
    cr_assert_eq(report_write_data(r, dir, &err), 0, "%s", err.msg);
    char *json = tu_slurp(dir, "run.json"), *csv = tu_slurp(dir, "blocks.csv");
    cr_assert(json && csv);
    cr_expect(strstr(json, "\"measured_s\":\t43.50819285699541,") != NULL, "run.json text of %.17g", v);
    cr_expect(strstr(csv, ",43.50819285699541,") != NULL, "blocks.csv text of %.17g", v);
    cJSON *root = cJSON_Parse(json);
    cr_assert_not_null(root);
    const cJSON *lm = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "blocks"), BLOCK_LM_HEAD);
    cr_expect_eq(cJSON_GetObjectItem(lm, "measured_s")->valuedouble, v);
    cJSON_Delete(root);
    free(json);
    free(csv);
    tu_rm_flat(dir);
    free(r);
}

/* The data files and report.md of r, without gnuplot, into a new folder (its path in dir): report.md's text.
 */
static char *write_report_md(const struct run_report *r, char *dir, size_t dir_len) {
    tu_tmpdir(dir, dir_len);
    struct fr_err err = {{0}};
    cr_assert_eq(report_write_data(r, dir, &err), 0, "%s", err.msg);
    cr_assert_eq(report_write_markdown(r, dir, REPORT_PLOTS_NO_GNUPLOT, "gnuplot is not installed", &err), 0);
    char *md = tu_slurp(dir, "report.md");
    cr_assert_not_null(md);
    return md;
}

Test(report_write, markdown_flags_above_roof_and_noisy) {
    struct run_report *r = fixture();
    r->blocks[BLOCK_ATTENTION].efficiency = 1.3; /* faster than the roof allows */
    r->blocks[BLOCK_ROPE].measured.noisy = true;
    r->blocks[BLOCK_ROPE].measured.cv = 0.12;
    /* the interval around the median, relative: -10 % / +25 % at 75 % coverage */
    r->blocks[BLOCK_ROPE].measured.ci_lo_s = 0.9 * r->blocks[BLOCK_ROPE].measured.median_s;
    r->blocks[BLOCK_ROPE].measured.ci_hi_s = 1.25 * r->blocks[BLOCK_ROPE].measured.median_s;
    r->blocks[BLOCK_ROPE].measured.ci_level = 0.75;
    r->blocks[BLOCK_ROPE].measured.excluded_reps = 2;
    r->blocks[BLOCK_SWIGLU].measured.median_s = NAN;
    char dir[256];
    char *md = write_report_md(r, dir, sizeof dir);
    cr_expect(strstr(md, "**Accounting error:** block `attention`") != NULL, "above-roof row named in words");
    cr_expect(strstr(md, "this is not a speed-up") != NULL);
    cr_expect(strstr(md, "| attention |") && strstr(md, "**above roof: accounting error**"));
    cr_expect(strstr(md, "noisy (75 % CI of the median -10.0 % / +25.0 %); 2 disturbed rep(s) left out") !=
                  NULL,
              "a noisy flag shows its interval");
    const char *sw = strstr(md, "| swiglu | "), *sw_end = sw ? strchr(sw, '\n') : NULL,
               *na = sw ? strstr(sw, "| n/a |") : NULL;
    cr_expect(na && na < sw_end, "unmeasured value shown as n/a: %s", md);
    cr_expect(strstr(md, "Counters: unavailable (no virtual PMU") != NULL);
    cr_expect(strstr(md, "| l3_read | GB/s | n/a | n/a | n/a | 0 | no L3 cache on this machine |") != NULL,
              "unmeasured ceiling row");
    cr_expect(strstr(md, "Plots were not drawn: gnuplot is not installed") != NULL);
    /* The questions in order: how fast, how close to the roof, where the time goes, what to do next. */
    const char *fast = strstr(md, "## How fast: decode steps"),
               *close = strstr(md, "## How close to the roof"), *where = strstr(md, "## Where the time goes"),
               *next = strstr(md, "## What to do next");
    cr_expect(strstr(md, "## Findings") < fast && fast && fast < close && close < where && where < next &&
                  strstr(md, "## Sampler at vocabulary"),
              "%s", md);
    /* The sampler at the model's vocabulary, one row per variant with a median per row kind. */
    const char *tf = strstr(md, "\n| topp_fast |");
    cr_expect(strstr(md, "| variant | peaked µs | flat µs | nucleus | reps | flags |") && tf &&
                  !strstr(tf + 1, "\n| topp_fast |") && strstr(tf, "| 40 / 75968 |"),
              "%s", md);
    free(md);

    /* The roofline marks it (a red ring and the key), and the JSON says it too. */
    char *pts = tu_slurp(dir, "plot_points.dat"), *vars = tu_slurp(dir, "plot_vars.gp");
    cr_expect(pts && strstr(pts, "\"attention\" 1 "), "%s", pts);
    cr_expect(vars && strstr(vars, "'attention [memory roof] (ABOVE ROOF: accounting error)'"));
    free(pts);
    free(vars);

    cJSON *root = parse_file(dir, "run.json");
    const cJSON *att = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "blocks"), BLOCK_ATTENTION);
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(att, "above_roof")));
    cJSON_Delete(root);
    tu_rm_flat(dir);
    free(r);
}

/* The setup names the memory-management state, and says what a kdamond that is on does to the figures. */
/* A row whose every repetition was disturbed keeps them (none was clean): its flag says how many and why,
 * not merely "noisy". */
Test(report_write, markdown_flags_disturbed_repetitions_kept) {
    struct run_report *r = fixture();
    struct report_block *b = &r->blocks[BLOCK_QKV_PROJ];
    b->measured.reps = 3, b->measured.excluded_reps = 0, b->measured.noisy = true;
    b->disturbed_reps = 3, b->disturbed_causes = REP_CAUSE_PREEMPTED | REP_CAUSE_MIGRATED;
    char dir[256];
    char *md = write_report_md(r, dir, sizeof dir);
    const char *row = strstr(md, "| qkv_proj | "), *end = row ? strchr(row, '\n') : NULL;
    cr_assert(row && end);
    const char *flag =
        strstr(row, "**3 of 3 reps disturbed (preempted+migrated), kept: fewer than 3 clean**");
    cr_expect(flag && flag < end, "%.*s", (int)(end - row), row);
    free(md);
    tu_rm_flat(dir);
    free(r);
}

Test(report_write, markdown_setup_names_damon) {
    struct run_report *r = fixture();
    snprintf(r->prov.mm_state, sizeof r->prov.mm_state,
             "transparent huge pages madvise (defrag madvise); DAMON on: kdamond 0 (paddr: pageout)");
    r->prov.damon_on = true;
    char dir[256];
    char *md = write_report_md(r, dir, sizeof dir);
    cr_expect(strstr(md, "Memory management: transparent huge pages madvise (defrag madvise); DAMON on: "
                         "kdamond 0 (paddr: pageout). DAMON monitors and acts") != NULL,
              "%s", md);
    free(md);
    tu_rm_flat(dir);
    r->prov.damon_on = false;
    snprintf(r->prov.mm_state, sizeof r->prov.mm_state,
             "transparent huge pages madvise (defrag madvise); DAMON off");
    md = write_report_md(r, dir, sizeof dir);
    cr_expect(strstr(md, "DAMON off.\n") != NULL && strstr(md, "DAMON monitors") == NULL, "%s", md);
    free(md);
    tu_rm_flat(dir);
    free(r);
}

/* The setup gives each core's speed at the run's start and end, and the slowest over the fastest; the
 * findings say what a slow core moves. */
Test(report_write, markdown_setup_names_core_speed) {
    struct run_report *r = fixture();
    snprintf(r->prov.core_speed, sizeof r->prov.core_speed,
             "cores 0 / 1: 29.9 / 21.0 GB/s at the start, 29.5 / 29.8 at the end (attention from L2 on one "
             "core at "
             "a time, avx2: one KV head, 2 query heads of 128, 256 bf16 positions; median of 15 runs)");
    r->prov.core_speed_low = 21.0 / 29.9;
    char dir[256];
    char *md = write_report_md(r, dir, sizeof dir);
    cr_expect(
        strstr(md, "Core speed: cores 0 / 1: 29.9 / 21.0 GB/s at the start, 29.5 / 29.8 at the end "
                   "(attention from L2 on one core at a time, avx2: one KV head, 2 query heads of 128, 256 "
                   "bf16 positions; median of 15 runs); the slowest probe at 70 % of the fastest.\n") != NULL,
        "%s", md);
    cr_expect(
        strstr(
            md,
            "Core speed moved: the slowest probe of a core ran attention from L2 at 70 % of the fastest") !=
            NULL,
        "%s", md);
    free(md);
    tu_rm_flat(dir);
    free(r);
}

/* A block that streams from DRAM shows its paired read and its share of it, and the read of its own bytes
 * and its share of that; a block to fix that runs as fast as a read of its own bytes says its loop is not
 * what holds it. */
Test(report_write, markdown_blocks_against_their_paired_read) {
    struct run_report *r = fixture();
    struct report_block *q = &r->blocks[BLOCK_QKV_PROJ];
    q->efficiency = 0.45;
    q->paired_read_gbs = 34.56;
    q->paired_efficiency = 0.934;
    q->own_read_gbs = 37.21;
    q->own_read_efficiency = 0.871;
    char dir[256];
    char *md = write_report_md(r, dir, sizeof dir);
    cr_expect(strstr(md, "| 45 % | memory | n/a | 34.6 | 93 % | 37.2 | 87 % |") != NULL,
              "qkv_proj's format (none in the fixture), paired and own bytes read columns: %s", md);
    cr_expect(strstr(md, "| rope |") && strstr(md, "| memory | n/a | n/a | n/a | n/a | n/a |"),
              "no format, no paired read, no own bytes read: n/a");
    cr_expect(strstr(md, "`qkv_proj` takes") &&
                  strstr(md, "at 45 % of its memory roof (93 % of the read paired with it, 87 % of a read of "
                             "its own bytes)."),
              "%s", md);
    cr_expect(!strstr(md, "as fast as a read of its own bytes"), "87 %% of its own bytes' read: %s", md);
    free(md);
    tu_rm_flat(dir);
    q->own_read_efficiency = 0.95; /* as fast as its own bytes come: the loop is not what holds it */
    md = write_report_md(r, dir, sizeof dir);
    cr_expect(strstr(md, "95 % of a read of its own bytes). It runs as fast as a read of its own bytes: what "
                         "holds it is how those bytes are fetched (how few, from how many places), not its "
                         "loop.") != NULL,
              "%s", md);
    free(md);
    tu_rm_flat(dir);
    q->own_read_gbs = q->own_read_efficiency = NAN; /* no own bytes read: the paired read alone */
    md = write_report_md(r, dir, sizeof dir);
    cr_expect(strstr(md, "at 45 % of its memory roof (93 % of the read paired with it).") != NULL, "%s", md);
    free(md);
    tu_rm_flat(dir);
    free(r);
}

/* A block whose second term comes within ROOFLINE_COBOUND_SHARE of its binding one says what no overlap
 * would take; one whose second term is smaller, one under 1 % of the step and an overhead-bound one do not.
 */
Test(report_write, markdown_names_cobound_blocks) {
    struct run_report *r = fixture();
    struct report_block *a = &r->blocks[BLOCK_ATTENTION], *o = &r->blocks[BLOCK_O_PROJ],
                        *rope = &r->blocks[BLOCK_ROPE], *kv = &r->blocks[BLOCK_KV_APPEND];
    a->predicted_s = 1.0e-3;
    a->measured.median_s = 2.0e-3;
    a->efficiency = 0.5;
    snprintf(a->second_bound, sizeof a->second_bound, "FMA");
    a->second_s = 0.74e-3;
    snprintf(o->second_bound, sizeof o->second_bound, "FMA");
    o->second_s = 0.49 * o->predicted_s;
    snprintf(rope->second_bound, sizeof rope->second_bound, "FMA");
    rope->second_s = 0.9 * rope->predicted_s;
    snprintf(kv->second_bound, sizeof kv->second_bound, "L1");
    kv->second_s = kv->predicted_s;
    kv->overhead_bound = true;
    char dir[256];
    char *md = write_report_md(r, dir, sizeof dir);
    cr_expect(strstr(md,
                     "- `attention` is co-bound: beside its memory term (1000.0 µs) its FMA term takes 740.0 "
                     "µs, 74 % of it. The roof assumes the two overlap completely; one after the other "
                     "they would take 1740.0 µs. Measured 2000.0 µs: 50 % of the roof, 87 % of that "
                     "sum.\n") != NULL,
              "%s", md);
    cr_expect(strstr(md, "`o_proj` is co-bound") == NULL, "a second term under half the first");
    cr_expect(strstr(md, "`rope` is co-bound") == NULL, "a block under 1 %% of the step");
    cr_expect(strstr(md, "`kv_append` is co-bound") == NULL, "an overhead-bound block");
    free(md);
    tu_rm_flat(dir);
    free(r);
}

Test(report_write, summary_is_markdown) {
    struct run_report *r = fixture();
    r->blocks[BLOCK_LM_HEAD].paired_efficiency = 0.934;
    r->blocks[BLOCK_LM_HEAD].own_read_efficiency = 0.912;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_eq(report_write_summary(r, f), 0);
    fclose(f);
    cr_expect(strstr(buf, "Setup: forge-roofline 0.1.0") != NULL);
    cr_expect(
        strstr(
            buf,
            "| block | predicted µs | measured µs | efficiency | bound | vs paired read | vs own bytes read "
            "| flags |") != NULL);
    cr_expect(strstr(buf, "| lm_head | 15957.2 |") != NULL, "%s", buf);
    cr_expect(strstr(buf, "| 93 % | 91 % |") != NULL,
              "lm_head's shares of its paired and own bytes reads: %s", buf);
    cr_expect(strstr(buf, "## Findings\n\n- Decode: 13.4 tokens/s at context 1") != NULL, "%s", buf);
    free(buf);
    free(r);
}

/* The counted section names the run's disturbed rule and shows the switched repetitions beside the disturbed
 * ones. */
Test(report_write, counted_section_rule_and_switched) {
    struct run_report *r = fixture();
    r->counters.available = true;
    r->counters.events[0].available = r->counters.events[1].available = true;
    snprintf(r->counters.disturbed_rule, sizeof r->counters.disturbed_rule,
             "a thread was preempted (involuntary context switch) or migrated");
    struct report_step *s = &r->steps[0];
    s->measured.reps = 9, s->measured.excluded_reps = 1;
    s->disturbed_reps = 1, s->switched_reps = 8, s->faulted_reps = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_md_counted(f, r);
    fclose(f);
    cr_expect(strstr(buf, "| context | utilization | disturbed reps | switched reps | faulted reps |") !=
                  NULL,
              "%s", buf);
    char row[64];
    snprintf(row, sizeof row, "| %ld | n/a | 1 of 10 (10 %%) | 8 | 0 |", s->context);
    cr_expect(strstr(buf, row) != NULL, "%s", buf);
    cr_expect(strstr(buf, "| block |") == NULL, "the blocks' counters are in blocks.csv, not here: %s", buf);
    cr_expect(strstr(buf,
                     "Disturbed = a thread was preempted (involuntary context switch) or migrated during "
                     "the repetition") != NULL,
              "%s", buf);
    free(buf);
    free(r);
}

/* Each reason an event cannot be counted is said once, for all the events it stops, and the alternates
 * tried for the same reason are named beside their event. */
Test(report_write, counters_reasons_said_once) {
    struct run_report *r = fixture();
    r->counters.available = true;
    r->counters.threads = 2;
    r->counters.n_events = 4;
    snprintf(r->counters.events[0].reason, REPORT_REASON_LEN, "PAPI_add_event: Event does not exist");
    snprintf(r->counters.events[1].reason, REPORT_REASON_LEN,
             "PAPI_add_event: Event does not exist; also tried PAPI_L3_DCM: the same reason; also tried "
             "perf::LLC-LOAD-MISSES: the same reason");
    snprintf(r->counters.events[2].name, REPORT_NAME_LEN, "perf::TASK-CLOCK");
    r->counters.events[2].available = true;
    r->counters.events[2].reason[0] = '\0';
    snprintf(r->counters.events[3].name, REPORT_NAME_LEN, "PAPI_SP_OPS");
    snprintf(r->counters.events[3].reason, REPORT_REASON_LEN,
             "PAPI_add_event: Event does not exist; also tried PAPI_FP_OPS: another reason");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_md_counters(f, r);
    fclose(f);
    cr_expect(strstr(buf,
                     "Counters (every thread of 2 counted, summed): counted perf::TASK-CLOCK; unavailable "
                     "(PAPI_add_event: Event does not exist): PAPI_TOT_CYC, PAPI_L3_TCM (also tried "
                     "PAPI_L3_DCM, perf::LLC-LOAD-MISSES); unavailable (PAPI_add_event: Event does not "
                     "exist; also tried PAPI_FP_OPS: another reason): PAPI_SP_OPS.") != NULL,
              "%s", buf);
    free(buf);
    free(r);
}

Test(report_write, unwritable_folder_is_an_error) {
    struct run_report *r = fixture();
    struct fr_err err = {{0}};
    cr_expect_neq(report_write_data(r, "/nonexistent/forge-roofline", &err), 0);
    cr_expect(strstr(err.msg, "cannot write") != NULL, "%s", err.msg);
    free(r);
}

/* The step's time inside no block names the barrier each on-team call waits at first (matvecs and
 * attention: their blocks count team barriers), at the measured barrier floor; a run without them says
 * nothing of it. */
Test(report_write, unattributed_names_the_team_barriers) {
    struct run_report *r = fixture();
    char dir[256];
    char *md = write_report_md(r, dir, sizeof dir);
    cr_expect(strstr(md, "Inside no block") && !strstr(md, "meets at its barrier before each"), "%s", md);
    free(md);
    tu_rm_flat(dir);
    for (int i = 0; i < r->n_blocks; i++) r->blocks[i].barriers = 0;
    r->blocks[BLOCK_QKV_PROJ].calls = 28, r->blocks[BLOCK_QKV_PROJ].barriers = 28;
    r->blocks[BLOCK_ATTENTION].calls = 28, r->blocks[BLOCK_ATTENTION].barriers = 56;
    r->blocks[BLOCK_LM_HEAD].calls = 1, r->blocks[BLOCK_LM_HEAD].barriers = 1;
    struct report_ceiling *c = &r->ceilings[r->n_ceilings++];
    *c = (struct report_ceiling){.kind = REPORT_CEILING_OVERHEAD, .value = 4.0, .reps = 5};
    snprintf(c->name, sizeof c->name, "barrier_mcalls");
    md = write_report_md(r, dir, sizeof dir);
    /* 57 calls at 0.25 us */
    cr_expect(strstr(md, "Of it, the step's kernel team meets at its barrier before each of its 57 calls on "
                         "the team (the matvecs and attention): at least 14.2 µs a step at the barrier floor "
                         "(4.0 Mcall/s).") != NULL,
              "%s", md);
    free(md);
    tu_rm_flat(dir);
    free(r);
}

/* An overhead-bound block says what its calls, forks and team barriers cost and what one call a layer
 * would save: 448 calls (16 a layer) at a floor of 2 us, so up to 2 x 15/16 = 1.875 us (printed 1.87: 1.875
 * is a hair under in binary). */
Test(report_write, overhead_bound_names_calls_forks_and_barriers) {
    struct run_report *r = fixture();
    struct report_block *kv = &r->blocks[BLOCK_KV_APPEND];
    kv->overhead_bound = true;
    kv->calls = 28, kv->kernel_calls = 448, kv->forks = 0, kv->barriers = 0, kv->floor_s = 2e-6;
    char dir[256];
    char *md = write_report_md(r, dir, sizeof dir);
    cr_expect(strstr(md, "- `kv_append` is overhead-bound: 448 kernel calls, 0 forks and 0 team barriers per "
                         "step cost at least 2.00 µs; one call per layer instead of 16 would save up to 1.87 "
                         "µs per step.") != NULL,
              "%s", md);
    free(md);
    tu_rm_flat(dir);
    free(r);
}

/* A file whose load converted its matrices says so on report.md's weights line and in run.json. */
Test(report_write, weights_line_carries_the_conversion) {
    struct run_report *r = fixture();
    struct report_provenance *p = &r->prov;
    snprintf(p->weights_source, sizeof p->weights_source, "file");
    snprintf(p->weights_file, sizeof p->weights_file, "m-q4_k_m.gguf");
    snprintf(p->weights_format, sizeof p->weights_format, "gguf");
    snprintf(p->weights_sha256, sizeof p->weights_sha256, "%064d", 0);
    static const char note[] =
        "file q4_k_m mix: 168 q4_k, 28 q6_k (+ embedding q6_k); runs in q8_0: no K-quant, "
        "q4_1 or q5_x kernels yet (#67), every matrix converted at load; the roofline "
        "counts q8_0's bytes";
    snprintf(p->weights_conversion, sizeof p->weights_conversion, "%s", note);
    char dir[256];
    char *md = write_report_md(r, dir, sizeof dir);
    char want[600];
    snprintf(want, sizeof want, "- Weights: m-q4_k_m.gguf (gguf, sha256 %064d; %s).\n", 0, note);
    cr_expect(strstr(md, want) != NULL, "report.md lacks '%s'", want);
    char path[300];
    snprintf(path, sizeof path, "%s/run.json", dir);
    static struct run_report back;
    struct fr_err err = {{0}};
    cr_assert_eq(report_json_read(path, &back, &err), 0, "%s", err.msg);
    cr_expect_str_eq(back.prov.weights_conversion, note);
    free(md);
    tu_rm_flat(dir);
    free(r);
}
