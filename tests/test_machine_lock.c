/* The machine-wide run lock (bench/cli/machine_lock.h): a second taker is refused with the holder's pid and
 * command line, or waits and says what for; a holder killed with SIGKILL leaves nothing that blocks; a
 * descriptor passed in FORGE_ROOFLINE_LOCK_FD is taken over; and a full run with --no-wait exits 3 with one
 * line, before it creates any folder, while another process holds the lock. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/cli/machine_lock.h"
#include "tests/cli_run.h"

static void temp_lock_path(char *out, size_t len) {
    snprintf(out, len, "/tmp/fr-lock-test-%ld-XXXXXX", (long)getpid());
    int fd = mkstemp(out);
    cr_assert_geq(fd, 0);
    close(fd);
}

/* A child that takes the lock, says so on the pipe, then holds it for hold_s seconds (0: until killed). */
static pid_t holder(const char *path, double hold_s) {
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        struct machine_lock l;
        struct fr_err err = {{0}};
        if (machine_lock_take(&l, path, "forge-roofline --model held-by-test", false, NULL, &err) != 0)
            _exit(9);
        if (write(p[1], "x", 1) != 1) _exit(9);
        if (hold_s > 0)
            usleep((useconds_t)(hold_s * 1e6));
        else
            pause();
        _exit(0);
    }
    close(p[1]);
    char c;
    cr_assert_eq(read(p[0], &c, 1), 1, "the holder took the lock");
    close(p[0]);
    return pid;
}

Test(machine_lock, busy_names_the_holder_and_a_killed_holder_blocks_nothing) {
    char path[128];
    temp_lock_path(path, sizeof path);
    pid_t pid = holder(path, 0);
    struct machine_lock l;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_lock_take(&l, path, "second", false, NULL, &err), MACHINE_LOCK_BUSY);
    char want[64];
    snprintf(want, sizeof want, "pid %ld since ", (long)pid);
    cr_expect(strstr(err.msg, want) && strstr(err.msg, "forge-roofline --model held-by-test") &&
                  strstr(err.msg, "--no-wait"),
              "%s", err.msg);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_expect_eq(machine_lock_take(&l, path, "third", false, NULL, &err), MACHINE_LOCK_TAKEN, "%s", err.msg);
    machine_lock_release(&l);
    unlink(path);
}

Test(machine_lock, a_second_run_waits_and_says_for_what) {
    char path[128];
    temp_lock_path(path, sizeof path);
    pid_t pid = holder(path, 0.3);
    FILE *say = tmpfile();
    cr_assert_not_null(say);
    struct machine_lock l;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_lock_take(&l, path, "waiter", true, say, &err), MACHINE_LOCK_TAKEN, "%s", err.msg);
    char msg[512] = "";
    rewind(say);
    cr_assert(fgets(msg, sizeof msg, say));
    char want[64];
    snprintf(want, sizeof want, "waiting for the machine: pid %ld since", (long)pid);
    cr_expect(strstr(msg, want), "%s", msg);
    int status = 0;
    waitpid(pid, &status, 0);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the holder finished its hold first");
    machine_lock_release(&l);
    fclose(say);
    unlink(path);
}

Test(machine_lock, a_callers_descriptor_is_taken_over) {
    char path[128];
    temp_lock_path(path, sizeof path);
    struct machine_lock outer, inner;
    struct fr_err err = {{0}};
    cr_assert_eq(machine_lock_take(&outer, path, "compare-commits", false, NULL, &err), MACHINE_LOCK_TAKEN);
    cr_expect_eq(machine_lock_take(&inner, path, "a run", false, NULL, &err), MACHINE_LOCK_BUSY,
                 "another open of the file is another taker");
    char fd[16];
    snprintf(fd, sizeof fd, "%d", outer.fd);
    setenv("FORGE_ROOFLINE_LOCK_FD", fd, 1);
    cr_expect_eq(machine_lock_take(&inner, path, "a run", false, NULL, &err), MACHINE_LOCK_TAKEN, "%s",
                 err.msg);
    cr_expect(inner.inherited);
    machine_lock_release(&inner);
    cr_expect_eq(fcntl(outer.fd, F_GETFD), FD_CLOEXEC, "the caller's descriptor stays open");
    unsetenv("FORGE_ROOFLINE_LOCK_FD");
    machine_lock_release(&outer);
    unlink(path);
}

Test(machine_lock, path_follows_the_environment) {
    char out[256];
    setenv("FORGE_ROOFLINE_LOCK", "/tmp/some.lock", 1);
    machine_lock_path("results", out, sizeof out);
    cr_expect_str_eq(out, "/tmp/some.lock");
    unsetenv("FORGE_ROOFLINE_LOCK");
    machine_lock_path("results", out, sizeof out);
    cr_expect(strcmp(out, "/run/lock/forge-roofline.lock") == 0 || strstr(out, "forge-roofline.lock"), "%s",
              out);
}

Test(machine_lock, a_run_with_no_wait_exits_3, .timeout = 120) {
    char path[128], parent[] = "/tmp/fr-lock-out-XXXXXX";
    temp_lock_path(path, sizeof path);
    cr_assert(mkdtemp(parent));
    pid_t pid = holder(path, 0);
    setenv("FORGE_ROOFLINE_LOCK", path, 1);
    static struct cli_result r;
    char args[256];
    snprintf(args, sizeof args, "--model tests/fixtures/tiny-qwen3 --quick --no-wait --out %s", parent);
    cli_run(&r, 1, args);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_expect_eq(r.status, 3, "%s", r.err);
    cr_expect(strncmp(r.err, "forge-roofline: the machine is busy: pid ", 41) == 0, "%s", r.err);
    const char *nl = strchr(r.err, '\n');
    cr_expect(nl && nl[1] == '\0', "one line: %s", r.err);
    DIR *d = opendir(parent);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    cr_expect_eq(n, 0, "nothing written before the lock");
    rmdir(parent);
    unlink(path);
}
