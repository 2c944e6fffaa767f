/* The prompt-processing cost model (model/cost_prefill.c) pinned to figures counted by hand for the tiny
 * config of tests/model_fixtures.h (hidden 64, intermediate 96, 2 layers, 4 query and 2 KV heads of 32,
 * vocab 257: q 128 and k, v 64 wide, 512 bytes of bf16 K and V a position), to cost_step at n = 1, and
 * `forge-roofline predict --prompt-len` end to end. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <string.h>

#include "kernels/attention_prefill.h"
#include "model/cost.h"
#include "tests/cli_run.h"
#include "tests/model_fixtures.h"

static const struct cost_opts bf16 = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};

static const enum block_id matrices[] = {BLOCK_QKV_PROJ, BLOCK_O_PROJ, BLOCK_GATE_UP_PROJ, BLOCK_DOWN_PROJ};

Test(cost_prefill, projection_flops_by_hand) {
    struct qwen3_config c = fixture_tiny_config();
    struct prefill_cost p;
    cost_prefill(&c, &bf16, 3, 0, SAMPLER_VARIANT_GREEDY, &p);
    /* 2 n (q_dim + 2 kv_dim) hidden a layer: 2 x 3 x (128 + 128) x 64 x 2 layers */
    cr_expect_eq(p.blocks[BLOCK_QKV_PROJ].flops, 2.0 * 3 * 256 * 64 * 2);
    /* gate_up 2 n (2 I) hidden; down 2 n hidden I plus the residual add of hidden, per row and layer */
    cr_expect_eq(p.blocks[BLOCK_GATE_UP_PROJ].flops, 2.0 * 3 * 192 * 64 * 2);
    cr_expect_eq(p.blocks[BLOCK_DOWN_PROJ].flops, (2.0 * 64 * 96 + 64) * 3 * 2);
    cr_expect_eq(p.blocks[BLOCK_QKV_PROJ].weight_bytes, 256.0 * 64 * 2 * 2); /* read once, bf16 */
    cr_expect_eq(p.blocks[BLOCK_QKV_PROJ].act_bytes, 4.0 * (64 + 256) * 3 * 2);
    cr_expect_eq(p.blocks[BLOCK_QKV_PROJ].calls, 2);
    cr_expect_eq(p.blocks[BLOCK_EMBED].calls, 1);
    cr_expect_eq(p.blocks[BLOCK_EMBED].weight_bytes, 3 * 64 * 2.0); /* one row gathered per token */
}

/* n = 3 at depth 2: the rows sit at positions 2, 3, 4 and attend over 3, 4 and 5 positions (12 in all);
 * each position costs a query head 4 head_dim + 4 FLOPs and one exp. K and V: one tile of 3 rows reads
 * positions [0, 5), 5 per KV head and layer. */
Test(cost_prefill, attention_by_hand) {
    struct qwen3_config c = fixture_tiny_config();
    struct prefill_cost p;
    cost_prefill(&c, &bf16, 3, 2, SAMPLER_VARIANT_GREEDY, &p);
    const struct block_cost *a = &p.blocks[BLOCK_ATTENTION];
    cr_expect_eq(a->flops, 2.0 * 4 * 12 * (4 * 32 + 4));
    cr_expect_eq(a->exps, 2.0 * 4 * 12);
    cr_expect_eq(a->kv_read_bytes, 5 * 512.0);
    cr_expect_eq(a->dram_bytes, a->kv_read_bytes);
    cr_expect_eq(p.blocks[BLOCK_KV_APPEND].kv_write_bytes, 3 * 512.0); /* n new rows */
    cr_expect_eq(a->forks, 2.0);                                       /* one call a layer */
}

/* Tiles of 32 query rows: a tile reads [0, its last position]; 33 rows are tiles of 32 and 1 (32 + 33), 64
 * two full tiles (32 + 64), 65 three (32 + 64 + 65). */
