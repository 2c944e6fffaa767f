/* Each quantised format on its own measured roof (issue #67): a mixed model's quantised work kept per format
 * by the cost model against counts made here from the formats table, the rates taken from every format's
 * ceiling, and the int8 dot term against the per-format sum computed here from known rates; a uniform
 * model's figures equal to the one-roof path's, bit for bit; the format each block ran in, in blocks.csv,
 * run.json and report.md of a quick run of a Q4_K_M mix, and a run.json without the field read back. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report/report_json.h"
#include "bench/report/report_write.h"
#include "model/cost.h"
#include "model/weight_mix.h"
#include "roofline/ceilings.h"
#include "roofline/roofline.h"
#include "roofline/roofs.h"
#include "tests/cli_run.h"
#include "tests/model_fixtures.h"
#include "tests/report_fixture.h"
#include "tests/report_testutil.h"

/* hidden 256, intermediate 512, 3 layers, 4 heads of 64 (q_dim 256), 2 KV heads, vocab 300, tied: every
 * row whole superblocks, so the Q4_K_M mix keeps its K-quants */
static const int tiny256_shape[9] = {256, 512, 3, 4, 2, 64, 300, 64, 1};

static struct qwen3_config tiny256(void) {
    return fixture_config("tiny256", tiny256_shape, 10000.0);
}

static struct ceiling_figure fig(double best) {
    return (struct ceiling_figure){
        .measured = true, .best = best, .median = best, .min = best, .max = best, .reps = 10};
}

/* Every ceiling 100 (one core 50) but the K-quants' roofs as on a 2-core Zen 3: Q4_K 77 GFLOP/s, Q6_K 45
 * (one core 40 and 25), so 38.5 and 22.5 G weights/s, one core 20 and 12.5. */
static void zen3_ceilings(struct ceilings *c) {
    memset(c, 0, sizeof *c);
    for (int k = 0; k < CEILING_COUNT; k++) c->all[k] = fig(100), c->one[k] = fig(50);
    c->all[CEILING_Q4_K_DOT] = fig(77), c->one[CEILING_Q4_K_DOT] = fig(40);
    c->all[CEILING_Q6_K_DOT] = fig(45), c->one[CEILING_Q6_K_DOT] = fig(25);
}

#define BIT(t) (1u << (t))

Test(format_roofs, rates_from_every_format) {
    struct ceilings c;
    zen3_ceilings(&c);
    struct roofline_rates all, one;
    char notes[1024];
    roofs_from_ceilings(&c, &all, &one, notes, sizeof notes);
    for (int t = 0; t < FR_DTYPE_COUNT; t++) cr_expect(isnan(all.quant_type_gweights[t]));
    notes[0] = '\0';
    cr_expect_eq(
        roofs_set_quant_types(&c, BIT(FR_DTYPE_Q4_K) | BIT(FR_DTYPE_Q6_K), &all, &one, notes, sizeof notes),
        0, "%s", notes);
    cr_expect_eq(all.quant_type_gweights[FR_DTYPE_Q4_K], 38.5);
    cr_expect_eq(all.quant_type_gweights[FR_DTYPE_Q6_K], 22.5);
    cr_expect_eq(one.quant_type_gweights[FR_DTYPE_Q4_K], 20.0);
    cr_expect_eq(one.quant_type_gweights[FR_DTYPE_Q6_K], 12.5);
    cr_expect_eq(all.quant_type_gweights[FR_DTYPE_Q8_0], 50.0, "a format the run does not use is filled too");
    cr_expect(isnan(all.quant_type_gweights[FR_DTYPE_BF16]) && isnan(one.quant_type_gweights[FR_DTYPE_F32]));
    /* each format as roofs_set_quant gives its one roof */
    for (int t = 0; t < FR_DTYPE_COUNT; t++) {
        struct roofline_rates a1 = all, o1 = one;
        char n1[256] = "";
        roofs_set_quant(&c, t, &a1, &o1, n1, sizeof n1);
        cr_expect(a1.quant_gweights == all.quant_type_gweights[t] ||
                      (isnan(a1.quant_gweights) && isnan(all.quant_type_gweights[t])),
                  "%s", fr_dtype_name((enum fr_dtype)t));
    }

    /* Q6_K unmeasured: said (it is the run's), its rate NaN; Q5_K unmeasured but unused: not said */
    c.all[CEILING_Q6_K_DOT] = c.one[CEILING_Q6_K_DOT] =
        (struct ceiling_figure){.why = "no L2 cache in the topology to hold the matrix"};
    c.all[CEILING_Q5_K_DOT] = c.one[CEILING_Q5_K_DOT] = (struct ceiling_figure){.why = "unused"};
    notes[0] = '\0';
    cr_expect_eq(
        roofs_set_quant_types(&c, BIT(FR_DTYPE_Q4_K) | BIT(FR_DTYPE_Q6_K), &all, &one, notes, sizeof notes),
        1, "%s", notes);
    cr_expect(strstr(notes, "q6_k_gflops not measured (no L2 cache") &&
                  strstr(notes, "the q6_k matvecs' FLOPs charged to the f32 FMA roof"),
              "%s", notes);
    cr_expect(!strstr(notes, "q5_k"), "%s", notes);
    cr_expect(isnan(all.quant_type_gweights[FR_DTYPE_Q6_K]));
    cr_expect_eq(all.quant_type_gweights[FR_DTYPE_Q4_K], 38.5);

    /* all threads below one core (a busy neighbour): one core's floor, said with the format's key */
    c.all[CEILING_Q6_K_DOT] = fig(20), c.one[CEILING_Q6_K_DOT] = fig(30);
    notes[0] = '\0';
    cr_expect_eq(roofs_set_quant_types(&c, BIT(FR_DTYPE_Q6_K), &all, &one, notes, sizeof notes), 1, "%s",
                 notes);
    cr_expect_eq(all.quant_type_gweights[FR_DTYPE_Q6_K], 15.0);
    cr_expect(strstr(notes, "all-threads q6_k_gflops 10 < one core's 15"), "%s", notes);
}

