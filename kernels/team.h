/* A kernel team: the threads of one OpenMP parallel region that run many kernel calls in a row (a whole
 * decode step) and meet between them at a barrier of their own instead of opening a region per call.
 * Why: on the 2-core Zen 5 VM libgomp's fork and join cost 3.1 µs on two threads and its barrier 1.6 µs (a
 * futex call at every release), of about 5.3 µs of fixed cost a matvec call, and a Qwen3-0.6B step makes 113
 * matvec and 28 attention calls: one team a step made the step 2-7 % faster (docs/figures.md, on the roofs).
 * The barrier spins, so a team needs a processor for each of its threads (model/decode.c decode_runs_team).
 * Use: every thread of a region calls kernel_team_join first and kernel_team_leave last. In between, the
 * kernels of kernels.h see the team (kernel_team_active) and split their work with kernel_share_* and meet at
 * kernel_team_barrier; outside a team they use OpenMP's constructs as before. Every thread of the team must
 * make the same kernel calls in the same order. */
#ifndef FR_TEAM_H
#define FR_TEAM_H

#include <stdbool.h>

/* Shared by the team's threads; zero it (kernel_team_init) before the region. Each counter on its own line.
 */
struct kernel_team {
    _Alignas(64) unsigned arrived; /* threads at the current barrier */
    _Alignas(64) unsigned gen;     /* barriers completed */
    _Alignas(64) long ticket;      /* work items handed out so far, over every kernel_share */
};

void kernel_team_init(struct kernel_team *t);
/* Called by every thread of the current parallel region, on entry; the team's size is the region's. */
void kernel_team_join(struct kernel_team *t);
/* Called by every thread on the way out of the region (after the last barrier). */
void kernel_team_leave(void);
/* Whether this thread runs inside a joined team. */
bool kernel_team_active(void);
/* Whether the caller is one thread of a team that shares a kernel's work: a kernel team's (of any size, one
 * too) or an active OpenMP region's. The kernels then open no region of their own. */
bool kernel_team_shares(void);
/* Waits until every thread of the team has arrived: spins (with pause), yielding the core after a while so
 * that a thread whose core was taken (a shared machine) gets it back. Memory written before it by any thread
 * is visible after it to all. */
void kernel_team_barrier(void);
/* The team's barrier inside a team, else OpenMP's (inside a region; nothing outside one). */
void kernel_team_sync(void);

/* The only questions asked of OpenMP. How many threads a run uses is never one of them: the run is told
 * (--threads), and passes the count to every kernel and region as a parameter. These say where a thread is:
 * kernel_team_thread is its number in the region it runs in (a kernel team's or OpenMP's; 0 outside any),
 * kernel_team_size the threads of that region (1 outside any), kernel_team_procs the processors the process
 * may run on (as it started: binding a thread to a core does not narrow it). kernel_team_exact_sizes makes
 * every later region get the threads it asks for (no dynamic adjustment), as a binding of thread i to core i
 * needs. */
int kernel_team_thread(void);
int kernel_team_size(void);
int kernel_team_procs(void);
/* Whether the caller runs inside an active OpenMP region (more than one thread), kernel team or not. */
bool kernel_team_in_region(void);
void kernel_team_exact_sizes(void);

/* Hands out n work items, 0 .. n - 1, to whichever thread asks next: every thread of the team calls
 * kernel_share_begin, then kernel_share_next until it returns -1, then kernel_share_end, which ends with the
 * team's barrier. No reset between calls: each thread knows where the last one left the ticket counter. */
struct kernel_share {
    long base;
    int n;
};
void kernel_share_begin(struct kernel_share *s, int n);
int kernel_share_next(struct kernel_share *s);
void kernel_share_end(struct kernel_share *s);

#endif
