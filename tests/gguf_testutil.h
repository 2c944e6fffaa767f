/* Small helpers for the GGUF weight tests (tests/test_gguf_quant.c, tests/test_gguf_kquant.c): a fixture's
 * config and run type, its weights loaded through the loader, a decode against a reference's, and a
 * writable copy of a file to edit. */
#ifndef FR_TEST_GGUF_UTIL_H
#define FR_TEST_GGUF_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/decode.h"
#include "model/file_map.h"
#include "model/weights_file.h"

#define FIX "tests/fixtures/gguf/"

/* The config of a weights file, as the commands read it (the file's own for a GGUF file). */
static inline struct qwen3_config gt_config_of(const char *path) {
    struct qwen3_config c;
    struct fr_err err = {{0}};
    cr_assert_eq(weights_file_config(path, NULL, &c, &err), 0, "%s", err.msg);
    return c;
}

/* The type the commands run the file in (weights_file_wtype, asserted to succeed), its note into note. */
static inline enum fr_dtype gt_wtype(const char *path, enum fr_dtype requested, bool given, char *note,
                                     size_t note_len) {
    struct qwen3_config c = gt_config_of(path);
    struct fr_err err = {{0}};
    enum fr_dtype t;
    cr_assert_eq(weights_file_wtype(path, &c, requested, given, &t, note, note_len, &err), 0, "%s", err.msg);
    return t;
}

/* w allocated for the file's config in type t (FR_DTYPE_COUNT: the file's own formats, as the commands
 * run it without --dtype) and loaded from it (the caller frees). */
static inline void gt_load_as(const char *path, enum fr_dtype t, struct qwen3_weights *w) {
    struct qwen3_config c = gt_config_of(path);
    struct fr_err err = {{0}};
    struct weight_formats f;
    weight_formats_uniform(&f, c.n_layers, t);
    if (t == FR_DTYPE_COUNT)
        cr_assert_eq(weights_file_formats(path, &c, FR_DTYPE_BF16, false, &f, NULL, 0, &err), 0, "%s",
                     err.msg);
    cr_assert_eq(qwen3_weights_alloc_formats(w, &c, &f, &err), 0, "%s", err.msg);
    cr_assert_eq(weights_file_load(path, w, &err), 0, "%s", err.msg);
}

/* The largest logit difference, over every position of the prompt, between `file` run in type t and the
 * f32 weights of `ref`, relative to ref's largest logit. */
static inline float gt_decode_gap(const char *file, enum fr_dtype t, const char *ref, const int *prompt,
                                  int n) {
    struct qwen3_weights w, r;
    gt_load_as(file, t, &w);
    gt_load_as(ref, FR_DTYPE_F32, &r);
    struct decode_state sq, sr;
    struct fr_err err = {{0}};
    cr_assert_eq(decode_state_init(&sq, &w, n, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, 1, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(decode_state_init(&sr, &r, n, FR_DTYPE_F32, MATVEC_BACKEND_FORGE, 1, &err), 0, "%s",
                 err.msg);
    float top = 0, worst = 0;
    for (int i = 0; i < n; i++) {
        cr_assert_eq(decode_step(&sq, prompt[i], i, NULL, &err), 0, "%s", err.msg);
        cr_assert_eq(decode_step(&sr, prompt[i], i, NULL, &err), 0, "%s", err.msg);
        for (int v = 0; v < w.cfg.vocab; v++) {
            top = fmaxf(top, fabsf(sr.logits[v]));
            worst = fmaxf(worst, fabsf(sq.logits[v] - sr.logits[v]));
        }
    }
    decode_state_free(&sq);
    decode_state_free(&sr);
    qwen3_weights_free(&w);
    qwen3_weights_free(&r);
    cr_assert(top > 0);
    return worst / top;
}

/* A writable copy of a file, through the loader's own mapping (the caller frees). */
static inline unsigned char *gt_copy_of(const char *path, size_t *len) {
    struct file_map m;
    struct fr_err err = {{0}};
    cr_assert_eq(file_map_open(path, 1, &m, &err), 0, "%s (run from the repository root)", err.msg);
    unsigned char *buf = malloc(m.len);
    cr_assert_not_null(buf);
    memcpy(buf, m.data, m.len);
    *len = m.len;
    file_map_close(&m);
    return buf;
}

#endif
