/* End-to-end: `forge-roofline --quick --test-sizes` (tiny ceiling arrays; `make bench` runs the real sizes)
 * on a tiny Qwen3-shaped config, run by the ASan/UBSan binary, writes every file of the output contract
 * (docs/run-folder.md), run.json has the schema's keys and every figure of every row is finite, positive and
 * consistent (tests/run_figures.h), the PNGs are real images; bad runs fail before measuring. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/gemm_onednn.h"
#include "tests/cli_run.h"
#include "tests/report_testutil.h"
#include "tests/run_figures.h"
#include "tests/test_note.h"
#include "roofline/samples.h"

static struct cli_result r;

/* The single complete run folder under parent (NULL if none or several); the history store beside it is not
 * a run. */
static int find_run(const char *parent, char *out, size_t len) {
    DIR *d = opendir(parent);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && strncmp(e->d_name, "history.sqlite", 14) != 0)
            n++, snprintf(out, len, "%s/%s", parent, e->d_name);
    closedir(d);
    return n == 1 ? 0 : -1;
}

static int has_gnuplot(void) {
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/* What the Makefile bakes into the binary `make test` just built: HEAD, "-dirty" when tracked files differ
 * from it, "" outside a git checkout. */
static void build_commit(char *out, size_t len) {
    out[0] = '\0';
    FILE *p = popen("c=$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD -- || "
                    "c=\"$c-dirty\"; } && printf %s \"$c\"",
                    "r");
    cr_assert_not_null(p);
    if (!fgets(out, (int)len, p)) out[0] = '\0';
    pclose(p);
}

/* the sanitized binary (cmd_run.c and everything it calls under ASan and UBSan): about 2.5x the -O3 one */
Test(run, quick_tiny_config_writes_the_contract, .timeout = 480) {
    char parent[] = "/tmp/fr-run-XXXXXX";
    cr_assert(mkdtemp(parent));
    char args[512];
    snprintf(args, sizeof args,
             "--model tests/fixtures/tiny-qwen3 --quick --test-sizes --context 1,64 --out %s", parent);
    cli_run(&r, 0, args);
    cr_assert_eq(r.status, 0, "run failed: %s", r.err);
    char dir[512];
    cr_assert_eq(find_run(parent, dir, sizeof dir), 0, "expected exactly one run folder in %s", parent);
    /* the complete folder went into the history store beside it (docs/history.md) */
    cr_expect(strstr(r.err, "history: run appended to"), "no history line: %s", r.err);
    cr_expect(tu_exists(parent, "history.sqlite"));
    const char *files[] = {"run.json", "blocks.csv", "steps.csv", "sampler.csv", "ceilings.csv", "report.md"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[600];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        cr_expect(stat(p, &st) == 0 && st.st_size > 0, "%s missing or empty", p);
    }
    char p[600];
    char *text = tu_slurp(dir, "run.json");
    cJSON *j = cJSON_Parse(text);
    cr_assert(j, "run.json is not JSON");
    cr_expect_str_eq(cJSON_GetObjectItem(j, "schema")->valuestring, "forge-roofline/1");
    const char *top[] = {"provenance", "counters", "ceilings", "model", "blocks", "steps", "sampler"};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
        cr_expect(cJSON_GetObjectItem(j, top[i]), "run.json lacks '%s'", top[i]);
    cJSON *prov = cJSON_GetObjectItem(j, "provenance");
    const char *pkeys[] = {"version", "command_line", "cpu", "topology", "dtype"};
    for (size_t i = 0; i < sizeof pkeys / sizeof pkeys[0]; i++) {
        cJSON *v = cJSON_GetObjectItem(prov, pkeys[i]);
        cr_expect(cJSON_IsString(v) && v->valuestring[0], "provenance.%s missing or empty", pkeys[i]);
    }
    cr_expect(tu_starts(cJSON_GetObjectItem(prov, "command_line")->valuestring,
                        "forge-roofline --model tests/fixtures/tiny-qwen3 --quick"));
    cr_expect_str_eq(cJSON_GetObjectItem(prov, "dtype")->valuestring, "bf16");
    cr_expect_str_eq(cJSON_GetObjectItem(prov, "weights")->valuestring, "synthetic"); /* no --weights */
    cr_expect_geq(cJSON_GetObjectItem(prov, "threads")->valuedouble, 1);
    char commit[64];
    build_commit(commit, sizeof commit);
    cr_expect_str_eq(cJSON_GetObjectItem(prov, "git_commit")->valuestring, commit,
                     "provenance names the commit of this build");
    cJSON *counters = cJSON_GetObjectItem(j, "counters");
    cr_expect(cJSON_IsBool(cJSON_GetObjectItem(counters, "available")));
    if (cJSON_IsFalse(cJSON_GetObjectItem(counters, "available")))
        cr_expect(cJSON_IsString(cJSON_GetObjectItem(counters, "reason")),
                  "counters unavailable without a reason");
    cJSON *blocks = cJSON_GetObjectItem(j, "blocks");
    cr_expect_eq(cJSON_GetArraySize(blocks), 15);
    const char *bkeys[] = {"name",       "calls", "flops", "bytes",      "predicted_s",
                           "measured_s", "min_s", "max_s", "efficiency", "counters"};
    for (size_t i = 0; i < sizeof bkeys / sizeof bkeys[0]; i++)
        cr_expect(cJSON_GetObjectItem(cJSON_GetArrayItem(blocks, 0), bkeys[i]), "blocks[0] lacks '%s'",
                  bkeys[i]);
    /* the format each block ran in: a bf16 run's matrices, the bf16 KV cache, f32 for the rest */
    static const char *const formats[][2] = {
        {"qkv_proj", "bf16"}, {"attention", "bf16"}, {"attn_norm", "f32"}};
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        const cJSON *b = NULL, *it;
        cJSON_ArrayForEach(it, blocks) {
            if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(it, "name")), formats[i][0]) == 0) b = it;
        }
        cr_expect(b && cJSON_IsString(cJSON_GetObjectItem(b, "format")) &&
                      strcmp(cJSON_GetObjectItem(b, "format")->valuestring, formats[i][1]) == 0,
                  "blocks[] %s: format %s", formats[i][0], formats[i][1]);
    }
    char *csv = tu_slurp(dir, "blocks.csv");
    cr_expect(csv && strstr(csv, ",format") && strstr(csv, ",bf16"), "blocks.csv's format column");
    free(csv);
    cJSON *steps = cJSON_GetObjectItem(j, "steps");
    cr_expect_eq(cJSON_GetArraySize(steps), 2);
    const char *skeys[] = {"context",    "bytes",        "flops",     "predicted_s",
                           "measured_s", "tokens_per_s", "efficiency"};
    for (size_t i = 0; i < sizeof skeys / sizeof skeys[0]; i++)
        cr_expect(cJSON_GetObjectItem(cJSON_GetArrayItem(steps, 1), skeys[i]), "steps[1] lacks '%s'",
                  skeys[i]);
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(steps, 1), "context")->valuedouble, 64.0);
    cr_expect(cJSON_GetArraySize(cJSON_GetObjectItem(j, "sampler")) > 0);
    rf_check_blocks(blocks);
    rf_check_steps(steps, 15);
    rf_check_sampler(cJSON_GetObjectItem(j, "sampler"));
    /* every repetition of every timed row, beside run.json, read back by the loader */
    cJSON *so = cJSON_GetObjectItem(j, "samples");
    cr_assert(cJSON_IsObject(so), "run.json lacks 'samples'");
    cr_expect_str_eq(cJSON_GetObjectItem(so, "schema")->valuestring, SAMPLES_SCHEMA);
    snprintf(p, sizeof p, "%s/%s", dir, cJSON_GetObjectItem(so, "file")->valuestring);
    struct sample_set set = {0};
    struct fr_err serr = {{0}};
    cr_assert_eq(samples_read_csv(p, &set, &serr), 0, "%s", serr.msg);
    cr_expect_eq(samples_count_rows(&set), (int)cJSON_GetObjectItem(so, "rows")->valuedouble);
    int idx[64];
    cr_expect_geq(samples_find_row(&set, "step@64", idx, 64), 3, "every timed step is kept");
    cr_expect(isfinite(set.s[idx[0]].paired_read_gbs), "a step's sample carries its paired read");
    cr_expect_geq(samples_find_row(&set, "block:lm_head@64", idx, 64), 3);
    cr_expect(isfinite(set.s[idx[0]].paired_read_gbs), "a cold block's sample carries its eviction read");
    cr_expect_geq(samples_find_row(&set, "sampler:chain_fast@151936", idx, 64), 3);
    cr_expect_geq(samples_find_row(&set, "batch:1@256", idx, 64), 2);
    /* oneDNN 2.6 has no bf16 matmul below avx512_core (an AVX2 Zen 3): its rows are then a note, not rows */
    const char *no_dnn = NULL;
    const bool dnn = gemm_onednn_available(FR_DTYPE_BF16, &no_dnn);
    gemm_onednn_cleanup();
    if (dnn) cr_expect_geq(samples_find_row(&set, "batch:4@256:onednn", idx, 64), 2);
    cr_expect_geq(samples_find_row(&set, "pp@512", idx, 64), 2, "every timed prefill is kept");
    for (int i = 0; i < set.n; i++) cr_expect(set.s[i].time_s > 0 && set.s[i].threads >= 1, "sample %d", i);
    samples_free(&set);
    rf_check_ceilings(cJSON_GetObjectItem(j, "ceilings"));
    char *md = tu_slurp(dir, "report.md");
    rf_check_plan(j, md);
    /* the DRAM read kernel the ceilings chose, named in run.json and in the roof notes */
    const char *rk = cJSON_GetStringValue(cJSON_GetObjectItem(prov, "read_kernel"));
    cr_expect(rk && rk[0], "provenance.read_kernel missing or empty");
    cr_expect(rk && strstr(md, "The DRAM read kernel ") && strstr(md, rk), "report.md names the read kernel");
    cr_expect(strstr(md, "| weights read GB/s | vs weights read |") != NULL,
              "report.md's steps table lacks the read over the weights");
    cr_expect(strstr(md, "the weights take less than the paired read's buffer") != NULL,
              "report.md does not say why the tiny config's weights were not read");
    /* the quick batch sweep: B = 1, 2, 4 on forge, then on OpenBLAS sgemm with f32 weights and on oneDNN's
     * matmul with the run's bf16 weights beside it, with the line of what oneDNN ran */
    cJSON *batch = cJSON_GetObjectItem(j, "batch");
    cr_assert_eq(cJSON_GetArraySize(batch), dnn ? 9 : 6);
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(batch, 2), "batch")->valuedouble, 4.0);
    cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(batch, 3), "backend")->valuestring, "openblas");
    cJSON *ridge = cJSON_GetObjectItem(j, "batch_ridge");
    cr_assert(ridge, "run.json lacks 'batch_ridge'");
    const char *dnn_line = cJSON_GetStringValue(cJSON_GetObjectItem(ridge, "onednn"));
    const char *note = cJSON_GetStringValue(cJSON_GetObjectItem(ridge, "note"));
    if (dnn) {
        cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(batch, 6), "backend")->valuestring, "onednn");
        cr_expect_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(batch, 8), "dtype")->valuestring, "bf16");
        cr_expect(dnn_line && strncmp(dnn_line, "oneDNN ", 7) == 0 && strstr(dnn_line, "matmul bf16: ") &&
                      strstr(dnn_line, "ISA "),
                  "batch_ridge.onednn: %s", dnn_line ? dnn_line : "(missing)");
    } else {
        char said[256];
        snprintf(said, sizeof said, "oneDNN rows skipped: %s", no_dnn);
        cr_expect(note && strstr(note, said), "batch_ridge.note: %s", note ? note : "(missing)");
        cr_expect(strstr(md, said), "report.md does not say why the oneDNN rows are missing");
    }
    free(md);
    for (int i = 0; i < cJSON_GetArraySize(batch); i++) { /* every batched step is paired with the read */
        const cJSON *g = cJSON_GetObjectItem(cJSON_GetArrayItem(batch, i), "paired_read_gbs"),
                    *e = cJSON_GetObjectItem(cJSON_GetArrayItem(batch, i), "paired_efficiency");
        cr_expect(cJSON_IsNumber(g) && g->valuedouble > 0 && cJSON_IsNumber(e) && e->valuedouble > 0,
                  "batch[%d] lacks a paired read", i);
    }
    snprintf(p, sizeof p, "%s/batch.csv", dir);
    struct stat bst;
    cr_expect(stat(p, &bst) == 0 && bst.st_size > 0, "%s missing or empty", p);
    /* prompt processing, the default pp512: the whole prefill first, then its blocks (no sampler row: the
     * first draw is the prefill row's sample_s) */
    cJSON *pre = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "prefill"), "rows");
    cr_assert(cJSON_IsArray(pre), "run.json lacks 'prefill.rows'");
    cr_expect_eq(cJSON_GetArraySize(pre), 15, "the whole prefill and its 14 blocks");
    const cJSON *all = cJSON_GetArrayItem(pre, 0);
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(all, "block")), "prefill");
    cr_expect_eq(cJSON_GetObjectItem(all, "prompt_len")->valuedouble, 512.0);
    double pre_s = cJSON_GetObjectItem(all, "measured_s")->valuedouble,
           tps = cJSON_GetObjectItem(all, "tokens_per_s")->valuedouble,
           ttft = cJSON_GetObjectItem(all, "ttft_s")->valuedouble;
    cr_expect(pre_s > 0 && fabs(tps * pre_s - 512) < 1e-6 * 512, "pp tokens/s %g over %g s", tps, pre_s);
    cr_expect(ttft > pre_s, "time to first token %g not above the prefill's %g", ttft, pre_s);
    double share = 0;
    for (int i = 1; i < cJSON_GetArraySize(pre); i++)
        share += cJSON_GetObjectItem(cJSON_GetArrayItem(pre, i), "share")->valuedouble;
    cr_expect(share > 0.5 && share <= 1.05, "the blocks' shares add up to %g of the prefill", share);
    snprintf(p, sizeof p, "%s/prefill.csv", dir);
    cr_expect(stat(p, &bst) == 0 && bst.st_size > 0, "%s missing or empty", p);
    md = tu_slurp(dir, "report.md");
    cr_expect(md && strstr(md, "## Prompt processing") && strstr(md, "| pp512 |"), "report.md lacks pp512");
    cr_expect(md && strstr(md, "- Prompt processing: pp512 "), "the findings lack the pp512 line");
    free(md);
    cJSON_Delete(j);
    free(text);
    if (!has_gnuplot()) {
        test_note("run: gnuplot not installed: image checks left out");
        return;
    }
    const char *plots[] = {"roofline", "breakdown", "sampler", "context", "batch"};
    for (size_t i = 0; i < 5; i++) {
        snprintf(p, sizeof p, "%s.png", plots[i]);
        char *png = tu_slurp(dir, p);
        cr_expect(png && memcmp(png, "\x89PNG\r\n\x1a\n", 8) == 0, "%s is not a PNG", p);
        free(png);
        snprintf(p, sizeof p, "%s.svg", plots[i]);
        char *svg = tu_slurp(dir, p);
        cr_expect(svg && strstr(svg, "<svg"), "%s is not an SVG", p);
        free(svg);
    }
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", parent);
    cr_expect_eq(system(cmd), 0);
}