/* Weights of each type a block reads, counted from the formats table (per layer, per part). */
static void count_types(const struct qwen3_config *c, const struct weight_formats *f, enum block_id id,
                        double out[FR_DTYPE_COUNT]) {
    memset(out, 0, sizeof(double) * FR_DTYPE_COUNT);
    const double h = c->hidden, q = (double)c->n_heads * c->head_dim,
                 kv = (double)c->n_kv_heads * c->head_dim;
    const double I = c->intermediate;
    struct part {
        enum wpart p;
        double rows, cols;
    } parts[3];
    int n = 0;
    switch (id) {
    case BLOCK_QKV_PROJ:
        parts[0] = (struct part){WPART_Q, q, h}, parts[1] = (struct part){WPART_K, kv, h};
        parts[2] = (struct part){WPART_V, kv, h}, n = 3;
        break;
    case BLOCK_O_PROJ:
        parts[0] = (struct part){WPART_O, h, q}, n = 1;
        break;
    case BLOCK_GATE_UP_PROJ:
        parts[0] = (struct part){WPART_GATE, I, h}, parts[1] = (struct part){WPART_UP, I, h}, n = 2;
        break;
    case BLOCK_DOWN_PROJ:
        parts[0] = (struct part){WPART_DOWN, h, I}, n = 1;
        break;
    case BLOCK_LM_HEAD:
        if (fr_dtype_is_quant(f->lm_head)) out[f->lm_head] = (double)c->vocab * h;
        return;
    default:
        return;
    }
    for (int l = 0; l < c->n_layers; l++)
        for (int i = 0; i < n; i++) {
            const enum fr_dtype t = f->layer[l][parts[i].p];
            if (fr_dtype_is_quant(t)) out[t] += parts[i].rows * parts[i].cols;
        }
}

