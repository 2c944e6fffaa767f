/* The cost model pinned to figures computed by hand from Qwen3-0.6B's config.json:
 * per layer, matrices are q,k,v (2048+1024+1024) x 1024, o 1024 x 2048, gate+up 6144 x 1024, down 1024 x 3072
 * = 15,728,640 elements; norms 1024+1024+128+128 f32 values; the LM head is 151,936 x 1024. */
#include <criterion/criterion.h>
#include <math.h>

#include "kernels/sampler.h"
#include "model/config.h"
#include "model/cost.h"
#include "tests/model_fixtures.h"

static struct qwen3_config load(void) {
    struct qwen3_config c;
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_config_load("model/qwen3-0.6b/config.json", &c, &err), 0, "%s", err.msg);
    return c;
}

Test(cost, params_self_check) {
    const char *models[] = {"model/qwen3-0.6b/config.json", "model/qwen3-1.7b/config.json",
                            "model/qwen3-4b/config.json", "model/qwen3-8b/config.json"};
    for (int i = 0; i < 4; i++) {
        struct qwen3_config c;
        struct fr_err err;
        cr_assert_eq(qwen3_config_load(models[i], &c, &err), 0);
        cr_expect_eq(cost_params_from_blocks(&c), qwen3_param_count(&c), "%s", models[i]);
    }
}

Test(cost, weight_bytes_per_step) {
    struct qwen3_config c = load();
    const double matrices = 15728640.0 * 28, norms_f32 = (1024 + 1024 + 128 + 128) * 4.0 * 28 + 1024 * 4.0;
    const double lm_head = 151936.0 * 1024, embed_row = 1024;
    struct step_cost s;
    struct cost_opts bf16 = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL}, f32 = {FR_DTYPE_F32, FR_DTYPE_F32, NULL};
    cost_step(&c, &bf16, 0, SAMPLER_VARIANT_GREEDY, &s);
    cr_expect_eq(s.total.weight_bytes, 2 * (matrices + lm_head + embed_row) + norms_f32);
    cr_expect_eq(s.total.weight_bytes, 1192232960.0);
    cr_expect_eq(s.blocks[BLOCK_LM_HEAD].weight_bytes, 311164928.0);
    cr_expect_eq(s.blocks[BLOCK_EMBED].weight_bytes, 2048.0); /* one row, not the table */
    cost_step(&c, &f32, 0, SAMPLER_VARIANT_GREEDY, &s);
    cr_expect_eq(s.total.weight_bytes, 4 * (matrices + lm_head + embed_row) + norms_f32);
    cr_expect_eq(s.blocks[BLOCK_LM_HEAD].weight_bytes, 622329856.0);
}

Test(cost, kv_bytes) {
    struct qwen3_config c = load();
    cr_expect_eq(cost_kv_bytes_per_position(&c, FR_DTYPE_BF16), 114688.0); /* 2 x 28 x 8 x 128 x 2 */
    cr_expect_eq(cost_kv_bytes_per_position(&c, FR_DTYPE_F32), 229376.0);
    struct cost_opts o = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct step_cost s1, s2;
    cost_step(&c, &o, 1, SAMPLER_VARIANT_GREEDY, &s1);
    cost_step(&c, &o, 4096, SAMPLER_VARIANT_GREEDY, &s2);
    cr_expect_eq(s2.total.kv_read_bytes, 4097 * 114688.0); /* T + 1 positions */
    cr_expect_eq(s2.total.kv_read_bytes - s1.total.kv_read_bytes, 4095 * 114688.0);
    cr_expect_eq(s1.total.kv_write_bytes, 114688.0 / 1); /* one new position: K and V, all layers */
    cr_expect_eq(s1.total.weight_bytes, s2.total.weight_bytes);
}

