/* forge-roofline list: the tables that drive the tool (blocks, shipped models, sampler variants) and the
 * counter events this machine can count: each default event is opened through PAPI as a run would, and one
 * it cannot count is listed with PAPI's reason. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "kernels/team.h"
#include "model/blocks.h"
#include "model/config.h"
#include "model/datadir.h"
#include "model/cost.h"
#include "roofline/counters.h"

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_models(void) {
    struct datadir_places places;
    datadir_places_of("model", "FORGE_ROOFLINE_MODELS", NULL, &places);
    char dir[DATADIR_PATH_LEN];
    if (datadir_find_dir(&places, dir, sizeof dir) < 0) {
        char looked[DATADIR_MAX_PLACES * (DATADIR_PATH_LEN + 64)];
        datadir_list_places(&places, looked, sizeof looked);
        printf("\n## models\n\n(no model folder in %s: pass --model PATH/config.json)\n", looked);
        return;
    }
    printf("\n## models (%s/NAME/config.json)\n\n| name | params | hidden | layers | heads | KV heads | "
           "head_dim | vocab | tied |\n",
           dir);
    printf("|---|--:|--:|--:|--:|--:|--:|--:|---|\n");
    DIR *d = opendir(dir);
    if (!d) return;
    char *names[64] = {0};
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64)
        if (e->d_name[0] != '.') names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    for (int i = 0; i < n; i++) {
        char path[DATADIR_PATH_LEN + 300];
        struct qwen3_config c;
        struct fr_err err;
        if (names[i] && snprintf(path, sizeof path, "%s/%s/config.json", dir, names[i]) < (int)sizeof path &&
            qwen3_config_load(path, &c, &err) == 0)
            printf("| %s | %" PRIu64 " | %d | %d | %d | %d | %d | %d | %s |\n", names[i],
                   qwen3_param_count(&c), c.hidden, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, c.vocab,
                   c.tied_embeddings ? "yes" : "no");
        free(names[i]);
    }
}

static void list_event_set(const char *title, const struct counters *c) {
    printf("\n## %s\n\n", title);
    if (!c->available) printf("unavailable: %s\n\n", c->reason);
    if (c->hardware_note[0]) printf("%s\n\n", c->hardware_note);
    printf("| event | counted here | source | why not |\n|---|---|---|---|\n");
    for (int i = 0; i < c->n_events; i++)
        printf("| %s | %s | %s | %s |\n", c->events[i].name, c->events[i].counted ? "yes" : "no",
               c->events[i].source, c->events[i].counted ? "" : c->events[i].reason);
}

/* The default events of a run (and its --events syntax), tried on this machine. */
static int list_counters(void) {
    struct counters c;
    struct fr_err err = {{0}};
    const void *src_cfg = NULL;
    const struct counters_source *src = cli_counter_source(&src_cfg);
    /* in a team of one thread per processor, a run's default */
    if (counters_open(&c, src, src_cfg, NULL, kernel_team_procs(), &err) != 0)
        return cli_fail("list: %s", err.msg);
    list_event_set(
        "counter events (PAPI, the kernel's perf_event_open for software events PAPI does not count, and "
        "getrusage for rusage::; default set of a run; --events NAME,... "
        "replaces it)",
        &c);
    counters_close(&c);
    if (counters_open_energy(&c, src, src_cfg, &err) != 0) return cli_fail("list: %s", err.msg);
    list_event_set("energy events (PAPI RAPL / powercap, package-wide)", &c);
    counters_close(&c);
    return CLI_EXIT_OK;
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
    return list_counters();
}
