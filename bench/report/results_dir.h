/* results_dir: one folder per run, written under a temporary name and renamed when complete.
 *
 *   results_dir_begin   creates <parent>/.<host>-<stamp>.tmp (and <parent> if missing); fails before any
 *                       measuring when the parent cannot be written. Installs SIGINT/SIGTERM/SIGHUP handlers
 *                       that remove the temporary folder and re-raise, so an interrupted run leaves nothing
 *                       that looks complete (a signal ignored at start, as under nohup, stays ignored).
 *                       Earlier runs are never touched.
 *   results_dir_commit  renames it to <parent>/<host>-<stamp>/ and restores the previous handlers.
 *   results_dir_abort   removes the temporary folder and restores the handlers.
 *
 * One results_dir may be active per process. The folder is flat: write files, not subfolders, into it. */
#ifndef FR_RESULTS_DIR_H
#define FR_RESULTS_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "kernels/fr_err.h"

#define RESULTS_PATH_MAX 1024

struct results_dir {
    char tmp_path[RESULTS_PATH_MAX];   /* where the writers write while the run is in progress */
    char final_path[RESULTS_PATH_MAX]; /* the complete run, after commit */
    bool active;
};

/* UTC stamp of t, like 20261129T173000Z. Returns 0, or -1 when buf is too small. */
int results_dir_stamp(time_t t, char *buf, size_t len);

int results_dir_begin(struct results_dir *rd, const char *parent, const char *host, const char *utc_stamp,
                      struct fr_err *err);
int results_dir_commit(struct results_dir *rd, struct fr_err *err);
void results_dir_abort(struct results_dir *rd);

#endif
