/* Configs shared by the model tests: a tiny Qwen3-shaped model (head_dim != hidden / heads, GQA, tied) and
 * the real Qwen3-0.6B shape, filled by hand so the tests need no config file. */
#ifndef FR_TESTS_MODEL_FIXTURES_H
#define FR_TESTS_MODEL_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"

static inline struct qwen3_config fixture_tiny_config(void) {
    struct qwen3_config c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "tiny");
    c.hidden = 64;
    c.intermediate = 96;
    c.n_layers = 2;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.head_dim = 32; /* 4 * 32 = 128 != hidden 64, as in Qwen3 */
    c.vocab = 257;
    c.max_context = 64;
    c.rms_eps = 1e-6;
    c.rope_theta = 10000.0;
    c.tied_embeddings = true;
    return c;
}

static inline struct qwen3_config fixture_qwen3_06b_config(void) {
    struct qwen3_config c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "qwen3-0.6b");
    c.hidden = 1024;
    c.intermediate = 3072;
    c.n_layers = 28;
    c.n_heads = 16;
    c.n_kv_heads = 8;
    c.head_dim = 128;
    c.vocab = 151936;
    c.max_context = 40960;
    c.rms_eps = 1e-6;
    c.rope_theta = 1000000.0;
    c.tied_embeddings = true;
    return c;
}

/* Writes fixture_tiny_config() as DIR/config.json under a fresh temporary DIR (dir: 64 bytes) for CLI tests;
 * returns 0 on success. */
static inline int fixture_write_tiny_config(char *dir) {
    strcpy(dir, "/tmp/fr-test-model-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char path[96];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f, "{\"architectures\": [\"Qwen3ForCausalLM\"], \"model_type\": \"qwen3\", \"hidden_size\": 64,\n"
               " \"intermediate_size\": 96, \"num_hidden_layers\": 2, \"num_attention_heads\": 4,\n"
               " \"num_key_value_heads\": 2, \"head_dim\": 32, \"vocab_size\": 257,\n"
               " \"max_position_embeddings\": 64, \"rms_norm_eps\": 1e-06, \"rope_theta\": 10000,\n"
               " \"tie_word_embeddings\": true, \"hidden_act\": \"silu\", \"torch_dtype\": \"bfloat16\"}\n");
    return fclose(f);
}

/* Removes what fixture_write_tiny_config made (and any file the test named under it). */
static inline void fixture_remove_dir(const char *dir, const char *extra_file) {
    char path[160];
    if (extra_file) {
        snprintf(path, sizeof path, "%s/%s", dir, extra_file);
        remove(path);
    }
    snprintf(path, sizeof path, "%s/config.json", dir);
    remove(path);
    remove(dir);
}

#endif
