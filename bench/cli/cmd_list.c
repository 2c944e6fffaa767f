/* forge-roofline list: the tables that drive the tool (blocks, shipped models, sampler variants). */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "model/blocks.h"
#include "model/config.h"
#include "model/cost.h"

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_models(void) {
    printf("\n## models (model/NAME/config.json)\n\n| name | params | hidden | layers | heads | KV heads | "
           "head_dim | vocab | tied |\n");
    printf("|---|--:|--:|--:|--:|--:|--:|--:|---|\n");
    DIR *d = opendir("model");
    if (!d) {
        printf("(no ./model directory here: pass --model PATH/config.json)\n");
        return;
    }
    char *names[64] = {0};
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64)
        if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    for (int i = 0; i < n; i++) {
        char path[512];
        struct qwen3_config c;
        struct fr_err err;
        if (names[i] && snprintf(path, sizeof path, "model/%s/config.json", names[i]) < (int)sizeof path &&
            qwen3_config_load(path, &c, &err) == 0)
            printf("| %s | %" PRIu64 " | %d | %d | %d | %d | %d | %d | %s |\n", names[i],
                   qwen3_param_count(&c), c.hidden, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, c.vocab,
                   c.tied_embeddings ? "yes" : "no");
        free(names[i]);
    }
}

int cmd_list(int argc, char **argv) {
    (void)argv;
    if (argc > 1) return cli_usage_error("list: takes no arguments");
    printf("## blocks of one decode step\n\n| block | calls | reads weights | what |\n|---|---|---|---|\n");
    const struct block_desc *t = block_table();
    for (int i = 0; i < BLOCK_COUNT; i++)
        printf("| %s | %s | %s | %s |\n", t[i].name, t[i].scope == BLOCK_SCOPE_LAYER ? "per layer" : "1",
               t[i].reads_weights ? "yes" : "no", t[i].what);
    printf("\n## sampler variants\n\n");
    for (int v = 0; v < SAMPLER_VARIANT_COUNT; v++)
        printf("- %s\n", cost_sampler_variant_name((enum sampler_variant)v));
    list_models();
    return CLI_EXIT_OK;
}
