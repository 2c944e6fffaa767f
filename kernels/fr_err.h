/* fr_err: the one error channel of library code. Functions that can fail take a `struct fr_err *`,
 * fill it with a one-line message (no trailing newline) and return a non-zero code; only the CLI prints. */
#ifndef FR_ERR_H
#define FR_ERR_H

#include <stdarg.h>
#include <stddef.h>
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

/* A string from a file made safe for a one-line message: printable ASCII kept, any other byte '?', cut with
 * "..." to fit buf. s need not be NUL-terminated: n bytes are read. */
static inline const char *fr_err_printable(const char *s, size_t n, char *buf, size_t len) {
    size_t i = 0;
    for (; i < n && i + 1 < len; i++) buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (i < n && len > 4) {
        buf[len - 4] = '.', buf[len - 3] = '.', buf[len - 2] = '.', buf[len - 1] = '\0';
    } else {
        buf[i] = '\0';
    }
    return buf;
}

#endif
