/* llama.cpp's tensor mixes (model/weight_mix.h): every tensor of the files llama-quantize itself wrote
 * (tests/fixtures/gguf/tiny-k-*.gguf, scripts/fixtures/make_kquant_fixtures.sh) against our rules, tensor by
 * tensor; Qwen3-0.6B's Q4_K_M counted as the issue counts llama.cpp's file; the run types and refusals. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/gguf.h"
#include "model/weight_mix.h"
#include "tests/gguf_testutil.h"
#include "tests/model_fixtures.h"

static const struct {
    const char *file;
    enum weight_mix mix;
} written[] = {
    {FIX "tiny-k-q4_k_m.gguf", WEIGHT_MIX_Q4_K_M},
    {FIX "tiny-k-q5_k_m.gguf", WEIGHT_MIX_Q5_K_M},
    {FIX "tiny-k-q6_k.gguf", WEIGHT_MIX_Q6_K},
};

static const char *const part_names[WPART_COUNT] = {"attn_q",   "attn_k", "attn_v",  "attn_output",
                                                    "ffn_gate", "ffn_up", "ffn_down"};

/* The layer and part a tensor name is, or false for a norm. */
static bool tensor_slot(const char *name, int *layer, enum wpart *p) {
    if (strcmp(name, "token_embd.weight") == 0) return *layer = WEIGHT_MIX_TOKEN_EMBD, *p = WPART_Q, true;
    if (strcmp(name, "output.weight") == 0) return *layer = WEIGHT_MIX_OUTPUT, *p = WPART_Q, true;
    char part[32];
    if (sscanf(name, "blk.%d.%31[a-z_].weight", layer, part) != 2) return false;
    for (int i = 0; i < WPART_COUNT; i++)
        if (strcmp(part, part_names[i]) == 0) return *p = (enum wpart)i, true;
    return false;
}

Test(weight_mix, every_tensor_as_llama_quantize_wrote_it) {
    for (size_t f = 0; f < sizeof written / sizeof written[0]; f++) {
        struct qwen3_config c = gt_config_of(written[f].file);
        struct file_map m;
        struct gguf_file g;
        struct fr_err err = {{0}};
        cr_assert_eq(file_map_open(written[f].file, 4, &m, &err), 0, "%s", err.msg);
        cr_assert_eq(gguf_parse(m.data, m.len, written[f].file, &g, &err), 0, "%s", err.msg);
        int matrices = 0;
        for (uint64_t i = 0; i < g.n_tensors; i++) {
            char name[96], want[24];
            snprintf(name, sizeof name, "%.*s", (int)g.tensors[i].name_len, g.tensors[i].name);
            int layer;
            enum wpart p;
            if (!tensor_slot(name, &layer, &p)) continue;
            matrices++;
            const char *ours = wslot_dtype_name(weight_mix_file_type(written[f].mix, &c, layer, p));
            const char *file_type = gguf_ggml_type_name(g.tensors[i].type, want, sizeof want);
            cr_expect_str_eq(ours, file_type, "%s %s: llama-quantize wrote %s, our rules say %s",
                             written[f].file, name, file_type, ours);
        }
        cr_expect_eq(matrices, 7 * c.n_layers + 1, "%s: %d matrices", written[f].file, matrices);
        gguf_free(&g);
        file_map_close(&m);
    }
}

/* 28 layers: use_more_bits keeps layers 0-2, 24-27 and every third between (5, 8, .., 23). */
Test(weight_mix, qwen3_06b_q4_k_m_counts) {
    struct qwen3_config c = fixture_qwen3_06b_config();
    struct weight_formats f;
    struct fr_err err = {{0}};
    cr_assert_eq(weight_mix_formats(WEIGHT_MIX_Q4_K_M, &c, &f, &err), 0, "%s", err.msg);
    cr_expect_eq(weight_formats_count(&f, FR_DTYPE_Q4_K), 168);
    cr_expect_eq(weight_formats_count(&f, FR_DTYPE_Q6_K), 29);
    cr_expect_eq(f.embed, FR_DTYPE_Q6_K);
    const int more[] = {0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 24, 25, 26, 27};
    for (int l = 0, k = 0; l < 28; l++) {
        const bool want = k < 14 && more[k] == l;
        k += want;
        cr_expect_eq(f.layer[l][WPART_V] == FR_DTYPE_Q6_K, want, "layer %d attn_v", l);
        cr_expect_eq(f.layer[l][WPART_DOWN] == FR_DTYPE_Q6_K, want, "layer %d ffn_down", l);
        cr_expect_eq(f.layer[l][WPART_Q], FR_DTYPE_Q4_K);
    }
    cr_assert_eq(weight_mix_formats(WEIGHT_MIX_Q6_K, &c, &f, &err), 0, "%s", err.msg);
    cr_expect_eq(weight_formats_count(&f, FR_DTYPE_Q6_K), 197);
    cr_assert_eq(weight_mix_formats(WEIGHT_MIX_Q4_0, &c, &f, &err), 0, "%s", err.msg);
    cr_expect_eq(weight_formats_count(&f, FR_DTYPE_Q4_0), 196);
    cr_expect_eq(f.embed, FR_DTYPE_Q6_K, "a Q4_0 file keeps its tied embedding in Q6_K");
    c.tied_embeddings = 0; /* untied: output.weight takes Q6_K, token_embd the file type's own */
    cr_assert_eq(weight_mix_formats(WEIGHT_MIX_Q4_K_M, &c, &f, &err), 0, "%s", err.msg);
    cr_expect(f.lm_head == FR_DTYPE_Q6_K && f.embed == FR_DTYPE_Q4_K);
}

Test(weight_mix, names_and_refusals) {
    enum weight_mix m;
    for (int i = 0; i < WEIGHT_MIX_COUNT; i++) {
        cr_expect_eq(weight_mix_parse(weight_mix_name((enum weight_mix)i), &m), 0);
        cr_expect_eq(m, (enum weight_mix)i);
    }
    cr_expect_neq(weight_mix_parse("q4_k_l", &m), 0);
    /* the tiny model's rows of 64 take no superblock: llama.cpp's Q5_0 fallback, which no kernel runs */
    struct qwen3_config c = fixture_tiny_config();
    struct weight_formats f;
    struct fr_err err = {{0}};
    cr_expect_neq(weight_mix_formats(WEIGHT_MIX_Q4_K_M, &c, &f, &err), 0);
    cr_expect(strstr(err.msg, "blk.0.attn_q.weight takes q5_0 (64 columns)") && !strchr(err.msg, '\n'), "%s",
              err.msg);
}
