/* fr_err: the one error channel of library code. Functions that can fail take a `struct fr_err *`,
 * fill it with a one-line message (no trailing newline) and return a non-zero code; only the CLI prints. */
#ifndef FR_ERR_H
#define FR_ERR_H

#include <stdarg.h>
#include <stdio.h>

struct fr_err {
    char msg[512];
};

__attribute__((format(printf, 2, 3))) static inline int fr_err_set(struct fr_err *err, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#endif
