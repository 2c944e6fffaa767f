/* forge-roofline predict: the analytic cost of one decode step, per block and in total, for each context
 * length asked for (and of batched steps and of prompt processing when asked), as markdown, CSV or JSON.
 * Every figure comes from model/cost.c and model/cost_prefill.c; nothing is measured unless
 * --measure-roofs asks for the roofs. The weights are priced in the formats decode would run them in: one
 * type, a llama.cpp mix (--dtype q4_k_m) or a file's own per-tensor types (--weights, its index alone
 * read). Checked end to end in tests/test_cli_predict.c and tests/test_cli_predict_formats.c. */
#include <cJSON.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "bench/cli/model_opts.h"
#include "kernels/attention_prefill.h" /* PREFILL_ATT_TILE_Q, said in the prompt tables' note */
#include "model/cost.h"
#include "model/decode.h"
#include "model/weight_mix.h"
#include "model/weights_file.h"
#include "roofline/ceilings.h"
#include "roofline/roofline.h"
#include "roofline/roofs.h"
#include "roofline/topology.h"

#define PREDICT_MAX_CONTEXTS 32
#define PREDICT_MAX_BATCHES  32
#define PREDICT_MAX_PROMPTS  32

enum predict_format { PREDICT_MD, PREDICT_CSV, PREDICT_JSON };

/* The weights priced (weights_resolve): each matrix's type as decode would run it, and how it is said. */
struct predict_weights {
    struct weight_formats formats;
    const char *name; /* in the tables: a type, a mix ("q4_k_m"), or "mixed" (a file's own types) */
    char desc[96];    /* "q4_k 168, q6_k 29" (weight_formats_describe) */
    char note[384];   /* --weights: what the load would convert, or the file's mix ("" if nothing) */
};

struct predict_args {
    const char *model;
    const char *weights; /* --weights: a GGUF or safetensors file whose tensor types are priced */
    /* the weights priced; cost.formats is &w->formats for a model whose matrices differ in type, else NULL */
    const struct predict_weights *w;
    struct cost_opts cost;
    enum sampler_variant sampler;
    enum predict_format format;
    long contexts[PREDICT_MAX_CONTEXTS];
    int n_contexts;
    bool contexts_given; /* --context: every value must fit the model; the defaults are cut to it */
    long batches[PREDICT_MAX_BATCHES]; /* --batch: batched steps (model/decode_batch.h) */
    int n_batches;
    long prompts[PREDICT_MAX_PROMPTS]; /* --prompt-len: prompts of N tokens processed in one pass */
    int n_prompts;
    long prompt_depth; /* --prompt-depth: tokens cached before the prompt */
    bool prompt_depth_given;
    double peak_gflops, bw_gbs, cache_gbs; /* roofs for predicted times and the ridge; 0 = not given */
    bool measure_roofs;                    /* --measure-roofs: the roofs from quick ceilings, now */
    /* A q8_0 / q4_0 --dtype: the format's compute roof (GFLOP/s at 2 a weight, the dequantisation in the
     * time) per ISA, given (--quant-gflops, on one unnamed ISA) or measured now (--measure-roofs: every ISA
     * this CPU runs); n_quant 0: unmeasured */
    int n_quant;
    const char *quant_isa[KERNEL_ISA_COUNT], *quant_loop[KERNEL_ISA_COUNT];
    double quant_gflops[KERNEL_ISA_COUNT];
    /* --batch: the per-level split for this machine's caches (hwloc); caches_ok false: two-level split */
    struct cost_caches caches;
    bool caches_ok;
    char levels_note[384]; /* where the caches and the roofs come from, in words */
    int mix;               /* --dtype named a llama.cpp mix (model/weight_mix.h), else -1 */
    bool dtype_given;      /* --dtype given: the run's type, as decode's (a file converted at load) */
};

static void usage(FILE *f) {
    fprintf(
        f,
        "usage: forge-roofline predict --model M [--weights FILE] [--context 1,1024,4096] [--dtype T] [--kv "
        "bf16|f32]\n"
        "                              [--sampler chain|greedy] [--format md|csv|json]\n"
        "                              [--batch LIST [--peak-gflops P --bw-gbs B [--cache-gbs C] | "
        "--measure-roofs]]\n"
        "                              [--prompt-len LIST [--prompt-depth D]]\n"
        "Predicted FLOPs and bytes (weights, KV read, KV written, activations) of every block of one\n"
        "decode step at batch 1, and per-step totals, for each context length T (tokens already cached).\n"
        "--batch 1,8,64: batched steps too (B sequences, one token each, matrices read once): FLOPs, DRAM\n"
        "and cache-resident bytes per B, and the bytes per memory level (DRAM, L1, L2, L3) for this "
        "machine's\n"
        "caches (hwloc); with the roofs (given, e.g. from `forge-roofline machine`, or --measure-roofs: "
        "quick\n"
        "ceilings measured now) also the predicted time per B and the ridge batch (compute roof = memory\n"
        "roof) for bf16 and f32 weights.\n"
        "--prompt-len 1,512: prompt processing too (N tokens at positions [D, D + N) in one pass, D from\n"
        "--prompt-depth, default 0): per block FLOPs, weight bytes (the matrices read once), KV read and\n"
        "written, activations, FLOP/B, and with the roofs (as for --batch) each block's predicted time and\n"
        "binding roof, the prefill time and pp tokens/s (N / time).\n"
        "With --format csv and --batch, the CSV is the batch table; with --prompt-len, the prompt table.\n"
        "--dtype T: the weights' type, bf16 (default), f32, q8_0, q4_0, q4_k, q5_k, q6_k, or llama.cpp's\n"
        "mix q4_k_m or q5_k_m (each matrix in the type llama-quantize gives it; the mix and a block table "
        "of\n"
        "the formats each block reads are printed).\n"
        "--weights FILE: a GGUF or safetensors file (as decode takes it; --model optional for GGUF, checked\n"
        "when given): its header and tensor index are read, nothing loaded, and the step is priced in the\n"
        "formats decode runs the file in: a quantised GGUF file's own per-tensor types; with --dtype, as in\n"
        "decode, every matrix in that type or mix (converted at load; a Q8_0 or Q4_0 file only in its own).\n"
        "--dtype q8_0|q4_0: also the format's compute roof and the ridge point (FLOP/B where the DRAM read\n"
        "meets it) with each projection's binding roof: from --quant-gflops G (forge-roofline machine's\n"
        "q8_0_gflops / q4_0_gflops) with --bw-gbs B, or --measure-roofs (every ISA this CPU runs).\n");
}

/* --prompt-depth needs --prompt-len; a CSV is one table. */
static int check_prompt_args(const struct predict_args *a) {
    if (a->prompt_depth_given && a->n_prompts == 0)
        return cli_usage_error("predict: --prompt-depth needs --prompt-len");
    if (a->format == PREDICT_CSV && a->n_prompts > 0 && a->n_batches > 0)
        return cli_usage_error("predict: --format csv prints one table: --batch or --prompt-len, not both");
    return CLI_EXIT_OK;
}

