/* The decode step of a tiny Qwen3-shaped model against an independent forward pass written here in double
 * precision (its own RMSNorm, RoPE, GQA attention and SwiGLU; only the weight values are shared), over
 * several positions so the KV cache is read back, for bf16 and f32 weights and KV caches; plus the
 * observer's view of the block order and the errors of the step's API. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/decode_bench.h"
#include "kernels/col_panels.h"
#include "kernels/team.h"
#include "model/cost.h"
#include "model/decode.h"
#include "tests/model_fixtures.h"

#define REF_MAX_POS 8
/* The widest intermediate the reference takes: room for a down_proj stored as two column panels */
#define REF_MAX_I 2304

/* How far the engine's f32 K and V may lie from the reference's double ones before they are stored, as a
 * fraction of the largest element of the vector (one layer, one position, all KV heads). Estimate: each
 * element is a dot product of hidden = 64 terms accumulated in f32 (error up to 64 u times the sum of
 * |terms|, u = 2^-24; with random weights that sum is about sqrt(64) = 8 times the largest element), then a
 * per-head RMSNorm and a rotation (a few u), on inputs that carry the earlier layers' f32 error (of the
 * same order): 64 * 8 * u = 2^-15 for the dot product, so 2^-14 covers the rest twice over. Measured with
 * an f32 cache: 2.5e-7 of the largest element (about 2^-22; logged), 240 times inside. The stored value
 * must then be what the cache's dtype makes of some value within that distance of the reference's: exactly
 * the reference's rounding, or, for bf16, the neighbouring bf16 value when the reference lies within 2^-14
 * (of the vector's largest element) of a rounding midpoint. A bf16 step is 2^-8 to 2^-7 of an element's
 * magnitude, so a store that rounds another way (truncation, say) is caught wherever the reference does
 * not lie within the window of a midpoint. */
#define REF_KV_TOL 0x1.0p-14

/* The reference's own state: residual stream and a double KV cache. At each step the reference checks what
 * the engine stored for K and V (above) and then reads the engine's stored values, so the two attentions
 * read the same cache, and the logits compare at f32 arithmetic's tolerance whatever the cache's dtype. */
struct ref_model {
    const struct qwen3_config *c;
    const struct qwen3_weights *w;
    enum fr_dtype kvtype;
    const struct kv_cache *kv; /* the engine's cache */
    double *k, *v;             /* [n_layers][REF_MAX_POS][kv_dim] */
    int kv_bad, kv_flips;      /* stored values outside the window; values that are not the reference's
                                  rounding (within the window: a bf16 midpoint flip, or f32's own error) */
    double kv_max_err;         /* max |stored - reference| / largest element, before rounding */
};

static double wval(const void *m, enum fr_dtype t, size_t i) {
    return t == FR_DTYPE_BF16 ? (double)bf16_to_f32(((const uint16_t *)m)[i]) : (double)((const float *)m)[i];
}

/* y[r] = sum_c M[row0 + r][c] x[c] for M [m_rows][cols] stored as column panels of pw columns (as
 * model/weights.h says: col_panel_width(t, cols) for the layers' matrices, row-major for the LM head) */
static void ref_matvec(double *y, const void *m, enum fr_dtype t, int m_rows, int pw, int row0, int rows,
                       int cols, const double *x) {
    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int j = 0; j < cols; j++) s += wval(m, t, col_panel_index(m_rows, cols, pw, row0 + r, j)) * x[j];
        y[r] = s;
    }
}

/* ref_matvec of a layer's matrix */
static void ref_layer_matvec(double *y, const void *m, enum fr_dtype t, int m_rows, int row0, int rows,
                             int cols, const double *x) {
    ref_matvec(y, m, t, m_rows, col_panel_width(t, cols), row0, rows, cols, x);
}

static void ref_rmsnorm(double *out, const double *x, const float *g, int n, double eps) {
    double ss = 0;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    double inv = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++) out[i] = x[i] * inv * g[i];
}

/* NeoX-style rotation: element i pairs with i + d/2, angle pos * theta^(-2i/d). */
static void ref_rope(double *h, int d, int pos, double theta) {
    for (int i = 0; i < d / 2; i++) {
        double a = pos * pow(theta, -2.0 * i / d), x0 = h[i], x1 = h[i + d / 2];
        h[i] = x0 * cos(a) - x1 * sin(a);
        h[i + d / 2] = x0 * sin(a) + x1 * cos(a);
    }
}

