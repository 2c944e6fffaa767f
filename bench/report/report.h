/* Layer: bench/report/ turns measured records into run.json, CSV, report.md, plots, compare and the results
 * folder; it measures nothing and includes no CLI header.
 * struct run_report: everything one run writes, as plain data. The orchestrator (cmd_run) fills it; the
 * writers of bench/report/report_write.h turn it into run.json, the CSV files, report.md and the plot inputs.
 *
 * Ownership: the struct owns all its storage (fixed-size arrays with counts, fixed-size strings); no
 * pointer inside it is ever freed. It is tens of KB: allocate it with calloc or make it static, then call
 * report_init() so every number starts as NaN ("not measured") and every count at 0.
 *
 * Units: seconds (_s), bytes, FLOPs; bandwidth ceilings in GB/s (1e9 bytes/s), compute ceilings in GFLOP/s.
 * A value that was not measured or is unavailable stays NaN; writers print it as null (JSON), an empty
 * field (CSV) or "n/a" (markdown), never as a number. */
#ifndef FR_REPORT_H
#define FR_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <stdio.h>

#include "roofline/timing.h"
#include "kernels/fr_err.h"
#include "model/blocks.h"

#define REPORT_SCHEMA       "forge-roofline/1"
#define REPORT_MAX_EVENTS   16
#define REPORT_MAX_CEILINGS 48
#define REPORT_MAX_STEPS    24
#define REPORT_MAX_SAMPLER  96
#define REPORT_MAX_BATCH    32
#define REPORT_MAX_PREFILL  64 /* prompt lengths x (blocks + the whole prefill) */
#define REPORT_NAME_LEN     64
#define REPORT_REASON_LEN   256

struct report_provenance {
    char version[32];        /* FR_VERSION */
    char git_commit[48];     /* commit of the build, "" when unknown */
    char command_line[1024]; /* argv joined by spaces */
    char host[128];
    char utc_stamp[32]; /* e.g. 20261129T173000Z (results_dir_stamp) */
    char cpu_model[128];
    char topology[512]; /* hwloc summary, one line */
    int threads;
    char dtype[16];        /* weights, e.g. "bf16" */
    char kv_dtype[16];     /* KV cache, e.g. "bf16" */
    char gemv_backend[32]; /* e.g. "avx512", "scalar", "openblas" */
    char isa[16];          /* kernels, sampler and ceiling kernels: "avx512", "avx2", "scalar" (--isa) */
    bool quick;            /* --quick: fewer repetitions, smaller sweeps */
    double timer_resolution_s;
    char plan[1024];        /* what each figure is the best or median of, and what the sweeps cover (quick or
                               full), in words; "" when unknown (a run.json written before it existed) */
    char roof_notes[2048];  /* what the roofs fell back to or were raised by, in words; "" when nothing */
    char blas_core[256];    /* OpenBLAS's kernel set and why (roofline/blas_core.h); "" when not known */
    char read_kernel[64];   /* the DRAM read kernel of the ceilings and the paired reads (ceilings.h); "" */
    char gemv_threads[384]; /* the threads the matvecs run on: OpenBLAS's pool and its binding, or the team */
    char mm_state[384];     /* transparent huge pages and DAMON (roofline/mm_state.h); "" when not recorded */
    bool damon_on;        /* a DAMON kdamond was on as the run started: the page walks it adds move figures */
    char core_speed[640]; /* each core's speed at the start, between phases, at the end (core_speed.h); "" */
    double core_speed_low;   /* the slowest probe over the fastest (core_speed_low); NaN when not probed */
    char kernel[160];        /* uname: "Linux 6.1.0-18-amd64"; "" in a run.json written before it existed */
    char weights_source[16]; /* "synthetic" or "file" (--weights); "" in runs written before it existed */
    char weights_file[512];  /* the --weights path; "" when synthetic */
    char weights_format[16]; /* "gguf" or "safetensors"; "" when synthetic */
    char weights_sha256[72]; /* the file's SHA-256, 64 hex digits; "" when synthetic */
    char weights_conversion[384]; /* what the load converted, e.g. a k-quant file's mix and the type it runs
                                     in (model/weights_file.h); "" when nothing */
    char weights_mix[16]; /* the tensor mix when the matrices differ in type: "q4_k_m", "q5_k_m" (--dtype),
                           * "mixed" (a file's own); "" when uniform or in runs written before it existed */
    char sampler_logits[384]; /* the logits the step's sampler rows sample, in words; "" when not recorded */
    char lockstep[320];       /* the partner of a run in lockstep (roofline/lockstep.h), in words; "" alone */
};

