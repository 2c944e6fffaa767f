/* The kernel team (kernels/team.h): its shares hand every item out exactly once whatever the team size, one
 * share after another without a reset; its barrier makes every thread's writes visible to all; and the
 * kernels that split work over a team (matvec, attention) give inside one what they give outside. */
#include <criterion/criterion.h>

#include "kernels/team.h"
#include "tests/kernels_test_util.h"

enum { ROUNDS = 200, ITEMS_MAX = 37, TEAM_MAX = 7 };

Test(kernel_team, shares_hand_out_each_item_once) {
    for (int nt = 1; nt <= TEAM_MAX; nt += 2) {
        static int taken[ROUNDS][ITEMS_MAX];
        memset(taken, 0, sizeof taken);
        struct kernel_team team;
        kernel_team_init(&team);
#pragma omp parallel num_threads(nt)
        {
            kernel_team_join(&team);
            for (int r = 0; r < ROUNDS; r++) {
                struct kernel_share share;
                kernel_share_begin(&share, r % ITEMS_MAX); /* 0 items too */
                for (int i; (i = kernel_share_next(&share)) >= 0;)
                    __atomic_add_fetch(&taken[r][i], 1, __ATOMIC_RELAXED);
                kernel_share_end(&share);
            }
            kernel_team_leave();
        }
        int wrong = 0;
        for (int r = 0; r < ROUNDS; r++)
            for (int i = 0; i < ITEMS_MAX; i++) wrong += taken[r][i] != (i < r % ITEMS_MAX);
        cr_expect_eq(wrong, 0, "team of %d: %d items taken other than once", nt, wrong);
    }
}

/* Round r: each thread writes its slot, meets the others, then reads every slot of round r. */
Test(kernel_team, barrier_orders_writes) {
    for (int nt = 2; nt <= TEAM_MAX; nt++) {
        static int slot[TEAM_MAX];
        int bad = 0;
        struct kernel_team team;
        kernel_team_init(&team);
#pragma omp parallel num_threads(nt) reduction(+ : bad)
        {
            kernel_team_join(&team);
            cr_expect(kernel_team_active());
            int me = kernel_team_thread(), n = kernel_team_size();
            for (int r = 1; r <= ROUNDS; r++) {
                __atomic_store_n(&slot[me], r, __ATOMIC_RELAXED);
                kernel_team_barrier();
                for (int t = 0; t < n; t++) bad += __atomic_load_n(&slot[t], __ATOMIC_RELAXED) != r;
                kernel_team_barrier(); /* nobody writes round r + 1 before all have read round r */
            }
            kernel_team_leave();
            cr_expect(!kernel_team_active());
        }
        cr_expect_eq(bad, 0, "team of %d: %d stale reads", nt, bad);
    }
}

/* matvec and attention called by every thread of a kernel team: the matvec gives what its own region gives
 * (the same chunks through the same loop), bit for bit; attention is within test_kernels_attention.c's
 * tolerance of attention_ref. */
Test(kernel_team, kernels_inside_a_team) {
    struct test_rng rng = {31};
    enum { R = 1040, C = 1024, P = 900, H = 4, KV = 2, D = 64 };
    uint16_t *w = test_alloc((size_t)R * C * 2), *k = test_alloc((size_t)KV * P * D * 2),
             *v = test_alloc((size_t)KV * P * D * 2);
    float *x = test_alloc(C * 4), *y = test_alloc(R * 4), *yref = test_alloc(R * 4),
          *q = test_alloc(H * D * 4), *out = test_alloc(H * D * 4), *oref = test_alloc(H * D * 4),
          *scratch = test_alloc((size_t)H * P * 4);
    test_fill_bf16(&rng, w, (size_t)R * C, -1.0f, 1.0f);
    test_fill_bf16(&rng, k, (size_t)KV * P * D, -1.0f, 1.0f);
    test_fill_bf16(&rng, v, (size_t)KV * P * D, -1.0f, 1.0f);
    test_fill(&rng, x, C, -1.0f, 1.0f);
    test_fill(&rng, q, H * D, -1.0f, 1.0f);
    matvec(yref, w, FR_DTYPE_BF16, x, R, C, MATVEC_BACKEND_FORGE, kernel_team_procs(), NULL);
    attention_ref(oref, q, k, v, FR_DTYPE_BF16, P, (size_t)P * D, H, KV, D, scratch);
    for (int nt = 1; nt <= 5; nt += 2) {
        for (int i = 0; i < R; i++) y[i] = NAN;
        for (int i = 0; i < H * D; i++) out[i] = NAN;
        struct kernel_team team;
        kernel_team_init(&team);
#pragma omp parallel num_threads(nt)
        {
            kernel_team_join(&team);
            for (int rep = 0; rep < 3; rep++) { /* shares one after another on one ticket counter */
                matvec(y, w, FR_DTYPE_BF16, x, R, C, MATVEC_BACKEND_FORGE, kernel_team_procs(), NULL);
                attention(out, q, k, v, FR_DTYPE_BF16, P, (size_t)P * D, H, KV, D, scratch,
                          kernel_team_procs());
            }
            kernel_team_leave();
        }
        cr_expect(memcmp(y, yref, R * sizeof *y) == 0, "matvec in a kernel team of %d", nt);
        cr_expect(test_close("attention in a kernel team", out, oref, H * D, 2e-5, 1e-4, NULL), "team of %d",
                  nt);
    }
    free(w), free(k), free(v), free(x), free(y), free(yref), free(q), free(out), free(oref), free(scratch);
}

/* Where a thread is, as the team module answers it: outside any region thread 0 of 1, not in a region; in a
 * region of nt threads (a kernel team or not) each its own number below nt, and in a region only when nt > 1
 * (OpenMP counts a region of one as inactive). */
Test(kernel_team, thread_and_size_of_the_region) {
    cr_expect_eq(kernel_team_thread(), 0);
    cr_expect_eq(kernel_team_size(), 1);
    cr_expect_not(kernel_team_in_region());
    cr_expect_geq(kernel_team_procs(), 1);
    for (int nt = 1; nt <= 3; nt++)
        for (int joined = 0; joined < 2; joined++) {
            int seen[3] = {0}, bad = 0;
            struct kernel_team team;
            kernel_team_init(&team);
#pragma omp parallel num_threads(nt) reduction(+ : bad)
            {
                if (joined) kernel_team_join(&team);
                int t = kernel_team_thread();
                bad += kernel_team_size() != nt || t < 0 || t >= nt || kernel_team_in_region() != (nt > 1);
                if (t >= 0 && t < nt) __atomic_add_fetch(&seen[t], 1, __ATOMIC_RELAXED);
                if (joined) kernel_team_leave();
            }
            cr_expect_eq(bad, 0, "team of %d (%s)", nt, joined ? "joined" : "OpenMP's");
            for (int t = 0; t < nt; t++) cr_expect_eq(seen[t], 1, "thread %d of %d", t, nt);
        }
}