static bool close_rel(double a, double b, double rel) {
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

/* Q4_K_M on tiny256: layer 2's attn_v and ffn_down and the embedding (the tied LM head) in Q6_K, the rest
 * Q4_K. Each block's quantised weights per type are the counts of the formats table; on the Zen 3 rates the
 * int8 dot term is sum_t weights_t / rate_t (qkv_proj: q4_k and q6_k parts each on its own roof), and the
 * one-roof pricing of every weight at Q4_K's would have been faster (the "above roof" the issue saw). */
Test(format_roofs, mixed_int8_term_is_the_per_format_sum) {
    struct qwen3_config c = tiny256();
    struct weight_formats f;
    struct fr_err err = {{0}};
    cr_assert_eq(weight_mix_formats(WEIGHT_MIX_Q4_K_M, &c, &f, &err), 0, "%s", err.msg);
    cr_assert_gt(weight_formats_count(&f, FR_DTYPE_Q6_K), 0);
    cr_assert_gt(weight_formats_count(&f, FR_DTYPE_Q4_K), 0);
    struct ceilings ce;
    zen3_ceilings(&ce);
    struct roofline_rates all, one;
    char notes[1024];
    roofs_from_ceilings(&ce, &all, &one, notes, sizeof notes);
    roofs_set_quant_types(&ce, BIT(FR_DTYPE_Q4_K) | BIT(FR_DTYPE_Q6_K), &all, &one, notes, sizeof notes);
    const double rate[FR_DTYPE_COUNT] = {[FR_DTYPE_Q4_K] = 77.0 / 2, [FR_DTYPE_Q6_K] = 45.0 / 2};
    const struct cost_opts co = {FR_DTYPE_Q4_K, FR_DTYPE_BF16, &f};
    int mixed = 0;
    for (int id = 0; id < BLOCK_COUNT; id++) {
        struct block_cost b;
        cost_block(&c, &co, (enum block_id)id, 3, SAMPLER_VARIANT_GREEDY, &b);
        double want[FR_DTYPE_COUNT], sum_w = 0, sum_f = 0, want_s = 0, one_roof_s = 0;
        count_types(&c, &f, (enum block_id)id, want);
        const char *name = block_name((enum block_id)id);
        for (int t = 0; t < FR_DTYPE_COUNT; t++) {
            cr_expect(close_rel(b.quant_type_weights[t], want[t], 1e-12), "%s %s: %.17g, counted %.17g", name,
                      fr_dtype_name((enum fr_dtype)t), b.quant_type_weights[t], want[t]);
            sum_w += b.quant_type_weights[t], sum_f += b.quant_type_flops[t];
            if (want[t] > 0)
                want_s += want[t] / (rate[t] * 1e9), one_roof_s += want[t] / (rate[FR_DTYPE_Q4_K] * 1e9);
        }
        cr_expect(close_rel(sum_w, b.quant_weights, 1e-12), "%s: per-type weights sum to the total", name);
        cr_expect(close_rel(sum_f, b.quant_flops, 1e-12), "%s: per-type FLOPs sum to the total", name);
        if (!(b.quant_weights > 0)) continue;
        /* as cmd_run prices it: each format's FLOPs off the FMA roof, its weights on its own roof */
        struct roofline_work w = {.flops = b.flops, .parallel = true};
        for (int t = 0; t < FR_DTYPE_COUNT; t++)
            w.flops -= b.quant_type_flops[t], w.quant_type_weights[t] = b.quant_type_weights[t];
        struct roofline_prediction p;
        cr_assert_eq(roofline_predict(&all, &one, &w, &p, &err), 0, "%s: %s", name, err.msg);
        cr_expect(close_rel(p.term_s[ROOFLINE_TERM_INT8], want_s, 1e-12),
                  "%s: int8 dot %.6g s, by hand %.6g s", name, p.term_s[ROOFLINE_TERM_INT8], want_s);
        cr_expect(close_rel(p.quant_type_s[FR_DTYPE_Q6_K], want[FR_DTYPE_Q6_K] / 22.5e9, 1e-12) ||
                      want[FR_DTYPE_Q6_K] == 0,
                  "%s: the q6_k part", name);
        char fmt[COST_FORMAT_LEN];
        cost_block_format(&b, co.kv, fmt, sizeof fmt);
        if (want[FR_DTYPE_Q6_K] > 0 && want[FR_DTYPE_Q4_K] > 0) {
            mixed++;
            cr_expect_str_eq(fmt, "q4_k+q6_k", "%s", name);
            cr_expect_gt(p.term_s[ROOFLINE_TERM_INT8], one_roof_s * (1 + 1e-9),
                         "%s: Q6_K's slower roof costs more than Q4_K's", name);
        }
    }
    cr_expect_eq(mixed, 2, "qkv_proj (attn_v) and down_proj (ffn_down) mix q4_k and q6_k");

    /* the format names: a block's matrices, the KV cache's type, f32 for the rest */
    static const struct {
        enum block_id id;
        const char *bf16_kv, *f32_kv;
    } names[] = {
        {BLOCK_EMBED, "q6_k", "q6_k"},    {BLOCK_QKV_PROJ, "q4_k+q6_k", "q4_k+q6_k"},
        {BLOCK_O_PROJ, "q4_k", "q4_k"},   {BLOCK_LM_HEAD, "q6_k", "q6_k"},
        {BLOCK_ATTENTION, "bf16", "f32"}, {BLOCK_KV_APPEND, "bf16", "f32"},
        {BLOCK_ATTN_NORM, "f32", "f32"},  {BLOCK_SAMPLER, "f32", "f32"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct block_cost b;
        char fmt[COST_FORMAT_LEN];
        cost_block(&c, &co, names[i].id, 3, SAMPLER_VARIANT_GREEDY, &b);
        cost_block_format(&b, FR_DTYPE_BF16, fmt, sizeof fmt);
        cr_expect_str_eq(fmt, names[i].bf16_kv, "%s", block_name(names[i].id));
        cost_block_format(&b, FR_DTYPE_F32, fmt, sizeof fmt);
        cr_expect_str_eq(fmt, names[i].f32_kv, "%s", block_name(names[i].id));
    }
    struct block_cost every = {0};
    for (int t = 0; t < FR_DTYPE_COUNT; t++)
        if (fr_dtype_is_quant((enum fr_dtype)t)) every.wtypes |= BIT(t);
    char fmt[COST_FORMAT_LEN], small[8];
    cost_block_format(&every, FR_DTYPE_BF16, fmt, sizeof fmt);
    cr_expect_str_eq(fmt, "q8_0+q4_0+q4_k+q5_k+q6_k", "COST_FORMAT_LEN holds every quantised type");
    cost_block_format(&every, FR_DTYPE_BF16, small, sizeof small);
    cr_expect_str_eq(small, "q8_0+q4", "a short buffer holds what fits");
}

/* A uniform model: the per-type figures are the totals, and the prediction priced per format is the one-roof
 * prediction, bit for bit, whether the formats table is given or not. */
Test(format_roofs, uniform_figures_unchanged) {
    const struct qwen3_config cfgs[] = {tiny256(), fixture_qwen3_06b_config()};
    static const enum fr_dtype types[] = {FR_DTYPE_BF16, FR_DTYPE_Q8_0, FR_DTYPE_Q4_0, FR_DTYPE_Q4_K,
                                          FR_DTYPE_Q6_K};
    struct ceilings ce;
    zen3_ceilings(&ce);
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++)
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
            const enum fr_dtype t = types[i];
            struct weight_formats f;
            weight_formats_uniform(&f, cfgs[k].n_layers, t);
            const struct cost_opts bare = {t, FR_DTYPE_BF16, NULL}, with = {t, FR_DTYPE_BF16, &f};
            struct roofline_rates all, one, all1, one1;
            char notes[1024];
            roofs_from_ceilings(&ce, &all, &one, notes, sizeof notes);
            all1 = all, one1 = one;
            roofs_set_quant(&ce, t, &all1, &one1, notes, sizeof notes);
            roofs_set_quant_types(&ce, BIT(t), &all, &one, notes, sizeof notes);
            for (int id = 0; id < BLOCK_COUNT; id++) {
                struct block_cost a[2];
                cost_block(&cfgs[k], &bare, (enum block_id)id, 7, SAMPLER_VARIANT_CHAIN, &a[0]);
                cost_block(&cfgs[k], &with, (enum block_id)id, 7, SAMPLER_VARIANT_CHAIN, &a[1]);
                const char *name = block_name((enum block_id)id);
                cr_expect_eq(a[0].quant_weights, a[1].quant_weights, "%s", name);
                for (int m = 0; m < 2; m++) {
                    const struct block_cost *c = &a[m];
                    for (int u = 0; u < FR_DTYPE_COUNT; u++) {
                        cr_expect_eq(c->quant_type_weights[u], u == (int)t ? c->quant_weights : 0, "%s",
                                     name);
                        cr_expect_eq(c->quant_type_flops[u], u == (int)t ? c->quant_flops : 0, "%s", name);
                    }
                    /* the one-roof path (a scalar rate) against the per-format one */
                    struct roofline_work w1 = {.flops = c->flops, .parallel = c->parallel != 0};
                    for (int l = 0; l < ROOFLINE_LEVELS; l++) w1.level_bytes[l] = c->level_bytes[l];
                    struct roofline_work w2 = w1;
                    if (c->quant_weights > 0) {
                        w1.flops -= c->quant_flops, w1.quant_weights = c->quant_weights;
                        w2.flops -= c->quant_type_flops[t],
                            w2.quant_type_weights[t] = c->quant_type_weights[t];
                    }
                    struct roofline_prediction p1, p2;
                    struct fr_err err = {{0}};
                    cr_assert_eq(roofline_predict(&all1, &one1, &w1, &p1, &err), 0, "%s: %s", name, err.msg);
                    cr_assert_eq(roofline_predict(&all, &one, &w2, &p2, &err), 0, "%s: %s", name, err.msg);
                    cr_expect_eq(p1.predicted_s, p2.predicted_s, "%s %s", name, fr_dtype_name(t));
                    cr_expect_eq(p1.term_s[ROOFLINE_TERM_INT8], p2.term_s[ROOFLINE_TERM_INT8], "%s", name);
                    cr_expect_eq(p1.bound, p2.bound, "%s", name);
                }
            }
        }
}

