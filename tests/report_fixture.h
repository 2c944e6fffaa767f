/* A small, hand-made run_report with plausible Qwen3-0.6B numbers for the report and compare tests:
 * 15 blocks at context 1024, five context lengths, three sampler variants on two row kinds. `slow` scales
 * every measured time (a second run for compare); `ctx_bytes` is the KV bytes per cached token. */
#ifndef FR_TEST_REPORT_FIXTURE_H
#define FR_TEST_REPORT_FIXTURE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "bench/report/report.h"
#include "bench/report/report_json.h"
#include "model/blocks.h"

static inline void fixture_stats(struct timing_stats *t, double median_s, double spread) {
    t->median_s = median_s;
    t->mean_s = median_s;
    t->min_s = median_s * (1.0 - spread);
    t->max_s = median_s * (1.0 + spread);
    t->cv = spread / 2;
    t->reps = 20;
    t->noisy = t->cv > TIMING_NOISY_CV;
}

static inline void report_fixture_fill(struct run_report *r, double slow) {
    report_init(r);
    struct report_provenance *p = &r->prov;
    snprintf(p->version, sizeof p->version, "0.1.0");
    snprintf(p->git_commit, sizeof p->git_commit, "61c9de2");
    snprintf(p->command_line, sizeof p->command_line, "forge-roofline --model qwen3-0.6b --threads 2");
    snprintf(p->host, sizeof p->host, "testhost");
    snprintf(p->utc_stamp, sizeof p->utc_stamp, "20261129T173000Z");
    snprintf(p->cpu_model, sizeof p->cpu_model, "Test CPU @ 3.0GHz, \"quoted\"");
    snprintf(p->topology, sizeof p->topology, "1 package, 2 cores, L3 32 MiB");
    p->threads = 2;
    snprintf(p->dtype, sizeof p->dtype, "bf16");
    snprintf(p->kv_dtype, sizeof p->kv_dtype, "bf16");
    snprintf(p->gemv_backend, sizeof p->gemv_backend, "avx512");
    snprintf(p->read_kernel, sizeof p->read_kernel, "avx512");
    p->timer_resolution_s = 1e-9;

    r->counters.available = false;
    snprintf(r->counters.reason, sizeof r->counters.reason, "no virtual PMU (perf_event_open: ENOENT)");
    r->counters.n_events = 2;
    snprintf(r->counters.events[0].name, REPORT_NAME_LEN, "PAPI_TOT_CYC");
    snprintf(r->counters.events[0].reason, REPORT_REASON_LEN, "no virtual PMU");
    snprintf(r->counters.events[1].name, REPORT_NAME_LEN, "PAPI_L3_TCM");
    snprintf(r->counters.events[1].reason, REPORT_REASON_LEN, "no virtual PMU");

    static const struct {
        const char *name;
        enum report_ceiling_kind kind;
        double value;
        bool one_core, roof;
    } ceil[] = {
        {"dram_read", REPORT_CEILING_BANDWIDTH, 19.5, false, true},
        {"dram_copy", REPORT_CEILING_BANDWIDTH, 14.2, false, false},
        {"dram_triad", REPORT_CEILING_BANDWIDTH, 15.1, false, false},
        {"l2_read", REPORT_CEILING_BANDWIDTH, 180.0, false, true},
        {"fma_f32", REPORT_CEILING_COMPUTE, 310.0, false, true},
        {"fma_f32", REPORT_CEILING_COMPUTE, 155.0, true, false},
        {"l3_read", REPORT_CEILING_BANDWIDTH, NAN, false, false},
    };
    r->n_ceilings = (int)(sizeof ceil / sizeof ceil[0]);
    for (int i = 0; i < r->n_ceilings; i++) {
        struct report_ceiling *c = &r->ceilings[i];
        snprintf(c->name, sizeof c->name, "%s", ceil[i].name);
        c->kind = ceil[i].kind;
        c->value = ceil[i].value;
        c->median = c->value * 0.97;
        c->min = c->value * 0.9;
        c->max = c->value;
        c->reps = 10;
        c->one_core = ceil[i].one_core;
        c->roof = ceil[i].roof;
    }
    snprintf(r->ceilings[6].why, sizeof r->ceilings[6].why, "no L3 cache on this machine");
    r->ceilings[6].reps = 0;

    struct report_model *m = &r->model;
    snprintf(m->name, sizeof m->name, "qwen3-0.6b");
    m->params = 596049920;
    m->hidden = 1024, m->intermediate = 3072, m->n_layers = 28, m->n_heads = 16, m->n_kv_heads = 8;
    m->head_dim = 128, m->vocab = 151936, m->tied_embeddings = true;
    m->weight_bytes = 1192099840;

    /* bytes and FLOPs of one call at context 1024, and the efficiency the fake measurement reaches. */
    static const struct {
        double bytes, flops, eff;
    } blk[BLOCK_COUNT] = {
        [BLOCK_EMBED] = {2048 + 4096, 0, 0.5},
        [BLOCK_ATTN_NORM] = {1024 * 10, 4096, 0.4},
        [BLOCK_QKV_PROJ] = {4096.0 * 1024 * 2, 2.0 * 4096 * 1024, 0.85},
        [BLOCK_QK_NORM] = {24 * 128 * 8, 24 * 128 * 4, 0.3},
        [BLOCK_ROPE] = {24 * 128 * 8, 24 * 128 * 3, 0.3},
        [BLOCK_KV_APPEND] = {2 * 1024 * 2 + 2 * 1024 * 4, 0, 0.2},
        [BLOCK_ATTENTION] = {1025.0 * 8 * 128 * 4, 16.0 * 1025 * 128 * 4, 0.6},
        [BLOCK_O_PROJ] = {2048.0 * 1024 * 2, 2.0 * 2048 * 1024, 0.8},
        [BLOCK_MLP_NORM] = {1024 * 10, 4096, 0.4},
        [BLOCK_GATE_UP_PROJ] = {6144.0 * 1024 * 2, 2.0 * 6144 * 1024, 0.9},
        [BLOCK_SWIGLU] = {3072 * 12, 3072 * 6, 0.5},
        [BLOCK_DOWN_PROJ] = {3072.0 * 1024 * 2, 2.0 * 3072 * 1024, 0.88},
        [BLOCK_FINAL_NORM] = {1024 * 10, 4096, 0.4},
        [BLOCK_LM_HEAD] = {151936.0 * 1024 * 2, 2.0 * 151936 * 1024, 0.92},
        [BLOCK_SAMPLER] = {151936.0 * 12, 151936.0 * 5, 0.7},
    };
    r->blocks_context = 1024;
    r->n_blocks = BLOCK_COUNT;
    const struct block_desc *tab = block_table();
    for (int i = 0; i < BLOCK_COUNT; i++) {
        struct report_block *b = &r->blocks[i];
        b->id = (enum block_id)i;
        snprintf(b->name, sizeof b->name, "%s", tab[i].name);
        b->calls = tab[i].scope == BLOCK_SCOPE_LAYER ? 28 : 1;
        b->bytes = blk[i].bytes * (double)b->calls;
        b->flops = blk[i].flops * (double)b->calls;
        b->predicted_s = b->bytes / 19.5e9;
        fixture_stats(&b->measured, b->predicted_s / blk[i].eff * slow, 0.03);
        b->efficiency = b->predicted_s / b->measured.median_s;
        snprintf(b->bound, sizeof b->bound, "memory");
    }

    static const long ctx[] = {1, 256, 1024, 4096, 16384};
    r->n_steps = 5;
    for (int i = 0; i < r->n_steps; i++) {
        struct report_step *s = &r->steps[i];
        s->context = ctx[i];
        s->bytes = m->weight_bytes + 114688.0 * (double)(ctx[i] + 1);
        s->flops = 2.0 * m->params + 28.0 * 16 * 128 * 4 * (double)(ctx[i] + 1);
        s->predicted_s = s->bytes / 19.5e9;
        fixture_stats(&s->measured, s->predicted_s / 0.82 * slow, 0.02);
        s->tokens_per_s = 1.0 / s->measured.median_s;
        s->efficiency = s->predicted_s / s->measured.median_s;
        for (int b = 0; b < BLOCK_COUNT; b++)
            s->block_s[b] = r->blocks[b].measured.median_s * 1.05 *
                            (b == BLOCK_ATTENTION ? (double)(ctx[i] + 1) / 1025 : 1);
    }

    static const char *const variants[] = {"greedy", "topp_sort", "topp_fast"};
    static const char *const kinds[] = {"peaked", "flat"};
    static const long vocabs[] = {1024, 8192, 32768, 151936};
    r->n_sampler = 0;
    for (int v = 0; v < 3; v++)
        for (int k = 0; k < 2; k++)
            for (int n = 0; n < 4; n++) {
                struct report_sampler *s = &r->sampler[r->n_sampler++];
                snprintf(s->variant, sizeof s->variant, "%s", variants[v]);
                snprintf(s->row_kind, sizeof s->row_kind, "%s", kinds[k]);
                s->vocab = vocabs[n];
                double x = (double)vocabs[n];
                double per = v == 0 ? 0.4e-9 : v == 1 ? 3e-9 * log2(x) * (k ? 1.0 : 0.3) : 2e-9;
                s->nucleus = v == 0 ? -1 : (k ? vocabs[n] / 2 : 40);
                fixture_stats(&s->measured, per * x * slow, 0.04);
            }
}

/* Writes a fixture run (times scaled by `slow`) as <parent>/<name>/ with run.json only. */
static inline void report_fixture_write_run(const char *parent, const char *name, double slow,
                                            void (*tweak)(struct run_report *)) {
    struct run_report *r = calloc(1, sizeof *r);
    report_fixture_fill(r, slow);
    if (tweak) tweak(r);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/%s", parent, name);
    cr_assert_eq(mkdir(dir, 0777), 0, "%s", dir);
    char *text = report_json_string(r);
    cr_assert_not_null(text);
    char path[1100];
    snprintf(path, sizeof path, "%s/run.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    free(text);
    free(r);
}

#endif
