/* qwen3_weights: the sizes table against hand-computed sizes and Qwen3-0.6B's published parameter count,
 * the carving (alignment, tied/untied LM head), synthetic determinism and ranges, and the memory refusal. */
#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "model/cost.h"
#include "model/weights.h"
#include "tests/model_fixtures.h"

Test(weights, sizes_of_qwen3_06b) {
    struct qwen3_config c = fixture_qwen3_06b_config();
    struct qwen3_weight_sizes sz;
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_sizes(&c, FR_DTYPE_BF16, &sz, &err), 0, "%s", err.msg);
    cr_expect_eq(sz.embed_bytes, 311164928u); /* 151936 * 1024 * 2, the design's 311 MB LM head */
    cr_expect_eq(sz.lm_head_bytes, sz.embed_bytes);
    cr_expect_eq(sz.lm_head_own_bytes, 0u);
    cr_expect_eq(sz.qkv_bytes, (size_t)(2048 + 1024 + 1024) * 1024 * 2);
    cr_expect_eq(sz.o_bytes, (size_t)1024 * 2048 * 2);
    cr_expect_eq(sz.gate_up_bytes, (size_t)2 * 3072 * 1024 * 2);
    cr_expect_eq(sz.down_bytes, (size_t)1024 * 3072 * 2);
    /* Parameters: matrices at 2 bytes each, norms widened to 4 bytes each. */
    uint64_t matrix_bytes = sz.qkv_bytes + sz.o_bytes + sz.gate_up_bytes + sz.down_bytes;
    uint64_t norm_bytes = sz.attn_norm_bytes + sz.qk_norm_bytes + sz.mlp_norm_bytes;
    cr_expect_eq(sz.layer_bytes, matrix_bytes + norm_bytes);
    uint64_t params = sz.embed_bytes / 2 + sz.final_norm_bytes / 4 + 28 * (matrix_bytes / 2 + norm_bytes / 4);
    cr_expect_eq(params, 596049920u, "parameters %llu", (unsigned long long)params);
    /* Bytes one bf16 step streams from the matrices and the tied LM head: ~1.19 GB less the embedding
     * gather (one row), which is not a table read. */
    uint64_t step_bytes = 28 * matrix_bytes + sz.lm_head_bytes;
    cr_expect(step_bytes > 1.18e9 && step_bytes < 1.20e9, "step bytes %llu", (unsigned long long)step_bytes);
    cr_expect_geq(sz.total_bytes, sz.embed_bytes + 28 * sz.layer_bytes + sz.final_norm_bytes);
}

Test(weights, sizes_f32_and_untied) {
    struct qwen3_config c = fixture_tiny_config();
    c.tied_embeddings = false;
    struct qwen3_weight_sizes sz;
    cr_assert_eq(qwen3_weights_sizes(&c, FR_DTYPE_F32, &sz, NULL), 0);
    cr_expect_eq(sz.embed_bytes, (size_t)257 * 64 * 4);
    cr_expect_eq(sz.lm_head_own_bytes, sz.embed_bytes);
    cr_expect_eq(sz.qkv_bytes, (size_t)(128 + 64 + 64) * 64 * 4);
    cr_expect_eq(sz.qk_norm_bytes, (size_t)2 * 32 * 4);
}

Test(weights, sizes_refuse_bad_shapes) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weight_sizes sz;
    struct fr_err err = {{0}};
    c.hidden = 0;
    cr_expect_neq(qwen3_weights_sizes(&c, FR_DTYPE_BF16, &sz, &err), 0);
    cr_expect(strstr(err.msg, "positive") != NULL, "%s", err.msg);
    c = fixture_tiny_config();
    c.hidden = c.vocab = c.intermediate = c.n_heads = 0x7fffffff;
    cr_expect_neq(qwen3_weights_sizes(&c, FR_DTYPE_F32, &sz, &err), 0);
    cr_expect(strstr(err.msg, "overflow") != NULL, "%s", err.msg);
    c.n_layers = 0x7fffffff; /* more than a per-tensor formats table holds */
    cr_expect_neq(qwen3_weights_sizes(&c, FR_DTYPE_F32, &sz, &err), 0);
    cr_expect(strstr(err.msg, "layers, at most 128") != NULL, "%s", err.msg);
}

