/* The turn-taking of roofline/lockstep.h over a socketpair. The module's state is process-global, so the
 * partner is a fork()ed child using the module too (Criterion runs each test in its own process, so every
 * test starts without a lockstep). What is checked: bad --lockstep values and descriptors that are not a
 * connected stream socket are refused in one line naming --lockstep; two sides driving timing_measure with
 * different repetition wishes time the same count of every row, their repetitions alternating (a log in
 * shared memory, no clock); a partner that goes leaves the caller to its own wish, says "ended" and counts
 * the repetitions run alone; both sides count the same turns. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "roofline/lockstep.h"
#include "roofline/timing.h"

static void expect_one_line_error(const struct fr_err *err, const char *what) {
    cr_expect(strncmp(err->msg, "--lockstep", 10) == 0, "%s: error does not name --lockstep: '%s'", what,
              err->msg);
    cr_expect(err->msg[0] && !strchr(err->msg, '\n'), "%s: not one line: '%s'", what, err->msg);
}

Test(lockstep, bad_values_are_refused_in_one_line) {
    const char *bad[] = {"x",
                         "3",
                         "3,third",
                         "-1,first",
                         "",
                         ",first",
                         "3,first,",
                         "3,First",
                         "3 ,second",
                         "99999999999999999999,first",
                         "3,first\nmore"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct fr_err err = {{0}};
        cr_expect_neq(lockstep_start(bad[i], &err), 0, "'%s' accepted", bad[i]);
        expect_one_line_error(&err, bad[i]);
    }
    cr_expect_not(lockstep_started());
    cr_expect_not(lockstep_active());
    cr_expect(lockstep_turn(true) && !lockstep_turn(false), "without a lockstep a turn is the caller's wish");
    cr_expect_str_eq(lockstep_lost(), "");
}

/* lockstep_start on descriptor fd as role ("first" or "second"). */
static int start_as(int fd, const char *role, struct fr_err *err) {
    char spec[32];
    snprintf(spec, sizeof spec, "%d,%s", fd, role);
    return lockstep_start(spec, err);
}

static void expect_refused_fd(int fd, const char *role, const char *what) {
    struct fr_err err = {{0}};
    cr_expect_neq(start_as(fd, role, &err), 0, "%s (fd %d, %s) accepted", what, fd, role);
    expect_one_line_error(&err, what);
    cr_expect_not(lockstep_active(), "%s", what);
}

Test(lockstep, descriptors_that_are_not_a_connected_stream_socket_are_refused) {
    int p[2], d[2];
    cr_assert_eq(pipe(p), 0);
    expect_refused_fd(p[0], "first", "a pipe");
    expect_refused_fd(p[1], "second", "a pipe's write end");
    char path[] = "/tmp/fr-lockstep-file-XXXXXX";
    int f = mkstemp(path);
    cr_assert_geq(f, 0);
    unlink(path);
    expect_refused_fd(f, "first", "a regular file");
    cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM, 0, d), 0);
    expect_refused_fd(d[0], "first", "a datagram socket");
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_geq(s, 0);
    expect_refused_fd(s, "first", "a stream socket connected to nothing");
    expect_refused_fd(s, "second", "a stream socket connected to nothing");
    close(f);
    expect_refused_fd(f, "first", "a closed descriptor");
    cr_expect_not(lockstep_started());
    close(p[0]), close(p[1]), close(d[0]), close(d[1]), close(s);
}

/* Shared between the two processes: the order the sides' repetitions ran in, and what the child saw. */
#define LOG_MAX 256
struct shared_log {
    int n;
    char who[LOG_MAX];
    int child_reps[8];
    long child_turns;
    char child_lost[160];
};

