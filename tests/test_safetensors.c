/* The safetensors loader on files this test writes: synthetic weights written as BF16 or F32 tensors load
 * back bit-exactly and decode to the same logits; then every malformed case, one by one, fails with a
 * one-line message naming the problem and the tensor. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernels/col_panels.h"
#include "kernels/team.h"
#include "model/decode.h"
#include "model/safetensors.h"
#include "tests/cli_run.h"
#include "tests/model_fixtures.h"

/* One header entry and where its data comes from. */
struct entry {
    char name[96];
    char dtype[16];
    int ndim;
    long dims[2];
    uint64_t begin, end; /* filled by the writer unless fixed_offsets */
    const void *src;     /* first element in the weights, or its matrix's when pw > 0 */
    enum fr_dtype src_type;
    size_t n;             /* elements */
    int m_rows, row0, pw; /* pw > 0: rows row0 .. of src's [m_rows][dims[1]] matrix in column panels of pw */
};

struct file_spec {
    struct entry e[64];
    int n;
    int fixed_offsets;    /* keep the entries' begin/end and data_bytes as set */
    size_t data_bytes;    /* size of the data section (set by serialize unless fixed_offsets) */
    const char *metadata; /* raw JSON object for __metadata__, or NULL */
};

static void add(struct file_spec *f, const char *name, const char *dtype, long rows, long cols,
                const void *src, enum fr_dtype st) {
    cr_assert_lt(f->n, 64);
    struct entry *e = &f->e[f->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    snprintf(e->dtype, sizeof e->dtype, "%s", dtype);
    e->ndim = cols ? 2 : 1;
    e->dims[0] = rows;
    e->dims[1] = cols;
    e->src = src;
    e->src_type = st;
    e->n = (size_t)rows * (size_t)(cols ? cols : 1);
}

/* Rows row0 .. row0 + rows of a layer's [m_rows][cols] matrix at base, stored as column panels of
 * col_panel_width(st, cols) (model/weights.h); the file holds them row-major. */
static void add_layer_matrix(struct file_spec *f, const char *name, const char *dtype, const void *base,
                             enum fr_dtype st, int m_rows, int row0, long rows, long cols) {
    add(f, name, dtype, rows, cols, base, st);
    struct entry *e = &f->e[f->n - 1];
    e->m_rows = m_rows, e->row0 = row0, e->pw = col_panel_width(st, (int)cols);
}

/* Every tensor of w, named as a Qwen3 checkpoint names them, in file dtype `dtype` ("BF16" or "F32"). */
static void spec_from_weights(struct file_spec *f, const struct qwen3_weights *w, const char *dtype) {
    memset(f, 0, sizeof *f);
    const struct qwen3_config *c = &w->cfg;
    long H = c->hidden, I = c->intermediate, qd = (long)c->n_heads * c->head_dim;
    long kvd = (long)c->n_kv_heads * c->head_dim;
    char name[96];
    add(f, "model.embed_tokens.weight", dtype, c->vocab, H, w->embed, w->wtype);
    if (!c->tied_embeddings) add(f, "lm_head.weight", dtype, c->vocab, H, w->lm_head_own, w->wtype);
    add(f, "model.norm.weight", dtype, H, 0, w->final_norm, FR_DTYPE_F32);
    for (int l = 0; l < c->n_layers; l++) {
        const struct qwen3_layer_weights *L = &w->layers[l];
#define LAYER(suffix, rows, cols, src, st)                                                                   \
    do {                                                                                                     \
        snprintf(name, sizeof name, "model.layers.%d.%s", l, suffix);                                        \
        add(f, name, dtype, rows, cols, src, st);                                                            \
    } while (0)
#define MATRIX(suffix, base, m_rows, row0, rows, cols)                                                       \
    do {                                                                                                     \
        snprintf(name, sizeof name, "model.layers.%d.%s", l, suffix);                                        \
        add_layer_matrix(f, name, dtype, base, w->wtype, (int)(m_rows), (int)(row0), rows, cols);            \
    } while (0)
        MATRIX("self_attn.q_proj.weight", L->qkv, qd + 2 * kvd, 0, qd, H);
        MATRIX("self_attn.k_proj.weight", L->qkv, qd + 2 * kvd, qd, kvd, H);
        MATRIX("self_attn.v_proj.weight", L->qkv, qd + 2 * kvd, qd + kvd, kvd, H);
        MATRIX("self_attn.o_proj.weight", L->o, H, 0, H, qd);
        LAYER("self_attn.q_norm.weight", c->head_dim, 0, L->q_norm, FR_DTYPE_F32);
        LAYER("self_attn.k_norm.weight", c->head_dim, 0, L->k_norm, FR_DTYPE_F32);
        MATRIX("mlp.gate_proj.weight", L->gate_up, 2 * I, 0, I, H);
        MATRIX("mlp.up_proj.weight", L->gate_up, 2 * I, I, I, H);
        MATRIX("mlp.down_proj.weight", L->down, H, 0, H, I);
        LAYER("input_layernorm.weight", H, 0, L->attn_norm, FR_DTYPE_F32);
        LAYER("post_attention_layernorm.weight", H, 0, L->mlp_norm, FR_DTYPE_F32);
#undef MATRIX
#undef LAYER
    }
}

static size_t file_elem_bytes(const char *dtype) {
    return strcmp(dtype, "F32") == 0 ? 4 : 2;
}

/* Serializes the spec: 8-byte header length, JSON header, data. Returns a malloc'd buffer. */
static unsigned char *serialize(struct file_spec *f, size_t *len) {
    size_t data = 0;
    for (int i = 0; i < f->n; i++) {
        struct entry *e = &f->e[i];
        if (!f->fixed_offsets) {
            e->begin = data;
            e->end = data + e->n * file_elem_bytes(e->dtype);
        }
        if (e->end > data) data = e->end;
    }
    if (f->fixed_offsets) data = f->data_bytes;
    f->data_bytes = data;
    size_t hcap = 256 + (size_t)f->n * 256 + (f->metadata ? strlen(f->metadata) : 0);
    char *h = malloc(hcap);
    size_t hl = (size_t)snprintf(h, hcap, "{");
    if (f->metadata) hl += (size_t)snprintf(h + hl, hcap - hl, "\"__metadata__\":%s,", f->metadata);
    for (int i = 0; i < f->n; i++) {
        struct entry *e = &f->e[i];
        hl += (size_t)snprintf(h + hl, hcap - hl, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i ? "," : "",
                               e->name, e->dtype);
        for (int d = 0; d < e->ndim; d++)
            hl += (size_t)snprintf(h + hl, hcap - hl, "%s%ld", d ? "," : "", e->dims[d]);
        hl += (size_t)snprintf(h + hl, hcap - hl, "],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}", e->begin,
                               e->end);
    }
    hl += (size_t)snprintf(h + hl, hcap - hl, "}");
    /* the reference writer pads the header with spaces to a multiple of 8 so the data is aligned */
    while (hl % 8) h[hl++] = ' ';
    h[hl] = '\0';
    cr_assert_lt(hl, hcap);
    unsigned char *buf = calloc(1, 8 + hl + data);
    for (int b = 0; b < 8; b++) buf[b] = (unsigned char)((uint64_t)hl >> (8 * b));
    memcpy(buf + 8, h, hl);
    free(h);
    unsigned char *base = buf + 8 + hl;
    for (int i = 0; i < f->n; i++) {
        const struct entry *e = &f->e[i];
        if (!e->src || f->fixed_offsets) continue;
        int f32 = file_elem_bytes(e->dtype) == 4;
        for (size_t k = 0; k < e->n; k++) {
            size_t at = k;
            if (e->pw > 0) {
                int cols = (int)e->dims[1];
                at = col_panel_index(e->m_rows, cols, e->pw, e->row0 + (int)(k / (size_t)cols),
                                     (int)(k % (size_t)cols));
            }
            float v = e->src_type == FR_DTYPE_BF16 ? bf16_to_f32(((const uint16_t *)e->src)[at])
                                                   : ((const float *)e->src)[at];
            if (f32)
                memcpy(base + e->begin + 4 * k, &v, 4);
            else {
                uint16_t b = bf16_from_f32(v);
                memcpy(base + e->begin + 2 * k, &b, 2);
            }
        }
    }
    *len = 8 + hl + data;
    return buf;
}

static void write_temp(const unsigned char *buf, size_t len, char *path) {
    strcpy(path, "/tmp/fr-test-st-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, buf, len), (ssize_t)len);
    close(fd);
}

static void synthetic(struct qwen3_weights *w, const struct qwen3_config *c, enum fr_dtype t) {
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc(w, c, t, &err), 0, "%s", err.msg);
    qwen3_weights_init_synthetic(w, 99);
}

/* Logits of two decode steps, into out[2][vocab]. */
static void decode_two(const struct qwen3_weights *w, float *out) {
    struct decode_state st;
    struct fr_err err = {{0}};
    cr_assert_eq(decode_state_init(&st, w, 4, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, kernel_team_procs(), &err),
                 0, "%s", err.msg);
    for (int p = 0; p < 2; p++) {
        cr_assert_eq(decode_step(&st, 7 + 100 * p, p, NULL, &err), 0, "%s", err.msg);
        memcpy(out + (size_t)p * (size_t)w->cfg.vocab, st.logits, (size_t)w->cfg.vocab * sizeof(float));
    }
    decode_state_free(&st);
}

/* Writes src as a file of dtype file_dtype, loads it into weights of type load_type, and checks the
 * loaded tensors (and the decode's logits) against src. */
static void round_trip(const struct qwen3_config *c, enum fr_dtype src_type, const char *file_dtype,
                       enum fr_dtype load_type, const char *metadata, int with_tied_lm_head) {
    struct qwen3_weights src, got;
    synthetic(&src, c, src_type);
    struct file_spec f;
    spec_from_weights(&f, &src, file_dtype);
    f.metadata = metadata;
    if (with_tied_lm_head) add(&f, "lm_head.weight", file_dtype, c->vocab, c->hidden, src.embed, src.wtype);
    size_t len;
    unsigned char *buf = serialize(&f, &len);
    char path[64];
    write_temp(buf, len, path);
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc(&got, c, load_type, &err), 0, "%s", err.msg);
    cr_assert_eq(safetensors_load(path, &got, &err), 0, "%s", err.msg);
    unlink(path);
    free(buf);
    float *a = malloc(2 * (size_t)c->vocab * sizeof(float)),
          *b = malloc(2 * (size_t)c->vocab * sizeof(float));
    decode_two(&src, a);
    decode_two(&got, b);
    if (load_type == src_type) {
        /* same dtype end to end: the carved allocations (padding included, zero in both) are identical */
        cr_expect_eq(memcmp(src.base, got.base, src.total_bytes), 0, "loaded weights differ");
        cr_expect_eq(memcmp(a, b, 2 * (size_t)c->vocab * sizeof(float)), 0, "logits differ");
    } else {
        /* bf16 values widened to f32 are the same numbers; only the matvec's element type differs */
        for (int i = 0; i < 2 * c->vocab; i++) cr_assert_leq(fabsf(a[i] - b[i]), 1e-5f + 1e-5f * fabsf(a[i]));
    }
    free(a);
    free(b);
    qwen3_weights_free(&src);
    qwen3_weights_free(&got);
}

