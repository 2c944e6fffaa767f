/* The Qwen3 decode step: each block of model/blocks.h is one call (or two) into kernels/kernels.h on the
 * state's buffers, and decode_step runs them in table order, layer by layer. Checked in tests/test_decode.c
 * against an independent double-precision forward pass (its own RMSNorm, RoPE, GQA attention, SwiGLU)
 * over several positions, with bf16 and f32 KV caches. */
#include "model/decode.h"

#include <stdlib.h>
#include <string.h>

#include "kernels/col_panels.h"
#include "kernels/matvec_kquant.h"
#include "kernels/quant_k.h"
#include "kernels/team.h"

/* Zeroed, 64-byte aligned so SIMD loads of activation rows never split a cache line. */
static void *buf_alloc(size_t n) {
    size_t rounded = (n + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, rounded ? rounded : 64);
    if (p) memset(p, 0, rounded ? rounded : 64);
    return p;
}

#ifdef FR_SLOW_BLOCK
/* The injected slowdown that scripts/validate-compare.sh measures the compare with, only in a build made with
 * -DFR_SLOW_BLOCK=<block> -DFR_SLOW_PCT=<N>: a projection block runs its matvec again over N % of the rows
 * of the layer half a step away, into a buffer of its own, on every call (N % more real weight reads and
 * FMAs, exact to a row); attention, whose work cannot be cut by rows, runs again on round(N % of the layers)
 * of its calls. Every thread of a team decides alike, and the step's results are unchanged. Never in a
 * normal build. */
#define FR_SLOW_STR_(x) #x
#define FR_SLOW_STR(x)  FR_SLOW_STR_(x)
static float *slow_out; /* [max(vocab, 2 x intermediate, q_dim)], shared by every decode state */

static int slow_supported(const char *name) {
    static const char *const ok[] = {"attention", "qkv_proj", "o_proj", "gate_up_proj", "down_proj"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(name, ok[i]) == 0) return 1;
    return 0;
}

static int slow_extra(struct decode_state *st, enum block_id b, int layer, int pos) {
    const struct qwen3_config *c = &st->cfg;
    if (layer < 0 || strcmp(block_name(b), FR_SLOW_STR(FR_SLOW_BLOCK)) != 0) return 0;
    const int n = c->n_layers, other = (layer + n / 2) % n;
    if (b == BLOCK_ATTENTION) {
        const int k = (n * (FR_SLOW_PCT) + 50) / 100;
        if ((layer + 1) * k / n == layer * k / n) return 0; /* k of the n layers, spread evenly */
        attention(slow_out, st->qkv, kv_cache_k(&st->kv, other, 0, 0), kv_cache_v(&st->kv, other, 0, 0),
                  st->kv.type, pos + 1, kv_cache_head_stride(&st->kv), c->n_heads, c->n_kv_heads, c->head_dim,
                  st->att_scratch, st->threads);
        return 0;
    }
    struct decode_projection p;
    const char *why = NULL;
    if (decode_projection_of(st, b, other, &p) != 0) return 0;
    /* the first rows of each column panel, addressed as a matrix of `rows` rows: inside w, rows x cols */
    const struct qwen3_run *run = &p.runs[0];
    const int rows = (int)(((long long)run->rows * (FR_SLOW_PCT) + 50) / 100);
    if (rows < 1) return 0;
    if (gemm(slow_out, rows, run->w, run->type, p.in, p.cols, 1, rows, p.cols, run->pw, &st->blocking,
             st->backend, st->threads, &why) != 0)
        return fr_err_set(&st->err, "%s: the injected slowdown's matvec failed: %s", block_name(b),
                          why ? why : "?");
    return 0;
}
#endif

void decode_state_free(struct decode_state *st) {
    void *bufs[] = {st->rope_cos, st->rope_sin, st->att_scratch, st->sampler_scratch, st->x,  st->xb,
                    st->qkv,      st->att,      st->proj,        st->gate_up,         st->hb, st->logits};
    size_t n_own = st->rows_borrowed ? 4 : sizeof bufs / sizeof bufs[0]; /* borrowed rows are not ours */
    for (size_t i = 0; i < n_own; i++) free(bufs[i]);
    kv_cache_free(&st->kv);
    memset(st, 0, sizeof *st);
}

