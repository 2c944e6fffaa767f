/* Results folder lifecycle: temporary name, rename on success, removal on failure or on a signal.
 * The signal handler only uses async-signal-safe calls (open, getdents64, unlinkat, rmdir, sigaction,
 * raise), so it can remove the folder whatever the program was doing. Checked in tests/test_report_dir.c
 * (commit, abort, unwritable parent, a child killed by SIGTERM mid-run). */
#include "bench/report/results_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int handled_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define N_HANDLED (int)(sizeof handled_signals / sizeof handled_signals[0])

/* State the signal handler reads: a copy of the active tmp path and the handlers to restore. */
static char active_tmp[RESULTS_PATH_MAX];
static volatile sig_atomic_t have_active;
static struct sigaction saved_actions[N_HANDLED];

int results_dir_stamp(time_t t, char *buf, size_t len) {
    struct tm tm;
    if (!gmtime_r(&t, &tm)) return -1;
    return strftime(buf, len, "%Y%m%dT%H%M%SZ", &tm) == 0 ? -1 : 0;
}

/* Removes the files of a flat folder, then the folder; signal-safe (no malloc, no stdio). */
static void remove_flat_dir(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[4096] __attribute__((aligned(8)));
        for (;;) {
            long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
            if (n <= 0) break;
            for (long off = 0; off < n;) {
                struct dirent64 *d = (struct dirent64 *)(buf + off);
                off += d->d_reclen;
                const char *nm = d->d_name;
                if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0'))) continue;
                unlinkat(fd, nm, 0);
            }
        }
        close(fd);
    }
    rmdir(path);
}

static void restore_handlers(void) {
    for (int i = 0; i < N_HANDLED; i++) sigaction(handled_signals[i], &saved_actions[i], NULL);
}

static void on_signal(int sig) {
    if (have_active) {
        remove_flat_dir(active_tmp);
        have_active = 0;
    }
    restore_handlers();
    raise(sig);
}

static int mkdir_parents(const char *path) {
    char buf[RESULTS_PATH_MAX];
    size_t len = strlen(path);
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, path, len + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    return 0;
}

int results_dir_begin(struct results_dir *rd, const char *parent, const char *host, const char *utc_stamp,
                      struct fr_err *err) {
    memset(rd, 0, sizeof *rd);
    if (have_active) return fr_err_set(err, "a results folder is already being written (%s)", active_tmp);
    if (!parent || !*parent || !host || !*host || !utc_stamp || !*utc_stamp)
        return fr_err_set(err, "results folder: empty parent, host or timestamp");
    if (strchr(host, '/') || strchr(utc_stamp, '/'))
        return fr_err_set(err, "results folder: host or timestamp contains '/'");
    int a = snprintf(rd->final_path, sizeof rd->final_path, "%s/%s-%s", parent, host, utc_stamp);
    int b = snprintf(rd->tmp_path, sizeof rd->tmp_path, "%s/.%s-%s.tmp", parent, host, utc_stamp);
    if (a < 0 || b < 0 || (size_t)a >= sizeof rd->final_path || (size_t)b >= sizeof rd->tmp_path)
        return fr_err_set(err, "results folder path too long under '%s'", parent);

    if (mkdir_parents(parent) != 0)
        return fr_err_set(err, "cannot create output folder '%s': %s", parent, strerror(errno));
    struct stat st;
    if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
        return fr_err_set(err, "output folder '%s' is not a directory", parent);
    if (access(parent, W_OK | X_OK) != 0)
        return fr_err_set(err, "output folder '%s' is not writable: %s", parent, strerror(errno));
    if (lstat(rd->final_path, &st) == 0)
        return fr_err_set(err, "results folder '%s' already exists", rd->final_path);
    if (results_dir_check_space(parent, RESULTS_DIR_NEED_BYTES, err) != 0) return -1;
    if (mkdir(rd->tmp_path, 0777) != 0)
        return fr_err_set(err, "cannot create results folder '%s': %s", rd->tmp_path, strerror(errno));

    /* A probe file proves the folder takes files (a read-only mount can still pass access()). */
    char probe[RESULTS_PATH_MAX + 16];
    snprintf(probe, sizeof probe, "%s/.probe", rd->tmp_path);
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        rmdir(rd->tmp_path);
        return fr_err_set(err, "cannot write into '%s': %s", rd->tmp_path, strerror(e));
    }
    close(fd);
    unlink(probe);
    /* the marker a reader refuses; commit removes it just before the rename */
    char marker[RESULTS_PATH_MAX + 16];
    snprintf(marker, sizeof marker, "%s/" RESULTS_DIR_MARKER, rd->tmp_path);
    fd = open(marker, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    static const char note[] = "forge-roofline: this run has not finished; its folder is not a result\n";
    if (fd < 0 || write(fd, note, sizeof note - 1) != (ssize_t)(sizeof note - 1)) {
        int e = errno;
        if (fd >= 0) close(fd);
        remove_flat_dir(rd->tmp_path);
        return fr_err_set(err, "cannot write into '%s': %s", rd->tmp_path, strerror(e));
    }
    close(fd);

    memcpy(active_tmp, rd->tmp_path, sizeof active_tmp);
    have_active = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_HANDLED; i++) sigaddset(&sa.sa_mask, handled_signals[i]);
    /* a signal ignored at start stays ignored (nohup, a shell's background job): catching it would remove
     * the folder of a run that then goes on */
    for (int i = 0; i < N_HANDLED; i++) {
        sigaction(handled_signals[i], NULL, &saved_actions[i]);
        if (saved_actions[i].sa_handler != SIG_IGN) sigaction(handled_signals[i], &sa, NULL);
    }
    rd->active = true;
    return 0;
}