Test(cost_prefill, kv_positions_follow_the_tiles) {
    cr_assert_eq(PREFILL_ATT_TILE_Q, 32);
    cr_expect_eq(prefill_attention_kv_positions(0, 33), 65.0);
    cr_expect_eq(prefill_attention_kv_positions(0, 64), 96.0);
    cr_expect_eq(prefill_attention_kv_positions(0, 65), 161.0);
    cr_expect_eq(prefill_attention_kv_positions(2, 33), 34.0 + 35);
    struct qwen3_config c = fixture_tiny_config();
    struct prefill_cost p;
    cost_prefill(&c, &bf16, 33, 0, SAMPLER_VARIANT_GREEDY, &p);
    cr_expect_eq(p.blocks[BLOCK_ATTENTION].kv_read_bytes, 65 * 512.0);
    cost_prefill(&c, &bf16, 64, 0, SAMPLER_VARIANT_GREEDY, &p);
    cr_expect_eq(p.blocks[BLOCK_ATTENTION].kv_read_bytes, 96 * 512.0);
    cr_expect_eq(p.total.kv_read_bytes, 96 * 512.0);
}

static void expect_block_eq(const struct block_cost *p, const struct block_cost *s, const char *what) {
    const char *name = block_name(s->id);
    cr_expect_eq(p->flops, s->flops, "%s %s flops %.0f vs %.0f", what, name, p->flops, s->flops);
    cr_expect_eq(p->weight_bytes, s->weight_bytes, "%s %s", what, name);
    cr_expect_eq(p->kv_read_bytes, s->kv_read_bytes, "%s %s", what, name);
    cr_expect_eq(p->kv_write_bytes, s->kv_write_bytes, "%s %s", what, name);
    cr_expect_eq(p->act_bytes, s->act_bytes, "%s %s", what, name);
    cr_expect_eq(p->bytes, s->bytes, "%s %s", what, name);
    cr_expect_eq(p->dram_bytes, s->dram_bytes, "%s %s", what, name);
    cr_expect_eq(p->cache_bytes, s->cache_bytes, "%s %s", what, name);
    for (int l = 0; l < COST_LEVEL_COUNT; l++)
        cr_expect_eq(p->level_bytes[l], s->level_bytes[l], "%s %s", what, name);
    cr_expect_eq(p->exps, s->exps, "%s %s", what, name);
    cr_expect_eq(p->quant_flops, s->quant_flops, "%s %s", what, name);
    cr_expect_eq(p->kernel_calls, s->kernel_calls, "%s %s", what, name);
    cr_expect_eq(p->forks, s->forks, "%s %s", what, name);
}

/* One prompt token is one decode step at context depth, block by block, in every format. */
Test(cost_prefill, one_token_is_cost_step) {
    const struct qwen3_config cfgs[] = {fixture_tiny_config(), fixture_qwen3_06b_config()};
    const enum fr_dtype types[] = {FR_DTYPE_BF16, FR_DTYPE_F32, FR_DTYPE_Q8_0, FR_DTYPE_Q4_0};
    const long depths[] = {0, 1, 31, 32, 1000};
    for (int k = 0; k < 2; k++)
        for (int t = 0; t < 4; t++)
            for (int d = 0; d < 5; d++) {
                const struct cost_opts o = {types[t], FR_DTYPE_BF16, NULL};
                struct prefill_cost p;
                struct step_cost s;
                cost_prefill(&cfgs[k], &o, 1, depths[d], SAMPLER_VARIANT_CHAIN, &p);
                cost_step(&cfgs[k], &o, depths[d], SAMPLER_VARIANT_CHAIN, &s);
                char what[64];
                snprintf(what, sizeof what, "%s %s depth %ld", cfgs[k].name, fr_dtype_name(types[t]),
                         depths[d]);
                for (int i = 0; i < BLOCK_COUNT; i++) expect_block_eq(&p.blocks[i], &s.blocks[i], what);
                expect_block_eq(&p.total, &s.total, what);
            }
}

/* The four layer matrices are read once whatever n; their FLOPs grow n-fold, and a block format's GEMM
 * works in f32 (no int8 work) once n > 1. */
