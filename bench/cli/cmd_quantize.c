/* forge-roofline quantize: loads a model's weights (a GGUF or safetensors checkpoint, or the synthetic
 * weights `decode` runs) quantised to Q8_0 or Q4_0 exactly as `--dtype` quantises them at load, and writes
 * them as a GGUF file that `decode --weights` and the full run read back block for block. Checked end to end
 * in tests/test_quantize.c: the written file decodes to the same logits, bit for bit, as load-time
 * quantisation of its source. */
#include "bench/cli/cli.h"
#include "bench/cli/model_opts.h"

#include <stdio.h>
#include <string.h>

#include "model/weights_file.h"

struct quantize_args {
    const char *model, *weights, *out;
    enum fr_dtype wtype;
    bool wtype_given;
    int mix; /* --dtype named a llama.cpp mix (model/weight_mix.h), else -1 */
};

static void usage(FILE *f) {
    fprintf(
        f, "usage: forge-roofline quantize --model M [--weights IN] --dtype T --out OUT.gguf\n"
           "  --model M        model name, directory or config.json (optional with a GGUF --weights)\n"
           "  --weights IN     GGUF or safetensors checkpoint (default: decode's synthetic weights)\n"
           "  --dtype T        q8_0, q4_0, q4_k, q5_k or q6_k: every matrix, quantised as --dtype T does at\n"
           "                   load; q4_k_m or q5_k_m: llama.cpp's tensor mix for the model\n"
           "  --out OUT.gguf   the GGUF file to write (norms f32, a GGUF input's metadata kept)\n");
}

static int parse_args(int argc, char **argv, struct quantize_args *a, int *help) {
    memset(a, 0, sizeof *a);
    a->mix = -1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0) {
            *help = 1;
            return 0;
        }
        if (strncmp(o, "--", 2) != 0) return cli_usage_error("quantize: unexpected argument '%s'", o);
        if (i + 1 >= argc) return cli_usage_error("quantize: %s needs a value", o);
        const char *v = argv[++i];
        if (strcmp(o, "--model") == 0)
            a->model = v;
        else if (strcmp(o, "--weights") == 0)
            a->weights = v;
        else if (strcmp(o, "--out") == 0)
            a->out = v;
        else if (strcmp(o, "--dtype") == 0) {
            if (model_opts_weights("quantize: ", v, &a->wtype, &a->mix)) return CLI_EXIT_USAGE;
            if (!fr_dtype_is_quant(a->wtype))
                return cli_usage_error(
                    "quantize: --dtype '%s': q8_0, q4_0, q4_k, q5_k, q6_k, q4_k_m or q5_k_m", v);
            a->wtype_given = true;
        } else
            return cli_usage_error("quantize: unknown option '%s' (try --help)", o);
    }
    if (!a->model && !a->weights)
        return cli_usage_error("quantize: --model is required (or a GGUF --weights)");
    if (!a->wtype_given)
        return cli_usage_error(
            "quantize: --dtype q8_0, q4_0, q4_k, q5_k, q6_k, q4_k_m or q5_k_m is required");
    if (!a->out) return cli_usage_error("quantize: --out FILE.gguf is required");
    return CLI_EXIT_OK;
}

static int run_quantize(const struct quantize_args *a, struct qwen3_weights *w) {
    struct fr_err err = {{0}};
    struct qwen3_config cfg;
    struct weight_formats formats;
    char note[384];
    if (weights_file_config(a->weights, a->model, &cfg, &err) ||
        model_opts_formats(a->weights, &cfg, a->wtype, a->mix, true, &formats, note, sizeof note, &err))
        return cli_usage_error("quantize: %s", err.msg);
    if (cli_same_file(a->out, a->weights) || cli_same_file(a->out, cfg.path))
        return cli_usage_error("quantize: --out '%s' is an input file", a->out);
    if (note[0]) fprintf(stderr, "quantize: %s\n", note);
    if (qwen3_weights_alloc_formats(w, &cfg, &formats, &err)) return cli_usage_error("quantize: %s", err.msg);
    char names[96];
    qwen3_weights_formats_name(w, names, sizeof names);
    if (a->weights) {
        if (weights_file_load(a->weights, w, &err)) return cli_usage_error("quantize: %s", err.msg);
    } else {
        qwen3_weights_init_synthetic(w, CLI_SYNTHETIC_SEED);
    }
    if (weights_file_write_gguf(a->out, w, a->weights, &err)) return cli_fail("quantize: %s", err.msg);
    fprintf(stderr, "quantize: wrote %s: model %s, matrices %s, norms f32, %.1f MB of weights, from %s\n",
            a->out, cfg.name, names, (double)w->total_bytes / 1e6,
            a->weights ? a->weights : "synthetic weights (decode's seed)");
    return CLI_EXIT_OK;
}

int cmd_quantize(int argc, char **argv) {
    struct quantize_args a;
    int help = 0;
    int rc = parse_args(argc, argv, &a, &help);
    if (rc) return rc;
    if (help) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    struct qwen3_weights w;
    memset(&w, 0, sizeof w);
    rc = run_quantize(&a, &w);
    qwen3_weights_free(&w);
    return rc;
}
