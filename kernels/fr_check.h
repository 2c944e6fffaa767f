/* fr_check: the one family of check macros for library calls that can fail (hwloc, PAPI, allocation).
 * Each fills the struct fr_err with "file:line: what failed: why" and jumps to a cleanup label, so cleanup
 * stays in one place, in reverse order of acquisition. The PAPI macro expands PAPI_OK and PAPI_strerror at
 * its use site, so only files that include papi.h may use it. */
#ifndef FR_CHECK_H
#define FR_CHECK_H

#include <errno.h>
#include <string.h>

#include "kernels/fr_err.h"

/* An allocation (or any pointer-returning call) that must not return NULL. */
#define FR_CHECK_ALLOC(ptr, err, label)                                                                      \
    do {                                                                                                     \
        if ((ptr) == NULL) {                                                                                 \
            fr_err_set((err), "%s:%d: allocation failed: %s", __FILE__, __LINE__, #ptr);                     \
            goto label;                                                                                      \
        }                                                                                                    \
    } while (0)

/* An hwloc call returning an int that is negative on failure (errno says why). */
#define FR_CHECK_HWLOC(call, err, label)                                                                     \
    do {                                                                                                     \
        errno = 0;                                                                                           \
        if ((call) < 0) {                                                                                    \
            int fr_errno_ = errno;                                                                           \
            fr_err_set((err), "%s:%d: hwloc: %s failed: %s", __FILE__, __LINE__, #call,                      \
                       fr_errno_ ? strerror(fr_errno_) : "no reason given");                                 \
            goto label;                                                                                      \
        }                                                                                                    \
    } while (0)

/* A PAPI call returning PAPI_OK on success, a PAPI error code otherwise. */
#define FR_CHECK_PAPI(call, err, label)                                                                      \
    do {                                                                                                     \
        int fr_papi_rc_ = (call);                                                                            \
        if (fr_papi_rc_ != PAPI_OK) {                                                                        \
            fr_err_set((err), "%s:%d: PAPI: %s failed: %s", __FILE__, __LINE__, #call,                       \
                       PAPI_strerror(fr_papi_rc_));                                                          \
            goto label;                                                                                      \
        }                                                                                                    \
    } while (0)

#endif