Test(weights, carving_tied_and_untied) {
    for (int tied = 0; tied <= 1; tied++) {
        struct qwen3_config c = fixture_tiny_config();
        c.tied_embeddings = tied;
        struct qwen3_weights w;
        struct fr_err err = {{0}};
        cr_assert_eq(qwen3_weights_alloc(&w, &c, FR_DTYPE_BF16, &err), 0, "%s", err.msg);
        if (tied) {
            cr_expect_eq(w.lm_head, w.embed);
            cr_expect_null(w.lm_head_own);
        } else {
            cr_expect_eq(w.lm_head, w.lm_head_own);
            cr_expect_neq(w.lm_head, w.embed);
        }
        const void *ptrs[] = {w.embed, w.lm_head, w.final_norm};
        for (size_t i = 0; i < 3; i++) cr_expect_eq((uintptr_t)ptrs[i] % 64, 0u);
        unsigned char *lo = w.base, *hi = lo + w.total_bytes;
        for (int l = 0; l < c.n_layers; l++) {
            const struct qwen3_layer_weights *L = &w.layers[l];
            const void *lp[] = {L->attn_norm, L->qkv,      L->q_norm,  L->k_norm,
                                L->o,         L->mlp_norm, L->gate_up, L->down};
            for (size_t i = 0; i < 8; i++) {
                cr_expect_eq((uintptr_t)lp[i] % 64, 0u);
                cr_expect((const unsigned char *)lp[i] >= lo && (const unsigned char *)lp[i] < hi);
            }
        }
        /* the last tensor ends inside the allocation */
        const unsigned char *down_end = (const unsigned char *)w.layers[1].down + (size_t)64 * 96 * 2;
        cr_expect(down_end <= hi);
        qwen3_weights_free(&w);
        cr_expect_null(w.base);
    }
}

static void alloc_synthetic(struct qwen3_weights *w, enum fr_dtype t, uint64_t seed) {
    struct qwen3_config c = fixture_tiny_config();
    c.tied_embeddings = false;
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc(w, &c, t, &err), 0, "%s", err.msg);
    qwen3_weights_init_synthetic(w, seed);
}

Test(weights, synthetic_deterministic_for_any_thread_count) {
    struct qwen3_weights a, b, d;
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    alloc_synthetic(&a, FR_DTYPE_BF16, 42);
    omp_set_num_threads(2);
    alloc_synthetic(&b, FR_DTYPE_BF16, 42);
    alloc_synthetic(&d, FR_DTYPE_BF16, 43);
    omp_set_num_threads(saved);
    cr_expect_eq(memcmp(a.base, b.base, a.total_bytes), 0);
    cr_expect_neq(memcmp(a.embed, d.embed, (size_t)257 * 64 * 2), 0);
    /* different tensors draw from different streams */
    cr_expect_neq(memcmp(a.layers[0].down, a.layers[1].down, 64 * 2), 0);
    qwen3_weights_free(&a);
    qwen3_weights_free(&b);
    qwen3_weights_free(&d);
}

Test(weights, synthetic_ranges) {
    struct qwen3_weights w;
    alloc_synthetic(&w, FR_DTYPE_F32, 7);
    const float *down = w.layers[1].down; /* [64][96]: scale 1/sqrt(96) */
    double s = 1.0 / sqrt(96.0), maxabs = 0, mean = 0;
    for (int i = 0; i < 64 * 96; i++) {
        maxabs = fmax(maxabs, fabs(down[i]));
        mean += down[i];
    }
    mean /= 64 * 96;
    cr_expect_leq(maxabs, s);
    cr_expect_geq(maxabs, 0.9 * s); /* uses the whole range */
    cr_expect_lt(fabs(mean), 0.05 * s);
    for (int i = 0; i < 64; i++) cr_expect(w.final_norm[i] >= 0.9f && w.final_norm[i] <= 1.1f);
    for (int i = 0; i < 32; i++) cr_expect(w.layers[0].k_norm[i] >= 0.9f && w.layers[0].k_norm[i] <= 1.1f);
    qwen3_weights_free(&w);
}

Test(weights, refuses_more_than_available_memory) {
    struct qwen3_config c = fixture_tiny_config();
    c.vocab = 1 << 30;
    c.hidden = 1 << 15; /* a 64 TiB embedding */
    struct qwen3_weights w;
    struct fr_err err = {{0}};
    cr_expect_neq(qwen3_weights_alloc(&w, &c, FR_DTYPE_BF16, &err), 0);
    cr_expect(strstr(err.msg, "needs") && strstr(err.msg, "available"), "%s", err.msg);
    cr_expect_null(w.base);
    qwen3_weights_free(&w); /* safe on a refused state */
    cr_expect_neq(qwen3_mem_check(SIZE_MAX, "test", &err), 0);
    cr_expect_eq(qwen3_mem_check(4096, "test", &err), 0);
}

