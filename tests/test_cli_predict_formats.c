/* End-to-end: forge-roofline predict in per-tensor formats. --dtype q4_k_m prices llama.cpp's mix: each
 * projection block's weight bytes equal its matrices' bytes summed here from the shapes and the types the
 * mix gives them (kernels/dtype.h's bytes a weight); a GGUF file that `quantize --dtype q4_k_m` wrote prices
 * the same from its tensor index (--weights), and --dtype beside --weights is the run's type, as in decode;
 * each bad --weights is refused in one line, exit status 2. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernels/dtype.h"
#include "tests/cli_run.h"
#include "tests/model_fixtures.h"

/* Rows of 256 everywhere (hidden, intermediate 512, 4 heads x 64), so that every matrix takes a K-quant
 * superblock and llama.cpp's mix needs no 32-block fallback; 2 layers, tied, vocabulary 300. */
enum { H = 256, I = 512, L = 2, HEADS = 4, KV_HEADS = 2, HD = 64, V = 300 };

static struct cli_result r;

/* A fresh temporary folder holding the config above (dir: 64 bytes). */
static void write_config(char *dir) {
    static const int shape[9] = {H, I, L, HEADS, KV_HEADS, HD, V, 64, 1};
    strcpy(dir, "/tmp/fr-test-predict-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_eq(fixture_write_config_json(dir, shape, 10000.0), 0);
}

static void remove_in(const char *dir, const char *name) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    remove(path);
}

static cJSON *run_json(const char *args) {
    cli_run(&r, 0, args);
    cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
    cJSON *j = cJSON_Parse(r.out);
    cr_assert_not_null(j, "%s: not JSON: %.200s", args, r.out);
    return j;
}

/* A number of the object with name `name` (NULL: the first) in array `arr` of j. */
static double json_num(const cJSON *j, const char *arr, const char *name, const char *key) {
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItem(j, arr)) {
        const cJSON *n = cJSON_GetObjectItem(o, "name");
        if (name && (!cJSON_IsString(n) || strcmp(n->valuestring, name) != 0)) continue;
        const cJSON *v = cJSON_GetObjectItem(o, key);
        cr_assert(cJSON_IsNumber(v), "%s[%s] has no number %s", arr, name ? name : "0", key);
        return v->valuedouble;
    }
    cr_assert_fail("%s has no %s", arr, name ? name : "entry");
    return 0;
}

/* llama.cpp's Q4_K_M for this model, by its rules and not by model/weight_mix.c: Q4_K, with attn_v and
 * ffn_down in Q6_K in the layers use_more_bits(i, n) picks (i < n/8, i >= 7n/8 or (i - n/8) % 3 == 2: layer 1
 * of 2), and the tied token_embd in Q6_K. */
static enum fr_dtype mix_v(int l) {
    return l == 1 ? FR_DTYPE_Q6_K : FR_DTYPE_Q4_K;
}

Test(cli_predict, q4_k_m_bytes_are_its_matrices) {
    char dir[64], cmd[256];
    write_config(dir);
    snprintf(cmd, sizeof cmd, "predict --model %s --dtype q4_k_m --context 0 --format json", dir);
    cJSON *j = run_json(cmd);
    const double q4 = fr_dtype_weight_bytes(FR_DTYPE_Q4_K), q6 = fr_dtype_weight_bytes(FR_DTYPE_Q6_K);
    double qkv = 0, down = 0;
    for (int l = 0; l < L; l++) {
        qkv += (double)HEADS * HD * H * q4 + (double)KV_HEADS * HD * H * q4 +
               (double)KV_HEADS * HD * H * fr_dtype_weight_bytes(mix_v(l));
        down += (double)H * I * fr_dtype_weight_bytes(mix_v(l));
    }
    const double o = (double)L * H * HEADS * HD * q4, gate_up = (double)L * 2 * I * H * q4;
    const double lm_head = (double)V * H * q6, embed_row = H * q6;
    const double norms = 4.0 * (2 * L * H + 2 * L * HD + H); /* f32: attn, mlp, q, k per layer; final */
    const struct {
        const char *block;
        double bytes;
    } want[] = {{"qkv_proj", qkv},   {"o_proj", o},        {"gate_up_proj", gate_up},
                {"down_proj", down}, {"lm_head", lm_head}, {"embed", embed_row}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect_eq(json_num(j, "blocks", want[i].block, "weight_bytes"), want[i].bytes,
                     "%s: %.0f, want %.0f", want[i].block,
                     json_num(j, "blocks", want[i].block, "weight_bytes"), want[i].bytes);
    const double matrices = qkv + o + gate_up + down + lm_head;
    cr_expect_eq(json_num(j, "steps", NULL, "weight_bytes"), matrices + embed_row + norms);
    /* DRAM: the matrices once, and the one cached position's K and V (bf16) */
    cr_expect_eq(json_num(j, "steps", NULL, "dram_bytes"), matrices + 2.0 * L * KV_HEADS * HD * 2);
    cr_expect_str_eq(cJSON_GetObjectItem(j, "dtype")->valuestring, "q4_k_m");
    cr_expect_str_eq(cJSON_GetObjectItem(j, "formats")->valuestring, "q4_k 12, q6_k 3");
    const cJSON *b;
    bool seen = false;
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(j, "block_formats")) {
        if (strcmp(cJSON_GetObjectItem(b, "name")->valuestring, "qkv_proj") != 0) continue;
        const cJSON *f = cJSON_GetObjectItem(b, "formats");
        cr_expect_eq(cJSON_GetObjectItem(b, "matrices")->valueint, 3 * L);
        cr_expect_eq(cJSON_GetObjectItem(f, "q4_k")->valueint, 5);
        cr_expect_eq(cJSON_GetObjectItem(f, "q6_k")->valueint, 1);
        seen = true;
    }
    cr_expect(seen, "block_formats lacks qkv_proj");
    cJSON_Delete(j);
    /* the text: the mix in the heading line, and each block's formats beside its bytes */
    snprintf(cmd, sizeof cmd, "predict --model %s --dtype q4_k_m --context 0", dir);
    cli_run(&r, 0, cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "weights q4_k_m (matrices q4_k 12, q6_k 3)"), "%s", r.out);
    char row[96];
    snprintf(row, sizeof row, "| down_proj | 2 | q4_k 1, q6_k 1 | %.0f |", down);
    cr_expect(strstr(r.out, row), "no '%s' in %s", row, r.out);
    remove_in(dir, "config.json");
    rmdir(dir);
}

