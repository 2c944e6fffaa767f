/* One run at a time per machine: a full run (and `make bench`, which is one) and the rounds of
 * scripts/compare-commits.sh take an flock on one file, so two measurements never share the cores and spoil
 * each other's figures silently. A second run waits and says for what (the holder's pid, command line and
 * since when, which the holder writes into the file), or with --no-wait exits 3 with that one line. The
 * kernel drops an flock when its holder dies, however it dies, so a killed run never leaves a stale lock.
 *
 * The file: $FORGE_ROOFLINE_LOCK when set; else /run/lock/forge-roofline.lock where /run/lock is writable;
 * else $XDG_RUNTIME_DIR/forge-roofline.lock; else forge-roofline.lock in the results folder's parent given
 * (the fallback of a machine without either; runs with another --out then do not see each other).
 * A caller that holds the lock already (compare-commits.sh around its rounds) passes the open descriptor in
 * FORGE_ROOFLINE_LOCK_FD: a run takes it over when it is open on the same file and holds the lock. */
#ifndef FR_MACHINE_LOCK_H
#define FR_MACHINE_LOCK_H

#include <stdbool.h>
#include <stdio.h>

#include "kernels/fr_err.h"

struct machine_lock {
    int fd; /* -1: not held */
    char path[1024];
    bool inherited; /* held by the caller (FORGE_ROOFLINE_LOCK_FD) */
};

enum machine_lock_result {
    MACHINE_LOCK_TAKEN = 0,
    MACHINE_LOCK_BUSY = 1,  /* held by another run and wait was false: err says by whom */
    MACHINE_LOCK_ERROR = -1 /* the file cannot be opened or locked: err says why */
};

/* The lock file's path as described above; fallback_dir is the results folder (may be NULL). */
void machine_lock_path(const char *fallback_dir, char *out, size_t len);

/* Takes the lock on path for `command` (one line, written into the file with the pid and the UTC time).
 * When another process holds it: with wait, says once on `say` (may be NULL) what it waits for, then
 * blocks; without, returns MACHINE_LOCK_BUSY with err naming the holder. */
enum machine_lock_result machine_lock_take(struct machine_lock *l, const char *path, const char *command,
                                           bool wait, FILE *say, struct fr_err *err);
void machine_lock_release(struct machine_lock *l);

#endif
