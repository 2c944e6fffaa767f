/* The GGUF reader against code we did not write: the fixtures in tests/fixtures/gguf/ were written by
 * llama.cpp's gguf-py and read back by @huggingface/gguf into FILE.gguf.json (scripts/fixtures/); our parser
 * must see the same version, metadata (type and value of every key) and tensor index. The same values in
 * GGUF (bf16; f16 with an untied output) and in safetensors load to bit-identical weights and decode the
 * same ids, in-process and through the CLI. Then each malformed case, made by editing a fixture's bytes,
 * fails with a one-line message naming the file and the field, and no prefix of a file crashes the parser. */
#include <criterion/criterion.h>
#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/decode.h"
#include "model/gguf.h"
#include "model/gguf_qwen3.h"
#include "model/safetensors.h"
#include "model/sha256.h"
#include "model/weights_file.h"
#include "tests/cli_run.h"
#include "tests/model_fixtures.h"

#define FIX "tests/fixtures/gguf/"

static unsigned char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s: cannot open (run from the repository root)", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    cr_assert(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static int key_eq(const struct gguf_kv *kv, const char *s) {
    return kv->key_len == strlen(s) && memcmp(kv->key, s, kv->key_len) == 0;
}

static const char *const vtype_json[] = {"UINT8", "INT8",   "UINT16", "INT16",  "UINT32", "INT32",  "FLOAT32",
                                         "BOOL",  "STRING", "ARRAY",  "UINT64", "INT64",  "FLOAT64"};

/* One scalar of type t at off against the JSON value. */
static void expect_scalar(const struct gguf_file *g, enum gguf_vtype t, size_t *off, const cJSON *v,
                          const char *key) {
    if (t == GGUF_VTYPE_STRING) {
        const char *s;
        size_t n;
        gguf_next_string(g, off, &s, &n);
        cr_expect(cJSON_IsString(v) && strlen(v->valuestring) == n && memcmp(v->valuestring, s, n) == 0,
                  "%s: string differs", key);
        return;
    }
    double got;
    const unsigned char *p = g->buf + *off;
    if (t == GGUF_VTYPE_FLOAT32) {
        float f;
        memcpy(&f, p, 4);
        got = f, *off += 4;
    } else if (t == GGUF_VTYPE_FLOAT64) {
        memcpy(&got, p, 8), *off += 8;
    } else if (t == GGUF_VTYPE_BOOL) {
        cr_expect(cJSON_IsBool(v) && cJSON_IsTrue(v) == (*p == 1), "%s: bool differs", key);
        *off += 1;
        return;
    } else {
        struct gguf_kv one = {.type = GGUF_VTYPE_ARRAY, .elem_type = t, .n = 1, .value_off = *off};
        got = (double)gguf_array_int(g, &one, 0);
        *off += t <= GGUF_VTYPE_INT8 ? 1 : t <= GGUF_VTYPE_INT16 ? 2 : t <= GGUF_VTYPE_INT32 ? 4 : 8;
    }
    cr_expect(cJSON_IsNumber(v) && (float)v->valuedouble == (float)got, "%s: %g, expected %g", key, got,
              v->valuedouble);
}

