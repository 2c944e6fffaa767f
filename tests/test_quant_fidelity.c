/* The quantised decodes against bf16 (bench/quant_fidelity.h) on the tiny config: the KL and the argmax
 * against hand-computed values, the in-memory quantisation against the load path's weights bit for bit, the
 * figures of a real comparison (Q8_0 closer to bf16 than Q4_0, both finite and above zero), the judge's
 * failures, verify's MEASURED lines end to end, and the figures' round trip through run.json. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/quant_fidelity.h"
#include "bench/report/report_json.h"
#include "kernels/team.h"
#include "model/weights_file.h"
#include "model/weights_quant.h"
#include "tests/cli_run.h"
#include "tests/model_fixtures.h"

/* p = softmax(0, 0) = (1/2, 1/2), q = softmax(0, ln 3) = (1/4, 3/4): KL(p || q) = 1/2 ln 2 + 1/2 ln(2/3)
 * = 1/2 ln(4/3); KL(q || uniform) = 1/4 ln(1/2) + 3/4 ln(3/2). A constant added to a row changes nothing. */
Test(quant_fidelity, kl_by_hand) {
    const float p[2] = {0, 0}, q[2] = {0, (float)log(3.0)}, q_shift[2] = {100, 100 + (float)log(3.0)};
    const double want = 0.5 * log(4.0 / 3.0);
    cr_expect(fabs(quant_fidelity_kl(p, q, 2) - want) < 1e-7, "%.9g vs %.9g", quant_fidelity_kl(p, q, 2),
              want);
    cr_expect(fabs(quant_fidelity_kl(p, q_shift, 2) - want) < 1e-6);
    cr_expect_eq(quant_fidelity_kl(p, p, 2), 0.0);
    const double want_u = 0.25 * log(0.5) + 0.75 * log(1.5);
    cr_expect(fabs(quant_fidelity_kl_uniform(q, 2) - want_u) < 1e-7, "%.9g", quant_fidelity_kl_uniform(q, 2));
    const float bad[2] = {0, NAN}, inf[2] = {INFINITY, 0};
    cr_expect(isnan(quant_fidelity_kl(p, bad, 2)));
    cr_expect(isnan(quant_fidelity_kl(inf, p, 2)));
    cr_expect(isnan(quant_fidelity_kl_uniform(bad, 2)));
    const float tie[4] = {1, 3, 3, 2};
    cr_expect_eq(quant_fidelity_argmax(tie, 4), 1, "the lowest index on ties");
}

/* From the synthetic bf16 weights, the in-memory quantisation gives the synthetic Q8_0 / Q4_0 weights (the
 * load path's) byte for byte: on the tiny config, and on wider ones whose matrices bf16 stores in more
 * column panels than a block format does (intermediate 2112: two bf16 panels, one block panel; 6656: four
 * and two; hidden 2112: qkv and gate_up two and one), where quantising bf16's bytes in their stored order
 * scrambled the block format's columns (since 15767db). */
Test(quant_fidelity, quantize_is_the_load_path) {
    static const int shapes[][2] = {{64, 96}, {64, 2112}, {2112, 6656}}; /* hidden, intermediate */
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        struct qwen3_config c = fixture_tiny_config();
        c.hidden = shapes[s][0], c.intermediate = shapes[s][1];
        if (c.intermediate > 4096) c.n_layers = 1; /* placement is per matrix: one layer of the wide shape */
        struct qwen3_weights bf, want, got;
        struct fr_err err = {{0}};
        cr_assert_eq(qwen3_weights_alloc(&bf, &c, FR_DTYPE_BF16, &err), 0, "%s", err.msg);
        qwen3_weights_init_synthetic(&bf, 11);
        for (int t = FR_DTYPE_Q8_0; t <= FR_DTYPE_Q4_0; t++) {
            cr_assert_eq(qwen3_weights_alloc(&want, &c, (enum fr_dtype)t, &err), 0, "%s", err.msg);
            cr_assert_eq(qwen3_weights_alloc(&got, &c, (enum fr_dtype)t, &err), 0, "%s", err.msg);
            memset(want.base, 0, want.total_bytes), memset(got.base, 0, got.total_bytes); /* the padding */
            qwen3_weights_init_synthetic(&want, 11);
            cr_assert_eq(qwen3_weights_quantize(&got, &bf, &err), 0, "%s", err.msg);
            cr_expect_eq(memcmp(got.base, want.base, want.total_bytes), 0,
                         "%s differs at hidden %d, intermediate %d", fr_dtype_name(t), c.hidden,
                         c.intermediate);
            cr_expect_neq(qwen3_weights_quantize(&got, &want, &err), 0, "only from bf16");
            qwen3_weights_free(&got);
            qwen3_weights_free(&want);
        }
        qwen3_weights_free(&bf);
    }
}

