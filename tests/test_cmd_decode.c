/* End-to-end: `forge-roofline decode` on a tiny Qwen3-shaped config written by the test: greedy output is
 * deterministic and is the argmax of the logits rows it writes, sampling follows its seed, and every bad
 * option, id list, file and value is a one-line error with exit status 2. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/gemm_onednn.h"
#include "tests/cli_run.h"
#include "tests/model_fixtures.h"

static struct cli_result r, r2;

/* Token ids printed on stdout's one line; returns the count, -1 if the line is malformed. */
static int parse_ids(const char *out, int *ids, int max_n) {
    const char *nl = strchr(out, '\n');
    if (!nl || nl[1] != '\0') return -1;
    int n = 0;
    const char *p = out;
    while (p < nl) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || n >= max_n) return -1;
        ids[n++] = (int)v;
        p = end;
        if (*p == ' ')
            p++;
        else if (p != nl)
            return -1;
    }
    return n;
}

Test(cmd_decode, greedy_is_deterministic_and_the_argmax_of_its_logits, .timeout = 120) {
    char dir[64], args[512], logits_path[160];
    cr_assert_eq(fixture_write_tiny_config(dir), 0);
    snprintf(logits_path, sizeof logits_path, "%s/logits.f32", dir);
    snprintf(args, sizeof args, "decode --model %s --prompt-ids 1,2,3 --max-new 6 --logits-out %s", dir,
             logits_path);
    cli_run(&r, 0, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    int ids[16], n = parse_ids(r.out, ids, 16);
    cr_assert_eq(n, 6, "stdout: '%s'", r.out);
    cr_expect(strstr(r.err, "tokens/s") != NULL, "%s", r.err);

    FILE *f = fopen(logits_path, "rb");
    cr_assert(f);
    float *rows = malloc(6 * 257 * sizeof(float));
    cr_assert_eq(fread(rows, sizeof(float), 6 * 257, f), (size_t)(6 * 257));
    cr_expect_eq(fgetc(f), EOF, "logits file longer than 6 rows");
    fclose(f);
    for (int g = 0; g < 6; g++) {
        int best = 0;
        for (int i = 1; i < 257; i++)
            if (rows[g * 257 + i] > rows[g * 257 + best]) best = i;
        cr_expect_eq(ids[g], best, "token %d: printed %d, argmax of its row %d", g, ids[g], best);
        cr_expect(ids[g] >= 0 && ids[g] < 257);
    }
    cr_expect_neq(memcmp(rows, rows + 257, 257 * sizeof(float)), 0, "rows repeat: the steps did not advance");
    free(rows);

    /* the same command again, and the -O3 binary, print the same tokens */
    cli_run(&r2, 0, args);
    cr_expect_str_eq(r2.out, r.out);
    cli_run(&r2, 1, args);
    cr_expect_str_eq(r2.out, r.out);
    fixture_remove_dir(dir, "logits.f32");
}

Test(cmd_decode, sampling_follows_the_seed, .timeout = 120) {
    char dir[64], args[512];
    cr_assert_eq(fixture_write_tiny_config(dir), 0);
    snprintf(args, sizeof args,
             "decode --model %s --prompt-ids 5 --max-new 8 --temperature 1 --top-p 0.9 --seed 7", dir);
    cli_run(&r, 1, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cli_run(&r2, 1, args);
    cr_expect_str_eq(r2.out, r.out);
    snprintf(args, sizeof args,
             "decode --model %s --prompt-ids 5 --max-new 8 --temperature 1 --top-p 0.9 --seed 8", dir);
    cli_run(&r2, 1, args);
    cr_assert_eq(r2.status, 0, "%s", r2.err);
    cr_expect_str_neq(r2.out, r.out, "seeds 7 and 8 drew the same 8 tokens of 257");
    int ids[16];
    cr_expect_eq(parse_ids(r2.out, ids, 16), 8);
    fixture_remove_dir(dir, NULL);
}

Test(cmd_decode, options_that_run, .timeout = 120) {
    char dir[64], args[512];
    cr_assert_eq(fixture_write_tiny_config(dir), 0);
    int ids[16];
    const char *variants[] = {"--dtype f32 --kv f32", "--kv f32 --threads 1",
                              "--max-new 0",          "--gemv openblas --dtype f32",
                              "--gemv onednn",        "--gemv onednn --dtype f32"};
    const int counts[] = {3, 3, 0, 3, 3, 3};
    const char *no_bf16 =
        NULL; /* oneDNN 2.6 has no bf16 matmul below avx512_core: refused, with the reason */
    const bool dnn_bf16 = gemm_onednn_available(FR_DTYPE_BF16, &no_bf16);
    gemm_onednn_cleanup();
    for (int i = 0; i < 6; i++) {
        snprintf(args, sizeof args, "decode --model %s --prompt-ids 4,5 --max-new 3 %s", dir, variants[i]);
        cli_run(&r, 1, args);
        if (!dnn_bf16 && strcmp(variants[i], "--gemv onednn") == 0) {
            cr_expect_eq(r.status, 2, "%s: %s", variants[i], r.err);
            cr_expect(strstr(r.err, "matvec backend onednn cannot run bf16 weights: ") &&
                          strstr(r.err, no_bf16) && strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
                      "%s: '%s'", variants[i], r.err);
            continue;
        }
        cr_expect_eq(r.status, 0, "%s: %s", variants[i], r.err);
        cr_expect_eq(parse_ids(r.out, ids, 16), counts[i], "%s: '%s'", variants[i], r.out);
    }
    fixture_remove_dir(dir, NULL);
}

/* Each case must fail with status 2 and a one-line message holding `want`. */
static void expect_usage(const char *dir, const char *opts, const char *want) {
    char args[640];
    snprintf(args, sizeof args, "decode %s", opts);
    /* "%M" in a case stands for the tiny model's directory */
    char *m;
    while ((m = strstr(args, "%M"))) {
        char rest[640];
        snprintf(rest, sizeof rest, "%s", m + 2);
        snprintf(m, sizeof args - (size_t)(m - args), "%s%s", dir, rest);
    }
    cli_run(&r, 0, args);
    cr_expect_eq(r.status, 2, "'%s' gave status %d: %s", args, r.status, r.err);
    cr_expect(strstr(r.err, want) != NULL, "'%s': stderr '%s' lacks '%s'", args, r.err, want);
    const char *nl = strchr(r.err, '\n');
    cr_expect(nl && nl[1] == '\0', "'%s': not one line: '%s'", args, r.err);
    cr_expect_str_eq(r.out, "", "'%s' printed to stdout", args);
}

Test(cmd_decode, usage_errors, .timeout = 120) {
    char dir[64];
    cr_assert_eq(fixture_write_tiny_config(dir), 0);
    expect_usage(dir, "--prompt-ids 1 --max-new 1", "--model is required");
    expect_usage(dir, "--model %M --max-new 1", "--prompt-ids is required");
    expect_usage(dir, "--model %M --prompt-ids 1", "--max-new is required");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new", "needs a value");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --frob 2", "unknown option");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 stray", "unexpected argument");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new -1", "--max-new");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 2x", "--max-new");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --dtype fp16", "--dtype");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --kv int8", "--kv");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --gemv mkl", "--gemv");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --gemv onednn --dtype q8_0", "no Q8_0 or Q4_0");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --threads 0", "--threads");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --temperature -1", "--temperature");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --temperature nan", "--temperature");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --top-p 1.5", "--top-p");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --seed -3", "--seed");
    /* the id list */
    expect_usage(dir, "--model %M --prompt-ids 1,,2 --max-new 1", "comma-separated");
    expect_usage(dir, "--model %M --prompt-ids '' --max-new 1", "comma-separated");
    expect_usage(dir, "--model %M --prompt-ids 1,2, --max-new 1", "comma-separated");
    expect_usage(dir, "--model %M --prompt-ids one --max-new 1", "comma-separated");
    expect_usage(dir, "--model %M --prompt-ids 99999999999999999999 --max-new 1", "comma-separated");
    expect_usage(dir, "--model %M --prompt-ids 1,257 --max-new 1", "prompt id 257 (position 1) is outside");
    expect_usage(dir, "--model %M --prompt-ids -1 --max-new 1", "outside the vocabulary");
    /* more positions than the model allows (64) */
    expect_usage(dir, "--model %M --prompt-ids 1,2,3 --max-new 63", "need 65 positions");
    /* files */
    expect_usage(dir, "--model /nonexistent/model --prompt-ids 1 --max-new 1", "nonexistent");
    expect_usage(dir, "--model %M --weights /nonexistent.safetensors --prompt-ids 1 --max-new 1",
                 "cannot open");
    expect_usage(dir, "--model %M --weights %M/config.json --prompt-ids 1 --max-new 1", "config.json");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --logits-out /nonexistent/dir/x",
                 "--logits-out");
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --logits-out %M", "Is a directory");
    /* an output naming an input is refused before it is truncated */
    expect_usage(dir, "--model %M --prompt-ids 1 --max-new 1 --logits-out %M/config.json", "input file");
    struct qwen3_config cfg;
    struct fr_err err = {{0}};
    char path[128];
    snprintf(path, sizeof path, "%s/config.json", dir);
    cr_expect_eq(qwen3_config_load(path, &cfg, &err), 0, "config.json damaged: %s", err.msg);
    /* a failure after --logits-out was opened leaves no empty or half-written file behind */
    expect_usage(dir, "--model %M --weights %M/config.json --prompt-ids 1 --max-new 1 --logits-out %M/l.f32",
                 "config.json");
    snprintf(path, sizeof path, "%s/l.f32", dir);
    cr_expect_neq(access(path, F_OK), 0, "%s was left behind", path);
    /* but a link (/dev/stdout) or a device (/dev/full) is never removed */
    char link[128];
    snprintf(link, sizeof link, "%s/link.f32", dir);
    cr_assert_eq(symlink("/dev/null", link), 0);
    expect_usage(dir,
                 "--model %M --weights %M/config.json --prompt-ids 1 --max-new 1 --logits-out %M/link.f32",
                 "config.json");
    struct stat lst;
    cr_expect(lstat(link, &lst) == 0 && S_ISLNK(lst.st_mode), "%s was removed", link);
    unlink(link);
    fixture_remove_dir(dir, NULL);
}