/* Our parse of FILE against @huggingface/gguf's FILE.json. */
static void expect_matches_reference(const char *file) {
    size_t len, jlen;
    unsigned char *buf = read_all(file, &len);
    char jpath[256];
    snprintf(jpath, sizeof jpath, "%s.json", file);
    unsigned char *js = read_all(jpath, &jlen);
    cJSON *ref = cJSON_ParseWithLength((const char *)js, jlen);
    cr_assert_not_null(ref, "%s: not JSON", jpath);
    struct gguf_file g;
    struct fr_err err = {{0}};
    cr_assert_eq(gguf_parse(buf, len, file, &g, &err), 0, "%s", err.msg);
    cr_expect_eq(g.version, (uint32_t)cJSON_GetObjectItem(ref, "version")->valuedouble);
    cr_expect_eq(g.n_kv, (uint64_t)cJSON_GetObjectItem(ref, "kv_count")->valuedouble);
    cr_expect_eq(g.n_tensors, (uint64_t)cJSON_GetObjectItem(ref, "tensor_count")->valuedouble);
    cr_expect_eq(g.data_off, (size_t)cJSON_GetObjectItem(ref, "tensor_data_offset")->valuedouble);
    const cJSON *meta = cJSON_GetObjectItem(ref, "metadata");
    cr_expect_eq((uint64_t)cJSON_GetArraySize(meta), g.n_kv);
    for (const cJSON *m = meta->child; m; m = m->next) {
        const struct gguf_kv *kv = gguf_find_kv(&g, m->string);
        cr_assert_not_null(kv, "%s: key %s missing", file, m->string);
        cr_assert(key_eq(kv, m->string));
        cr_expect_str_eq(vtype_json[kv->type], cJSON_GetObjectItem(m, "type")->valuestring, "%s", m->string);
        const cJSON *v = cJSON_GetObjectItem(m, "value");
        size_t off = kv->value_off;
        if (kv->type != GGUF_VTYPE_ARRAY) {
            expect_scalar(&g, kv->type, &off, v, m->string);
            continue;
        }
        cr_expect_str_eq(vtype_json[kv->elem_type], cJSON_GetObjectItem(m, "elem_type")->valuestring);
        cr_assert_eq((uint64_t)cJSON_GetArraySize(v), kv->n, "%s: array length", m->string);
        for (const cJSON *e = v->child; e; e = e->next) expect_scalar(&g, kv->elem_type, &off, e, m->string);
    }
    const cJSON *tensors = cJSON_GetObjectItem(ref, "tensors");
    cr_assert_eq((uint64_t)cJSON_GetArraySize(tensors), g.n_tensors);
    uint64_t i = 0;
    for (const cJSON *t = tensors->child; t; t = t->next, i++) {
        const struct gguf_tensor *gt = &g.tensors[i]; /* the index order is the file's */
        const char *name = cJSON_GetObjectItem(t, "name")->valuestring;
        cr_expect(gt->name_len == strlen(name) && memcmp(gt->name, name, gt->name_len) == 0, "tensor %llu",
                  (unsigned long long)i);
        const cJSON *dims = cJSON_GetObjectItem(t, "dims");
        cr_expect_eq(gt->ndim, (uint32_t)cJSON_GetArraySize(dims), "%s ndim", name);
        for (uint32_t d = 0; d < gt->ndim; d++)
            cr_expect_eq(gt->dims[d], (uint64_t)cJSON_GetArrayItem(dims, (int)d)->valuedouble, "%s dim %u",
                         name, d);
        cr_expect_eq(gt->type, (uint32_t)cJSON_GetObjectItem(t, "type")->valuedouble, "%s type", name);
        cr_expect_eq(gt->offset, (uint64_t)cJSON_GetObjectItem(t, "offset")->valuedouble, "%s offset", name);
    }
    gguf_free(&g);
    cJSON_Delete(ref);
    free(js);
    free(buf);
}

Test(gguf, matches_the_independent_reader) {
    expect_matches_reference(FIX "tiny-bf16.gguf");
    expect_matches_reference(FIX "tiny-f16-untied.gguf");
    expect_matches_reference(FIX "tiny-q8_0.gguf");
    expect_matches_reference(FIX "tiny-q4_0.gguf");
    expect_matches_reference(FIX "tiny-q4_0-mixed.gguf");
}

static struct qwen3_config file_config(const char *path) {
    size_t len;
    unsigned char *buf = read_all(path, &len);
    struct gguf_file g;
    struct fr_err err = {{0}};
    struct qwen3_config c;
    cr_assert_eq(gguf_parse(buf, len, path, &g, &err), 0, "%s", err.msg);
    cr_assert_eq(gguf_qwen3_config(&g, &c, &err), 0, "%s", err.msg);
    gguf_free(&g);
    free(buf);
    return c;
}