Test(safetensors, bf16_file_loads_exactly) {
    struct qwen3_config c = fixture_tiny_config();
    round_trip(&c, FR_DTYPE_BF16, "BF16", FR_DTYPE_BF16, NULL, 0);
}

Test(safetensors, f32_file_loads_exactly) {
    struct qwen3_config c = fixture_tiny_config();
    round_trip(&c, FR_DTYPE_F32, "F32", FR_DTYPE_F32, "{\"format\":\"pt\"}", 0);
}

Test(safetensors, f32_file_into_bf16_weights_rounds_like_synthetic) {
    /* synthetic bf16 weights are the f32 values rounded to nearest even: the loader must round the same */
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w32, w16, got;
    synthetic(&w32, &c, FR_DTYPE_F32);
    synthetic(&w16, &c, FR_DTYPE_BF16);
    struct file_spec f;
    spec_from_weights(&f, &w32, "F32");
    size_t len;
    unsigned char *buf = serialize(&f, &len);
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc(&got, &c, FR_DTYPE_BF16, &err), 0);
    cr_assert_eq(safetensors_load_buffer(buf, len, "mem", &c, &got, &err), 0, "%s", err.msg);
    cr_expect_eq(memcmp(w16.base, got.base, w16.total_bytes), 0);
    free(buf);
    qwen3_weights_free(&w32);
    qwen3_weights_free(&w16);
    qwen3_weights_free(&got);
}