/* run.json and blocks.csv carry each block's format, and a run.json written before the field existed (none
 * in blocks[]) still loads, its formats empty. */
Test(format_roofs, format_written_and_old_files_load) {
    struct run_report *r = calloc(1, sizeof *r);
    cr_assert_not_null(r);
    report_fixture_fill(r, 1.0);
    for (int i = 0; i < r->n_blocks; i++) snprintf(r->blocks[i].format, sizeof r->blocks[i].format, "f32");
    snprintf(r->blocks[BLOCK_QKV_PROJ].format, sizeof r->blocks[BLOCK_QKV_PROJ].format, "q4_k+q6_k");
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    struct fr_err err = {{0}};
    cr_assert_eq(report_write_data(r, dir, &err), 0, "%s", err.msg);
    char *csv = tu_slurp(dir, "blocks.csv");
    cr_assert_not_null(csv);
    cr_expect(strstr(csv, ",steal_s,format,"), "blocks.csv header: %.400s", csv);
    cr_expect(strstr(csv, ",q4_k+q6_k,") || strstr(csv, ",q4_k+q6_k\n"), "qkv_proj's format");
    free(csv);
    char *json = tu_slurp(dir, "run.json");
    cr_assert_not_null(json);
    struct run_report *back = calloc(1, sizeof *back);
    cr_assert_not_null(back);
    cr_assert_eq(report_json_parse(json, strlen(json), "run.json", back, &err), 0, "%s", err.msg);
    cr_expect_str_eq(back->blocks[BLOCK_QKV_PROJ].format, "q4_k+q6_k");
    cr_expect_str_eq(back->blocks[BLOCK_ATTN_NORM].format, "f32");
    /* the same file without the field */
    cJSON *root = cJSON_Parse(json);
    cr_assert_not_null(root);
    cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(root, "blocks")) cJSON_DeleteItemFromObject(b, "format");
    char *old = cJSON_PrintUnformatted(root);
    cr_assert_not_null(old);
    cr_expect(!strstr(old, "\"format\""));
    memset(back, 0, sizeof *back);
    cr_assert_eq(report_json_parse(old, strlen(old), "old.json", back, &err), 0, "%s", err.msg);
    cr_expect_str_eq(back->blocks[BLOCK_QKV_PROJ].format, "");
    cr_expect_eq(back->n_blocks, r->n_blocks);
    free(old);
    cJSON_Delete(root);
    free(json);
    free(back);
    free(r);
    tu_rm_tree(dir);
}