/* The config comes from the metadata and equals the Hugging Face config.json of the same model. */
Test(gguf, config_from_metadata) {
    struct qwen3_config c = file_config(FIX "tiny-bf16.gguf"), hf;
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_config_load(FIX "config.json", &hf, &err), 0, "%s", err.msg);
    cr_expect_eq(c.hidden, 32);
    cr_expect_eq(c.intermediate, 64);
    cr_expect_eq(c.n_layers, 2);
    cr_expect_eq(c.n_heads, 4);
    cr_expect_eq(c.n_kv_heads, 2);
    cr_expect_eq(c.head_dim, 16);
    cr_expect_eq(c.vocab, 300);
    cr_expect_eq(c.max_context, 64);
    cr_expect(c.tied_embeddings);
    cr_expect_float_eq(c.rope_theta, 10000.0, 1e-9);
    cr_expect_float_eq(c.rms_eps, 1e-6, 1e-12);
    cr_expect_str_eq(c.name, "tiny-bf16");
    cr_expect_eq(gguf_qwen3_check_config(&c, &hf, &err), 0, "%s", err.msg);
    struct qwen3_config u = file_config(FIX "tiny-f16-untied.gguf");
    cr_expect(!u.tied_embeddings);
    /* a different --model is refused, naming the metadata key */
    struct qwen3_config other = fixture_tiny_config();
    cr_expect_neq(gguf_qwen3_check_config(&c, &other, &err), 0);
    cr_expect(strstr(err.msg, "qwen3.block_count") || strstr(err.msg, "qwen3.embedding_length"), "%s",
              err.msg);
    hf.rope_theta = 1e6;
    cr_expect_neq(gguf_qwen3_check_config(&c, &hf, &err), 0);
    cr_expect(strstr(err.msg, "qwen3.rope.freq_base") != NULL, "%s", err.msg);
}

static void load(const char *path, const struct qwen3_config *c, struct qwen3_weights *w) {
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc(w, c, FR_DTYPE_BF16, &err), 0, "%s", err.msg);
    cr_assert_eq(weights_file_load(path, w, &err), 0, "%s", err.msg);
}

/* Greedy ids of a short prompt. */
static void greedy(const struct qwen3_weights *w, int *out, int n) {
    struct decode_state st;
    struct fr_err err = {{0}};
    cr_assert_eq(decode_state_init(&st, w, 16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, 1, &err), 0, "%s",
                 err.msg);
    static const int prompt[] = {72, 101, 108, 260, 298};
    int pos = 0;
    for (int i = 0; i < 5; i++)
        cr_assert_eq(decode_step(&st, prompt[i], pos++, NULL, &err), 0, "%s", err.msg);
    struct sampler_params greedy_p = {.temperature = 0.0f, .top_p = 1.0f, .seed = 0};
    for (int g = 0; g < n; g++) {
        cr_assert_eq(decode_sample(&st, &greedy_p, (uint64_t)g, NULL, &out[g], &err), 0, "%s", err.msg);
        if (g + 1 < n) cr_assert_eq(decode_step(&st, out[g], pos++, NULL, &err), 0, "%s", err.msg);
    }
    decode_state_free(&st);
}

/* gguf-py's BF16 and F16 files and our safetensors writer's file hold the same values (every one exact in
 * bf16 and f16): the loaded weights are bit-identical and decode the same ids. */
