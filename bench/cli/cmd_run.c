/* forge-roofline [run] --model M: the full run. In order: machine and ceilings, verify (a failed check stops
 * the run), each block alone with cold weights, whole decode steps at each context with per-block times, the
 * sampler sweep, then the report under results/<host>-<UTC stamp>/ (written under a temporary name, renamed
 * when complete). Predictions come last, once every read of the run is known: the predicted time of a block
 * is the largest of its terms (roofline/roofline.h: bytes per memory level over that level's read ceiling,
 * FLOPs over peak FMA, exps over the exp throughput, calls, forks and team barriers times their fixed costs),
 * with the per-level split of model/cost.h for this machine's caches; a step's is the sum of its blocks'
 * (they run one after another). The DRAM read roof is the best read observed anywhere in the run. Efficiency
 * = predicted / measured. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench/cli/cli.h"
#include "bench/cli/machine_lock.h"
#include "roofline/counters.h"
#include "bench/decode_bench.h"
#include "bench/cli/model_opts.h"
#include "bench/cli/run_batch.h"
#include "bench/cli/run_prefill.h"
#include "bench/cli/run_weights.h"
#include "bench/report/report.h"
#include "bench/report/report_write.h"
#include "bench/report/results_dir.h"
#include "bench/sampler_bench.h"
#include "bench/quant_fidelity.h"
#include "bench/verify_run.h"
#include "model/cost.h"
#include "model/decode.h"
#include "model/weight_mix.h"
#include "model/weights.h"
#include "model/weights_file.h"
#include "roofline/blas_core.h"
#include "roofline/blas_pool.h"
#include "roofline/ceilings.h"
#include "roofline/core_speed.h"
#include "roofline/lockstep.h"
#include "roofline/mm_state.h"
#include "roofline/roofline.h"
#include "roofline/roofs.h"
#include "roofline/topology.h"

#define RUN_MAX_CONTEXTS 16
#define RUN_MAX_EVENTS   8

struct run_args {
    const char *model;
    const char *weights; /* --weights FILE (GGUF or safetensors); NULL: synthetic */
    enum fr_dtype wtype, kvtype;
    int wtype_given; /* --dtype given: a Q8_0 or Q4_0 GGUF file must then hold that type */
    int mix;         /* --dtype named a llama.cpp mix (model/weight_mix.h), else -1 */
    enum matvec_backend gemv;
    int threads;
    long contexts[RUN_MAX_CONTEXTS];
    int n_contexts;
    long block_context;
    const char *events;
    const char *out;
    const char *isa; /* --isa, NULL: the best the CPU has */
    int quick, no_plots;
    int test_sizes;       /* hidden --test-sizes: tiny ceiling and read arrays for the end-to-end tests */
    int no_wait;          /* --no-wait: exit 3 when another run holds the machine lock */
    int contexts_default; /* no --context: the default list, named so in errors */
    long batches[RUN_BATCH_MAX]; /* --batch: the batch sweep (n_batches 0: none) */
    int n_batches;
    long batch_context;                /* --batch-context; -1: the default */
    int batch_default;                 /* no --batch: the default list, cut to what the model holds */
    long prompt_lens[RUN_PREFILL_MAX]; /* --prompt-len: prompt processing (n_prompt_lens 0: none) */
    int n_prompt_lens;
    int prompt_default;   /* no --prompt-len: 512, cut to what the model holds */
    long prompt_depth;    /* --prompt-depth: cached positions before the prompt */
    const char *history;  /* --history STORE (NULL: <out>/history.sqlite) */
    int no_history;       /* --no-history */
    const char *lockstep; /* --lockstep FD,first|second (roofline/lockstep.h); NULL: alone */
    int repetitions;      /* --repetitions N: every block and step row exactly N times; 0: the default */
};

static void usage(FILE *f) {
    fprintf(
        f,
        "usage: forge-roofline --model M [--dtype bf16|f32|q8_0|q4_0|q4_k|q6_k] [--kv bf16|f32] [--threads "
        "N] "
        "[--context LIST]\n"
        "                      [--block-context T] [--gemv forge|openblas] [--events LIST] [--quick]\n"
        "                      [--out DIR] [--no-plots] [--isa scalar|avx2|avx512]\n"
        "                      [--batch LIST|none] [--batch-context T] [--history STORE|--no-history]\n"
        "                      [--no-wait] [--repetitions N] [--lockstep FD,first|second]\n"
        "                      [--prompt-len LIST|none] [--prompt-depth D]\n"
        "Measures the machine, verifies the kernels, times every block and whole decode steps (default\n"
        "contexts 1,1024,4096,16384) and the sampler, and writes results/<host>-<UTC stamp>/ with run.json,\n"
        "CSV files, report.md and roofline plots. --quick: fewer repetitions and contexts (CI, smoke "
        "runs).\n  --isa NAME: " CLI_ISA_HELP "\n"
        "--batch 1,2,4,8,16,32,64 (the default; --quick: 1,2,4): batched decode steps, B sequences in "
        "lockstep\n"
        "at --batch-context T (default 1024; --quick: 256, at most the model's context), on the run's\n"
        "backend, on OpenBLAS sgemm with f32 weights and on oneDNN's matmul with the run's weights beside\n"
        "it; --batch none skips the sweep.\n"
        "--prompt-len 512 (the default, as llama-bench's -p; at most 3 lengths): prompt processing, the\n"
        "prompt's tokens through every layer in one pass (GEMMs, tiled causal attention), the LM head and\n"
        "the first draw for the last position: pp tokens/s and time to first token; --prompt-depth D puts\n"
        "D cached positions before the prompt (llama-bench's -d); --prompt-len none skips it.\n"
        "The complete run is appended to the history store (--history: a SQLite file or postgresql://...;\n"
        "default <out>/history.sqlite); --no-history skips it. docs/history.md.\n"
        "--weights FILE: a GGUF or safetensors checkpoint instead of synthetic weights (a GGUF file's "
        "config\n"
        "comes from its metadata, checked against --model, which may then be left out); the steps' sampler\n"
        "samples the model's logits for a fixed prompt, and the report names the file and its sha256.\n"
        "One run at a time per machine (docs/trust.md): a run waits for the machine lock, saying for what;\n"
        "--no-wait exits 3 instead.\n"
        "--repetitions N: time every block, decode step and prefill row exactly N times (llama-bench's -r; "
        "the\n"
        "default: until a minimum count and time, fewer with --quick); the sampler and ceilings keep "
        "theirs.\n"
        "--lockstep: take turns with a second run, one repetition each (`forge-roofline lockstep` starts "
        "both; "
        "docs/statistics.md).\n");
}

