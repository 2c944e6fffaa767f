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
 *   results_dir_check_complete  refuses a folder a run did not finish: one with the temporary name, or
 *                       holding the INCOMPLETE marker that begin writes and commit removes (a run killed
 *                       with SIGKILL, or a power cut, leaves both). compare and every reader of run.json
 *                       call it.
 *   A full disk is found by begin too: less than RESULTS_DIR_NEED_BYTES free under the parent (statvfs) is
 *   refused before anything is measured.
 *
 * One results_dir may be active per process. The folder is flat: write files, not subfolders, into it. */
#ifndef FR_RESULTS_DIR_H
#define FR_RESULTS_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "kernels/fr_err.h"

#define RESULTS_PATH_MAX 1024
/* What a run folder takes, with room to spare: a full run with plots writes about 2 MB. */
#define RESULTS_DIR_NEED_BYTES ((unsigned long long)32 << 20)
#define RESULTS_DIR_MARKER     "INCOMPLETE" /* in a folder whose run has not finished */

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

/* Non-zero with err when path (a run folder, or a file in one) belongs to a run that did not finish. */
int results_dir_check_complete(const char *path, struct fr_err *err);
/* Non-zero with err when the file system holding dir has less than need_bytes free for this user. */
int results_dir_check_space(const char *dir, unsigned long long need_bytes, struct fr_err *err);

#endif