struct report_event {
    char name[REPORT_NAME_LEN]; /* PAPI event name, e.g. "PAPI_TOT_CYC" */
    bool available;
    char reason[REPORT_REASON_LEN]; /* why it cannot be counted; "" when available */
    char source[REPORT_NAME_LEN];   /* what counted it: "papi", "perf_event", "getrusage"; "" unknown/none */
};

struct report_counters {
    bool available;                 /* at least one event could be counted */
    char reason[REPORT_REASON_LEN]; /* when not available: the library's reason */
    int n_events;
    struct report_event events[REPORT_MAX_EVENTS];
    int threads; /* team threads counted, each with its own event set (0: not recorded) */
    char calibration[REPORT_REASON_LEN];    /* LLC misses x line bytes over a known read, or why not; "" */
    char disturbed_rule[REPORT_REASON_LEN]; /* what marks a repetition disturbed (rep_counts_rule); "" */
    char hardware[REPORT_REASON_LEN];       /* no hardware event counted: said once (counters.h); "" */
};

enum report_ceiling_kind {
    REPORT_CEILING_BANDWIDTH, /* GB/s: a sloped roof */
    REPORT_CEILING_COMPUTE,   /* GFLOP/s: a flat roof */
    REPORT_CEILING_EXP,       /* Gexp/s: the exp roof (not drawn on FLOP axes) */
    REPORT_CEILING_OVERHEAD,  /* Mcall/s: the reciprocal of a fixed cost per call (the overhead floor) */
    /* the matrix engine (roofline/matrix_engine.h), GFLOP/s of bf16 tiles and GOP/s of int8 ones: no kernel
     * of the run uses it yet, so neither is a roof nor the peak */
    REPORT_CEILING_ENGINE,
    REPORT_CEILING_ENGINE_INT,
};
/* "bandwidth", "compute", "exp", "overhead", "engine", "engine_int"; report_ceiling_kind_parse returns -1 for
 * any other text. */
const char *report_ceiling_kind_name(enum report_ceiling_kind kind);
int report_ceiling_kind_parse(const char *name);

struct report_ceiling {
    char name[REPORT_NAME_LEN]; /* e.g. "dram_read", "l2_read", "fma_f32" */
    enum report_ceiling_kind kind;
    double value;            /* the headline figure: best of the repetitions (STREAM's rule) */
    double median, min, max; /* same unit as value */
    int reps;
    bool one_core; /* measured on one core (else on all `threads`) */
    bool roof;     /* draw it as a roof in the roofline plot */
    bool noisy;    /* the repetitions spread more than TIMING_NOISY_CV */
    char why[128]; /* why it is not measured (value NaN); "" otherwise */
};

struct report_model {
    char name[REPORT_NAME_LEN];
    double params; /* parameter count (embedding once when tied) */
    int hidden, intermediate, n_layers, n_heads, n_kv_heads, head_dim, vocab;
    bool tied_embeddings;
    double weight_bytes; /* weight bytes streamed per decode step */
};

/* One row per block of the block table, for one decode step at `run_report.blocks_context`.
 * flops, bytes, predicted_s and measured are totals over the step (all `calls` calls). */
