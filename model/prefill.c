/* Prompt processing (model/prefill.h): the projections over all rows as one GEMM each, attention by tiles,
 * every other block row by row on decode_block_run's code. */
#include "model/prefill.h"

#include <string.h>

#include "kernels/attention_prefill.h"
#include "model/decode_batch.h"
#include "model/weights.h"

size_t prefill_bytes(const struct qwen3_config *c, int max_pos, int capacity, enum fr_dtype kvtype) {
    /* one sequence of the batch's size, plus the capacity's rows minus the one a batch of 1 has */
    size_t one = decode_batch_bytes(c, 1, max_pos, kvtype);
    size_t row = ((size_t)c->hidden * 3 + (size_t)(c->n_heads + 2 * c->n_kv_heads) * (size_t)c->head_dim +
                  (size_t)c->n_heads * (size_t)c->head_dim + 3 * (size_t)c->intermediate) *
                 sizeof(float);
    if (one == 0 || capacity < 1 || (size_t)capacity > (SIZE_MAX - one) / row) return 0;
    return one + (size_t)(capacity - 1) * row;
}

void prefill_free(struct prefill_state *p) {
    if (p->capacity > 0) decode_state_free(&p->st);
    decode_rows_free(&p->rows);
    memset(p, 0, sizeof *p);
}

int prefill_init(struct prefill_state *p, const struct qwen3_weights *w, int max_pos, int capacity,
                 enum fr_dtype kvtype, enum matvec_backend backend, int threads,
                 const struct gemm_blocking *blk, struct fr_err *err) {
    memset(p, 0, sizeof *p);
    const struct qwen3_config *c = &w->cfg;
    if (capacity < 1) return fr_err_set(err, "prompt of %d tokens: at least one", capacity);
    char why[256];
    if (!decode_backend_runs(backend, w, capacity, why, sizeof why))
        return fr_err_set(err, "prompt of %d tokens on %s: %s", capacity, matvec_backend_name(backend), why);
    char what[128];
    snprintf(what, sizeof what, "prefill of %d tokens of %s with a %d-position %s KV cache", capacity,
             c->name, max_pos, fr_dtype_name(kvtype));
    size_t need = prefill_bytes(c, max_pos, capacity, kvtype);
    if (need == 0) return fr_err_set(err, "%s: size overflows", what);
    if (qwen3_mem_check(need, what, err) != 0) return -1;
    if (decode_rows_alloc(&p->rows, c, capacity, 1) != 0)
        return fr_err_set(err, "%s: out of memory for the activation rows", what);
    if (decode_state_init_rows(&p->st, w, max_pos, kvtype, backend, threads, &p->rows, err) != 0) {
        decode_rows_free(&p->rows);
        return -1;
    }
    if (blk) p->st.blocking = *blk;
    p->capacity = capacity;
    return 0;
}

/* A copy of the state whose buffers are row i's (the logits stay the one row): decode_block_run then runs
 * a per-token block on that row exactly as a decode step runs it on its one. */
static void row_view(const struct prefill_state *p, int i, struct decode_state *v) {
    struct decode_rows r;
    decode_rows_at(&p->rows, &p->st.cfg, i, 0, &r);
    *v = p->st;
    v->x = r.x, v->xb = r.xb, v->qkv = r.qkv, v->att = r.att, v->proj = r.proj;
    v->gate_up = r.gate_up, v->hb = r.hb, v->logits = r.logits;
}

/* A per-token block on rows [0, n), at positions depth + i; the rows are independent, so they spread over
 * the threads (each kernel inside runs on its calling thread, as it does in a parallel region). */
static int rows_block(struct prefill_state *p, enum block_id b, int layer, const int *tokens, int n,
                      int depth) {
    int failed = 0;
    const int team = p->st.threads < n ? p->st.threads : n;
#pragma omp parallel for num_threads(team) schedule(static) reduction(| : failed) if (team > 1)
    for (int i = 0; i < n; i++) {
        struct decode_state v;
        row_view(p, i, &v);
        if (tokens) v.token = tokens[i];
        if (decode_block_run(&v, b, layer, depth + i) != 0) {
            failed = 1;
#pragma omp critical(prefill_err)
            p->st.err = v.err;
        }
    }
    return failed ? -1 : 0;
}

static int prefill_block(struct prefill_state *p, enum block_id b, int layer, const int *tokens, int n,
                         int depth) {
    struct decode_state *st = &p->st;
    const struct qwen3_config *c = &st->cfg;
    struct decode_state last;
    switch (b) {
    case BLOCK_QKV_PROJ:
    case BLOCK_O_PROJ:
    case BLOCK_GATE_UP_PROJ:
    case BLOCK_DOWN_PROJ:
        return decode_projection_run(st, b, layer, n);
    case BLOCK_ATTENTION:
        if (prefill_attention(st->att, (size_t)st->q_dim, st->qkv, (size_t)st->q_dim + 2 * (size_t)st->kv_dim,
                              kv_cache_k(&st->kv, layer, 0, 0), kv_cache_v(&st->kv, layer, 0, 0), st->kv.type,
                              depth, n, kv_cache_head_stride(&st->kv), c->n_heads, c->n_kv_heads, c->head_dim,
                              st->threads) != 0)
            return fr_err_set(&st->err, "attention: out of memory for the tiles' scratch");
        return 0;
    case BLOCK_FINAL_NORM:
    case BLOCK_LM_HEAD: /* the last position only */
        row_view(p, n - 1, &last);
        if (decode_block_run(&last, b, layer, depth + n - 1) != 0) {
            st->err = last.err;
            return -1;
        }
        return 0;
    default:
        return rows_block(p, b, layer, b == BLOCK_EMBED ? tokens : NULL, n, depth);
    }
}

static int observed(struct prefill_state *p, enum block_id b, int layer, const int *tokens, int n, int depth,
                    const struct decode_observer *obs, struct fr_err *err) {
    if (obs && obs->begin) obs->begin(obs->ctx, b, layer);
    int rc = prefill_block(p, b, layer, tokens, n, depth);
    if (obs && obs->end) obs->end(obs->ctx, b, layer);
    if (rc && err) *err = p->st.err;
    return rc;
}

int prefill_run(struct prefill_state *p, const int *tokens, int n, int depth,
                const struct decode_observer *obs, struct fr_err *err) {
    const struct decode_state *st = &p->st;
    if (n < 1 || n > p->capacity)
        return fr_err_set(err, "prompt of %d tokens: this prefill takes 1 to %d", n, p->capacity);
    if (depth < 0) return fr_err_set(err, "prompt depth %d: at least 0", depth);
    if (depth > st->max_pos - n)
        return fr_err_set(err,
                          "prompt of %d tokens after %d cached ones needs %d positions; the context holds %d",
                          n, depth, depth + n, st->max_pos);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= st->cfg.vocab)
            return fr_err_set(err, "prompt token %d (at %d) outside the vocabulary [0, %d)", tokens[i], i,
                              st->cfg.vocab);
    if (observed(p, BLOCK_EMBED, -1, tokens, n, depth, obs, err)) return -1;
    for (int l = 0; l < st->cfg.n_layers; l++)
        for (int b = BLOCK_ATTN_NORM; b <= BLOCK_DOWN_PROJ; b++)
            if (observed(p, (enum block_id)b, l, NULL, n, depth, obs, err)) return -1;
    if (observed(p, BLOCK_FINAL_NORM, -1, NULL, n, depth, obs, err)) return -1;
    return observed(p, BLOCK_LM_HEAD, -1, NULL, n, depth, obs, err);
}