static int parse_args(int argc, char **argv, struct run_args *a) {
    static const struct option opts[] = {{"model", required_argument, 0, 'm'},
                                         {"dtype", required_argument, 0, 'd'},
                                         {"kv", required_argument, 0, 'k'},
                                         {"threads", required_argument, 0, 't'},
                                         {"context", required_argument, 0, 'c'},
                                         {"block-context", required_argument, 0, 'b'},
                                         {"gemv", required_argument, 0, 'g'},
                                         {"events", required_argument, 0, 'e'},
                                         {"out", required_argument, 0, 'o'},
                                         {"quick", no_argument, 0, 'q'},
                                         {"no-plots", no_argument, 0, 'n'},
                                         {"isa", required_argument, 0, 'i'},
                                         {"batch", required_argument, 0, 'B'},
                                         {"batch-context", required_argument, 0, 'C'},
                                         {"history", required_argument, 0, 'H'},
                                         {"no-history", no_argument, 0, 'N'},
                                         {"weights", required_argument, 0, 'w'},
                                         {"no-wait", no_argument, 0, 'W'},
                                         {"lockstep", required_argument, 0, 'L'},
                                         {"repetitions", required_argument, 0, 'r'},
                                         {"test-sizes", no_argument, 0, 'T'},
                                         {"prompt-len", required_argument, 0, 'P'},
                                         {"prompt-depth", required_argument, 0, 'D'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    *a = (struct run_args){.wtype = FR_DTYPE_BF16,
                           .mix = -1,
                           .kvtype = FR_DTYPE_BF16,
                           .out = "results",
                           .block_context = -1,
                           .batch_context = -1,
                           .batch_default = 1,
                           .prompt_default = 1};
    int contexts_given = 0;
    optind = 1;
    opterr = 0;
    int ch;
    long v;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'm':
            a->model = optarg;
            break;
        case 'w':
            a->weights = optarg;
            break;
        case 'd':
            if (model_opts_weights("", optarg, &a->wtype, &a->mix)) return CLI_EXIT_USAGE;
            a->wtype_given = 1;
            break;
        case 'k':
            if (model_opts_dtype("--kv", optarg, &a->kvtype)) return CLI_EXIT_USAGE;
            break;
        case 't':
            if (cli_parse_long(optarg, 1, 4096, &v))
                return cli_usage_error("--threads: expected 1..4096, got '%s'", optarg);
            a->threads = (int)v;
            break;
        case 'c':
            a->n_contexts = cli_parse_long_list(optarg, 0, 1L << 24, a->contexts, RUN_MAX_CONTEXTS);
            if (a->n_contexts < 0)
                return cli_usage_error("--context: expected up to %d comma-separated integers >= 0, got '%s'",
                                       RUN_MAX_CONTEXTS, optarg);
            for (int i = 0; i < a->n_contexts; i++)
                for (int j = 0; j < i; j++)
                    if (a->contexts[i] == a->contexts[j])
                        return cli_usage_error("--context: %ld is given twice in '%s'", a->contexts[i],
                                               optarg);
            contexts_given = 1;
            break;
        case 'b':
            if (cli_parse_long(optarg, 0, 1L << 24, &a->block_context))
                return cli_usage_error("--block-context: expected an integer >= 0, got '%s'", optarg);
            break;
        case 'g':
            if (matvec_backend_parse(optarg, &a->gemv) != 0)
                return cli_usage_error("--gemv: expected forge or openblas, got '%s'", optarg);
            if (a->gemv == MATVEC_BACKEND_ONEDNN) /* its blocks are timed one at a time, in forge's teams */
                return cli_usage_error(
                    "--gemv onednn: the full run times oneDNN in the batch sweep only, "
                    "beside forge's rows (batch:<B>@<T>:onednn); its blocks and decode steps "
                    "run forge or openblas (decode --gemv onednn runs whole steps on it)");
            break;
        case 'e':
            a->events = optarg;
            break;
        case 'o':
            a->out = optarg;
            break;
        case 'q':
            a->quick = 1;
            break;
        case 'T':
            a->test_sizes = a->quick = 1;
            break;
        case 'n':
            a->no_plots = 1;
            break;
        case 'W':
            a->no_wait = 1;
            break;
        case 'L':
            a->lockstep = optarg;
            break;
        case 'r':
            if (cli_parse_long(optarg, 1, 10000, &v))
                return cli_usage_error("--repetitions: expected 1..10000, got '%s'", optarg);
            a->repetitions = (int)v;
            break;
        case 'i':
            a->isa = optarg;
            break;
        case 'B':
            a->batch_default = 0;
            if (strcmp(optarg, "none") == 0) {
                a->n_batches = 0;
                break;
            }
            a->n_batches = cli_parse_long_list(optarg, 1, 4096, a->batches, RUN_BATCH_MAX);
            if (a->n_batches < 0)
                return cli_usage_error("--batch: expected 'none' or up to %d comma-separated integers in "
                                       "[1, 4096], got '%s'",
                                       RUN_BATCH_MAX, optarg);
            for (int i = 0; i < a->n_batches; i++)
                for (int j = 0; j < i; j++)
                    if (a->batches[i] == a->batches[j])
                        return cli_usage_error("--batch: %ld is given twice in '%s'", a->batches[i], optarg);
            break;
        case 'P':
            a->prompt_default = 0;
            if (strcmp(optarg, "none") == 0) {
                a->n_prompt_lens = 0;
                break;
            }
            a->n_prompt_lens = cli_parse_long_list(optarg, 1, 1L << 20, a->prompt_lens, RUN_PREFILL_MAX);
            if (a->n_prompt_lens < 0)
                return cli_usage_error(
                    "--prompt-len: expected 'none' or up to %d comma-separated integers >= 1, "
                    "got '%s'",
                    RUN_PREFILL_MAX, optarg);
            for (int i = 0; i < a->n_prompt_lens; i++)
                for (int j = 0; j < i; j++)
                    if (a->prompt_lens[i] == a->prompt_lens[j])
                        return cli_usage_error("--prompt-len: %ld is given twice in '%s'", a->prompt_lens[i],
                                               optarg);
            break;
        case 'D':
            if (cli_parse_long(optarg, 0, 1L << 24, &a->prompt_depth))
                return cli_usage_error("--prompt-depth: expected an integer >= 0, got '%s'", optarg);
            break;
        case 'C':
            if (cli_parse_long(optarg, 0, 1L << 24, &a->batch_context))
                return cli_usage_error("--batch-context: expected an integer >= 0, got '%s'", optarg);
            break;
        case 'H':
            if (!*optarg) return cli_usage_error("--history: expected a SQLite file or postgresql:// URI");
            a->history = optarg;
            break;
        case 'N':
            a->no_history = 1;
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            return cli_usage_error("unknown or incomplete option '%s' (try --help)", argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error("unexpected argument '%s' (try --help)", argv[optind]);
    if (!a->model && !a->weights)
        return cli_usage_error("--model is required (e.g. --model qwen3-0.6b; try --help)");
    if (a->history && a->no_history) return cli_usage_error("--history and --no-history: choose one");
    int rc = cli_isa_apply("", a->isa, a->gemv);
    if (rc) return rc;
    if (!contexts_given) {
        static const long full[] = {1, 1024, 4096, 16384}, quick[] = {1, 256};
        const long *src = a->quick ? quick : full;
        a->n_contexts = a->quick ? 2 : 4;
        memcpy(a->contexts, src, sizeof *src * (size_t)a->n_contexts);
        a->contexts_default = 1;
    }
    if (a->prompt_default) a->n_prompt_lens = 1, a->prompt_lens[0] = 512;
    if (a->prompt_depth > 0 && a->n_prompt_lens == 0)
        return cli_usage_error("--prompt-depth: no prompt is processed (--prompt-len none)");
    if (a->batch_default) {
        static const long full[] = {1, 2, 4, 8, 16, 32, 64}, quick[] = {1, 2, 4};
        a->n_batches = a->quick ? 3 : 7;
        memcpy(a->batches, a->quick ? quick : full, sizeof full[0] * (size_t)a->n_batches);
    }
    return CLI_EXIT_OK;
}

/* ---- progress on stderr, only when it is a terminal ---- */
struct progress {
    int tty;
    double t0;
    int phase, n_phases;
    const double *estimate_s; /* rough duration of each phase */
};

static void progress_phase(struct progress *p, const char *name) {
    p->phase++;
    if (!p->tty) return;
    double left = 0;
    for (int i = p->phase - 1; i < p->n_phases; i++) left += p->estimate_s[i];
    fprintf(stderr, "[%d/%d] %-28s elapsed %5.1f s, about %.0f s left\n", p->phase, p->n_phases, name,
            timing_now_s() - p->t0, left);
}

/* A report row's figures from a ceiling: its best (the ceiling), median, range and repetitions, or why it
 * is unavailable. */
static void ceiling_row_set(struct report_ceiling *o, const struct ceiling_figure *f) {
    if (f->measured) {
        o->value = f->best, o->median = f->median, o->min = f->min, o->max = f->max;
        o->reps = f->reps, o->noisy = f->noisy, o->why[0] = '\0';
    } else {
        snprintf(o->why, sizeof o->why, "%s", f->why);
    }
}

static void fill_ceilings(struct run_report *rep, const struct ceilings *c) {
    blas_core_describe(rep->prov.blas_core, sizeof rep->prov.blas_core);
    snprintf(rep->prov.read_kernel, sizeof rep->prov.read_kernel, "%s",
             c->read_kernel[0] ? c->read_kernel[0] : "");
    for (int one = 0; one <= 1; one++) {
        for (int k = 0; k < CEILING_COUNT; k++) {
            const struct ceiling_figure *f = one ? &c->one[k] : &c->all[k];
            if (rep->n_ceilings >= REPORT_MAX_CEILINGS) return;
            struct report_ceiling *o = &rep->ceilings[rep->n_ceilings++];
            snprintf(o->name, sizeof o->name, "%s", ceilings_key((enum ceiling_kind)k, one));
            const char *unit = ceilings_unit((enum ceiling_kind)k);
            o->kind = k == CEILING_AMX_BF16          ? REPORT_CEILING_ENGINE
                      : k == CEILING_AMX_INT8        ? REPORT_CEILING_ENGINE_INT
                      : strcmp(unit, "GB/s") == 0    ? REPORT_CEILING_BANDWIDTH
                      : strcmp(unit, "Gexp/s") == 0  ? REPORT_CEILING_EXP
                      : strcmp(unit, "Mcall/s") == 0 ? REPORT_CEILING_OVERHEAD
                                                     : REPORT_CEILING_COMPUTE;
            o->one_core = one;
            o->roof = !one && (k == CEILING_DRAM_READ || k == CEILING_L1_READ || k == CEILING_L2_READ ||
                               k == CEILING_L3_READ || k == CEILING_PEAK_FLOPS);
            ceiling_row_set(o, f);
        }
    }
}

/* The commit the binary was built from, "-dirty" when tracked files differed from it; the Makefile passes it.
 * Asking git at run time would name whatever the checkout holds by then, and a clean commit for a build
 * of modified sources. */
#ifndef FR_GIT_COMMIT
#define FR_GIT_COMMIT ""
#endif

static void fill_provenance(struct run_report *rep, const struct run_args *a, int argc, char **argv,
                            const struct machine *m, const char *stamp) {
    struct report_provenance *p = &rep->prov;
    snprintf(p->version, sizeof p->version, "%s", FR_VERSION);
    snprintf(p->git_commit, sizeof p->git_commit, "%s", FR_GIT_COMMIT);
    size_t off = 0;
    snprintf(p->command_line, sizeof p->command_line, "forge-roofline");
    off = strlen(p->command_line);
    for (int i = 1; i < argc && off < sizeof p->command_line; i++)
        off += (size_t)snprintf(p->command_line + off, sizeof p->command_line - off, " %s", argv[i]);
    if (gethostname(p->host, sizeof p->host) != 0) snprintf(p->host, sizeof p->host, "unknown-host");
    p->host[sizeof p->host - 1] = '\0';
    snprintf(p->utc_stamp, sizeof p->utc_stamp, "%s", stamp);
    snprintf(p->cpu_model, sizeof p->cpu_model, "%s", m->cpu_model);
    struct mm_state mm;
    mm_state_read(&mm, MM_STATE_SYSFS);
    mm_state_describe(&mm, p->mm_state, sizeof p->mm_state);
    p->damon_on = mm.damon_on > 0;
    snprintf(p->topology, sizeof p->topology,
             "%d package(s), %d NUMA node(s), %d cores, %d PUs, L1d %zu KiB, L2 %zu KiB, L3 %zu KiB, memory "
             "%.1f GiB "
             "(OS; NUMA nodes %.1f GiB); %s",
             m->packages, m->numa_nodes, m->cores, m->pus, m->l1d_bytes >> 10, m->l2_bytes >> 10,
             m->l3_bytes >> 10, (double)m->os_memory_bytes / (1u << 30), (double)m->memory_bytes / (1u << 30),
             m->binding);
    p->threads = m->threads;
    snprintf(p->dtype, sizeof p->dtype, "%s", fr_dtype_name(a->wtype));
    snprintf(p->kv_dtype, sizeof p->kv_dtype, "%s", fr_dtype_name(a->kvtype));
    snprintf(p->gemv_backend, sizeof p->gemv_backend, "%s",
             a->gemv == MATVEC_BACKEND_OPENBLAS ? "openblas" : kernel_isa_name(kernel_isa_active()));
    snprintf(p->isa, sizeof p->isa, "%s", kernel_isa_name(kernel_isa_active()));
    p->quick = a->quick;
    p->timer_resolution_s = timing_resolution_s();
    struct utsname u; /* part of the history store's machine key: a kernel update can move every figure */
    if (uname(&u) == 0) snprintf(p->kernel, sizeof p->kernel, "%s %s", u.sysname, u.release);
}

static void fill_model(struct run_report *rep, const struct qwen3_config *cfg, enum fr_dtype wtype,
                       const struct weight_formats *formats) {
    struct report_model *m = &rep->model;
    snprintf(m->name, sizeof m->name, "%s", cfg->name);
    m->params = (double)qwen3_param_count(cfg);
    m->hidden = cfg->hidden, m->intermediate = cfg->intermediate, m->n_layers = cfg->n_layers;
    m->n_heads = cfg->n_heads, m->n_kv_heads = cfg->n_kv_heads, m->head_dim = cfg->head_dim,
    m->vocab = cfg->vocab;
    m->tied_embeddings = cfg->tied_embeddings;
    struct cost_opts o = {wtype, FR_DTYPE_BF16, formats};
    struct step_cost s;
    cost_step(cfg, &o, 0, SAMPLER_VARIANT_CHAIN, &s);
    m->weight_bytes = s.total.weight_bytes;
}

static void describe_counters(struct report_counters *out, const struct counters *c) {
    out->available = c->available;
    out->threads = c->n_threads;
    snprintf(out->reason, sizeof out->reason, "%s", c->reason);
    out->n_events = c->n_events;
    if (out->n_events > REPORT_MAX_EVENTS) out->n_events = REPORT_MAX_EVENTS;
    if (out->n_events > COUNTERS_MAX_EVENTS) out->n_events = COUNTERS_MAX_EVENTS;
    for (int e = 0; e < out->n_events; e++) {
        snprintf(out->events[e].name, sizeof out->events[e].name, "%s", c->events[e].name);
        out->events[e].available = c->events[e].counted;
        snprintf(out->events[e].reason, sizeof out->events[e].reason, "%s", c->events[e].reason);
        snprintf(out->events[e].source, sizeof out->events[e].source, "%s", c->events[e].source);
    }
    snprintf(out->hardware, sizeof out->hardware, "%s", c->hardware_note);
}

/* Everything the run holds, released in reverse order by run_free. */
struct run {
    struct run_args args;
    struct qwen3_config cfg;
    struct machine machine;
    struct ceilings ceilings;
    struct roofline_rates rates_all, rates_one; /* the roofs of this run (roofline/roofs.h) */
    struct roofline batch_roofs;                /* the batch sweep's two-level roof, from rates_all */
    struct cost_caches caches;                  /* the machine the per-level split is for */
    double best_read_gbs;                       /* fastest read observed after the ceilings (NaN: none) */
    const char *best_read_where;
    struct block_cost block_costs[BLOCK_COUNT]; /* at blocks_context */
    struct qwen3_weights weights;
    struct weight_formats formats; /* each matrix's type, the file's own or every one --dtype's */
    int have_weights;
    struct run_weights rw; /* where the weights came from, and the prompt's logits */
    struct decode_state st;
    int have_state;
    struct counters counters;
    int have_counters;
    struct counters energy; /* RAPL / powercap, package-wide */
    int have_energy;
    struct machine_lock lock; /* one run at a time on this machine */
    struct steal_clock steal; /* the hypervisor's steal, read around each repetition */
    int have_steal;
    struct counters_calibration calibration; /* LLC misses x line bytes over a known DRAM read */
    struct run_report *report;
    struct results_dir dir;
    int verify_passed, verify_skipped;
    float *read_buf; /* [read_n] the read-only kernel's array, paired with the decode steps */
    size_t read_n;
    double read_huge, weights_huge; /* shares of the read array and of the weights on huge pages */
    struct core_speed_log speed; /* each core's compute speed at the start, between the phases, at the end */
    struct sample_set samples;   /* every timed repetition of every row: samples.csv */
};

/* The cores' speed between phases (core_speed.h): a failure here is said, and the run goes on. */
static void probe_cores(struct run *r, const char *when) {
    if (core_speed_probe(&r->speed, when, r->machine.threads) != 0)
        fprintf(stderr,
                "forge-roofline: warning: the core speed probe %s failed (out of memory, or a non-finite "
                "attention output)\n",
                when);
}

static void read_region(void *p) {
    const struct run *r = p;
    volatile double sink = ceilings_read_team(r->read_buf, r->read_n, r->machine.threads);
    (void)sink;
}

/* Counter-derived DRAM bytes need LLC misses x line bytes calibrated against a read of known size. */
static void calibrate_llc(struct run *r) {
    if (r->machine.llc_line_bytes == 0) {
        r->calibration = (struct counters_calibration){0};
        snprintf(r->calibration.reason, sizeof r->calibration.reason, "hwloc gives no last-level line size");
        return;
    }
    read_region(r); /* warm the TLB and page tables: the calibrated read is a steady-state one */
    counters_calibrate(&r->counters, read_region, r, (double)r->read_n * sizeof(float),
                       (double)r->machine.llc_line_bytes, &r->calibration);
    const struct counters_calibration *c = &r->calibration;
    char *out = r->report->counters.calibration;
    size_t n = sizeof r->report->counters.calibration;
    if (c->available)
        snprintf(out, n, "%s x %u B = %.4g B counted over %.4g B read: ratio %.3f", c->event,
                 r->machine.llc_line_bytes, c->counted_bytes, c->known_bytes, c->ratio);
    else
        snprintf(out, n, "unavailable: %.200s", c->reason);
}

static void run_free(struct run *r) {
    machine_lock_release(&r->lock);
    if (r->have_steal) steal_close(&r->steal);
    if (r->dir.active) results_dir_abort(&r->dir);
    if (r->have_energy) counters_close(&r->energy);
    if (r->have_counters) counters_close(&r->counters);
    if (r->have_state) decode_state_free(&r->st);
    if (r->have_weights) qwen3_weights_free(&r->weights);
    run_weights_free(&r->rw);
    ceilings_stream_free(r->read_buf, r->read_n);
    samples_free(&r->samples);
    free(r->report);
}

/* Keeps the fastest all-threads read of n floats seen after the ceilings (stats of its repetitions). */
static void note_read(struct run *r, size_t n, const struct timing_stats *st, const char *where) {
    if (st->reps <= 0 || !(st->min_s > 0)) return;
    double gbs = (double)n * sizeof(float) / st->min_s / 1e9;
    if (!(gbs <= r->best_read_gbs)) r->best_read_gbs = gbs, r->best_read_where = where;
}

/* Where one row keeps what the counters saw. */
struct report_counted {
    double *counters, *counters_max, *utilization;
    int *disturbed_reps, *faulted_reps;
    unsigned *disturbed_causes;
    double *measured_all_s, *ipc;
    int *switched_reps;
    int *steal_reps;
    double *steal_s;
};

static void fill_counted(const struct run *r, const struct rep_counts_summary *s, struct report_counted o) {
    int n = r->report->counters.n_events;
    for (int e = 0; e < n; e++) o.counters[e] = s->per_rep[e], o.counters_max[e] = s->thread_max[e];
    *o.utilization = s->utilization;
    *o.disturbed_reps = s->disturbed_reps;
    *o.disturbed_causes = s->disturbed_causes;
    *o.faulted_reps = s->faulted_reps;
    *o.measured_all_s = s->median_all_s;
    *o.ipc = s->ipc;
    *o.switched_reps = s->switched_reps;
    *o.steal_reps = s->steal_reps;
    *o.steal_s = s->steal_s;
}

static int measure_blocks(struct run *r, const struct timing_opts *t) {
    struct run_report *rep = r->report;
    struct cost_opts co = {r->args.wtype, r->args.kvtype, &r->formats};
    long T = rep->blocks_context;
    struct fr_err err = {{0}};
    kv_cache_fill_random(&r->st.kv, (int)T, 0xb10cULL);
    for (int b = 0; b < BLOCK_COUNT; b++) {
        struct report_block *o = &rep->blocks[rep->n_blocks++];
        struct block_cost *c = &r->block_costs[b];
        cost_block_on(&r->cfg, &co, &r->caches, (enum block_id)b, T, SAMPLER_VARIANT_CHAIN, c);
        o->id = (enum block_id)b;
        snprintf(o->name, sizeof o->name, "%s", block_name((enum block_id)b));
        o->calls = c->calls, o->flops = c->flops, o->bytes = c->bytes;
        struct decode_bench_block_reads reads;
        struct decode_bench_counting cnt = {&r->counters, NULL, r->have_steal ? &r->steal : NULL};
        struct rep_counts_summary counts;
        struct timing_opts tb = *t;
        tb.samples = &r->samples;
        samples_begin_row(&r->samples, 0, r->machine.threads, "block:%s@%ld", o->name, T);
        if (decode_bench_block_evict(&r->st, (enum block_id)b, T, &tb, r->read_buf, r->read_n, &cnt,
                                     &o->measured, &counts, &reads, &err) != 0)
            return cli_fail("%s", err.msg);
        note_read(r, r->read_n, &reads.evict, "an eviction read before a cold block");
        const double dram = c->level_bytes[COST_LEVEL_DRAM];
        if (reads.evict.reps > 0 && reads.evict.median_s > 0) {
            o->paired_read_gbs = (double)r->read_n * sizeof(float) / reads.evict.median_s / 1e9;
            if (dram > 0 && o->measured.median_s > 0)
                o->paired_efficiency = dram / o->measured.median_s / 1e9 / o->paired_read_gbs;
        }
        if (reads.own.reps > 0 && reads.own.median_s > 0 && dram > 0) {
            o->own_read_gbs = (double)reads.own_bytes / reads.own.median_s / 1e9;
            o->own_read_efficiency = dram / (double)reads.own_bytes / reads.over_own;
        }
        fill_counted(r, &counts,
                     (struct report_counted){o->counters, o->counters_max, &o->utilization,
                                             &o->disturbed_reps, &o->faulted_reps, &o->disturbed_causes,
                                             &o->measured_all_s, &o->ipc, &o->switched_reps, &o->steal_reps,
                                             &o->steal_s});
        int llc = r->counters.role_index[COUNTERS_ROLE_LLC_MISSES];
        if (llc >= 0 && r->calibration.available && r->calibration.ratio > 0)
            o->dram_bytes_counted =
                counts.per_rep[llc] * (double)r->machine.llc_line_bytes / r->calibration.ratio;
    }
    return CLI_EXIT_OK;
}

static int measure_steps(struct run *r, const struct decode_bench_opts *o) {
    struct run_report *rep = r->report;
    struct cost_opts co = {r->args.wtype, r->args.kvtype, &r->formats};
    struct fr_err err = {{0}};
    for (int i = 0; i < r->args.n_contexts && rep->n_steps < REPORT_MAX_STEPS; i++) {
        struct report_step *s = &rep->steps[rep->n_steps++];
        struct step_cost sc;
        cost_step(&r->cfg, &co, r->args.contexts[i], SAMPLER_VARIANT_CHAIN, &sc);
        const struct block_cost *c = &sc.total;
        struct decode_bench_step m;
        struct decode_bench_opts os = *o;
        os.step_timing.samples = &r->samples;
        samples_begin_row(&r->samples, o->read_buf ? (double)o->read_n * sizeof(float) : 0,
                          r->machine.threads, "step@%ld", r->args.contexts[i]);
        if (decode_bench_step(&r->st, r->args.contexts[i], &os, &m, &err) != 0)
            return cli_fail("%s", err.msg);
        s->context = sc.context, s->bytes = c->bytes, s->flops = c->flops;
        s->measured = m.step;
        s->unattributed_s = m.unattributed_s;
        note_read(r, o->read_n, &m.read, "a read paired with the decode steps");
        s->tokens_per_s = 1.0 / m.step.median_s;
        s->dram_bytes = c->dram_bytes;
        s->dram_gbs = c->dram_bytes / m.step.median_s / 1e9;
        if (m.read.reps > 0) {
            s->paired_read_gbs = (double)o->read_n * sizeof(float) / m.read.median_s / 1e9;
            s->paired_efficiency = c->dram_bytes / ((double)o->read_n * sizeof(float)) / m.step_over_read;
        }
        if (m.weights_read.reps > 0) {
            double wbytes = (double)(r->weights.total_bytes / sizeof(float) * sizeof(float));
            s->weights_read_gbs = wbytes / m.weights_read.median_s / 1e9;
            s->weights_read_efficiency = c->dram_bytes / wbytes / m.step_over_weights_read;
        }
        for (int b = 0; b < BLOCK_COUNT; b++) s->block_s[b] = m.block_median_s[b];
        fill_counted(r, &m.counts,
                     (struct report_counted){s->counters, s->counters_max, &s->utilization,
                                             &s->disturbed_reps, &s->faulted_reps, &s->disturbed_causes,
                                             &s->measured_all_s, &s->ipc, &s->switched_reps, &s->steal_reps,
                                             &s->steal_s});
        s->energy_j = m.counts.energy_j;
        s->energy_j_per_token = m.counts.energy_j; /* batch 1: one token per step */
    }
    return CLI_EXIT_OK;
}

/* The types the model's matrices are stored in, bit 1u << t (model/cost.h block_cost wtypes). */
static unsigned formats_mask(const struct weight_formats *f) {
    unsigned m = 0;
    for (int t = 0; t < FR_DTYPE_COUNT; t++)
        if (weight_formats_count(f, (enum fr_dtype)t) > 0) m |= 1u << t;
    return m;
}

/* A compute-bound format's roof re-measured between phases and raised where it ran faster (ceilings.h
 * ceilings_raise_quant): on a VM whose cores take turns running slow, a roof measured once at the start can
 * sit under the blocks it bounds, and those would read "above roof". Only a run with quantised matrices
 * pays for it (under a second a quick run); a failure is said and the run goes on. */
static void remeasure_format_roofs(struct run *r, const struct ceilings_opts *copts, const char *when) {
    const unsigned types = formats_mask(&r->formats);
    bool quantised = false;
    for (int t = 0; t < FR_DTYPE_COUNT; t++)
        quantised |= ((types >> t) & 1u) && fr_dtype_is_quant((enum fr_dtype)t);
    if (!quantised) return;
    struct ceilings later;
    struct fr_err err = {{0}};
    if (ceilings_measure_quant(&r->machine, copts, &later, &err) != 0) {
        fprintf(stderr, "forge-roofline: warning: re-measuring the format roofs %s failed: %s\n", when,
                err.msg);
        return;
    }
    char said[512] = "";
    if (ceilings_raise_quant(&r->ceilings, &later, when, said, sizeof said) == 0) return;
    struct run_report *rep = r->report;
    for (int i = 0; i < rep->n_ceilings; i++) /* the report's figures follow the raised ceilings */
        for (int k = 0; k < CEILING_COUNT; k++) {
            const struct ceiling_figure *f =
                rep->ceilings[i].one_core ? &r->ceilings.one[k] : &r->ceilings.all[k];
            if (!f->measured || strcmp(rep->ceilings[i].name,
                                       ceilings_key((enum ceiling_kind)k, rep->ceilings[i].one_core)) != 0)
                continue;
            ceiling_row_set(&rep->ceilings[i], f);
        }
    char scratch[sizeof rep->prov.roof_notes] = ""; /* its notes were said when the roofs were first set */
    roofs_set_quant_types(&r->ceilings, types, &r->rates_all, &r->rates_one, scratch, sizeof scratch);
    size_t used = strlen(rep->prov.roof_notes);
    if (used + 1 < sizeof rep->prov.roof_notes)
        snprintf(rep->prov.roof_notes + used, sizeof rep->prov.roof_notes - used,
                 "%sFormat roofs re-measured faster than at the ceilings (the best run is the roof): %s.",
                 used ? " " : "", said);
    fprintf(stderr, "forge-roofline: note: format roofs re-measured faster: %s\n", said);
}

static int predict_one(const struct run *r, const struct block_cost *c, struct roofline_prediction *p) {
    struct roofline_work w = {.flops = c->flops,
                              .exps = c->exps,
                              .calls = c->kernel_calls,
                              .forks = c->forks,
                              .barriers = c->barriers,
                              .parallel = c->parallel != 0,
                              .sampler_exp = c->sampler_exp != 0,
                              .exps_parallel = c->exps_parallel != 0};
    for (int l = 0; l < ROOFLINE_LEVELS; l++) w.level_bytes[l] = c->level_bytes[l];
    /* a quantised matvec runs on its format's measured roof (the int8 dot, its dequantisation included),
     * not the f32 FMA's, each format of a mixed block on its own; an unmeasured format's FLOPs stay on the
     * FMA roof (roofs_set_quant_types says so) */
    for (int t = 0; t < FR_DTYPE_COUNT; t++)
        if (c->quant_type_weights[t] > 0 && r->rates_all.quant_type_gweights[t] > 0)
            w.flops -= c->quant_type_flops[t], w.quant_type_weights[t] = c->quant_type_weights[t];
    struct fr_err err = {{0}};
    if (roofline_predict(&r->rates_all, &r->rates_one, &w, p, &err) != 0)
        return cli_fail("%s: %s", block_name(c->id), err.msg);
    return CLI_EXIT_OK;
}

/* The DRAM roof raised to the best read of the run, then every prediction, bound and efficiency. */
static int predict_all(struct run *r) {
    struct run_report *rep = r->report;
    double ceiling = r->rates_all.level_gbs[ROOFLINE_TERM_DRAM];
    if (r->ceilings.read_kernel[0]) {
        char read[512];
        ceilings_describe_read(&r->ceilings, read, sizeof read);
        size_t used = strlen(rep->prov.roof_notes);
        snprintf(rep->prov.roof_notes + used, sizeof rep->prov.roof_notes - used, "%sThe %s.",
                 used ? " " : "", read);
    }
    double paired = r->ceilings.read_paired.measured ? r->ceilings.read_paired.best : NAN;
    if (paired > r->best_read_gbs || !(r->best_read_gbs > 0))
        r->best_read_gbs = paired, r->best_read_where = "the ceilings' paired read check";
    double slice = r->ceilings.read_slice.measured ? r->ceilings.read_slice.best : NAN;
    if (slice > r->best_read_gbs || !(r->best_read_gbs > 0))
        r->best_read_gbs = slice, r->best_read_where = "the ceilings' read of one eighth of the array";
    if (roofs_raise_dram(&r->rates_all, r->best_read_gbs)) {
        size_t used = strlen(rep->prov.roof_notes);
        snprintf(rep->prov.roof_notes + used, sizeof rep->prov.roof_notes - used,
                 "%sDRAM read roof raised from the ceiling's %.2f GB/s to %.2f GB/s, the best read of the "
                 "run (%s).",
                 used ? " " : "", ceiling, r->best_read_gbs, r->best_read_where);
    }
    if (r->ceilings.dram_array_capped) {
        size_t used = strlen(rep->prov.roof_notes);
        snprintf(
            rep->prov.roof_notes + used, sizeof rep->prov.roof_notes - used,
            "%sThe DRAM arrays are %zu MiB (1/%d of the memory), less than STREAM's 4x the LLC that hwloc "
            "reports (%zu MiB in all): had the machine that much cache, the read roof would count hits in "
            "it.",
            used ? " " : "", r->ceilings.dram_array_bytes >> 20, CEILINGS_DRAM_MEMORY_SHARE,
            (size_t)(r->machine.llc_total_bytes >> 20));
    }
    /* a read on smaller pages than the weights' reads slower than the matvecs can (docs/figures.md) */
    if (r->read_huge < r->weights_huge - 0.05) {
        size_t used = strlen(rep->prov.roof_notes);
        snprintf(rep->prov.roof_notes + used, sizeof rep->prov.roof_notes - used,
                 "%sThe read array is %.0f %% on huge pages, the weights %.0f %%: the DRAM read roof may sit "
                 "below what the matvecs reach (the kernel gave fewer huge pages than asked).",
                 used ? " " : "", 100 * r->read_huge, 100 * r->weights_huge);
    }
    /* With one thread every read of the run is one core's, and the blocks use the one-core roofs */
    if (r->machine.threads == 1 && roofs_raise_dram(&r->rates_one, r->best_read_gbs)) {
        size_t used = strlen(rep->prov.roof_notes);
        snprintf(rep->prov.roof_notes + used, sizeof rep->prov.roof_notes - used,
                 "%sOne thread: the one-core DRAM read roof raised to the same %.2f GB/s.", used ? " " : "",
                 r->best_read_gbs);
    }
    for (int i = 0; i < rep->n_blocks; i++) {
        struct report_block *o = &rep->blocks[i];
        const struct block_cost *c = &r->block_costs[o->id];
        struct roofline_prediction p;
        int rc = predict_one(r, c, &p);
        if (rc) return rc;
        o->predicted_s = p.predicted_s;
        o->floor_s = p.term_s[ROOFLINE_TERM_OVERHEAD];
        o->levels_sum_s = p.levels_sum_s;
        o->second_s = p.second_s;
        snprintf(o->second_bound, sizeof o->second_bound, "%s",
                 p.second_s > 0 ? roofline_term_name(p.second) : "");
        for (int l = 0; l < 4; l++) o->level_bytes[l] = c->level_bytes[l];
        o->exps = c->exps, o->kernel_calls = c->kernel_calls, o->forks = c->forks, o->barriers = c->barriers;
        o->overhead_bound = o->floor_s > 0 && o->measured.median_s <= ROOFLINE_OVERHEAD_FACTOR * o->floor_s;
        snprintf(o->bound, sizeof o->bound, "%s",
                 roofline_term_name(o->overhead_bound ? ROOFLINE_TERM_OVERHEAD : p.bound));
        cost_block_format(c, r->args.kvtype, o->format, sizeof o->format);
        o->efficiency = o->predicted_s / o->measured.median_s;
        o->above_roof = report_is_above_roof(false, o->efficiency);
    }
    struct cost_opts co = {r->args.wtype, r->args.kvtype, &r->formats};
    for (int i = 0; i < rep->n_steps; i++) {
        struct report_step *s = &rep->steps[i];
        struct step_cost sc;
        cost_step_on(&r->cfg, &co, &r->caches, s->context, SAMPLER_VARIANT_CHAIN, &sc);
        s->predicted_s = 0;
        for (int b = 0; b < BLOCK_COUNT; b++) {
            struct roofline_prediction p;
            int rc = predict_one(r, &sc.blocks[b], &p);
            if (rc) return rc;
            s->predicted_s += p.predicted_s;
        }
        s->efficiency = s->predicted_s / s->measured.median_s;
        s->above_roof = report_is_above_roof(false, s->efficiency);
    }
    return CLI_EXIT_OK;
}

/* The roofs the predictions used, as ceiling rows marked `roof` (the plot draws them; the measured rows they
 * come from stay, unmarked): "roof_<level>_read_gbs" and "roof_peak_gflops", each with the statistics of
 * the ceiling it was taken from; a DRAM roof raised by a faster read of the run keeps the ceiling's median
 * and min with the raised best. */
static void add_roof_rows(struct run *r) {
    struct run_report *rep = r->report;
    for (int i = 0; i < rep->n_ceilings; i++) rep->ceilings[i].roof = false;
    static const enum ceiling_kind kinds[] = {CEILING_DRAM_READ, CEILING_L1_READ, CEILING_L2_READ,
                                              CEILING_L3_READ, CEILING_PEAK_FLOPS};
    static const char *const names[] = {"roof_dram_read_gbs", "roof_l1_read_gbs", "roof_l2_read_gbs",
                                        "roof_l3_read_gbs", "roof_peak_gflops"};
    for (int k = 0; k < 5 && rep->n_ceilings < REPORT_MAX_CEILINGS; k++) {
        double v = k < 4 ? r->rates_all.level_gbs[k] : r->rates_all.peak_gflops;
        if (!isfinite(v)) continue;
        const struct ceiling_figure *src = &r->ceilings.all[kinds[k]];
        for (int one = 0; one < 2; one++)
            for (int j = 0; j < 5; j++) {
                const struct ceiling_figure *f =
                    one ? &r->ceilings.one[kinds[j]] : &r->ceilings.all[kinds[j]];
                if (f->measured && f->best == v && (k == 4) == (j == 4)) src = f;
            }
        struct report_ceiling *o = &rep->ceilings[rep->n_ceilings++];
        snprintf(o->name, sizeof o->name, "%s", names[k]);
        o->kind = k < 4 ? REPORT_CEILING_BANDWIDTH : REPORT_CEILING_COMPUTE;
        o->roof = true;
        o->value = o->max = v;
        o->median = src->median, o->min = src->min, o->reps = src->reps, o->noisy = src->noisy;
        if (!(o->median <= v)) o->median = v;
        if (!(o->min <= o->median)) o->min = o->median;
    }
}

/* The sampler sweep's options: every variant at every vocabulary (quick: 151,936 only, no sort reference). */
static void sampler_opts_for(int quick, int threads, struct sampler_bench_opts *o) {
    sampler_bench_default_opts(o);
    o->threads = threads;
    static const int quick_vocab[] = {151936};
    if (quick) {
        o->vocabs = quick_vocab, o->n_vocabs = 1, o->skip_sort = true;
        o->min_time_s /= 10;
    }
}

/* provenance.plan: what every figure of this run is the best or median of, quick or full, in words. */
static void fill_plan(struct run_report *rep, const struct run_args *a, const struct ceilings_opts *copts,
                      const struct decode_bench_opts *bo, int threads) {
    char *p = rep->prov.plan, blocks[64], steps[64];
    size_t len = sizeof rep->prov.plan;
    ceilings_describe_plan(copts, p, len);
    size_t off = strlen(p);
    if (a->test_sizes && off < len)
        off += (size_t)snprintf(p + off, len - off, "; " CEILINGS_TEST_SIZES_NOTE);
    timing_describe_opts(&bo->block_timing, blocks, sizeof blocks);
    timing_describe_opts(&bo->step_timing, steps, sizeof steps);
    if (off < len)
        off += (size_t)snprintf(p + off, len - off,
                                "; blocks are the median of %s; steps the median of %s at "
                                "contexts ",
                                blocks, steps);
    for (int i = 0; i < a->n_contexts && off < len; i++)
        off += (size_t)snprintf(p + off, len - off, "%s%ld", i ? "," : "", a->contexts[i]);
    if (off < len) off += (size_t)snprintf(p + off, len - off, " (blocks at %ld)", a->block_context);
    struct sampler_bench_opts so;
    sampler_opts_for(a->quick, threads, &so);
    if (off < len) off += (size_t)snprintf(p + off, len - off, "; ");
    if (off < len) sampler_bench_describe(&so, p + off, len - off);
}

/* model_logits (NULL: synthetic weights): the prompt's logits row, timed as the sweep's "model" rows. */
static int measure_sampler(struct run_report *rep, int quick, struct sample_set *samples, int threads,
                           const float *model_logits, int vocab) {
    struct sampler_bench_opts o;
    sampler_opts_for(quick, threads, &o);
    o.samples = samples;
    samples->threads = threads;
    o.model_logits = model_logits, o.model_vocab = vocab;
    struct sampler_bench_result *res = NULL;
    int n = 0;
    struct fr_err err = {{0}};
    if (sampler_bench_run(&o, &res, &n, &err) != 0) return cli_fail("sampler benchmark: %s", err.msg);
    for (int i = 0; i < n && rep->n_sampler < REPORT_MAX_SAMPLER; i++) {
        struct report_sampler *s = &rep->sampler[rep->n_sampler++];
        snprintf(s->variant, sizeof s->variant, "%s", res[i].variant);
        snprintf(s->row_kind, sizeof s->row_kind, "%s", res[i].row_kind);
        s->vocab = res[i].vocab;
        s->nucleus = res[i].nucleus;
        s->measured = res[i].timing;
    }
    free(res);
    return CLI_EXIT_OK;
}

/* The batch sweep's context (default 1024, --quick 256, cut to what the model holds) and memory: its largest
 * batch's caches beside the weights must fit now (a clear refusal naming the bytes), and the f32 weights of
 * the OpenBLAS rows too, or those rows are left out with the reason. */
static int check_batch(struct run_args *a, const struct qwen3_config *cfg,
                       const struct qwen3_weight_sizes *wsz, struct run_batch_opts *batch) {
    if (a->n_batches == 0) return CLI_EXIT_OK;
    if (a->batch_context < 0) {
        a->batch_context = a->quick ? 256 : 1024;
        if (a->batch_context >= cfg->max_context) a->batch_context = cfg->max_context - 1;
    } else if (a->batch_context >= cfg->max_context) {
        return cli_usage_error("--batch-context %ld: %s holds at most %d positions (max_position_embeddings)",
                               a->batch_context, cfg->name, cfg->max_context);
    }
    batch->context = a->batch_context;
    size_t extra = 0, need = run_batch_bytes(batch, &extra);
    long most = 0;
    for (int i = 0; i < a->n_batches; i++) most = a->batches[i] > most ? a->batches[i] : most;
    char what[192];
    snprintf(what, sizeof what,
             "--batch %ld at context %ld (%s KV caches of every sequence, with the weights)", most,
             a->batch_context, fr_dtype_name(a->kvtype));
    struct fr_err err = {{0}};
    if (need == 0 || qwen3_mem_check(need + wsz->total_bytes, what, &err) != 0)
        return cli_usage_error("%s", need ? err.msg : "--batch: the sweep's size overflows");
    if (extra &&
        qwen3_mem_check(need + wsz->total_bytes + extra, "f32 weights for the OpenBLAS batch rows", &err))
        batch->with_openblas = false,
        batch->openblas_skipped = "not enough memory for f32 weights beside the batch";
    return CLI_EXIT_OK;
}

/* The prompt lengths against the model's context (a given one that does not fit is refused, the default cut
 * to it and said), the backend (a GEMM of the run's weights at the longest prompt) and the memory. */
static int check_prefill(struct run_args *a, const struct qwen3_config *cfg,
                         const struct qwen3_weight_sizes *wsz, struct run_prefill_opts *o, char *note,
                         size_t note_len) {
    note[0] = '\0';
    if (a->n_prompt_lens == 0) return CLI_EXIT_OK;
    if (a->prompt_depth >= cfg->max_context)
        return cli_usage_error("--prompt-depth %ld: %s holds at most %d positions (max_position_embeddings)",
                               a->prompt_depth, cfg->name, cfg->max_context);
    const long room = cfg->max_context - a->prompt_depth;
    for (int i = 0; i < a->n_prompt_lens; i++) {
        if (a->prompt_lens[i] <= room) continue;
        if (!a->prompt_default)
            return cli_usage_error(
                "--prompt-len %ld after %ld cached positions: %s holds at most %d positions "
                "(max_position_embeddings)",
                a->prompt_lens[i], a->prompt_depth, cfg->name, cfg->max_context);
        snprintf(note, note_len, "the default prompt of %ld tokens cut to %ld, what %s holds",
                 a->prompt_lens[i], room, cfg->name);
        a->prompt_lens[i] = room;
    }
    const char *why = NULL;
    long most = 0;
    for (int i = 0; i < a->n_prompt_lens; i++) most = a->prompt_lens[i] > most ? a->prompt_lens[i] : most;
    if (!gemm_backend_available(a->gemv, a->wtype, (int)most, &why)) {
        if (!a->prompt_default)
            return cli_usage_error("--prompt-len with --gemv openblas and %s weights: %s",
                                   fr_dtype_name(a->wtype), why ? why : "unavailable");
        snprintf(note, note_len, "prompt processing skipped: %s weights on --gemv openblas: %.120s",
                 fr_dtype_name(a->wtype), why ? why : "unavailable");
        a->n_prompt_lens = 0;
        return CLI_EXIT_OK;
    }
    o->n_prompt_lens = a->n_prompt_lens, o->depth = a->prompt_depth;
    memcpy(o->prompt_lens, a->prompt_lens, sizeof a->prompt_lens);
    struct fr_err err = {{0}};
    char what[160];
    snprintf(what, sizeof what,
             "--prompt-len %ld after %ld cached positions (its rows and KV cache, with the weights)", most,
             a->prompt_depth);
    size_t need = run_prefill_bytes(o);
    if (need == 0 || qwen3_mem_check(need + wsz->total_bytes, what, &err) != 0)
        return cli_usage_error("%s", need ? err.msg : "--prompt-len: the prefill's size overflows");
    return CLI_EXIT_OK;
}

/* provenance.lockstep: with whom the run took turns and whether the partner stayed to the end. */
static void describe_lockstep(const char *spec, char *out, size_t len) {
    const char *lost = lockstep_lost();
    snprintf(out, len, "the %s of two runs taking turns, one repetition each (--lockstep); %ld turns%s%s",
             strstr(spec, "first") ? "first" : "second", lockstep_turns(), lost[0] ? "; " : "", lost);
}

static int run_main(struct run *r, int argc, char **argv) {
    struct run_args *a = &r->args;
    char batch_failed[sizeof(struct fr_err) + 16] = "", prefill_failed[sizeof(struct fr_err) + 24] = "";
    struct fr_err err = {{0}};
    int rc;
    if (a->weights) {
        char *note = r->rw.note;
        if (weights_file_config(a->weights, a->model, &r->cfg, &err) != 0 ||
            model_opts_formats(a->weights, &r->cfg, a->wtype, a->mix, a->wtype_given, &r->formats, note,
                               sizeof r->rw.note, &err) != 0)
            return cli_usage_error("%s", err.msg);
        if (note[0]) fprintf(stderr, "forge-roofline: %s\n", note);
    } else if ((rc = model_opts_load(a->model, &r->cfg)) != 0) {
        return rc;
    } else if (model_opts_formats(NULL, &r->cfg, a->wtype, a->mix, true, &r->formats, NULL, 0, &err) != 0) {
        return cli_usage_error("%s", err.msg);
    } else if (a->mix >= 0) { /* run.json's dtype is the commonest type; the mix is named beside it */
        char counts[160];
        weight_formats_describe(&r->formats, counts, sizeof counts);
        snprintf(r->rw.note, sizeof r->rw.note, "llama.cpp's %s mix (%s)",
                 weight_mix_name((enum weight_mix)a->mix), counts);
    }
    (void)weight_formats_is_uniform(&r->formats, &a->wtype); /* a mixed file: its layers' commonest type */
    long max_ctx = 0;
    for (int i = 0; i < a->n_contexts; i++) max_ctx = a->contexts[i] > max_ctx ? a->contexts[i] : max_ctx;
    if (a->block_context < 0) a->block_context = max_ctx < 1024 ? max_ctx : 1024;
    const char *ctx_flag = a->contexts_default ? "the default --context" : "--context";
    if (a->block_context > max_ctx) max_ctx = a->block_context, ctx_flag = "--block-context";
    if (max_ctx >= r->cfg.max_context)
        return cli_usage_error("%s %ld: %s holds at most %d positions (max_position_embeddings)", ctx_flag,
                               max_ctx, r->cfg.name, r->cfg.max_context);
    for (int t = 0; t < FR_DTYPE_COUNT; t++) {
        const char *why = NULL;
        if (weight_formats_count(&r->formats, (enum fr_dtype)t) > 0 &&
            !matvec_backend_available(a->gemv, (enum fr_dtype)t, &why))
            return cli_usage_error("--gemv %s with %s weights: %s", matvec_backend_name(a->gemv),
                                   fr_dtype_name((enum fr_dtype)t), why ? why : "unavailable");
    }
    /* a model this machine cannot hold fails now, not after the ceilings and verify (checked again when
     * the weights are allocated): its weights, its KV cache and the paired read's array together, so a
     * run that would be killed for memory halfway is refused instead */
    struct qwen3_weight_sizes wsz;
    char what[192];
    size_t kv_bytes = kv_cache_bytes(&r->cfg, (int)max_ctx + 1, a->kvtype);
    snprintf(what, sizeof what, "model '%s' with %s weights, its %s KV cache and the %zu MiB read array",
             r->cfg.name, fr_dtype_name(a->wtype), fr_dtype_name(a->kvtype), CEILINGS_DRAM_MIN_BYTES >> 20);
    if (qwen3_weights_sizes_formats(&r->cfg, &r->formats, &wsz, &err) != 0 ||
        qwen3_mem_check(wsz.total_bytes + kv_bytes + CEILINGS_DRAM_MIN_BYTES, what, &err) != 0)
        return cli_usage_error("%s", err.msg);
    /* the batch sweep: its context and memory are checked now too */
    struct run_batch_opts batch = {.cfg = &r->cfg,
                                   .weights = &r->weights,
                                   .kvtype = a->kvtype,
                                   .backend = a->gemv,
                                   .roofs = &r->batch_roofs,
                                   .n_batches = a->n_batches,
                                   .quick = a->quick,
                                   .with_openblas = true,
                                   .with_onednn = true};
    memcpy(batch.batches, a->batches, sizeof a->batches);
    if ((rc = check_batch(a, &r->cfg, &wsz, &batch))) return rc;
    struct run_prefill_opts prefill = {.cfg = &r->cfg,
                                       .weights = &r->weights,
                                       .kvtype = a->kvtype,
                                       .backend = a->gemv,
                                       .roofs = &r->batch_roofs,
                                       .quick = a->quick,
                                       .repetitions = a->repetitions};
    char prefill_note[192];
    if ((rc = check_prefill(a, &r->cfg, &wsz, &prefill, prefill_note, sizeof prefill_note))) return rc;
    if (prefill_note[0]) fprintf(stderr, "forge-roofline: note: %s\n", prefill_note);
    if (!(r->report = calloc(1, sizeof *r->report))) return cli_fail("out of memory");
    report_init(r->report);

    /* two runs in lockstep share the machine lock their driver holds: taking it themselves would deadlock
     * (the one holding the turn waits for the lock, the one holding the lock waits for the turn) */
    if (a->lockstep) {
        if (!getenv("FORGE_ROOFLINE_LOCK_FD"))
            return cli_usage_error("--lockstep: the machine lock must be handed over by the driver "
                                   "(FORGE_ROOFLINE_LOCK_FD); run both through `forge-roofline lockstep`");
        if (lockstep_start(a->lockstep, &err) != 0) return cli_usage_error("%s", err.msg);
    }
    /* one run at a time on this machine: wait for (or, --no-wait, refuse) a run that holds it */
    char lock_path[1024], command[1024] = "";
    machine_lock_path(a->out, lock_path, sizeof lock_path);
    for (int i = 0, used = 0; i < argc && used < (int)sizeof command; i++)
        used += snprintf(command + used, sizeof command - (size_t)used, "%s%s", i ? " " : "forge-roofline",
                         i ? argv[i] : "");
    if ((rc = cli_take_machine_lock(&r->lock, lock_path, command, !a->no_wait)) != CLI_EXIT_OK) return rc;
    if (a->lockstep && !r->lock.inherited)
        return cli_usage_error(
            "--lockstep: FORGE_ROOFLINE_LOCK_FD is not an open descriptor of the held lock "
            "file %s",
            lock_path);

    /* the output folder first: an unwritable --out fails before anything is measured */
    char stamp[32], host[128];
    results_dir_stamp(time(NULL), stamp, sizeof stamp);
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown-host");
    host[sizeof host - 1] = '\0';
    if (results_dir_begin(&r->dir, a->out, host, stamp, &err) != 0) return cli_usage_error("%s", err.msg);
    if (counters_check_events(a->events, &err) != 0)
        return cli_usage_error("%s", err.msg); /* the message names --events */

    static const double est_full[] = {25, 5, 10, 15, 15, 20, 25, 12, 3},
                        est_quick[] = {6, 3, 2, 3, 2, 4, 4, 8, 2};
    struct progress pr = {isatty(2), timing_now_s(), 0, 9, a->quick ? est_quick : est_full};

    progress_phase(&pr, "machine and ceilings");
    if (machine_detect(&r->machine, a->threads, &err) != 0) return cli_usage_error("%s", err.msg);
    if (machine_bind_threads(&r->machine, &err) != 0) return cli_fail("%s", err.msg);
    if (core_speed_probe(&r->speed, "at the start", r->machine.threads) != 0)
        return cli_fail("core speed probe: out of memory, or its attention output was not finite");
    /* after binding: one event set per thread of the bound team */
    const void *src_cfg = NULL;
    const struct counters_source *src = cli_counter_source(&src_cfg);
    int crc = counters_open(&r->counters, src, src_cfg, a->events, r->machine.threads, &err);
    r->have_counters = 1;
    if (crc != 0) return cli_fail("%s", err.msg);
    describe_counters(&r->report->counters, &r->counters);
    /* the hypervisor's steal disturbs a repetition too, counters or not */
    struct fr_err steal_err = {{0}};
    r->have_steal = steal_open(&r->steal, NULL, &steal_err) == 0;
    char steal_rule[160];
    if (r->have_steal)
        snprintf(steal_rule, sizeof steal_rule,
                 "; or the hypervisor stole more than %.0f %% of the machine's CPU time (/proc/stat steal)",
                 100 * REP_COUNTS_STEAL_SHARE);
    else
        snprintf(steal_rule, sizeof steal_rule, "; steal time not read (%.120s)", steal_err.msg);
    snprintf(r->report->counters.disturbed_rule, sizeof r->report->counters.disturbed_rule, "%s%s",
             rep_counts_rule(&r->counters), steal_rule);
    crc = counters_open_energy(&r->energy, src, src_cfg, &err);
    r->have_energy = 1;
    if (crc != 0) return cli_fail("%s", err.msg);
    describe_counters(&r->report->energy, &r->energy);
    struct ceilings_opts copts = {.quick = a->quick};
    if (a->test_sizes) {
        ceilings_opts_test_sizes(&copts);
        fprintf(stderr, "forge-roofline: note: --test-sizes: " CEILINGS_TEST_SIZES_NOTE "\n");
    }
    if (ceilings_measure(&r->machine, &copts, &r->ceilings, &err) != 0) return cli_fail("%s", err.msg);
    fill_ceilings(r->report, &r->ceilings);
    fill_provenance(r->report, a, argc, argv, &r->machine, stamp);
    if (!weight_formats_is_uniform(&r->formats, NULL)) /* the history keeps a mix apart from its dtype */
        snprintf(r->report->prov.weights_mix, sizeof r->report->prov.weights_mix, "%s",
                 a->mix >= 0 ? weight_mix_name((enum weight_mix)a->mix) : "mixed");
    /* a level without a measured ceiling falls back to the next slower one, and says so */
    if (roofs_from_ceilings(&r->ceilings, &r->rates_all, &r->rates_one, r->report->prov.roof_notes,
                            sizeof r->report->prov.roof_notes) +
            roofs_set_quant_types(&r->ceilings, formats_mask(&r->formats), &r->rates_all, &r->rates_one,
                                  r->report->prov.roof_notes, sizeof r->report->prov.roof_notes) >
        0)
        fprintf(stderr, "forge-roofline: note: %s\n", r->report->prov.roof_notes);
    r->best_read_gbs = NAN;
    r->caches = (struct cost_caches){
        .bytes = {(double)r->machine.l1d_bytes, (double)r->machine.l2_bytes, (double)r->machine.l3_bytes},
        .threads = r->machine.threads,
        .step_team = decode_runs_team(a->gemv, r->machine.threads)};
    /* the ceilings leave OpenBLAS at its default pool: the matvecs get the run's threads, bound alike */
    char *gt = r->report->prov.gemv_threads;
    size_t gt_len = sizeof r->report->prov.gemv_threads;
    if (a->gemv != MATVEC_BACKEND_OPENBLAS)
        snprintf(
            gt, gt_len, "forge kernels on the OpenMP team of %d bound threads%s, %s%s", r->machine.threads,
            r->caches.step_team ? ", one region a step (a kernel team: its own spin barrier between blocks)"
                                : "",
            kernel_prefetch_describe(), kernel_matvec_describe());
    else if (blas_pool_bind_threads(&r->machine, gt, gt_len, &err) != 0)
        return cli_fail("%s", err.msg);
    else /* attention still runs forge's kernels */
        snprintf(gt + strlen(gt), gt_len - strlen(gt), "; attention: %s", kernel_prefetch_describe());

    probe_cores(r, "after the ceilings");
    progress_phase(&pr, "verify");
    /* the quantised decodes against bf16, on the run's model and weights: in a q8_0 or q4_0 run only (their
     * figures go to the report), a bf16 or f32 run skips them and says where they are measured */
    struct quant_fidelity fidelity = {0};
    const struct verify_model vm = {
        .cfg = &r->cfg,
        .weights_file = a->weights,
        .seed = RUN_SYNTHETIC_SEED,
        .prompt = run_prompt_ids,
        .prompt_len = RUN_PROMPT_LEN,
        .kv = a->kvtype,
        .skip_why = fr_dtype_is_quant(a->wtype) ? NULL
                                                : "the run's weights are not quantised (a quantised --dtype "
                                                  "run measures it, and forge-roofline verify)",
        .result = &fidelity};
    int counts[VERIFY_STATUS_COUNT];
    verify_run(stderr, NULL, r->machine.threads, &vm, counts);
    r->verify_passed = counts[VERIFY_PASSED], r->verify_skipped = counts[VERIFY_SKIPPED];
    for (int k = 0; k < QUANT_FIDELITY_FORMATS; k++) {
        const struct quant_fidelity_format *f = &fidelity.f[k];
        if (!f->measured) continue;
        struct report_fidelity *q = &r->report->fidelity[r->report->n_fidelity++];
        snprintf(q->dtype, sizeof q->dtype, "%s", f->name);
        q->steps = f->steps, q->top1_agree = f->top1_agree, q->kl_mean = f->kl_mean, q->kl_max = f->kl_max;
        snprintf(r->report->fidelity_source, sizeof r->report->fidelity_source,
                 "the same %.80s, %d steps: %d prompt ids, then bf16's greedy tokens", fidelity.source,
                 fidelity.steps, fidelity.prompt_steps);
    }
    if (counts[VERIFY_FAILED])
        return cli_fail(
            "verify: %d check(s) failed: nothing is timed on wrong kernels (see the FAILED lines above)",
            counts[VERIFY_FAILED]);

    progress_phase(&pr, a->weights ? "weights (file)" : "weights (synthetic)");
    if (qwen3_weights_alloc_formats(&r->weights, &r->cfg, &r->formats, &err) != 0)
        return cli_usage_error("%s", err.msg);
    r->have_weights = 1;
    r->rw.file = a->weights;
    if (run_weights_load(&r->rw, &r->weights, r->report, &err) != 0) return cli_usage_error("%s", err.msg);
    if (decode_state_init(&r->st, &r->weights, (int)max_ctx + 1, a->kvtype, a->gemv, r->machine.threads,
                          &err) != 0)
        return cli_usage_error("%s", err.msg);
    r->have_state = 1;
    fill_model(r->report, &r->cfg, a->wtype, &r->formats);
    struct decode_bench_opts bo = {
        .block_timing = a->quick ? (struct timing_opts){1, 3, 50, 0.02, NULL, NULL}
                                 : (struct timing_opts){2, 10, 200, 0.3, NULL, NULL},
        .step_timing = a->quick ? (struct timing_opts){1, 3, 50, 0.05, NULL, NULL}
                                : (struct timing_opts){2, 10, 100, 1.0, NULL, NULL},
        .sampler = {.temperature = 0.8f, .top_p = 0.9f, .seed = 42},
    };
    if (a->repetitions > 0) /* exactly N: a minimum time would give the two sides of a compare other counts */
        bo.block_timing.min_reps = bo.block_timing.max_reps = bo.step_timing.min_reps =
            bo.step_timing.max_reps = a->repetitions,
        bo.block_timing.min_time_s = bo.step_timing.min_time_s = 0;
    r->st.sampler_params = bo.sampler;
    fill_plan(r->report, a, &copts, &bo, r->machine.threads);
    /* the read paired with the steps: as large as the ceilings' DRAM arrays */
    size_t read_bytes = a->test_sizes ? copts.dram_array_bytes : ceilings_dram_bytes(&r->machine, NULL);
    r->read_n = read_bytes / sizeof(float);
    if (!(r->read_buf = ceilings_stream_alloc(r->read_n)))
        return cli_fail("out of memory for the %zu-byte paired read buffer", read_bytes);
#pragma omp parallel for schedule(static) num_threads(r->machine.threads)
    for (size_t i = 0; i < r->read_n; i++) r->read_buf[i] = (float)(i & 3);
    r->read_huge = ceilings_huge_fraction(r->read_buf, read_bytes);
    r->weights_huge = ceilings_huge_fraction(r->weights.base, r->weights.total_bytes);
    bo.read_buf = r->read_buf, bo.read_n = r->read_n, bo.weights_read_min_bytes = read_bytes;
    bo.counting = (struct decode_bench_counting){&r->counters, &r->energy, r->have_steal ? &r->steal : NULL};
    calibrate_llc(r);
    if (run_weights_prompt(&r->rw, &r->st, r->report, &err) != 0)
        return cli_fail("%s", err.msg); /* real logits for the sampler */

    progress_phase(&pr, "blocks (cold weights)");
    r->report->blocks_context = a->block_context;
    if ((rc = measure_blocks(r, &bo.block_timing))) return rc;

    probe_cores(r, "after the blocks");
    remeasure_format_roofs(r, &copts, "re-measured after the blocks");
    progress_phase(&pr, "decode steps");
    if ((rc = measure_steps(r, &bo))) return rc;

    probe_cores(r, "after the steps");
    remeasure_format_roofs(r, &copts, "re-measured after the steps");
    progress_phase(&pr, "sampler sweep");
    if ((rc = measure_sampler(r->report, a->quick, &r->samples, r->machine.threads, r->rw.prompt_logits,
                              r->cfg.vocab)))
        return rc;

    if ((rc = predict_all(r))) return rc;
    add_roof_rows(r);

    /* the two-level roof of the batch and prefill rows: DRAM read (as raised above), L2 read, peak FMA */
    r->batch_roofs = (struct roofline){.peak_gflops = r->rates_all.peak_gflops,
                                       .bw_gbs = r->rates_all.level_gbs[ROOFLINE_TERM_DRAM],
                                       .cache_gbs = r->rates_all.level_gbs[ROOFLINE_TERM_L2]};
    progress_phase(&pr, "batch sweep");
    if (a->n_batches > 0) {
        decode_state_free(&r->st); /* its long-context cache is done with: room for the batch's caches */
        r->have_state = 0;
        batch.blocking = (struct gemm_blocking){r->machine.l1d_bytes, r->machine.l2_bytes};
        batch.sampler = bo.sampler;
        batch.read_buf = r->read_buf, batch.read_n = r->read_n;
        batch.samples = &r->samples, batch.threads = r->machine.threads;
        /* a failed sweep loses nothing measured before it: the report is written, then the run fails */
        if (run_batch_phase(&batch, r->report, &err) != 0) {
            snprintf(batch_failed, sizeof batch_failed, "batch sweep: %s", err.msg);
            fprintf(stderr, "forge-roofline: %s; writing the results measured so far\n", batch_failed);
        }
        if (r->report->batch_ridge.note[0])
            fprintf(stderr, "forge-roofline: %s\n", r->report->batch_ridge.note);
    }

    progress_phase(&pr, "prompt processing");
    if (prefill_note[0])
        snprintf(r->report->prefill_note, sizeof r->report->prefill_note, "%s", prefill_note);
    if (a->n_prompt_lens > 0) {
        if (r->have_state) decode_state_free(&r->st), r->have_state = 0; /* room for the prefill's cache */
        prefill.blocking = (struct gemm_blocking){r->machine.l1d_bytes, r->machine.l2_bytes};
        prefill.sampler = bo.sampler;
        prefill.samples = &r->samples, prefill.threads = r->machine.threads;
        /* as the batch sweep: a failed prefill loses nothing measured before it */
        if (run_prefill_phase(&prefill, r->report, &err) != 0) {
            snprintf(prefill_failed, sizeof prefill_failed, "prompt processing: %s", err.msg);
            fprintf(stderr, "forge-roofline: %s; writing the results measured so far\n", prefill_failed);
        }
        if (prefill_note[0]) { /* the cut default, before the repetitions */
            char both[sizeof r->report->prefill_note];
            snprintf(both, sizeof both, "%.80s; %.100s", prefill_note, r->report->prefill_note);
            snprintf(r->report->prefill_note, sizeof r->report->prefill_note, "%s", both);
        }
    }

    progress_phase(&pr, "report");
    probe_cores(r, "at the end");
    core_speed_describe(&r->speed, r->report->prov.isa, r->report->prov.core_speed,
                        sizeof r->report->prov.core_speed);
    r->report->prov.core_speed_low = core_speed_low(&r->speed);
    if (a->lockstep)
        describe_lockstep(a->lockstep, r->report->prov.lockstep, sizeof r->report->prov.lockstep);
    char samples_path[RESULTS_PATH_MAX + 32];
    snprintf(samples_path, sizeof samples_path, "%s/%s", r->dir.tmp_path, SAMPLES_FILE);
    if (samples_write_csv(&r->samples, samples_path, &err) != 0) return cli_fail("%s", err.msg);
    r->report->samples_rows = samples_count_rows(&r->samples);
    r->report->samples_reps = r->samples.n;
    r->report->samples_disturbed =
        samples_count_disturbed(&r->samples, r->report->samples_causes, sizeof r->report->samples_causes);
    enum report_plots_result plots = REPORT_PLOTS_NO_GNUPLOT;
    struct fr_err plots_err = {{0}};
    if (a->no_plots) {
        if (report_write_data(r->report, r->dir.tmp_path, &err) != 0 ||
            report_write_markdown(r->report, r->dir.tmp_path, REPORT_PLOTS_NO_GNUPLOT,
                                  "plots skipped (--no-plots)", &err) != 0)
            return cli_fail("%s", err.msg);
    } else if (report_write_run(r->report, r->dir.tmp_path, &plots, &plots_err, &err) != 0) {
        return cli_fail("%s", err.msg);
    }
    if (!a->no_plots && plots != REPORT_PLOTS_DRAWN)
        fprintf(stderr, "forge-roofline: warning: plots skipped: %s\n", plots_err.msg);
    if (results_dir_commit(&r->dir, &err) != 0) return cli_fail("%s", err.msg);
    report_write_summary(r->report, stdout);
    /* STREAM's habit: the validation line last; reaching here means every ceiling kernel validated its result
     */
    printf("validation: verify %d passed, 0 failed, %d skipped%s; ceiling kernels validated their results\n",
           r->verify_passed, r->verify_skipped, r->report->n_fidelity ? ", quantised decodes measured" : "");
    fflush(stdout); /* the summary ends before this note, also when both go to one file */
    fprintf(stderr, "forge-roofline: results in %s\n", r->dir.final_path);
    /* from the folder as written: the store never holds what the folder does not */
    int hist = a->no_history ? CLI_EXIT_OK : cli_history_append(a->history, r->dir.final_path, false);
    if (batch_failed[0]) return cli_fail("%s (the rows above it are in the results)", batch_failed);
    if (prefill_failed[0]) return cli_fail("%s (the rows above it are in the results)", prefill_failed);
    return hist;
}

int cmd_run(int argc, char **argv) {
    struct run r = {0};
    r.lock.fd = -1;
    int rc = parse_args(argc, argv, &r.args);
    if (rc < 0) return CLI_EXIT_OK; /* --help */
    if (rc) return rc;
    rc = run_main(&r, argc, argv);
    lockstep_finish(); /* after our last repetition and the end probe: the partner goes on alone */
    run_free(&r);
    return rc;
}