Test(gguf, same_weights_in_every_format, .timeout = 60) {
    struct qwen3_config tied = file_config(FIX "tiny-bf16.gguf"),
                        untied = file_config(FIX "tiny-f16-untied.gguf");
    struct qwen3_weights a, b, s;
    load(FIX "tiny-bf16.gguf", &tied, &a);
    load(FIX "tiny-f16-untied.gguf", &untied, &b);
    load(FIX "tiny-bf16.safetensors", &tied, &s);
    cr_assert_eq(a.total_bytes, s.total_bytes);
    cr_expect_eq(memcmp(a.base, s.base, a.total_bytes), 0, "GGUF bf16 and safetensors weights differ");
    size_t embed = (size_t)tied.vocab * (size_t)tied.hidden * 2;
    cr_expect_eq(memcmp(a.embed, b.embed, embed), 0);
    cr_expect_eq(memcmp(b.lm_head_own, b.embed, embed), 0, "output.weight is the embedding's copy");
    for (int l = 0; l < tied.n_layers; l++) {
        size_t qkv =
            (size_t)(tied.n_heads + 2 * tied.n_kv_heads) * (size_t)tied.head_dim * (size_t)tied.hidden * 2;
        cr_expect_eq(memcmp(a.layers[l].qkv, b.layers[l].qkv, qkv), 0, "layer %d qkv", l);
        cr_expect_eq(
            memcmp(a.layers[l].down, b.layers[l].down, (size_t)tied.hidden * (size_t)tied.intermediate * 2),
            0);
        cr_expect_eq(memcmp(a.layers[l].k_norm, s.layers[l].k_norm, (size_t)tied.head_dim * 4), 0);
    }
    int ia[8], ib[8], is[8];
    greedy(&a, ia, 8);
    greedy(&b, ib, 8);
    greedy(&s, is, 8);
    cr_expect_arr_eq(ia, ib, sizeof ia);
    cr_expect_arr_eq(ia, is, sizeof ia);
    qwen3_weights_free(&a);
    qwen3_weights_free(&b);
    qwen3_weights_free(&s);
}

/* `decode --weights FILE.gguf` takes its config from the file; with --model the two are checked; the
 * safetensors file of the same values prints the same ids. */
Test(gguf, cli_decode_gguf_and_safetensors_agree, .timeout = 120) {
    static struct cli_result r1, r2, r3;
    cli_run(&r1, 1, "decode --weights " FIX "tiny-bf16.gguf --prompt-ids 72,101,108,260 --max-new 8");
    cr_assert_eq(r1.status, 0, "%s", r1.err);
    cli_run(&r2, 1,
            "decode --model " FIX "config.json --weights " FIX
            "tiny-bf16.safetensors --prompt-ids 72,101,108,260 --max-new 8");
    cr_assert_eq(r2.status, 0, "%s", r2.err);
    cr_expect_str_eq(r1.out, r2.out);
    cli_run(&r3, 1,
            "decode --model " FIX "config.json --weights " FIX
            "tiny-f16-untied.gguf --prompt-ids 72,101,108,260 --max-new 8");
    /* a tied --model reads the embedding and checks output.weight without loading it, as for safetensors */
    cr_assert_eq(r3.status, 0, "%s", r3.err);
    cr_expect_str_eq(r1.out, r3.out);
    cli_run(&r3, 1, "decode --weights " FIX "tiny-f16-untied.gguf --prompt-ids 72,101,108,260 --max-new 8");
    cr_assert_eq(r3.status, 0, "%s", r3.err);
    cr_expect_str_eq(r1.out, r3.out);
    const char *bad[] = {
        "decode --model tests/fixtures/tiny-qwen3 --weights " FIX "tiny-bf16.gguf --prompt-ids 1 --max-new 1",
        "decode --weights " FIX "tiny-bf16.safetensors --prompt-ids 1 --max-new 1",
        "decode --weights " FIX "config.json --prompt-ids 1 --max-new 1",
        "decode --weights /nonexistent.gguf --prompt-ids 1 --max-new 1",
    };
    cli_expect_usage_errors(1, bad, sizeof bad / sizeof bad[0]);
}

/* --- malformed files, made by editing tiny-bf16.gguf's bytes --- */

struct mfile {
    unsigned char *buf;
    size_t len;
    struct gguf_file g; /* the intact file's parse, for offsets */
};

static void mfile_open(struct mfile *m) {
    m->buf = read_all(FIX "tiny-bf16.gguf", &m->len);
    struct fr_err err = {{0}};
    cr_assert_eq(gguf_parse(m->buf, m->len, "t.gguf", &m->g, &err), 0, "%s", err.msg);
}