Test(cost, flops_per_step) {
    struct qwen3_config c = load();
    struct cost_opts o = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct step_cost s;
    cost_step(&c, &o, 4096, SAMPLER_VARIANT_GREEDY, &s);
    double matvec = 0;
    for (int i = 0; i < BLOCK_COUNT; i++)
        if (block_table()[i].reads_weights) matvec += s.blocks[i].flops;
    /* 2 FLOPs per matrix weight, plus the two residual adds of 1024 per layer */
    cr_expect_eq(matvec, 2 * (15728640.0 * 28 + 151936.0 * 1024) + 2 * 1024 * 28);
    cr_expect_eq(s.blocks[BLOCK_ATTENTION].flops, 28.0 * 16 * 4097 * (4 * 128 + 4));
    cr_expect_eq(s.blocks[BLOCK_QKV_PROJ].calls, 28);
    cr_expect_eq(s.blocks[BLOCK_LM_HEAD].calls, 1);
    double sum = 0;
    for (int i = 0; i < BLOCK_COUNT; i++) sum += s.blocks[i].flops;
    cr_expect_eq(sum, s.total.flops);
    cr_expect_eq(s.total.bytes,
                 s.total.weight_bytes + s.total.kv_read_bytes + s.total.kv_write_bytes + s.total.act_bytes);
}

Test(cost, sampler_passes) {
    struct qwen3_config c = load();
    struct cost_opts o = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct block_cost g, ch;
    cost_block(&c, &o, BLOCK_SAMPLER, 0, SAMPLER_VARIANT_GREEDY, &g);
    cost_block(&c, &o, BLOCK_SAMPLER, 0, SAMPLER_VARIANT_CHAIN, &ch);
    cr_expect_eq(g.bytes, 151936.0 * 4);      /* one read pass */
    cr_expect_eq(ch.bytes, 151936.0 * 4 * 7); /* 4 read and 3 write passes */
    cr_expect_eq(g.weight_bytes, 0);
}

Test(cost, untied_lm_head_is_its_own_matrix) {
    struct qwen3_config c;
    struct fr_err err;
    cr_assert_eq(qwen3_config_load("model/qwen3-8b/config.json", &c, &err), 0);
    struct cost_opts o = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct block_cost b;
    cost_block(&c, &o, BLOCK_LM_HEAD, 0, SAMPLER_VARIANT_GREEDY, &b);
    cr_expect_eq(b.weight_bytes, 151936.0 * 4096 * 2);
}

Test(cost, dram_and_cache_split) {
    struct qwen3_config c = load();
    struct cost_opts o = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct step_cost s;
    cost_step(&c, &o, 1, SAMPLER_VARIANT_CHAIN, &s);
    /* DRAM: every matrix weight (layers + LM head) in bf16 and the KV of 2 positions */
    cr_expect_eq(s.total.dram_bytes, 2 * (15728640.0 * 28 + 151936.0 * 1024) + 2 * 114688.0);
    cr_expect_eq(s.total.dram_bytes + s.total.cache_bytes, s.total.bytes);
    cr_expect_eq(s.blocks[BLOCK_ATTN_NORM].dram_bytes, 0); /* norm weights stay in cache */
    cr_expect_eq(s.blocks[BLOCK_ATTENTION].dram_bytes, s.blocks[BLOCK_ATTENTION].kv_read_bytes);
}

/* Activation bytes where the kernels do more than read an input and write an output: the residual
 * projections' add re-reads the matvec result (matvec x in, y out; add reads y and x, writes x), and the
 * attention scores are written, read for the max, read and rewritten by exp, and read for the sum of V. */
Test(cost, activation_bytes_follow_the_kernels) {
    struct qwen3_config c = load();
    struct cost_opts o = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct step_cost s;
    cost_step(&c, &o, 4096, SAMPLER_VARIANT_GREEDY, &s);
    cr_expect_eq(s.blocks[BLOCK_O_PROJ].act_bytes, 28 * 4.0 * (2048 + 1024 + 3 * 1024));    /* 688,128 */
    cr_expect_eq(s.blocks[BLOCK_DOWN_PROJ].act_bytes, 28 * 4.0 * (3072 + 1024 + 3 * 1024)); /* 802,816 */
    cr_expect_eq(s.blocks[BLOCK_O_PROJ].act_bytes, 688128.0);
    /* q in, out written (2 x 2048 f32) and 5 touches of 16 x 4097 f32 scores, per layer */
    cr_expect_eq(s.blocks[BLOCK_ATTENTION].act_bytes, 28 * (4.0 * 2 * 2048 + 4.0 * 5 * 16 * 4097));
    cr_expect_eq(s.blocks[BLOCK_ATTENTION].act_bytes, 37167872.0);
}