/* Qwen3-0.6B: 168 Q4_K and 29 Q6_K (the tied embedding among them), as llama.cpp's file holds them. */
Test(cli_predict, qwen3_06b_mixes_named_per_block) {
    cli_run(&r, 0, "predict --model qwen3-0.6b --dtype q4_k_m --context 0");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "weights q4_k_m (matrices q4_k 168, q6_k 29)"), "%.400s", r.out);
    cr_expect(strstr(r.out, "| qkv_proj | 84 | q4_k 70, q6_k 14 |"), "%s", r.out);
    cr_expect(strstr(r.out, "| down_proj | 28 | q4_k 14, q6_k 14 |"), "%s", r.out);
    cr_expect(strstr(r.out, "| lm_head | 1 | q6_k 1 |"), "%s", r.out);
    cli_run(&r, 0, "predict --model qwen3-0.6b --dtype q5_k_m --context 0 --format csv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "\nqwen3-0.6b,q5_k_m,bf16,0,step,"), "%.400s", r.out);
}

/* The figures of two predicts (blocks, steps, formats) are the same. */
static void expect_same_figures(const char *a_args, const char *b_args) {
    cJSON *a = run_json(a_args), *b = run_json(b_args);
    static const char *const keys[] = {"blocks", "steps", "formats", "block_formats"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        cr_expect(cJSON_Compare(cJSON_GetObjectItem(a, keys[i]), cJSON_GetObjectItem(b, keys[i]), true),
                  "%s differ: '%s' and '%s'", keys[i], a_args, b_args);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

Test(cli_predict, gguf_prices_as_its_dtype) {
    char dir[64], cmd[256], alt[256];
    write_config(dir);
    snprintf(cmd, sizeof cmd, "quantize --model %s --dtype q4_k_m --out %s/m.gguf", dir, dir);
    cli_run(&r, 1, cmd);
    cr_assert_eq(r.status, 0, "%s: %s", cmd, r.err);
    /* the file's own per-tensor types, with and without --model */
    snprintf(cmd, sizeof cmd, "predict --model %s --dtype q4_k_m --context 0,7 --format json", dir);
    snprintf(alt, sizeof alt, "predict --weights %s/m.gguf --context 0,7 --format json", dir);
    expect_same_figures(cmd, alt);
    snprintf(alt, sizeof alt, "predict --model %s --weights %s/m.gguf --context 0,7 --format json", dir, dir);
    expect_same_figures(cmd, alt);
    /* --dtype beside --weights is the type decode would run the file in (converted at load) */
    snprintf(cmd, sizeof cmd, "predict --model %s --dtype q8_0 --context 3 --format json", dir);
    snprintf(alt, sizeof alt, "predict --weights %s/m.gguf --dtype q8_0 --context 3 --format json", dir);
    expect_same_figures(cmd, alt);
    snprintf(cmd, sizeof cmd, "predict --weights %s/m.gguf --context 0", dir);
    cli_run(&r, 0, cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "weights mixed (matrices q4_k 12, q6_k 3)") &&
                  strstr(r.out, "/m.gguf (its tensor index read, nothing loaded)") &&
                  strstr(r.out, "file q4_k_m mix: 12 q4_k, 2 q6_k (+ embedding q6_k)"),
              "%.600s", r.out);
    cr_expect(strstr(r.out, "| qkv_proj | 6 | q4_k 5, q6_k 1 |"), "%s", r.out);
    remove_in(dir, "m.gguf");
    remove_in(dir, "config.json");
    rmdir(dir);
}

/* The tensor info of `name` in a GGUF buffer: the offset of its ggml type (after n_dims and the dims). */
static size_t type_field(const unsigned char *buf, size_t len, const char *name) {
    const size_t n = strlen(name);
    for (size_t i = 8; i + n + 4 <= len; i++) {
        uint64_t name_len;
        memcpy(&name_len, buf + i - 8, sizeof name_len);
        if (name_len != n || memcmp(buf + i, name, n) != 0) continue;
        uint32_t ndim;
        memcpy(&ndim, buf + i + n, sizeof ndim);
        return i + n + 4 + 8 * (size_t)ndim;
    }
    cr_assert_fail("no tensor %s", name);
    return 0;
}

/* Writes a copy of src at dst with blk.0.attn_q.weight's type set to ggml's Q2_K (10), which no loader reads.
 */
static void write_q2_k_copy(const char *src, const char *dst) {
    FILE *f = fopen(src, "rb");
    cr_assert_not_null(f);
    static unsigned char buf[1 << 20];
    const size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    cr_assert(len > 0 && len < sizeof buf);
    const size_t at = type_field(buf, len, "blk.0.attn_q.weight");
    const uint32_t q2_k = 10;
    memcpy(buf + at, &q2_k, sizeof q2_k);
    f = fopen(dst, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(buf, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

Test(cli_predict, bad_weights_refused) {
    char dir[64], cmd[256];
    write_config(dir);
    snprintf(cmd, sizeof cmd, "quantize --model %s --dtype q4_k_m --out %s/m.gguf", dir, dir);
    cli_run(&r, 1, cmd);
    cr_assert_eq(r.status, 0, "%s: %s", cmd, r.err);
    char m[96], q2[96], none[96];
    snprintf(m, sizeof m, "%s/m.gguf", dir);
    snprintf(q2, sizeof q2, "%s/q2_k.gguf", dir);
    snprintf(none, sizeof none, "%s/none.gguf", dir);
    write_q2_k_copy(m, q2);
    const struct {
        const char *args, *file, *says;
        bool names_file;
    } bad[] = {
        {"--weights %s", none, "cannot open", true},
        {"--model tests/fixtures/tiny-qwen3 --weights %s", m, "'qwen3.embedding_length' is 256", true},
        {"--model tests/fixtures/tiny-qwen3 --weights %s", "tests/fixtures/gguf/tiny-bf16.safetensors",
         "expected [257, 64]", true},
        {"--weights %s", "tests/fixtures/gguf/tiny-bf16.safetensors", "give --model as well", true},
        {"--weights %s", q2, "type q2_k is not read", true},
        {"--weights %s --dtype q4_0", "tests/fixtures/gguf/tiny-q8_0.gguf", "give --dtype q8_0", true},
        /* the format roof of a file that is no q8_0 or q4_0 one: refused, not ignored */
        {"--weights %s --quant-gflops 9 --bw-gbs 3", m, "q8_0 or q4_0 weights", false},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[256];
        int n = snprintf(args, sizeof args, "predict --context 0 ");
        snprintf(args + n, sizeof args - (size_t)n, bad[i].args, bad[i].file);
        cli_run(&r, 0, args);
        cr_expect_eq(r.status, 2, "'%s' exited %d: %s", args, r.status, r.err);
        const char *nl = strchr(r.err, '\n');
        cr_expect(strncmp(r.err, "forge-roofline: predict: ", 25) == 0 && nl && nl[1] == '\0',
                  "'%s': not one line: '%s'", args, r.err);
        cr_expect(strstr(r.err, bad[i].says), "'%s': '%s' lacks '%s'", args, r.err, bad[i].says);
        cr_expect(!bad[i].names_file || strstr(r.err, bad[i].file), "'%s': '%s' names no file", args, r.err);
    }
    /* a mix whose rows of 64 take llama.cpp's Q5_0 fallback, which no kernel runs; no model at all */
    static const char *const usage[] = {"predict --model tests/fixtures/tiny-qwen3 --dtype q4_k_m",
                                        "predict --model qwen3-0.6b --dtype q4_k_l", "predict --context 0"};
    cli_expect_usage_errors(0, usage, sizeof usage / sizeof usage[0]);
    remove_in(dir, "m.gguf");
    remove_in(dir, "q2_k.gguf");
    remove_in(dir, "config.json");
    rmdir(dir);
}
