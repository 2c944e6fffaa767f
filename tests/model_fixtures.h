/* Configs shared by the model tests: a tiny Qwen3-shaped model (head_dim != hidden / heads, GQA, tied) and
 * the real Qwen3-0.6B shape, filled by hand so the tests need no config file. */
#ifndef FR_TESTS_MODEL_FIXTURES_H
#define FR_TESTS_MODEL_FIXTURES_H

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

#endif