int decode_state_init(struct decode_state *st, const struct qwen3_weights *w, int max_pos,
                      enum fr_dtype kvtype, enum matvec_backend backend, int threads, struct fr_err *err) {
    return decode_state_init_rows(st, w, max_pos, kvtype, backend, threads, NULL, err);
}

int decode_state_init_rows(struct decode_state *st, const struct qwen3_weights *w, int max_pos,
                           enum fr_dtype kvtype, enum matvec_backend backend, int threads,
                           const struct decode_rows *rows, struct fr_err *err) {
    memset(st, 0, sizeof *st);
    const struct qwen3_config *c = &w->cfg;
    if (threads < 1) return fr_err_set(err, "%d threads: at least one", threads);
    if (c->n_kv_heads <= 0 || c->n_heads % c->n_kv_heads != 0)
        return fr_err_set(err, "model '%s': %d query heads are not a multiple of %d KV heads", c->name,
                          c->n_heads, c->n_kv_heads);
    if (c->head_dim <= 0 || c->head_dim % 2 != 0)
        return fr_err_set(err, "model '%s': head_dim %d must be positive and even for RoPE", c->name,
                          c->head_dim);
    if (max_pos < 1 || (c->max_context > 0 && max_pos > c->max_context))
        return fr_err_set(err, "model '%s': %d positions requested, the model allows 1 to %d", c->name,
                          max_pos, c->max_context);
    char why[256];
    if (!decode_backend_runs(backend, w, 1, why, sizeof why))
        return fr_err_set(err, "matvec backend %s cannot run %s", matvec_backend_name(backend), why);
    if (kv_cache_alloc(&st->kv, c, max_pos, kvtype, err)) return -1;

    st->cfg = *c;
    st->w = w;
    st->backend = backend;
    st->threads = threads;
    st->max_pos = max_pos;
    st->q_dim = c->n_heads * c->head_dim;
    st->kv_dim = c->n_kv_heads * c->head_dim;
    st->eps = (float)c->rms_eps;
    st->sampler_params = (struct sampler_params){.temperature = 0.0f, .top_p = 1.0f, .seed = 0};
    st->sampled_token = -1;

    size_t f = sizeof(float), half = (size_t)c->head_dim / 2;
    if (rows) {
        st->rows_borrowed = 1;
        st->x = rows->x, st->xb = rows->xb, st->qkv = rows->qkv, st->att = rows->att, st->proj = rows->proj;
        st->gate_up = rows->gate_up, st->hb = rows->hb, st->logits = rows->logits;
    } else {
        st->x = buf_alloc((size_t)c->hidden * f);
        st->xb = buf_alloc((size_t)c->hidden * f);
        st->qkv = buf_alloc((size_t)(st->q_dim + 2 * st->kv_dim) * f);
        st->att = buf_alloc((size_t)st->q_dim * f);
        st->proj = buf_alloc((size_t)c->hidden * f);
        st->gate_up = buf_alloc(2 * (size_t)c->intermediate * f);
        st->hb = buf_alloc((size_t)c->intermediate * f);
        st->logits = buf_alloc((size_t)c->vocab * f);
    }
    st->rope_cos = buf_alloc((size_t)max_pos * half * f);
    st->rope_sin = buf_alloc((size_t)max_pos * half * f);
    st->att_scratch = buf_alloc((size_t)c->n_heads * (size_t)max_pos * f);
    st->sampler_scratch = buf_alloc(sampler_scratch_bytes(c->vocab));
    if (!st->x || !st->xb || !st->qkv || !st->att || !st->proj || !st->gate_up || !st->hb || !st->logits ||
        !st->rope_cos || !st->rope_sin || !st->att_scratch || !st->sampler_scratch) {
        decode_state_free(st);
        return fr_err_set(err, "model '%s': out of memory for the decode buffers", c->name);
    }
#ifdef FR_SLOW_BLOCK
    size_t slow_n =
        (size_t)c->vocab > 2 * (size_t)c->intermediate ? (size_t)c->vocab : 2 * (size_t)c->intermediate;
    if (!slow_supported(FR_SLOW_STR(FR_SLOW_BLOCK)) || (FR_SLOW_PCT) < 0 || (FR_SLOW_PCT) > 100) {
        decode_state_free(st);
        return fr_err_set(err,
                          "FR_SLOW_BLOCK=%s FR_SLOW_PCT=%d: not a block and share this build option takes",
                          FR_SLOW_STR(FR_SLOW_BLOCK), FR_SLOW_PCT);
    }
    if (!slow_out && !(slow_out = buf_alloc((slow_n > (size_t)st->q_dim ? slow_n : (size_t)st->q_dim) * f))) {
        decode_state_free(st);
        return fr_err_set(err, "out of memory for the injected slowdown's buffer");
    }
#endif
    /* Tables for every position up front: the rope block then costs what it costs in an engine that keeps
     * them, a row read, not max_pos trigonometric calls. */
    for (int p = 0; p < max_pos; p++)
        rope_tables(st->rope_cos + (size_t)p * half, st->rope_sin + (size_t)p * half, c->head_dim, p,
                    c->rope_theta);
    return 0;
}

