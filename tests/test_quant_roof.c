/* The block formats' own compute roof (roofline/ceilings.h CEILING_Q8_0_DOT, CEILING_Q4_0_DOT) and what
 * uses it: the ridge arithmetic against hand-computed values, the cost model's block-format weights, the
 * run's int8 dot term and the roof it names, the measured roof on a synthetic topology, report.md's line,
 * and predict's and machine's output end to end. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report/report_roofs.h"
#include "model/cost.h"
#include "roofline/ceilings.h"
#include "roofline/roofline.h"
#include "roofline/roofs.h"
#include "tests/cli_run.h"
#include "tests/model_fixtures.h"

/* A Q4_0 weight is 18/32 bytes, a Q8_0 one 34/32: at 2 FLOPs a weight 64/18 = 3.556 and 64/34 = 1.882
 * FLOP/B. A roof of 90 GFLOP/s over 30 GB/s has its ridge at 3 FLOP/B: Q4_0's projections sit above it
 * (bound by the format's roof), Q8_0's below (bound by DRAM). */
Test(quant_roof, ridge_by_hand) {
    cr_expect_float_eq(roofline_ridge_ai(&(struct roofline){.peak_gflops = 90, .bw_gbs = 30}), 3.0, 1e-12);
    struct qwen3_config c = fixture_tiny_config();
    const struct cost_opts q4 = {FR_DTYPE_Q4_0, FR_DTYPE_BF16, NULL},
                           q8 = {FR_DTYPE_Q8_0, FR_DTYPE_BF16, NULL},
                           bf = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL};
    struct block_cost b;
    cost_block(&c, &q4, BLOCK_QKV_PROJ, 0, SAMPLER_VARIANT_GREEDY, &b);
    cr_expect_eq(b.quant_weights, 2 * 256.0 * 64); /* (128 + 64 + 64) x 64, two layers */
    cr_expect_float_eq(2 * b.quant_weights / b.dram_bytes, 64.0 / 18, 1e-12);
    cr_expect_eq(b.quant_flops, b.flops, "the matvec is all of qkv_proj's FLOPs");
    cost_block(&c, &q8, BLOCK_DOWN_PROJ, 0, SAMPLER_VARIANT_GREEDY, &b);
    cr_expect_float_eq(2 * b.quant_weights / b.dram_bytes, 64.0 / 34, 1e-12);
    cr_expect_eq(b.flops - b.quant_flops, 2 * 64.0, "down_proj's residual add stays on the FMA roof");
    cost_block(&c, &bf, BLOCK_QKV_PROJ, 0, SAMPLER_VARIANT_GREEDY, &b);
    cr_expect_eq(b.quant_weights, 0.0);
    struct step_cost s;
    cost_step_batch(&c, &q4, 0, 4, SAMPLER_VARIANT_GREEDY, &s);
    cr_expect_eq(s.total.quant_weights, 0.0, "a batch's GEMM dequantises into f32: the FMA roof");
    cost_step_batch(&c, &q4, 0, 1, SAMPLER_VARIANT_GREEDY, &s);
    cr_expect_gt(s.total.quant_weights, 0.0);
}

static struct ceiling_figure fig(double best) {
    return (struct ceiling_figure){
        .measured = true, .best = best, .median = best, .min = best, .max = best, .reps = 10};
}

/* The roof from the ceilings (GFLOP/s halved into weights/s) and the int8 dot term it gives: 32 M weights
 * over 60 G weights/s take 0.533 ms against 18 MB over 30 GB/s, 0.6 ms: DRAM binds; at 50 G weights/s they
 * take 0.64 ms and the format's roof binds. */
