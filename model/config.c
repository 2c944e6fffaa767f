/* Reads a Qwen3-family config.json (Hugging Face format) into struct qwen3_config with cJSON.
 * Every field the model needs is required and type-checked: no silent defaults (head_dim in particular is
 * never derived from hidden / heads). Checked by tests/test_config.c and the fuzz harness
 * tests/fuzz/fuzz_config.c. */
#include "model/config.h"

#include "model/datadir.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Largest accepted dimension and matrix: far above any Qwen3 model, far below overflow of size_t sums. */
#define CONFIG_MAX_DIM      (1L << 24)
#define CONFIG_MAX_ELEMENTS (1ULL << 40)

static int get_int(const cJSON *root, const char *key, const char *path, int *out, struct fr_err *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) return fr_err_set(err, "%s: missing field '%s'", path, key);
    if (!cJSON_IsNumber(v)) return fr_err_set(err, "%s: field '%s' must be a number", path, key);
    double d = v->valuedouble;
    if (!(d == floor(d)) || d < 1 || d > (double)CONFIG_MAX_DIM)
        return fr_err_set(err, "%s: field '%s' must be an integer in [1, %ld], got %g", path, key,
                          CONFIG_MAX_DIM, d);
    *out = (int)d;
    return 0;
}

static int get_positive(const cJSON *root, const char *key, const char *path, double *out,
                        struct fr_err *err) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) return fr_err_set(err, "%s: missing field '%s'", path, key);
    if (!cJSON_IsNumber(v)) return fr_err_set(err, "%s: field '%s' must be a number", path, key);
    if (!isfinite(v->valuedouble) || v->valuedouble <= 0)
        return fr_err_set(err, "%s: field '%s' must be a positive number, got %g", path, key, v->valuedouble);
    *out = v->valuedouble;
    return 0;
}

static int check_product(const char *path, const char *what, unsigned long long a, unsigned long long b,
                         struct fr_err *err) {
    if (a * b > CONFIG_MAX_ELEMENTS)
        return fr_err_set(err, "%s: %s = %llu x %llu elements is too large", path, what, a, b);
    return 0;
}

int qwen3_config_check(const struct qwen3_config *c, const char *path, struct fr_err *err) {
    if (c->n_heads % c->n_kv_heads != 0)
        return fr_err_set(
            err, "%s: field 'num_attention_heads' (%d) must be a multiple of 'num_key_value_heads' (%d)",
            path, c->n_heads, c->n_kv_heads);
    if (c->head_dim % 2 != 0)
        return fr_err_set(err, "%s: field 'head_dim' must be even for the RoPE half rotation, got %d", path,
                          c->head_dim);
    unsigned long long q_dim = (unsigned long long)c->n_heads * (unsigned long long)c->head_dim;
    if (q_dim > (unsigned long long)CONFIG_MAX_DIM)
        return fr_err_set(err, "%s: fields 'num_attention_heads' x 'head_dim' = %llu is too large", path,
                          q_dim);
    if (check_product(path, "'vocab_size' x 'hidden_size'", (unsigned)c->vocab, (unsigned)c->hidden, err) ||
        check_product(path, "'intermediate_size' x 'hidden_size'", (unsigned)c->intermediate,
                      (unsigned)c->hidden, err) ||
        check_product(path, "'num_attention_heads' x 'head_dim' x 'hidden_size'", q_dim, (unsigned)c->hidden,
                      err))
        return -1;
    if (qwen3_param_count(c) > CONFIG_MAX_ELEMENTS)
        return fr_err_set(err, "%s: parameter count %llu is too large", path,
                          (unsigned long long)qwen3_param_count(c));
    return 0;
}

/* The model's name: the folder holding config.json, or the file name without .json. */
static void name_from_path(const char *path, char *name, size_t len) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    char *slash = strrchr(buf, '/');
    const char *base = slash ? slash + 1 : buf;
    if (strcmp(base, "config.json") == 0 && slash) {
        *slash = '\0';
        char *parent = strrchr(buf, '/');
        base = parent ? parent + 1 : buf;
    }
    if (snprintf(name, len, "%s", base) >= (int)len) name[len - 1] = '\0';
    char *dot = strstr(name, ".json");
    if (dot && dot[5] == '\0') *dot = '\0';
}