Test(cost_prefill, matrix_weights_once) {
    struct qwen3_config c = fixture_qwen3_06b_config();
    const struct cost_opts q8 = {FR_DTYPE_Q8_0, FR_DTYPE_BF16, NULL};
    struct step_cost s;
    cost_step(&c, &q8, 0, SAMPLER_VARIANT_GREEDY, &s);
    const long ns[] = {2, 7, 512};
    for (int k = 0; k < 3; k++) {
        struct prefill_cost p;
        cost_prefill(&c, &q8, ns[k], 5, SAMPLER_VARIANT_GREEDY, &p);
        for (int m = 0; m < 4; m++) {
            const struct block_cost *b = &p.blocks[matrices[m]], *one = &s.blocks[matrices[m]];
            cr_expect_eq(b->weight_bytes, one->weight_bytes, "%s n %ld", block_name(matrices[m]), ns[k]);
            cr_expect_eq(b->dram_bytes, one->weight_bytes);
            cr_expect_eq(b->quant_weights, 0);
            cr_expect_eq(b->quant_flops, 0);
            /* one GEMM a layer, whatever its column panels (and o_proj's, down_proj's residual add) */
            const int adds = matrices[m] == BLOCK_O_PROJ || matrices[m] == BLOCK_DOWN_PROJ;
            cr_expect_eq(b->kernel_calls + b->forks, 28.0 * (1 + adds), "%s", block_name(matrices[m]));
        }
        /* n times the batch-1 FLOPs (the dequantisation work included): 2 a weight plus q8_0's per row */
        cr_expect_eq(p.blocks[BLOCK_QKV_PROJ].flops, ns[k] * s.blocks[BLOCK_QKV_PROJ].flops);
        cr_expect_gt(p.blocks[BLOCK_QKV_PROJ].flops, 2.0 * ns[k] * (2048 + 2 * 1024) * 1024 * 28);
        /* the LM head is a matvec of the last position: the format's int8 work stays */
        cr_expect_eq(p.blocks[BLOCK_LM_HEAD].quant_weights, 151936.0 * 1024);
    }
}

/* final_norm, lm_head and the sampler run once, for the last position; the totals add up. */
Test(cost_prefill, last_position_blocks_once) {
    struct qwen3_config c = fixture_qwen3_06b_config();
    struct prefill_cost p;
    cost_prefill(&c, &bf16, 300, 100, SAMPLER_VARIANT_CHAIN, &p);
    const enum block_id once[] = {BLOCK_FINAL_NORM, BLOCK_LM_HEAD, BLOCK_SAMPLER};
    for (int i = 0; i < 3; i++) {
        struct block_cost b;
        cost_block(&c, &bf16, once[i], 399, SAMPLER_VARIANT_CHAIN, &b);
        expect_block_eq(&p.blocks[once[i]], &b, "once");
    }
    cr_expect_eq(p.blocks[BLOCK_LM_HEAD].flops, 2.0 * 151936 * 1024);
    double flops = 0, bytes = 0;
    for (int i = 0; i < BLOCK_COUNT; i++) flops += p.blocks[i].flops, bytes += p.blocks[i].bytes;
    cr_expect_eq(p.total.flops, flops);
    cr_expect_eq(p.total.bytes, bytes);
    cr_expect_eq(p.total.dram_bytes + p.total.cache_bytes, p.total.bytes);
    cr_expect_eq(p.total.level_bytes[COST_LEVEL_DRAM], p.total.dram_bytes);
    cr_expect_eq(p.total.level_bytes[COST_LEVEL_L2], p.total.cache_bytes);
    cr_expect_eq(p.total.kv_write_bytes, 300 * 114688.0);
    cr_expect_eq(p.prompt_len, 300);
    cr_expect_eq(p.depth, 100);
}

/* ---- forge-roofline predict --prompt-len ---- */

static struct cli_result r;

Test(cli, predict_prompt_len_markdown) {
    cli_run(&r, 0, "predict --model qwen3-0.6b --prompt-len 1,512 --peak-gflops 400 --bw-gbs 60");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "## Prompt processing: N = 1 at depth 0 (positions 0 to 0)") != NULL, "%s",
              r.out);
    cr_expect(strstr(r.out, "## Prompt processing: N = 512 at depth 0 (positions 0 to 511)") != NULL);
    /* 2 x 512 x 4096 x 1024 x 28 FLOPs over the matrix read once: compute-bound at 400 GFLOP/s, 60 GB/s */
    cr_expect(strstr(r.out, "| qkv_proj | 28 | 120259084288 | 234881024 | 0 | 0 |") != NULL, "%s", r.out);
    const char *row = strstr(r.out, "| qkv_proj | 28 | 120259084288 |");
    cr_expect(row && strstr(row, "| compute |") < strchr(row, '\n'), "%s", row ? row : "");
    cr_expect(strstr(r.out, "predicted prefill time ") != NULL);
    cr_expect(strstr(r.out, "tokens/s") != NULL);
    cli_run(&r, 0, "predict --model qwen3-0.6b --prompt-len 64 --prompt-depth 100");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "N = 64 at depth 100 (positions 100 to 163)") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "predicted prefill time: pass --peak-gflops") != NULL);
}