int decode_projection_of(const struct decode_state *st, enum block_id b, int layer,
                         struct decode_projection *p) {
    const struct qwen3_weights *w = st->w;
    int hidden = st->cfg.hidden, inter = st->cfg.intermediate;
    const int l = layer >= 0 && layer < st->cfg.n_layers ? layer : 0;
    enum qwen3_matrix m;
    switch (b) {
    case BLOCK_QKV_PROJ:
        *p = (struct decode_projection){st->xb, st->qkv, st->q_dim + 2 * st->kv_dim, hidden, 0, 0, {{0}}};
        m = QWEN3_MAT_QKV;
        break;
    case BLOCK_O_PROJ: /* back into the residual stream */
        *p = (struct decode_projection){st->att, st->proj, hidden, st->q_dim, 1, 0, {{0}}};
        m = QWEN3_MAT_O;
        break;
    case BLOCK_GATE_UP_PROJ:
        *p = (struct decode_projection){st->xb, st->gate_up, 2 * inter, hidden, 0, 0, {{0}}};
        m = QWEN3_MAT_GATE_UP;
        break;
    case BLOCK_DOWN_PROJ: /* back into the residual stream */
        *p = (struct decode_projection){st->hb, st->proj, hidden, inter, 1, 0, {{0}}};
        m = QWEN3_MAT_DOWN;
        break;
    case BLOCK_LM_HEAD: /* row-major in every type */
        *p = (struct decode_projection){st->xb, st->logits, st->cfg.vocab, hidden, 0, 1, {{0}}};
        p->runs[0] =
            (struct qwen3_run){(void *)w->lm_head, w->formats.lm_head, 0, st->cfg.vocab, hidden, hidden};
        return 0;
    default:
        return -1;
    }
    p->n_runs = qwen3_matrix_runs(w, l, m, p->runs);
    return 0;
}

bool decode_backend_runs(enum matvec_backend backend, const struct qwen3_weights *w, int batch, char *why,
                         size_t len) {
    for (int t = 0; t < FR_DTYPE_COUNT; t++) {
        const char *no = NULL;
        if (weight_formats_count(&w->formats, (enum fr_dtype)t) == 0 ||
            gemm_backend_available(backend, (enum fr_dtype)t, batch, &no))
            continue;
        snprintf(why, len, "%s weights: %s", fr_dtype_name((enum fr_dtype)t), no ? no : "unavailable");
        return false;
    }
    return true;
}

/* Batch rows are consecutive: the input rows are `cols` apart, the output rows `rows` apart (the buffers'
 * sizes), the residual rows `hidden` apart. */
