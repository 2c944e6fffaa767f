/* forge-roofline decode: runs the Qwen3 decode loop end to end on synthetic, GGUF or safetensors weights. The
 * prompt ids go through the step one position at a time, then max-new tokens are generated (greedy unless
 * a temperature is given); the generated ids go to stdout on one line, the setup and tokens/s to stderr,
 * and --logits-out keeps every generated token's logits row (little-endian f32) for comparison with another
 * implementation. Checked end to end in tests/test_cmd_decode.c. */
#include "bench/cli/cli.h"
#include "bench/cli/model_opts.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/gemm_onednn.h"
#include "roofline/timing.h"
#include "model/config.h"
#include "model/cost.h"
#include "model/decode.h"
#include "model/tokenizer.h"
#include "model/prefill.h"
#include "model/weights_file.h"
#include "roofline/blas_pool.h"
#include "roofline/topology.h"

struct decode_args {
    const char *model, *weights, *prompt, *logits_out, *isa;
    const char *text, *tokenizer; /* --prompt TEXT and where its tokenizer comes from */
    bool chat;                    /* --chat: the text is one user turn of Qwen3's chat template */
    bool prefill;                 /* --prefill: the prompt in one pass (model/prefill.h), not a step per id */
    bool wtype_given;             /* --dtype given: a Q8_0 or Q4_0 GGUF file must then hold that type */
    int mix;                      /* --dtype named a llama.cpp mix (model/weight_mix.h), else -1 */
    long max_new;
    enum fr_dtype wtype, kvtype;
    enum matvec_backend backend;
    long threads; /* 0: one per core */
    struct sampler_params sampler;
};

static void usage(FILE *f) {
    fprintf(
        f,
        "usage: forge-roofline decode --model M --prompt-ids 1,2,3 --max-new N [options]\n"
        "  --model M            model name, directory or config.json (optional with a GGUF --weights)\n"
        "  --weights FILE       GGUF or safetensors checkpoint (default: synthetic weights, fixed seed);\n"
        "                       a GGUF file's config comes from its metadata, checked against --model\n"
        "  --prompt-ids LIST    comma-separated token ids, fed one step at a time\n"
        "  --prefill            the prompt in one pass (GEMMs, tiled causal attention), as engines process\n"
        "                       it, instead of one decode step per id; the same tokens follow\n"
        "  --prompt TEXT        text instead of ids: encoded with Qwen3's tokenizer, and the generated\n"
        "                       text is printed as it is produced (stops at <|im_end|> or <|endoftext|>)\n"
        "  --chat               the --prompt is one user turn of Qwen3's chat template\n"
        "  --tokenizer FILE     tokenizer.json or GGUF for --prompt (default: a GGUF --weights)\n"
        "  --max-new N          tokens to generate (>= 0)\n"
        "  --dtype T            weight type: bf16 (default), f32, q8_0, q4_0, q4_k, q5_k, q6_k, or\n"
        "                       llama.cpp's mix q4_k_m or q5_k_m; a quantised GGUF file runs per tensor in "
        "its own types\n"
        "  --kv bf16|f32        KV cache type (default bf16)\n"
        "  --gemv B             matvec backend: forge (default), openblas or onednn\n"
        "  --threads N          OpenMP (and OpenBLAS) threads\n"
        "  --isa NAME           " CLI_ISA_HELP "\n"
        "  --temperature T      0 = greedy (default); > 0 samples\n"
        "  --top-p P            nucleus in [0, 1] (default 1)\n"
        "  --seed S             sampler seed (default 0)\n"
        "  --logits-out FILE    each generated token's logits as little-endian f32 rows\n"
        "Generated ids go to stdout on one line; setup and tokens/s to stderr.\n");
}