/* The per-level split worked by hand for the tiny config (hidden 64, intermediate 96, 2 layers, 4 query and
 * 2 KV heads of 32, vocab 257), bf16 weights and KV, context 3 (4 positions), on a made-up machine: L1 1 KiB,
 * L2 8 KiB, L3 64 KiB per core, 2 threads. Working sets per call (bytes): norm 8 x 64 = 512 (L1); qkv
 * 4 x (64 + 256) = 1280 (L2); qk_norm 4 x 192 = 768 (L1); rope 768 + 128 = 896 (L1); kv_append 8 x 64 = 512
 * (L1); attention (4 x 256 + 4 x 4 heads x 64 positions) / 2 threads = 1024 (L1); o_proj 4 x (128 + 128) =
 * 1024 (L1); gate_up 4 x (64 + 192) = 1024 (L1); swiglu 12 x 96 = 1152 (L2); down_proj 4 x (96 + 128) = 896
 * (L1); lm_head 4 x (64 + 257) = 1284 (L2); sampler 7 x 257 = 1799 (L2). Every matvec here is below the
 * 65,536-weight team threshold, so it is a plain call; attention forks. */
Test(cost, per_level_bytes_tiny_by_hand) {
    struct qwen3_config c = fixture_tiny_config();
    struct cost_opts o = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct cost_caches m = {.bytes = {1024, 8192, 65536}, .threads = 2};
    struct step_cost s;
    cost_step_on(&c, &o, &m, 3, SAMPLER_VARIANT_CHAIN, &s);
    /* {DRAM, L1, L2, L3}, exps, kernel calls, forks */
    static const double want[BLOCK_COUNT][7] = {
        [BLOCK_EMBED] = {0, 128 + 256, 0, 0, 0, 1, 0},
        [BLOCK_ATTN_NORM] = {0, 512 + 1024, 0, 0, 0, 2, 0},
        [BLOCK_QKV_PROJ] = {65536, 0, 2560, 0, 0, 2, 0},
        [BLOCK_QK_NORM] = {0, 512 + 3072, 0, 0, 0, 12, 0},
        [BLOCK_ROPE] = {0, 3328, 0, 0, 0, 4, 0},
        [BLOCK_KV_APPEND] = {0, 512 + 1024, 0, 0, 0, 8, 0},
        [BLOCK_ATTENTION] = {2048, 2688, 0, 0, 32, 0, 2},
        [BLOCK_O_PROJ] = {32768, 3072, 0, 0, 0, 4, 0},
        [BLOCK_MLP_NORM] = {0, 512 + 1024, 0, 0, 0, 2, 0},
        [BLOCK_GATE_UP_PROJ] = {49152, 2048, 0, 0, 0, 2, 0},
        [BLOCK_SWIGLU] = {0, 0, 2304, 0, 192, 2, 0},
        [BLOCK_DOWN_PROJ] = {24576, 2816, 0, 0, 0, 4, 0},
        [BLOCK_FINAL_NORM] = {0, 256 + 512, 0, 0, 0, 1, 0},
        [BLOCK_LM_HEAD] = {32896, 0, 1284, 0, 0, 1, 0},
        [BLOCK_SAMPLER] = {0, 0, 7196, 0, 257, 1, 0},
    };
    for (int b = 0; b < BLOCK_COUNT; b++) {
        const struct block_cost *k = &s.blocks[b];
        const char *n = block_name((enum block_id)b);
        for (int l = 0; l < COST_LEVEL_COUNT; l++)
            cr_expect_eq(k->level_bytes[l], want[b][l], "%s %s bytes: %.0f, by hand %.0f", n,
                         cost_level_name((enum cost_level)l), k->level_bytes[l], want[b][l]);
        cr_expect_eq(k->exps, want[b][4], "%s exps %.0f", n, k->exps);
        cr_expect_eq(k->kernel_calls, want[b][5], "%s calls %.0f", n, k->kernel_calls);
        cr_expect_eq(k->forks, want[b][6], "%s forks %.0f", n, k->forks);
        double sum = 0;
        for (int l = 0; l < COST_LEVEL_COUNT; l++) sum += k->level_bytes[l];
        cr_expect_eq(sum, k->bytes, "%s: the levels add up to the bytes", n);
    }
    cr_expect(s.blocks[BLOCK_ATTENTION].parallel && !s.blocks[BLOCK_QKV_PROJ].parallel);
    /* without a machine: every cache-resident byte at L2, as the two-level model charged it */
    cost_step(&c, &o, 3, SAMPLER_VARIANT_CHAIN, &s);
    cr_expect_eq(s.blocks[BLOCK_ROPE].level_bytes[COST_LEVEL_L2], 3328.0);
    cr_expect_eq(s.blocks[BLOCK_QKV_PROJ].level_bytes[COST_LEVEL_DRAM], 65536.0);
}

