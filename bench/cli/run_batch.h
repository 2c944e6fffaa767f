/* The full run's batch sweep phase (forge-roofline --batch LIST): batched decode steps at one context for
 * each B on the run's weights and backend, and, beside them, on f32 weights with OpenBLAS sgemm (OpenBLAS
 * 0.3.21 exports no bf16 GEMM) and on the run's own weights (bf16 or f32) with oneDNN's matmul, filling the
 * report's batch rows and ridges. */
#ifndef FR_RUN_BATCH_H
#define FR_RUN_BATCH_H

#include "bench/report/report.h"
#include "kernels/gemm.h"
#include "kernels/sampler.h"
#include "model/config.h"
#include "model/weights.h"
#include "roofline/roofline.h"

#define RUN_BATCH_MAX REPORT_MAX_BATCH / 2

struct run_batch_opts {
    const struct qwen3_config *cfg;
    const struct qwen3_weights *weights; /* the run's */
    enum fr_dtype kvtype;
    enum matvec_backend backend;
    struct gemm_blocking blocking; /* this machine's L1d and L2 (hwloc) */
    const struct roofline *roofs;  /* this run's ceilings */
    long batches[RUN_BATCH_MAX];
    int n_batches;
    long context;
    bool quick;
    bool with_openblas;           /* the f32 OpenBLAS rows beside (when the run's backend is forge) */
    const char *openblas_skipped; /* why they are not, when the caller decided so; NULL otherwise */
    bool with_onednn;             /* the oneDNN rows beside (run's backend forge, weights bf16 or f32) */
    const char *onednn_skipped;   /* why they are not, when the caller decided so; NULL otherwise */
    struct sampler_params sampler;
    const float *read_buf; /* each step is paired with an all-threads read of read_buf[read_n]; NULL: not */
    size_t read_n;
    struct sample_set *samples; /* every repetition of every row kept here (NULL: not kept) */
    int threads; /* the run's (--threads): the forge rows' team, OpenBLAS's pool, oneDNN's, the samples */
};

/* Bytes the phase needs at its peak (the largest batch's caches and buffers, plus f32 weights for the
 * OpenBLAS rows when the run's weights are not f32); 0 on overflow. */
size_t run_batch_bytes(const struct run_batch_opts *o, size_t *openblas_extra);

/* Runs the sweep(s) and fills rep->batch and rep->batch_ridge. Returns 0, or -1 with err set. */
int run_batch_phase(const struct run_batch_opts *o, struct run_report *rep, struct fr_err *err);

#endif