struct report_block {
    enum block_id id;
    char name[REPORT_NAME_LEN]; /* block_name(id) */
    long calls;
    double flops, bytes;
    double predicted_s;
    struct timing_stats measured; /* median_s is the headline measured_s */
    double efficiency;            /* predicted_s / measured_s: 1 = on the roof */
    char bound[16];               /* the binding term: "DRAM", "L2", "FMA", "int8 dot", ... */
    /* The format the block ran in (model/cost.h cost_block_format): its matrices' types, "+"-joined for a
     * mixed block ("q4_k+q6_k"); the KV cache's type for attention and kv_append; "f32" for the rest. ""
     * in a run.json written before the field existed. */
    char format[32];
    bool above_roof;                    /* measured faster than the roof allows: an accounting error */
    double counters[REPORT_MAX_EVENTS]; /* per step, indexed like run_report.counters.events; NaN = none */
    /* The cache-aware roofline (model/cost.h, roofline/roofline.h): bytes per level (DRAM, L1, L2, L3),
     * exps, kernel calls without and with a parallel region, the step team's barriers inside them, the
     * overhead floor (calls, forks and barriers x their fixed costs),
     * the memory terms summed (the non-overlapping alternative, for comparison), and whether the block
     * measured within ROOFLINE_OVERHEAD_FACTOR of its floor (bound "overhead"). */
    double level_bytes[4];
    double exps, kernel_calls, forks, barriers;
    double floor_s, levels_sum_s;
    bool overhead_bound;
    /* The largest term after the binding one (roofline_prediction second, second_s): its name ("" when every
     * other term is 0) and seconds; at ROOFLINE_COBOUND_SHARE of the prediction or more, in a block of
     * REPORT_FIX_SHARE of the step or more, the block is co-bound and the report says what no overlap would
     * cost. */
    char second_bound[16];
    double second_s;
    /* From the counters around each timed repetition (NaN / 0 when not counted): */
    double counters_max[REPORT_MAX_EVENTS]; /* the largest single thread, per step (counters is the sum) */
    double utilization;                     /* task-clock / (wall x threads) */
    int disturbed_reps;                     /* a thread switched out or migrated: left out of measured */
    unsigned disturbed_causes;              /* their enum rep_cause bits; 0: not known (not in run.json) */
    int faulted_reps;                       /* repetitions that took page faults (not steady state) */
    double measured_all_s;                  /* median over every repetition, disturbed ones included */
    double ipc;                             /* instructions / cycles */
    double dram_bytes_counted;              /* LLC misses x line bytes / calibration ratio, per step */
    int switched_reps; /* repetitions with any context switch, voluntary waits included (not disturbed) */
    int steal_reps;    /* disturbed by the hypervisor's steal (roofline/steal.h); 0 when not read */
    double steal_s;    /* mean machine-wide steal per repetition; NaN: not read */
    /* A block that streams from DRAM runs each repetition after an eviction read (the all-threads read-only
     * kernel), so the read and the block see the same load of a shared machine (NaN: not cold, or no DRAM
     * bytes): the read's median GB/s, and the block's DRAM bytes / median time over it. */
    double paired_read_gbs;
    double paired_efficiency;
    /* The same read kernel over the block's own bytes (its matrices, its KV rows: decode_block_spans), run
     * after each repetition behind an eviction of its own (NaN: not run): its median GB/s, and the median
     * over repetitions of the block's DRAM GB/s / its GB/s. Where pages read at different rates (a VM),
     * this separates what the kernel loses from what its pages give. */
    double own_read_gbs;
    double own_read_efficiency;
};