static const int prompt[] = {785, 3974, 13876, 38835, 34208, 916, 279, 15678, 5562, 13};

Test(quant_fidelity, q8_0_is_closer_to_bf16_than_q4_0, .timeout = 60) {
    struct qwen3_config c = fixture_tiny_config();
    struct quant_fidelity_opts o = {.cfg = &c,
                                    .seed = 5,
                                    .prompt = prompt,
                                    .prompt_len = 10,
                                    .steps = 14,
                                    .kv = FR_DTYPE_BF16,
                                    .threads = kernel_team_procs(),
                                    .want = {true, true}};
    struct quant_fidelity q;
    struct fr_err err = {{0}};
    cr_assert_eq(quant_fidelity_run(&o, &q, &err), 0, "%s", err.msg);
    cr_expect_eq(q.steps, 14);
    cr_expect_eq(q.prompt_steps, 10);
    for (int s = 0; s < 10; s++) cr_expect_eq(q.tokens[s], prompt[s] % c.vocab);
    for (int s = 10; s < 14; s++) cr_expect(q.tokens[s] >= 0 && q.tokens[s] < c.vocab);
    const struct quant_fidelity_format *q8 = &q.f[0], *q4 = &q.f[1];
    cr_expect_eq(q8->dtype, FR_DTYPE_Q8_0);
    cr_expect_eq(q4->dtype, FR_DTYPE_Q4_0);
    for (int k = 0; k < 2; k++) {
        const struct quant_fidelity_format *f = &q.f[k];
        cr_assert(f->measured);
        cr_expect(isfinite(f->kl_mean) && f->kl_mean > 0, "%s KL mean %g", fr_dtype_name(f->dtype),
                  f->kl_mean);
        cr_expect(f->kl_max >= f->kl_mean && isfinite(f->kl_max));
        cr_expect(f->top1_agree >= 0 && f->top1_agree <= f->steps);
        cr_expect_eq(f->nonfinite_steps, 0);
        cr_expect_eq(f->range_exceeded, 0);
        char why[160];
        cr_expect(quant_fidelity_judge(f, why, sizeof why), "%s", why);
    }
    /* 8 bits a weight against 4: measured 4.8e-5 and 5.3e-3 nats at 16 steps (seed 0xf0e6e) */
    cr_expect_lt(q8->kl_mean, q4->kl_mean, "q8_0 %g, q4_0 %g", q8->kl_mean, q4->kl_mean);
    cr_expect_geq(q8->top1_agree, q4->top1_agree - 2);
    /* one format alone: the same figures */
    o.want[0] = false;
    struct quant_fidelity q2;
    cr_assert_eq(quant_fidelity_run(&o, &q2, &err), 0, "%s", err.msg);
    cr_expect(!q2.f[0].measured);
    cr_expect_eq(q2.f[1].kl_mean, q4->kl_mean);
    o.steps = QUANT_FIDELITY_MAX_STEPS + 1;
    cr_expect_eq(quant_fidelity_run(&o, &q2, &err), -1);
}

/* A GGUF file of Q8_0 blocks has no bf16 original: the comparison is skipped with the reason. */
Test(quant_fidelity, a_quantised_file_is_skipped_with_the_reason) {
    const char *path = "tests/fixtures/gguf/tiny-q8_0.gguf";
    struct qwen3_config c;
    struct fr_err err = {{0}};
    cr_assert_eq(weights_file_config(path, NULL, &c, &err), 0, "%s", err.msg);
    struct quant_fidelity_opts o = {.cfg = &c,
                                    .weights_file = path,
                                    .prompt = prompt,
                                    .prompt_len = 10,
                                    .steps = 12,
                                    .kv = FR_DTYPE_BF16,
                                    .threads = kernel_team_procs(),
                                    .want = {true, true}};
    struct quant_fidelity q;
    cr_expect_eq(quant_fidelity_run(&o, &q, &err), QUANT_FIDELITY_SKIPPED);
    cr_expect(strstr(err.msg, "holds quantised matrices (run in q8_0): no bf16 original"), "%s", err.msg);
}