static void mfile_close(struct mfile *m) {
    gguf_free(&m->g);
    free(m->buf);
}

/* Parses then loads a copy of buf[0, len) edited by the caller; expects failure naming want1 (and want2). */
static void expect_fail(const unsigned char *buf, size_t len, const char *want1, const char *want2) {
    unsigned char *copy = malloc(len ? len : 1);
    memcpy(copy, buf, len);
    struct gguf_file g;
    struct fr_err err = {{0}};
    struct qwen3_config c = {0};
    int rc = gguf_parse(copy, len, "bad.gguf", &g, &err);
    if (rc == 0) {
        rc = gguf_qwen3_config(&g, &c, &err);
        if (rc == 0) rc = gguf_qwen3_load(&g, &c, NULL, &err);
        gguf_free(&g);
    }
    cr_expect_neq(rc, 0, "accepted a file that should fail with '%s'", want1);
    cr_expect(strstr(err.msg, "bad.gguf") != NULL, "message '%s' lacks the file name", err.msg);
    cr_expect(strchr(err.msg, '\n') == NULL, "message '%s' spans lines", err.msg);
    cr_expect(strstr(err.msg, want1) != NULL, "message '%s' lacks '%s'", err.msg, want1);
    if (want2) cr_expect(strstr(err.msg, want2) != NULL, "message '%s' lacks '%s'", err.msg, want2);
    free(copy);
}

static size_t tensor_info_off(const struct mfile *m, const char *name) {
    const struct gguf_tensor *t = gguf_find_tensor(&m->g, name);
    cr_assert_not_null(t);
    return (size_t)((const unsigned char *)t->name - m->buf) - 8; /* its name's length field */
}

static void put_u32(unsigned char *p, uint32_t v) {
    memcpy(p, &v, 4);
}
static void put_u64(unsigned char *p, uint64_t v) {
    memcpy(p, &v, 8);
}

Test(gguf, malformed_headers) {
    struct mfile m;
    mfile_open(&m);
    unsigned char *e = malloc(m.len);
    memcpy(e, m.buf, m.len);
    e[0] = 'X';
    expect_fail(e, m.len, "not a GGUF file", NULL);
    memcpy(e, m.buf, m.len);
    put_u32(e + 4, 2);
    expect_fail(e, m.len, "version 2", NULL);
    memcpy(e, m.buf, m.len);
    put_u64(e + 8, 1ull << 40); /* tensor count */
    expect_fail(e, m.len, "tensor count", NULL);
    memcpy(e, m.buf, m.len);
    put_u64(e + 16, 1ull << 60); /* metadata count */
    expect_fail(e, m.len, "metadata count", NULL);
    memcpy(e, m.buf, m.len);
    put_u64(e + 24, 1ull << 62); /* the first key's length */
    expect_fail(e, m.len, "string length", "metadata key 0");
    /* an absurd string value length */
    const struct gguf_kv *name = gguf_find_kv(&m.g, "general.name");
    memcpy(e, m.buf, m.len);
    put_u64(e + name->value_off, (uint64_t)m.len);
    expect_fail(e, m.len, "string length", "general.name");
    /* an unknown value type, a nested array, an array too long for the file */
    memcpy(e, m.buf, m.len);
    put_u32(e + name->value_off - 4, 13);
    expect_fail(e, m.len, "unknown value type 13", "general.name");
    const struct gguf_kv *tok = gguf_find_kv(&m.g, "tokenizer.ggml.tokens");
    memcpy(e, m.buf, m.len);
    put_u32(e + tok->value_off - 12, GGUF_VTYPE_ARRAY);
    expect_fail(e, m.len, "arrays of arrays", "tokenizer.ggml.tokens");
    memcpy(e, m.buf, m.len);
    put_u64(e + tok->value_off - 8, 1ull << 59);
    expect_fail(e, m.len, "runs past the end", "tokenizer.ggml.tokens");
    /* general.file_type renamed general.alignment (same length, uint32): 3 is no power of two */
    const struct gguf_kv *ft = gguf_find_kv(&m.g, "general.file_type");
    memcpy(e, m.buf, m.len);
    memcpy((char *)e + (ft->key - (const char *)m.buf), "general.alignment", 17);
    put_u32(e + ft->value_off, 3);
    expect_fail(e, m.len, "power of two", "general.alignment");
    /* a duplicated key: qwen3.context_length renamed tokenizer.ggml.model (same length) */
    const struct gguf_kv *bc = gguf_find_kv(&m.g, "qwen3.context_length");
    memcpy(e, m.buf, m.len);
    memcpy((char *)e + (bc->key - (const char *)m.buf), "tokenizer.ggml.model", 20);
    expect_fail(e, m.len, "appears twice", "tokenizer.ggml.model");
    /* a wrong architecture, a missing config key */
    const struct gguf_kv *arch = gguf_find_kv(&m.g, "general.architecture");
    memcpy(e, m.buf, m.len);
    e[arch->value_off + 8 + 4] = '2';
    expect_fail(e, m.len, "expected 'qwen3'", "general.architecture");
    memcpy(e, m.buf, m.len);
    e[(size_t)(bc->key - (const char *)m.buf)] = 'Q';
    expect_fail(e, m.len, "missing metadata 'qwen3.context_length'", NULL);
    free(e);
    mfile_close(&m);
}