/* An intermediate of 2112 columns: down_proj is stored as two column panels, the file holds it row-major. */
Test(safetensors, down_proj_loads_into_column_panels) {
    struct qwen3_config c = fixture_tiny_config();
    c.intermediate = 2112;
    round_trip(&c, FR_DTYPE_BF16, "BF16", FR_DTYPE_BF16, NULL, 0);
    round_trip(&c, FR_DTYPE_BF16, "BF16", FR_DTYPE_F32, NULL, 0);
}

Test(safetensors, bf16_file_into_f32_weights) {
    struct qwen3_config c = fixture_tiny_config();
    round_trip(&c, FR_DTYPE_BF16, "BF16", FR_DTYPE_F32, NULL, 0);
}

Test(safetensors, untied_lm_head_and_tied_copy) {
    struct qwen3_config c = fixture_tiny_config();
    c.tied_embeddings = false;
    round_trip(&c, FR_DTYPE_BF16, "BF16", FR_DTYPE_BF16, NULL, 0);
    c.tied_embeddings = true; /* a tied checkpoint that also ships lm_head.weight, as Qwen3-0.6B's does */
    round_trip(&c, FR_DTYPE_BF16, "BF16", FR_DTYPE_BF16, NULL, 1);
}

/* ---- malformed files: each mutation alone must fail with `want` in the message ---- */

