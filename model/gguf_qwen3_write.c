/* Qwen3 weights to a GGUF file (gguf_qwen3_write.h): the tensor table of model/weight_slots.h names and
 * shapes every tensor, wslot_export undoes the column panels, model/gguf_write.h lays the file out. Checked
 * in tests/test_quantize.c: written files read back to the same weights, blocks byte for byte, and keep
 * their source's metadata. */
#include "model/gguf_qwen3_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/gguf_write.h"
#include "model/weight_slots.h"

/* llama.cpp's llama_ftype (general.file_type) by the layers' commonest type, as llama.cpp names a file
 * (MOSTLY_Q4_0 keeps a Q6_K embedding; a K-quant whose file mixes in Q6_K is its _M type). */
static uint32_t file_type(const struct qwen3_weights *w) {
    const bool mixed = !weight_formats_is_uniform(&w->formats, NULL);
    switch (w->wtype) {
    case FR_DTYPE_Q8_0:
        return 7;
    case FR_DTYPE_Q4_0:
        return 2;
    case FR_DTYPE_BF16:
        return 32;
    case FR_DTYPE_Q4_K:
        return mixed ? 15 : 14; /* Q4_K_M, Q4_K_S */
    case FR_DTYPE_Q5_K:
        return mixed ? 17 : 16; /* Q5_K_M, Q5_K_S */
    case FR_DTYPE_Q6_K:
        return 18;
    default:
        return 0;
    }
}

static uint32_t ggml_type(enum fr_dtype t) {
    switch (t) {
    case FR_DTYPE_Q8_0:
        return GGUF_GGML_Q8_0;
    case FR_DTYPE_Q4_0:
        return GGUF_GGML_Q4_0;
    case FR_DTYPE_BF16:
        return GGUF_GGML_BF16;
    case FR_DTYPE_Q4_K:
        return GGUF_GGML_Q4_K;
    case FR_DTYPE_Q5_K:
        return GGUF_GGML_Q5_K;
    case FR_DTYPE_Q6_K:
        return GGUF_GGML_Q6_K;
    default:
        return GGUF_GGML_F32;
    }
}

/* Keys this writer sets itself, never copied from the source (the alignment is the default). */
static int key_replaced(const struct gguf_kv *kv) {
    static const char *const keys[] = {"general.alignment", "general.file_type",
                                       "general.quantization_version"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (kv->key_len == strlen(keys[i]) && memcmp(kv->key, keys[i], kv->key_len) == 0) return 1;
    return 0;
}

/* The config's metadata, as llama.cpp's converter names it. */
static void write_config_kv(struct gguf_writer *gw, const struct qwen3_config *c) {
    gguf_write_kv_string(gw, "general.architecture", "qwen3");
    gguf_write_kv_string(gw, "general.name", c->name);
    gguf_write_kv_u32(gw, "qwen3.block_count", (uint32_t)c->n_layers);
    gguf_write_kv_u32(gw, "qwen3.context_length", (uint32_t)c->max_context);
    gguf_write_kv_u32(gw, "qwen3.embedding_length", (uint32_t)c->hidden);
    gguf_write_kv_u32(gw, "qwen3.feed_forward_length", (uint32_t)c->intermediate);
    gguf_write_kv_u32(gw, "qwen3.attention.head_count", (uint32_t)c->n_heads);
    gguf_write_kv_u32(gw, "qwen3.attention.head_count_kv", (uint32_t)c->n_kv_heads);
    gguf_write_kv_u32(gw, "qwen3.attention.key_length", (uint32_t)c->head_dim);
    gguf_write_kv_u32(gw, "qwen3.attention.value_length", (uint32_t)c->head_dim);
    gguf_write_kv_f32(gw, "qwen3.rope.freq_base", (float)c->rope_theta);
    gguf_write_kv_f32(gw, "qwen3.attention.layer_norm_rms_epsilon", (float)c->rms_eps);
}
#define CONFIG_KV_COUNT 12

/* Whether slot s has a tensor in w (a tied model has no LM head of its own). */
static int slot_written(const struct wslot *s, const struct qwen3_weights *w) {
    return s->part != WSLOT_LM_HEAD || w->lm_head_own != NULL;
}

static int write_file(const char *path, const struct qwen3_weights *w, const struct gguf_file *meta,
                      const struct wslot_table *t, struct fr_err *err) {
    int block = fr_dtype_is_quant(w->wtype);
    uint64_t n_kv = 1 + (uint64_t)block, n_tensors = 0;
    size_t most = 0;
    for (uint64_t i = 0; meta && i < meta->n_kv; i++) n_kv += !key_replaced(&meta->kv[i]);
    if (!meta) n_kv += CONFIG_KV_COUNT;
    for (int i = 0; i < t->n_slots; i++) {
        if (!slot_written(&t->slots[i], w)) continue;
        n_tensors++;
        size_t b = wslot_export_bytes(&t->slots[i], w);
        most = b > most ? b : most;
    }
    unsigned char *buf = malloc(most ? most : 1);
    if (!buf) return fr_err_set(err, "%s: out of memory for a %zu-byte tensor", path, most);
    struct gguf_writer gw;
    if (gguf_write_open(&gw, path, n_kv, n_tensors, err)) {
        free(buf);
        return -1;
    }
    for (uint64_t i = 0; meta && i < meta->n_kv; i++)
        if (!key_replaced(&meta->kv[i])) gguf_write_kv_copy(&gw, meta, &meta->kv[i]);
    if (!meta) write_config_kv(&gw, &w->cfg);
    gguf_write_kv_u32(&gw, "general.file_type", file_type(w));
    if (block) gguf_write_kv_u32(&gw, "general.quantization_version", 2); /* ggml's GGML_QNT_VERSION */
    char name[128];
    for (int i = 0; i < t->n_slots; i++) {
        const struct wslot *s = &t->slots[i];
        if (!slot_written(s, w)) continue;
        uint64_t dims[2] = {s->ndim == 2 ? s->dims[1] : s->dims[0], s->dims[0]}; /* fastest first */
        wslot_name(t, s, name, sizeof name);
        gguf_write_tensor_info(&gw, name, (uint32_t)s->ndim, dims, ggml_type(wslot_export_type(s, w)),
                               wslot_export_bytes(s, w));
    }
    for (int i = 0; i < t->n_slots; i++) {
        const struct wslot *s = &t->slots[i];
        if (!slot_written(s, w)) continue;
        wslot_export(s, w, buf);
        gguf_write_tensor_data(&gw, buf, wslot_export_bytes(s, w));
    }
    free(buf);
    return gguf_write_close(&gw, err);
}

int gguf_qwen3_write(const char *path, const struct qwen3_weights *w, const struct gguf_file *meta,
                     struct fr_err *err) {
    struct wslot_table t;
    if (wslot_table_init(&t, &w->cfg, WSLOT_NAMES_GGUF, path, err)) return -1;
    size_t n = strlen(path) + 8;
    char *tmp = malloc(n);
    int rc = tmp ? 0 : fr_err_set(err, "%s: out of memory", path);
    if (rc == 0) {
        snprintf(tmp, n, "%s.part", path);
        rc = write_file(tmp, w, meta, &t, err);
        if (rc == 0 && rename(tmp, path) != 0)
            rc = fr_err_set(err, "%s: cannot rename %s over it", path, tmp);
        if (rc) remove(tmp);
    }
    free(tmp);
    wslot_table_free(&t);
    return rc;
}