Test(gguf, malformed_tensors) {
    struct mfile m;
    mfile_open(&m);
    unsigned char *e = malloc(m.len);
    /* a tensor's info: name length (8), name, ndim (4), dims (8 each), type (4), offset (8) */
    size_t q = tensor_info_off(&m, "blk.1.attn_q.weight"), qn = q + 8 + strlen("blk.1.attn_q.weight");
    memcpy(e, m.buf, m.len);
    put_u64(e + qn + 4 + 8 + 8 + 4, (uint64_t)m.len); /* offset past the end */
    expect_fail(e, m.len, "run past the end of the data", "blk.1.attn_q.weight");
    memcpy(e, m.buf, m.len);
    put_u64(e + qn + 4 + 8 + 8 + 4, 96); /* inside another tensor */
    expect_fail(e, m.len, "overlaps", NULL);
    memcpy(e, m.buf, m.len);
    put_u64(e + qn + 4 + 8 + 8 + 4, 34); /* not aligned */
    expect_fail(e, m.len, "not a multiple of the alignment", "blk.1.attn_q.weight");
    memcpy(e, m.buf, m.len);
    put_u64(e + qn + 4 + 8, 32); /* 64 rows where the config says 64: make it 32 */
    expect_fail(e, m.len, "dims [32, 32], expected [32, 64]", "blk.1.attn_q.weight");
    memcpy(e, m.buf, m.len);
    put_u32(e + qn, 5);
    expect_fail(e, m.len, "5 dimensions", "blk.1.attn_q.weight");
    /* (one layer matrix in q8_0 among bf16 ones is read: a file runs its formats per tensor) */
    memcpy(e, m.buf, m.len);
    put_u32(e + qn + 4 + 16, 99);
    expect_fail(e, m.len, "unknown ggml type 99", "blk.1.attn_q.weight");
    /* renamed: attn_q -> attn_k of the same layer (a duplicate), -> an unknown name, -> layer 01 */
    memcpy(e, m.buf, m.len);
    e[q + 8 + 11] = 'k';
    expect_fail(e, m.len, "appears twice", "blk.1.attn_k.weight");
    memcpy(e, m.buf, m.len);
    e[q + 8 + 6] = 'X';
    expect_fail(e, m.len, "unexpected tensor 'blk.1.Xttn_q.weight'", NULL);
    memcpy(e, m.buf, m.len);
    e[q + 8 + 4] = '9';
    expect_fail(e, m.len, "unexpected tensor", "blk.9.attn_q.weight");
    free(e);
    mfile_close(&m);
    /* a missing tensor: gguf-py's file without it (tests/fuzz/corpus) */
    size_t len;
    unsigned char *buf = read_all("tests/fuzz/corpus/fuzz_gguf/missing-tensor.gguf", &len);
    expect_fail(buf, len, "missing tensor 'blk.1.ffn_up.weight'", NULL);
    free(buf);
}