/* The column of a CSV header named key (0-based), -1 when absent. */
static int csv_column(const char *header, const char *key) {
    int col = 0;
    const size_t n = strlen(key);
    for (const char *p = header; *p && *p != '\n'; col++) {
        const size_t len = strcspn(p, ",\n");
        if (len == n && strncmp(p, key, n) == 0) return col;
        p += len + (p[len] == ',');
    }
    return -1;
}

/* Field col of the CSV line starting at line, into out. */
static void csv_field(const char *line, int col, char *out, size_t len) {
    for (int i = 0; i < col && line; i++) {
        line = strchr(line, ',');
        if (line) line++;
    }
    size_t n = line ? strcspn(line, ",\n") : 0;
    if (n >= len) n = len - 1;
    memcpy(out, line ? line : "", n);
    out[n] = '\0';
}

static double json_ceiling(cJSON *root, const char *name) {
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "ceilings")) {
        cJSON *n = cJSON_GetObjectItem(c, "name");
        if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
            return cJSON_GetNumberValue(cJSON_GetObjectItem(c, "value"));
    }
    return NAN;
}

/* A quick run of the Q4_K_M mix on synthetic tiny256 weights (-O3 binary): each block names its format in
 * run.json, blocks.csv and report.md; the LM head (Q6_K) is priced on Q6_K's roof, not the run's Q4_K. */
