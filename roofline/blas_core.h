/* Which of its kernel sets ("cores") OpenBLAS runs, and a restart when it took a CPU it does not know for a
 * generic one. A DYNAMIC_ARCH OpenBLAS picks its core by CPU family and model when the library loads;
 * Debian 12's 0.3.21 does not know newer models (Emerald Rapids, family 6 model 207, measured here) and
 * falls back to Prescott's SSE3 kernels: sgemm then runs at a fifth of the machine's rate and every OpenBLAS
 * figure of the run (the sgemm ceiling, the batch sweep's and --gemv openblas's rows) is that fallback's.
 * OPENBLAS_CORETYPE chooses the core, but it is read only when the library loads, so the fix is to set it
 * and exec the program again, once. Only a fallback without AVX2 on a CPU with AVX2 and FMA is overridden
 * (an unambiguous "unknown CPU"); any core OpenBLAS chose knowingly, and a user's OPENBLAS_CORETYPE, stand.
 */
#ifndef FR_BLAS_CORE_H
#define FR_BLAS_CORE_H

#include <stdbool.h>
#include <stddef.h>

/* The vector features the choice rests on (cpuid, read by blas_core_cpu_features). */
struct blas_cpu_features {
    bool avx2_fma;
    bool avx512; /* F, CD, BW, DQ and VL: what OpenBLAS's SkylakeX kernels need */
};

struct blas_cpu_features blas_core_cpu_features(void);

/* The core to force for OpenBLAS's pick `current` on a CPU with `f`, or NULL to keep it: "SkylakeX" or
 * "Haswell" when `current` is a core without AVX2 (Prescott, Nehalem, Sandybridge, ...) and the CPU has
 * AVX2 and FMA; NULL for any core with AVX2 or an unknown name. Pure, for the tests. */
const char *blas_core_override(const char *current, struct blas_cpu_features f);

/* Called first in main(): when OPENBLAS_CORETYPE is unset and blas_core_override names a core, sets it
 * (and FORGE_ROOFLINE_BLAS_FALLBACK to the core OpenBLAS had picked) and execs /proc/self/exe with argv.
 * Returns only when nothing needs a restart or the exec failed (blas_core_describe then says so). */
void blas_core_restart_if_generic(char **argv);

/* One line for the report and run.json: the core OpenBLAS runs and why, e.g. "OpenBLAS core SkylakeX
 * (OPENBLAS_CORETYPE set by forge-roofline: OpenBLAS 0.3.21 took this CPU for Prescott, a core without
 * AVX2)", "OpenBLAS core Haswell (its own choice)" or "... (OPENBLAS_CORETYPE=Haswell from the
 * environment)". */
void blas_core_describe(char *out, size_t len);

#endif
