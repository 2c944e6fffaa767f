/* Nothing half-written (bench/report/results_dir.h): a run folder carries the INCOMPLETE marker until its
 * commit renames it; a folder with the marker or with the temporary name is refused by every reader of
 * run.json and by `compare` with one line and exit 2; a full file system is refused before anything is
 * measured; and a tiny run killed at random moments (SIGINT, SIGTERM, SIGKILL) leaves nothing that compare
 * accepts (scripts/kill-runs.sh does the same 20 times). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/report/report_json.h"
#include "bench/report/results_dir.h"
#include "tests/cli_run.h"
#include "tests/report_fixture.h"

static bool exists(const char *dir, const char *name) {
    char p[2048];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

Test(incomplete, the_marker_lives_until_commit) {
    char parent[] = "/tmp/fr-incomplete-XXXXXX";
    cr_assert(mkdtemp(parent));
    struct results_dir rd;
    struct fr_err err = {{0}};
    cr_assert_eq(results_dir_begin(&rd, parent, "host", "20261204T000000Z", &err), 0, "%s", err.msg);
    cr_expect(exists(rd.tmp_path, RESULTS_DIR_MARKER));
    cr_expect_neq(results_dir_check_complete(rd.tmp_path, &err), 0);
    cr_expect(strstr(err.msg, "not a complete run"), "%s", err.msg);
    cr_assert_eq(results_dir_commit(&rd, &err), 0, "%s", err.msg);
    cr_expect_not(exists(rd.final_path, RESULTS_DIR_MARKER));
    cr_expect_eq(results_dir_check_complete(rd.final_path, &err), 0, "%s", err.msg);
    rmdir(rd.final_path);
    rmdir(parent);
}

Test(incomplete, marker_or_temporary_name_is_refused_by_readers) {
    char parent[] = "/tmp/fr-incomplete-XXXXXX";
    cr_assert(mkdtemp(parent));
    report_fixture_write_run(parent, "marked", 1.0, NULL);
    report_fixture_write_run(parent, ".host-20261204T000000Z.tmp", 1.0, NULL);
    report_fixture_write_run(parent, "whole", 1.0, NULL);
    char p[512];
    snprintf(p, sizeof p, "%s/marked/" RESULTS_DIR_MARKER, parent);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fclose(f);
    struct run_report *r = malloc(sizeof *r);
    struct fr_err err = {{0}};
    snprintf(p, sizeof p, "%s/marked", parent);
    cr_expect_neq(report_json_read(p, r, &err), 0);
    cr_expect(strstr(err.msg, "marked INCOMPLETE"), "%s", err.msg);
    snprintf(p, sizeof p, "%s/marked/run.json", parent);
    cr_expect_neq(report_json_read(p, r, &err), 0, "the file inside too");
    snprintf(p, sizeof p, "%s/.host-20261204T000000Z.tmp/", parent);
    cr_expect_neq(report_json_read(p, r, &err), 0);
    cr_expect(strstr(err.msg, "temporary folder of a run that did not finish"), "%s", err.msg);
    snprintf(p, sizeof p, "%s/whole", parent);
    cr_expect_eq(report_json_read(p, r, &err), 0, "%s", err.msg);
    free(r);
    static struct cli_result res;
    char args[1024];
    snprintf(args, sizeof args, "compare %s/whole %s/marked --out %s/cmp", parent, parent, parent);
    cli_run(&res, 1, args);
    cr_expect_eq(res.status, 2, "%s", res.err);
    cr_expect(strstr(res.err, "not a complete run") && strchr(res.err, '\n') == res.err + strlen(res.err) - 1,
              "one line: %s", res.err);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", parent);
    cr_expect_eq(system(cmd), 0);
}

Test(incomplete, a_full_disk_is_found_first) {
    struct fr_err err = {{0}};
    cr_expect_eq(results_dir_check_space("/tmp", 1 << 20, &err), 0, "%s", err.msg);
    cr_expect_neq(results_dir_check_space("/tmp", ~0ULL, &err), 0);
    cr_expect(strstr(err.msg, "MiB free under '/tmp'"), "%s", err.msg);
    cr_expect_neq(results_dir_check_space("/nonexistent/dir", 1, &err), 0);
}

/* Three tries of the CLI-level kill test: each start is killed after a random 0.3 to 3 s, by SIGINT,
 * SIGTERM and SIGKILL in turn; then every entry left must be refused by compare. */
Test(incomplete, killed_runs_leave_nothing_compare_accepts, .timeout = 240) {
    const char *bin = getenv("FORGE_ROOFLINE_FAST_BIN");
    if (!bin) bin = "build/forge-roofline";
    char parent[] = "/tmp/fr-killed-XXXXXX", lock[600];
    cr_assert(mkdtemp(parent));
    snprintf(lock, sizeof lock, "%s.lock", parent);
    setenv("FORGE_ROOFLINE_LOCK", lock, 1);
    static const int sigs[] = {SIGINT, SIGTERM, SIGKILL};
    srand((unsigned)time(NULL));
    for (int i = 0; i < 3; i++) {
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
            signal(SIGINT, SIG_DFL); /* a run keeps a signal ignored at start (nohup): this one must not be */
            freopen("/dev/null", "w", stdout);
            freopen("/dev/null", "w", stderr);
            execl(bin, bin, "--model", "tests/fixtures/tiny-qwen3", "--quick", "--context", "1", "--batch",
                  "none", "--no-plots", "--out", parent, (char *)NULL);
            _exit(127);
        }
        usleep((useconds_t)(300000 + rand() % 2700000));
        kill(pid, sigs[i]);
        int st;
        waitpid(pid, &st, 0);
        cr_assert(!(WIFEXITED(st) && WEXITSTATUS(st) == 127), "could not start %s", bin);
    }
    DIR *d = opendir(parent);
    cr_assert_not_null(d);
    int refused = 0, complete = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char entry[1024], args[2200];
        snprintf(entry, sizeof entry, "%s/%s", parent, e->d_name);
        if (e->d_name[0] != '.' && !exists(entry, RESULTS_DIR_MARKER)) {
            complete++; /* finished before its signal */
            continue;
        }
        static struct cli_result res;
        snprintf(args, sizeof args, "compare '%s' '%s' --out %s.cmp", entry, entry, parent);
        cli_run(&res, 1, args);
        cr_expect_eq(res.status, 2, "%s accepted: %s", entry, res.err);
        cr_expect(strstr(res.err, "not a complete run"), "%s", res.err);
        refused++;
    }
    closedir(d);
    cr_log_info("killed runs: %d entries refused, %d complete (finished before the signal)", refused,
                complete);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s.cmp' '%s'", parent, parent, lock);
    cr_expect_eq(system(cmd), 0);
}
