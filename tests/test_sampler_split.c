/* The softmax over threads (kernels/sampler_split.h): the parts tile the row in whole 16-token blocks on any
 * team size, every pass share runs once, and the softmax and sampler_pick give the same bits on one thread
 * and on every team the machine allows, on every instruction set. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/sampler_rows.h"
#include "kernels/sampler.h"
#include "kernels/sampler_split.h"
#include "kernels/team.h"

Test(sampler_split, parts_tile_the_row_for_every_team) {
    int sizes[] = {1, 15, 16, 17, 100, 32768, 151936, 151937};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int n = sizes[si];
        for (int threads = 1; threads <= SAMPLER_PARTS; threads++) {
            int next_part = 0, next_token = 0;
            for (int t = 0; t < threads; t++) {
                int k0, k1;
                sampler_parts_of(t, threads, &k0, &k1);
                cr_expect_eq(k0, next_part, "n %d threads %d t %d", n, threads, t);
                cr_expect_gt(k1, k0, "every thread takes a part: n %d threads %d t %d", n, threads, t);
                for (int k = k0; k < k1; k++) {
                    int lo, hi;
                    sampler_part(n, k, &lo, &hi);
                    cr_expect_eq(lo, next_token, "n %d part %d", n, k);
                    cr_expect(lo % 16 == 0 && hi >= lo, "n %d part %d: [%d, %d)", n, k, lo, hi);
                    next_token = hi;
                }
                next_part = k1;
            }
            cr_expect_eq(next_part, SAMPLER_PARTS);
            cr_expect_eq(next_token, n, "n %d threads %d", n, threads);
        }
    }
}

struct share_count {
    int calls[SAMPLER_PARTS];
    int threads;
};

static void count_share(void *ctx, int t, int threads) {
    struct share_count *c = ctx;
    __atomic_add_fetch(&c->calls[t], 1, __ATOMIC_RELAXED);
    if (t == 0) c->threads = threads;
}

static void two_phases(void *ctx) {
    sampler_phase(count_share, ctx);
    sampler_phase(count_share, ctx);
}

Test(sampler_split, every_share_runs_once_a_phase) {
    struct share_count c = {{0}, 0};
    sampler_phase(count_share, &c); /* outside a run: one share, on the caller */
    cr_expect(c.calls[0] == 1 && c.threads == 1);
    for (int threads = 1; threads <= 4; threads++) {
        memset(&c, 0, sizeof c);
        sampler_split_run(SAMPLER_SPLIT_MIN, threads, two_phases, &c);
        int expect = threads < kernel_team_procs() ? threads : kernel_team_procs();
        cr_expect_eq(c.threads, expect, "asked for %d threads", threads);
        for (int t = 0; t < SAMPLER_PARTS; t++)
            cr_expect_eq(c.calls[t], t < c.threads ? 2 : 0, "threads %d share %d", threads, t);
        memset(&c, 0, sizeof c);
        sampler_split_run(SAMPLER_SPLIT_MIN - 1, threads, two_phases, &c); /* too short to split */
        cr_expect(c.threads == 1 && c.calls[0] == 2 && c.calls[1] == 0);
    }
}

Test(sampler_split, same_bits_on_every_team) {
    int sizes[] = {SAMPLER_SPLIT_MIN, 40001, 151936};
    int procs = kernel_team_procs();
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int n = sizes[si];
        float *row = malloc(sizeof(float) * (size_t)n), *one = malloc(sizeof(float) * (size_t)n);
        float *many = malloc(sizeof(float) * (size_t)n);
        uint16_t *rowh = malloc(sizeof(uint16_t) * (size_t)n);
        void *scratch = malloc(sampler_scratch_bytes(n));
        for (int kind = 0; kind < SAMPLER_ROW_KIND_COUNT; kind++) {
            sampler_rows_fill(row, n, (enum sampler_row_kind)kind, 70 + si);
            for (int i = 0; i < n; i++) rowh[i] = bf16_from_f32(row[i]);
            for (int isa = 0; isa < KERNEL_ISA_COUNT; isa++) {
                if (sampler_isa_force((enum kernel_isa)isa) != 0) continue;
                for (int dt = 0; dt < 2; dt++) {
                    const void *r = dt ? (const void *)rowh : (const void *)row;
                    enum fr_dtype type = dt ? FR_DTYPE_BF16 : FR_DTYPE_F32;
                    struct sampler_params p = {0.9f, 0.9f, 5};
                    int want[4], got;
                    cr_assert_eq(sampler_softmax(one, r, type, n, 0.9f, 1, NULL), 0);
                    for (int step = 0; step < 4; step++)
                        cr_assert_eq(
                            sampler_pick_row(r, type, n, &p, (uint64_t)step, scratch, 1, &want[step], NULL),
                            0);
                    for (int threads = 2; threads <= procs && threads <= SAMPLER_PARTS; threads++) {
                        cr_assert_eq(sampler_softmax(many, r, type, n, 0.9f, threads, NULL), 0);
                        cr_expect_eq(memcmp(one, many, sizeof(float) * (size_t)n), 0,
                                     "n %d kind %d isa %d dtype %d: %d threads == 1 bitwise", n, kind, isa,
                                     dt, threads);
                        for (int step = 0; step < 4; step++) {
                            cr_assert_eq(sampler_pick_row(r, type, n, &p, (uint64_t)step, scratch, threads,
                                                          &got, NULL),
                                         0);
                            cr_expect_eq(got, want[step], "n %d kind %d isa %d step %d, %d threads", n, kind,
                                         isa, step, threads);
                        }
                    }
                }
            }
            sampler_isa_force(KERNEL_ISA_COUNT);
        }
        free(row), free(one), free(many), free(rowh), free(scratch);
    }
}

/* A NaN or +inf in the last part (another thread's on a team) still fails the row with a message. */
Test(sampler_split, bad_value_in_any_part_fails) {
    enum { N = 151936 };
    float *row = malloc(sizeof(float) * N), *p = malloc(sizeof(float) * N);
    float bad[] = {NAN, INFINITY};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
        for (int at = 0; at < N; at += N / 7) {
            sampler_rows_fill(row, N, SAMPLER_ROW_REALISTIC, 3);
            row[N - 1 - at] = bad[b];
            struct fr_err err = {{0}};
            cr_expect_neq(sampler_softmax(p, row, FR_DTYPE_F32, N, 1.0f, kernel_team_procs(), &err), 0,
                          "bad value at %d", N - 1 - at);
            cr_expect_neq(err.msg[0], 0);
        }
    for (int i = 0; i < N; i++) row[i] = -INFINITY;
    cr_expect_neq(sampler_softmax(p, row, FR_DTYPE_F32, N, 1.0f, kernel_team_procs(), NULL), 0,
                  "every logit -inf");
    free(row), free(p);
}