Test(run, unwritable_out_fails_before_measuring) {
    cli_run(&r, 1, "--model tests/fixtures/tiny-qwen3 --quick --out /proc/forbidden");
    cr_expect_eq(r.status, 2, "status %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "/proc/forbidden") != NULL, "%s", r.err);
}

Test(run, bad_options) {
    const char *bad[] = {"--quick",
                         "--model qwen3-0.6b --threads 0",
                         "--model qwen3-0.6b --context 1,x",
                         "--model qwen3-0.6b --gemv mkl",
                         "--model qwen3-0.6b --dtype q4",
                         "--model tests/fixtures/tiny-qwen3 --context 5000",
                         "--model tests/fixtures/tiny-qwen3 --context 8,1,8",
                         "--model tests/fixtures/tiny-qwen3 --batch 0,2",
                         "--model tests/fixtures/tiny-qwen3 --batch 2,2",
                         "--model tests/fixtures/tiny-qwen3 --batch 4 --batch-context 5000",
                         "--model qwen3-0.6b --batch 4096 --batch-context 40000",
                         "--model qwen3-0.6b --nope",
                         "--model tests/fixtures/tiny-qwen3 --prompt-len 0",
                         "--model tests/fixtures/tiny-qwen3 --prompt-len 8,8",
                         "--model tests/fixtures/tiny-qwen3 --prompt-len 1,2,3,4",
                         "--model tests/fixtures/tiny-qwen3 --context 1 --prompt-len 5000",
                         "--model tests/fixtures/tiny-qwen3 --context 1 --prompt-len 4000 --prompt-depth 100",
                         "--model tests/fixtures/tiny-qwen3 --prompt-len none --prompt-depth 5",
                         "--model no-such-model"};
    cli_expect_usage_errors(1, bad, sizeof bad / sizeof bad[0]);
}

/* more threads than cores is bad input (2), not a failed run (1); the message names the flag given */
Test(run, bad_threads_and_block_context) {
    char dir[] = "/tmp/fr-run-bad-XXXXXX", args[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(args, sizeof args,
             "--model tests/fixtures/tiny-qwen3 --quick --context 1 --threads 4096 --out %s", dir);
    cli_run(&r, 1, args);
    cr_expect_eq(r.status, 2, "status %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "4096 threads") != NULL, "%s", r.err);
    cli_run(&r, 1, "--model tests/fixtures/tiny-qwen3 --quick --context 1 --block-context 5000");
    cr_expect_eq(r.status, 2, "status %d: %s", r.status, r.err);
    cr_expect(strncmp(r.err, "forge-roofline: --block-context 5000:", 37) == 0, "%s", r.err);
    /* no --context given: the error says the value is the default one */
    cli_run(&r, 1, "--model tests/fixtures/tiny-qwen3");
    cr_expect_eq(r.status, 2, "status %d: %s", r.status, r.err);
    cr_expect(strncmp(r.err, "forge-roofline: the default --context 16384:", 44) == 0, "%s", r.err);
    cr_expect_eq(rmdir(dir), 0, "%s: a temporary run folder was left behind", dir);
}

Test(run, model_too_big_for_memory_fails_before_measuring) {
    /* 1.7 TB of bf16 weights: refused at once, before the ceilings and verify print anything */
    char dir[] = "/tmp/fr-run-big-XXXXXX", path[64], args[256];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("{\"model_type\": \"qwen3\", \"hidden_size\": 65536, \"intermediate_size\": 65536, "
          "\"num_hidden_layers\": 64, \"num_attention_heads\": 4, \"num_key_value_heads\": 2, "
          "\"head_dim\": 32, \"vocab_size\": 65536, \"max_position_embeddings\": 64, "
          "\"rms_norm_eps\": 1e-6, \"rope_theta\": 10000, \"tie_word_embeddings\": true}",
          f);
    fclose(f);
    snprintf(args, sizeof args, "--model %s --quick --context 1 --out %s", dir, dir);
    cli_run(&r, 1, args);
    cr_expect_eq(r.status, 2, "status %d: %s", r.status, r.err);
    cr_expect(strstr(r.err, "are available") != NULL && tu_count_lines(r.err) == 1, "%s", r.err);
    unlink(path);
    cr_expect_eq(rmdir(dir), 0, "%s: a temporary run folder was left behind", dir);
}

Test(run, bad_events_message_names_the_flag_once) {
    cli_run(&r, 1, "--model tests/fixtures/tiny-qwen3 --quick --context 1 --events PAPI_TOT_CYC,,X");
    cr_expect_eq(r.status, 2, "status %d: %s", r.status, r.err);
    cr_expect_str_eq(r.err, "forge-roofline: --events: empty event name in 'PAPI_TOT_CYC,,X'\n");
}