static struct shared_log *shared_log_new(void) {
    struct shared_log *l = mmap(NULL, sizeof *l, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(l, MAP_FAILED);
    memset(l, 0, sizeof *l);
    return l;
}

struct side {
    struct shared_log *log;
    char name;
};

static void log_rep(void *ctx, long rep) {
    (void)rep;
    struct side *s = ctx;
    int i = __atomic_fetch_add(&s->log->n, 1, __ATOMIC_SEQ_CST);
    if (i < LOG_MAX) s->log->who[i] = s->name;
}

static void no_op(void *ctx, long rep) {
    (void)ctx, (void)rep;
}

static void start_or_die(int fd, const char *role) {
    struct fr_err err = {{0}};
    if (start_as(fd, role, &err) != 0) {
        fprintf(stderr, "lockstep_start(%d,%s): %s\n", fd, role, err.msg);
        _exit(99);
    }
}

/* fork()s the partner: it keeps sv[1], the caller sv[0]. The child is killed by an alarm should the two
 * sides ever wait for each other. */
static pid_t fork_partner(int sv[2]) {
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* no cr_ call in the child: Criterion would take its message for a stray process's */
        alarm(20);
        close(sv[0]);
        return 0;
    }
    cr_assert_gt(pid, 0);
    close(sv[1]);
    return pid;
}

