/* The batch sweep phase of the full run (bench/cli/run_batch.h): bench/batch_bench.c times the steps, the
 * cost model and this run's roofs give each row's roofs and the ridges. Checked end to end by
 * tests/test_run.c (the quick run's batch rows, batch.csv and run.json). */
#include "bench/cli/run_batch.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/batch_bench.h"
#include "bench/report/report_batch.h"
#include "kernels/gemm_onednn.h"
#include "model/cost.h"
#include "model/decode_batch.h"

static long max_batch(const struct run_batch_opts *o) {
    long m = 1;
    for (int i = 0; i < o->n_batches; i++) m = o->batches[i] > m ? o->batches[i] : m;
    return m;
}

size_t run_batch_bytes(const struct run_batch_opts *o, size_t *openblas_extra) {
    *openblas_extra = 0;
    if (o->with_openblas && o->weights->wtype != FR_DTYPE_F32) {
        struct qwen3_weight_sizes sz;
        struct fr_err e;
        if (qwen3_weights_sizes(o->cfg, FR_DTYPE_F32, &sz, &e) == 0) *openblas_extra = sz.total_bytes;
    }
    return decode_batch_bytes(o->cfg, (int)max_batch(o), (int)o->context + 1, o->kvtype);
}

/* The report rows of one sweep. */
static void fill_rows(const struct run_batch_opts *o, enum fr_dtype wt, const char *backend,
                      const struct batch_bench_result *res, int n, struct run_report *rep) {
    struct cost_opts co = {wt, o->kvtype, wt == o->weights->wtype ? &o->weights->formats : NULL};
    const struct roofline *rf = o->roofs;
    for (int i = 0; i < n && rep->n_batch < REPORT_MAX_BATCH; i++) {
        struct report_batch *b = &rep->batch[rep->n_batch++];
        struct step_cost sc;
        struct block_cost pc;
        cost_step_batch(o->cfg, &co, o->context, res[i].batch, SAMPLER_VARIANT_CHAIN, &sc);
        cost_batch_projections(o->cfg, &co, o->context, res[i].batch, &pc);
        b->batch = res[i].batch, b->context = o->context;
        snprintf(b->backend, sizeof b->backend, "%s", backend);
        snprintf(b->dtype, sizeof b->dtype, "%s", fr_dtype_name(wt));
        b->flops = sc.total.flops, b->bytes = sc.total.bytes, b->dram_bytes = sc.total.dram_bytes;
        b->memory_roof_s =
            sc.total.dram_bytes / (rf->bw_gbs * 1e9) + sc.total.cache_bytes / (rf->cache_gbs * 1e9);
        b->compute_roof_s = sc.total.flops / (rf->peak_gflops * 1e9);
        b->predicted_s = fmax(b->memory_roof_s, b->compute_roof_s);
        b->measured = res[i].step;
        b->tokens_per_s = (double)res[i].batch / res[i].step.median_s;
        b->efficiency = b->predicted_s / res[i].step.median_s;
        b->above_roof = report_is_above_roof(false, b->efficiency);
        b->proj_flops = pc.flops, b->proj_bytes = pc.bytes;
        b->proj_predicted_s = roofline_predicted_split_s(rf, pc.flops, pc.dram_bytes, pc.cache_bytes, NULL);
        b->proj_s = res[i].proj_median_s;
        if (res[i].read.reps > 0) {
            double read_bytes = (double)o->read_n * sizeof(float);
            b->paired_read_gbs = read_bytes / res[i].read.median_s / 1e9;
            b->paired_efficiency = sc.total.dram_bytes / read_bytes / res[i].step_over_read;
        }
    }
}

static int sweep(struct decode_batch *bt, const struct run_batch_opts *o, enum fr_dtype wt,
                 const char *backend, struct run_report *rep, struct fr_err *err) {
    int bs[RUN_BATCH_MAX];
    struct batch_bench_result res[RUN_BATCH_MAX];
    for (int i = 0; i < o->n_batches; i++) bs[i] = (int)o->batches[i];
    struct timing_opts t = o->quick ? (struct timing_opts){1, 2, 10, 0.0, NULL, NULL}
                                    : (struct timing_opts){1, 3, 20, 0.0, NULL, NULL};
    if (o->samples) { /* the row suffix batch_bench_sweep appends: the backend, when not the run's own */
        samples_begin_row(o->samples, 0, o->threads, "%s%s", strcmp(backend, "forge") ? ":" : "",
                          strcmp(backend, "forge") ? backend : "");
        t.samples = o->samples;
    }
    if (batch_bench_sweep(bt, o->context, bs, o->n_batches, &t, &o->sampler, o->read_buf, o->read_n, res,
                          err) != 0)
        return -1;
    fill_rows(o, wt, backend, res, o->n_batches, rep);
    return 0;
}