int decode_projection_run(struct decode_state *st, enum block_id b, int layer, int batch) {
    struct decode_projection p;
    const char *why = NULL;
    if (decode_projection_of(st, b, layer, &p) != 0)
        return fr_err_set(&st->err, "%s is not a projection block", block_name(b));
    for (int i = 0; i < p.n_runs; i++) {
        const struct qwen3_run *run = &p.runs[i];
        if (gemm(p.out + run->row0, p.rows, run->w, run->type, p.in, p.cols, batch, run->rows, p.cols,
                 run->pw, &st->blocking, st->backend, st->threads, &why) != 0)
            return fr_err_set(&st->err, "%s: the matvec backend failed on its %s rows: %s", block_name(b),
                              fr_dtype_name(run->type), why ? why : "?");
    }
    /* the residual add is the caller's thread's alone (thread 0 of a kernel team, see decode_step) */
    if (p.residual && (!kernel_team_active() || kernel_team_thread() == 0))
        for (int s = 0; s < batch; s++)
            vec_add(st->x + (size_t)s * (size_t)st->cfg.hidden, p.out + (size_t)s * (size_t)p.rows,
                    st->cfg.hidden);
    return 0;
}

static int is_layer_block(enum block_id b) {
    return block_table()[b].scope == BLOCK_SCOPE_LAYER;
}

static int block_run_once(struct decode_state *st, enum block_id b, int layer, int pos);

int decode_block_run(struct decode_state *st, enum block_id b, int layer, int pos) {
    int rc = block_run_once(st, b, layer, pos);
#ifdef FR_SLOW_BLOCK
    if (rc == 0) rc = slow_extra(st, b, layer, pos);
#endif
    return rc;
}

static int block_run_once(struct decode_state *st, enum block_id b, int layer, int pos) {
    const struct qwen3_config *c = &st->cfg;
    const struct qwen3_weights *w = st->w;
    if ((unsigned)b >= BLOCK_COUNT) return fr_err_set(&st->err, "unknown block %d", (int)b);
    if (is_layer_block(b) && (layer < 0 || layer >= c->n_layers))
        return fr_err_set(&st->err, "%s: layer %d outside [0, %d)", block_name(b), layer, c->n_layers);
    if (pos < 0 || pos >= st->max_pos)
        return fr_err_set(&st->err, "%s: position %d outside [0, %d)", block_name(b), pos, st->max_pos);
    /* layer was checked for per-layer blocks; the others never read L */
    const struct qwen3_layer_weights *L = &w->layers[is_layer_block(b) ? layer : 0];
    float *q = st->qkv, *k = st->qkv + st->q_dim, *v = st->qkv + st->q_dim + st->kv_dim;
    size_t half = (size_t)c->head_dim / 2;
    int hidden = c->hidden, inter = c->intermediate;

    switch (b) {
    case BLOCK_EMBED:
        if (st->token < 0 || st->token >= c->vocab)
            return fr_err_set(&st->err, "token %d outside the vocabulary [0, %d)", st->token, c->vocab);
        if (fr_dtype_is_kquant(w->formats.embed)) /* rows in groups of 8 (kernels/quant_k.h) */
            quant_k_matrix_dequantize_row(st->x, matvec_kquant_type(w->formats.embed), w->embed, c->vocab,
                                          hidden, st->token);
        else
            embed_gather(st->x, w->embed, w->formats.embed, st->cfg.vocab, st->token, hidden);
        return 0;
    case BLOCK_ATTN_NORM:
        rmsnorm(st->xb, st->x, L->attn_norm, hidden, st->eps);
        return 0;
    case BLOCK_QKV_PROJ:
    case BLOCK_O_PROJ:
    case BLOCK_GATE_UP_PROJ:
    case BLOCK_DOWN_PROJ:
    case BLOCK_LM_HEAD:
        return decode_projection_run(st, b, layer, 1);
    case BLOCK_QK_NORM:
        rmsnorm_heads(q, L->q_norm, c->n_heads, c->head_dim, st->eps);
        rmsnorm_heads(k, L->k_norm, c->n_kv_heads, c->head_dim, st->eps);
        return 0;
    case BLOCK_ROPE: {
        const float *cs = st->rope_cos + (size_t)pos * half, *sn = st->rope_sin + (size_t)pos * half;
        rope_apply(q, cs, sn, c->n_heads, c->head_dim);
        rope_apply(k, cs, sn, c->n_kv_heads, c->head_dim);
        return 0;
    }
    case BLOCK_KV_APPEND:
        kv_cache_store(&st->kv, layer, pos, k, v);
        return 0;
    case BLOCK_ATTENTION:
        attention(st->att, q, kv_cache_k(&st->kv, layer, 0, 0), kv_cache_v(&st->kv, layer, 0, 0), st->kv.type,
                  pos + 1, kv_cache_head_stride(&st->kv), c->n_heads, c->n_kv_heads, c->head_dim,
                  st->att_scratch, st->threads);
        return 0;
    case BLOCK_MLP_NORM:
        rmsnorm(st->xb, st->x, L->mlp_norm, hidden, st->eps);
        return 0;
    case BLOCK_SWIGLU:
        swiglu(st->hb, st->gate_up, st->gate_up + inter, inter);
        return 0;
    case BLOCK_FINAL_NORM:
        rmsnorm(st->xb, st->x, w->final_norm, hidden, st->eps);
        return 0;
    case BLOCK_SAMPLER:
        return sampler_pick(st->sample_logits ? st->sample_logits : st->logits, c->vocab, &st->sampler_params,
                            st->sample_step, st->sampler_scratch, st->threads, &st->sampled_token, &st->err);
    case BLOCK_COUNT:
        break;
    }
    return fr_err_set(&st->err, "unknown block %d", (int)b);
}