/* JSON: one prompt's total is the decode step's at n = 1 (context = depth); with roofs, pp tokens/s =
 * n / predicted_s. CSV: one row a block and a "prompt" total. */
Test(cli, predict_prompt_len_json_csv) {
    cli_run(&r, 0,
            "predict --model qwen3-0.6b --context 7 --prompt-len 1,100 --prompt-depth 7 --format json "
            "--peak-gflops 400 --bw-gbs 60");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cJSON *j = cJSON_Parse(r.out);
    cr_assert(j != NULL, "not JSON: %.200s", r.out);
    cJSON *step = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "steps"), 0);
    cJSON *prompts = cJSON_GetObjectItem(j, "prompt");
    cr_assert_eq(cJSON_GetArraySize(prompts), 2);
    cJSON *one = cJSON_GetObjectItem(cJSON_GetArrayItem(prompts, 0), "total");
    cr_expect_eq(cJSON_GetObjectItem(one, "flops")->valuedouble,
                 cJSON_GetObjectItem(step, "flops")->valuedouble);
    cr_expect_eq(cJSON_GetObjectItem(one, "bytes")->valuedouble,
                 cJSON_GetObjectItem(step, "bytes")->valuedouble);
    cJSON *p100 = cJSON_GetArrayItem(prompts, 1), *t100 = cJSON_GetObjectItem(p100, "total");
    cr_expect_eq(cJSON_GetObjectItem(p100, "depth")->valuedouble, 7.0);
    cr_expect_eq(cJSON_GetArraySize(cJSON_GetObjectItem(p100, "blocks")), BLOCK_COUNT);
    double s = cJSON_GetObjectItem(t100, "predicted_s")->valuedouble;
    cr_expect(s > 0);
    cr_expect_float_eq(cJSON_GetObjectItem(t100, "tokens_per_s")->valuedouble, 100 / s, 1e-9 * 100 / s);
    cr_expect(cJSON_GetObjectItem(j, "prompt_roofs") != NULL);
    cJSON_Delete(j);
    cli_run(&r, 0, "predict --model tests/fixtures/tiny-qwen3 --prompt-len 4096 --format csv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_expect(strncmp(r.out, "model,weights,kv,prompt_len,depth,block,", 40) == 0, "%s", r.out);
    cr_expect(strstr(r.out, "tiny-qwen3,bf16,bf16,4096,0,prompt,1,") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "tiny-qwen3,bf16,bf16,4096,0,lm_head,1,") != NULL);
}

Test(cli, predict_prompt_len_usage_errors) {
    const char *bad[] = {
        "predict --model qwen3-0.6b --prompt-depth 3",
        "predict --model qwen3-0.6b --prompt-len 0",
        "predict --model qwen3-0.6b --prompt-len 1,,2",
        "predict --model qwen3-0.6b --prompt-len 8 --prompt-depth -1",
        "predict --model qwen3-0.6b --prompt-len 40961",
        "predict --model qwen3-0.6b --prompt-len 40960 --prompt-depth 1",
        "predict --model tests/fixtures/tiny-qwen3 --prompt-len 4000 --prompt-depth 97",
        "predict --model qwen3-0.6b --prompt-len 8 --peak-gflops 400",
        "predict --model qwen3-0.6b --prompt-len 8 --batch 1 --format csv",
    };
    cli_expect_usage_errors(0, bad, sizeof bad / sizeof bad[0]);
    cli_run(&r, 0, "predict --model qwen3-0.6b --prompt-len 40960 --prompt-depth 1");
    cr_expect(strstr(r.err, "max_position_embeddings") != NULL, "%s", r.err);
    cli_run(&r, 0, "predict --model tests/fixtures/tiny-qwen3 --prompt-len 4000 --prompt-depth 96");
    cr_expect_eq(r.status, 0, "%s", r.err);
}