/* One row per context length: one whole decode step. */
struct report_step {
    long context; /* tokens already in the KV cache */
    double bytes, flops;
    double predicted_s;
    struct timing_stats measured;
    double tokens_per_s; /* 1 / measured_s */
    double dram_bytes;   /* of `bytes`, those streamed from DRAM: matrix weights and KV reads */
    double dram_gbs;     /* dram_bytes / measured_s */
    /* The read-only kernel run alternately with the steps (a, b, a, b, ...), so both see the same load of a
     * shared machine: its median GB/s, and the median over pairs of step DRAM GB/s / read GB/s. */
    double paired_read_gbs;
    double paired_efficiency;
    /* The same read kernel over the model's own weight pages, run third in each repetition (NaN unpaired):
     * its median GB/s, and the median of step DRAM GB/s / its GB/s. Where pages read at different rates (a
     * VM), the two efficiencies differ by where the pages lie, not by what the kernels do. */
    double weights_read_gbs;
    double weights_read_efficiency;
    double efficiency; /* predicted_s / measured_s */
    bool above_roof;
    double block_s[BLOCK_COUNT]; /* seconds per step spent in each block (observer); NaN = not observed */
    double unattributed_s;       /* step time not inside any observed block (median over repetitions) */
    /* From the counters around each timed step, as for blocks (NaN / 0 when not counted): */
    double counters[REPORT_MAX_EVENTS];
    double counters_max[REPORT_MAX_EVENTS];
    double utilization;
    int disturbed_reps;
    unsigned disturbed_causes; /* as for blocks */
    int faulted_reps;
    double measured_all_s;
    double ipc;
    double energy_j;           /* joules per step (package + DRAM where counted); NaN: see energy.reason */
    double energy_j_per_token; /* one token per step at batch 1 */
    int switched_reps;         /* as for blocks */
    int steal_reps;            /* as for blocks */
    double steal_s;
};

/* One row per sampler variant, row kind and vocabulary size. */
struct report_sampler {
    char variant[REPORT_NAME_LEN];  /* e.g. "greedy", "topp_sort", "topp_fast" */
    char row_kind[REPORT_NAME_LEN]; /* e.g. "peaked", "flat" */
    long vocab;
    long nucleus; /* tokens kept by top-p on this row; -1 when it does not apply */
    struct timing_stats measured;
};

/* One row per batch size and backend of the batch sweep: a batched step (B sequences, one token each, in
 * lockstep) at `context`. The roofs are this run's: memory roof = DRAM bytes / DRAM read + cache-resident
 * bytes / L2 read, compute roof = FLOPs / peak FMA; the projections (GEMMs) alone likewise. */
struct report_batch {
    long batch, context;
    char backend[16]; /* "forge" (this run's ISA), "openblas" or "onednn" */
    char dtype[16];   /* weights */
    double flops, bytes, dram_bytes;
    double predicted_s;           /* max(memory roof, compute roof) */
    double memory_roof_s;         /* the memory term alone */
    double compute_roof_s;        /* the compute term alone */
    struct timing_stats measured; /* per batched step */
    double tokens_per_s;          /* batch / measured median */
    double efficiency;            /* predicted_s / measured */
    bool above_roof;
    double proj_flops, proj_bytes; /* the projection blocks (GEMMs) of the step */
    double proj_predicted_s;       /* their roof */
    double proj_s;                 /* their measured time in the step (median over repetitions) */
    /* Each step alternated with the all-threads read the decode steps are paired with (NaN unpaired): */
    double paired_read_gbs;   /* read bytes / median read time */
    double paired_efficiency; /* DRAM bytes / read bytes / median over pairs of (step / read): the share of
                               * the paired read's rate the step's DRAM bytes move at, as the step rows' */
};

/* Prompt processing (model/prefill.h): for each prompt length, one row per block of the prefill (all its
 * calls) and one row "prefill" for the whole of it, from embed to the LM head of the last position. The
 * roofs are this run's, as the batch rows': memory roof = DRAM bytes / DRAM read + cache-resident bytes / L2
 * read, compute roof = FLOPs / peak FMA (the GEMMs work in f32, whatever the weights' format). */
struct report_prefill {
    long prompt_len, depth;
    char block[24]; /* a block's name, or "prefill" for the whole */
    char dtype[16]; /* weights */
    double flops, bytes, dram_bytes;
    double predicted_s;           /* max(memory roof, compute roof) */
    double memory_roof_s;         /* the memory term alone */
    double compute_roof_s;        /* the compute term alone */
    char bound[16];               /* "compute" or "memory": the larger term */
    struct timing_stats measured; /* the block's time in one prefill (all its calls), or the whole prefill */
    double share;                 /* of the whole prefill's median (1 for the "prefill" row) */
    double efficiency;            /* predicted_s / measured median */
    bool above_roof;
    /* the "prefill" row only (NaN on block rows): */
    double tokens_per_s; /* pp: prompt_len / measured median */
    double sample_s;     /* the first token's draw from the last logits (median) */
    double ttft_s;       /* time to first token: the prefill's median + sample_s */
};