/* At Qwen3-0.6B's size the matvecs open a team: one fork per call; o_proj and down_proj add the residual
 * add as a plain call, and down_proj (3072 columns, two column panels) its second panel's work-share; a
 * working set above the L3 (none here at 32 MiB) would go to DRAM. */
Test(cost, forks_and_calls_06b) {
    struct qwen3_config c = fixture_qwen3_06b_config();
    struct cost_opts o = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct cost_caches m = {.bytes = {32768, 1 << 20, 32 << 20}, .threads = 2};
    struct block_cost b;
    cost_block_on(&c, &o, &m, BLOCK_QKV_PROJ, 0, SAMPLER_VARIANT_CHAIN, &b);
    cr_expect(b.forks == 28 && b.kernel_calls == 0 && b.parallel);
    cost_block_on(&c, &o, &m, BLOCK_O_PROJ, 0, SAMPLER_VARIANT_CHAIN, &b);
    cr_expect(b.forks == 28 && b.kernel_calls == 28);
    cost_block_on(&c, &o, &m, BLOCK_DOWN_PROJ, 0, SAMPLER_VARIANT_CHAIN, &b);
    cr_expect(b.forks == 28 && b.kernel_calls == 2 * 28, "forks %.0f calls %.0f", b.forks, b.kernel_calls);
    cost_block_on(&c, &o, &m, BLOCK_QK_NORM, 0, SAMPLER_VARIANT_CHAIN, &b);
    cr_expect_eq(b.kernel_calls, 28 * (16 + 8), "one rmsnorm per head");
    /* a batch's GEMM walks the panels inside each row chunk: only the fork and the residual add remain */
    struct step_cost batched;
    cost_step_batch_on(&c, &o, &m, 0, 4, SAMPLER_VARIANT_CHAIN, &batched);
    cr_expect(batched.blocks[BLOCK_DOWN_PROJ].forks == 28 &&
                  batched.blocks[BLOCK_DOWN_PROJ].kernel_calls == 28,
              "batch 4: forks %.0f calls %.0f", batched.blocks[BLOCK_DOWN_PROJ].forks,
              batched.blocks[BLOCK_DOWN_PROJ].kernel_calls);
    /* the sampler's two rows of 151,936 f32 (1.2 MB) do not fit the 1 MiB L2: L3 */
    cost_block_on(&c, &o, &m, BLOCK_SAMPLER, 0, SAMPLER_VARIANT_CHAIN, &b);
    cr_expect_eq(b.level_bytes[COST_LEVEL_L3], 4.0 * 151936 * 7);
    cr_expect_eq(b.exps, 151936.0);
    struct cost_caches small = {.bytes = {32768, 1 << 20, 0}, .threads = 2};
    cost_block_on(&c, &o, &small, BLOCK_SAMPLER, 0, SAMPLER_VARIANT_CHAIN, &b);
    cr_expect_eq(b.level_bytes[COST_LEVEL_DRAM], 4.0 * 151936 * 7, "no L3: the working set comes from DRAM");
}

