/* Shared loading of --model and parsing of --dtype / --kv for the subcommands. */
#include "bench/cli/model_opts.h"

#include "bench/cli/cli.h"
#include "model/weight_mix.h"

int model_opts_load(const char *model, struct qwen3_config *cfg) {
    struct fr_err err = {{0}};
    char path[512];
    if (!model) return cli_usage_error("--model is required (a name such as qwen3-0.6b, or a config.json)");
    if (qwen3_config_resolve(model, path, sizeof path, &err) != 0 || qwen3_config_load(path, cfg, &err) != 0)
        return cli_usage_error("%s", err.msg);
    return CLI_EXIT_OK;
}

int model_opts_dtype(const char *flag, const char *value, enum fr_dtype *out) {
    if (fr_dtype_parse(value, out) != 0)
        return cli_usage_error("%s: expected bf16 or f32, got '%s'", flag, value);
    return CLI_EXIT_OK;
}

int model_opts_weights(const char *cmd, const char *value, enum fr_dtype *out, int *mix) {
    enum weight_mix m;
    *mix = -1;
    if (fr_wtype_parse(value, out) == 0) return CLI_EXIT_OK; /* q4_0 and q6_k: every matrix in that type */
    if (weight_mix_parse(value, &m) == 0) {
        struct weight_formats f;
        struct qwen3_config c = {.n_layers = 8,
                                 .hidden = 256,
                                 .intermediate = 256,
                                 .n_heads = 4,
                                 .head_dim = 64,
                                 .n_kv_heads = 2,
                                 .vocab = 256,
                                 .tied_embeddings = 1,
                                 .name = "probe"};
        struct fr_err err;
        if (weight_mix_formats(m, &c, &f, &err) != 0) /* a mix whose types this build does not run */
            return cli_usage_error(
                "%s--dtype %s: llama.cpp's mix holds %s matrices, which this build runs no "
                "kernel for yet",
                cmd, value, wslot_dtype_name(weight_mix_file_type(m, &c, 0, WPART_Q)));
        (void)weight_formats_is_uniform(&f, out);
        *mix = (int)m;
        return CLI_EXIT_OK;
    }
    return cli_usage_error(
        "%s--dtype '%s': bf16, f32, q8_0, q4_0, q4_k, q5_k, q6_k, or llama.cpp's mix q4_k_m "
        "or q5_k_m",
        cmd, value);
}

int model_opts_formats(const char *path, const struct qwen3_config *cfg, enum fr_dtype t, int mix, bool given,
                       struct weight_formats *out, char *note, size_t note_len, struct fr_err *err) {
    if (mix < 0) return weights_file_formats(path, cfg, t, given, out, note, note_len, err);
    struct weight_formats want;
    if (weight_mix_formats((enum weight_mix)mix, cfg, &want, err)) return -1;
    return weights_file_formats_as(path, cfg, &want, weight_mix_name((enum weight_mix)mix), out, note,
                                   note_len, err);
}
