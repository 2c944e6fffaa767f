/* libFuzzer harness for the safetensors loader: any bytes, taken as a whole file, must load into a tiny
 * Qwen3-shaped model or fail with a one-line error, never crash, leak or read out of bounds. Seed corpus:
 * tests/fuzz/corpus/fuzz_safetensors, written by scripts/make_safetensors_corpus.py for this config. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/safetensors.h"
#include "tests/model_fixtures.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static struct qwen3_weights w;
    static int ready;
    struct fr_err err;
    if (!ready) {
        struct qwen3_config c = fixture_fuzz_config();
        if (qwen3_weights_alloc(&w, &c, FR_DTYPE_BF16, &err) != 0) __builtin_trap();
        ready = 1;
    }
    int rc_check = safetensors_load_buffer(data, size, "fuzz.safetensors", &w.cfg, NULL, &err);
    if (rc_check != 0 && strchr(err.msg, '\n')) __builtin_trap();
    int rc_load = safetensors_load_buffer(data, size, "fuzz.safetensors", &w.cfg, &w, &err);
    if ((rc_check == 0) != (rc_load == 0)) __builtin_trap(); /* checking and loading must agree */
    return 0;
}
