/* libFuzzer harness for the safetensors loader: any bytes, taken as a whole file, must load into a tiny
 * Qwen3-shaped model or fail with a one-line error, never crash, leak or read out of bounds. Seed corpus:
 * tests/fuzz/corpus/fuzz_safetensors, written by scripts/make_safetensors_corpus.py for this config. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Must match scripts/make_safetensors_corpus.py. */
static struct qwen3_config fuzz_config(void) {
    struct qwen3_config c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "fuzz");
    c.hidden = 8;
    c.intermediate = 12;
    c.n_layers = 2;
    c.n_heads = 2;
    c.n_kv_heads = 1;
    c.head_dim = 6;
    c.vocab = 5;
    c.max_context = 16;
    c.rms_eps = 1e-6;
    c.rope_theta = 10000.0;
    c.tied_embeddings = true;
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static struct qwen3_weights w;
    static int ready;
    struct fr_err err;
    if (!ready) {
        struct qwen3_config c = fuzz_config();
        if (qwen3_weights_alloc(&w, &c, FR_DTYPE_BF16, &err) != 0) __builtin_trap();
        ready = 1;
    }
    int rc_check = safetensors_load_buffer(data, size, "fuzz.safetensors", &w.cfg, NULL, &err);
    if (rc_check != 0 && strchr(err.msg, '\n')) __builtin_trap();
    int rc_load = safetensors_load_buffer(data, size, "fuzz.safetensors", &w.cfg, &w, &err);
    if ((rc_check == 0) != (rc_load == 0)) __builtin_trap(); /* checking and loading must agree */
    return 0;
}
