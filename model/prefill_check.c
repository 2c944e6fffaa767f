/* A prefill against token-by-token decode (model/prefill_check.h). */
#include "model/prefill_check.h"

#include <math.h>
#include <stdlib.h>

static int token_at(int i, int vocab) {
    return (13 + 37 * i + (i * i) % 11) % vocab;
}

/* Per cached row (one position of one KV head of one layer): every value within one bf16 step of the row's
 * largest magnitude (bf16 cache: a value's rounding may fall either side of a midpoint, and a value near 0
 * carries the absolute error of the sums that made it), or 1e-4 of it (f32 cache). */
static long kv_mismatches(const struct kv_cache *a, const struct kv_cache *b, int n, long *values) {
    const double rel = a->type == FR_DTYPE_BF16 ? 1.0 / 128 : 1e-4;
    long bad = 0;
    for (int l = 0; l < a->n_layers; l++)
        for (int h = 0; h < a->n_kv_heads; h++)
            for (int side = 0; side < 2; side++)
                for (int pos = 0; pos < n; pos++) {
                    const void *x = side ? kv_cache_v(a, l, h, pos) : kv_cache_k(a, l, h, pos);
                    const void *y = side ? kv_cache_v(b, l, h, pos) : kv_cache_k(b, l, h, pos);
                    float p[512], q[512], top = 0;
                    const int d = a->head_dim < 512 ? a->head_dim : 512;
                    for (int i = 0; i < d; i++) {
                        p[i] = a->type == FR_DTYPE_BF16 ? bf16_to_f32(((const uint16_t *)x)[i])
                                                        : ((const float *)x)[i];
                        q[i] = a->type == FR_DTYPE_BF16 ? bf16_to_f32(((const uint16_t *)y)[i])
                                                        : ((const float *)y)[i];
                        top = fmaxf(top, fabsf(q[i]));
                    }
                    for (int i = 0; i < d; i++, (*values)++) bad += !(fabs((double)p[i] - q[i]) <= rel * top);
                }
    return bad;
}

static double logits_error(const float *a, const float *b, int n, double *scale) {
    double e = 0;
    *scale = 0;
    for (int i = 0; i < n; i++) e = fmax(e, fabsf(a[i] - b[i])), *scale = fmax(*scale, fabsf(b[i]));
    return e;
}

int prefill_check_against_steps(const struct qwen3_weights *w, enum fr_dtype kvtype,
                                enum matvec_backend backend, int threads, int depth, int n,
                                const struct gemm_blocking *blk, struct prefill_check_result *out,
                                struct fr_err *err) {
    const struct qwen3_config *c = &w->cfg;
    if (n < 1 || depth < 0)
        return fr_err_set(err, "prefill check: %d tokens after %d: at least one after 0", n, depth);
    const int total = depth + n, max_pos = total + 1; /* room for one step after */
    *out = (struct prefill_check_result){.logits_err = NAN,
                                         .logits_scale = NAN,
                                         .next_err = NAN,
                                         .tolerance = kvtype == FR_DTYPE_BF16 ? PREFILL_CHECK_TOL_BF16_KV
                                                                              : PREFILL_CHECK_TOL_F32_KV};
    int *tokens = malloc(sizeof *tokens * (size_t)total);
    if (!tokens) return fr_err_set(err, "out of memory for the check's tokens");
    for (int i = 0; i < total; i++) tokens[i] = token_at(i, c->vocab);
    struct prefill_state p;
    struct decode_state ref;
    int rc = -1;
    if (prefill_init(&p, w, max_pos, n > depth ? n : depth, kvtype, backend, threads, blk, err) != 0) {
        free(tokens);
        return -1;
    }
    if (decode_state_init(&ref, w, max_pos, kvtype, backend, threads, err) != 0) goto free_prefill;
    if ((depth > 0 && prefill_run(&p, tokens, depth, 0, NULL, err) != 0) ||
        prefill_run(&p, tokens + depth, n, depth, NULL, err) != 0)
        goto free_all;
    for (int i = 0; i < total; i++)
        if (decode_step(&ref, tokens[i], i, NULL, err) != 0) goto free_all;
    out->logits_err = logits_error(p.st.logits, ref.logits, c->vocab, &out->logits_scale);
    out->kv_mismatches = kv_mismatches(&p.st.kv, &ref.kv, total, &out->kv_values);
    double scale;
    const int next = token_at(total, c->vocab);
    if (decode_step(&p.st, next, total, NULL, err) != 0 || decode_step(&ref, next, total, NULL, err) != 0)
        goto free_all;
    out->next_err = logits_error(p.st.logits, ref.logits, c->vocab, &scale) / scale;
    rc = 0;
free_all:
    decode_state_free(&ref);
free_prefill:
    prefill_free(&p);
    free(tokens);
    return rc;
}

bool prefill_check_passed(const struct prefill_check_result *r) {
    return r->logits_err <= r->tolerance * r->logits_scale && r->kv_mismatches == 0 &&
           r->next_err <= r->tolerance && r->logits_scale > 0;
}