struct fixture {
    struct qwen3_config c;
    struct qwen3_weights w;
    struct file_spec f;
};

static void fixture_make(struct fixture *x, int tied) {
    x->c = fixture_tiny_config();
    x->c.tied_embeddings = tied;
    synthetic(&x->w, &x->c, FR_DTYPE_BF16);
    spec_from_weights(&x->f, &x->w, "BF16");
}

static void expect_fail_buf(struct fixture *x, const unsigned char *buf, size_t len, const char *want1,
                            const char *want2) {
    struct fr_err err = {{0}};
    cr_expect_neq(safetensors_load_buffer(buf, len, "bad.safetensors", &x->c, &x->w, &err), 0,
                  "accepted a file that should fail with '%s'", want1);
    cr_expect(strstr(err.msg, want1) != NULL, "message '%s' lacks '%s'", err.msg, want1);
    if (want2) cr_expect(strstr(err.msg, want2) != NULL, "message '%s' lacks '%s'", err.msg, want2);
    cr_expect(strchr(err.msg, '\n') == NULL, "not one line: %s", err.msg);
    /* the check-only entry point agrees */
    cr_expect_neq(safetensors_load_buffer(buf, len, "bad.safetensors", &x->c, NULL, &err), 0);
}

/* A file that is only a header: the 8-byte length, then json. */
static void expect_fail_header(struct fixture *x, const char *json, const char *want1, const char *want2) {
    size_t hl = strlen(json);
    unsigned char *buf = malloc(8 + hl);
    for (int b = 0; b < 8; b++) buf[b] = (unsigned char)((uint64_t)hl >> (8 * b));
    memcpy(buf + 8, json, hl);
    expect_fail_buf(x, buf, 8 + hl, want1, want2);
    free(buf);
}

static void expect_fail(struct fixture *x, const char *want1, const char *want2) {
    size_t len;
    unsigned char *buf = serialize(&x->f, &len);
    expect_fail_buf(x, buf, len, want1, want2);
    free(buf);
}

static struct entry *find(struct fixture *x, const char *name) {
    for (int i = 0; i < x->f.n; i++)
        if (strcmp(x->f.e[i].name, name) == 0) return &x->f.e[i];
    cr_assert_fail("no entry %s", name);
    return NULL;
}

