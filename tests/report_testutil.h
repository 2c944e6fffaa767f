/* Small helpers for the report tests: temporary folders, reading a file back, counting lines. */
#ifndef FR_TEST_REPORT_UTIL_H
#define FR_TEST_REPORT_UTIL_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A fresh folder under $TMPDIR or /tmp; the caller owns it (tests leave it for inspection on failure). */
static inline void tu_tmpdir(char *out, size_t len) {
    const char *base = getenv("TMPDIR");
    snprintf(out, len, "%s/fr-report-XXXXXX", base && *base ? base : "/tmp");
    cr_assert_not_null(mkdtemp(out), "mkdtemp failed");
}

/* Removes a folder and everything under it. */
static inline void tu_rm_tree(const char *dir) {
    char cmd[2100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0, "%s", cmd);
}

/* The whole file as a NUL-terminated string (caller frees), or NULL when it cannot be read. */
static inline char *tu_slurp(const char *dir, const char *name) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    fclose(f);
    return buf;
}

static inline bool tu_exists(const char *dir, const char *name) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0;
}

static inline bool tu_starts(const char *s, const char *prefix) {
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static inline int tu_count_lines(const char *s) {
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

/* Removes a flat folder of files (what the writers produce). */
static inline void tu_rm_flat(const char *dir) {
    char cmd[2100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

#endif