static int parse_args(int argc, char **argv, struct decode_args *a, int *help) {
    memset(a, 0, sizeof *a);
    a->max_new = -1;
    a->wtype = a->kvtype = FR_DTYPE_BF16;
    a->mix = -1;
    a->backend = MATVEC_BACKEND_FORGE;
    a->sampler = (struct sampler_params){.temperature = 0.0f, .top_p = 1.0f, .seed = 0};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            *help = 1;
            return 0;
        }
        if (strncmp(o, "--", 2) != 0) return cli_usage_error("decode: unexpected argument '%s'", o);
        if (strcmp(o, "--chat") == 0) {
            a->chat = true;
            continue;
        }
        if (strcmp(o, "--prefill") == 0) {
            a->prefill = true;
            continue;
        }
        if (i + 1 >= argc) return cli_usage_error("decode: %s needs a value", o);
        const char *v = argv[++i];
        unsigned long long u;
        if (strcmp(o, "--model") == 0)
            a->model = v;
        else if (strcmp(o, "--weights") == 0)
            a->weights = v;
        else if (strcmp(o, "--prompt-ids") == 0)
            a->prompt = v;
        else if (strcmp(o, "--prompt") == 0)
            a->text = v;
        else if (strcmp(o, "--tokenizer") == 0)
            a->tokenizer = v;
        else if (strcmp(o, "--logits-out") == 0)
            a->logits_out = v;
        else if (strcmp(o, "--isa") == 0)
            a->isa = v;
        else if (strcmp(o, "--max-new") == 0) {
            if (cli_parse_long(v, 0, INT_MAX, &a->max_new))
                return cli_usage_error("decode: --max-new '%s' is not an integer >= 0", v);
        } else if (strcmp(o, "--dtype") == 0) {
            if (model_opts_weights("decode: ", v, &a->wtype, &a->mix)) return CLI_EXIT_USAGE;
            a->wtype_given = true;
        } else if (strcmp(o, "--kv") == 0) {
            if (fr_dtype_parse(v, &a->kvtype)) return cli_usage_error("decode: --kv '%s': bf16 or f32", v);
        } else if (strcmp(o, "--gemv") == 0) {
            if (matvec_backend_parse(v, &a->backend) != 0)
                return cli_usage_error("decode: --gemv '%s': forge, openblas or onednn", v);
        } else if (strcmp(o, "--threads") == 0) {
            if (cli_parse_long(v, 1, 1024, &a->threads))
                return cli_usage_error("decode: --threads '%s' is not an integer in [1, 1024]", v);
        } else if (strcmp(o, "--temperature") == 0) {
            if (cli_parse_float(v, &a->sampler.temperature) || a->sampler.temperature < 0)
                return cli_usage_error("decode: --temperature '%s' must be 0 or a positive f32 number", v);
        } else if (strcmp(o, "--top-p") == 0) {
            if (cli_parse_float(v, &a->sampler.top_p) || a->sampler.top_p < 0 || a->sampler.top_p > 1)
                return cli_usage_error("decode: --top-p '%s' must be in [0, 1] (as f32)", v);
        } else if (strcmp(o, "--seed") == 0) {
            if (cli_parse_u64(v, &u))
                return cli_usage_error("decode: --seed '%s' is not an unsigned integer", v);
            a->sampler.seed = u;
        } else
            return cli_usage_error("decode: unknown option '%s' (try --help)", o);
    }
    if (!a->model && !a->weights) return cli_usage_error("decode: --model is required (or a GGUF --weights)");
    if (!a->prompt && !a->text) return cli_usage_error("decode: --prompt-ids is required (or --prompt TEXT)");
    if (a->prompt && a->text)
        return cli_usage_error("decode: give one of --prompt-ids and --prompt, not both");
    if (a->chat && !a->text) return cli_usage_error("decode: --chat needs --prompt TEXT");
    if (a->tokenizer && !a->text) return cli_usage_error("decode: --tokenizer is for --prompt TEXT");
    if (a->max_new < 0) return cli_usage_error("decode: --max-new is required");
    return cli_isa_apply("decode: ", a->isa, a->backend);
}

