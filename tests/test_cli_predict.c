/* End-to-end: forge-roofline predict, --help, --version and the CLI's usage errors. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/cli_run.h"

static struct cli_result r;

Test(cli, help_and_version) {
    cli_run(&r, 0, "--help");
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "predict") != NULL);
    cli_run(&r, 0, "--version");
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "forge-roofline ") == r.out, "%s", r.out);
    cli_run(&r, 0, "");
    cr_expect_eq(r.status, 2);
    cli_run(&r, 0, "frobnicate");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "unknown command") != NULL, "%s", r.err);
}

Test(cli, stdout_write_error_is_a_failure) {
    /* a full disk on stdout must not end in exit 0 with the output lost */
    static const char *const cmds[] = {"predict --model qwen3-0.6b >/dev/full", "list >/dev/full",
                                       "--version >/dev/full"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        cli_run(&r, 0, cmds[i]);
        cr_expect_eq(r.status, 1, "'%s' exited %d", cmds[i], r.status);
        cr_expect_str_eq(r.err, "forge-roofline: write error on stdout\n", "'%s'", cmds[i]);
    }
}

Test(cli, predict_markdown) {
    cli_run(&r, 0, "predict --model qwen3-0.6b --context 1,4096");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "params 596049920") != NULL);
    cr_expect(strstr(r.out, "| lm_head | 1 | 311164928 | 311164928 |") != NULL);
    cr_expect(strstr(r.out, "KV bytes per cached position: 114688") != NULL);
}

Test(cli, predict_json_keys) {
    cli_run(&r, 0, "predict --model qwen3-0.6b --context 0,1024 --format json --dtype f32 --kv f32");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cJSON *j = cJSON_Parse(r.out);
    cr_assert(j != NULL, "not JSON: %.200s", r.out);
    cr_expect_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "model"), "params")->valuedouble, 596049920.0);
    cJSON *blocks = cJSON_GetObjectItem(j, "blocks"), *steps = cJSON_GetObjectItem(j, "steps");
    cr_expect_eq(cJSON_GetArraySize(blocks), 2 * 15);
    cr_expect_eq(cJSON_GetArraySize(steps), 2);
    cJSON *b0 = cJSON_GetArrayItem(blocks, 0);
    const char *keys[] = {"name", "calls", "flops", "bytes"};
    for (int i = 0; i < 4; i++)
        cr_expect(cJSON_GetObjectItem(b0, keys[i]) != NULL, "blocks[0] lacks %s", keys[i]);
    cJSON *s1 = cJSON_GetArrayItem(steps, 1);
    cr_expect_eq(cJSON_GetObjectItem(s1, "context")->valuedouble, 1024.0);
    cr_expect(cJSON_GetObjectItem(s1, "flops") && cJSON_GetObjectItem(s1, "bytes"));
    cJSON_Delete(j);
}

Test(cli, predict_csv) {
    cli_run(&r, 0, "predict --model model/qwen3-8b --format csv --context 7");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strncmp(r.out, "model,weights,kv,context,block,", 31) == 0);
    cr_expect(strstr(r.out, "qwen3-8b,bf16,bf16,7,step,") != NULL);
}

Test(cli, predict_default_contexts_fit_the_model) {
    /* the tiny model holds 4096 positions: the default 1,1024,4096 loses 4096 (4097 positions) */
    cli_run(&r, 0, "predict --model tests/fixtures/tiny-qwen3 --format csv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "tiny-qwen3,bf16,bf16,1024,step,") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, ",4096,step,") == NULL, "%s", r.out);
    cli_run(&r, 0, "predict --model tests/fixtures/tiny-qwen3 --context 4095");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cli_run(&r, 0, "predict --model tests/fixtures/tiny-qwen3 --context 4096");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "max_position_embeddings") != NULL, "%s", r.err);
}

Test(cli, error_naming_a_file_with_a_newline_is_one_line) {
    cli_run(&r, 0, "predict --model '/no/such\nfile'");
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "forge-roofline: /no/such?file: no such file or directory\n");
}

