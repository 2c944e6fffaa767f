/* OpenBLAS's pool gets the run's threads, bound like the OpenMP team: the pool's size and every thread's CPU
 * set read back from OpenBLAS (openblas_get_num_threads, openblas_getaffinity) equal the team's own sets
 * (sched_getaffinity in each OpenMP thread); and the full run with --gemv openblas says so in run.json. */
#include <cJSON.h>
#include <cblas.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/team.h"
#include "roofline/blas_pool.h"
#include "tests/cli_run.h"
#include "tests/report_testutil.h"

Test(blas_pool, pool_is_sized_and_bound_like_the_team) {
    struct machine m;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_detect(&m, 0, &err), 0, "%s", err.msg);
    cr_assert_eq(machine_bind_threads(&m, &err), 0, "%s", err.msg);
    openblas_set_num_threads(1); /* a different size first: the call must set it, not find it */
    char desc[256];
    cr_assert_eq(blas_pool_bind_threads(&m, desc, sizeof desc, &err), 0, "%s", err.msg);
    cr_log_info("%s", desc);
    if (openblas_get_parallel() != OPENBLAS_THREAD) {
        cr_expect(strstr(desc, "build") != NULL, "%s", desc);
        cr_skip_test("this OpenBLAS is not the pthreads build: %s", desc);
    }
    int n = m.threads;
    cr_expect_eq(openblas_get_num_threads(), n);
    cpu_set_t *team = calloc((size_t)n, sizeof *team);
    cr_assert_not_null(team);
#pragma omp parallel num_threads(n)
    sched_getaffinity(0, sizeof team[0], &team[kernel_team_thread()]);
    for (int i = 0; i < n; i++) {
        cpu_set_t got;
        CPU_ZERO(&got);
        cr_assert_eq(openblas_getaffinity(i, sizeof got, &got), 0);
        const cpu_set_t *want = &team[i == n - 1 ? 0 : i + 1]; /* slot n - 1 is the caller */
        cr_expect(CPU_EQUAL(&got, want), "OpenBLAS thread %d is not bound like OpenMP thread %d", i,
                  i == n - 1 ? 0 : i + 1);
        cr_expect_eq(CPU_COUNT(&got), 1, "OpenBLAS thread %d: one PU", i);
    }
    char want[64];
    snprintf(want, sizeof want, "pthreads pool: %d thread%s bound", n, n == 1 ? "" : "s");
    cr_expect(strstr(desc, want) != NULL, "'%s' lacks '%s'", desc, want);
    free(team);
}

/* The full run with --gemv openblas records the pool its matvecs ran on, with the run's thread count. */
Test(blas_pool, full_run_records_the_pool, .timeout = 300) {
    char parent[] = "/tmp/fr-run-blas-XXXXXX", args[512], dir[600] = "";
    cr_assert_not_null(mkdtemp(parent));
    snprintf(args, sizeof args,
             "--model tests/fixtures/tiny-qwen3 --quick --test-sizes --context 1 --dtype f32 --gemv openblas "
             "--no-plots "
             "--no-history "
             "--out %s",
             parent);
    static struct cli_result r;
    cli_run(&r, 1, args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    DIR *d = opendir(parent);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') snprintf(dir, sizeof dir, "%s/%s", parent, e->d_name);
    closedir(d);
    char *text = tu_slurp(dir, "run.json");
    cJSON *j = cJSON_Parse(text);
    cr_assert_not_null(j);
    const cJSON *prov = cJSON_GetObjectItem(j, "provenance");
    const cJSON *gt = cJSON_GetObjectItem(prov, "gemv_threads");
    cr_assert(cJSON_IsString(gt), "provenance.gemv_threads missing");
    int threads = (int)cJSON_GetObjectItem(prov, "threads")->valuedouble;
    char want[64];
    snprintf(want, sizeof want, "%d thread%s", threads, threads == 1 ? "" : "s");
    cr_expect(strstr(gt->valuestring, "OpenBLAS") && strstr(gt->valuestring, want), "'%s' lacks '%s'",
              gt->valuestring, want);
    char *md = tu_slurp(dir, "report.md");
    cr_expect(md && strstr(md, gt->valuestring), "report.md lacks the matvec threads");
    free(md);
    cJSON_Delete(j);
    free(text);
    snprintf(args, sizeof args, "rm -rf %s", parent);
    cr_expect_eq(system(args), 0);
}