/* Parses the prompt into a malloc'd array and checks every id against the vocabulary. */
static int parse_prompt(const char *s, int vocab, int **ids_out, int *n_out) {
    if (!s) return cli_usage_error("decode: --prompt-ids is required");
    size_t cap = strlen(s) / 2 + 1; /* at most one id per two characters ("1,2,3") */
    long *vals = malloc(cap * sizeof *vals);
    int *ids = malloc(cap * sizeof *ids);
    if (!vals || !ids) {
        free(vals);
        free(ids);
        return cli_fail("decode: out of memory for the prompt");
    }
    int n = cli_parse_long_list(s, LONG_MIN, LONG_MAX, vals, (int)(cap < INT_MAX ? cap : INT_MAX));
    int rc = 0;
    if (n <= 0)
        rc = cli_usage_error("decode: --prompt-ids '%.64s' is not a comma-separated list of integers", s);
    for (int i = 0; rc == 0 && i < n; i++) {
        if (vals[i] < 0 || vals[i] >= vocab)
            rc = cli_usage_error("decode: prompt id %ld (position %d) is outside the vocabulary [0, %d)",
                                 vals[i], i, vocab);
        else
            ids[i] = (int)vals[i];
    }
    free(vals);
    if (rc) {
        free(ids);
        return rc;
    }
    *ids_out = ids;
    *n_out = n;
    return 0;
}

struct run {
    struct tokenizer tok; /* --prompt only */
    struct qwen3_config cfg;
    struct qwen3_weights w;
    struct decode_state st;
    struct prefill_state pf; /* --prefill: its state decodes on after the prompt */
    bool have_pf;
    int *ids;
    FILE *logits_f;
    bool logits_created; /* --logits-out was opened as a plain file: removed again on failure */
};

/* --prompt TEXT: the tokenizer of --tokenizer or of a GGUF --weights, the chat template's one user turn when
 * --chat (Qwen3's template with the generation prompt), the ids checked against the model's vocabulary. */
static int encode_prompt(const struct decode_args *a, struct run *r, int *n) {
    struct fr_err err = {{0}};
    enum weights_format fmt = WEIGHTS_FORMAT_SAFETENSORS;
    const char *from = a->tokenizer;
    if (!from && a->weights && weights_file_format(a->weights, &fmt, &err) == 0 && fmt == WEIGHTS_FORMAT_GGUF)
        from = a->weights;
    if (!from)
        return cli_usage_error("decode: --prompt needs a tokenizer: --tokenizer FILE or a GGUF --weights");
    if (tokenizer_load(&r->tok, from, &err)) return cli_usage_error("decode: %s", err.msg);
    static const char head[] = "<|im_start|>user\n", tail[] = "<|im_end|>\n<|im_start|>assistant\n";
    size_t tl = strlen(a->text), len = a->chat ? sizeof head - 1 + tl + sizeof tail - 1 : tl;
    char *text = malloc(len + 1);
    if (!text) return cli_fail("decode: out of memory for the prompt");
    snprintf(text, len + 1, "%s%s%s", a->chat ? head : "", a->text, a->chat ? tail : "");
    int rc = tokenizer_encode(&r->tok, text, len, &r->ids, n, &err);
    free(text);
    if (rc) return cli_usage_error("decode: --prompt: %s", err.msg);
    if (*n == 0) return cli_usage_error("decode: --prompt encodes to no tokens");
    for (int i = 0; i < *n; i++)
        if (r->ids[i] >= r->cfg.vocab)
            return cli_usage_error(
                "decode: --prompt token %d (id %d) is outside the model's vocabulary [0, %d)", i, r->ids[i],
                r->cfg.vocab);
    return 0;
}

static int write_row(FILE *f, const float *logits, int vocab) {
    return fwrite(logits, sizeof *logits, (size_t)vocab, f) == (size_t)vocab ? 0 : -1;
}

