/* The batched decode step (model/decode_batch.h): per-token blocks per sequence on the single-sequence code
 * (decode_block_run), projections once for the batch (decode_projection_run over B rows, a GEMM). Checked in
 * tests/test_decode_batch.c against B separate single-sequence steps on the same weights. */
#include "model/decode_batch.h"

#include <stdlib.h>
#include <string.h>

#include "model/weights.h"

/* Floats of one sequence's activation row in each array of struct decode_rows, in its field order. */
static void rows_floats(const struct qwen3_config *c, size_t n[8]) {
    size_t q = (size_t)c->n_heads * (size_t)c->head_dim, kv = (size_t)c->n_kv_heads * (size_t)c->head_dim;
    n[0] = (size_t)c->hidden;           /* x */
    n[1] = (size_t)c->hidden;           /* xb */
    n[2] = q + 2 * kv;                  /* qkv */
    n[3] = q;                           /* att */
    n[4] = (size_t)c->hidden;           /* proj */
    n[5] = 2 * (size_t)c->intermediate; /* gate_up */
    n[6] = (size_t)c->intermediate;     /* hb */
    n[7] = (size_t)c->vocab;            /* logits */
}

static float *rows_get(const struct decode_rows *r, int i) {
    float *const f[8] = {r->x, r->xb, r->qkv, r->att, r->proj, r->gate_up, r->hb, r->logits};
    return f[i];
}

static float **rows_field(struct decode_rows *r, int i) {
    float **f[8] = {&r->x, &r->xb, &r->qkv, &r->att, &r->proj, &r->gate_up, &r->hb, &r->logits};
    return f[i];
}

size_t decode_batch_bytes(const struct qwen3_config *c, int batch, int max_pos, enum fr_dtype kvtype) {
    size_t kv = kv_cache_bytes(c, max_pos, kvtype);
    if (kv == 0 || batch <= 0) return 0;
    size_t n[8], act = 0;
    rows_floats(c, n);
    for (int i = 0; i < 8; i++) act += n[i];
    size_t tables = (size_t)max_pos * ((size_t)c->head_dim + (size_t)c->n_heads); /* cos, sin; scores */
    size_t per_seq = kv + (act + tables) * sizeof(float) + sampler_scratch_bytes(c->vocab);
    if (per_seq > SIZE_MAX / (size_t)batch) return 0;
    return per_seq * (size_t)batch;
}

void decode_rows_free(struct decode_rows *r) {
    for (int i = 0; i < 8; i++) free(*rows_field(r, i));
    memset(r, 0, sizeof *r);
}

int decode_rows_alloc(struct decode_rows *r, const struct qwen3_config *c, int rows, int logit_rows) {
    size_t n[8];
    rows_floats(c, n);
    memset(r, 0, sizeof *r);
    for (int i = 0; i < 8; i++) {
        size_t count = (size_t)(i == 7 ? logit_rows : rows);
        size_t bytes = ((n[i] * count * sizeof(float)) + 63) & ~(size_t)63;
        float *p = aligned_alloc(64, bytes ? bytes : 64);
        *rows_field(r, i) = p;
        if (!p) {
            decode_rows_free(r);
            return -1;
        }
        memset(p, 0, bytes);
    }
    return 0;
}

void decode_rows_at(const struct decode_rows *all, const struct qwen3_config *c, int row, int logit_row,
                    struct decode_rows *out) {
    size_t n[8];
    rows_floats(c, n);
    for (int i = 0; i < 8; i++)
        *rows_field(out, i) = rows_get(all, i) + (size_t)(i == 7 ? logit_row : row) * n[i];
}

void decode_batch_free(struct decode_batch *bt) {
    for (int s = 0; s < bt->n_init; s++) decode_state_free(&bt->seq[s]);
    free(bt->seq);
    decode_rows_free(&bt->rows);
    memset(bt, 0, sizeof *bt);
}

int decode_batch_init(struct decode_batch *bt, const struct qwen3_weights *w, int batch, int max_pos,
                      enum fr_dtype kvtype, enum matvec_backend backend, int threads,
                      const struct gemm_blocking *blk, struct fr_err *err) {
    memset(bt, 0, sizeof *bt);
    const struct qwen3_config *c = &w->cfg;
    if (batch < 1) return fr_err_set(err, "batch %d: at least one sequence", batch);
    char why[256];
    if (!decode_backend_runs(backend, w, batch, why, sizeof why))
        return fr_err_set(err, "batch %d on %s: %s", batch, matvec_backend_name(backend), why);
    size_t need = decode_batch_bytes(c, batch, max_pos, kvtype);
    char what[128];
    snprintf(what, sizeof what, "batch %d of %s with %d-position %s KV caches", batch, c->name, max_pos,
             fr_dtype_name(kvtype));
    if (need == 0) return fr_err_set(err, "%s: size overflows", what);
    if (qwen3_mem_check(need, what, err) != 0) return -1;
    if (decode_rows_alloc(&bt->rows, c, batch, batch) != 0)
        return fr_err_set(err, "%s: out of memory for the activation rows", what);
    bt->batch = bt->capacity = batch;
    if (!(bt->seq = calloc((size_t)batch, sizeof *bt->seq))) {
        decode_batch_free(bt);
        return fr_err_set(err, "%s: out of memory", what);
    }
    for (int s = 0; s < batch; s++) {
        struct decode_rows r;
        decode_rows_at(&bt->rows, c, s, s, &r);
        if (decode_state_init_rows(&bt->seq[s], w, max_pos, kvtype, backend, threads, &r, err) != 0) {
            decode_batch_free(bt);
            return -1;
        }
        bt->n_init = s + 1;
        if (blk) bt->seq[s].blocking = *blk;
    }
    return 0;
}

