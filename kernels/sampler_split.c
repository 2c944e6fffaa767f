/* The softmax's passes over threads (sampler_split.h): the parts, and one kernel team a call whose
 * threads other than the caller wait at the team's barrier for the next pass. */
#include "kernels/sampler_split.h"

#include <stddef.h>

#include "kernels/team.h"

void sampler_part(int n, int k, int *lo, int *hi) {
    long blocks = ((long)n + 15) / 16;
    long a = 16 * (blocks * k / SAMPLER_PARTS), b = 16 * (blocks * (k + 1) / SAMPLER_PARTS);
    *lo = (int)(a < n ? a : n);
    *hi = (int)(b < n ? b : n);
}

void sampler_parts_of(int t, int threads, int *k0, int *k1) {
    *k0 = t * SAMPLER_PARTS / threads;
    *k1 = (t + 1) * SAMPLER_PARTS / threads;
}

/* What the caller hands the waiting threads: the next pass, or the end (pass NULL). */
struct split_order {
    sampler_pass pass;
    void *ctx;
};

/* The calling thread's run: its order and team size (NULL outside a run). */
static _Thread_local struct {
    struct split_order *order;
    int threads;
} self;

int sampler_split_threads(int n, int threads) {
    if (n < SAMPLER_SPLIT_MIN || kernel_team_shares()) return 1;
    int t = threads, procs = kernel_team_procs();
    if (t > procs) t = procs; /* the team's barrier spins: a processor for each thread (as decode's team) */
    return t < 1 ? 1 : t > SAMPLER_PARTS ? SAMPLER_PARTS : t;
}

void sampler_split_run(int n, int run_threads, void (*body)(void *ctx), void *ctx) {
    int threads = sampler_split_threads(n, run_threads);
    if (threads <= 1) { /* inside a run already (its passes keep going to its team), or one thread */
        body(ctx);
        return;
    }
    struct kernel_team team;
    kernel_team_init(&team);
    struct split_order order = {NULL, NULL};
#pragma omp parallel num_threads(threads)
    {
        kernel_team_join(&team);
        if (kernel_team_thread() == 0) {
            self.order = &order;
            self.threads = kernel_team_size();
            body(ctx);
            self.order = NULL;
            order.pass = NULL;
            kernel_team_barrier(); /* the end, to the waiting threads */
        } else {
            for (;;) {
                kernel_team_barrier(); /* the order is written before it */
                if (!order.pass) break;
                order.pass(order.ctx, kernel_team_thread(), kernel_team_size());
                kernel_team_barrier(); /* this share is done */
            }
        }
        kernel_team_leave();
    }
}

void sampler_phase(sampler_pass pass, void *ctx) {
    if (!self.order) {
        pass(ctx, 0, 1);
        return;
    }
    self.order->pass = pass;
    self.order->ctx = ctx;
    kernel_team_barrier();
    pass(ctx, 0, self.threads);
    kernel_team_barrier();
}