/* The ridge batch (compute roof = memory roof), predicted from this run's ceilings and measured. */
#define REPORT_RIDGE_TYPES 4 /* bf16, f32, q8_0, q4_0: kernels/dtype.h's enum fr_dtype */
struct report_batch_ridge {
    long context;
    /* Indexed by the weights' enum fr_dtype (bf16, f32, q8_0, q4_0), predicted from the run's ceilings:
     * step the whole batched step (INFINITY: memory-bound at any B), proj the projections (GEMMs) alone.
     * Runs written before q8_0/q4_0 had a ridge read theirs as NaN. */
    double step[REPORT_RIDGE_TYPES];
    double proj[REPORT_RIDGE_TYPES];
    double proj_measured;            /* the run's dtype on forge: where the measured GEMM time's flat part
                                      * (B = 1) meets its compute line (largest B); NaN when unmeasured */
    double leaves_memory_roof_batch; /* smallest B whose measured tokens/s is below 80 % of the memory
                                      * roof's; NaN when none does */
    char note[512];                  /* e.g. why the OpenBLAS rows are absent; "" when nothing to say */
    char onednn[192]; /* what the oneDNN rows ran (kernels/gemm_onednn.h gemm_onednn_describe); "" without */
};

/* The quantised decode against the bf16 decode of the same weights (bench/quant_fidelity.h): figures of a
 * q8_0 or q4_0 run's verify phase, one per format. */
#define REPORT_MAX_FIDELITY 5
struct report_fidelity {
    char dtype[16];         /* "q8_0", "q4_0" */
    int steps, top1_agree;  /* the argmaxes agree at top1_agree of steps positions */
    double kl_mean, kl_max; /* KL(p_bf16 || p_quant), nats */
};

struct run_report {
    struct report_provenance prov;
    struct report_counters counters;
    struct report_counters energy; /* the RAPL / powercap events: available, or the reason not */
    int n_ceilings;
    struct report_ceiling ceilings[REPORT_MAX_CEILINGS];
    struct report_model model;
    long blocks_context; /* context length the block rows were measured at */
    int n_blocks;
    struct report_block blocks[BLOCK_COUNT];
    int n_steps;
    struct report_step steps[REPORT_MAX_STEPS];
    int n_sampler;
    struct report_sampler sampler[REPORT_MAX_SAMPLER];
    int n_batch; /* 0: the run had no batch sweep */
    struct report_batch batch[REPORT_MAX_BATCH];
    struct report_batch_ridge batch_ridge;
    int n_prefill; /* 0: the run processed no prompt */
    struct report_prefill prefill[REPORT_MAX_PREFILL];
    char prefill_note[192];  /* how the prefill rows were measured (repetitions, what was left out) */
    int samples_rows;        /* rows of samples.csv beside run.json (roofline/samples.h); 0: none written */
    int samples_reps;        /* repetitions samples.csv holds (0: not known, as in a run.json read back) */
    int samples_disturbed;   /* of them marked disturbed */
    char samples_causes[64]; /* their causes' words together, e.g. "preempted+migrated" */
    int n_fidelity;          /* 0: not measured (a bf16 or f32 run) */
    struct report_fidelity fidelity[REPORT_MAX_FIDELITY];
    char fidelity_source[192]; /* the weights and tokens compared, in words */
};

/* The one field list of every table of the report, in column order, in the spirit of llama-bench: run.json,
 * the CSV files and the run.json reader all walk these tables, so a field cannot be written under one name
 * and read under another. A field points into its row struct by offset. */
