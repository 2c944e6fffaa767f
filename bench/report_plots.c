/* Runs scripts/plots.sh on a results folder and tells "gnuplot is not installed" (the script's exit status
 * REPORT_PLOTS_EXIT_NO_GNUPLOT) apart from a real failure, whose last line of stderr becomes the message.
 * Checked in tests/test_report_plots.c (images drawn, PNG magic, missing gnuplot via PATH). */
#include "bench/report_write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static bool has_script(const char *dir) {
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/plots.sh", dir) >= sizeof path) return false;
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Finds the folder holding plots.sh; 0 on success. */
static int find_scripts(char *out, size_t len, struct fr_err *err) {
    const char *env = getenv("FORGE_ROOFLINE_SCRIPTS");
    if (env && *env) {
        if (!has_script(env)) return fr_err_set(err, "FORGE_ROOFLINE_SCRIPTS='%s' has no plots.sh", env);
        snprintf(out, len, "%s", env);
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) *slash = '\0';
        static const char *const rel[] = {"../scripts", "../../scripts", "../share/forge-roofline/scripts"};
        for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
            char cand[PATH_MAX];
            if ((size_t)snprintf(cand, sizeof cand, "%s/%s", exe, rel[i]) >= sizeof cand) continue;
            if (has_script(cand)) {
                snprintf(out, len, "%s", cand);
                return 0;
            }
        }
    }
    if (has_script("scripts")) {
        snprintf(out, len, "scripts");
        return 0;
    }
    return fr_err_set(err, "cannot find scripts/plots.sh (set FORGE_ROOFLINE_SCRIPTS)");
}

/* Keeps the last non-empty line of the child's stderr. */
static void last_line(const char *buf, size_t n, char *out, size_t len) {
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) n--;
    size_t start = n;
    while (start > 0 && buf[start - 1] != '\n') start--;
    size_t k = n - start < len - 1 ? n - start : len - 1;
    memcpy(out, buf + start, k);
    out[k] = '\0';
}

int report_plots_draw_mode(const char *mode, const char *dir, struct fr_err *err) {
    char scripts[PATH_MAX], script[PATH_MAX + 16];
    if (find_scripts(scripts, sizeof scripts, err) != 0) return REPORT_PLOTS_FAILED;
    snprintf(script, sizeof script, "%s/plots.sh", scripts);

    int fds[2];
    if (pipe(fds) != 0) {
        fr_err_set(err, "plots: pipe: %s", strerror(errno));
        return REPORT_PLOTS_FAILED;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    posix_spawn_file_actions_addclose(&fa, fds[1]);
    char *argv[5];
    int argc = 0;
    argv[argc++] = (char *)"sh";
    argv[argc++] = script;
    if (mode) argv[argc++] = (char *)mode;
    argv[argc++] = (char *)dir;
    argv[argc] = NULL;
    pid_t pid;
    int rc = posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        fr_err_set(err, "plots: cannot run /bin/sh: %s", strerror(rc));
        return REPORT_PLOTS_FAILED;
    }
    /* Keep the tail of stderr: the last line is the one that says what went wrong. */
    char tail[4096];
    size_t used = 0;
    for (;;) {
        char chunk[1024];
        ssize_t got = read(fds[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (used + (size_t)got > sizeof tail) {
            size_t drop = used + (size_t)got - sizeof tail;
            if (drop > used) drop = used;
            memmove(tail, tail + drop, used - drop);
            used -= drop;
        }
        size_t take = (size_t)got < sizeof tail ? (size_t)got : sizeof tail;
        memcpy(tail + used, chunk + ((size_t)got - take), take);
        used += take;
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            fr_err_set(err, "plots: waitpid: %s", strerror(errno));
            return REPORT_PLOTS_FAILED;
        }
    char line[400];
    last_line(tail, used, line, sizeof line);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return REPORT_PLOTS_DRAWN;
    if (WIFEXITED(status) && WEXITSTATUS(status) == REPORT_PLOTS_EXIT_NO_GNUPLOT) {
        fr_err_set(err, "gnuplot is not installed, plots skipped");
        return REPORT_PLOTS_NO_GNUPLOT;
    }
    if (WIFEXITED(status))
        fr_err_set(err, "plots.sh failed (exit %d): %s", WEXITSTATUS(status), line[0] ? line : "no message");
    else
        fr_err_set(err, "plots.sh killed by signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return REPORT_PLOTS_FAILED;
}

int report_plots_draw(const char *dir, struct fr_err *err) {
    return report_plots_draw_mode(NULL, dir, err);
}
