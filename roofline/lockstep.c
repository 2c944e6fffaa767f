/* The turn-taking of lockstep.h over a stream socket. One byte a turn: a blocking read is the wait, so the
 * waiting run sleeps instead of spinning on the cores its partner is being timed on (its OpenMP workers
 * stop spinning soon too: forge-roofline lockstep sets GOMP_SPINCOUNT). */
#include "roofline/lockstep.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    int fd; /* -1: none, or the partner has gone */
    bool started, first;
    bool pending; /* the second's: the first's wish for the repetition the second is about to decide on */
    long turns, alone; /* turns taken; repetitions timed after the partner went */
    const char *why;   /* how the partner went, NULL while it is there */
    char lost[160];
} ls = {.fd = -1};

static void lose(const char *why) {
    if (ls.fd >= 0) close(ls.fd);
    ls.fd = -1;
    ls.why = why;
}

/* One byte from the partner: 0 or 1 its wish, -1 when it has gone. */
static int receive(void) {
    unsigned char b;
    for (;;) {
        ssize_t n = read(ls.fd, &b, 1);
        if (n == 1) return b & 1;
        if (n < 0 && errno == EINTR) continue;
        lose(n == 0 ? "ended" : "stopped answering");
        return -1;
    }
}

/* An empty parallel region, untimed: the team's workers slept through the partner's repetition, and waking
 * a sleeping thread costs about 50 us on the measuring VM (now and then 2 ms), which a run alone never pays
 * at its next region (its workers still spin from the paired read). */
static void wake_team(void) {
    int woke = 0;
#pragma omp parallel reduction(+ : woke)
    woke += 1;
    (void)woke;
}

int lockstep_start(const char *spec, struct fr_err *err) {
    char *end;
    errno = 0;
    long fd = strtol(spec, &end, 10);
    bool first = strcmp(end, ",first") == 0;
    if (errno || end == spec || fd < 0 || fd > 1 << 20 || (!first && strcmp(end, ",second") != 0)) {
        char shown[64];
        return fr_err_set(err,
                          "--lockstep: expected FD,first or FD,second (a socket `forge-roofline lockstep` "
                          "hands over), got '%s'",
                          fr_err_printable(spec, strlen(spec), shown, sizeof shown));
    }
    /* connected too: an unconnected socket would fail only at the first turn, after the whole setup */
    struct stat st;
    struct sockaddr_storage peer_addr;
    int type = 0;
    socklen_t len = sizeof type, addr_len = sizeof peer_addr;
    if (fstat((int)fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
        getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM ||
        getpeername((int)fd, (struct sockaddr *)&peer_addr, &addr_len) != 0)
        return fr_err_set(err,
                          "--lockstep: descriptor %ld is not a connected stream socket (run both through "
                          "`forge-roofline lockstep`)",
                          fd);
    ls.fd = (int)fd, ls.started = true, ls.first = first, ls.turns = ls.alone = 0, ls.why = NULL;
    int peer = first ? 0 : receive();
    if (peer < 0) return fr_err_set(err, "--lockstep: the partner run went before its first turn");
    ls.pending = peer;
    return 0;
}

bool lockstep_turn(bool want_more) {
    if (ls.fd < 0) {
        ls.alone += ls.started;
        return want_more;
    }
    /* Both must decide on the same two wishes. The first's byte reaches the second one turn early (it is
     * what wakes the second up to run its repetition i), so the second decides on the byte it already
     * holds and keeps the one just read for its next decision. That byte also makes the second's repetition
     * one taken together, counted now: whatever becomes of the partner, both count the same turns. */
    bool held = !ls.first && ls.pending;
    ls.turns += !ls.first;
    unsigned char b = want_more;
    ssize_t n;
    do n = send(ls.fd, &b, 1, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n != 1) {
        lose("stopped listening");
        return want_more || held;
    }
    int peer = receive();
    if (peer < 0) return want_more || held;
    wake_team();
    if (ls.first) {
        ls.turns++;
        return want_more || peer;
    }
    ls.pending = peer;
    return want_more || held;
}

void lockstep_finish(void) {
    if (ls.fd >= 0) close(ls.fd);
    ls.fd = -1;
}

bool lockstep_active(void) {
    return ls.fd >= 0;
}

bool lockstep_started(void) {
    return ls.started;
}

long lockstep_turns(void) {
    return ls.turns;
}

const char *lockstep_lost(void) {
    if (!ls.why || ls.alone == 0) return ""; /* a partner that ends after our last repetition costs nothing */
    snprintf(ls.lost, sizeof ls.lost,
             "the partner run %s after %ld turns; %ld repetitions after it ran alone", ls.why, ls.turns,
             ls.alone);
    return ls.lost;
}
