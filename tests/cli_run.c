/* The CLI runner for end-to-end tests: popen with stderr sent to a temporary file. */
#include "tests/cli_run.h"

#include <criterion/criterion.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

static void slurp(FILE *f, char *buf, size_t len) {
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    char sink[4096];
    while (fread(sink, 1, sizeof sink, f) > 0) {
    }
}

void cli_run(struct cli_result *r, int fast, const char *args) {
    const char *bin = getenv(fast ? "FORGE_ROOFLINE_FAST_BIN" : "FORGE_ROOFLINE_BIN");
    /* a run takes the machine lock (docs/trust.md): tests take one of their own, so that they neither wait
     * for a real run on this machine nor for each other; a test of the lock sets its file itself */
    char lock[64];
    snprintf(lock, sizeof lock, "/tmp/fr-test-%ld.lock", (long)getpid());
    bool own_lock = !getenv("FORGE_ROOFLINE_LOCK");
    if (own_lock) setenv("FORGE_ROOFLINE_LOCK", lock, 1);
    if (!bin) bin = fast ? "build/forge-roofline" : "build/tests/forge-roofline-san";
    char errpath[] = "/tmp/fr-cli-err-XXXXXX";
    int fd = mkstemp(errpath);
    close(fd);
    size_t len = strlen(bin) + strlen(args) + strlen(errpath) + 16;
    char *cmd = malloc(len);
    snprintf(cmd, len, "%s %s 2>%s", bin, args, errpath);
    memset(r, 0, sizeof *r);
    FILE *p = popen(cmd, "r");
    free(cmd);
    if (!p) {
        r->status = -1;
        if (own_lock) unsetenv("FORGE_ROOFLINE_LOCK");
        unlink(errpath);
        return;
    }
    slurp(p, r->out, sizeof r->out);
    int st = pclose(p);
    if (own_lock) unlink(lock), unsetenv("FORGE_ROOFLINE_LOCK");
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    FILE *e = fopen(errpath, "r");
    if (e) {
        slurp(e, r->err, sizeof r->err);
        fclose(e);
    }
    unlink(errpath);
}

void cli_expect_usage_errors(int fast, const char *const *cmds, size_t n) {
    static struct cli_result r;
    for (size_t i = 0; i < n; i++) {
        cli_run(&r, fast, cmds[i]);
        cr_expect_eq(r.status, 2, "'%s' exited %d: %s", cmds[i], r.status, r.err);
        cr_expect(strncmp(r.err, "forge-roofline: ", 16) == 0, "'%s': stderr '%s'", cmds[i], r.err);
        const char *nl = strchr(r.err, '\n');
        cr_expect(nl && nl[1] == '\0', "'%s': error is not one line: '%s'", cmds[i], r.err);
    }
}

void cli_find_run(const char *parent, char *out, size_t len) {
    DIR *d = opendir(parent);
    cr_assert(d, "no folder %s", parent);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++, snprintf(out, len, "%s/%s", parent, e->d_name);
    closedir(d);
    cr_assert_eq(n, 1, "expected one run folder in %s", parent);
}