static int run_decode(struct decode_args *a, struct run *r) {
    struct fr_err err = {{0}};
    char note[384];
    struct weight_formats formats;
    if (weights_file_config(a->weights, a->model, &r->cfg, &err) ||
        model_opts_formats(a->weights, &r->cfg, a->wtype, a->mix, a->wtype_given, &formats, note, sizeof note,
                           &err))
        return cli_usage_error("decode: %s", err.msg);
    if (note[0]) fprintf(stderr, "decode: %s\n", note);
    if (sampler_check_params(&a->sampler, &err)) return cli_usage_error("decode: %s", err.msg);
    int n_prompt = 0;
    int rc =
        a->text ? encode_prompt(a, r, &n_prompt) : parse_prompt(a->prompt, r->cfg.vocab, &r->ids, &n_prompt);
    if (rc) return rc;
    /* text mode stops where the model ends its turn */
    int stop1 = a->text ? tokenizer_find_added(&r->tok, "<|im_end|>") : -1;
    int stop2 = a->text ? tokenizer_find_added(&r->tok, "<|endoftext|>") : -1;
    /* positions: the prompt, then every generated token but the last is fed back */
    long positions = (long)n_prompt + (a->max_new > 0 ? a->max_new - 1 : 0);
    if (positions > r->cfg.max_context)
        return cli_usage_error("decode: %d prompt ids + %ld new tokens need %ld positions; %s allows %d",
                               n_prompt, a->max_new, positions, r->cfg.name, r->cfg.max_context);
    if (a->logits_out &&
        (cli_same_file(a->logits_out, a->weights) || cli_same_file(a->logits_out, r->cfg.path)))
        return cli_usage_error("decode: --logits-out '%s' is an input file", a->logits_out);
    if (a->logits_out && !(r->logits_f = fopen(a->logits_out, "wb")))
        return cli_usage_error("decode: cannot write --logits-out '%s': %s", a->logits_out, strerror(errno));
    r->logits_created = a->logits_out && cli_is_plain_file(a->logits_out);
    /* one thread per core (or --threads), each bound to its core through hwloc; OpenBLAS gets as many */
    struct machine m;
    if (machine_detect(&m, (int)a->threads, &err)) return cli_usage_error("decode: %s", err.msg);
    if (machine_bind_threads(&m, &err)) return cli_fail("decode: %s", err.msg);
    char pool[256] = "";
    if (a->backend == MATVEC_BACKEND_OPENBLAS && blas_pool_bind_threads(&m, pool, sizeof pool, &err))
        return cli_fail("decode: %s", err.msg);

    if (qwen3_weights_alloc_formats(&r->w, &r->cfg, &formats, &err))
        return cli_usage_error("decode: %s", err.msg);
    a->wtype = r->w.wtype;
    char wnames[96];
    qwen3_weights_formats_name(&r->w, wnames, sizeof wnames);
    double t0 = timing_now_s();
    if (a->weights) {
        if (weights_file_load(a->weights, &r->w, &err)) return cli_usage_error("decode: %s", err.msg);
    } else {
        qwen3_weights_init_synthetic(&r->w, CLI_SYNTHETIC_SEED);
    }
    double load_s = timing_now_s() - t0;
    const int max_pos = (int)(positions > 0 ? positions : 1);
    if (a->prefill) {
        if (prefill_init(&r->pf, &r->w, max_pos, n_prompt, a->kvtype, a->backend, m.threads,
                         &(struct gemm_blocking){m.l1d_bytes, m.l2_bytes}, &err))
            return cli_usage_error("decode: --prefill: %s", err.msg);
        r->have_pf = true;
    } else if (decode_state_init(&r->st, &r->w, max_pos, a->kvtype, a->backend, m.threads, &err)) {
        return cli_usage_error("decode: %s", err.msg);
    }
    struct decode_state *st = a->prefill ? &r->pf.st : &r->st;
    fprintf(stderr,
            "decode: model %s (%s), weights %s %s (%.2f GB, ready in %.2f s), kv %s, gemv %s, isa %s, "
            "threads %d\n",
            r->cfg.name, r->cfg.path, wnames, a->weights ? a->weights : "synthetic",
            (double)r->w.total_bytes / 1e9, load_s, fr_dtype_name(a->kvtype), matvec_backend_name(a->backend),
            kernel_isa_name(kernel_isa_active()), m.threads);
    if (pool[0]) fprintf(stderr, "decode: matvec threads: %s\n", pool);
    fprintf(stderr, "decode: kernels: %s%s\n", kernel_prefetch_describe(),
            a->backend == MATVEC_BACKEND_FORGE ? kernel_matvec_describe() : "");

    /* prompt: one step per id, or one prefill; the last position's logits give the first new token */
    t0 = timing_now_s();
    if (a->prefill && prefill_run(&r->pf, r->ids, n_prompt, 0, NULL, &err))
        return cli_fail("decode: %s", err.msg);
    for (int i = 0; !a->prefill && i < n_prompt; i++)
        if (decode_step(st, r->ids[i], i, NULL, &err)) return cli_fail("decode: %s", err.msg);
    double prompt_s = timing_now_s() - t0;

    t0 = timing_now_s();
    int pos = n_prompt;
    long made = 0;
    for (long g = 0; g < a->max_new; g++) {
        if (g > 0 && decode_step(st, st->sampled_token, pos++, NULL, &err))
            return cli_fail("decode: %s", err.msg);
        if (r->logits_f && write_row(r->logits_f, st->logits, r->cfg.vocab))
            return cli_fail("decode: writing --logits-out '%s' failed", a->logits_out);
        int token;
        if (decode_sample(st, &a->sampler, (uint64_t)g, NULL, &token, &err))
            return cli_fail("decode: logits of new token %ld: %s", g, err.msg);
        made++;
        if (!a->text) {
            printf("%s%d", g ? " " : "", token);
            continue;
        }
        if (token == stop1 || token == stop2) break;
        size_t len;
        const unsigned char *piece = tokenizer_piece(&r->tok, token, &len);
        if (!piece) return cli_fail("decode: generated id %d has no token in %s", token, r->tok.source);
        /* as produced: a piece may end inside a UTF-8 character, the terminal joins the bytes */
        if (fwrite(piece, 1, len, stdout) != len || fflush(stdout))
            return cli_fail("decode: writing the text failed");
    }
    printf("\n");
    double gen_s = timing_now_s() - t0;
    if (fflush(stdout)) return cli_fail("decode: writing the tokens failed");
    if (r->logits_f) {
        int bad = fclose(r->logits_f) != 0;
        r->logits_f = NULL;
        if (bad) return cli_fail("decode: writing --logits-out '%s' failed", a->logits_out);
    }

    /* Every step streams all the weights once, whatever the context; the cost model says how many bytes. */
    struct step_cost cost;
    struct cost_opts copts = {a->wtype, a->kvtype, &r->w.formats};
    cost_step(&r->cfg, &copts, 0, SAMPLER_VARIANT_GREEDY, &cost);
    long gen_steps = a->max_new > 0 ? a->max_new - 1 : 0;
    fprintf(stderr, "decode: prompt %d tokens in %.3f s (%.2f tokens/s%s)", n_prompt, prompt_s,
            prompt_s > 0 ? n_prompt / prompt_s : 0.0, a->prefill ? ", one prefill" : "");
    if (made > 0)
        fprintf(stderr, "; generated %ld tokens in %.3f s (%.2f tokens/s)", made, gen_s, made / gen_s);
    /* a prefill is no run of decode steps: the rate over the steps is then the generated ones' alone */
    double steps_s = a->prefill ? (gen_steps > 0 ? (double)gen_steps / gen_s : NAN)
                                : (double)(n_prompt + gen_steps) / (prompt_s + gen_s);
    if (isfinite(steps_s))
        fprintf(stderr,
                "; %.2f steps/s streams %.2f GB of weights per step = %.1f GB/s (provisional wall time)",
                steps_s, cost.total.weight_bytes / 1e9, steps_s * cost.total.weight_bytes / 1e9);
    fputc('\n', stderr);
    return CLI_EXIT_OK;
}

int cmd_decode(int argc, char **argv) {
    struct decode_args a;
    int help = 0;
    int rc = parse_args(argc, argv, &a, &help);
    if (rc) return rc;
    if (help) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    struct run r;
    memset(&r, 0, sizeof r);
    rc = run_decode(&a, &r);
    if (r.logits_f) fclose(r.logits_f);
    if (rc != CLI_EXIT_OK && r.logits_created) remove(a.logits_out); /* no half-written output */
    decode_state_free(&r.st);
    if (r.have_pf) prefill_free(&r.pf);
    qwen3_weights_free(&r.w);
    free(r.ids);
    tokenizer_free(&r.tok);
    gemm_onednn_cleanup(); /* --gemv onednn's primitives (nothing otherwise) */
    return rc;
}
