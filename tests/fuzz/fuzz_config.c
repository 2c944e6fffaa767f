/* libFuzzer harness for the config.json parser: any bytes must give a config or a one-line error, never a
 * crash, leak or undefined behaviour. Seed corpus: tests/fuzz/corpus/fuzz_config (the shipped configs). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct qwen3_config cfg;
    struct fr_err err;
    if (qwen3_config_parse((const char *)data, size, "fuzz.json", &cfg, &err) == 0) {
        if (qwen3_param_count(&cfg) == 0 || cfg.head_dim <= 0 || cfg.n_heads % cfg.n_kv_heads)
            __builtin_trap();
    } else if (strchr(err.msg, '\n')) {
        __builtin_trap();
    }
    return 0;
}
