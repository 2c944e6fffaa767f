/* Shared loading of --model and parsing of --dtype / --kv for the subcommands. */
#include "bench/cli/model_opts.h"

#include "bench/cli/cli.h"

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

int model_opts_wtype(const char *value, enum fr_dtype *out) {
    if (fr_wtype_parse(value, out) != 0)
        return cli_usage_error("--dtype: expected bf16, f32, q8_0, q4_0, q4_k or q6_k, got '%s'", value);
    return CLI_EXIT_OK;
}