Test(quant_roof, the_int8_dot_term_and_its_name) {
    struct ceilings c = {0};
    for (int k = 0; k < CEILING_COUNT; k++) c.all[k] = fig(100), c.one[k] = fig(50);
    c.all[CEILING_Q4_0_DOT] = fig(120), c.one[CEILING_Q4_0_DOT] = fig(70);
    struct roofline_rates all, one;
    char notes[512];
    roofs_from_ceilings(&c, &all, &one, notes, sizeof notes);
    cr_expect(isnan(all.quant_gweights));
    cr_expect_eq(roofs_set_quant(&c, FR_DTYPE_Q4_0, &all, &one, notes, sizeof notes), 0, "%s", notes);
    cr_expect_float_eq(all.quant_gweights, 60.0, 1e-12);
    cr_expect_float_eq(one.quant_gweights, 35.0, 1e-12);
    cr_expect_eq(roofs_set_quant(&c, FR_DTYPE_BF16, &all, &one, notes, sizeof notes), 0);
    cr_expect(isnan(all.quant_gweights) && isnan(one.quant_gweights));
    c.all[CEILING_Q8_0_DOT] =
        (struct ceiling_figure){.why = "no L2 cache in the topology to hold the matrix"};
    c.one[CEILING_Q8_0_DOT] = c.all[CEILING_Q8_0_DOT];
    notes[0] = '\0';
    cr_expect_eq(roofs_set_quant(&c, FR_DTYPE_Q8_0, &all, &one, notes, sizeof notes), 1);
    cr_expect(strstr(notes, "q8_0_gflops not measured (no L2 cache") && strstr(notes, "FMA roof"), "%s",
              notes);

    struct roofline_rates r = {.level_gbs = {30, 1000, 500, 200}, .peak_gflops = 100, .quant_gweights = 60};
    struct roofline_work w = {.level_bytes = {18e6}, .quant_weights = 32e6, .parallel = true};
    struct roofline_prediction p;
    struct fr_err err = {{0}};
    cr_assert_eq(roofline_predict(&r, &r, &w, &p, &err), 0, "%s", err.msg);
    cr_expect_float_eq(p.term_s[ROOFLINE_TERM_INT8], 32e6 / 60e9, 1e-15);
    cr_expect_str_eq(roofline_term_name(p.bound), "DRAM");
    cr_expect_eq(p.second, ROOFLINE_TERM_INT8);
    r.quant_gweights = 50;
    cr_assert_eq(roofline_predict(&r, &r, &w, &p, &err), 0, "%s", err.msg);
    cr_expect_str_eq(roofline_term_name(p.bound), "int8 dot");
    r.quant_gweights = NAN;
    cr_expect_neq(roofline_predict(&r, &r, &w, &p, &err), 0, "weights on an unmeasured roof: an error");
}

/* Measured on a synthetic topology (L2 of 256 KiB: 128 KiB matrices), both formats, all threads and one. */
Test(quant_roof, measured_on_the_active_isa, .timeout = 120) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(
        machine_from_synthetic(
            &m, "pack:1 l3:1(size=1048576) l2:2(size=262144) l1d:1(size=32768) core:1 pu:1", 0, &err),
        0, "%s", err.msg);
    struct ceilings_opts o = {.quick = true, .cache_rep_bytes = (size_t)1 << 20};
    struct ceilings c;
    cr_assert_eq(ceilings_measure_quant(&m, &o, &c, &err), 0, "%s", err.msg);
    cr_expect_eq(c.quant_cols, 1024);
    cr_expect_eq(c.quant_rows[0], (int)((128u << 10) / 1088), "half the L2 of Q8_0 rows of 1088 bytes");
    cr_expect_eq(c.quant_rows[1], (int)((128u << 10) / 576));
    cr_expect(c.quant_loop && c.quant_loop[0]);
    for (int k = CEILING_Q8_0_DOT; k <= CEILING_Q4_0_DOT; k++) {
        cr_expect(c.all[k].measured && c.all[k].best > 0 && isfinite(c.all[k].best), "%s",
                  ceilings_key((enum ceiling_kind)k, false));
        cr_expect(c.one[k].measured && c.one[k].best > 0);
        cr_expect_geq(c.all[k].reps, 1);
    }
    cr_expect_not(c.all[CEILING_DRAM_READ].measured, "only the formats' roofs");
    cr_expect_str_eq(ceilings_key(CEILING_Q4_0_DOT, false), "q4_0_gflops");
    cr_expect_str_eq(ceilings_unit(CEILING_Q8_0_DOT), "GFLOP/s");
    cr_expect_eq(ceilings_quant_kind(FR_DTYPE_Q4_0), CEILING_Q4_0_DOT);
    cr_expect_eq(ceilings_quant_kind(FR_DTYPE_BF16), -1);
}