/* The sampler chain's softmax splits over the team (one fork, its exps at the team's rate) from 32768 tokens;
 * greedy, one thread and a small vocabulary stay one plain call. */
Test(cost, sampler_softmax_on_the_team) {
    struct qwen3_config c = fixture_qwen3_06b_config();
    struct cost_opts o = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct cost_caches two = {.bytes = {32768, 1 << 20, 32 << 20}, .threads = 2, .step_team = true};
    struct cost_caches one = {.bytes = {32768, 1 << 20, 32 << 20}, .threads = 1};
    struct block_cost b;
    cost_block_on(&c, &o, &two, BLOCK_SAMPLER, 0, SAMPLER_VARIANT_CHAIN, &b);
    cr_expect(b.exps_parallel && b.forks == 1 && b.kernel_calls == 0 && !b.parallel);
    cost_block_on(&c, &o, &two, BLOCK_SAMPLER, 0, SAMPLER_VARIANT_GREEDY, &b);
    cr_expect(!b.exps_parallel && b.forks == 0 && b.kernel_calls == 1);
    cost_block_on(&c, &o, &one, BLOCK_SAMPLER, 0, SAMPLER_VARIANT_CHAIN, &b);
    cr_expect(!b.exps_parallel && b.forks == 0 && b.kernel_calls == 1);
    c.vocab = SAMPLER_SOFTMAX_SPLIT_MIN - 1;
    cost_block_on(&c, &o, &two, BLOCK_SAMPLER, 0, SAMPLER_VARIANT_CHAIN, &b);
    cr_expect(!b.exps_parallel && b.forks == 0 && b.kernel_calls == 1);
}

/* On the step's kernel team (model/decode.h decode_runs_team) and on one thread the matvecs and attention
 * open no region: each call is a kernel call, none a fork. On the team each of a matvec's panels ends at the
 * team's barrier, and attention meets it twice where the team shares it, once where thread 0 runs it alone
 * (one cached position: too few to share); on one thread each panel after the first is one more call. */
Test(cost, team_step_and_one_thread_fork_nothing) {
    struct qwen3_config c = fixture_qwen3_06b_config();
    struct cost_opts o = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    const struct cost_caches machines[] = {
        {.bytes = {32768, 1 << 20, 32 << 20}, .threads = 2, .step_team = true},
        {.bytes = {32768, 1 << 20, 32 << 20}, .threads = 1},
    };
    for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++) {
        const double team = i == 0; /* barriers only on the team of two */
        struct block_cost b;
        cost_block_on(&c, &o, &machines[i], BLOCK_QKV_PROJ, 0, SAMPLER_VARIANT_CHAIN, &b);
        cr_expect(b.forks == 0 && b.kernel_calls == 28 && b.barriers == team * 28, "qkv_proj, machine %zu",
                  i);
        cost_block_on(&c, &o, &machines[i], BLOCK_O_PROJ, 0, SAMPLER_VARIANT_CHAIN, &b);
        cr_expect(b.forks == 0 && b.kernel_calls == 2 * 28 && b.barriers == team * 28,
                  "o_proj and its residual add, machine %zu", i);
        cost_block_on(&c, &o, &machines[i], BLOCK_DOWN_PROJ, 0, SAMPLER_VARIANT_CHAIN, &b);
        cr_expect(b.forks == 0 && b.kernel_calls == (team ? 2 : 3) * 28 && b.barriers == team * 2 * 28,
                  "down_proj's two panels and its add, machine %zu", i);
        cost_block_on(&c, &o, &machines[i], BLOCK_ATTENTION, 1024, SAMPLER_VARIANT_CHAIN, &b);
        cr_expect(b.forks == 0 && b.kernel_calls == 28 && b.barriers == team * 2 * 28,
                  "attention, machine %zu", i);
        cost_block_on(&c, &o, &machines[i], BLOCK_ATTENTION, 0, SAMPLER_VARIANT_CHAIN, &b);
        cr_expect(b.forks == 0 && b.kernel_calls == 28 && b.barriers == team * 28,
                  "attention on one position, machine %zu", i);
        cost_block_on(&c, &o, &machines[i], BLOCK_LM_HEAD, 0, SAMPLER_VARIANT_CHAIN, &b);
        cr_expect(b.forks == 0 && b.kernel_calls == 1 && b.barriers == team, "lm_head, machine %zu", i);
        cost_block_on(&c, &o, &machines[i], BLOCK_SWIGLU, 0, SAMPLER_VARIANT_CHAIN, &b);
        cr_expect(b.barriers == 0, "swiglu runs on thread 0, machine %zu", i);
    }
    /* a batched step runs on no team: its parallel calls fork, and meet no team barrier */
    struct step_cost s;
    cost_step_batch_on(&c, &o, &machines[0], 0, 4, SAMPLER_VARIANT_CHAIN, &s);
    cr_expect(s.blocks[BLOCK_QKV_PROJ].forks == 28 && s.blocks[BLOCK_QKV_PROJ].barriers == 0);
    cr_expect(s.total.barriers == 0);
}

