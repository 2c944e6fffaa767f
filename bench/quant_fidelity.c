/* The quantised decode against the bf16 decode of the same weights (quant_fidelity.h). */
#include "bench/quant_fidelity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/decode.h"
#include "model/weight_mix.h"
#include "model/weights.h"
#include "model/weights_file.h"
#include "model/weights_quant.h"
#include "roofline/timing.h"

/* Each format: one type for every matrix, or (mix >= 0) llama.cpp's mix (model/weight_mix.h). */
static const struct {
    enum fr_dtype dtype;
    int mix;
    const char *name;
} formats[QUANT_FIDELITY_FORMATS] = {{FR_DTYPE_Q8_0, -1, "q8_0"},
                                     {FR_DTYPE_Q4_0, -1, "q4_0"},
                                     {FR_DTYPE_Q4_K, -1, "q4_k"},
                                     {FR_DTYPE_Q6_K, -1, "q6_k"},
                                     {FR_DTYPE_Q4_K, WEIGHT_MIX_Q4_K_M, "q4_k_m"}};

/* Format k's matrices for cfg; fails with the reason where the config's rows do not take them. */
static int format_table(int k, const struct qwen3_config *cfg, struct weight_formats *f, struct fr_err *err) {
    struct qwen3_weight_sizes sz;
    if (formats[k].mix >= 0) {
        if (weight_mix_formats((enum weight_mix)formats[k].mix, cfg, f, err)) return -1;
    } else {
        weight_formats_uniform(f, cfg->n_layers, formats[k].dtype);
    }
    return qwen3_weights_sizes_formats(cfg, f, &sz, err);
}

/* log(sum(exp(z))) in double, from the row's max (its own term is exactly 1); NaN when a logit is not
 * finite or the row is empty. */
static double log_sum_exp(const float *z, int n) {
    int at = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(z[i])) return NAN;
        if (z[i] > z[at]) at = i;
    }
    if (n < 1) return NAN;
    double s = 1;
    for (int i = 0; i < n; i++)
        if (i != at) s += exp((double)z[i] - z[at]);
    return z[at] + log(s);
}

/* sum p_i (log p_i - log q_i), log p_i = z_i - lse(z): no probability is formed that could underflow. */
double quant_fidelity_kl(const float *p, const float *q, int n) {
    double lp = log_sum_exp(p, n), lq = log_sum_exp(q, n);
    if (isnan(lp) || isnan(lq)) return NAN;
    double kl = 0;
    for (int i = 0; i < n; i++) {
        double a = (double)p[i] - lp;
        kl += exp(a) * (a - ((double)q[i] - lq));
    }
    return kl;
}

double quant_fidelity_kl_uniform(const float *p, int n) {
    double lp = log_sum_exp(p, n);
    if (isnan(lp)) return NAN;
    double kl = 0;
    for (int i = 0; i < n; i++) {
        double a = (double)p[i] - lp;
        kl += exp(a) * a;
    }
    return kl + log((double)n);
}

int quant_fidelity_argmax(const float *logits, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (logits[i] > logits[best]) best = i;
    return best;
}

/* KL(p || q) <= max(z - z') - min(z - z'): log p_i - log q_i = d_i - (lse(z) - lse(z')), and the difference
 * of the two log-sum-exps is at least min d. */
static double kl_range_bound(const float *p, const float *q, int n) {
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++) {
        double d = (double)p[i] - q[i];
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    return hi - lo;
}

static bool row_finite(const float *z, int n) {
    for (int i = 0; i < n; i++)
        if (!isfinite(z[i])) return false;
    return true;
}

/* The bf16 reference: its logits at every step, and the tokens fed (the prompt, then its greedy picks). */
static int run_reference(const struct quant_fidelity_opts *o, const struct qwen3_weights *w,
                         struct quant_fidelity *out, float *ref, struct fr_err *err) {
    struct decode_state st;
    if (decode_state_init(&st, w, o->steps, o->kv, MATVEC_BACKEND_FORGE, o->threads, err)) return -1;
    const size_t vocab = (size_t)o->cfg->vocab;
    int rc = 0;
    out->prompt_steps = o->prompt_len < o->steps ? o->prompt_len : o->steps;
    for (int s = 0; s < o->steps && !rc; s++) {
        out->tokens[s] = s < out->prompt_steps
                             ? o->prompt[s] % (int)vocab
                             : quant_fidelity_argmax(ref + (size_t)(s - 1) * vocab, (int)vocab);
        rc = decode_step(&st, out->tokens[s], s, NULL, err);
        if (!rc) memcpy(ref + (size_t)s * vocab, st.logits, sizeof(float) * vocab);
    }
    decode_state_free(&st);
    return rc;
}