enum report_table {
    REPORT_TABLE_PROVENANCE, /* struct report_provenance (JSON object only) */
    REPORT_TABLE_MODEL,      /* struct report_model (JSON object only) */
    REPORT_TABLE_CEILING,    /* struct report_ceiling */
    REPORT_TABLE_BLOCK,      /* struct report_block */
    REPORT_TABLE_STEP,       /* struct report_step */
    REPORT_TABLE_SAMPLER,    /* struct report_sampler */
    REPORT_TABLE_BATCH,      /* struct report_batch */
    REPORT_TABLE_PREFILL,    /* struct report_prefill */
    REPORT_TABLE_COUNT
};

enum report_field_type {
    REPORT_F_STR,        /* char[size] */
    REPORT_F_DOUBLE,     /* double; NaN = null */
    REPORT_F_INT,        /* int */
    REPORT_F_LONG,       /* long */
    REPORT_F_LONG_OPT,   /* long; negative = null (nucleus) */
    REPORT_F_BOOL,       /* bool */
    REPORT_F_ABOVE_ROOF, /* bool flag at offset, efficiency double at aux: written as report_is_above_roof()
                          */
    REPORT_F_KIND,       /* enum report_ceiling_kind: "bandwidth" or "compute" */
    REPORT_F_UNIT,       /* the unit of the ceiling kind at offset (derived, not read back) */
    REPORT_F_DERIVED,    /* derive(row): CSV only, not read back */
};

#define REPORT_IN_JSON  1u
#define REPORT_IN_CSV   2u
#define REPORT_OPTIONAL 4u /* may be absent from run.json (a key added later): read back as left by init */

struct report_field {
    const char *name;     /* JSON key and CSV column */
    const char *csv_name; /* CSV column when it differs, else NULL */
    enum report_field_type type;
    size_t offset, size, aux;
    double (*derive)(const void *row);
    unsigned where; /* REPORT_IN_JSON | REPORT_IN_CSV */
};

/* The address of a field in its row. */
static inline const void *report_field_at(const void *row, size_t offset) {
    return (const char *)row + offset;
}

/* The fields of a table and their count. */
const struct report_field *report_table_fields(enum report_table t, int *n);

/* Zeroes r, then sets every measured or derived number to NaN and nucleus to -1. */
void report_init(struct run_report *r);

/* num / den, or NaN when either is not finite or den <= 0. */
double report_ratio(double num, double den);
/* How many disturbed repetitions a row's figure still includes: the counters' disturbed count less those
 * left out, which is all of them when fewer than TIMING_MIN_CLEAN_REPS stayed clean. A row with any is not
 * a measurement of the build alone: it is flagged, counted at the top of the findings and never ranked. */
int report_disturbed_kept(const struct timing_stats *m, int disturbed_reps);

/* The step shown beside the block rows: the one at blocks_context, else the first; NULL when none. */
const struct report_step *report_headline_step(const struct run_report *r);

/* Opens dir/name for writing, and closes it checking every write; errors are one line in err. */
FILE *report_file_open(const char *dir, const char *name, struct fr_err *err);
int report_file_close(FILE *f, const char *dir, const char *name, struct fr_err *err);

/* A row is reported as an accounting error when flagged, or when its efficiency exceeds 1. */
bool report_is_above_roof(bool flagged, double efficiency);

/* The unit string of a ceiling kind: "GB/s", "GFLOP/s", "Gexp/s" or "Mcall/s". */
const char *report_ceiling_unit(enum report_ceiling_kind kind);

/* Number formatting shared by the writers and compare. Both write at most 32 bytes into buf.
 * report_fmt_exact: shortest text that reads back to the same double; "" for NaN or infinity (CSV).
 * report_fmt_md: v * scale with `decimals` decimals; "n/a" for NaN or infinity (markdown).
 * report_fmt_pct: a share as a whole percent, "93 %"; "n/a" for NaN or infinity (markdown). */
#define REPORT_FMT_LEN 32
void report_fmt_exact(double v, char *buf);
void report_fmt_md(double v, double scale, int decimals, char *buf);
void report_fmt_pct(double share, char *buf);

#endif