static void add_ceiling(struct run_report *r, const char *name, double v) {
    struct report_ceiling *c = &r->ceilings[r->n_ceilings++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->value = v;
}

/* report.md names the roof that binds each quantised block, with the ridge from the measured rows. */
Test(quant_roof, report_names_the_binding_roof) {
    struct run_report *r = calloc(1, sizeof *r);
    cr_assert(r);
    report_init(r);
    snprintf(r->prov.dtype, sizeof r->prov.dtype, "q4_0");
    snprintf(r->prov.isa, sizeof r->prov.isa, "avx512");
    add_ceiling(r, "q4_0_gflops", 120);
    add_ceiling(r, "roof_dram_read_gbs", 40);
    struct report_block *b = &r->blocks[r->n_blocks++];
    b->id = BLOCK_QKV_PROJ;
    snprintf(b->name, sizeof b->name, "qkv_proj");
    snprintf(b->bound, sizeof b->bound, "DRAM");
    b->flops = 370, b->level_bytes[0] = 100;
    b = &r->blocks[r->n_blocks++];
    b->id = BLOCK_LM_HEAD;
    snprintf(b->name, sizeof b->name, "lm_head");
    snprintf(b->bound, sizeof b->bound, "int8 dot");
    b->flops = 400, b->level_bytes[0] = 100;
    b = &r->blocks[r->n_blocks++];
    b->id = BLOCK_SWIGLU; /* reads no matrix: not listed */
    snprintf(b->name, sizeof b->name, "swiglu");
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert(f);
    report_write_quant_roofs(f, r);
    fclose(f);
    cr_expect(strstr(text, "120.0 GFLOP/s at 2 FLOPs a weight, 60.0 G weights/s"), "%s", text);
    cr_expect(strstr(text, "the ridge point is 3.00 FLOP/B"), "%s", text);
    cr_expect(strstr(text, "`qkv_proj` DRAM (3.70 FLOP/B), `lm_head` int8 dot (4.00 FLOP/B)."), "%s", text);
    cr_expect(!strstr(text, "swiglu"), "%s", text);
    free(text);
    snprintf(r->prov.dtype, sizeof r->prov.dtype, "bf16");
    text = NULL;
    f = open_memstream(&text, &len);
    report_write_quant_roofs(f, r);
    fclose(f);
    cr_expect_eq(len, 0, "nothing for bf16: %s", text);
    free(text);
    free(r);
}

Test(quant_roof, predict_shows_the_ridge, .timeout = 60) {
    struct cli_result r;
    cli_run(
        &r, 0,
        "predict --model tests/fixtures/tiny-qwen3 --dtype q4_0 --context 1 --quant-gflops 90 --bw-gbs 30");
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "| given | --quant-gflops | 90.0 | 45.0 | 30.0 | 3.000 |"), "%s", r.out);
    cr_expect(strstr(r.out, "| qkv_proj | 65536 | 18432 | 3.556 | int8 dot |"), "%s", r.out);
    cli_run(
        &r, 0,
        "predict --model tests/fixtures/tiny-qwen3 --dtype q8_0 --context 1 --quant-gflops 90 --bw-gbs 30");
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "| qkv_proj | 65536 | 34816 | 1.882 | DRAM |"), "%s", r.out);
    cli_run(&r, 0, "predict --model tests/fixtures/tiny-qwen3 --dtype q4_0 --context 1");
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "unmeasured in predict") && strstr(r.out, "`forge-roofline machine` measures it"),
              "%s", r.out);
    cli_run(&r, 0, "predict --model tests/fixtures/tiny-qwen3 --context 1");
    cr_expect(!strstr(r.out, "compute roof and ridge point"), "bf16: no format roof section");
    cli_expect_usage_errors(
        0,
        (const char *const[]){"predict --model tests/fixtures/tiny-qwen3 --quant-gflops 9 --bw-gbs 3",
                              "predict --model tests/fixtures/tiny-qwen3 --dtype q4_0 --quant-gflops 9",
                              "predict --model tests/fixtures/tiny-qwen3 --dtype q4_0 --quant-gflops 0 "
                              "--bw-gbs 3",
                              "predict --model tests/fixtures/tiny-qwen3 --dtype q4_0 --quant-gflops 9 "
                              "--bw-gbs 3 --measure-roofs"},
        4);
}

Test(quant_roof, machine_lists_the_roofs, .timeout = 120) {
    struct cli_result r;
    cli_run(&r, 0, "machine --format json --test-sizes --threads 1");
    cr_assert_eq(r.status, 0, "%s%s", r.out, r.err);
    cr_expect(strstr(r.out, "\"q8_0_gflops\"") && strstr(r.out, "\"q4_0_1core_gflops\""), "%s", r.out);
    cr_expect(strstr(r.out, "\"quant_loop\""), "%s", r.out);
}