static double ref_store(double x, enum fr_dtype t) {
    return t == FR_DTYPE_BF16 ? (double)bf16_to_f32(bf16_from_f32((float)x)) : (double)(float)x;
}

/* Checks the engine's stored cache vector (n values, the reference's x before rounding) and copies what
 * the engine stored into out. Rounding is monotone, so "the dtype's rounding of some value within tol of
 * x" is exactly the interval [round(x - tol), round(x + tol)]. */
static void ref_take_stored(struct ref_model *m, const char *what, int layer, int pos, const void *stored,
                            const double *x, int n, double *out) {
    double scale = 0;
    for (int i = 0; i < n; i++) scale = fmax(scale, fabs(x[i]));
    double tol = REF_KV_TOL * scale;
    for (int i = 0; i < n; i++) {
        double got = m->kvtype == FR_DTYPE_BF16 ? (double)bf16_to_f32(((const uint16_t *)stored)[i])
                                                : (double)((const float *)stored)[i];
        double lo = ref_store(x[i] - tol, m->kvtype), hi = ref_store(x[i] + tol, m->kvtype);
        if (!(got >= lo && got <= hi) && m->kv_bad++ < 5)
            cr_log_error(
                "%s layer %d pos %d [%d]: stored %.9g, reference %.9g rounds to %.9g (allowed %.9g .. "
                "%.9g)",
                what, layer, pos, i, got, x[i], ref_store(x[i], m->kvtype), lo, hi);
        if (got != ref_store(x[i], m->kvtype)) m->kv_flips++;
        if (scale > 0) m->kv_max_err = fmax(m->kv_max_err, fabs(got - x[i]) / scale);
        out[i] = got;
    }
}

static void ref_step(struct ref_model *m, int token, int pos, double *logits) {
    const struct qwen3_config *c = m->c;
    const struct qwen3_weights *w = m->w;
    int H = c->hidden, I = c->intermediate, hd = c->head_dim, nh = c->n_heads, nkv = c->n_kv_heads;
    int qd = nh * hd, kvd = nkv * hd;
    double x[64], xb[64], q[128], k[64], v[64], att[128], o[64], g[REF_MAX_I], u[REF_MAX_I], hmid[REF_MAX_I],
        sc[REF_MAX_POS];
    cr_assert(H <= 64 && I <= REF_MAX_I && qd <= 128 && kvd <= 64 && pos < REF_MAX_POS);
    for (int i = 0; i < H; i++) x[i] = wval(w->embed, w->wtype, (size_t)token * (size_t)H + (size_t)i);
    for (int l = 0; l < c->n_layers; l++) {
        const struct qwen3_layer_weights *L = &w->layers[l];
        ref_rmsnorm(xb, x, L->attn_norm, H, c->rms_eps);
        ref_layer_matvec(q, L->qkv, w->wtype, qd + 2 * kvd, 0, qd, H, xb);
        ref_layer_matvec(k, L->qkv, w->wtype, qd + 2 * kvd, qd, kvd, H, xb);
        ref_layer_matvec(v, L->qkv, w->wtype, qd + 2 * kvd, qd + kvd, kvd, H, xb);
        for (int h = 0; h < nh; h++) {
            ref_rmsnorm(q + h * hd, q + h * hd, L->q_norm, hd, c->rms_eps);
            ref_rope(q + h * hd, hd, pos, c->rope_theta);
        }
        for (int h = 0; h < nkv; h++) {
            ref_rmsnorm(k + h * hd, k + h * hd, L->k_norm, hd, c->rms_eps);
            ref_rope(k + h * hd, hd, pos, c->rope_theta);
        }
        double *kc = m->k + (size_t)l * REF_MAX_POS * kvd, *vc = m->v + (size_t)l * REF_MAX_POS * kvd;
        for (int h = 0; h < nkv; h++) { /* the cache is head-major: each KV head's row on its own */
            ref_take_stored(m, "K", l, pos, kv_cache_k(m->kv, l, h, pos), k + h * hd, hd,
                            kc + pos * kvd + h * hd);
            ref_take_stored(m, "V", l, pos, kv_cache_v(m->kv, l, h, pos), v + h * hd, hd,
                            vc + pos * kvd + h * hd);
        }
        for (int h = 0; h < nh; h++) {
            int kh = h / (nh / nkv);
            double mx = -INFINITY, sum = 0;
            for (int t = 0; t <= pos; t++) {
                double s = 0;
                for (int i = 0; i < hd; i++) s += q[h * hd + i] * kc[t * kvd + kh * hd + i];
                sc[t] = s / sqrt((double)hd);
                mx = fmax(mx, sc[t]);
            }
            for (int t = 0; t <= pos; t++) sum += sc[t] = exp(sc[t] - mx);
            for (int i = 0; i < hd; i++) {
                double a = 0;
                for (int t = 0; t <= pos; t++) a += sc[t] / sum * vc[t * kvd + kh * hd + i];
                att[h * hd + i] = a;
            }
        }
        ref_layer_matvec(o, L->o, w->wtype, H, 0, H, qd, att);
        for (int i = 0; i < H; i++) x[i] += o[i];
        ref_rmsnorm(xb, x, L->mlp_norm, H, c->rms_eps);
        ref_layer_matvec(g, L->gate_up, w->wtype, 2 * I, 0, I, H, xb);
        ref_layer_matvec(u, L->gate_up, w->wtype, 2 * I, I, I, H, xb);
        for (int i = 0; i < I; i++) hmid[i] = g[i] / (1.0 + exp(-g[i])) * u[i];
        ref_layer_matvec(o, L->down, w->wtype, H, 0, H, I, hmid);
        for (int i = 0; i < H; i++) x[i] += o[i];
    }
    ref_rmsnorm(xb, x, w->final_norm, H, c->rms_eps);
    ref_matvec(logits, w->lm_head, w->wtype, c->vocab, H, 0, c->vocab, H, xb);
}

