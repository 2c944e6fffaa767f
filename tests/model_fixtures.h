/* Configs shared by the model tests: a tiny Qwen3-shaped model (head_dim != hidden / heads, GQA, tied) and
 * the real Qwen3-0.6B shape, filled by hand so the tests need no config file. */
#ifndef FR_TESTS_MODEL_FIXTURES_H
#define FR_TESTS_MODEL_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"

/* A tied config of the given shape (eps 1e-6). */
static inline struct qwen3_config fixture_config(const char *name, const int shape[9], double rope_theta) {
    struct qwen3_config c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    c.hidden = shape[0];
    c.intermediate = shape[1];
    c.n_layers = shape[2];
    c.n_heads = shape[3];
    c.n_kv_heads = shape[4];
    c.head_dim = shape[5];
    c.vocab = shape[6];
    c.max_context = shape[7];
    c.tied_embeddings = shape[8];
    c.rms_eps = 1e-6;
    c.rope_theta = rope_theta;
    return c;
}

/* hidden, intermediate, layers, heads, KV heads, head_dim, vocab, max context, tied */
static inline struct qwen3_config fixture_tiny_config(void) {
    static const int shape[9] = {64, 96,  2,  4, 2,
                                 32, 257, 64, 1}; /* 4 * 32 = 128 != hidden 64, as in Qwen3 */
    return fixture_config("tiny", shape, 10000.0);
}

static inline struct qwen3_config fixture_qwen3_06b_config(void) {
    static const int shape[9] = {1024, 3072, 28, 16, 8, 128, 151936, 40960, 1};
    return fixture_config("qwen3-0.6b", shape, 1000000.0);
}

/* The fixed config of tests/fuzz/fuzz_safetensors.c and its seed corpus (scripts/make_safetensors_corpus.py).
 */
static inline struct qwen3_config fixture_fuzz_config(void) {
    static const int shape[9] = {8, 12, 2, 2, 1, 6, 5, 16, 1};
    return fixture_config("fuzz", shape, 10000.0);
}

/* Writes DIR/config.json (DIR exists) for a model of fixture_config's shape[9] (hidden, intermediate,
 * layers, heads, KV heads, head_dim, vocab, max context, tied); returns 0 on success. */
static inline int fixture_write_config_json(const char *dir, const int shape[9], double rope_theta) {
    char path[1024];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fprintf(f,
            "{\"architectures\": [\"Qwen3ForCausalLM\"], \"model_type\": \"qwen3\", \"hidden_size\": %d,\n"
            " \"intermediate_size\": %d, \"num_hidden_layers\": %d, \"num_attention_heads\": %d,\n"
            " \"num_key_value_heads\": %d, \"head_dim\": %d, \"vocab_size\": %d,\n"
            " \"max_position_embeddings\": %d, \"rms_norm_eps\": 1e-06, \"rope_theta\": %g,\n"
            " \"tie_word_embeddings\": %s, \"hidden_act\": \"silu\", \"torch_dtype\": \"bfloat16\"}\n",
            shape[0], shape[1], shape[2], shape[3], shape[4], shape[5], shape[6], shape[7], rope_theta,
            shape[8] ? "true" : "false");
    return fclose(f);
}

/* Writes fixture_tiny_config() as DIR/config.json under a fresh temporary DIR (dir: 64 bytes) for CLI tests;
 * returns 0 on success. */
static inline int fixture_write_tiny_config(char *dir) {
    static const int shape[9] = {64, 96, 2, 4, 2, 32, 257, 64, 1};
    strcpy(dir, "/tmp/fr-test-model-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    return fixture_write_config_json(dir, shape, 10000.0);
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
