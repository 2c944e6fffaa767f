/* OpenBLAS's thread pool sized and bound like the OpenMP team (see blas_pool.h). The CPU sets come from the
 * team's own threads (sched_getaffinity in each, after machine_bind_threads), so the hwloc binding is the
 * single source. Checked in tests/test_blas_pool.c: the pool's size and each thread's set read back from
 * OpenBLAS equal the team's. */
#include "roofline/blas_pool.h"

#include <cblas.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/team.h"

#define BLAS_POOL_MAX_THREADS 1024

static const char *blas_pool_version(void) {
    const char *cfg = openblas_get_config(); /* "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." */
    return cfg ? cfg : "OpenBLAS";
}

int blas_pool_bind_threads(const struct machine *m, char *desc, size_t len, struct fr_err *err) {
    int n = m->threads > 0 ? m->threads : 1;
    char version[64];
    snprintf(version, sizeof version, "%s", blas_pool_version());
    char *sp = strchr(version, ' ');
    if (sp && (sp = strchr(sp + 1, ' '))) *sp = '\0'; /* "OpenBLAS 0.3.21" */
    int parallel = openblas_get_parallel();
    if (parallel == OPENBLAS_SEQUENTIAL) {
        snprintf(desc, len, "%s sequential build: one thread, the caller (bound to the OpenMP team's core 0)",
                 version);
        return 0;
    }
    openblas_set_num_threads(n);
    if (parallel == OPENBLAS_OPENMP) {
        snprintf(desc, len, "%s OpenMP build: runs on the OpenMP team of %d bound threads", version, n);
        return 0;
    }
    if (n > BLAS_POOL_MAX_THREADS) return fr_err_set(err, "OpenBLAS pool: %d threads is too many", n);
    if (openblas_get_num_threads() != n)
        return fr_err_set(err, "OpenBLAS pool: asked for %d threads, it has %d (MAX_THREADS of the build?)",
                          n, openblas_get_num_threads());
    cpu_set_t *team = calloc((size_t)n, sizeof *team);
    if (!team) return fr_err_set(err, "OpenBLAS pool: out of memory");
    int got_sets = 0;
#pragma omp parallel num_threads(n) reduction(+ : got_sets)
    {
        int t = kernel_team_thread();
        if (t < n && sched_getaffinity(0, sizeof team[t], &team[t]) == 0) got_sets++;
    }
    int rc = 0;
    if (got_sets != n) {
        rc = fr_err_set(err, "OpenBLAS pool: the OpenMP team's CPU sets could not be read");
        goto out;
    }
    /* OpenBLAS's slot n - 1 is the calling thread (OpenMP thread 0), slots 0 .. n - 2 its workers */
    for (int i = 0; i < n; i++) {
        cpu_set_t *want = &team[i == n - 1 ? 0 : i + 1], got;
        errno = 0;
        if (openblas_setaffinity(i, sizeof *want, want) != 0) {
            rc = fr_err_set(err, "openblas_setaffinity(thread %d) failed: %s", i, strerror(errno));
            goto out;
        }
        CPU_ZERO(&got);
        if (openblas_getaffinity(i, sizeof got, &got) != 0 || !CPU_EQUAL(&got, want)) {
            rc = fr_err_set(err, "OpenBLAS pool: thread %d's binding did not stick", i);
            goto out;
        }
    }
    snprintf(desc, len,
             "%s pthreads pool: %d thread%s bound like the OpenMP team (caller on its core 0, worker i on "
             "core i + 1; openblas_setaffinity, read back)",
             version, n, n == 1 ? "" : "s");
out:
    free(team);
    return rc;
}