static void setup(struct qwen3_weights *w, struct decode_state *st, const struct qwen3_config *c,
                  enum fr_dtype wt, enum fr_dtype kvt, enum matvec_backend backend) {
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_weights_alloc(w, c, wt, &err), 0, "%s", err.msg);
    qwen3_weights_init_synthetic(w, 1234);
    cr_assert_eq(decode_state_init(st, w, REF_MAX_POS, kvt, backend, kernel_team_procs(), &err), 0, "%s",
                 err.msg);
}

/* Decodes a fixed token sequence; at every step checks the K and V the engine stored (ref_take_stored) and
 * compares the logits with the reference's. Both read the same cache, so the logits' tolerance is f32
 * arithmetic's against double for any cache dtype: 1e-5 absolute + 1e-5 relative on logits of order 1
 * (measured: ~5e-7). */
static void check_against_reference(const struct qwen3_config *c, enum fr_dtype wt, enum fr_dtype kvt,
                                    enum matvec_backend backend) {
    struct qwen3_weights w;
    struct decode_state st;
    setup(&w, &st, c, wt, kvt, backend);
    int kvd = c->n_kv_heads * c->head_dim;
    struct ref_model m = {c,
                          &w,
                          kvt,
                          &st.kv,
                          calloc((size_t)c->n_layers * REF_MAX_POS * kvd, sizeof(double)),
                          calloc((size_t)c->n_layers * REF_MAX_POS * kvd, sizeof(double)),
                          0,
                          0,
                          0.0};
    double *ref = calloc((size_t)c->vocab, sizeof *ref);
    cr_assert(m.k && m.v && ref);
    const int tokens[] = {3, 200, 17, 256, 0, 3};
    const double atol = 1e-5, rtol = 1e-5;
    for (int pos = 0; pos < 6; pos++) {
        struct fr_err err = {{0}};
        cr_assert_eq(decode_step(&st, tokens[pos], pos, NULL, &err), 0, "%s", err.msg);
        ref_step(&m, tokens[pos], pos, ref);
        double max_err = 0, max_ref = 0;
        int bad = 0;
        for (int i = 0; i < c->vocab; i++) {
            double d = fabs(st.logits[i] - ref[i]);
            max_err = fmax(max_err, d);
            max_ref = fmax(max_ref, fabs(ref[i]));
            if (d > atol + rtol * fabs(ref[i]) && bad++ < 3)
                cr_log_error("pos %d logit %d: got %.7f ref %.7f", pos, i, st.logits[i], ref[i]);
        }
        cr_expect_eq(bad, 0, "pos %d: %d logits off, max error %.3g", pos, bad, max_err);
        cr_log_info("pos %d: max logit error %.3g, max logit %.3g", pos, max_err, max_ref);
        cr_expect_gt(max_ref, 0.05, "logits degenerate"); /* a zero model would pass trivially */
    }
    cr_expect_eq(m.kv_bad, 0, "%d stored K or V values are not the cache dtype's rounding of the reference",
                 m.kv_bad);
    cr_log_info(
        "%s K/V cache: max |stored - reference| %.3g of the vector's largest element; %d of %d values "
        "differ from the reference's own rounding, %d of them outside the window",
        fr_dtype_name(kvt), m.kv_max_err, m.kv_flips, 2 * c->n_layers * 6 * kvd, m.kv_bad);
    free(ref);
    free(m.k);
    free(m.v);
    decode_state_free(&st);
    qwen3_weights_free(&w);
}

