/* The full run's prompt-processing phase (forge-roofline --prompt-len LIST [--prompt-depth D]): prefills of
 * each prompt length on the run's weights and backend (bench/prefill_bench.h), each block and the whole
 * prefill against this run's roofs by the cost model (model/cost.h cost_prefill), into the report's prefill
 * rows. */
#ifndef FR_RUN_PREFILL_H
#define FR_RUN_PREFILL_H

#include "bench/report/report.h"
#include "kernels/gemm.h"
#include "kernels/sampler.h"
#include "model/config.h"
#include "model/weights.h"
#include "roofline/roofline.h"

#define RUN_PREFILL_MAX 3 /* prompt lengths a run takes: (blocks + 1) rows each fit REPORT_MAX_PREFILL */

struct run_prefill_opts {
    const struct qwen3_config *cfg;
    const struct qwen3_weights *weights; /* the run's */
    enum fr_dtype kvtype;
    enum matvec_backend backend;
    struct gemm_blocking blocking; /* this machine's L1d and L2 (hwloc) */
    const struct roofline *roofs;  /* two-level: DRAM read, L2 read, peak FMA */
    long prompt_lens[RUN_PREFILL_MAX];
    int n_prompt_lens;
    long depth; /* cached positions before the prompt (--prompt-depth) */
    bool quick;
    int repetitions; /* --repetitions N: every prefill exactly N times; 0: 3 to 5 (quick 2 to 3) */
    struct sampler_params sampler;
    struct sample_set *samples; /* every repetition kept here (NULL: not kept) */
    int threads;
};

/* Bytes the phase needs beyond the weights (the longest prompt's buffers and cache); 0 on overflow. */
size_t run_prefill_bytes(const struct run_prefill_opts *o);

/* Runs the prefills and fills rep->prefill and rep->prefill_note. Returns 0, or -1 with err set (rows
 * measured before the failure are kept). */
int run_prefill_phase(const struct run_prefill_opts *o, struct run_report *rep, struct fr_err *err);

#endif