/* Every prefix of the file, and every single-byte change in its first 512 bytes, is either refused with a
 * one-line message or (for a few edits of values) accepted: never a crash (ASan and UBSan watch). */
Test(gguf, truncations_and_byte_edits_never_crash, .timeout = 120) {
    size_t len;
    unsigned char *buf = read_all(FIX "tiny-bf16.gguf", &len);
    struct fr_err err;
    for (size_t n = 0; n < len; n += n < 8192 ? 1 : 997) {
        unsigned char *cut = malloc(n ? n : 1);
        memcpy(cut, buf, n);
        struct gguf_file g;
        int rc = gguf_parse(cut, n, "cut.gguf", &g, &err);
        if (rc == 0) {
            struct qwen3_config c;
            rc = gguf_qwen3_config(&g, &c, &err);
            if (rc == 0) rc = gguf_qwen3_load(&g, &c, NULL, &err);
            gguf_free(&g);
        }
        cr_expect_neq(rc, 0, "a %zu-byte prefix of %zu was accepted", n, len);
        cr_expect(strchr(err.msg, '\n') == NULL);
        free(cut);
    }
    for (size_t i = 0; i < 512; i++) {
        unsigned char *e = malloc(len);
        memcpy(e, buf, len);
        e[i] ^= 0xa5;
        struct gguf_file g;
        if (gguf_parse(e, len, "edit.gguf", &g, &err) == 0) {
            struct qwen3_config c;
            if (gguf_qwen3_config(&g, &c, &err) == 0) (void)gguf_qwen3_load(&g, &c, NULL, &err);
            gguf_free(&g);
        }
        free(e);
    }
    free(buf);
}

/* The fuzz harness's seeds do what their names say. */
Test(gguf, fuzz_corpus_seeds) {
    const char *seeds[] = {"valid-bf16", "valid-f32-untied", "valid-f16-no-tokenizer", "missing-tensor"};
    struct qwen3_config want = fixture_fuzz_config();
    for (int i = 0; i < 4; i++) {
        char path[128];
        snprintf(path, sizeof path, "tests/fuzz/corpus/fuzz_gguf/%s.gguf", seeds[i]);
        struct qwen3_config c;
        struct fr_err err = {{0}};
        if (i == 3) { /* the tensor index is checked with the config, before anything is allocated */
            cr_expect(weights_file_config(path, NULL, &c, &err) != 0 && strstr(err.msg, "missing tensor"),
                      "%s", err.msg);
            continue;
        }
        cr_assert_eq(weights_file_config(path, NULL, &c, &err), 0, "%s", err.msg);
        cr_expect_eq(c.hidden, want.hidden);
        cr_expect_eq(c.vocab, want.vocab);
        struct qwen3_weights w;
        cr_assert_eq(qwen3_weights_alloc(&w, &c, FR_DTYPE_F32, &err), 0);
        int rc = weights_file_load(path, &w, &err);
        cr_expect_eq(rc, 0, "%s: %s", path, err.msg);
        qwen3_weights_free(&w);
    }
}

Test(gguf, sha256_test_vectors) {
    static const struct {
        const char *msg, *hex;
    } v[] = {{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
             {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
             {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"}};
    for (int i = 0; i < 3; i++) {
        struct sha256 s;
        char hex[65];
        sha256_init(&s);
        /* in two pieces, across the block boundary where there is one */
        size_t n = strlen(v[i].msg), half = n / 3;
        sha256_update(&s, v[i].msg, half);
        sha256_update(&s, v[i].msg + half, n - half);
        sha256_final_hex(&s, hex);
        cr_expect_str_eq(hex, v[i].hex, "'%s'", v[i].msg);
    }
}
