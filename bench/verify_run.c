/* The verify runner over both check tables: the sampler's (with its own detail line) and the decode
 * kernels' (optimized kernel vs its _ref on every ISA up to the active one, max error against the stated
 * tolerance); then the quantised decodes against bf16, one MEASURED line of figures per format. */
#include "bench/verify_run.h"

#include <math.h>
#include <string.h>

#include "roofline/timing.h"
#include "kernels/kernels.h"
#include "kernels/kernels_check.h"

static int matches(const char *name, const char *only) {
    return !only || strncmp(name, only, strlen(only)) == 0;
}

static void print_line(FILE *out, const char *name, const char *detail, double seconds,
                       enum verify_status s) {
    fprintf(out, "%-24s %s (%.1f s)  %s\n", name, detail, seconds, verify_status_name(s));
    fflush(out);
}

/* One kernel check on every ISA from scalar up to the active one (the one --isa pins, else the CPU's best),
 * as the sampler checks run: it passes when every ISA is within the tolerance. The active ISA is restored. */
static enum verify_status kernel_check_every_isa(const struct kernels_check *kc, char *detail, size_t cap,
                                                 int threads) {
    const enum kernel_isa active = kernel_isa_active();
    enum kernel_isa isas[KERNEL_ISA_COUNT];
    char names[64];
    int n = verify_isa_list(kernel_isa_force, isas, names, sizeof names), failed = 0;
    double worst = 0;
    enum kernel_isa worst_isa = active;
    for (int i = 0; i < n; i++) {
        kernel_isa_force(isas[i]);
        double err = 0;
        failed += kc->run(&err, threads) != 0 || !(err <= kc->tolerance);
        if (!(err <= worst)) worst = err, worst_isa = isas[i];
    }
    kernel_isa_force(active);
    snprintf(detail, cap, "%s on %s: max error %.2e%s%s (tolerance %.1e)", kc->what, names, worst,
             n > 1 ? " on " : "", n > 1 ? kernel_isa_name(worst_isa) : "", kc->tolerance);
    return failed ? VERIFY_FAILED : VERIFY_PASSED;
}

static const char *const decode_names[QUANT_FIDELITY_FORMATS] = {"decode.q8_0_vs_bf16", "decode.q4_0_vs_bf16",
                                                                 "decode.q4_k_vs_bf16", "decode.q6_k_vs_bf16",
                                                                 "decode.q4_k_m_vs_bf16"};
static const char *const decode_types[QUANT_FIDELITY_FORMATS] = {"q8_0", "q4_0", "q4_k", "q6_k", "q4_k_m"};

bool verify_wants_model(const char *only) {
    for (int k = 0; k < QUANT_FIDELITY_FORMATS; k++)
        if (matches(decode_names[k], only)) return true;
    return false;
}

/* One line of figures: top-1 agreement, mean and max KL, the bound the judge holds it to. */
static enum verify_status describe_format(const struct quant_fidelity *q,
                                          const struct quant_fidelity_format *f, char *detail, size_t cap) {
    char why[160];
    bool ok = quant_fidelity_judge(f, why, sizeof why);
    const char *t = f->name;
    snprintf(detail, cap,
             "%s vs bf16 decode of the same %s, %d steps (%d prompt ids, then bf16's greedy tokens): top-1 "
             "agrees %d/%d, KL(bf16 || %s) mean %.3g, max %.3g nats (step %d); measured, no tolerance (fails "
             "only above the uniform distribution's mean KL %.3g)%s%s",
             t, q->source, f->steps, q->prompt_steps, f->top1_agree, f->steps, t, f->kl_mean, f->kl_max,
             f->kl_max_step, f->kl_uniform_mean, ok ? "" : ": ", ok ? "" : why);
    return ok ? VERIFY_MEASURED : VERIFY_FAILED;
}