Test(cli, predict_usage_errors) {
    const char *bad[] = {"predict",
                         "predict --model qwen3-0.6b --dtype fp16",
                         "predict --model qwen3-0.6b --kv int8",
                         "predict --model qwen3-0.6b --format xml",
                         "predict --model qwen3-0.6b --context 1,,2",
                         "predict --model qwen3-0.6b --context -1",
                         "predict --model qwen3-0.6b --context abc",
                         "predict --model qwen3-0.6b --context 1,40960",
                         "predict --model qwen3-0.6b --bogus",
                         "predict --model qwen3-0.6b extra",
                         "predict --model no-such-model",
                         "predict --model /nonexistent/config.json",
                         "predict --model",
                         "predict --model tests/test_cost.c"};
    cli_expect_usage_errors(0, bad, sizeof bad / sizeof bad[0]);
}

/* --batch: the matrices are read once per batched step, so the weight bytes barely move while FLOPs scale
 * with B; the ridges appear with the roofs, and the roofs without --batch are refused. */
Test(cli, predict_batch) {
    cli_run(&r, 0, "predict --model qwen3-0.6b --context 1024 --batch 1,64 --format csv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "qwen3-0.6b,bf16,bf16,1024,1,1431065305,") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "qwen3-0.6b,bf16,bf16,1024,64,91588179520,") != NULL, "%s", r.out);
    cli_run(&r, 0, "predict --model qwen3-0.6b --context 0 --batch 1,64 --peak-gflops 200 --bw-gbs 20");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "ridge (compute roof = memory roof") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "the projections (GEMMs) alone B = ") != NULL);
    cli_run(&r, 0, "predict --model qwen3-0.6b --peak-gflops 200 --bw-gbs 20");
    cr_expect_eq(r.status, 2);
    cli_run(&r, 0, "predict --model qwen3-0.6b --batch 1 --peak-gflops 200");
    cr_expect_eq(r.status, 2);
    cli_run(&r, 0, "predict --model qwen3-0.6b --batch 0,2");
    cr_expect_eq(r.status, 2);
    cli_run(&r, 0, "predict --model qwen3-0.6b --measure-roofs");
    cr_expect_eq(r.status, 2);
    cli_run(&r, 0, "predict --model qwen3-0.6b --batch 2 --measure-roofs --peak-gflops 200 --bw-gbs 20");
    cr_expect_eq(r.status, 2);
}

/* --batch per-level bytes: the DRAM, L1, L2 and L3 columns of each row add up to its bytes; the four ridges
 * (whole step and GEMMs, bf16 and f32) are columns of their own, empty without roofs. */
Test(cli, predict_batch_levels) {
    cli_run(&r, 0,
            "predict --model qwen3-0.6b --context 1024 --batch 1,8 --format csv --peak-gflops 200 "
            "--bw-gbs 20");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, ",dram_level_bytes,l1_bytes,l2_bytes,l3_bytes,ridge_batch_bf16,ridge_batch_f32,"
                            "proj_ridge_batch_bf16,proj_ridge_batch_f32\n") != NULL,
              "%s", r.out);
    const char *row = strstr(r.out, "qwen3-0.6b,bf16,bf16,1024,8,");
    cr_assert_not_null(row, "%s", r.out);
    /* the row's fields after the model name, in header order: weights kv context batch flops bytes ... */
    double v[23];
    int n = 0;
    for (const char *p = strchr(row, ',') + 1; n < 23; p = strchr(p, ',') + 1) {
        v[n++] = strtod(p, NULL); /* text fields read as 0; only numeric ones are used below */
        const char *comma = strchr(p, ','), *nl = strchr(p, '\n');
        if (!comma || (nl && nl < comma)) break;
    }
    cr_assert_eq(n, 23, "%d fields", n);
    double levels = v[15] + v[16] + v[17] + v[18];
    cr_expect(fabs(levels - v[5]) <= 1e-9 * v[5], "levels %.0f vs bytes %.0f", levels, v[5]);
    cr_expect(v[16] > 0 && v[17] > 0, "L1 %.0f, L2 %.0f", v[16], v[17]);
    cr_expect(v[19] > 0 && v[20] > v[19] && v[21] > 0 && v[22] > v[21], "ridges %g %g %g %g", v[19], v[20],
              v[21], v[22]);
}
