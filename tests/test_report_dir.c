/* The results folder lifecycle: a temporary name until commit, nothing left after abort or a signal,
 * earlier runs untouched, and an unwritable --out refused before anything is measured. */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/report/results_dir.h"
#include "tests/report_testutil.h"

static void write_file(const char *dir, const char *name) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs("x\n", f);
    fclose(f);
}

Test(results_dir, stamp_format) {
    char buf[32];
    cr_assert_eq(results_dir_stamp((time_t)1795973400, buf, sizeof buf), 0); /* 2026-11-29 17:30:00 UTC */
    cr_expect_str_eq(buf, "20261129T173000Z");
    cr_expect_neq(results_dir_stamp(0, buf, 8), 0, "too small a buffer is an error");
}

Test(results_dir, commit_renames_and_earlier_runs_stay) {
    char parent[256];
    tu_tmpdir(parent, sizeof parent);
    struct results_dir rd;
    struct fr_err err = {{0}};
    cr_assert_eq(results_dir_begin(&rd, parent, "hostA", "20261129T173000Z", &err), 0, "%s", err.msg);
    write_file(rd.tmp_path, "run.json");
    cr_assert_eq(results_dir_commit(&rd, &err), 0, "%s", err.msg);
    cr_expect(tu_exists(parent, "hostA-20261129T173000Z/run.json"));
    cr_expect_not(tu_exists(parent, ".hostA-20261129T173000Z.tmp"));

    /* A second run, aborted: the first stays whole, nothing else is left. */
    cr_assert_eq(results_dir_begin(&rd, parent, "hostA", "20261129T173100Z", &err), 0, "%s", err.msg);
    cr_expect(tu_exists(parent, ".hostA-20261129T173100Z.tmp"));
    cr_expect_not(tu_exists(parent, "hostA-20261129T173100Z"), "no complete-looking folder before commit");
    write_file(rd.tmp_path, "run.json");
    results_dir_abort(&rd);
    cr_expect_not(tu_exists(parent, ".hostA-20261129T173100Z.tmp"));
    cr_expect_not(tu_exists(parent, "hostA-20261129T173100Z"));
    cr_expect(tu_exists(parent, "hostA-20261129T173000Z/run.json"));

    /* The same stamp again is refused rather than overwritten. */
    cr_expect_neq(results_dir_begin(&rd, parent, "hostA", "20261129T173000Z", &err), 0);
    cr_expect(strstr(err.msg, "already exists") != NULL, "%s", err.msg);
    tu_rm_flat(parent);
}

Test(results_dir, creates_missing_parent) {
    char base[256], parent[300];
    tu_tmpdir(base, sizeof base);
    snprintf(parent, sizeof parent, "%s/a/b", base);
    struct results_dir rd;
    struct fr_err err = {{0}};
    cr_assert_eq(results_dir_begin(&rd, parent, "h", "20261129T173000Z", &err), 0, "%s", err.msg);
    cr_assert_eq(results_dir_commit(&rd, &err), 0, "%s", err.msg);
    cr_expect(tu_exists(parent, "h-20261129T173000Z"));
    tu_rm_flat(base);
}

Test(results_dir, unwritable_parent_is_refused) {
    char base[256], parent[300];
    tu_tmpdir(base, sizeof base);
    write_file(base, "file");
    struct results_dir rd;
    struct fr_err err = {{0}};
    /* A parent that is a regular file fails even for root. */
    snprintf(parent, sizeof parent, "%s/file", base);
    cr_expect_neq(results_dir_begin(&rd, parent, "h", "20261129T173000Z", &err), 0);
    cr_expect(strlen(err.msg) > 0 && strchr(err.msg, '\n') == NULL, "one-line message: %s", err.msg);
    snprintf(parent, sizeof parent, "%s/file/sub", base);
    cr_expect_neq(results_dir_begin(&rd, parent, "h", "20261129T173000Z", &err), 0);
    cr_expect_neq(results_dir_begin(&rd, "/proc/forge-roofline", "h", "20261129T173000Z", &err), 0);
    cr_expect(strstr(err.msg, "/proc/forge-roofline") != NULL, "%s", err.msg);
    if (geteuid() != 0) {
        snprintf(parent, sizeof parent, "%s/ro", base);
        cr_assert_eq(mkdir(parent, 0555), 0);
        cr_expect_neq(results_dir_begin(&rd, parent, "h", "20261129T173000Z", &err), 0);
        cr_expect(strstr(err.msg, "not writable") != NULL, "%s", err.msg);
    } else {
        cr_log_info("running as root: the mode-0555 case is skipped (root writes anyway)");
    }
    cr_expect_neq(results_dir_begin(&rd, base, "bad/host", "20261129T173000Z", &err), 0);
    tu_rm_flat(base);
}

/* A child begins a run, writes a file, and is killed by SIGTERM: the tmp folder must be gone, the child
 * must die of the signal (re-raised), and an earlier committed run must be untouched. */
Test(results_dir, signal_removes_tmp_and_reraises) {
    char parent[256];
    tu_tmpdir(parent, sizeof parent);
    struct results_dir rd;
    struct fr_err err = {{0}};
    cr_assert_eq(results_dir_begin(&rd, parent, "h", "20261129T170000Z", &err), 0, "%s", err.msg);
    write_file(rd.tmp_path, "run.json");
    cr_assert_eq(results_dir_commit(&rd, &err), 0, "%s", err.msg);

    int sigs[] = {SIGTERM, SIGINT};
    for (int k = 0; k < 2; k++) {
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
            /* a shell that starts its job in the background ignores SIGINT for it, and results_dir keeps an
             * ignored signal ignored: the child takes the default, as a foreground run has it */
            signal(sigs[k], SIG_DFL);
            struct results_dir c;
            struct fr_err e = {{0}};
            if (results_dir_begin(&c, parent, "h", "20261129T173000Z", &e) != 0) _exit(3);
            char path[2048];
            snprintf(path, sizeof path, "%s/blocks.csv", c.tmp_path);
            FILE *f = fopen(path, "w");
            if (!f) _exit(4);
            fputs("name\n", f);
            fclose(f);
            raise(sigs[k]);
            _exit(5); /* not reached when the handler re-raises */
        }
        int status = 0;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == sigs[k],
                  "child must die of signal %d (status %#x)", sigs[k], status);
        cr_expect_not(tu_exists(parent, ".h-20261129T173000Z.tmp"), "tmp folder removed on signal %d",
                      sigs[k]);
        cr_expect_not(tu_exists(parent, "h-20261129T173000Z"));
    }
    cr_expect(tu_exists(parent, "h-20261129T170000Z/run.json"), "earlier run untouched");
    tu_rm_flat(parent);
}

Test(results_dir, ignored_signal_stays_ignored) {
    /* under nohup (or as a shell's background job) SIGHUP (SIGINT) is ignored: the run goes on, so its
     * folder must stay */
    char parent[256];
    tu_tmpdir(parent, sizeof parent);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        signal(SIGHUP, SIG_IGN);
        struct results_dir c;
        struct fr_err e = {{0}};
        if (results_dir_begin(&c, parent, "h", "20261129T173000Z", &e) != 0) _exit(3);
        raise(SIGHUP);
        struct stat st;
        if (stat(c.tmp_path, &st) != 0) _exit(4);
        if (results_dir_commit(&c, &e) != 0) _exit(5);
        _exit(signal(SIGHUP, SIG_DFL) == SIG_IGN ? 0 : 6);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    cr_expect(tu_exists(parent, "h-20261129T173000Z"), "the run's folder was kept");
    tu_rm_flat(parent);
}