/* A batched step reads the matrices once and everything per token B times: the bf16 weights of a step
 * stay 1,192,232,960 bytes less the per-token ones (norms 4 * (2 * 1024 + 256) * 28 + 4096 and one
 * embedding row) counted B times; FLOPs and KV reads scale with B. */
Test(cost, batch_scales_per_token_not_matrices) {
    struct qwen3_config c = load();
    struct cost_opts bf16 = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct step_cost one, b8, s;
    cost_step(&c, &bf16, 1024, SAMPLER_VARIANT_CHAIN, &s);
    cost_step_batch(&c, &bf16, 1024, 1, SAMPLER_VARIANT_CHAIN, &one);
    cr_expect_eq(one.total.flops, s.total.flops);
    cr_expect_eq(one.total.bytes, s.total.bytes);
    cr_expect_eq(one.total.dram_bytes, s.total.dram_bytes);
    cost_step_batch(&c, &bf16, 1024, 8, SAMPLER_VARIANT_CHAIN, &b8);
    const double per_token_w = 4.0 * (2 * 1024 + 256) * 28 + 4096 + 2048;
    const double matrices = 1192232960.0 - per_token_w;
    cr_expect_eq(b8.total.weight_bytes, matrices + 8 * per_token_w);
    cr_expect_eq(b8.total.flops, 8 * s.total.flops);
    cr_expect_eq(b8.total.kv_read_bytes, 8 * 1025.0 * 114688);
    cr_expect_eq(b8.total.dram_bytes, matrices + 8 * 1025.0 * 114688);
}

/* The per-level split of a batched step on a machine: the levels still sum to the bytes, each block's levels
 * are B times its B = 1 levels, and only a matrix's DRAM stream stays one (the split of cost_step_on). */
Test(cost, batch_levels_on_a_machine) {
    struct qwen3_config c = load();
    struct cost_opts bf16 = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct cost_caches m = {.bytes = {32768, 1 << 20, 32 << 20}, .threads = 2};
    struct step_cost one, b8, on;
    cost_step_on(&c, &bf16, &m, 1024, SAMPLER_VARIANT_CHAIN, &on);
    cost_step_batch_on(&c, &bf16, &m, 1024, 1, SAMPLER_VARIANT_CHAIN, &one);
    cost_step_batch_on(&c, &bf16, &m, 1024, 8, SAMPLER_VARIANT_CHAIN, &b8);
    for (int l = 0; l < COST_LEVEL_COUNT; l++)
        cr_expect_eq(one.total.level_bytes[l], on.total.level_bytes[l]);
    double sum = 0;
    for (int l = 0; l < COST_LEVEL_COUNT; l++) sum += b8.total.level_bytes[l];
    cr_expect(fabs(sum - b8.total.bytes) <= 1e-9 * b8.total.bytes, "%.0f vs %.0f", sum, b8.total.bytes);
    for (int i = 0; i < BLOCK_COUNT; i++) {
        double w = block_table()[i].reads_weights ? on.blocks[i].weight_bytes : 0;
        cr_expect_eq(b8.blocks[i].level_bytes[COST_LEVEL_DRAM],
                     8 * on.blocks[i].level_bytes[COST_LEVEL_DRAM] - 7 * w, "%s",
                     block_name((enum block_id)i));
        for (int l = COST_LEVEL_L1; l < COST_LEVEL_COUNT; l++)
            cr_expect_eq(b8.blocks[i].level_bytes[l], 8 * on.blocks[i].level_bytes[l], "%s",
                         block_name((enum block_id)i));
    }
    cr_expect(b8.total.level_bytes[COST_LEVEL_L1] > 0 && b8.total.level_bytes[COST_LEVEL_L2] > 0);
}