static void drop(struct fixture *x, const char *name) {
    struct entry *e = find(x, name);
    int i = (int)(e - x->f.e);
    memmove(&x->f.e[i], &x->f.e[i + 1], (size_t)(x->f.n - i - 1) * sizeof *e);
    x->f.n--;
}

Test(safetensors, malformed_framing) {
    struct fixture x;
    fixture_make(&x, 1);
    size_t len;
    unsigned char *buf = serialize(&x.f, &len);
    /* sanity: the unmutated file is accepted, so every failure below is the mutation's */
    struct fr_err err = {{0}};
    cr_assert_eq(safetensors_load_buffer(buf, len, "ok", &x.c, NULL, &err), 0, "%s", err.msg);

    expect_fail_buf(&x, buf, 5, "truncated", NULL);
    expect_fail_buf(&x, buf, 0, "truncated", NULL);
    unsigned char *cut = malloc(len);
    memcpy(cut, buf, len);
    cut[0] = 0xff; /* header length now larger than the file */
    cut[3] = 0x01;
    expect_fail_buf(&x, cut, len, "runs past the end", NULL);
    memcpy(cut, buf, len);
    cut[7] = 0x80; /* a length near 2^63: no overflow when adding 8 */
    expect_fail_buf(&x, cut, len, "runs past the end", NULL);
    memcpy(cut, buf, len);
    cut[8] = '!'; /* break the JSON */
    expect_fail_buf(&x, cut, len, "not valid JSON", NULL);
    /* the data cut short: the last tensor's range runs past the data */
    expect_fail_buf(&x, buf, len - 1, "outside", "post_attention_layernorm");
    free(cut);
    free(buf);

    expect_fail_header(&x, "[1]", "not a JSON object", NULL);
    expect_fail_header(&x, "{}", "missing tensor", "embed_tokens");
    expect_fail_header(&x, "{\"model.norm.weight\":{\"shape\":[64]}}", "missing dtype", "model.norm");
    expect_fail_header(&x, "{\"model.norm.weight\":17}", "not a JSON object", "model.norm");
    expect_fail_header(&x, "{\"model.norm.weight\":{\"dtype\":\"BF16\",\"shape\":64}}", "missing shape",
                       "model.norm");
    qwen3_weights_free(&x.w);
}

Test(safetensors, missing_and_extra_tensors) {
    struct fixture x;
    fixture_make(&x, 1);
    drop(&x, "model.layers.1.mlp.up_proj.weight");
    expect_fail(&x, "missing tensor", "model.layers.1.mlp.up_proj.weight");
    qwen3_weights_free(&x.w);

    fixture_make(&x, 0);
    drop(&x, "lm_head.weight");
    expect_fail(&x, "missing tensor", "lm_head.weight");
    qwen3_weights_free(&x.w);

    const char *extras[] = {"model.layers.2.mlp.up_proj.weight",
                            "model.layers.01.mlp.up_proj.weight",
                            "model.layers.0.mlp.up_proj.bias",
                            "model.rotary_emb.inv_freq",
                            "model.layers.",
                            "model.layers.1x.mlp.up_proj.weight"};
    for (size_t i = 0; i < sizeof extras / sizeof extras[0]; i++) {
        fixture_make(&x, 1);
        add(&x.f, extras[i], "BF16", 96, 64, x.w.layers[0].gate_up, FR_DTYPE_BF16);
        expect_fail(&x, "unexpected tensor", extras[i]);
        qwen3_weights_free(&x.w);
    }

    /* a name with a control character (a JSON escape) still gives a one-line message */
    fixture_make(&x, 1);
    add(&x.f, "bad\\nname", "BF16", 2, 0, x.w.final_norm, FR_DTYPE_F32);
    expect_fail(&x, "unexpected tensor 'bad?name'", NULL);
    qwen3_weights_free(&x.w);

    fixture_make(&x, 1);
    x.f.e[x.f.n] = *find(&x, "model.layers.0.self_attn.o_proj.weight");
    x.f.n++;
    expect_fail(&x, "appears twice", "model.layers.0.self_attn.o_proj.weight");
    qwen3_weights_free(&x.w);
}

