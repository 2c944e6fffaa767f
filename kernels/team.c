/* The kernel team of team.h: a spin barrier and a shared ticket counter, each thread's view of them in
 * thread-local storage. */
#include "kernels/team.h"

#include <immintrin.h>
#include <omp.h>
#include <sched.h>
#include <string.h>

/* Pauses before a waiting thread starts yielding its core: about 0.3-1 ms (a pause takes tens of cycles),
 * longer than any serial stretch of a decode step, far shorter than a scheduler's time slice. */
#define TEAM_SPINS (1u << 14)

static _Thread_local struct {
    struct kernel_team *team;
    unsigned size; /* the region's threads */
    long base;     /* the ticket counter where the next kernel_share starts */
} self;

void kernel_team_init(struct kernel_team *t) {
    memset(t, 0, sizeof *t);
}

void kernel_team_join(struct kernel_team *t) {
    self.team = t;
    self.size = (unsigned)omp_get_num_threads();
    self.base = 0;
}

void kernel_team_leave(void) {
    self.team = NULL;
}

bool kernel_team_active(void) {
    return self.team != NULL;
}

/* A centralized barrier: the last thread to arrive resets the count and opens the next generation; the
 * acquire-release pairs make every write before the barrier visible after it. */
void kernel_team_barrier(void) {
    struct kernel_team *t = self.team;
    unsigned gen = __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&t->arrived, 1, __ATOMIC_ACQ_REL) == self.size) {
        __atomic_store_n(&t->arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&t->gen, gen + 1, __ATOMIC_RELEASE);
        return;
    }
    for (unsigned spins = 0; __atomic_load_n(&t->gen, __ATOMIC_ACQUIRE) == gen; spins++)
        if (spins < TEAM_SPINS)
            _mm_pause();
        else
            sched_yield();
}

bool kernel_team_shares(void) {
    return self.team != NULL || omp_in_parallel();
}

void kernel_team_sync(void) {
    if (self.team) {
        kernel_team_barrier();
    } else if (omp_in_parallel()) {
#pragma omp barrier
    }
}

int kernel_team_thread(void) {
    return omp_get_thread_num();
}

int kernel_team_size(void) {
    return self.team ? (int)self.size : omp_get_num_threads();
}

bool kernel_team_in_region(void) {
    return omp_in_parallel();
}

/* The processors the process may run on, counted before main: omp_get_num_procs counts the calling
 * thread's own mask, and once machine_bind_threads has bound thread i to core i the main thread's is one
 * core, which made every bound run take itself for a one-processor machine (no step team, no split
 * softmax, one OpenMP fork a matvec). Shared libraries' constructors (libgomp's) run before this one. */
static int procs_at_start;

__attribute__((constructor)) static void count_procs_at_start(void) {
    procs_at_start = omp_get_num_procs();
}

int kernel_team_procs(void) {
    return procs_at_start > 0 ? procs_at_start : omp_get_num_procs();
}

void kernel_team_exact_sizes(void) {
    omp_set_dynamic(0);
}

void kernel_share_begin(struct kernel_share *s, int n) {
    s->base = self.base;
    s->n = n;
}

/* Every thread stops at its first -1, so each kernel_share takes exactly n + size tickets. */
int kernel_share_next(struct kernel_share *s) {
    long t = __atomic_fetch_add(&self.team->ticket, 1, __ATOMIC_RELAXED) - s->base;
    return t < s->n ? (int)t : -1;
}

void kernel_share_end(struct kernel_share *s) {
    self.base = s->base + s->n + (long)self.size;
    kernel_team_barrier();
}