/* The ridge by hand for context 0 (no KV beyond one position), all bytes charged at one bandwidth:
 * mem(B) = (W + B p) / bw, compute(B) = B f / peak, so B* = W / (f bw / peak - p). */
Test(cost, batch_ridge_by_hand) {
    struct qwen3_config c = load();
    struct cost_opts bf16 = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct step_cost one, two;
    cost_step_batch(&c, &bf16, 0, 1, SAMPLER_VARIANT_GREEDY, &one);
    cost_step_batch(&c, &bf16, 0, 2, SAMPLER_VARIANT_GREEDY, &two);
    double p = two.total.bytes - one.total.bytes, W = one.total.bytes - p, f = one.total.flops;
    double want = W / (f * 20.0 / 200.0 - p);
    double got = cost_batch_ridge(&c, &bf16, 0, SAMPLER_VARIANT_GREEDY, 0, 200.0, 20.0, 20.0);
    cr_expect(fabs(got - want) <= 1e-9 * want, "ridge %.6f, by hand %.6f", got, want);
    cr_expect(got > 5 && got < 15, "bf16 ridge near peak / bw = 10: %.3f", got);
    struct cost_opts f32 = {FR_DTYPE_F32, FR_DTYPE_BF16, NULL};
    double r32 = cost_batch_ridge(&c, &f32, 0, SAMPLER_VARIANT_GREEDY, 0, 200.0, 20.0, 20.0);
    cr_expect(r32 > 1.8 * got && r32 < 2.2 * got, "f32 weights double the ridge: %.3f vs %.3f", r32, got);
    /* KV reads of a long context outgrow the FLOPs per sequence: memory-bound at any batch */
    cr_expect(isinf(cost_batch_ridge(&c, &bf16, 40000, SAMPLER_VARIANT_GREEDY, 0, 200.0, 20.0, 20.0)));
}

/* The projections alone: bytes are the matrices (read once) plus f32 activations in cache, FLOPs 2 per
 * weight per token. With every byte at 20 GB/s and 200 GFLOP/s the ridge is W / (2 P bw / peak - a): near
 * peak / bw = 10 for bf16 weights (1 FLOP per byte per token), whatever the context. */
Test(cost, batch_ridge_projections_only) {
    struct qwen3_config c = load();
    struct cost_opts bf16 = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct block_cost p1, p2;
    cost_batch_projections(&c, &bf16, 1024, 1, &p1);
    cost_batch_projections(&c, &bf16, 1024, 2, &p2);
    cr_expect_eq(p1.weight_bytes, 2.0 * (15728640.0 * 28 + 151936.0 * 1024));
    cr_expect_eq(p2.weight_bytes, p1.weight_bytes);
    cr_expect_eq(p2.flops, 2 * p1.flops);
    double a = p2.bytes - p1.bytes, W = p1.bytes - a;
    double want = W / (p1.flops * 20.0 / 200.0 - a);
    double got = cost_batch_ridge(&c, &bf16, 1024, SAMPLER_VARIANT_GREEDY, 1, 200.0, 20.0, 20.0);
    cr_expect(fabs(got - want) <= 1e-9 * want, "ridge %.6f, by hand %.6f", got, want);
    cr_expect(got > 9 && got < 12, "%.3f", got);
}