Test(cmd_decode, help) {
    cli_run(&r, 0, "decode --help");
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "--prompt-ids") != NULL, "%s", r.out);
}

/* logits rows of a --logits-out file: n rows of `vocab` floats */
static float *read_rows(const char *path, int n, int vocab) {
    FILE *f = fopen(path, "rb");
    cr_assert(f, "%s", path);
    float *rows = malloc((size_t)n * (size_t)vocab * sizeof(float));
    cr_assert(rows);
    cr_assert_eq(fread(rows, sizeof(float), (size_t)n * (size_t)vocab, f), (size_t)n * (size_t)vocab);
    fclose(f);
    return rows;
}

/* --prefill: the prompt in one pass gives the first new token's logits of the token-by-token prompt, within
 * model/prefill_check.h's bf16-cache tolerance of the largest logit, and the same greedy tokens after it. */
Test(cmd_decode, prefill_gives_the_steps_logits_and_tokens, .timeout = 120) {
    char dir[64], args[640], la[160], lb[160];
    cr_assert_eq(fixture_write_tiny_config(dir), 0);
    snprintf(la, sizeof la, "%s/steps.f32", dir);
    snprintf(lb, sizeof lb, "%s/prefill.f32", dir);
    static const char ids[] =
        "3,1,4,1,5,9,2,6,5,3,5,8,9,7,9,3,2,3,8,4,6,2,6,4,3,3,8,3,2,7,9,5,0,2,8,8,4,1,9,7,1";
    snprintf(args, sizeof args, "decode --model %s --prompt-ids %s --max-new 4 --logits-out %s", dir, ids,
             la);
    cli_run(&r, 0, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(args, sizeof args, "decode --model %s --prefill --prompt-ids %s --max-new 4 --logits-out %s",
             dir, ids, lb);
    cli_run(&r2, 0, args);
    cr_assert_eq(r2.status, 0, "%s", r2.err);
    cr_expect(strstr(r2.err, "one prefill") != NULL, "%s", r2.err);
    cr_expect_str_eq(r2.out, r.out, "the generated tokens differ");
    float *a = read_rows(la, 4, 257), *b = read_rows(lb, 4, 257);
    double err = 0, top = 0;
    for (int i = 0; i < 4 * 257; i++) err = fmax(err, fabs(a[i] - b[i])), top = fmax(top, fabs(a[i]));
    cr_expect_gt(top, 0.05, "logits degenerate");
    cr_expect_leq(err, 1e-3 * top, "prefill logits off by %.3g of %.3g", err, top);
    cr_expect_gt(err, 0, "bit-identical: the prefill did not run its own kernels");
    free(a), free(b);
    char rm[256];
    snprintf(rm, sizeof rm, "%s/steps.f32", dir);
    unlink(rm);
    fixture_remove_dir(dir, "prefill.f32");
}
