/* forge-roofline machine end to end (the sanitized binary from FORGE_ROOFLINE_BIN): bad options exit 2, and
 * --format json with tiny test sizes carries the documented keys and passes validation. */
#include <cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs the CLI with args (NULL-terminated, argv[0] excluded); returns the exit status, stdout in *out. */
static int run_cli(const char *const *args, char **out) {
    const char *bin = getenv("FORGE_ROOFLINE_BIN");
    cr_assert(bin, "FORGE_ROOFLINE_BIN is not set (run through make test)");
    char *argv[16] = {(char *)bin};
    int n = 1;
    for (; args[n - 1] && n < 15; n++) argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execv(bin, argv);
        _exit(127);
    }
    close(fd[1]);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    cr_assert(buf);
    ssize_t r;
    while ((r = read(fd[0], buf + len, cap - len - 1)) > 0) {
        len += (size_t)r;
        if (len + 1 == cap) {
            buf = realloc(buf, cap *= 2);
            cr_assert(buf);
        }
    }
    buf[len] = '\0';
    close(fd[0]);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Test(cmd_machine, bad_options_exit_2) {
    const char *const bad[][4] = {
        {"machine", "--format", "xml", NULL},  {"machine", "--threads", "0", NULL},
        {"machine", "--threads", "two", NULL}, {"machine", "--threads", "100000", NULL},
        {"machine", "--bogus", NULL},          {"machine", "--threads", NULL},
        {"machine", "--quick=1", NULL},        {"machine", "--events", "PAPI_TOT_CYC,,X", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(run_cli(bad[i], NULL), 2, "case %zu: %s %s", i, bad[i][1], bad[i][2] ? bad[i][2] : "");
}

Test(cmd_machine, help_exits_0) {
    const char *const args[] = {"machine", "--help", NULL};
    char *out;
    cr_expect_eq(run_cli(args, &out), 0);
    cr_expect(strstr(out, "--format"));
    free(out);
}

static void expect_figure(cJSON *ceilings, const char *key) {
    cJSON *f = cJSON_GetObjectItem(ceilings, key);
    cr_assert(cJSON_IsObject(f), "ceilings.%s missing", key);
    const char *fields[] = {"best", "median", "min", "max", "reps"};
    for (size_t i = 0; i < 5; i++)
        cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(f, fields[i])), "%s.%s", key, fields[i]);
}

Test(cmd_machine, json_keys, .timeout = 120) {
    const char *const args[] = {"machine", "--format", "json", "--test-sizes", "--threads", "1", NULL};
    char *out;
    cr_assert_eq(run_cli(args, &out), 0, "output: %s", out);
    cJSON *j = cJSON_Parse(out);
    cr_assert(j, "not JSON: %s", out);
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "cores")));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "pus")));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(j, "numa_nodes")));
    cJSON *caches = cJSON_GetObjectItem(j, "caches");
    cr_assert(cJSON_IsObject(caches));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(caches, "l1d")));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(caches, "l2")));
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(caches, "l3")));
    cJSON *setup = cJSON_GetObjectItem(j, "setup");
    cr_expect(cJSON_IsNumber(cJSON_GetObjectItem(setup, "timer_resolution_s")));
    cr_expect_eq(cJSON_GetObjectItem(setup, "threads")->valuedouble, 1);
    cJSON *ceil = cJSON_GetObjectItem(j, "ceilings");
    cr_assert(cJSON_IsObject(ceil));
    const char *keys[] = {"dram_read_gbs",       "dram_copy_gbs",        "dram_triad_gbs",
                          "peak_gflops",         "sgemm_gflops",         "dram_read_1core_gbs",
                          "dram_copy_1core_gbs", "dram_triad_1core_gbs", "peak_1core_gflops",
                          "sgemm_1core_gflops",  "plain_read_gbs"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) expect_figure(ceil, keys[i]);
    /* Cache levels exist as objects whether or not this machine has them. */
    const char *levels[] = {"l1_read_gbs", "l2_read_gbs", "l3_read_gbs"};
    for (size_t i = 0; i < 3; i++)
        cr_expect(cJSON_IsObject(cJSON_GetObjectItem(ceil, levels[i])), "%s", levels[i]);
    cr_expect_geq(cJSON_GetObjectItem(cJSON_GetObjectItem(ceil, "dram_read_gbs"), "reps")->valuedouble, 10);
    cJSON *cn = cJSON_GetObjectItem(j, "counters");
    cr_assert(cJSON_IsObject(cn));
    cJSON *avail = cJSON_GetObjectItem(cn, "available");
    cr_expect(cJSON_IsBool(avail));
    cr_expect(cJSON_IsString(cJSON_GetObjectItem(cn, "reason")));
    if (cJSON_IsFalse(avail)) cr_expect_gt(strlen(cJSON_GetObjectItem(cn, "reason")->valuestring), 0);
    cr_expect(cJSON_IsArray(cJSON_GetObjectItem(cn, "events")));
    cr_expect(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "validation"), "passed")));
    cJSON_Delete(j);
    free(out);
}

Test(cmd_machine, markdown_order, .timeout = 120) {
    const char *const args[] = {"machine", "--test-sizes", "--threads", "1", NULL};
    char *out;
    cr_assert_eq(run_cli(args, &out), 0, "output: %s", out);
    const char *setup = strstr(out, "## Setup"), *topo = strstr(out, "## Topology"),
               *ceil = strstr(out, "## Ceilings"), *cn = strstr(out, "## Counters"),
               *agree = strstr(out, "plain loop"), *val = strstr(out, "validation: PASSED");
    cr_assert(setup && topo && ceil && cn && agree && val, "output: %s", out);
    cr_expect(setup < topo && topo < ceil && ceil < cn && cn < agree && agree < val);
    cr_expect(strstr(setup, "resolution"));
    free(out);
}