Test(quant_fidelity, judge_fails_what_is_wrong) {
    struct quant_fidelity_format ok = {.dtype = FR_DTYPE_Q4_0,
                                       .measured = true,
                                       .steps = 16,
                                       .top1_agree = 3,
                                       .kl_mean = 0.1,
                                       .kl_max = 0.3,
                                       .kl_uniform_mean = 0.2};
    char why[160];
    cr_expect(quant_fidelity_judge(&ok, why, sizeof why), "few agreements are a figure, not a failure");
    struct quant_fidelity_format f = ok;
    f.nonfinite_steps = 1;
    cr_expect_not(quant_fidelity_judge(&f, why, sizeof why));
    cr_expect(strstr(why, "non-finite") != NULL, "%s", why);
    f = ok, f.range_exceeded = 2;
    cr_expect_not(quant_fidelity_judge(&f, why, sizeof why));
    f = ok, f.kl_mean = 0.25;
    cr_expect_not(quant_fidelity_judge(&f, why, sizeof why));
    cr_expect(strstr(why, "uniform") != NULL, "%s", why);
    f = ok, f.kl_mean = NAN;
    cr_expect_not(quant_fidelity_judge(&f, why, sizeof why));
}

Test(quant_fidelity, verify_prints_measured_lines, .timeout = 120) {
    struct cli_result r;
    cli_run(&r, 0, "verify --only decode --model tests/fixtures/tiny-qwen3");
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "decode.q8_0_vs_bf16") && strstr(r.out, "decode.q4_0_vs_bf16"), "%s", r.out);
    cr_expect(strstr(r.out, "top-1 agrees") && strstr(r.out, "KL(bf16 || q4_0) mean"), "%s", r.out);
    /* the tiny model's rows (64) take no K-quant superblock: those three are skipped, saying why */
    cr_expect(strstr(r.out, "verify: 0 passed, 0 failed, 3 skipped, 2 measured"), "%s", r.out);
    cr_expect(strstr(r.out, "q4_k vs bf16 decode: ") && strstr(r.out, "256"), "%s", r.out);
    cli_run(&r, 0, "verify --only decode.q4_0 --model tests/fixtures/tiny-qwen3");
    cr_expect_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(!strstr(r.out, "decode.q8_0_vs_bf16") && strstr(r.out, "1 measured"), "%s", r.out);
    cli_run(&r, 0, "verify --list");
    cr_expect(strstr(r.out, "decode.q8_0_vs_bf16\ndecode.q4_0_vs_bf16\ndecode.q4_k_vs_bf16\n"
                            "decode.q6_k_vs_bf16\ndecode.q4_k_m_vs_bf16\n"),
              "%s", r.out);
    cli_expect_usage_errors(0,
                            (const char *const[]){"verify --only sampler.philox --model qwen3-0.6b",
                                                  "verify --only decode --model no-such-model"},
                            2);
}

Test(quant_fidelity, figures_round_trip_through_run_json) {
    struct run_report *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
    cr_assert(a && b);
    report_init(a);
    a->n_fidelity = 2;
    snprintf(a->fidelity_source, sizeof a->fidelity_source, "the same synthetic weights");
    a->fidelity[0] = (struct report_fidelity){"q8_0", 16, 15, 8.15e-05, 8.98e-05};
    a->fidelity[1] = (struct report_fidelity){"q4_0", 16, 14, 0.013, 0.014};
    char *text = report_json_string(a);
    cr_assert(text);
    struct fr_err err = {{0}};
    cr_assert_eq(report_json_parse(text, strlen(text), "run.json", b, &err), 0, "%s", err.msg);
    cr_expect_eq(b->n_fidelity, 2);
    cr_expect_str_eq(b->fidelity_source, a->fidelity_source);
    for (int i = 0; i < 2; i++) {
        cr_expect_str_eq(b->fidelity[i].dtype, a->fidelity[i].dtype);
        cr_expect_eq(b->fidelity[i].top1_agree, a->fidelity[i].top1_agree);
        cr_expect_eq(b->fidelity[i].kl_mean, a->fidelity[i].kl_mean);
        cr_expect_eq(b->fidelity[i].kl_max, a->fidelity[i].kl_max);
    }
    free(text);
    free(a), free(b);
}
