/* config.json parsing: the shipped Qwen3 configs and every error, one by one. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/config.h"

static const char *base_json =
    "{\"model_type\": \"qwen3\", \"hidden_size\": 64, \"intermediate_size\": 96, \"num_hidden_layers\": 2,"
    " \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 32, \"vocab_size\": 257,"
    " \"max_position_embeddings\": 512, \"rms_norm_eps\": 1e-6, \"rope_theta\": 1000000,"
    " \"tie_word_embeddings\": true}";

/* Parses base_json with one field replaced by `value` (JSON text) or removed (value NULL). */
static int parse_with(const char *field, const char *value, struct qwen3_config *cfg, struct fr_err *err) {
    cJSON *root = cJSON_Parse(base_json);
    cJSON_DeleteItemFromObjectCaseSensitive(root, field);
    if (value) cJSON_AddItemToObject(root, field, cJSON_Parse(value));
    char *text = cJSON_PrintUnformatted(root);
    int rc = qwen3_config_parse(text, strlen(text), "test.json", cfg, err);
    free(text);
    cJSON_Delete(root);
    return rc;
}

Test(config, shipped_models_param_counts) {
    static const struct {
        const char *name;
        unsigned long long params;
        int tied;
    } models[] = {{"qwen3-0.6b", 596049920ULL, 1},
                  {"qwen3-1.7b", 1720574976ULL, 1},
                  {"qwen3-4b", 4022468096ULL, 1},
                  {"qwen3-8b", 8190735360ULL, 0}};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char path[256];
        struct qwen3_config c;
        struct fr_err err = {{0}};
        cr_assert_eq(qwen3_config_resolve(models[i].name, path, sizeof path, &err), 0, "%s", err.msg);
        cr_assert_eq(qwen3_config_load(path, &c, &err), 0, "%s", err.msg);
        cr_expect_eq(qwen3_param_count(&c), models[i].params, "%s: %llu", models[i].name,
                     (unsigned long long)qwen3_param_count(&c));
        cr_expect_eq(c.tied_embeddings, models[i].tied);
        cr_expect_str_eq(c.name, models[i].name);
        cr_expect_eq(c.head_dim, 128);
    }
}

Test(config, qwen3_0_6b_fields) {
    struct qwen3_config c;
    struct fr_err err = {{0}};
    cr_assert_eq(qwen3_config_load("model/qwen3-0.6b/config.json", &c, &err), 0, "%s", err.msg);
    cr_expect_eq(c.hidden, 1024);
    cr_expect_eq(c.intermediate, 3072);
    cr_expect_eq(c.n_layers, 28);
    cr_expect_eq(c.n_heads, 16);
    cr_expect_eq(c.n_kv_heads, 8);
    cr_expect_eq(c.vocab, 151936);
    cr_expect_eq(c.rms_eps, 1e-6);
    cr_expect_eq(c.rope_theta, 1e6);
}

Test(config, tiny_config_parses) {
    struct qwen3_config c;
    struct fr_err err = {{0}};
    cr_assert_eq(parse_with("head_dim", "32", &c, &err), 0, "%s", err.msg);
    cr_expect_eq(c.head_dim, 32); /* not hidden / heads = 16 */
}

static void expect_error(const char *field, const char *value, const char *needle) {
    struct qwen3_config c;
    struct fr_err err = {{0}};
    cr_expect_neq(parse_with(field, value, &c, &err), 0, "%s=%s accepted", field,
                  value ? value : "(missing)");
    cr_expect(strstr(err.msg, needle) != NULL, "%s=%s: message '%s' lacks '%s'", field, value ? value : "-",
              err.msg, needle);
    cr_expect(strstr(err.msg, "test.json") != NULL, "message '%s' does not name the file", err.msg);
    cr_expect(strchr(err.msg, '\n') == NULL, "message is not one line");
}

Test(config, missing_fields) {
    const char *fields[] = {"model_type",        "hidden_size",         "intermediate_size",
                            "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                            "head_dim",          "vocab_size",          "max_position_embeddings",
                            "rms_norm_eps",      "rope_theta",          "tie_word_embeddings"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) expect_error(fields[i], NULL, fields[i]);
}

Test(config, wrong_types_and_values) {
    expect_error("hidden_size", "\"1024\"", "hidden_size");
    expect_error("hidden_size", "0", "hidden_size");
    expect_error("hidden_size", "-4", "hidden_size");
    expect_error("hidden_size", "64.5", "hidden_size");
    expect_error("vocab_size", "1e300", "vocab_size");
    expect_error("tie_word_embeddings", "1", "tie_word_embeddings");
    expect_error("rms_norm_eps", "0", "rms_norm_eps");
    expect_error("rope_theta", "null", "rope_theta");
    expect_error("model_type", "\"llama\"", "model_type");
    expect_error("head_dim", "33", "head_dim");
    /* optional, but when given the step must be able to compute it: it computes SiLU only */
    expect_error("hidden_act", "\"gelu\"", "hidden_act");
    expect_error("hidden_act", "1", "hidden_act");
}

Test(config, inconsistent_shapes) {
    expect_error("num_key_value_heads", "3", "num_key_value_heads");
    struct qwen3_config c;
    struct fr_err err = {{0}};
    const char *huge =
        "{\"model_type\": \"qwen3\", \"hidden_size\": 16777216, \"intermediate_size\": 16777216,"
        " \"num_hidden_layers\": 2, \"num_attention_heads\": 4, \"num_key_value_heads\": 2,"
        " \"head_dim\": 32, \"vocab_size\": 16777216, \"max_position_embeddings\": 512,"
        " \"rms_norm_eps\": 1e-6, \"rope_theta\": 1e6, \"tie_word_embeddings\": true}";
    cr_expect_neq(qwen3_config_parse(huge, strlen(huge), "huge.json", &c, &err), 0);
    cr_expect(strstr(err.msg, "too large") != NULL, "%s", err.msg);
}

Test(config, malformed_json_and_files) {
    struct qwen3_config c;
    struct fr_err err = {{0}};
    const char *bad[] = {"", "{", "[1,2]", "{\"hidden_size\": }", "nul", "\"qwen3\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_neq(qwen3_config_parse(bad[i], strlen(bad[i]), "bad.json", &c, &err), 0, "'%s'", bad[i]);
        cr_expect(strstr(err.msg, "bad.json") != NULL, "%s", err.msg);
    }
    cr_expect_neq(qwen3_config_load("/nonexistent/config.json", &c, &err), 0);
    cr_expect(strstr(err.msg, "/nonexistent/config.json") != NULL, "%s", err.msg);
    char path[256];
    cr_expect_neq(qwen3_config_resolve("no-such-model", path, sizeof path, &err), 0);
    cr_expect(strstr(err.msg, "no-such-model") != NULL, "%s", err.msg);
    cr_expect_neq(qwen3_config_resolve("../etc", path, sizeof path, &err), 0);
}

Test(config, resolve_directory_and_file) {
    char path[256];
    struct fr_err err = {{0}};
    cr_expect_eq(qwen3_config_resolve("model/qwen3-4b", path, sizeof path, &err), 0, "%s", err.msg);
    cr_expect_str_eq(path, "model/qwen3-4b/config.json");
    cr_expect_eq(qwen3_config_resolve("model/qwen3-4b/config.json", path, sizeof path, &err), 0, "%s",
                 err.msg);
    cr_expect_neq(qwen3_config_resolve("tests", path, sizeof path, &err), 0); /* a dir without config.json */
}