Test(decode, matches_reference_bf16_weights_bf16_kv) {
    struct qwen3_config c = fixture_tiny_config();
    check_against_reference(&c, FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE);
}

Test(decode, matches_reference_bf16_weights_f32_kv) {
    struct qwen3_config c = fixture_tiny_config();
    check_against_reference(&c, FR_DTYPE_BF16, FR_DTYPE_F32, MATVEC_BACKEND_FORGE);
}

Test(decode, matches_reference_f32_weights_untied) {
    struct qwen3_config c = fixture_tiny_config();
    c.tied_embeddings = false;
    check_against_reference(&c, FR_DTYPE_F32, FR_DTYPE_F32, MATVEC_BACKEND_FORGE);
}

Test(decode, matches_reference_openblas_backend) {
    struct qwen3_config c = fixture_tiny_config();
    const char *why = NULL;
    if (!matvec_backend_available(MATVEC_BACKEND_OPENBLAS, FR_DTYPE_F32, &why))
        cr_skip_test("openblas backend unavailable: %s", why ? why : "?");
    check_against_reference(&c, FR_DTYPE_F32, FR_DTYPE_BF16, MATVEC_BACKEND_OPENBLAS);
}

/* An intermediate of 2112 columns stores down_proj as two column panels (1088 + 1024): the forge kernels and
 * OpenBLAS read it as the reference does. */
Test(decode, matches_reference_down_proj_in_column_panels) {
    struct qwen3_config c = fixture_tiny_config();
    c.intermediate = 2112;
    cr_assert_eq(col_panel_count(c.intermediate, col_panel_width(FR_DTYPE_BF16, c.intermediate)), 2);
    check_against_reference(&c, FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE);
    check_against_reference(&c, FR_DTYPE_F32, FR_DTYPE_F32, MATVEC_BACKEND_FORGE);
    if (matvec_backend_available(MATVEC_BACKEND_OPENBLAS, FR_DTYPE_F32, NULL))
        check_against_reference(&c, FR_DTYPE_F32, FR_DTYPE_F32, MATVEC_BACKEND_OPENBLAS);
}

/* The observer sees every block, in table order, each begin matched by its end. */
struct trace {
    int n;
    int open; /* a begin without its end yet */
    enum block_id b[64];
    int layer[64];
    int nested;
};

static void trace_begin(void *ctx, enum block_id b, int layer) {
    struct trace *t = ctx;
    if (t->open) t->nested = 1;
    t->open = 1;
    if (t->n < 64) {
        t->b[t->n] = b;
        t->layer[t->n] = layer;
    }
    t->n++;
}

static void trace_end(void *ctx, enum block_id b, int layer) {
    struct trace *t = ctx;
    if (!t->open || t->b[t->n - 1] != b || t->layer[t->n - 1] != layer) t->nested = 1;
    t->open = 0;
}