static int parse_args(int argc, char **argv, struct predict_args *a) {
    static const struct option opts[] = {{"model", required_argument, 0, 'm'},
                                         {"context", required_argument, 0, 'c'},
                                         {"dtype", required_argument, 0, 'd'},
                                         {"weights", required_argument, 0, 'w'},
                                         {"kv", required_argument, 0, 'k'},
                                         {"format", required_argument, 0, 'f'},
                                         {"sampler", required_argument, 0, 's'},
                                         {"batch", required_argument, 0, 'B'},
                                         {"peak-gflops", required_argument, 0, 'P'},
                                         {"bw-gbs", required_argument, 0, 'W'},
                                         {"cache-gbs", required_argument, 0, 'C'},
                                         {"measure-roofs", no_argument, 0, 'R'},
                                         {"quant-gflops", required_argument, 0, 'Q'},
                                         {"prompt-len", required_argument, 0, 'N'},
                                         {"prompt-depth", required_argument, 0, 'D'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    *a = (struct predict_args){
        .cost = {FR_DTYPE_BF16, FR_DTYPE_BF16, NULL}, .mix = -1, .sampler = SAMPLER_VARIANT_CHAIN};
    a->contexts[0] = 1, a->contexts[1] = 1024, a->contexts[2] = 4096, a->n_contexts = 3;
    optind = 1;
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (ch) {
        case 'm':
            a->model = optarg;
            break;
        case 'c':
            a->n_contexts = cli_parse_long_list(optarg, 0, 1L << 30, a->contexts, PREDICT_MAX_CONTEXTS);
            if (a->n_contexts < 0)
                return cli_usage_error("--context: expected a comma-separated list of integers in [0, 2^30], "
                                       "at most %d, got '%s'",
                                       PREDICT_MAX_CONTEXTS, optarg);
            a->contexts_given = true;
            break;
        case 'd':
            if (model_opts_weights("predict: ", optarg, &a->cost.weights, &a->mix)) return CLI_EXIT_USAGE;
            a->dtype_given = true;
            break;
        case 'w':
            a->weights = optarg;
            break;
        case 'k':
            if (model_opts_dtype("--kv", optarg, &a->cost.kv)) return CLI_EXIT_USAGE;
            break;
        case 's':
            if (strcmp(optarg, "chain") == 0)
                a->sampler = SAMPLER_VARIANT_CHAIN;
            else if (strcmp(optarg, "greedy") == 0)
                a->sampler = SAMPLER_VARIANT_GREEDY;
            else
                return cli_usage_error("--sampler: expected chain or greedy, got '%s'", optarg);
            break;
        case 'f':
            if (strcmp(optarg, "md") == 0)
                a->format = PREDICT_MD;
            else if (strcmp(optarg, "csv") == 0)
                a->format = PREDICT_CSV;
            else if (strcmp(optarg, "json") == 0)
                a->format = PREDICT_JSON;
            else
                return cli_usage_error("--format: expected md, csv or json, got '%s'", optarg);
            break;
        case 'B':
            a->n_batches = cli_parse_long_list(optarg, 1, 1L << 16, a->batches, PREDICT_MAX_BATCHES);
            if (a->n_batches < 0)
                return cli_usage_error("--batch: expected a comma-separated list of integers in [1, 65536], "
                                       "at most %d, got '%s'",
                                       PREDICT_MAX_BATCHES, optarg);
            break;
        case 'N':
            a->n_prompts = cli_parse_long_list(optarg, 1, 1L << 30, a->prompts, PREDICT_MAX_PROMPTS);
            if (a->n_prompts < 0)
                return cli_usage_error("--prompt-len: expected a comma-separated list of integers in [1, "
                                       "2^30], at most %d, got '%s'",
                                       PREDICT_MAX_PROMPTS, optarg);
            break;
        case 'D':
            if (cli_parse_long(optarg, 0, 1L << 30, &a->prompt_depth))
                return cli_usage_error("--prompt-depth: expected an integer in [0, 2^30], got '%s'", optarg);
            a->prompt_depth_given = true;
            break;
        case 'P':
        case 'W':
        case 'C': {
            double v;
            const char *name = ch == 'P' ? "--peak-gflops" : ch == 'W' ? "--bw-gbs" : "--cache-gbs";
            if (cli_parse_double(optarg, &v) || !(v > 0))
                return cli_usage_error("%s: expected a positive number, got '%s'", name, optarg);
            *(ch == 'P' ? &a->peak_gflops : ch == 'W' ? &a->bw_gbs : &a->cache_gbs) = v;
            break;
        }
        case 'R':
            a->measure_roofs = true;
            break;
        case 'Q':
            if (cli_parse_double(optarg, &a->quant_gflops[0]) || !(a->quant_gflops[0] > 0))
                return cli_usage_error("--quant-gflops: expected a positive number, got '%s'", optarg);
            a->n_quant = 1, a->quant_isa[0] = "given", a->quant_loop[0] = "--quant-gflops";
            break;
        case 'h':
            usage(stdout);
            return -1;
        default:
            return cli_usage_error("predict: unknown or incomplete option '%s' (try predict --help)",
                                   argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error("predict: unexpected argument '%s'", argv[optind]);
    if (!a->model && !a->weights)
        return cli_usage_error("predict: --model is required (or a GGUF --weights; try predict --help)");
    return check_prompt_args(a);
}

/* The roofs' options, checked once the weights' type is known (a --weights file's own without --dtype). */
static int check_roof_args(struct predict_args *a) {
    const bool quant = fr_dtype_is_block(a->cost.weights);
    if (a->n_quant && !quant)
        return cli_usage_error("predict: --quant-gflops applies to q8_0 or q4_0 weights (--dtype, or a "
                               "--weights file's), not %s",
                               a->w->name);
    if (a->n_quant && !(a->bw_gbs > 0)) return cli_usage_error("predict: --quant-gflops needs --bw-gbs");
    if (a->n_quant && a->measure_roofs)
        return cli_usage_error("predict: --measure-roofs or --quant-gflops/--bw-gbs, not both");
    if (a->n_quant && !(a->peak_gflops > 0)) {
        if (a->cache_gbs > 0)
            return cli_usage_error("predict: --cache-gbs applies to --batch or --prompt-len only");
        return CLI_EXIT_OK; /* --bw-gbs for the format's ridge alone */
    }
    if ((a->peak_gflops > 0) != (a->bw_gbs > 0) || (a->cache_gbs > 0 && !(a->bw_gbs > 0)))
        return cli_usage_error("predict: --peak-gflops and --bw-gbs go together (--cache-gbs needs them)");
    if (a->peak_gflops > 0 && a->n_batches == 0 && a->n_prompts == 0)
        return cli_usage_error("predict: --peak-gflops and --bw-gbs apply to --batch or --prompt-len only");
    if (a->measure_roofs && a->n_batches == 0 && a->n_prompts == 0 && !quant)
        return cli_usage_error(
            "predict: --measure-roofs applies to --batch, --prompt-len or --dtype q8_0|q4_0 only");
    if (a->measure_roofs && a->bw_gbs > 0)
        return cli_usage_error("predict: --measure-roofs or --peak-gflops/--bw-gbs, not both");
    if (a->cache_gbs == 0) a->cache_gbs = a->bw_gbs; /* every byte at the DRAM rate unless told otherwise */
    return CLI_EXIT_OK;
}

/* ---- the weights' formats: --dtype (a type or a llama.cpp mix) or a --weights file's own ---- */

/* The config (--model's, or a GGUF --weights file's own, checked against --model's when both are given) and
 * the formats decode would run the weights in (model_opts_formats: without --dtype a quantised GGUF file's
 * own per-tensor types, a type no kernel runs converted; with --dtype that type or mix). Only the file's
 * header and tensor index are read, nothing is copied. */
static int weights_resolve(struct predict_args *a, struct qwen3_config *cfg, struct predict_weights *w) {
    struct fr_err err = {{0}};
    int rc;
    if (!a->weights && (rc = model_opts_load(a->model, cfg))) return rc;
    if (a->weights && weights_file_config(a->weights, a->model, cfg, &err))
        return cli_usage_error("predict: %s", err.msg);
    if (model_opts_formats(a->weights, cfg, a->cost.weights, a->mix, a->dtype_given, &w->formats, w->note,
                           sizeof w->note, &err))
        return cli_usage_error("predict: %s", err.msg);
    /* cost.weights: the one type, or the commonest (its roof prices every quantised FLOP, model/cost.h) */
    const bool uniform = weight_formats_is_uniform(&w->formats, &a->cost.weights);
    a->w = w;
    a->cost.formats = uniform ? NULL : &w->formats;
    weight_formats_describe(&w->formats, w->desc, sizeof w->desc);
    w->name = a->mix >= 0 ? weight_mix_name((enum weight_mix)a->mix)
              : uniform   ? fr_dtype_name(a->cost.weights)
                          : "mixed";
    return CLI_EXIT_OK;
}

/* The layer matrices each projection block reads, in the fused matrices' row order. */
static const struct {
    enum block_id id;
    int n;
    enum wpart parts[3];
} block_parts[] = {{BLOCK_QKV_PROJ, 3, {WPART_Q, WPART_K, WPART_V}},
                   {BLOCK_O_PROJ, 1, {WPART_O}},
                   {BLOCK_GATE_UP_PROJ, 2, {WPART_GATE, WPART_UP}},
                   {BLOCK_DOWN_PROJ, 1, {WPART_DOWN}}};

/* Counts the types of block id's matrices over one step into count[FR_DTYPE_COUNT]; returns how many
 * matrices the block reads (0: none). embed gathers one row of token_embd, lm_head reads the whole of
 * output.weight (token_embd again when tied). */
static int block_formats(const struct weight_formats *f, enum block_id id, int *count) {
    if (id == BLOCK_EMBED || id == BLOCK_LM_HEAD) {
        count[id == BLOCK_EMBED ? f->embed : f->lm_head]++;
        return 1;
    }
    for (size_t k = 0; k < sizeof block_parts / sizeof block_parts[0]; k++) {
        if (block_parts[k].id != id) continue;
        for (int l = 0; l < f->n_layers; l++)
            for (int i = 0; i < block_parts[k].n; i++) count[f->layer[l][block_parts[k].parts[i]]]++;
        return block_parts[k].n * f->n_layers;
    }
    return 0;
}

/* "q4_k 70, q6_k 14": each type counted, in enum order (as weight_formats_describe). */
static void formats_counts_describe(const int *count, char *buf, size_t len) {
    size_t off = 0;
    buf[0] = '\0';
    for (int d = 0; d < FR_DTYPE_COUNT; d++)
        if (count[d] && off < len)
            off += (size_t)snprintf(buf + off, len - off, "%s%s %d", off ? ", " : "",
                                    fr_dtype_name((enum fr_dtype)d), count[d]);
}

/* A model whose matrices differ in type: the types each weight-reading block reads, beside its weight
 * bytes (context-free), so that a row can be checked by hand: the sum over its matrices of rows x columns
 * x the type's bytes a weight (kernels/dtype.h fr_dtype_weight_bytes, scales included). */
static void formats_md(const struct qwen3_config *cfg, const struct predict_args *a) {
    struct step_cost st;
    cost_step(cfg, &a->cost, 0, a->sampler, &st);
    printf("\n## weight formats per block (%s: %s)\n\n", a->w->name, a->w->desc);
    printf("| block | matrices | formats | weight bytes |\n|---|--:|---|--:|\n");
    for (int i = 0; i < BLOCK_COUNT; i++) {
        int count[FR_DTYPE_COUNT] = {0};
        char desc[96];
        const int n = block_formats(&a->w->formats, (enum block_id)i, count);
        if (n == 0) continue;
        formats_counts_describe(count, desc, sizeof desc);
        printf("| %s | %d | %s | %.0f |\n", block_name((enum block_id)i), n, desc, st.blocks[i].weight_bytes);
    }
    if (cfg->tied_embeddings)
        printf("\nembed gathers one row of token_embd and lm_head reads all of it (tied embeddings: one "
               "matrix, counted once in the heading's counts).\n");
    else
        printf("\nembed gathers one row of token_embd; lm_head reads all of output.weight.\n");
}

static cJSON *formats_json(const struct predict_args *a) {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < BLOCK_COUNT; i++) {
        int count[FR_DTYPE_COUNT] = {0};
        const int n = block_formats(&a->w->formats, (enum block_id)i, count);
        if (n == 0) continue;
        cJSON *o = cJSON_CreateObject(), *types = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", block_name((enum block_id)i));
        cJSON_AddNumberToObject(o, "matrices", n);
        for (int d = 0; d < FR_DTYPE_COUNT; d++)
            if (count[d]) cJSON_AddNumberToObject(types, fr_dtype_name((enum fr_dtype)d), count[d]);
        cJSON_AddItemToObject(o, "formats", types);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static void md_row(const char *name, const char *calls, const struct block_cost *b) {
    printf("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f |\n", name, calls, b->flops,
           b->weight_bytes, b->kv_read_bytes, b->kv_write_bytes, b->act_bytes, b->bytes, b->dram_bytes,
           cost_intensity(b->flops, b->bytes));
}

static void print_md(const struct qwen3_config *cfg, const struct predict_args *a,
                     const struct step_cost *steps) {
    printf("# forge-roofline predict: %s\n\n", cfg->name);
    printf("config %s · params %" PRIu64 " · weights %s", cfg->path, qwen3_param_count(cfg), a->w->name);
    if (a->cost.formats) printf(" (matrices %s)", a->w->desc);
    printf(" · KV %s · batch 1 · sampler %s\n", fr_dtype_name(a->cost.kv),
           cost_sampler_variant_name(a->sampler));
    if (a->weights)
        printf("weights file %s (its tensor index read, nothing loaded), priced as decode runs it%s%s\n",
               a->weights, a->w->note[0] ? ": " : "", a->w->note);
    printf("hidden %d · intermediate %d · layers %d · heads %d · KV heads %d · head_dim %d · vocab %d · tied "
           "%s\n",
           cfg->hidden, cfg->intermediate, cfg->n_layers, cfg->n_heads, cfg->n_kv_heads, cfg->head_dim,
           cfg->vocab, cfg->tied_embeddings ? "yes" : "no");
    printf(
        "KV bytes per cached position: %.0f · bytes are per step (all calls) · DRAM bytes = matrix weights +"
        " KV reads (the rest is cache-resident) · FLOP/B = FLOPs / bytes\n",
        cost_kv_bytes_per_position(cfg, a->cost.kv));
    for (int s = 0; s < a->n_contexts; s++) {
        const struct step_cost *st = &steps[s];
        printf("\n## context T = %ld (attends over %ld positions)\n\n", st->context, st->context + 1);
        printf("| block | calls | FLOPs | weight bytes | KV read bytes | KV write bytes | act bytes | bytes "
               "| DRAM "
               "bytes | FLOP/B |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for (int i = 0; i < BLOCK_COUNT; i++) {
            char calls[16];
            snprintf(calls, sizeof calls, "%d", st->blocks[i].calls);
            md_row(block_name(st->blocks[i].id), calls, &st->blocks[i]);
        }
        md_row("**step**", "", &st->total);
    }
    if (a->cost.formats) formats_md(cfg, a);
    printf("\n## steps\n\n| context | FLOPs | bytes | GB | DRAM bytes | weight bytes | KV read bytes | "
           "FLOP/B |\n");
    printf("|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (int s = 0; s < a->n_contexts; s++) {
        const struct block_cost *t = &steps[s].total;
        printf("| %ld | %.0f | %.0f | %.4f | %.0f | %.0f | %.0f | %.3f |\n", steps[s].context, t->flops,
               t->bytes, t->bytes / 1e9, t->dram_bytes, t->weight_bytes, t->kv_read_bytes,
               cost_intensity(t->flops, t->bytes));
    }
}

static void csv_row(const struct qwen3_config *cfg, const struct predict_args *a, long context,
                    const char *name, int calls, const struct block_cost *b) {
    printf("%s,%s,%s,%ld,%s,%d,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.6f\n", cfg->name, a->w->name,
           fr_dtype_name(a->cost.kv), context, name, calls, b->flops, b->weight_bytes, b->kv_read_bytes,
           b->kv_write_bytes, b->act_bytes, b->bytes, b->dram_bytes, cost_intensity(b->flops, b->bytes));
}

static void print_csv(const struct qwen3_config *cfg, const struct predict_args *a,
                      const struct step_cost *steps) {
    printf("model,weights,kv,context,block,calls,flops,weight_bytes,kv_read_bytes,kv_write_bytes,act_bytes,"
           "bytes,"
           "dram_bytes,flop_per_byte\n");
    for (int s = 0; s < a->n_contexts; s++) {
        for (int i = 0; i < BLOCK_COUNT; i++)
            csv_row(cfg, a, steps[s].context, block_name(steps[s].blocks[i].id), steps[s].blocks[i].calls,
                    &steps[s].blocks[i]);
        csv_row(cfg, a, steps[s].context, "step", 1, &steps[s].total);
    }
}

static void json_add_costs(cJSON *o, const struct block_cost *b) {
    cJSON_AddNumberToObject(o, "flops", b->flops);
    cJSON_AddNumberToObject(o, "bytes", b->bytes);
    cJSON_AddNumberToObject(o, "weight_bytes", b->weight_bytes);
    cJSON_AddNumberToObject(o, "kv_read_bytes", b->kv_read_bytes);
    cJSON_AddNumberToObject(o, "kv_write_bytes", b->kv_write_bytes);
    cJSON_AddNumberToObject(o, "act_bytes", b->act_bytes);
    cJSON_AddNumberToObject(o, "dram_bytes", b->dram_bytes);
    cJSON_AddNumberToObject(o, "flop_per_byte", cost_intensity(b->flops, b->bytes));
}

/* ---- --dtype q8_0|q4_0: the format's compute roof and the ridge point ---- */

/* The time terms of a block-format matvec: its weights on the format's roof (2 FLOPs a weight at
 * quant_gflops) against its DRAM bytes on the read roof; intensity = 2 weights / DRAM bytes, the ridge =
 * quant_gflops / bw_gbs, and the roof that binds is the larger term. */
static void quant_md(const struct predict_args *a, const struct step_cost *st) {
    const char *t = fr_dtype_name(a->cost.weights);
    printf("\n## %s's compute roof and ridge point\n\n", t);
    printf("Each projection's matvec at 2 FLOPs a weight over its DRAM bytes (the matrix), against the ridge "
           "point: the format's roof (its matvec on matrices held in L2, all threads, GFLOP/s at 2 a weight, "
           "the dequantisation included in the measured time) over the DRAM read roof.\n\n");
    if (a->n_quant == 0) {
        printf("%s's roof: unmeasured in predict, which measures nothing unless asked. `forge-roofline "
               "machine` measures it (%s_gflops, on the ISA that --isa names) and a full run --dtype %s "
               "names the roof that binds each block; pass it here as --quant-gflops G with --bw-gbs B "
               "(the DRAM read roof), or --measure-roofs to measure both now on every ISA.\n\n",
               t, t, t);
        printf("| block | FLOPs at 2 a weight | DRAM bytes | FLOP/B |\n|---|--:|--:|--:|\n");
    } else {
        printf("| isa | loop | %s GFLOP/s | G weights/s | DRAM read GB/s | ridge FLOP/B |\n"
               "|---|---|--:|--:|--:|--:|\n",
               t);
        for (int k = 0; k < a->n_quant; k++)
            printf("| %s | %s | %.1f | %.1f | %.1f | %.3f |\n", a->quant_isa[k], a->quant_loop[k],
                   a->quant_gflops[k], a->quant_gflops[k] / 2, a->bw_gbs,
                   roofline_ridge_ai(
                       &(struct roofline){.peak_gflops = a->quant_gflops[k], .bw_gbs = a->bw_gbs}));
        printf("\n| block | FLOPs at 2 a weight | DRAM bytes | FLOP/B |");
        for (int k = 0; k < a->n_quant; k++) printf(" binds (%s) |", a->quant_isa[k]);
        printf("\n|---|--:|--:|--:|");
        for (int k = 0; k < a->n_quant; k++) printf("---|");
        printf("\n");
    }
    for (int i = 0; i < BLOCK_COUNT; i++) {
        const struct block_cost *b = &st->blocks[i];
        if (!(b->quant_weights > 0)) continue;
        double flops = 2 * b->quant_weights, ai = cost_intensity(flops, b->dram_bytes);
        printf("| %s | %.0f | %.0f | %.3f |", block_name(b->id), flops, b->dram_bytes, ai);
        for (int k = 0; k < a->n_quant; k++) {
            struct roofline r = {.peak_gflops = a->quant_gflops[k], .bw_gbs = a->bw_gbs};
            printf(" %s |", ai > roofline_ridge_ai(&r) ? "int8 dot" : "DRAM");
        }
        printf("\n");
    }
}

/* --measure-roofs with a block --dtype: the DRAM read roof and the format's roof on every ISA this CPU
 * runs, from quick ceilings measured now (threads bound, one per core). */
static int quant_measure(struct predict_args *a) {
    struct machine m;
    struct fr_err err = {{0}};
    if (machine_detect(&m, 0, &err) != 0) return cli_fail("predict: --measure-roofs: topology: %s", err.msg);
    if (machine_bind_threads(&m, &err) != 0)
        fprintf(stderr, "forge-roofline: predict: threads not bound: %s\n", err.msg);
    struct ceilings_opts co = {.quick = true};
    struct ceilings c;
    if (!(a->bw_gbs > 0)) { /* --batch --measure-roofs measured it already */
        if (ceilings_measure(&m, &co, &c, &err) != 0)
            return cli_fail("predict: --measure-roofs: %s", err.msg);
        struct roofline_rates all, one;
        char notes[256] = "";
        roofs_from_ceilings(&c, &all, &one, notes, sizeof notes);
        a->bw_gbs = all.level_gbs[ROOFLINE_TERM_DRAM];
    }
    const enum kernel_isa active = kernel_isa_active();
    const int kind = ceilings_quant_kind(a->cost.weights);
    for (int i = 0; i <= (int)active; i++) {
        if (kernel_isa_force((enum kernel_isa)i) != 0) continue;
        int rc = ceilings_measure_quant(&m, &co, &c, &err);
        if (rc == 0 && c.all[kind].measured) {
            a->quant_isa[a->n_quant] = kernel_isa_name((enum kernel_isa)i);
            a->quant_loop[a->n_quant] = c.quant_loop;
            a->quant_gflops[a->n_quant++] = c.all[kind].best;
        }
        if (rc) {
            kernel_isa_force(active);
            return cli_fail("predict: --measure-roofs: %s", err.msg);
        }
    }
    kernel_isa_force(active);
    return CLI_EXIT_OK;
}

/* ---- --batch: batched steps ---- */

struct batch_row {
    long context, batch;
    struct block_cost t; /* the step's totals */
    double predicted_s;  /* NaN without roofs */
    enum roofline_bound bound;
};

static void batch_row(const struct qwen3_config *cfg, const struct predict_args *a, long context, long batch,
                      struct batch_row *r) {
    struct step_cost sc;
    cost_step_batch_on(cfg, &a->cost, a->caches_ok ? &a->caches : NULL, context, (int)batch, a->sampler, &sc);
    *r = (struct batch_row){.context = context, .batch = batch, .t = sc.total, .predicted_s = NAN};
    if (a->peak_gflops > 0) {
        struct roofline roof = {
            .peak_gflops = a->peak_gflops, .bw_gbs = a->bw_gbs, .cache_gbs = a->cache_gbs};
        r->predicted_s = roofline_predicted_split_s(&roof, sc.total.flops, sc.total.dram_bytes,
                                                    sc.total.cache_bytes, &r->bound);
    }
}

/* The ridge batch for weights of type wt (the KV type as asked); wt FR_DTYPE_COUNT: the weights priced. */
static double batch_ridge(const struct qwen3_config *cfg, const struct predict_args *a, long context,
                          enum fr_dtype wt, int projections_only) {
    struct cost_opts o = wt == FR_DTYPE_COUNT ? a->cost : (struct cost_opts){wt, a->cost.kv, NULL};
    return cost_batch_ridge(cfg, &o, context, a->sampler, projections_only, a->peak_gflops, a->bw_gbs,
                            a->cache_gbs);
}

static void batch_md(const struct qwen3_config *cfg, const struct predict_args *a) {
    printf("\n%s\n", a->levels_note);
    for (int s = 0; s < a->n_contexts; s++) {
        long T = a->contexts[s];
        printf("\n## batched steps at context T = %ld (B sequences, one token each; matrices read once)\n\n",
               T);
        printf(
            "| B | FLOPs | bytes | DRAM bytes | cache bytes | weight bytes | KV read bytes | FLOP/DRAM B | "
            "predicted ms | tokens/s | bound | DRAM (levels) | L1 | L2 | L3 |\n"
            "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|--:|\n");
        for (int i = 0; i < a->n_batches; i++) {
            struct batch_row r;
            batch_row(cfg, a, T, a->batches[i], &r);
            printf("| %ld | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f | ", r.batch, r.t.flops, r.t.bytes,
                   r.t.dram_bytes, r.t.cache_bytes, r.t.weight_bytes, r.t.kv_read_bytes,
                   cost_intensity(r.t.flops, r.t.dram_bytes));
            if (isnan(r.predicted_s))
                printf("n/a | n/a | n/a | ");
            else
                printf("%.3f | %.1f | %s | ", r.predicted_s * 1e3, (double)r.batch / r.predicted_s,
                       roofline_bound_name(r.bound));
            printf("%.0f | %.0f | %.0f | %.0f |\n", r.t.level_bytes[COST_LEVEL_DRAM],
                   r.t.level_bytes[COST_LEVEL_L1], r.t.level_bytes[COST_LEVEL_L2],
                   r.t.level_bytes[COST_LEVEL_L3]);
        }
        if (a->peak_gflops > 0)
            printf(
                "\nridge (compute roof = memory roof; peak %.1f GFLOP/s, DRAM %.1f GB/s, cache %.1f GB/s): "
                "whole step B = %.1f with bf16 weights, B = %.1f with f32 weights (%s KV; inf: memory-bound "
                "at any B); the projections (GEMMs) alone B = %.1f (bf16), B = %.1f (f32)\n",
                a->peak_gflops, a->bw_gbs, a->cache_gbs, batch_ridge(cfg, a, T, FR_DTYPE_BF16, 0),
                batch_ridge(cfg, a, T, FR_DTYPE_F32, 0), fr_dtype_name(a->cost.kv),
                batch_ridge(cfg, a, T, FR_DTYPE_BF16, 1), batch_ridge(cfg, a, T, FR_DTYPE_F32, 1));
        else
            printf("\nridge: pass --peak-gflops and --bw-gbs (e.g. from `forge-roofline machine`), or "
                   "--measure-roofs\n");
    }
}

/* A ridge in CSV: the number, "inf" (memory-bound at any B) or empty (no roofs), then sep. */
static void csv_ridge(double v, const char *sep) {
    if (isfinite(v))
        printf("%.6g%s", v, sep);
    else
        printf("%s%s", isinf(v) ? "inf" : "", sep);
}

static void batch_csv(const struct qwen3_config *cfg, const struct predict_args *a) {
    printf("model,weights,kv,context,batch,flops,bytes,dram_bytes,cache_bytes,weight_bytes,kv_read_bytes,"
           "flop_per_dram_byte,predicted_s,tokens_per_s,bound,ridge_batch,dram_level_bytes,l1_bytes,l2_bytes,"
           "l3_bytes,ridge_batch_bf16,ridge_batch_f32,proj_ridge_batch_bf16,proj_ridge_batch_f32\n");
    for (int s = 0; s < a->n_contexts; s++) {
        long T = a->contexts[s];
        double ridge = a->peak_gflops > 0 ? batch_ridge(cfg, a, T, FR_DTYPE_COUNT, 0) : NAN;
        double ridges[4] = {NAN, NAN, NAN, NAN}; /* step bf16, f32; projections bf16, f32 */
        for (int k = 0; k < 4 && a->peak_gflops > 0; k++)
            ridges[k] = batch_ridge(cfg, a, T, k % 2 ? FR_DTYPE_F32 : FR_DTYPE_BF16, k / 2);
        for (int i = 0; i < a->n_batches; i++) {
            struct batch_row r;
            batch_row(cfg, a, a->contexts[s], a->batches[i], &r);
            printf("%s,%s,%s,%ld,%ld,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.6f,", cfg->name, a->w->name,
                   fr_dtype_name(a->cost.kv), r.context, r.batch, r.t.flops, r.t.bytes, r.t.dram_bytes,
                   r.t.cache_bytes, r.t.weight_bytes, r.t.kv_read_bytes,
                   cost_intensity(r.t.flops, r.t.dram_bytes));
            if (isnan(r.predicted_s))
                printf(",,,");
            else
                printf("%.9g,%.6g,%s,", r.predicted_s, (double)r.batch / r.predicted_s,
                       roofline_bound_name(r.bound));
            csv_ridge(ridge, ",");
            printf("%.0f,%.0f,%.0f,%.0f,", r.t.level_bytes[COST_LEVEL_DRAM], r.t.level_bytes[COST_LEVEL_L1],
                   r.t.level_bytes[COST_LEVEL_L2], r.t.level_bytes[COST_LEVEL_L3]);
            for (int k = 0; k < 4; k++) csv_ridge(ridges[k], k < 3 ? "," : "\n");
        }
    }
}

/* JSON has no infinity: a ridge that does not exist is null. */
static void json_add_ridge(cJSON *o, const char *key, double v) {
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

static void batch_json(cJSON *root, const struct qwen3_config *cfg, const struct predict_args *a) {
    cJSON *arr = cJSON_AddArrayToObject(root, "batch");
    for (int s = 0; s < a->n_contexts; s++)
        for (int i = 0; i < a->n_batches; i++) {
            struct batch_row r;
            batch_row(cfg, a, a->contexts[s], a->batches[i], &r);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "context", (double)r.context);
            cJSON_AddNumberToObject(o, "batch", (double)r.batch);
            json_add_costs(o, &r.t);
            cJSON_AddNumberToObject(o, "cache_bytes", r.t.cache_bytes);
            cJSON_AddNumberToObject(o, "flop_per_dram_byte", cost_intensity(r.t.flops, r.t.dram_bytes));
            cJSON_AddNumberToObject(o, "dram_level_bytes", r.t.level_bytes[COST_LEVEL_DRAM]);
            cJSON_AddNumberToObject(o, "l1_bytes", r.t.level_bytes[COST_LEVEL_L1]);
            cJSON_AddNumberToObject(o, "l2_bytes", r.t.level_bytes[COST_LEVEL_L2]);
            cJSON_AddNumberToObject(o, "l3_bytes", r.t.level_bytes[COST_LEVEL_L3]);
            if (!isnan(r.predicted_s)) {
                cJSON_AddNumberToObject(o, "predicted_s", r.predicted_s);
                cJSON_AddNumberToObject(o, "tokens_per_s", (double)r.batch / r.predicted_s);
                cJSON_AddStringToObject(o, "bound", roofline_bound_name(r.bound));
            }
            cJSON_AddItemToArray(arr, o);
        }
    if (a->peak_gflops > 0) {
        cJSON *rd = cJSON_AddArrayToObject(root, "ridge");
        for (int s = 0; s < a->n_contexts; s++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "context", (double)a->contexts[s]);
            cJSON_AddNumberToObject(o, "peak_gflops", a->peak_gflops);
            cJSON_AddNumberToObject(o, "bw_gbs", a->bw_gbs);
            cJSON_AddNumberToObject(o, "cache_gbs", a->cache_gbs);
            json_add_ridge(o, "batch_bf16", batch_ridge(cfg, a, a->contexts[s], FR_DTYPE_BF16, 0));
            json_add_ridge(o, "batch_f32", batch_ridge(cfg, a, a->contexts[s], FR_DTYPE_F32, 0));
            json_add_ridge(o, "projections_batch_bf16",
                           batch_ridge(cfg, a, a->contexts[s], FR_DTYPE_BF16, 1));
            json_add_ridge(o, "projections_batch_f32", batch_ridge(cfg, a, a->contexts[s], FR_DTYPE_F32, 1));
            cJSON_AddItemToArray(rd, o);
        }
    }
}

/* ---- --prompt-len: prompt processing (model/cost.h cost_prefill) ---- */

struct prompt_row {
    struct prefill_cost pc;
    double block_s[BLOCK_COUNT]; /* each block's predicted time; NaN without roofs */
    enum roofline_bound bound[BLOCK_COUNT];
    double total_s; /* the blocks' times added (they run one after another); NaN without roofs */
};

/* Prompt n at --prompt-depth; with roofs each block's time is max(FLOPs / peak, DRAM bytes / bw + cache
 * bytes / cache GB/s), the roof of roofline_predicted_split_s. */
static void prompt_row(const struct qwen3_config *cfg, const struct predict_args *a, long n,
                       struct prompt_row *r) {
    cost_prefill(cfg, &a->cost, n, a->prompt_depth, a->sampler, &r->pc);
    const struct roofline roof = {
        .peak_gflops = a->peak_gflops, .bw_gbs = a->bw_gbs, .cache_gbs = a->cache_gbs};
    r->total_s = a->peak_gflops > 0 ? 0 : NAN;
    for (int i = 0; i < BLOCK_COUNT; i++) {
        const struct block_cost *b = &r->pc.blocks[i];
        r->block_s[i] = NAN, r->bound[i] = ROOFLINE_MEMORY_BOUND;
        if (!(a->peak_gflops > 0)) continue;
        r->block_s[i] =
            roofline_predicted_split_s(&roof, b->flops, b->dram_bytes, b->cache_bytes, &r->bound[i]);
        r->total_s += r->block_s[i];
    }
}

static void prompt_md_row(const char *name, const char *calls, const struct block_cost *b, double s,
                          const char *bound) {
    printf("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.3f | ", name, calls, b->flops,
           b->weight_bytes, b->kv_read_bytes, b->kv_write_bytes, b->act_bytes, b->dram_bytes,
           cost_intensity(b->flops, b->bytes));
    if (isnan(s))
        printf("n/a | n/a |\n");
    else
        printf("%.4f | %s |\n", s * 1e3, bound);
}

static void prompt_md_table(const struct prompt_row *r) {
    const struct prefill_cost *pc = &r->pc;
    printf("\n## Prompt processing: N = %ld at depth %ld (positions %ld to %ld)\n\n", pc->prompt_len,
           pc->depth, pc->depth, pc->depth + pc->prompt_len - 1);
    printf(
        "| block | calls | FLOPs | weight bytes | KV read bytes | KV write bytes | act bytes | DRAM bytes | "
        "FLOP/B | predicted ms | bound |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
    for (int i = 0; i < BLOCK_COUNT; i++) {
        char calls[16];
        snprintf(calls, sizeof calls, "%d", pc->blocks[i].calls);
        prompt_md_row(block_name((enum block_id)i), calls, &pc->blocks[i], r->block_s[i],
                      roofline_bound_name(r->bound[i]));
    }
    prompt_md_row("**prompt**", "", &pc->total, r->total_s, "");
    if (isnan(r->total_s))
        printf("\npredicted prefill time: pass --peak-gflops and --bw-gbs (e.g. from `forge-roofline "
               "machine`), or --measure-roofs\n");
    else
        printf("\npredicted prefill time %.3f ms (the blocks' times added): pp %.1f tokens/s\n",
               r->total_s * 1e3, (double)pc->prompt_len / r->total_s);
}

static void prompt_md(const struct qwen3_config *cfg, const struct predict_args *a) {
    printf("\nPrompt processing: one pass over N prompt tokens: the layers' matrices read once (one GEMM a "
           "layer), the per-token blocks N times, attention's causal FLOPs and K and V read once per %d-row "
           "query tile, final_norm, lm_head and the sampler once (the last position). DRAM bytes = matrix "
           "weights + KV reads, the rest cache-resident.",
           PREFILL_ATT_TILE_Q);
    if (a->peak_gflops > 0)
        printf(
            " Time per block = max(FLOPs / %.1f GFLOP/s, DRAM bytes / %.1f GB/s + cache bytes / %.1f GB/s).",
            a->peak_gflops, a->bw_gbs, a->cache_gbs);
    printf("\n");
    for (int i = 0; i < a->n_prompts; i++) {
        struct prompt_row r;
        prompt_row(cfg, a, a->prompts[i], &r);
        prompt_md_table(&r);
    }
}

static void prompt_csv_row(const struct qwen3_config *cfg, const struct predict_args *a,
                           const struct prefill_cost *pc, const char *name, int calls,
                           const struct block_cost *b, double s, const char *bound) {
    printf("%s,%s,%s,%ld,%ld,%s,%d,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.6f,", cfg->name, a->w->name,
           fr_dtype_name(a->cost.kv), pc->prompt_len, pc->depth, name, calls, b->flops, b->weight_bytes,
           b->kv_read_bytes, b->kv_write_bytes, b->act_bytes, b->bytes, b->dram_bytes, b->cache_bytes,
           cost_intensity(b->flops, b->bytes));
    if (isnan(s))
        printf(",,\n");
    else if (!bound)
        printf("%.9g,,%.6g\n", s, (double)pc->prompt_len / s); /* the total: pp tokens/s */
    else
        printf("%.9g,%s,\n", s, bound);
}

static void prompt_csv(const struct qwen3_config *cfg, const struct predict_args *a) {
    printf("model,weights,kv,prompt_len,depth,block,calls,flops,weight_bytes,kv_read_bytes,kv_write_bytes,"
           "act_bytes,bytes,dram_bytes,cache_bytes,flop_per_byte,predicted_s,bound,tokens_per_s\n");
    for (int k = 0; k < a->n_prompts; k++) {
        struct prompt_row r;
        prompt_row(cfg, a, a->prompts[k], &r);
        for (int i = 0; i < BLOCK_COUNT; i++)
            prompt_csv_row(cfg, a, &r.pc, block_name((enum block_id)i), r.pc.blocks[i].calls, &r.pc.blocks[i],
                           r.block_s[i], roofline_bound_name(r.bound[i]));
        prompt_csv_row(cfg, a, &r.pc, "prompt", 1, &r.pc.total, r.total_s, NULL);
    }
}

/* One block (or the total, name NULL) of a prompt as JSON; the time, bound and pp tokens/s with roofs. */
static cJSON *prompt_json_costs(const char *name, const struct block_cost *b, double s, const char *bound,
                                long n) {
    cJSON *o = cJSON_CreateObject();
    if (name) cJSON_AddStringToObject(o, "name", name);
    if (name) cJSON_AddNumberToObject(o, "calls", b->calls);
    json_add_costs(o, b);
    cJSON_AddNumberToObject(o, "cache_bytes", b->cache_bytes);
    if (isnan(s)) return o;
    cJSON_AddNumberToObject(o, "predicted_s", s);
    if (name) cJSON_AddStringToObject(o, "bound", bound);
    if (!name) cJSON_AddNumberToObject(o, "tokens_per_s", (double)n / s);
    return o;
}

static void prompt_json(cJSON *root, const struct qwen3_config *cfg, const struct predict_args *a) {
    cJSON *arr = cJSON_AddArrayToObject(root, "prompt");
    for (int k = 0; k < a->n_prompts; k++) {
        struct prompt_row r;
        prompt_row(cfg, a, a->prompts[k], &r);
        cJSON *o = cJSON_CreateObject(), *blocks = cJSON_AddArrayToObject(o, "blocks");
        cJSON_AddNumberToObject(o, "prompt_len", (double)r.pc.prompt_len);
        cJSON_AddNumberToObject(o, "depth", (double)r.pc.depth);
        for (int i = 0; i < BLOCK_COUNT; i++)
            cJSON_AddItemToArray(blocks, prompt_json_costs(block_name((enum block_id)i), &r.pc.blocks[i],
                                                           r.block_s[i], roofline_bound_name(r.bound[i]), 0));
        cJSON_AddItemToObject(o, "total",
                              prompt_json_costs(NULL, &r.pc.total, r.total_s, NULL, r.pc.prompt_len));
        cJSON_AddItemToArray(arr, o);
    }
    if (!(a->peak_gflops > 0)) return;
    cJSON *roofs = cJSON_AddObjectToObject(root, "prompt_roofs");
    cJSON_AddNumberToObject(roofs, "peak_gflops", a->peak_gflops);
    cJSON_AddNumberToObject(roofs, "bw_gbs", a->bw_gbs);
    cJSON_AddNumberToObject(roofs, "cache_gbs", a->cache_gbs);
}

/* The prompt positions [depth, depth + N) must fit the model, as a context's T + 1 do. */
static int prompts_fit(const struct qwen3_config *cfg, const struct predict_args *a) {
    for (int i = 0; i < a->n_prompts; i++)
        if (a->prompts[i] + a->prompt_depth > cfg->max_context)
            return cli_usage_error("--prompt-len %ld at --prompt-depth %ld: %s holds at most %d positions "
                                   "(max_position_embeddings)",
                                   a->prompts[i], a->prompt_depth, cfg->name, cfg->max_context);
    return CLI_EXIT_OK;
}

static int print_json(const struct qwen3_config *cfg, const struct predict_args *a,
                      const struct step_cost *steps) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "forge-roofline-predict/1");
    cJSON *m = cJSON_AddObjectToObject(root, "model");
    cJSON_AddStringToObject(m, "name", cfg->name);
    cJSON_AddStringToObject(m, "config", cfg->path);
    cJSON_AddNumberToObject(m, "params", (double)qwen3_param_count(cfg));
    cJSON_AddNumberToObject(m, "hidden", cfg->hidden);
    cJSON_AddNumberToObject(m, "intermediate", cfg->intermediate);
    cJSON_AddNumberToObject(m, "layers", cfg->n_layers);
    cJSON_AddNumberToObject(m, "heads", cfg->n_heads);
    cJSON_AddNumberToObject(m, "kv_heads", cfg->n_kv_heads);
    cJSON_AddNumberToObject(m, "head_dim", cfg->head_dim);
    cJSON_AddNumberToObject(m, "vocab", cfg->vocab);
    cJSON_AddBoolToObject(m, "tied_embeddings", cfg->tied_embeddings);
    cJSON_AddNumberToObject(m, "kv_bytes_per_position", cost_kv_bytes_per_position(cfg, a->cost.kv));
    cJSON_AddStringToObject(root, "dtype", a->w->name);
    cJSON_AddStringToObject(root, "formats", a->w->desc); /* matrices per type */
    if (a->weights) cJSON_AddStringToObject(root, "weights_file", a->weights);
    if (a->weights) cJSON_AddStringToObject(root, "weights_note", a->w->note);
    cJSON_AddItemToObject(root, "block_formats", formats_json(a));
    cJSON_AddStringToObject(root, "kv", fr_dtype_name(a->cost.kv));
    cJSON_AddStringToObject(root, "sampler", cost_sampler_variant_name(a->sampler));
    cJSON *blocks = cJSON_AddArrayToObject(root, "blocks");
    cJSON *jsteps = cJSON_AddArrayToObject(root, "steps");
    for (int s = 0; s < a->n_contexts; s++) {
        const struct step_cost *st = &steps[s];
        for (int i = 0; i < BLOCK_COUNT; i++) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "name", block_name(st->blocks[i].id));
            cJSON_AddNumberToObject(o, "context", (double)st->context);
            cJSON_AddNumberToObject(o, "calls", st->blocks[i].calls);
            json_add_costs(o, &st->blocks[i]);
            cJSON_AddItemToArray(blocks, o);
        }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "context", (double)st->context);
        json_add_costs(o, &st->total);
        cJSON_AddItemToArray(jsteps, o);
    }
    if (a->n_batches > 0) batch_json(root, cfg, a);
    if (a->n_batches > 0) cJSON_AddStringToObject(root, "batch_levels", a->levels_note);
    if (a->n_prompts > 0) prompt_json(root, cfg, a);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return cli_fail("predict: out of memory writing JSON");
    puts(text);
    free(text);
    return CLI_EXIT_OK;
}