/* One block for the whole batch: a projection as one GEMM over the rows, any other block per sequence at its
 * position (pos NULL: position 0, for the blocks that take none). */
static int batch_block(struct decode_batch *bt, enum block_id b, int layer, const int *pos,
                       const struct decode_observer *obs, struct fr_err *err) {
    struct decode_projection p;
    int rc = 0;
    if (obs && obs->begin) obs->begin(obs->ctx, b, layer);
    if (decode_projection_of(&bt->seq[0], b, layer, &p) == 0) {
        if (decode_projection_run(&bt->seq[0], b, layer, bt->batch) != 0) {
            if (err) *err = bt->seq[0].err;
            rc = -1;
        }
    } else {
        for (int s = 0; s < bt->batch && rc == 0; s++)
            if (decode_block_run(&bt->seq[s], b, layer, pos ? pos[s] : 0) != 0) {
                if (err) fr_err_set(err, "sequence %d: %s", s, bt->seq[s].err.msg);
                rc = -1;
            }
    }
    if (obs && obs->end) obs->end(obs->ctx, b, layer);
    return rc;
}

int decode_batch_step(struct decode_batch *bt, const int *tokens, const int *pos,
                      const struct decode_observer *obs, struct fr_err *err) {
    if (bt->batch == 1) return decode_step(&bt->seq[0], tokens[0], pos[0], obs, err);
    for (int s = 0; s < bt->batch; s++) {
        if (tokens[s] < 0 || tokens[s] >= bt->seq[s].cfg.vocab)
            return fr_err_set(err, "sequence %d: token %d outside the vocabulary [0, %d)", s, tokens[s],
                              bt->seq[s].cfg.vocab);
        if (pos[s] < 0 || pos[s] >= bt->seq[s].max_pos)
            return fr_err_set(err, "sequence %d: position %d outside the cache's [0, %d)", s, pos[s],
                              bt->seq[s].max_pos);
        bt->seq[s].token = tokens[s];
    }
    if (batch_block(bt, BLOCK_EMBED, -1, pos, obs, err)) return -1;
    for (int l = 0; l < bt->seq[0].cfg.n_layers; l++)
        for (int b = BLOCK_ATTN_NORM; b <= BLOCK_DOWN_PROJ; b++)
            if (batch_block(bt, (enum block_id)b, l, pos, obs, err)) return -1;
    if (batch_block(bt, BLOCK_FINAL_NORM, -1, pos, obs, err)) return -1;
    return batch_block(bt, BLOCK_LM_HEAD, -1, pos, obs, err);
}

int decode_batch_sample(struct decode_batch *bt, const struct sampler_params *params, uint64_t step,
                        const struct decode_observer *obs, int *tokens, struct fr_err *err) {
    if (sampler_check_params(params, err)) return -1;
    for (int s = 0; s < bt->batch; s++) {
        bt->seq[s].sampler_params = *params;
        bt->seq[s].sampler_params.seed = params->seed + (uint64_t)s;
        bt->seq[s].sample_step = step;
    }
    /* the sampler takes no position */
    if (batch_block(bt, BLOCK_SAMPLER, -1, NULL, obs, err)) return -1;
    for (int s = 0; s < bt->batch; s++) tokens[s] = bt->seq[s].sampled_token;
    return 0;
}

int decode_batch_set_active(struct decode_batch *bt, int batch, struct fr_err *err) {
    if (batch < 1 || batch > bt->capacity)
        return fr_err_set(err, "batch %d outside the %d sequences set up", batch, bt->capacity);
    bt->batch = batch;
    return 0;
}

int decode_batch_set_weights(struct decode_batch *bt, const struct qwen3_weights *w,
                             enum matvec_backend backend, struct fr_err *err) {
    const struct qwen3_config *a = &bt->seq[0].cfg, *b = &w->cfg;
    if (a->hidden != b->hidden || a->intermediate != b->intermediate || a->n_layers != b->n_layers ||
        a->n_heads != b->n_heads || a->n_kv_heads != b->n_kv_heads || a->head_dim != b->head_dim ||
        a->vocab != b->vocab)
        return fr_err_set(err, "weights of '%s' do not have the batch's shape", b->name);
    char why[256];
    if (!decode_backend_runs(backend, w, bt->capacity, why, sizeof why))
        return fr_err_set(err, "matvec backend %s cannot run %s", matvec_backend_name(backend), why);
    for (int s = 0; s < bt->n_init; s++) bt->seq[s].w = w, bt->seq[s].backend = backend;
    return 0;
}