Test(decode, observer_sees_blocks_in_order) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w;
    struct decode_state st;
    setup(&w, &st, &c, FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE);
    struct trace t = {0};
    struct decode_observer obs = {trace_begin, trace_end, &t};
    struct fr_err err = {{0}};
    cr_assert_eq(decode_step(&st, 5, 0, &obs, &err), 0, "%s", err.msg);
    int per_layer = BLOCK_DOWN_PROJ - BLOCK_ATTN_NORM + 1;
    cr_assert_eq(t.n, 3 + 2 * per_layer);
    cr_expect_eq(t.nested, 0);
    cr_expect_eq(t.b[0], BLOCK_EMBED);
    cr_expect_eq(t.layer[0], -1);
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < per_layer; i++) {
            cr_expect_eq(t.b[1 + l * per_layer + i], (enum block_id)(BLOCK_ATTN_NORM + i));
            cr_expect_eq(t.layer[1 + l * per_layer + i], l);
            cr_expect_eq(block_table()[BLOCK_ATTN_NORM + i].scope, BLOCK_SCOPE_LAYER);
        }
    cr_expect_eq(t.b[t.n - 2], BLOCK_FINAL_NORM);
    cr_expect_eq(t.b[t.n - 1], BLOCK_LM_HEAD);
    cr_expect_eq(t.layer[t.n - 1], -1);

    struct sampler_params greedy = {0.0f, 1.0f, 0};
    int token = -1, argmax = 0;
    t.n = 0;
    cr_assert_eq(decode_sample(&st, &greedy, 0, &obs, &token, &err), 0, "%s", err.msg);
    cr_expect_eq(t.n, 1);
    cr_expect_eq(t.b[0], BLOCK_SAMPLER);
    for (int i = 1; i < c.vocab; i++)
        if (st.logits[i] > st.logits[argmax]) argmax = i;
    cr_expect_eq(token, argmax);
    decode_state_free(&st);
    qwen3_weights_free(&w);
}

/* Two states of the tiny config on one set of bf16 weights, forge kernels, bf16 KV. */
static void setup_two(struct qwen3_weights *w, struct decode_state *a, struct decode_state *b,
                      const struct qwen3_config *c) {
    setup(w, a, c, FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE);
    cr_assert_eq(
        decode_state_init(b, w, REF_MAX_POS, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, kernel_team_procs(), NULL),
        0);
}

static void free_two(struct qwen3_weights *w, struct decode_state *a, struct decode_state *b) {
    decode_state_free(a);
    decode_state_free(b);
    qwen3_weights_free(w);
}

Test(decode, block_run_alone_matches_step) {
    /* The harness times blocks one by one: running the step's blocks by hand gives the step's logits. */
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w;
    struct decode_state a, b;
    setup_two(&w, &a, &b, &c);
    cr_assert_eq(decode_step(&a, 9, 0, NULL, NULL), 0);
    b.token = 9;
    cr_assert_eq(decode_block_run(&b, BLOCK_EMBED, -1, 0), 0, "%s", b.err.msg);
    for (int l = 0; l < c.n_layers; l++)
        for (int blk = BLOCK_ATTN_NORM; blk <= BLOCK_DOWN_PROJ; blk++)
            cr_assert_eq(decode_block_run(&b, (enum block_id)blk, l, 0), 0, "%s", b.err.msg);
    cr_assert_eq(decode_block_run(&b, BLOCK_FINAL_NORM, -1, 0), 0);
    cr_assert_eq(decode_block_run(&b, BLOCK_LM_HEAD, -1, 0), 0);
    cr_expect_eq(memcmp(a.logits, b.logits, (size_t)c.vocab * sizeof(float)), 0);
    free_two(&w, &a, &b);
}

/* decode_block_layers (what the block timings run: a block's calls of one step, on the step's kernel team
 * with two threads or more) computes what the block's calls one by one from the calling thread compute, bit
 * for bit, with one thread and with three; and refuses an unknown block or a position outside the cache. */
Test(decode, block_layers_match_calls_one_by_one) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w;
    struct decode_state a, b;
    setup_two(&w, &a, &b, &c);
    for (int nt = 1; nt <= 3; nt += 2) {
        a.threads = b.threads = nt;
        a.token = b.token = 9;
        for (int blk = BLOCK_EMBED; blk <= BLOCK_LM_HEAD; blk++) {
            cr_assert_eq(decode_block_layers(&a, (enum block_id)blk, 3), 0, "%s", a.err.msg);
            int layers = block_table()[blk].scope == BLOCK_SCOPE_LAYER ? c.n_layers : 1;
            for (int l = 0; l < layers; l++) cr_assert_eq(decode_block_run(&b, (enum block_id)blk, l, 3), 0);
        }
        cr_expect_eq(memcmp(a.logits, b.logits, (size_t)c.vocab * sizeof(float)), 0, "%d threads", nt);
        cr_expect_eq(memcmp(a.x, b.x, (size_t)c.hidden * sizeof(float)), 0, "%d threads", nt);
    }
    cr_expect_neq(decode_block_layers(&a, (enum block_id)BLOCK_COUNT, 0), 0);
    cr_expect_neq(decode_block_layers(&a, BLOCK_ATTENTION, REF_MAX_POS), 0);
    cr_expect(strstr(a.err.msg, "position") != NULL, "%s", a.err.msg);
    free_two(&w, &a, &b);
}