Test(format_roofs, quick_mixed_run_names_formats, .timeout = 240) {
    char parent[] = "/tmp/fr-fmt-XXXXXX";
    cr_assert(mkdtemp(parent));
    char model[600], path[700];
    snprintf(model, sizeof model, "%s/model", parent);
    snprintf(path, sizeof path, "mkdir -p '%s'", model);
    cr_assert_eq(system(path), 0);
    cr_assert_eq(fixture_write_config_json(model, tiny256_shape, 10000.0), 0);
    char out[620], args[2048];
    snprintf(out, sizeof out, "%s/out", parent);
    snprintf(args, sizeof args,
             "--model %s --dtype q4_k_m --quick --test-sizes --context 1 --batch none --no-plots "
             "--no-history --out %s",
             model, out);
    static struct cli_result res;
    cli_run(&res, 1, args);
    cr_assert_eq(res.status, 0, "run failed: %s", res.err);
    char dir[1024];
    cli_find_run(out, dir, sizeof dir);

    char *json = tu_slurp(dir, "run.json");
    cr_assert_not_null(json);
    cJSON *root = cJSON_Parse(json);
    cr_assert_not_null(root);
    /* the mix named beside the commonest dtype: for the history's series and compare's check */
    const cJSON *prov = cJSON_GetObjectItem(root, "provenance");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(prov, "dtype")), "q4_k");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(prov, "weights_mix")), "q4_k_m");
    const char *conv = cJSON_GetStringValue(cJSON_GetObjectItem(prov, "weights_conversion"));
    cr_expect(conv && strncmp(conv, "llama.cpp's q4_k_m mix (q4_k ", 29) == 0, "%s", conv ? conv : "(none)");
    static const struct {
        const char *block, *format;
    } want[] = {{"embed", "q6_k"},          {"attn_norm", "f32"}, {"qkv_proj", "q4_k+q6_k"},
                {"attention", "bf16"},      {"o_proj", "q4_k"},   {"gate_up_proj", "q4_k"},
                {"down_proj", "q4_k+q6_k"}, {"lm_head", "q6_k"},  {"sampler", "f32"}};
    int found = 0;
    cJSON *b;
    double lm_predicted = NAN;
    const char *lm_bound = "";
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(root, "blocks")) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(b, "name"));
        const char *format = cJSON_GetStringValue(cJSON_GetObjectItem(b, "format"));
        cr_expect(format && format[0], "blocks[] %s has no format", name ? name : "?");
        for (size_t i = 0; name && format && i < sizeof want / sizeof want[0]; i++)
            if (strcmp(name, want[i].block) == 0) {
                cr_expect_str_eq(format, want[i].format, "%s", name);
                found++;
            }
        if (name && strcmp(name, "lm_head") == 0) {
            lm_predicted = cJSON_GetNumberValue(cJSON_GetObjectItem(b, "predicted_s"));
            lm_bound = cJSON_GetStringValue(cJSON_GetObjectItem(b, "bound"));
        }
    }
    cr_expect_eq(found, (int)(sizeof want / sizeof want[0]));
    /* the LM head's 300 x 256 Q6_K weights at Q6_K's rate (all threads, or one core's where lower) */
    const double q6 = json_ceiling(root, "q6_k_gflops"), q6_one = json_ceiling(root, "q6_k_1core_gflops");
    const double w = 300.0 * 256, at_all = w / (fmax(q6, q6_one) / 2 * 1e9), at_one = w / (q6_one / 2 * 1e9);
    cr_expect(isfinite(q6) && isfinite(q6_one), "the q6_k roof was measured");
    cr_expect(lm_predicted >= at_all * (1 - 1e-9), "lm_head predicted %.6g s below its Q6_K term %.6g s",
              lm_predicted, at_all);
    if (lm_bound && strcmp(lm_bound, "int8 dot") == 0)
        cr_expect(close_rel(lm_predicted, at_all, 1e-9) || close_rel(lm_predicted, at_one, 1e-9),
                  "lm_head int8-dot bound at %.6g s: Q6_K's term is %.6g (one core %.6g)", lm_predicted,
                  at_all, at_one);
    cJSON_Delete(root);
    free(json);

    char *csv = tu_slurp(dir, "blocks.csv");
    cr_assert_not_null(csv);
    const int col = csv_column(csv, "format");
    cr_assert_geq(col, 0, "blocks.csv has no format column: %.300s", csv);
    const char *row = strstr(csv, "\nqkv_proj,");
    cr_assert_not_null(row);
    char field[64];
    csv_field(row + 1, col, field, sizeof field);
    cr_expect_str_eq(field, "q4_k+q6_k");
    free(csv);

    char *md = tu_slurp(dir, "report.md");
    cr_assert_not_null(md);
    cr_expect(strstr(md, "| bound | format |"), "report.md's block table has a format column");
    cr_expect(strstr(md, "| q4_k+q6_k |") && strstr(md, "| q6_k |"), "report.md names the formats");
    cr_expect(strstr(md, "- q4_k's compute roof, measured") && strstr(md, "- q6_k's compute roof, measured"),
              "one roof line per format: %s", md);
    free(md);
    tu_rm_tree(parent);
}