/* The decode checks that match `only`: one comparison serves both formats (bf16 is decoded once). */
static int run_decode_checks(FILE *out, const char *only, int threads, const struct verify_model *m,
                             int counts[VERIFY_STATUS_COUNT]) {
    struct quant_fidelity_opts o = {.steps = QUANT_FIDELITY_STEPS, .threads = threads};
    int matched = 0;
    for (int k = 0; k < QUANT_FIDELITY_FORMATS; k++) matched += o.want[k] = matches(decode_names[k], only);
    if (!matched) return 0;
    struct quant_fidelity q;
    struct fr_err err = {{0}};
    int rc = QUANT_FIDELITY_SKIPPED;
    double t0 = timing_now_s();
    if (!m)
        snprintf(err.msg, sizeof err.msg, "no model given");
    else if (m->skip_why)
        snprintf(err.msg, sizeof err.msg, "%s", m->skip_why);
    else {
        o.cfg = m->cfg, o.weights_file = m->weights_file, o.seed = m->seed;
        o.prompt = m->prompt, o.prompt_len = m->prompt_len, o.kv = m->kv;
        rc = quant_fidelity_run(&o, &q, &err);
        if (rc == 0 && m->result) *m->result = q;
    }
    double first_s = timing_now_s() - t0;
    for (int k = 0; k < QUANT_FIDELITY_FORMATS; k++) {
        if (!o.want[k]) continue;
        char detail[640];
        enum verify_status s;
        double secs = 0;
        if (rc == 0 && q.f[k].unfit) {
            s = VERIFY_SKIPPED;
            snprintf(detail, sizeof detail, "%s vs bf16 decode: %s", decode_types[k], q.f[k].why);
        } else if (rc == 0) {
            s = describe_format(&q, &q.f[k], detail, sizeof detail);
            secs = q.f[k].seconds + q.bf16_seconds * (k == 0 || !o.want[0]);
        } else {
            s = rc == QUANT_FIDELITY_SKIPPED ? VERIFY_SKIPPED : VERIFY_FAILED;
            snprintf(detail, sizeof detail, "%s vs bf16 decode: %s", decode_types[k], err.msg);
            secs = first_s, first_s = 0;
        }
        counts[s]++;
        print_line(out, decode_names[k], detail, secs, s);
    }
    return matched;
}

int verify_run(FILE *out, const char *only, int threads, const struct verify_model *model,
               int counts[VERIFY_STATUS_COUNT]) {
    int matched = 0;
    for (int s = 0; s < VERIFY_STATUS_COUNT; s++) counts[s] = 0;
    for (int c = 0; c < verify_check_count; c++) {
        if (!matches(verify_checks[c].name, only)) continue;
        matched++;
        char detail[512];
        double t0 = timing_now_s();
        enum verify_status s = verify_checks[c].run(detail, sizeof detail, threads);
        counts[s]++;
        print_line(out, verify_checks[c].name, detail, timing_now_s() - t0, s);
    }
    int n_kernels = 0;
    const struct kernels_check *kc = kernels_checks(&n_kernels);
    for (int c = 0; c < n_kernels; c++) {
        char name[64];
        snprintf(name, sizeof name, "kernels.%s", kc[c].name);
        if (!matches(name, only)) continue;
        matched++;
        char detail[512];
        double t0 = timing_now_s();
        enum verify_status s = kernel_check_every_isa(&kc[c], detail, sizeof detail, threads);
        counts[s]++;
        print_line(out, name, detail, timing_now_s() - t0, s);
    }
    return matched + run_decode_checks(out, only, threads, model, counts);
}

int verify_count(const char *only) {
    int n = 0, n_kernels = 0;
    for (int c = 0; c < verify_check_count; c++) n += matches(verify_checks[c].name, only);
    const struct kernels_check *kc = kernels_checks(&n_kernels);
    for (int c = 0; c < n_kernels; c++) {
        char name[64];
        snprintf(name, sizeof name, "kernels.%s", kc[c].name);
        n += matches(name, only);
    }
    for (int k = 0; k < QUANT_FIDELITY_FORMATS; k++) n += matches(decode_names[k], only);
    return n;
}

void verify_list(FILE *out) {
    for (int c = 0; c < verify_check_count; c++) fprintf(out, "%s\n", verify_checks[c].name);
    int n_kernels = 0;
    const struct kernels_check *kc = kernels_checks(&n_kernels);
    for (int c = 0; c < n_kernels; c++) fprintf(out, "kernels.%s\n", kc[c].name);
    for (int k = 0; k < QUANT_FIDELITY_FORMATS; k++) fprintf(out, "%s\n", decode_names[k]);
}