/* --batch: this machine's caches for the per-level split (hwloc), and with --measure-roofs the roofs of the
 * batch rows of a full run (all threads: peak FMA, DRAM read, L2 read) from quick ceilings measured now. */
static int batch_setup(struct predict_args *a) {
    struct machine m;
    struct fr_err err = {{0}};
    int n = 0;
    const size_t len = sizeof a->levels_note;
    if (machine_detect(&m, 0, &err) != 0) {
        if (a->measure_roofs) return cli_fail("predict: --measure-roofs: topology: %s", err.msg);
        n = snprintf(
            a->levels_note, len,
            "levels: hwloc gives no topology (%.160s): DRAM = matrix weights + KV reads, every other byte "
            "in L2",
            err.msg);
    } else {
        a->caches =
            (struct cost_caches){.bytes = {(double)m.l1d_bytes, (double)m.l2_bytes, (double)m.l3_bytes},
                                 .threads = m.threads,
                                 .step_team = decode_runs_team(MATVEC_BACKEND_FORGE, m.threads)};
        a->caches_ok = true;
        n = snprintf(
            a->levels_note, len,
            "levels for this machine's caches (hwloc): L1d %zu KiB, L2 %zu KiB, L3 %zu KiB, %d threads",
            m.l1d_bytes >> 10, m.l2_bytes >> 10, m.l3_bytes >> 10, m.threads);
    }
    if (!a->measure_roofs) return CLI_EXIT_OK;
    if (machine_bind_threads(&m, &err) != 0)
        fprintf(stderr, "forge-roofline: predict: threads not bound: %s\n", err.msg);
    struct ceilings c;
    struct ceilings_opts co = {.quick = true};
    if (ceilings_measure(&m, &co, &c, &err) != 0) return cli_fail("predict: --measure-roofs: %s", err.msg);
    struct roofline_rates all, one;
    char notes[256] = "";
    roofs_from_ceilings(&c, &all, &one, notes, sizeof notes);
    a->peak_gflops = all.peak_gflops, a->bw_gbs = all.level_gbs[ROOFLINE_TERM_DRAM];
    a->cache_gbs = all.level_gbs[ROOFLINE_TERM_L2];
    if (!(a->peak_gflops > 0 && a->bw_gbs > 0 && a->cache_gbs > 0))
        return cli_fail("predict: --measure-roofs: a ceiling is unavailable (%s)",
                        notes[0] ? notes : "no note");
    if (n > 0 && (size_t)n < len)
        snprintf(a->levels_note + n, len - (size_t)n,
                 "; roofs measured now (quick ceilings, %d threads): peak FMA %.1f GFLOP/s, DRAM read %.1f "
                 "GB/s, L2 "
                 "read %.1f GB/s",
                 m.threads, a->peak_gflops, a->bw_gbs, a->cache_gbs);
    return CLI_EXIT_OK;
}

