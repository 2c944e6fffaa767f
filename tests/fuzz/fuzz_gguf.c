/* libFuzzer harness for the GGUF reader: any bytes, taken as a whole file, must parse or fail with a
 * one-line error, never crash, leak or read out of bounds; a parsed file's tokenizer metadata is built into
 * a tokenizer (or refused) that then encodes a fixed text, and its config and tensors are
 * checked against its own metadata and against a fixed tiny Qwen3 config, and loaded into it when they fit
 * (checking and loading must agree). Seed corpus: tests/fuzz/corpus/fuzz_gguf, written by llama.cpp's gguf-py
 * (scripts/fixtures/make_gguf_fixtures.py) for this config, and llama-quantize's k-quant files
 * (scripts/fixtures/make_kquant_fixtures.sh), checked against their own config. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/gguf.h"
#include "model/gguf_qwen3.h"
#include "model/tokenizer.h"
#include "tests/model_fixtures.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_line(const struct fr_err *err) {
    if (strchr(err->msg, '\n')) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static struct qwen3_weights w;
    static int ready;
    struct fr_err err;
    if (!ready) {
        struct qwen3_config c = fixture_fuzz_config();
        if (qwen3_weights_alloc(&w, &c, FR_DTYPE_BF16, &err) != 0) __builtin_trap();
        ready = 1;
    }
    struct gguf_file g;
    if (gguf_parse(data, size, "fuzz.gguf", &g, &err) != 0) {
        one_line(&err);
        return 0;
    }
    /* every string of a string array is inside the buffer (the walk reads each length) */
    const struct gguf_kv *tokens = gguf_find_kv(&g, "tokenizer.ggml.tokens");
    if (tokens && tokens->type == GGUF_VTYPE_ARRAY && tokens->elem_type == GGUF_VTYPE_STRING) {
        size_t off = tokens->value_off, total = 0;
        for (uint64_t i = 0; i < tokens->n; i++) {
            const char *s;
            size_t n;
            gguf_next_string(&g, &off, &s, &n);
            if (s < (const char *)data || s + n > (const char *)data + size) __builtin_trap();
            total += n;
        }
        (void)total;
    }
    /* the tokenizer from the metadata: built, or refused in one line; a built one encodes text */
    struct tokenizer tok;
    if (tokenizer_from_gguf(&tok, &g, &err) == 0) {
        static const char text[] = "<|im_start|>user\nHello, world! 12 \xe4\xbd\xa0\xe5\xa5\xbd<|im_end|>";
        int *ids = NULL, n = 0;
        if (tokenizer_encode(&tok, text, sizeof text - 1, &ids, &n, &err) == 0) {
            for (int i = 0; i < n; i++) {
                size_t len;
                if (!tokenizer_piece(&tok, ids[i], &len)) __builtin_trap(); /* every id it gives has bytes */
            }
            free(ids);
        }
        tokenizer_free(&tok);
    } else {
        one_line(&err);
    }
    struct qwen3_config c;
    int rc_cfg = gguf_qwen3_config(&g, &c, &err);
    if (rc_cfg) one_line(&err);
    int rc_check = gguf_qwen3_load(&g, &w.cfg, NULL, &err);
    if (rc_check) one_line(&err);
    int rc_load = gguf_qwen3_load(&g, NULL, &w, &err);
    if ((rc_check == 0) != (rc_load == 0)) __builtin_trap();
    /* against the file's own config too, and loaded in q8_0 where it is small: the k-quant seeds (hidden
     * 256) reach their types' checks, the mix and the conversion through the dequantisers */
    if (rc_cfg == 0) {
        struct gguf_qwen3_types types;
        int rc_own = gguf_qwen3_types(&g, &c, &types, &err);
        if (rc_own) one_line(&err);
        struct qwen3_weights own;
        if (rc_own == 0 && qwen3_param_count(&c) <= (1u << 20) &&
            qwen3_weights_alloc(&own, &c, FR_DTYPE_Q8_0, &err) == 0) {
            if (gguf_qwen3_load(&g, NULL, &own, &err) != 0 && !types.block) __builtin_trap();
            qwen3_weights_free(&own);
        }
    }
    gguf_free(&g);
    return 0;
}
