/* forge-roofline lockstep: starts two runs that take turns, one timed repetition each (roofline/lockstep.h),
 * so that a compare of two builds sees both in the same memory state. Each command is a forge-roofline full
 * run (a binary and its options, e.g. another commit's build); the driver appends --lockstep FD,first|second
 * and hands both the machine lock it holds. It sets GOMP_SPINCOUNT=2000 (unless OMP_WAIT_POLICY or
 * GOMP_SPINCOUNT is set): after a region libgomp's idle workers spin about 300,000 times (4-8 ms of CPU
 * measured on the 2-core VM), on the cores the partner is then timed on; 2000 spins burn about 0.1 ms. Not
 * OMP_WAIT_POLICY=passive: a worker asleep at every region's start costs about 50 us a region (measured),
 * which inflated an injected 5 % slowdown of gate_up_proj to 21 % in lockstep rounds. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/cli/cli.h"
#include "bench/cli/machine_lock.h"

#define LOCKSTEP_SEP   ":::"
#define LOCKSTEP_SPINS "2000"

static void usage(FILE *f) {
    fprintf(f,
            "usage: forge-roofline lockstep [--no-wait] BIN_A [run options] " LOCKSTEP_SEP
            " BIN_B [run options]\n"
            "Runs two forge-roofline full runs (each BIN a forge-roofline build, e.g. two commits') taking\n"
            "turns one timed repetition each: A's repetition, then B's, milliseconds apart, so both see the\n"
            "same state of a machine whose memory read moves from second to second. Give each side its own\n"
            "--out. Exit status: 0 when both runs succeed, else the first failing run's status (A's first).\n"
            "The driver holds the machine lock for both (--no-wait: exit 3 when another run holds it) and\n"
            "runs them with GOMP_SPINCOUNT=" LOCKSTEP_SPINS
            " (idle OpenMP workers stop spinning within about\n"
            "0.1 ms) unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set. docs/statistics.md#lockstep.\n");
}

/* Starts argv with the lockstep option appended: the child keeps `keep` (its end of the socket) and closes
 * `drop`. Returns the pid, or -1 with errno. */
static pid_t start(char **argv, int argc, int keep, int drop, const char *role) {
    char spec[32];
    snprintf(spec, sizeof spec, "%d,%s", keep, role);
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args) return -1;
    memcpy(args, argv, sizeof *args * (size_t)argc);
    args[argc] = "--lockstep", args[argc + 1] = spec;
    fflush(NULL);
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        /* a driver killed (compare-commits interrupted) takes its runs with it: no orphan holds the cores */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(127); /* it died before prctl */
        close(drop);
        int flags = fcntl(keep, F_GETFD);
        if (flags >= 0) fcntl(keep, F_SETFD, flags & ~FD_CLOEXEC);
        execvp(args[0], args);
        fprintf(stderr, "forge-roofline: lockstep: cannot run '%s': %s\n", args[0], strerror(errno));
        _exit(127);
    }
    int saved = errno;
    free(args);
    errno = saved;
    return pid;
}

/* The run's exit status in words and as a status to return (a signal: 1). */
static int reap(pid_t pid, const char *side, const char *bin) {
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return cli_fail("lockstep: waiting for run %s: %s", side, strerror(errno));
    if (WIFEXITED(st)) {
        if (WEXITSTATUS(st) != 0)
            fprintf(stderr, "forge-roofline: lockstep: run %s (%s) exited with status %d\n", side, bin,
                    WEXITSTATUS(st));
        return WEXITSTATUS(st);
    }
    fprintf(stderr, "forge-roofline: lockstep: run %s (%s) was killed by signal %d\n", side, bin,
            WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return CLI_EXIT_FAIL;
}

int cmd_lockstep(int argc, char **argv) {
    bool no_wait = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        if (strcmp(argv[i], "--no-wait") != 0)
            return cli_usage_error("lockstep: unknown option '%s' before BIN_A (try --help)", argv[i]);
        no_wait = true;
    }
    int a0 = i, sep = -1;
    for (int j = a0; j < argc; j++)
        if (strcmp(argv[j], LOCKSTEP_SEP) == 0) {
            if (sep >= 0) return cli_usage_error("lockstep: '" LOCKSTEP_SEP "' is given twice");
            sep = j;
        }
    if (sep < 0 || sep == a0 || sep == argc - 1)
        return cli_usage_error("lockstep: expected BIN_A [options] " LOCKSTEP_SEP
                               " BIN_B [options] (try --help)");
    for (int j = a0; j < argc; j++)
        if (strncmp(argv[j], "--lockstep", 10) == 0)
            return cli_usage_error("lockstep: '%s' is the driver's to give; leave it out", argv[j]);

    /* the lock both runs work under: an inherited one (compare-commits.sh) is taken over as it is */
    struct machine_lock lock = {.fd = -1};
    char path[1024], command[512];
    machine_lock_path(NULL, path, sizeof path);
    snprintf(command, sizeof command, "forge-roofline lockstep %s " LOCKSTEP_SEP " %s", argv[a0],
             argv[sep + 1]);
    int rc = cli_take_machine_lock(&lock, path, command, !no_wait);
    if (rc != CLI_EXIT_OK) return rc;
    char fd_text[16];
    snprintf(fd_text, sizeof fd_text, "%d", lock.fd);
    int flags = fcntl(lock.fd, F_GETFD);
    if (flags >= 0) fcntl(lock.fd, F_SETFD, flags & ~FD_CLOEXEC);
    bool wait_given = getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT");
    if (setenv("FORGE_ROOFLINE_LOCK", path, 1) != 0 || setenv("FORGE_ROOFLINE_LOCK_FD", fd_text, 1) != 0 ||
        (!wait_given && setenv("GOMP_SPINCOUNT", LOCKSTEP_SPINS, 1) != 0)) {
        machine_lock_release(&lock);
        return cli_fail("lockstep: setenv: %s", strerror(errno));
    }

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        machine_lock_release(&lock);
        return cli_fail("lockstep: socketpair: %s", strerror(errno));
    }
    argv[sep] = NULL;
    pid_t pa = start(argv + a0, sep - a0, sv[0], sv[1], "first");
    pid_t pb = pa < 0 ? -1 : start(argv + sep + 1, argc - sep - 1, sv[1], sv[0], "second");
    int start_errno = errno;
    close(sv[0]),
        close(sv[1]); /* each run now holds the only copy of its end: an exit is an EOF to the other */
    int rc_a = pa < 0 ? CLI_EXIT_FAIL : reap(pa, "A", argv[a0]);
    int rc_b = pb < 0 ? CLI_EXIT_FAIL : reap(pb, "B", argv[sep + 1]);
    machine_lock_release(&lock);
    if (pa < 0 || pb < 0)
        return cli_fail("lockstep: cannot start run %s: %s", pa < 0 ? "A" : "B", strerror(start_errno));
    return rc_a ? rc_a : rc_b;
}