/* A re-measure raises only the figures it measured faster (by more than 0.1 %), a figure the ceilings could
 * not measure included, and says each change; slower or equal ones, and the other ceilings, stay. */
Test(format_roofs, a_faster_re_measure_raises_only_its_roofs) {
    struct ceilings c = {0}, later = {0};
    const struct ceiling_figure at = {
        .measured = true, .best = 80.0, .median = 75.0, .min = 9.0, .max = 80.0, .reps = 30};
    c.all[CEILING_Q4_K_DOT] = c.all[CEILING_Q6_K_DOT] = c.one[CEILING_Q4_K_DOT] = at;
    c.all[CEILING_PEAK_FLOPS] = at;
    snprintf(c.all[CEILING_Q5_K_DOT].why, sizeof c.all[CEILING_Q5_K_DOT].why, "no L2");
    later.all[CEILING_Q4_K_DOT] =
        (struct ceiling_figure){.measured = true, .best = 110.5, .median = 104.0, .reps = 30};
    later.all[CEILING_Q6_K_DOT] =
        (struct ceiling_figure){.measured = true, .best = 80.05, .reps = 30}; /* < 0.1 % */
    later.one[CEILING_Q4_K_DOT] =
        (struct ceiling_figure){.measured = true, .best = 70.0, .reps = 30}; /* slower */
    later.all[CEILING_Q5_K_DOT] = (struct ceiling_figure){.measured = true, .best = 60.0, .reps = 30};
    later.all[CEILING_PEAK_FLOPS] = (struct ceiling_figure){.measured = true, .best = 999.0, .reps = 5};
    char notes[256] = "";
    cr_expect_eq(ceilings_raise_quant(&c, &later, "after the blocks", notes, sizeof notes), 2);
    cr_expect_eq(c.all[CEILING_Q4_K_DOT].best, 110.5);
    cr_expect_eq(c.all[CEILING_Q4_K_DOT].median, 104.0, "the raised figure is the later window's own");
    cr_expect_eq(c.all[CEILING_Q6_K_DOT].best, 80.0);
    cr_expect_eq(c.one[CEILING_Q4_K_DOT].best, 80.0);
    cr_expect(c.all[CEILING_Q5_K_DOT].measured && c.all[CEILING_Q5_K_DOT].best == 60.0);
    cr_expect_eq(c.all[CEILING_PEAK_FLOPS].best, 80.0, "not a format roof");
    cr_expect_str_eq(notes,
                     "q4_k_gflops 80.0 -> 110.5 (after the blocks); q5_k_gflops unmeasured -> 60.0 (after "
                     "the blocks)");
}