/* Ends the handler's watch before the folder changes name, with the signals blocked meanwhile. */
static void release_active(void) {
    sigset_t block, old;
    sigemptyset(&block);
    for (int i = 0; i < N_HANDLED; i++) sigaddset(&block, handled_signals[i]);
    sigprocmask(SIG_BLOCK, &block, &old);
    have_active = 0;
    restore_handlers();
    sigprocmask(SIG_SETMASK, &old, NULL);
}

int results_dir_commit(struct results_dir *rd, struct fr_err *err) {
    if (!rd->active) return fr_err_set(err, "results folder is not open");
    struct stat st;
    if (lstat(rd->final_path, &st) == 0) {
        results_dir_abort(rd);
        return fr_err_set(err, "results folder '%s' appeared while the run was written", rd->final_path);
    }
    /* Block the signals across the rename: after it, the folder is complete and must stay. */
    sigset_t block, old;
    sigemptyset(&block);
    for (int i = 0; i < N_HANDLED; i++) sigaddset(&block, handled_signals[i]);
    sigprocmask(SIG_BLOCK, &block, &old);
    char marker[RESULTS_PATH_MAX + 16];
    snprintf(marker, sizeof marker, "%s/" RESULTS_DIR_MARKER, rd->tmp_path);
    int rc = unlink(marker) == 0 || errno == ENOENT ? rename(rd->tmp_path, rd->final_path) : -1;
    int e = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        results_dir_abort(rd);
        return fr_err_set(err, "cannot rename '%s' to '%s': %s", rd->tmp_path, rd->final_path, strerror(e));
    }
    release_active();
    rd->active = false;
    return 0;
}

void results_dir_abort(struct results_dir *rd) {
    if (!rd->active) return;
    release_active();
    remove_flat_dir(rd->tmp_path);
    rd->active = false;
}

int results_dir_check_complete(const char *path, struct fr_err *err) {
    char dir[RESULTS_PATH_MAX];
    struct stat st;
    int n = snprintf(dir, sizeof dir, "%s", path);
    if (n < 0 || (size_t)n >= sizeof dir) return fr_err_set(err, "%s: path too long", path);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) { /* a file (there or not): its folder */
        char *slash = strrchr(dir, '/');
        if (slash)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, ".");
    }
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') dir[--len] = '\0';
    const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    size_t blen = strlen(base);
    if (base[0] == '.' && blen > 5 && strcmp(base + blen - 4, ".tmp") == 0)
        return fr_err_set(err,
                          "%s: the temporary folder of a run that did not finish (killed, or still running): "
                          "not a complete run",
                          dir);
    char marker[RESULTS_PATH_MAX + 16];
    snprintf(marker, sizeof marker, "%s/" RESULTS_DIR_MARKER, dir);
    if (lstat(marker, &st) == 0)
        return fr_err_set(
            err, "%s: marked " RESULTS_DIR_MARKER " (its run did not finish): not a complete run", dir);
    return 0;
}

int results_dir_check_space(const char *dir, unsigned long long need_bytes, struct fr_err *err) {
    struct statvfs vfs;
    if (statvfs(dir, &vfs) != 0)
        return fr_err_set(err, "cannot check free space under '%s': %s", dir, strerror(errno));
    unsigned long long avail = (unsigned long long)vfs.f_bavail * vfs.f_frsize;
    if (avail < need_bytes)
        return fr_err_set(err, "only %llu MiB free under '%s'; a run folder needs about %llu MiB",
                          avail >> 20, dir, need_bytes >> 20);
    return 0;
}