static int run_observed(struct decode_state *st, enum block_id b, int layer, int pos,
                        const struct decode_observer *obs, struct fr_err *err) {
    if (obs && obs->begin) obs->begin(obs->ctx, b, layer);
    int rc = decode_block_run(st, b, layer, pos);
    if (obs && obs->end) obs->end(obs->ctx, b, layer);
    if (rc && err) *err = st->err;
    return rc;
}

bool decode_runs_team(enum matvec_backend backend, int threads) {
    /* more threads than processors: a spin barrier would spin while the thread it waits for has no CPU */
    return backend == MATVEC_BACKEND_FORGE && threads > 1 && threads <= kernel_team_procs();
}

/* Appends a span to out[*n] when it fits within max; counts it always. */
static void span_add(struct mem_span *out, int max, int *n, const void *p, size_t bytes) {
    if (*n < max) out[*n] = (struct mem_span){p, bytes};
    ++*n;
}

int decode_block_spans(const struct decode_state *st, enum block_id b, int pos, struct mem_span *out,
                       int max) {
    const struct qwen3_weights *w = st->w;
    const enum qwen3_matrix m = b == BLOCK_QKV_PROJ       ? QWEN3_MAT_QKV
                                : b == BLOCK_O_PROJ       ? QWEN3_MAT_O
                                : b == BLOCK_GATE_UP_PROJ ? QWEN3_MAT_GATE_UP
                                : b == BLOCK_DOWN_PROJ    ? QWEN3_MAT_DOWN
                                                          : QWEN3_MAT_COUNT;
    int n = 0;
    for (int l = 0; l < st->cfg.n_layers; l++) {
        struct qwen3_run runs[QWEN3_MAX_RUNS];
        const int nr = m < QWEN3_MAT_COUNT ? qwen3_matrix_runs(w, l, m, runs) : 0;
        for (int i = 0; i < nr; i++)
            span_add(out, max, &n, runs[i].w,
                     fr_dtype_bytes(runs[i].type, (size_t)runs[i].rows * (size_t)runs[i].cols));
        for (int h = 0; b == BLOCK_ATTENTION && h < st->kv.n_kv_heads; h++) {
            size_t rows = (size_t)(pos + 1) * st->kv.row_bytes;
            span_add(out, max, &n, kv_cache_k(&st->kv, l, h, 0), rows);
            span_add(out, max, &n, kv_cache_v(&st->kv, l, h, 0), rows);
        }
    }
    if (b == BLOCK_LM_HEAD)
        span_add(out, max, &n, w->lm_head,
                 fr_dtype_bytes(w->formats.lm_head, (size_t)st->cfg.vocab * (size_t)st->cfg.hidden));
    return n;
}