/* Adds "<what>: <why>" to the sweep's note, "; " after what is there. */
static void note_add(struct report_batch_ridge *rr, const char *what, const char *why) {
    size_t at = strlen(rr->note);
    if (at + 1 < sizeof rr->note)
        snprintf(rr->note + at, sizeof rr->note - at, "%s%s: %.200s", at ? "; " : "", what, why);
}

/* The OpenBLAS rows: f32 weights (synthetic, the run's own when they are f32) on sgemm. A failure to set
 * them up is a note; a failed sweep fails the phase, as the forge rows' does. */
static int openblas_rows(struct decode_batch *bt, const struct run_batch_opts *o, struct run_report *rep,
                         struct fr_err *err) {
    struct report_batch_ridge *rr = &rep->batch_ridge;
    struct qwen3_weights w32;
    const struct qwen3_weights *ow = o->weights;
    int own = 0, rc = 0;
    struct fr_err e = {{0}};
    if (ow->wtype != FR_DTYPE_F32) {
        if (qwen3_weights_alloc(&w32, o->cfg, FR_DTYPE_F32, &e) != 0) {
            note_add(rr, "OpenBLAS rows skipped", e.msg);
            return 0;
        }
        own = 1;
        qwen3_weights_init_synthetic(&w32, 0x0f0e6eULL);
        ow = &w32;
    }
    openblas_set_num_threads(o->threads); /* the same team size as the forge rows */
    if (decode_batch_set_weights(bt, ow, MATVEC_BACKEND_OPENBLAS, &e) != 0)
        note_add(rr, "OpenBLAS rows skipped", e.msg);
    else
        rc = sweep(bt, o, FR_DTYPE_F32, "openblas", rep, err);
    if (own) qwen3_weights_free(&w32);
    return rc;
}

/* The oneDNN rows, on the run's own weights; anything oneDNN refuses or fails at is a note, and the rows
 * measured before it are dropped (a vendor library's failure is no failure of the run). Its description line
 * names what ran; its state is freed after, as no later phase uses it. */
static void onednn_rows(struct decode_batch *bt, const struct run_batch_opts *o, struct run_report *rep) {
    struct report_batch_ridge *rr = &rep->batch_ridge;
    struct fr_err e = {{0}};
    const int n_before = rep->n_batch;
    if (decode_batch_set_weights(bt, o->weights, MATVEC_BACKEND_ONEDNN, &e) != 0 ||
        sweep(bt, o, o->weights->wtype, "onednn", rep, &e) != 0) {
        rep->n_batch = n_before;
        note_add(rr, "oneDNN rows skipped", e.msg);
    } else {
        gemm_onednn_describe(o->weights->wtype, rr->onednn, sizeof rr->onednn);
    }
    gemm_onednn_cleanup();
}

int run_batch_phase(const struct run_batch_opts *o, struct run_report *rep, struct fr_err *err) {
    struct decode_batch bt;
    const int cap = (int)max_batch(o);
    if (decode_batch_init(&bt, o->weights, cap, (int)o->context + 1, o->kvtype, o->backend, o->threads,
                          &o->blocking, err) != 0)
        return -1;
    batch_bench_fill(&bt, o->context);
    int rc = sweep(&bt, o, o->weights->wtype, matvec_backend_name(o->backend), rep, err);
    struct report_batch_ridge *rr = &rep->batch_ridge;
    rr->context = o->context;
    if (o->openblas_skipped) note_add(rr, "OpenBLAS rows skipped", o->openblas_skipped);
    if (o->onednn_skipped) note_add(rr, "oneDNN rows skipped", o->onednn_skipped);
    const bool beside = o->backend == MATVEC_BACKEND_FORGE; /* the references stand beside forge's rows */
    if (rc == 0 && beside && o->with_openblas) rc = openblas_rows(&bt, o, rep, err);
    if (rc == 0 && beside && o->with_onednn) onednn_rows(&bt, o, rep);
    decode_batch_free(&bt);
    if (rc != 0) return -1;
    const struct roofline *rf = o->roofs;
    for (int t = 0; t < REPORT_RIDGE_TYPES; t++) { /* every weight format's, the run's own among them */
        const struct cost_opts co = {(enum fr_dtype)t, o->kvtype, NULL};
        rr->step[t] = cost_batch_ridge(o->cfg, &co, o->context, SAMPLER_VARIANT_CHAIN, 0, rf->peak_gflops,
                                       rf->bw_gbs, rf->cache_gbs);
        rr->proj[t] = cost_batch_ridge(o->cfg, &co, o->context, SAMPLER_VARIANT_CHAIN, 1, rf->peak_gflops,
                                       rf->bw_gbs, rf->cache_gbs);
    }
    report_batch_ridge_measured(rep);
    return 0;
}