Test(decode, errors) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w;
    struct decode_state st;
    struct fr_err err = {{0}};
    setup(&w, &st, &c, FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE);
    cr_expect_neq(decode_step(&st, c.vocab, 0, NULL, &err), 0);
    cr_expect(strstr(err.msg, "vocabulary") != NULL, "%s", err.msg);
    cr_expect_neq(decode_step(&st, -1, 0, NULL, &err), 0);
    cr_expect_neq(decode_step(&st, 1, REF_MAX_POS, NULL, &err), 0);
    cr_expect(strstr(err.msg, "position") != NULL, "%s", err.msg);
    cr_expect_neq(decode_block_run(&st, BLOCK_QKV_PROJ, 2, 0), 0);
    cr_expect(strstr(st.err.msg, "layer") != NULL, "%s", st.err.msg);
    cr_expect_neq(decode_block_run(&st, BLOCK_ATTENTION, 0, -1), 0);
    cr_expect_neq(decode_block_run(&st, (enum block_id)BLOCK_COUNT, 0, 0), 0);
    st.token = 1000;
    cr_expect_neq(decode_block_run(&st, BLOCK_EMBED, -1, 0), 0);
    struct sampler_params bad = {-1.0f, 1.0f, 0};
    int token;
    cr_expect_neq(decode_sample(&st, &bad, 0, NULL, &token, &err), 0);
    decode_state_free(&st);

    cr_expect_neq(decode_state_init(&st, &w, c.max_context + 1, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE,
                                    kernel_team_procs(), &err),
                  0);
    cr_expect(strstr(err.msg, "positions") != NULL, "%s", err.msg);
    cr_expect_neq(
        decode_state_init(&st, &w, 0, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, kernel_team_procs(), &err), 0);
    w.cfg.n_kv_heads = 3; /* 4 query heads are not a multiple */
    cr_expect_neq(
        decode_state_init(&st, &w, 4, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, kernel_team_procs(), &err), 0);
    cr_expect(strstr(err.msg, "multiple") != NULL, "%s", err.msg);
    w.cfg.n_kv_heads = 2;
    w.cfg.head_dim = 31;
    cr_expect_neq(
        decode_state_init(&st, &w, 4, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, kernel_team_procs(), &err), 0);
    w.cfg.head_dim = 32;
    qwen3_weights_free(&w);
}

Test(decode, bench_runs_a_one_token_vocabulary) {
    /* the harness feeds token 1 where the vocabulary has it; a vocabulary of one token has only token 0 */
    struct qwen3_config c = fixture_tiny_config();
    c.vocab = 1;
    struct qwen3_weights w;
    struct decode_state st;
    struct fr_err err = {{0}};
    setup(&w, &st, &c, FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE);
    const struct timing_opts t = {0, 1, 1, 0.0, NULL, NULL};
    struct timing_stats stats;
    cr_expect_eq(decode_bench_block(&st, BLOCK_EMBED, 0, &t, NULL, 0, NULL, &stats, NULL, &err), 0, "%s",
                 err.msg);
    struct decode_bench_opts o = {.block_timing = t, .step_timing = t, .sampler = {0.0f, 1.0f, 0}};
    struct decode_bench_step out;
    cr_expect_eq(decode_bench_step(&st, 1, &o, &out, &err), 0, "%s", err.msg);
    decode_state_free(&st);
    qwen3_weights_free(&w);
}

/* The tiny model in bf16 on forge's kernels, a read buffer of READ_FLOATS floats of the read's pattern, and
 * three repetitions a measurement after one warm-up. */
#define READ_FLOATS 4096
struct tiny_bench {
    struct qwen3_weights w;
    struct decode_state st;
    struct fr_err err;
    float buf[READ_FLOATS];
    struct timing_opts t;
};