/* The blocks whose kernels split their work over the team: the projections and attention. */
static bool block_on_team(enum block_id b) {
    return block_table()[b].reads_weights || b == BLOCK_ATTENTION;
}

/* How a sequence of blocks runs: from the calling thread (team NULL), or by every thread of a kernel team
 * (kernels/team.h), where thread 0 runs the other blocks alone and `failed` (shared) stops the rest. */
struct block_runner {
    struct decode_state *st;
    const struct decode_observer *obs;
    struct fr_err *err;
    bool team;
    int *failed;
};

/* In a team: a block on the team waits at the team's barrier for thread 0's blocks before it, then every
 * thread runs it (its kernels end at the team's barrier); any other block runs on thread 0. The observer
 * runs on thread 0 around its part. A failure is seen by every thread at the next barrier, so all stop at
 * the same block; the function then returns 0 and the caller reads `failed`. */
static int run_block(const struct block_runner *r, enum block_id b, int layer, int pos) {
    if (!r->team) return run_observed(r->st, b, layer, pos, r->obs, r->err);
    const bool lead = kernel_team_thread() == 0;
    if (block_on_team(b)) {
        kernel_team_barrier();
        if (__atomic_load_n(r->failed, __ATOMIC_RELAXED)) return 0;
        if (!lead) {
            decode_block_run(r->st, b, layer, pos); /* only thread 0's outcome is kept */
            return 0;
        }
    } else if (!lead || __atomic_load_n(r->failed, __ATOMIC_RELAXED)) {
        return 0;
    }
    if (run_observed(r->st, b, layer, pos, r->obs, r->err)) __atomic_store_n(r->failed, 1, __ATOMIC_RELAXED);
    return 0;
}

static int step_blocks(const struct block_runner *r, int pos) {
    if (run_block(r, BLOCK_EMBED, -1, pos)) return -1;
    for (int l = 0; l < r->st->cfg.n_layers; l++)
        for (int b = BLOCK_ATTN_NORM; b <= BLOCK_DOWN_PROJ; b++)
            if (run_block(r, (enum block_id)b, l, pos)) return -1;
    if (run_block(r, BLOCK_FINAL_NORM, -1, pos)) return -1;
    return run_block(r, BLOCK_LM_HEAD, -1, pos);
}

static int layers_of_block(const struct block_runner *r, enum block_id b, int pos) {
    int layers = block_table()[b].scope == BLOCK_SCOPE_LAYER ? r->st->cfg.n_layers : 1;
    for (int l = 0; l < layers; l++)
        if (run_block(r, b, block_table()[b].scope == BLOCK_SCOPE_LAYER ? l : -1, pos)) return -1;
    return 0;
}

/* Runs f over the blocks from the calling thread, or in one kernel team for the whole sequence when
 * decode_runs_team says so: one fork and join for the sequence instead of one for each matvec and
 * attention call, and a spin barrier between blocks instead of libgomp's. */
static int run_blocks(struct decode_state *st, const struct decode_observer *obs, struct fr_err *err,
                      int (*f)(const struct block_runner *, int, int), int arg, int pos) {
    if (!decode_runs_team(st->backend, st->threads) || kernel_team_shares()) {
        const struct block_runner r = {st, obs, err, false, NULL};
        return f(&r, arg, pos);
    }
    struct kernel_team team;
    kernel_team_init(&team);
    int failed = 0;
#pragma omp parallel num_threads(st->threads)
    {
        const struct block_runner r = {st, obs, err, true, &failed};
        kernel_team_join(&team);
        f(&r, arg, pos);
        kernel_team_leave();
    }
    return failed ? -1 : 0;
}