Test(weights, fill_uniform_range_and_streams) {
    float a[1000], b[1000];
    qwen3_fill_uniform(a, FR_DTYPE_F32, 1000, 0.5f, 1, 2);
    qwen3_fill_uniform(b, FR_DTYPE_F32, 1000, 0.5f, 1, 3);
    double maxabs = 0;
    for (int i = 0; i < 1000; i++) {
        cr_assert(a[i] >= -0.5f && a[i] < 0.5f);
        maxabs = fmax(maxabs, fabs(a[i]));
    }
    cr_expect_gt(maxabs, 0.45);
    cr_expect_neq(memcmp(a, b, sizeof a), 0);
    qwen3_fill_uniform(b, FR_DTYPE_F32, 1000, 0.5f, 1, 2);
    cr_expect_eq(memcmp(a, b, sizeof a), 0);
}

/* The cost model's weight bytes per block are the bytes the weights module carves for that block's
 * tensors: two independent derivations of the same numbers, for both dtypes, tied and untied. */
Test(weights, sizes_agree_with_the_cost_model) {
    for (int k = 0; k < 4; k++) {
        struct qwen3_config c = fixture_qwen3_06b_config();
        c.tied_embeddings = k < 2;
        enum fr_dtype t = k % 2 ? FR_DTYPE_F32 : FR_DTYPE_BF16;
        struct qwen3_weight_sizes sz;
        cr_assert_eq(qwen3_weights_sizes(&c, t, &sz, NULL), 0);
        struct cost_opts o = {t, FR_DTYPE_BF16, NULL};
        const struct {
            enum block_id b;
            double bytes;
        } want[] = {
            {BLOCK_EMBED, (double)sz.embed_bytes / c.vocab}, /* one row gathered */
            {BLOCK_ATTN_NORM, 28.0 * sz.attn_norm_bytes},    {BLOCK_QKV_PROJ, 28.0 * sz.qkv_bytes},
            {BLOCK_QK_NORM, 28.0 * sz.qk_norm_bytes},        {BLOCK_O_PROJ, 28.0 * sz.o_bytes},
            {BLOCK_MLP_NORM, 28.0 * sz.mlp_norm_bytes},      {BLOCK_GATE_UP_PROJ, 28.0 * sz.gate_up_bytes},
            {BLOCK_DOWN_PROJ, 28.0 * sz.down_bytes},         {BLOCK_FINAL_NORM, (double)sz.final_norm_bytes},
            {BLOCK_LM_HEAD, (double)sz.lm_head_bytes},
        };
        double sum = 0;
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            struct block_cost bc;
            cost_block(&c, &o, want[i].b, 0, SAMPLER_VARIANT_GREEDY, &bc);
            cr_expect_eq(bc.weight_bytes, want[i].bytes, "%s: cost %.0f, weights %.0f", block_name(want[i].b),
                         bc.weight_bytes, want[i].bytes);
            sum += want[i].bytes;
        }
        struct step_cost sc;
        cost_step(&c, &o, 0, SAMPLER_VARIANT_GREEDY, &sc);
        cr_expect_eq(sc.total.weight_bytes, sum); /* no other block reads weights */
    }
}

/* The block map by hand: [2][96] from panels of 64 columns (panel 0: 2 x 64 elements, then panel 1: 2 x
 * 32) into one row-major panel of 96. Blocks count row by row, three a row. */
Test(weights, block_map_by_hand) {
    const struct qwen3_block_map m = {2, 96, 64, 96};
    cr_assert_eq(qwen3_block_count(&m), 6);
    static const size_t want[6][2] = {{0, 0}, {32, 32}, {128, 64}, {64, 96}, {96, 128}, {160, 160}};
    for (long i = 0; i < 6; i++) {
        size_t from, to;
        qwen3_block_at(&m, i, &from, &to);
        cr_expect_eq(from, want[i][0], "block %ld from %zu", i, from);
        cr_expect_eq(to, want[i][1], "block %ld to %zu", i, to);
    }
    /* a layer matrix: bf16's width from col_panel_width (3072 columns: two of 1536), the block format's one
     * panel */
    const struct qwen3_block_map d = qwen3_layer_block_map(FR_DTYPE_Q4_0, 1024, 3072);
    cr_expect_eq(d.pw_from, 1536); /* two equal panels of at most 2048 */
    cr_expect_eq(d.pw_to, 3072);
}