Test(safetensors, wrong_shape_and_dtype) {
    struct fixture x;
    fixture_make(&x, 1);
    struct entry *e = find(&x, "model.layers.1.self_attn.k_proj.weight");
    e->dims[0] = 128; /* a q_proj's shape where k_proj belongs */
    e->n = 128 * 64;
    expect_fail(&x, "shape [128, 64], expected [64, 64]", "model.layers.1.self_attn.k_proj.weight");
    qwen3_weights_free(&x.w);

    fixture_make(&x, 1);
    e = find(&x, "model.layers.0.self_attn.q_norm.weight");
    e->ndim = 2;
    e->dims[0] = 1;
    e->dims[1] = 32;
    expect_fail(&x, "2 dimensions, expected [32]", "q_norm");
    qwen3_weights_free(&x.w);

    fixture_make(&x, 1);
    e = find(&x, "model.embed_tokens.weight");
    e->dims[0] = -257;
    expect_fail(&x, "not a non-negative integer", "model.embed_tokens.weight");
    qwen3_weights_free(&x.w);

    const char *dtypes[] = {"F16", "I64", "bf16", ""};
    for (size_t i = 0; i < 4; i++) {
        fixture_make(&x, 1);
        e = find(&x, "model.layers.0.mlp.down_proj.weight");
        snprintf(e->dtype, sizeof e->dtype, "%s", dtypes[i]);
        expect_fail(&x, "unsupported dtype", "model.layers.0.mlp.down_proj.weight");
        qwen3_weights_free(&x.w);
    }
}

Test(safetensors, bad_offsets) {
    struct fixture x;
    fixture_make(&x, 1);
    size_t len;
    unsigned char *buf = serialize(&x.f, &len); /* fills the offsets */
    free(buf);
    x.f.fixed_offsets = 1;

    struct entry *a = find(&x, "model.layers.0.self_attn.q_norm.weight");
    struct entry *b = find(&x, "model.layers.0.self_attn.k_norm.weight");
    uint64_t saved_b = b->begin, saved_e = b->end;
    b->begin = a->begin + 2; /* same size, shifted into a's bytes */
    b->end = b->begin + 64;
    expect_fail(&x, "overlaps", "norm.weight");
    b->begin = saved_b;
    b->end = saved_e;

    struct entry *last = &x.f.e[x.f.n - 1];
    last->begin += 1u << 20; /* past the data */
    last->end += 1u << 20;
    expect_fail(&x, "outside", last->name);
    last->begin -= 1u << 20;
    last->end -= 1u << 20;

    b->end = b->begin - 1; /* reversed */
    expect_fail(&x, "outside", "k_norm");
    b->end = b->begin + 32; /* span too small for [32] BF16 */
    expect_fail(&x, "span 32 bytes", "k_norm");
    b->end = saved_e;
    qwen3_weights_free(&x.w);

    /* offsets of the wrong JSON type */
    fixture_make(&x, 1);
    expect_fail_header(
        &x, "{\"model.norm.weight\":{\"dtype\":\"BF16\",\"shape\":[64],\"data_offsets\":[\"0\",128]}}",
        "data_offsets", "model.norm.weight");
    expect_fail_header(
        &x, "{\"model.norm.weight\":{\"dtype\":\"BF16\",\"shape\":[64],\"data_offsets\":[0.5,128]}}",
        "data_offsets", "model.norm.weight");
    expect_fail_header(&x, "{\"model.norm.weight\":{\"dtype\":\"BF16\",\"shape\":[64],\"data_offsets\":[0]}}",
                       "data_offsets", "model.norm.weight");
    qwen3_weights_free(&x.w);
}