static int step_blocks_f(const struct block_runner *r, int unused, int pos) {
    (void)unused;
    return step_blocks(r, pos);
}

static int layers_of_block_f(const struct block_runner *r, int b, int pos) {
    return layers_of_block(r, (enum block_id)b, pos);
}

int decode_block_layers(struct decode_state *st, enum block_id b, int pos) {
    if ((unsigned)b >= BLOCK_COUNT) return fr_err_set(&st->err, "unknown block %d", (int)b);
    if (pos < 0 || pos >= st->max_pos)
        return fr_err_set(&st->err, "%s: position %d outside [0, %d)", block_name(b), pos, st->max_pos);
    if (b == BLOCK_SAMPLER || b == BLOCK_EMBED) /* no kernel team: one thread's work */
        return decode_block_run(st, b, -1, pos);
    return run_blocks(st, NULL, &st->err, layers_of_block_f, (int)b, pos);
}

/* The rows of decode_activations, with their lengths, in one place for save and restore. */
static int activation_rows(const struct decode_state *st, float *rows[7], size_t len[7]) {
    const size_t hidden = (size_t)st->cfg.hidden, inter = (size_t)st->cfg.intermediate;
    float *r[7] = {st->x, st->xb, st->qkv, st->att, st->proj, st->gate_up, st->hb};
    const size_t l[7] = {hidden,    hidden, (size_t)(st->q_dim + 2 * st->kv_dim), (size_t)st->q_dim, hidden,
                         2 * inter, inter};
    for (int i = 0; i < 7; i++) rows[i] = r[i], len[i] = l[i];
    return 7;
}

int decode_activations_save(struct decode_state *st, struct decode_activations *a) {
    float *rows[7];
    size_t len[7], n = 0;
    int k = activation_rows(st, rows, len);
    for (int i = 0; i < k; i++) n += len[i];
    if (!(a->buf = malloc((n ? n : 1) * sizeof *a->buf))) {
        a->n = 0;
        return fr_err_set(&st->err, "out of memory for a copy of the %zu activations", n);
    }
    a->n = n;
    for (size_t i = 0, at = 0; i < (size_t)k; at += len[i], i++)
        memcpy(a->buf + at, rows[i], len[i] * sizeof(float));
    return 0;
}

void decode_activations_restore(struct decode_state *st, const struct decode_activations *a) {
    float *rows[7];
    size_t len[7];
    int k = activation_rows(st, rows, len);
    for (size_t i = 0, at = 0; i < (size_t)k && a->buf; at += len[i], i++)
        memcpy(rows[i], a->buf + at, len[i] * sizeof(float));
}

void decode_activations_free(struct decode_activations *a) {
    free(a->buf);
    *a = (struct decode_activations){0};
}

int decode_step(struct decode_state *st, int token, int pos, const struct decode_observer *obs,
                struct fr_err *err) {
    if (token < 0 || token >= st->cfg.vocab)
        return fr_err_set(err, "token %d outside the vocabulary [0, %d)", token, st->cfg.vocab);
    if (pos < 0 || pos >= st->max_pos)
        return fr_err_set(err, "position %d outside the cache's [0, %d)", pos, st->max_pos);
    st->token = token;
    return run_blocks(st, obs, err, step_blocks_f, 0, pos);
}

int decode_sample(struct decode_state *st, const struct sampler_params *params, uint64_t step,
                  const struct decode_observer *obs, int *token, struct fr_err *err) {
    if (sampler_check_params(params, err)) return -1;
    st->sampler_params = *params;
    st->sample_step = step;
    /* the sampler takes no position; 0 is always inside the cache */
    if (run_observed(st, BLOCK_SAMPLER, -1, 0, obs, err)) return -1;
    *token = st->sampled_token;
    return 0;
}