int cmd_predict(int argc, char **argv) {
    struct predict_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc < 0) return CLI_EXIT_OK; /* --help */
    if (rc) return rc;
    struct qwen3_config cfg;
    struct predict_weights w;
    if ((rc = weights_resolve(&a, &cfg, &w)) || (rc = check_roof_args(&a))) return rc;
    /* context T attends over T + 1 positions, as in the full run */
    int kept = 0;
    for (int s = 0; s < a.n_contexts; s++) {
        if (a.contexts[s] < cfg.max_context)
            a.contexts[kept++] = a.contexts[s];
        else if (a.contexts_given)
            return cli_usage_error("--context %ld: %s holds at most %d positions (max_position_embeddings)",
                                   a.contexts[s], cfg.name, cfg.max_context);
    }
    a.n_contexts = kept;
    if ((rc = prompts_fit(&cfg, &a))) return rc;
    if (cost_params_from_blocks(&cfg) != qwen3_param_count(&cfg))
        return cli_fail("predict: self-check failed: the block table reads %" PRIu64
                        " parameters, the config has %" PRIu64,
                        cost_params_from_blocks(&cfg), qwen3_param_count(&cfg));
    if ((a.n_batches > 0 || (a.n_prompts > 0 && a.measure_roofs)) && (rc = batch_setup(&a))) return rc;
    if (a.measure_roofs && fr_dtype_is_block(a.cost.weights) && (rc = quant_measure(&a))) return rc;
    struct step_cost steps[PREDICT_MAX_CONTEXTS];
    for (int s = 0; s < a.n_contexts; s++) cost_step(&cfg, &a.cost, a.contexts[s], a.sampler, &steps[s]);
    if (a.format == PREDICT_JSON) return print_json(&cfg, &a, steps);
    if (a.format == PREDICT_CSV && a.n_batches > 0)
        batch_csv(&cfg, &a);
    else if (a.format == PREDICT_CSV && a.n_prompts > 0)
        prompt_csv(&cfg, &a);
    else if (a.format == PREDICT_CSV)
        print_csv(&cfg, &a, steps);
    else
        print_md(&cfg, &a, steps);
    if (a.format == PREDICT_MD && fr_dtype_is_block(a.cost.weights) && a.n_contexts > 0)
        quant_md(&a, &steps[0]);
    if (a.format == PREDICT_MD && a.n_batches > 0) batch_md(&cfg, &a);
    if (a.format == PREDICT_MD && a.n_prompts > 0) prompt_md(&cfg, &a);
    return CLI_EXIT_OK;
}