/* One format: quantised from the bf16 weights, fed the reference's tokens, scored step by step. */
static int run_format(const struct quant_fidelity_opts *o, const struct qwen3_weights *bf16, const float *ref,
                      struct quant_fidelity *out, struct quant_fidelity_format *f, struct fr_err *err) {
    double t0 = timing_now_s();
    struct qwen3_weights w;
    struct decode_state st;
    struct weight_formats table;
    if (format_table((int)(f - out->f), o->cfg, &table, err) ||
        qwen3_weights_alloc_formats(&w, o->cfg, &table, err))
        return -1;
    int rc = qwen3_weights_quantize(&w, bf16, err);
    if (!rc) rc = decode_state_init(&st, &w, o->steps, o->kv, MATVEC_BACKEND_FORGE, o->threads, err);
    if (rc) {
        qwen3_weights_free(&w);
        return -1;
    }
    const int vocab = o->cfg->vocab;
    double sum = 0, sum_u = 0;
    f->steps = o->steps, f->kl_max = -INFINITY;
    for (int s = 0; s < o->steps && !rc; s++) {
        rc = decode_step(&st, out->tokens[s], s, NULL, err);
        if (rc) break;
        const float *p = ref + (size_t)s * (size_t)vocab, *q = st.logits;
        if (!row_finite(p, vocab) || !row_finite(q, vocab)) {
            f->nonfinite_steps++;
            continue;
        }
        double kl = quant_fidelity_kl(p, q, vocab);
        f->range_exceeded += !(kl >= -1e-12 && kl <= kl_range_bound(p, q, vocab) * (1 + 1e-9) + 1e-12);
        f->top1_agree += quant_fidelity_argmax(p, vocab) == quant_fidelity_argmax(q, vocab);
        sum += kl, sum_u += quant_fidelity_kl_uniform(p, vocab);
        if (kl > f->kl_max) f->kl_max = kl, f->kl_max_step = s;
    }
    int counted = o->steps - f->nonfinite_steps;
    f->kl_mean = counted > 0 ? sum / counted : NAN;
    f->kl_uniform_mean = counted > 0 ? sum_u / counted : NAN;
    if (counted == 0) f->kl_max = NAN;
    f->measured = rc == 0;
    decode_state_free(&st);
    qwen3_weights_free(&w);
    f->seconds = timing_now_s() - t0;
    return rc;
}

int quant_fidelity_run(const struct quant_fidelity_opts *o, struct quant_fidelity *out, struct fr_err *err) {
    memset(out, 0, sizeof *out);
    for (int k = 0; k < QUANT_FIDELITY_FORMATS; k++)
        out->f[k].dtype = formats[k].dtype, out->f[k].name = formats[k].name;
    if (o->steps < 1 || o->steps > QUANT_FIDELITY_MAX_STEPS || o->prompt_len < 1)
        return fr_err_set(err, "quant fidelity: %d steps (1..%d) and a prompt of %d ids (at least 1)",
                          o->steps, QUANT_FIDELITY_MAX_STEPS, o->prompt_len);
    out->steps = o->steps;
    if (o->weights_file)
        snprintf(out->source, sizeof out->source, "weights %.140s", o->weights_file);
    else
        snprintf(out->source, sizeof out->source, "synthetic weights (seed %#llx)",
                 (unsigned long long)o->seed);
    /* the bf16 weights and one quantised copy at a time (Q8_0 the larger) */
    struct qwen3_weight_sizes bf, q8;
    if (qwen3_weights_sizes(o->cfg, FR_DTYPE_BF16, &bf, err)) return -1;
    if (qwen3_weights_sizes(o->cfg, FR_DTYPE_Q8_0, &q8, err))
        return QUANT_FIDELITY_SKIPPED;                 /* not whole blocks */
    for (int k = 0; k < QUANT_FIDELITY_FORMATS; k++) { /* a K-quant's rows are whole superblocks */
        struct weight_formats table;
        struct fr_err why = {{0}};
        out->f[k].unfit = format_table(k, o->cfg, &table, &why) != 0;
        snprintf(out->f[k].why, sizeof out->f[k].why, "%.159s", why.msg);
    }
    if (o->weights_file) { /* a file of blocks (Q8_0/Q4_0, k-quants) holds no bf16 original to measure against
                            */
        enum fr_dtype held;
        if (weights_file_wtype(o->weights_file, o->cfg, FR_DTYPE_BF16, false, &held, NULL, 0, err)) return -1;
        if (held == FR_DTYPE_Q8_0 || held == FR_DTYPE_Q4_0) {
            fr_err_set(
                err,
                "%s holds quantised matrices (run in %s): no bf16 original to compare the formats against",
                o->weights_file, fr_dtype_name(held));
            return QUANT_FIDELITY_SKIPPED;
        }
    }
    char what[160];
    snprintf(what, sizeof what, "the comparison of '%s' in bf16 with its q8_0 copy", o->cfg->name);
    if (qwen3_mem_check(bf.total_bytes + q8.total_bytes, what, err)) return QUANT_FIDELITY_SKIPPED;
    double t0 = timing_now_s();
    const size_t vocab = (size_t)o->cfg->vocab;
    float *ref = malloc(sizeof(float) * vocab * (size_t)o->steps);
    if (!ref)
        return fr_err_set(err, "quant fidelity: out of memory for %d rows of %zu logits", o->steps, vocab);
    struct qwen3_weights w;
    int rc = qwen3_weights_alloc(&w, o->cfg, FR_DTYPE_BF16, err);
    if (rc) {
        free(ref);
        return -1;
    }
    if (o->weights_file)
        rc = weights_file_load(o->weights_file, &w, err);
    else
        qwen3_weights_init_synthetic(&w, o->seed);
    if (!rc) rc = run_reference(o, &w, out, ref, err);
    out->bf16_seconds = timing_now_s() - t0;
    for (int k = 0; k < QUANT_FIDELITY_FORMATS && !rc; k++)
        if (o->want[k] && !out->f[k].unfit) rc = run_format(o, &w, ref, out, &out->f[k], err);
    qwen3_weights_free(&w);
    free(ref);
    return rc ? -1 : 0;
}

bool quant_fidelity_judge(const struct quant_fidelity_format *f, char *why, size_t cap) {
    if (f->nonfinite_steps)
        snprintf(why, cap, "non-finite logits at %d of %d steps", f->nonfinite_steps, f->steps);
    else if (f->range_exceeded)
        snprintf(why, cap, "KL outside [0, max(z - z') - min(z - z')] at %d steps: an arithmetic error",
                 f->range_exceeded);
    else if (!(f->kl_mean <= f->kl_uniform_mean))
        snprintf(why, cap, "mean KL %.3g nats above the uniform distribution's %.3g", f->kl_mean,
                 f->kl_uniform_mean);
    else
        return true;
    return false;
}
