/* The prompt-processing phase of the full run (bench/cli/run_prefill.h). Checked end to end by
 * tests/test_run.c (the quick run's prefill rows, prefill.csv and run.json). */
#include "bench/cli/run_prefill.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/prefill_bench.h"
#include "bench/report/compare_verdict.h"
#include "model/cost.h"
#include "model/kv_cache.h"
#include "model/prefill.h"

static long longest(const struct run_prefill_opts *o) {
    long m = 1;
    for (int i = 0; i < o->n_prompt_lens; i++) m = o->prompt_lens[i] > m ? o->prompt_lens[i] : m;
    return m;
}

size_t run_prefill_bytes(const struct run_prefill_opts *o) {
    long n = longest(o);
    return prefill_bytes(o->cfg, (int)(o->depth + n), (int)n, o->kvtype);
}

/* A row's roofs from its cost: the two-level memory term and the FMA term, the larger binding. */
static void row_roofs(const struct roofline *rf, const struct block_cost *bc, struct report_prefill *row) {
    row->flops = bc->flops, row->bytes = bc->bytes, row->dram_bytes = bc->dram_bytes;
    row->memory_roof_s = bc->dram_bytes / (rf->bw_gbs * 1e9) + bc->cache_bytes / (rf->cache_gbs * 1e9);
    row->compute_roof_s = bc->flops / (rf->peak_gflops * 1e9);
    row->predicted_s = fmax(row->memory_roof_s, row->compute_roof_s);
    snprintf(row->bound, sizeof row->bound, "%s",
             row->compute_roof_s >= row->memory_roof_s ? "compute" : "memory");
}

static struct report_prefill *next_row(struct run_report *rep, const struct run_prefill_opts *o, long n,
                                       const char *block) {
    if (rep->n_prefill >= REPORT_MAX_PREFILL) return NULL;
    struct report_prefill *row = &rep->prefill[rep->n_prefill++];
    row->prompt_len = n, row->depth = o->depth;
    snprintf(row->block, sizeof row->block, "%s", block);
    snprintf(row->dtype, sizeof row->dtype, "%s", fr_dtype_name(o->weights->wtype));
    return row;
}

static void fill_rows(const struct run_prefill_opts *o, const struct prefill_bench_result *res,
                      struct run_report *rep) {
    const struct cost_opts co = {o->weights->wtype, o->kvtype, &o->weights->formats};
    struct prefill_cost pc;
    cost_prefill(o->cfg, &co, res->prompt_len, res->depth, SAMPLER_VARIANT_CHAIN, &pc);
    /* the sampler is not part of the prefill: it is the draw after it (sample_s) */
    struct block_cost total = pc.total;
    const struct block_cost *smp = &pc.blocks[BLOCK_SAMPLER];
    total.flops -= smp->flops, total.bytes -= smp->bytes, total.dram_bytes -= smp->dram_bytes;
    total.cache_bytes -= smp->cache_bytes;
    struct report_prefill *all = next_row(rep, o, res->prompt_len, "prefill");
    if (!all) return;
    row_roofs(o->roofs, &total, all);
    all->measured = res->prefill;
    all->share = 1;
    all->efficiency = all->predicted_s / res->prefill.median_s;
    all->above_roof = report_is_above_roof(false, all->efficiency);
    all->tokens_per_s = (double)res->prompt_len / res->prefill.median_s;
    all->sample_s = res->sample.median_s;
    all->ttft_s = res->prefill.median_s + res->sample.median_s;
    for (int b = 0; b < BLOCK_COUNT; b++) {
        if (b == BLOCK_SAMPLER || res->block[b].reps == 0) continue;
        struct report_prefill *row = next_row(rep, o, res->prompt_len, block_name((enum block_id)b));
        if (!row) return;
        row_roofs(o->roofs, &pc.blocks[b], row);
        row->measured = res->block[b];
        row->share = res->block[b].median_s / res->prefill.median_s;
        row->efficiency = row->predicted_s / res->block[b].median_s;
        row->above_roof = report_is_above_roof(false, row->efficiency);
    }
}

int run_prefill_phase(const struct run_prefill_opts *o, struct run_report *rep, struct fr_err *err) {
    struct prefill_state p;
    const long cap = longest(o);
    if (prefill_init(&p, o->weights, (int)(o->depth + cap), (int)cap, o->kvtype, o->backend, o->threads,
                     &o->blocking, err) != 0)
        return -1;
    if (o->depth > 0) kv_cache_fill_random(&p.st.kv, (int)o->depth, 0x9f11ULL + (uint64_t)o->depth);
    /* a prefill is long (seconds at 512 tokens): few repetitions, no minimum time */
    struct timing_opts t = o->quick ? (struct timing_opts){1, 2, 3, 0.0, NULL, NULL}
                                    : (struct timing_opts){1, 3, 5, 0.0, NULL, NULL};
    if (o->repetitions > 0) t.min_reps = t.max_reps = o->repetitions;
    t.samples = o->samples;
    timing_describe_opts(&t, rep->prefill_note, sizeof rep->prefill_note);
    size_t used = strlen(rep->prefill_note);
    snprintf(rep->prefill_note + used, sizeof rep->prefill_note - used,
             " of each prefill after 1 warm-up, unpaired (compute-bound: no DRAM read beside it); the first "
             "draw timed apart");
    int rc = 0;
    for (int i = 0; i < o->n_prompt_lens && rc == 0; i++) {
        struct prefill_bench_result res;
        char key[SAMPLES_ROW_LEN];
        compare_key_prefill_of(o->prompt_lens[i], o->depth, key, sizeof key);
        rc = prefill_bench_run(&p, (int)o->prompt_lens[i], (int)o->depth, key, &t, &o->sampler, &res, err);
        if (rc == 0) fill_rows(o, &res, rep);
    }
    prefill_free(&p);
    return rc;
}
