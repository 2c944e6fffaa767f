/* The machine-wide run lock (see machine_lock.h). Checked in tests/test_machine_lock.c: a second taker is
 * refused with the holder's pid and command, or waits and says so; a holder killed with SIGKILL leaves a lock
 * that the next taker gets at once; a descriptor passed in FORGE_ROOFLINE_LOCK_FD is taken over; a run with
 * --no-wait exits 3 with one line while another holds the lock. */
#include "bench/cli/machine_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static bool dir_writable(const char *dir) {
    struct stat st;
    return dir && *dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK | X_OK) == 0;
}

void machine_lock_path(const char *fallback_dir, char *out, size_t len) {
    const char *env = getenv("FORGE_ROOFLINE_LOCK"), *xdg = getenv("XDG_RUNTIME_DIR");
    if (env && *env)
        snprintf(out, len, "%s", env);
    else if (dir_writable("/run/lock"))
        snprintf(out, len, "/run/lock/forge-roofline.lock");
    else if (dir_writable(xdg))
        snprintf(out, len, "%s/forge-roofline.lock", xdg);
    else
        snprintf(out, len, "%s/forge-roofline.lock", fallback_dir && *fallback_dir ? fallback_dir : ".");
}

/* The holder's line ("pid N since T: command"), or a note that it wrote none yet. */
static void read_holder(int fd, char *out, size_t len) {
    ssize_t n = pread(fd, out, len - 1, 0);
    if (n <= 0) {
        snprintf(out, len, "a process that has not written its name yet");
        return;
    }
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

static void write_holder(int fd, const char *command) {
    char stamp[32] = "?", line[1024];
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S UTC", &tm);
    int n = snprintf(line, sizeof line, "pid %ld since %s: %s\n", (long)getpid(), stamp, command);
    if (n < 0) return;
    if (n >= (int)sizeof line) line[sizeof line - 2] = '\n', n = (int)sizeof line - 1;
    if (ftruncate(fd, 0) == 0 && pwrite(fd, line, (size_t)n, 0) == n) fdatasync(fd);
}

/* FORGE_ROOFLINE_LOCK_FD: a descriptor the caller holds the lock with, open on the same file. */
static bool take_inherited(struct machine_lock *l, const char *path) {
    const char *env = getenv("FORGE_ROOFLINE_LOCK_FD");
    char *end;
    long fd = env && *env ? strtol(env, &end, 10) : -1;
    if (fd < 0 || *end) return false;
    struct stat a, b;
    if (fstat((int)fd, &a) != 0 || stat(path, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        return false;
    if (flock((int)fd, LOCK_EX | LOCK_NB) != 0) return false; /* ours already when the caller holds it */
    l->fd = (int)fd, l->inherited = true;
    return true;
}

enum machine_lock_result machine_lock_take(struct machine_lock *l, const char *path, const char *command,
                                           bool wait, FILE *say, struct fr_err *err) {
    *l = (struct machine_lock){.fd = -1};
    snprintf(l->path, sizeof l->path, "%s", path);
    if (take_inherited(l, path)) return MACHINE_LOCK_TAKEN;
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        fr_err_set(err, "cannot open the machine lock '%s': %s", path, strerror(errno));
        return MACHINE_LOCK_ERROR;
    }
    fchmod(fd, 0666); /* another user's run must be able to take it too (the umask narrowed it) */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            fr_err_set(err, "cannot lock '%s': %s", path, strerror(errno));
            close(fd);
            return MACHINE_LOCK_ERROR;
        }
        char holder[768];
        read_holder(fd, holder, sizeof holder);
        if (!wait) {
            fr_err_set(err, "the machine is busy: %s holds %s; not waiting (--no-wait)", holder, path);
            close(fd);
            return MACHINE_LOCK_BUSY;
        }
        if (say) {
            fprintf(say, "forge-roofline: waiting for the machine: %s holds %s (one run at a time)\n", holder,
                    path);
            fflush(say);
        }
        int rc;
        while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
        }
        if (rc != 0) {
            fr_err_set(err, "cannot lock '%s': %s", path, strerror(errno));
            close(fd);
            return MACHINE_LOCK_ERROR;
        }
    }
    write_holder(fd, command);
    l->fd = fd;
    return MACHINE_LOCK_TAKEN;
}

void machine_lock_release(struct machine_lock *l) {
    if (l->fd < 0) return;
    if (!l->inherited) {
        if (ftruncate(l->fd, 0) != 0) { /* the name goes with the lock; a failure only leaves it stale */
        }
        close(l->fd);
    }
    l->fd = -1;
}