Test(safetensors, file_errors, .timeout = 30) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w;
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc(&w, &c, FR_DTYPE_BF16, &err), 0);
    cr_expect_neq(safetensors_load("/nonexistent/dir/x.safetensors", &w, &err), 0);
    cr_expect(strstr(err.msg, "cannot open") != NULL, "%s", err.msg);
    cr_expect_neq(safetensors_load("/tmp", &w, &err), 0);
    cr_expect(strstr(err.msg, "not a regular file") != NULL, "%s", err.msg);
    /* a FIFO is refused at once, not waited on for a writer */
    char fifo[] = "/tmp/fr-st-fifo-XXXXXX";
    cr_assert_not_null(mkdtemp(fifo));
    char fifo_file[64];
    snprintf(fifo_file, sizeof fifo_file, "%s/w.safetensors", fifo);
    cr_assert_eq(mkfifo(fifo_file, 0600), 0);
    cr_expect_neq(safetensors_load(fifo_file, &w, &err), 0);
    cr_expect(strstr(err.msg, "not a regular file") != NULL, "%s", err.msg);
    unlink(fifo_file);
    rmdir(fifo);
    char path[64];
    write_temp((const unsigned char *)"abc", 3, path);
    cr_expect_neq(safetensors_load(path, &w, &err), 0);
    cr_expect(strstr(err.msg, "truncated") != NULL, "%s", err.msg);
    unlink(path);
    qwen3_weights_free(&w);
}

/* The fuzz harness's seed corpus (scripts/make_safetensors_corpus.py) exercises what it claims: the valid
 * seeds load into the harness's config and the near misses fail. */
Test(safetensors, fuzz_corpus_seeds) {
    struct qwen3_config c = fixture_fuzz_config();
    const char *seeds[] = {"valid-bf16",  "valid-f32-metadata", "valid-tied-lm-head",
                           "wrong-shape", "unknown-dtype",      "overlap",
                           "missing"};
    for (int i = 0; i < 7; i++) {
        char path[128];
        snprintf(path, sizeof path, "tests/fuzz/corpus/fuzz_safetensors/%s.safetensors", seeds[i]);
        struct qwen3_weights w;
        struct fr_err err = {{0}};
        cr_assert_eq(qwen3_weights_alloc(&w, &c, FR_DTYPE_BF16, &err), 0);
        int rc = safetensors_load(path, &w, &err);
        if (i < 3)
            cr_expect_eq(rc, 0, "%s: %s", path, err.msg);
        else
            cr_expect(rc != 0 && strstr(err.msg, "cannot open") == NULL, "%s: %s", path, err.msg);
        qwen3_weights_free(&w);
    }
}

/* `forge-roofline decode --weights FILE` on a file written from synthetic weights: its first logits row
 * (after the last prompt id) is the in-process decode's, for a BF16 file with bf16 weights and an F32 file
 * with f32 weights. */
Test(safetensors, cli_decode_with_weights_file, .timeout = 120) {
    static struct cli_result r;
    const char *file_dtype[] = {"BF16", "F32"};
    const enum fr_dtype wtype[] = {FR_DTYPE_BF16, FR_DTYPE_F32};
    for (int k = 0; k < 2; k++) {
        char dir[64], path[128], logits_path[128], args[512];
        cr_assert_eq(fixture_write_tiny_config(dir), 0);
        struct qwen3_config c = fixture_tiny_config();
        struct qwen3_weights w;
        synthetic(&w, &c, wtype[k]);
        struct file_spec f;
        spec_from_weights(&f, &w, file_dtype[k]);
        size_t len;
        unsigned char *buf = serialize(&f, &len);
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        FILE *out = fopen(path, "wb");
        cr_assert(out && fwrite(buf, 1, len, out) == len && fclose(out) == 0);
        free(buf);
        snprintf(logits_path, sizeof logits_path, "%s/logits", dir);
        snprintf(args, sizeof args,
                 "decode --model %s --weights %s --dtype %s --prompt-ids 7,107 --max-new 1 "
                 "--logits-out %s",
                 dir, path, fr_dtype_name(wtype[k]), logits_path);
        cli_run(&r, 0, args);
        cr_assert_eq(r.status, 0, "%s", r.err);
        float *want = malloc(2 * 257 * sizeof(float)), got[257];
        decode_two(&w, want);
        FILE *in = fopen(logits_path, "rb");
        cr_assert(in && fread(got, sizeof(float), 257, in) == 257);
        fclose(in);
        for (int i = 0; i < 257; i++)
            cr_assert_leq(fabsf(got[i] - want[257 + i]), 1e-5f, "%s logit %d: %g vs %g", file_dtype[k], i,
                          got[i], want[257 + i]);
        free(want);
        qwen3_weights_free(&w);
        remove(path);
        fixture_remove_dir(dir, "logits");
    }
}