int qwen3_config_parse(const char *json, size_t len, const char *path, struct qwen3_config *cfg,
                       struct fr_err *err) {
    memset(cfg, 0, sizeof *cfg);
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root)
        return fr_err_set(err, "%s: malformed JSON near byte %ld", path, (long)(cJSON_GetErrorPtr() - json));
    int rc = -1;
    if (!cJSON_IsObject(root)) {
        fr_err_set(err, "%s: top level must be a JSON object", path);
        goto out;
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    if (!type) {
        fr_err_set(err, "%s: missing field 'model_type'", path);
        goto out;
    }
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "qwen3") != 0) {
        fr_err_set(err, "%s: field 'model_type' must be \"qwen3\"", path);
        goto out;
    }
    /* the decode step computes SiLU: any other activation would be a silently different model */
    const cJSON *act = cJSON_GetObjectItemCaseSensitive(root, "hidden_act");
    if (act && (!cJSON_IsString(act) || strcmp(act->valuestring, "silu") != 0)) {
        fr_err_set(err, "%s: field 'hidden_act' must be \"silu\"", path);
        goto out;
    }
    const cJSON *tied = cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings");
    if (!tied) {
        fr_err_set(err, "%s: missing field 'tie_word_embeddings'", path);
        goto out;
    }
    if (!cJSON_IsBool(tied)) {
        fr_err_set(err, "%s: field 'tie_word_embeddings' must be true or false", path);
        goto out;
    }
    cfg->tied_embeddings = cJSON_IsTrue(tied);
    if (get_int(root, "hidden_size", path, &cfg->hidden, err) ||
        get_int(root, "intermediate_size", path, &cfg->intermediate, err) ||
        get_int(root, "num_hidden_layers", path, &cfg->n_layers, err) ||
        get_int(root, "num_attention_heads", path, &cfg->n_heads, err) ||
        get_int(root, "num_key_value_heads", path, &cfg->n_kv_heads, err) ||
        get_int(root, "head_dim", path, &cfg->head_dim, err) ||
        get_int(root, "vocab_size", path, &cfg->vocab, err) ||
        get_int(root, "max_position_embeddings", path, &cfg->max_context, err) ||
        get_positive(root, "rms_norm_eps", path, &cfg->rms_eps, err) ||
        get_positive(root, "rope_theta", path, &cfg->rope_theta, err) || qwen3_config_check(cfg, path, err))
        goto out;
    snprintf(cfg->path, sizeof cfg->path, "%s", path);
    name_from_path(path, cfg->name, sizeof cfg->name);
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}

/* Config files are small; anything past this is not a config. */
#define CONFIG_MAX_BYTES (1 << 20)

int qwen3_config_load(const char *path, struct qwen3_config *cfg, struct fr_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return fr_err_set(err, "%s: cannot open: %s", path, strerror(errno));
    char *buf = malloc(CONFIG_MAX_BYTES + 1);
    if (!buf) {
        fclose(f);
        return fr_err_set(err, "%s: out of memory", path);
    }
    size_t n = fread(buf, 1, CONFIG_MAX_BYTES + 1, f);
    int read_error = ferror(f);
    fclose(f);
    int rc;
    if (read_error)
        rc = fr_err_set(err, "%s: read error", path);
    else if (n > CONFIG_MAX_BYTES)
        rc = fr_err_set(err, "%s: larger than %d bytes, not a config", path, CONFIG_MAX_BYTES);
    else
        rc = qwen3_config_parse(buf, n, path, cfg, err);
    free(buf);
    return rc;
}

static int is_file(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p) {
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int qwen3_config_resolve(const char *model, char *path_out, size_t path_len, struct fr_err *err) {
    if (!model || !*model) return fr_err_set(err, "--model needs a name or a path");
    if (strchr(model, '/') || is_file(model) || is_dir(model)) {
        if (is_dir(model)) {
            snprintf(path_out, path_len, "%s/config.json", model);
            if (!is_file(path_out)) return fr_err_set(err, "%s: no config.json in this directory", model);
        } else {
            if (!is_file(model)) return fr_err_set(err, "%s: no such file or directory", model);
            snprintf(path_out, path_len, "%s", model);
        }
        return 0;
    }
    for (const char *c = model; *c; c++)
        if (!(*c == '-' || *c == '.' || *c == '_' || (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') ||
              (*c >= 'A' && *c <= 'Z')))
            return fr_err_set(
                err, "model name '%s' has a character other than letters, digits, '-', '.', '_'", model);
    struct datadir_places places;
    datadir_places_of("model", "FORGE_ROOFLINE_MODELS", NULL, &places);
    char entry[300];
    snprintf(entry, sizeof entry, "%s/config.json", model);
    if (datadir_find_file(&places, entry, path_out, path_len) >= 0) return 0;
    char looked[DATADIR_MAX_PLACES * (DATADIR_PATH_LEN + 64)];
    datadir_list_places(&places, looked, sizeof looked);
    return fr_err_set(err, "unknown model '%s': no %s/config.json in %s (try 'forge-roofline list')", model,
                      model, looked);
}

uint64_t qwen3_param_count(const struct qwen3_config *c) {
    uint64_t h = (uint64_t)c->hidden, q = (uint64_t)c->n_heads * (uint64_t)c->head_dim;
    uint64_t kv = (uint64_t)c->n_kv_heads * (uint64_t)c->head_dim, i = (uint64_t)c->intermediate;
    uint64_t per_layer = h * q + 2 * h * kv + q * h + 3 * h * i + 2 * h + 2 * (uint64_t)c->head_dim;
    uint64_t embed = (uint64_t)c->vocab * h;
    return (uint64_t)c->n_layers * per_layer + embed * (c->tied_embeddings ? 1 : 2) + h;
}
