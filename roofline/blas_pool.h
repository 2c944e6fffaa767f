/* OpenBLAS's own thread pool, sized and bound like the measurement's OpenMP team. The pthreads build of
 * OpenBLAS runs its matrix routines on worker threads of its own that know nothing of the OpenMP team or of
 * hwloc: without this, `--gemv openblas` would run on a pool of OpenBLAS's default size, unbound. */
#ifndef FR_BLAS_POOL_H
#define FR_BLAS_POOL_H

#include <stddef.h>

#include "kernels/fr_err.h"
#include "roofline/topology.h"

/* Gives OpenBLAS m->threads threads and binds them as machine_bind_threads bound the OpenMP team (call that
 * first): OpenBLAS's caller slot takes OpenMP thread 0's CPU set, worker i thread i + 1's. Each binding is
 * read back with openblas_getaffinity. Writes what was done to desc (for run.json), e.g. "OpenBLAS 0.3.21
 * pthreads pool: 2 threads bound like the OpenMP team (openblas_setaffinity, read back)". An OpenMP build
 * of OpenBLAS runs on the team itself; a sequential one on the caller: desc says so. Returns non-zero with
 * err set when a binding fails or does not stick. */
int blas_pool_bind_threads(const struct machine *m, char *desc, size_t len, struct fr_err *err);

#endif