static void tiny_bench_setup(struct tiny_bench *f) {
    struct qwen3_config c = fixture_tiny_config();
    setup(&f->w, &f->st, &c, FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE);
    for (int i = 0; i < READ_FLOATS; i++) f->buf[i] = (float)(i & 3);
    f->err = (struct fr_err){{0}};
    f->t = (struct timing_opts){1, 3, 3, 0.0, NULL, NULL};
}

static void tiny_bench_free(struct tiny_bench *f) {
    decode_state_free(&f->st);
    qwen3_weights_free(&f->w);
}

Test(decode, bench_step_reads_the_paired_buffer_and_the_weights) {
    struct tiny_bench f;
    tiny_bench_setup(&f);
    struct decode_bench_opts o = {
        .step_timing = f.t, .sampler = {0.0f, 1.0f, 0}, .read_buf = f.buf, .read_n = READ_FLOATS};
    struct decode_bench_step out;
    cr_assert_eq(decode_bench_step(&f.st, 1, &o, &out, &f.err), 0, "%s", f.err.msg);
    cr_expect_eq(out.read.reps, 3);
    cr_expect_eq(out.weights_read.reps, 3, "weights above the threshold (0) are read after each pair");
    cr_expect(out.weights_read.median_s > 0 && isfinite(out.step_over_weights_read) &&
              out.step_over_weights_read > 0);
    o.weights_read_min_bytes = f.w.total_bytes + 1;
    cr_assert_eq(decode_bench_step(&f.st, 1, &o, &out, &f.err), 0, "%s", f.err.msg);
    cr_expect_eq(out.read.reps, 3);
    cr_expect_eq(out.weights_read.reps, 0, "weights below the threshold are not read");
    cr_expect(isnan(out.step_over_weights_read));
    tiny_bench_free(&f);
}

/* The spans a block streams: their bytes are the cost model's DRAM bytes (computed from the shapes, not from
 * the allocation), each lies inside the weights or the KV cache, and blocks that stream nothing have none. */
Test(decode, block_spans_are_the_cost_models_dram_bytes) {
    struct qwen3_config c = fixture_tiny_config();
    struct qwen3_weights w;
    struct decode_state st;
    setup(&w, &st, &c, FR_DTYPE_BF16, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE);
    const struct cost_opts co = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    const char *wlo = w.base, *whi = wlo + w.total_bytes;
    const char *klo = st.kv.k, *khi = klo + (size_t)c.n_layers * st.kv.layer_bytes;
    const char *vlo = st.kv.v, *vhi = vlo + (size_t)c.n_layers * st.kv.layer_bytes;
    for (int pos = 0; pos < REF_MAX_POS; pos += REF_MAX_POS - 1)
        for (int b = 0; b < BLOCK_COUNT; b++) {
            struct block_cost bc;
            cost_block(&c, &co, (enum block_id)b, pos, SAMPLER_VARIANT_CHAIN, &bc);
            int n = decode_block_spans(&st, (enum block_id)b, pos, NULL, 0);
            struct mem_span spans[64];
            cr_assert_leq(n, 64);
            cr_expect_eq(decode_block_spans(&st, (enum block_id)b, pos, spans, 64), n);
            double bytes = 0;
            for (int i = 0; i < n; i++) {
                const char *p = spans[i].p, *e = p + spans[i].bytes;
                bool in = (p >= wlo && e <= whi) || (p >= klo && e <= khi) || (p >= vlo && e <= vhi);
                cr_expect(in && spans[i].bytes > 0, "%s span %d lies outside the weights and the KV cache",
                          block_name((enum block_id)b), i);
                bytes += (double)spans[i].bytes;
            }
            cr_expect_eq(bytes, bc.dram_bytes, "%s at position %d: spans %.0f bytes, cost model %.0f",
                         block_name((enum block_id)b), pos, bytes, bc.dram_bytes);
        }
    decode_state_free(&st);
    qwen3_weights_free(&w);
}

/* A cold block is followed in each repetition by a read of its own spans; a block that streams nothing, or
 * one not timed cold, gets none. */