static int wait_exit(pid_t pid) {
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* Each side's minimum count per row; both may go to 10, with no minimum time, so only the wishes differ.
 * The last row times a pair (timing_measure_with) with a warm-up. */
#define ROWS 4
static const int min_a[ROWS] = {3, 5, 2, 4}, min_b[ROWS] = {5, 2, 2, 1}, warm[ROWS] = {0, 1, 2, 1};

static int time_rows(struct side *s, const int *mins, int *reps) {
    for (int r = 0; r < ROWS; r++) {
        struct timing_opts o = {.warmup = warm[r], .min_reps = mins[r], .max_reps = 10, .min_time_s = 0};
        struct timing_stats st;
        int rc = r == ROWS - 1
                     ? timing_measure_pair(log_rep, s, no_op, NULL, &o, &st, &(struct timing_stats){0}, NULL)
                     : timing_measure(log_rep, s, &o, &st);
        if (rc != 0) return -1;
        reps[r] = st.reps;
    }
    return 0;
}

Test(lockstep, both_sides_time_every_row_as_often_as_the_one_wanting_more, .timeout = 30) {
    struct shared_log *log = shared_log_new();
    int sv[2];
    pid_t pid = fork_partner(sv);
    if (pid == 0) {
        struct side b = {log, 'B'};
        start_or_die(sv[1], "second");
        if (time_rows(&b, min_b, log->child_reps) != 0) _exit(98);
        log->child_turns = lockstep_turns();
        snprintf(log->child_lost, sizeof log->child_lost, "%s", lockstep_lost());
        lockstep_finish();
        _exit(0);
    }
    struct side a = {log, 'A'};
    struct fr_err err = {{0}};
    cr_assert_eq(start_as(sv[0], "first", &err), 0, "%s", err.msg);
    cr_expect(lockstep_started() && lockstep_active());
    int reps[ROWS];
    cr_assert_eq(time_rows(&a, min_a, reps), 0);
    long turns = lockstep_turns();
    cr_expect_str_eq(lockstep_lost(), "", "the partner was there for every repetition");
    lockstep_finish();
    cr_expect_not(lockstep_active());
    cr_assert_eq(wait_exit(pid), 0, "the partner failed");

    int total = 0;
    for (int r = 0; r < ROWS; r++) {
        int want = min_a[r] > min_b[r] ? min_a[r] : min_b[r];
        cr_expect_eq(reps[r], want, "row %d: A timed %d, expected %d", r, reps[r], want);
        cr_expect_eq(log->child_reps[r], want, "row %d: B timed %d, expected %d", r, log->child_reps[r],
                     want);
        total += warm[r] + want;
    }
    /* one turn per repetition, warm-ups included, and both sides say so */
    cr_expect_eq(turns, total, "A counted %ld turns, %d repetitions ran", turns, total);
    cr_expect_eq(log->child_turns, total, "B counted %ld turns, %d repetitions ran", log->child_turns, total);
    cr_expect_str_eq(log->child_lost, "");
    /* every repetition of A was followed by one of B before A's next: A, B, A, B, ... */
    cr_assert_eq(log->n, 2 * total);
    for (int i = 0; i < log->n; i++)
        cr_expect_eq(log->who[i], i % 2 ? 'B' : 'A', "repetition %d of the joint log was %c's", i,
                     log->who[i]);
    munmap(log, sizeof *log);
}

/* The first side passes its turn with a wish; the partner takes it and exits: the turn comes back as the
 * caller's own wish, the lockstep is over, and the loss is said only once a repetition ran alone. */
Test(lockstep, the_partner_ending_leaves_the_caller_its_own_wish, .timeout = 30) {
    for (int wish = 0; wish < 2; wish++) {
        int sv[2];
        pid_t pid = fork_partner(sv);
        if (pid == 0) {
            start_or_die(sv[1], "second");
            _exit(0); /* after the first's first byte: the first is in its read, so it sees an EOF */
        }
        struct fr_err err = {{0}};
        cr_assert_eq(start_as(sv[0], "first", &err), 0, "%s", err.msg);
        cr_expect(lockstep_active());
        cr_expect_eq(lockstep_turn(wish), wish, "with the partner gone the turn is the caller's wish");
        cr_assert_eq(wait_exit(pid), 0);
        cr_expect_not(lockstep_active());
        cr_expect(lockstep_started());
        cr_expect_eq(lockstep_turns(), 0);
        cr_expect_str_eq(lockstep_lost(), "", "nothing ran alone yet");
        cr_expect_eq(lockstep_turn(!wish), !wish);
        const char *lost = lockstep_lost();
        cr_expect(strstr(lost, "ended") && strstr(lost, "; 1 repetitions"), "lost: '%s'", lost);
        cr_expect_eq(lockstep_turn(true), true);
        cr_expect(strstr(lockstep_lost(), "; 2 repetitions"), "lost: '%s'", lockstep_lost());
    }
}

/* A first that goes before its first turn: the second is refused at the start, in one line. */
Test(lockstep, a_partner_gone_before_the_first_turn_is_refused, .timeout = 30) {
    int sv[2];
    pid_t pid = fork_partner(sv);
    if (pid == 0) {
        start_or_die(sv[1], "first");
        _exit(0);
    }
    struct fr_err err = {{0}};
    cr_expect_neq(start_as(sv[0], "second", &err), 0);
    expect_one_line_error(&err, "a partner gone at once");
    cr_expect_not(lockstep_active());
    cr_assert_eq(wait_exit(pid), 0);
}

/* A (first) may time only 3 repetitions of a row and then ends its run; B (second) wants 6. B goes on alone
 * for the 3 repetitions after its third, with A's last wish (none) honoured, and says so; both count the
 * 3 turns they took together. */
Test(lockstep, a_run_alone_after_its_partner_ended_says_so, .timeout = 30) {
    struct shared_log *log = shared_log_new();
    int sv[2];
    pid_t pid = fork_partner(sv);
    if (pid == 0) {
        struct side a = {log, 'A'};
        start_or_die(sv[1], "first");
        struct timing_stats st;
        struct timing_opts o = {.min_reps = 3, .max_reps = 3};
        if (timing_measure(log_rep, &a, &o, &st) != 0) _exit(98);
        log->child_reps[0] = st.reps;
        log->child_turns = lockstep_turns();
        lockstep_finish();
        _exit(0);
    }
    struct side b = {log, 'B'};
    struct fr_err err = {{0}};
    cr_assert_eq(start_as(sv[0], "second", &err), 0, "%s", err.msg);
    struct timing_stats st;
    struct timing_opts o = {.min_reps = 6, .max_reps = 10};
    cr_assert_eq(timing_measure(log_rep, &b, &o, &st), 0);
    cr_assert_eq(wait_exit(pid), 0);
    cr_expect_eq(log->child_reps[0], 3);
    cr_expect_eq(st.reps, 6);
    cr_expect_not(lockstep_active());
    cr_expect_eq(log->child_turns, 3);
    cr_expect_eq(lockstep_turns(), 3, "B counted %ld turns with A", lockstep_turns());
    const char *lost = lockstep_lost();
    cr_expect(strstr(lost, "the partner run ended after 3 turns; 3 repetitions after it ran alone"),
              "lost: '%s'", lost);
    cr_assert_eq(log->n, 9);
    cr_expect_eq(strncmp(log->who, "ABABABBBB", 9), 0, "order: %.9s", log->who);
    munmap(log, sizeof *log);
}
