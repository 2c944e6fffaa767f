/* Value parsers and error printers shared by the subcommands. */
#include "bench/cli/cli.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/cli/machine_lock.h"
#include "kernels/kernels.h"
#include "kernels/sampler.h"
#include "roofline/perf_events.h"

/* One line whatever the message holds: a control character (a newline in a file name, say) becomes '?'. */
static void vsay(const char *fmt, va_list ap) {
    char msg[8192];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    if (n < 0) n = 0;
    size_t len = (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)msg[i] < 0x20 || msg[i] == 0x7f) msg[i] = '?';
    fprintf(stderr, "forge-roofline: %s%s\n", msg, (size_t)n > len ? "..." : "");
}

int cli_usage_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int cli_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
    return CLI_EXIT_FAIL;
}

int cli_parse_long(const char *s, long lo, long hi, long *out) {
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int cli_parse_u64(const char *s, unsigned long long *out) {
    /* strtoull skips leading blanks and wraps a negative: " -1" would be 2^64 - 1 */
    if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

int cli_parse_double(const char *s, double *out) {
    if (!s || !*s) return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

int cli_parse_float(const char *s, float *out) {
    double d;
    if (cli_parse_double(s, &d) != 0 || fabs(d) > FLT_MAX) return -1;
    float f = (float)d;
    if (d != 0 && f == 0) return -1;
    *out = f;
    return 0;
}

int cli_parse_long_list(const char *s, long lo, long hi, long *out, int max_n) {
    if (!s || !*s) return -1;
    int n = 0;
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char buf[32];
        if (len == 0 || len >= sizeof buf || n >= max_n) return -1;
        memcpy(buf, p, len);
        buf[len] = '\0';
        if (cli_parse_long(buf, lo, hi, &out[n]) != 0) return -1;
        n++;
        if (!comma) break;
        p = comma + 1;
    }
    return n;
}

bool cli_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

bool cli_is_plain_file(const char *path) {
    struct stat st;
    return path && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int cli_isa_apply(const char *prefix, const char *name, enum matvec_backend gemv) {
    const char *cap = getenv(KERNEL_ISA_MAX_ENV);
    enum kernel_isa isa;
    if (cap && kernel_isa_parse(cap, &isa) != 0)
        return cli_usage_error("%s%s must be scalar, avx2 or avx512 (got '%s')", prefix, KERNEL_ISA_MAX_ENV,
                               cap);
    if (name) {
        if (gemv == MATVEC_BACKEND_OPENBLAS)
            return cli_usage_error("%s--isa pins forge's kernels; --gemv openblas runs OpenBLAS's own "
                                   "(OPENBLAS_CORETYPE pins those)",
                                   prefix);
        if (gemv == MATVEC_BACKEND_ONEDNN)
            return cli_usage_error("%s--isa pins forge's kernels; --gemv onednn runs oneDNN's own "
                                   "(ONEDNN_MAX_CPU_ISA caps those)",
                                   prefix);
        if (kernel_isa_parse(name, &isa) != 0)
            return cli_usage_error("%s--isa must be scalar, avx2 or avx512 (got '%s')", prefix, name);
        if (kernel_isa_force(isa) != 0)
            return cli_usage_error("%s--isa %s: this CPU lacks it (the best it runs is %s%s)", prefix, name,
                                   kernel_isa_name(kernel_isa_best()),
                                   cap ? ", as capped by " KERNEL_ISA_MAX_ENV : "");
    }
    /* the sampler follows the kernels: it needs no more of the CPU than they do */
    if (sampler_isa_force(kernel_isa_active()) != 0)
        return cli_usage_error("%sthe sampler cannot run %s on this CPU", prefix,
                               kernel_isa_name(kernel_isa_active()));
    return 0;
}

const struct counters_source *cli_counter_source(const void **config) {
    static struct perf_events_fallback_config cfg;
    const char *no_papi = getenv("FORGE_ROOFLINE_NO_PAPI");
    cfg = (struct perf_events_fallback_config){
        .first = counters_source_papi(),
        .first_skipped =
            no_papi && *no_papi && strcmp(no_papi, "0") != 0 ? "FORGE_ROOFLINE_NO_PAPI is set" : NULL};
    *config = &cfg;
    return perf_events_source_fallback();
}

int cli_take_machine_lock(struct machine_lock *l, const char *path, const char *command, bool wait) {
    struct fr_err err = {{0}};
    switch (machine_lock_take(l, path, command, wait, stderr, &err)) {
    case MACHINE_LOCK_TAKEN:
        return CLI_EXIT_OK;
    case MACHINE_LOCK_BUSY:
        fprintf(stderr, "forge-roofline: %s\n", err.msg);
        return CLI_EXIT_BUSY;
    case MACHINE_LOCK_ERROR:
        break;
    }
    return cli_fail("%s", err.msg);
}