Test(decode, bench_block_reads_its_own_bytes) {
    struct tiny_bench f;
    tiny_bench_setup(&f);
    struct timing_stats s;
    struct decode_bench_block_reads r;
    const enum block_id streams[2] = {BLOCK_GATE_UP_PROJ, BLOCK_ATTENTION};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(decode_bench_block_evict(&f.st, streams[i], 3, &f.t, f.buf, READ_FLOATS, NULL, &s, NULL,
                                              &r, &f.err),
                     0, "%s", f.err.msg);
        cr_expect_eq(r.evict.reps, 3);
        cr_expect_eq(r.own.reps, 3, "%s: its own bytes read after each repetition", block_name(streams[i]));
        struct mem_span spans[64];
        int n = decode_block_spans(&f.st, streams[i], 3, spans, 64);
        size_t bytes = 0;
        for (int j = 0; j < n && j < 64; j++) bytes += spans[j].bytes;
        cr_expect(n > 0 && r.own_bytes == bytes, "%s: %zu bytes read, its spans hold %zu",
                  block_name(streams[i]), r.own_bytes, bytes);
        cr_expect(r.own.median_s > 0 && isfinite(r.over_own) && r.over_own > 0);
    }
    cr_assert_eq(
        decode_bench_block_evict(&f.st, BLOCK_ROPE, 3, &f.t, f.buf, READ_FLOATS, NULL, &s, NULL, &r, &f.err),
        0);
    cr_expect(r.evict.reps == 0 && r.own.reps == 0 && r.own_bytes == 0 && isnan(r.over_own),
              "rope streams nothing: no eviction, no own read");
    cr_assert_eq(
        decode_bench_block_evict(&f.st, BLOCK_QKV_PROJ, 3, &f.t, NULL, 0, NULL, &s, NULL, &r, &f.err), 0);
    cr_expect(r.own.reps == 0 && isnan(r.over_own), "not timed cold: no own read");
    tiny_bench_free(&f);
}

static int count_subnormal(const float *p, size_t n) {
    int k = 0;
    for (size_t i = 0; i < n; i++) k += fpclassify(p[i]) == FP_SUBNORMAL;
    return k;
}

/* A block timed alone starts every repetition from the same inputs: after 250 repetitions of the in-place
 * blocks (qk_norm, rope, the residual add of o_proj) the state holds what one repetition makes of the
 * inputs, bit for bit, and no subnormal. Before, each repetition fed on the last one's output: 200
 * repetitions of qk_norm on Qwen3-0.6B left 2575 of its 3072 q and k values subnormal, and attention and
 * rope alone ran 15x and 150x their in-step time on an Intel Xeon (microcode assists). */
Test(decode, bench_block_starts_each_repetition_from_the_same_inputs) {
    struct tiny_bench f;
    tiny_bench_setup(&f);
    struct decode_state *st = &f.st;
    const int pos = 3;
    kv_cache_fill_random(&st->kv, pos, 7);
    cr_assert_eq(decode_step(st, 1, pos, NULL, &f.err), 0, "%s", f.err.msg);
    const enum block_id in_place[3] = {BLOCK_QK_NORM, BLOCK_ROPE, BLOCK_O_PROJ};
    const struct timing_opts many = {1, 250, 250, 0.0, NULL, NULL}; /* the full run caps at 200 */
    for (int i = 0; i < 3; i++) {
        struct decode_activations before, after;
        cr_assert_eq(decode_activations_save(st, &before), 0);
        struct timing_stats s;
        cr_assert_eq(decode_bench_block(st, in_place[i], pos, &many, NULL, 0, NULL, &s, NULL, &f.err), 0,
                     "%s", f.err.msg);
        cr_assert_eq(s.reps, 250);
        cr_assert_eq(decode_activations_save(st, &after), 0);
        decode_activations_restore(st, &before);
        cr_assert_eq(decode_block_layers(st, in_place[i], pos), 0, "%s", st->err.msg);
        struct decode_activations once;
        cr_assert_eq(decode_activations_save(st, &once), 0);
        cr_assert_eq(after.n, once.n);
        size_t first = after.n;
        for (size_t j = 0; j < after.n && first == after.n; j++)
            if (memcmp(&after.buf[j], &once.buf[j], sizeof(float)) != 0) first = j;
        cr_expect_eq(first, after.n, "%s: activation %zu is %g after the bench, %g after one repetition",
                     block_name(in_place[i]), first, first < after.n ? after.buf[first] : 0.0,
                     first < after.n ? once.buf[first] : 0.0);
        cr_expect_eq(count_subnormal(after.buf, after.n), 0, "%s left subnormal activations",
                     block_name(in_place[i]));
        decode_activations_free(&once);
        decode_activations_free(&after);
        decode_activations_free(&before);
    }
    tiny_bench_free(&f);
}
