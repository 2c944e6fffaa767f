/* Rows timed in lockstep (bench/report/compare_lockstep.h), on synthetic rounds whose repetitions of A and
 * B alternate in the monotonic clock: every pair shares a memory state that moves 30 % from pair to pair
 * (the flips of the shared VMs), each run keeps its own offset (its page placement, 0.4 %), and B's times
 * are `scale` x A's with 0.5 % of noise a repetition.
 *   - B 3 % slower over 6 rounds: the steps are judged in lockstep and called slower, B/A within 1 % of
 *     1.03, although the pairs' shared state moves 30 %;
 *   - A against itself: in lockstep, never faster or slower;
 *   - the repetitions of a round not alternating, or not as many on both sides: not lockstep;
 *   - a disturbed pair (B's repetition 3x slow) is left out of its round. */
#include <string.h>

#include "tests/compare_fixture.h"
#include "tests/report_testutil.h"

enum layout { ALTERNATE, A_THEN_B, B_SHORT };

/* rounds rounds of n pairs of every step row: round r starts 60 s after the one before, A's run first in
 * even rounds; within a round the two runs' repetitions alternate 20 ms apart (layout ALTERNATE), or all of
 * A's come first (A_THEN_B), or B has one repetition fewer (B_SHORT). */
static void fill_lockstep(const struct run_report *r, struct compare_side *a, struct compare_side *b,
                          int rounds, int n, double scale, enum layout how, uint64_t seed) {
    uint64_t ctr = 0;
    char key[SAMPLES_ROW_LEN];
    for (int round = 0; round < rounds; round++) {
        double t0 = 1800000000.0 + 60 * round, place[2];
        for (int s = 0; s < 2; s++) place[s] = exp(0.004 * compare_fixture_normal(seed, &ctr));
        bool a_first = round % 2 == 0;
        for (int s = 0; s < 2; s++) {
            struct compare_side *side = s ? b : a;
            cr_assert_eq(compare_side_begin_run(side, (long long)t0 + (a_first ? s : !s)), 0);
        }
        for (int i = 0; i < r->n_steps; i++) {
            compare_key_step(r, i, key, sizeof key);
            double base = r->steps[i].measured.median_s;
            /* every side's row is written into its own set; the pairs' times are drawn together */
            for (int s = 0; s < 2; s++) samples_begin_row(s ? &b->samples : &a->samples, 0, 2, "%s", key);
            for (int k = 0; k < n; k++) {
                double state = exp(0.3 * compare_fixture_normal(seed, &ctr));
                for (int s = 0; s < 2; s++) {
                    if (how == B_SHORT && s == 1 && k == n - 1) continue;
                    bool first_side = (s == 0) == a_first;
                    double start = t0 + 2 + i + 0.04 * k + (first_side ? 0 : 0.02);
                    if (how == A_THEN_B) start = t0 + 2 + i + (s ? 0.5 : 0) + 0.02 * k;
                    double t = base * state * place[s] * (s ? scale : 1) *
                               exp(0.005 * compare_fixture_normal(seed, &ctr));
                    samples_append(s ? &b->samples : &a->samples, k, t, NAN, false, start);
                }
            }
        }
    }
}

Test(compare_lockstep, three_percent_slower_in_lockstep_is_slower) {
    struct fixture f;
    setup(&f);
    fill_lockstep(f.r, &f.a, &f.b, 6, 20, 1.03, ALTERNATE, 41);
    decide(&f, false);
    cr_expect_eq(f.v->pairs, 6, "%s", f.v->pairing);
    cr_expect_eq(f.v->lockstep_rows, f.r->n_steps);
    for (int i = 0; i < f.r->n_steps; i++) {
        char key[SAMPLES_ROW_LEN];
        compare_key_step(f.r, i, key, sizeof key);
        const struct compare_row_verdict *w = compare_verdicts_find(f.v, key);
        cr_assert(w, "%s", key);
        cr_expect(w->lockstep && !w->on_norm && w->run_pairs == 6, "%s", key);
        cr_expect(fabs(w->raw - 1.03) < 0.01, "%s: B/A %.4f", key, w->raw);
        cr_expect(w->raw_lo < w->raw && w->raw < w->raw_hi && w->raw_lo > 1, "%s: [%.4f, %.4f]", key,
                  w->raw_lo, w->raw_hi);
        cr_expect_eq(w->verdict, STATS_SLOWER, "%s: %s", key, stats_verdict_name(w->verdict));
        cr_expect_eq(w->p_runs, w->p, "the round is the unit of both tests");
    }
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    struct fr_err err = {{0}};
    cr_assert_eq(compare_verdicts_csv_write(f.v, dir, &err), 0, "%s", err.msg);
    char *csv = tu_slurp(dir, "compare_verdicts.csv");
    cr_expect(strstr(csv, ",p_pair_wsr,lockstep\n"), "%s", csv);
    cr_expect(strstr(csv, ",slower,") && strstr(csv, ",6,"), "%s", csv);
    FILE *md = report_file_open(dir, "v.md", NULL);
    cr_assert(md);
    compare_verdicts_md(md, f.v);
    fclose(md);
    char *text = tu_slurp(dir, "v.md");
    cr_expect(strstr(text, "**Lockstep:**") && strstr(text, "⇄"), "%s", text);
    free(text);
    free(csv);
    tu_rm_flat(dir);
    teardown(&f);
}

Test(compare_lockstep, a_against_itself_in_lockstep_is_never_faster_or_slower) {
    for (uint64_t seed = 50; seed < 60; seed++) {
        struct fixture f;
        setup(&f);
        fill_lockstep(f.r, &f.a, &f.b, 4, 20, 1.0, ALTERNATE, seed);
        decide(&f, false);
        cr_expect_eq(f.v->lockstep_rows, f.r->n_steps);
        for (int i = 0; i < f.v->n; i++)
            cr_expect(f.v->rows[i].verdict != STATS_FASTER && f.v->rows[i].verdict != STATS_SLOWER,
                      "seed %llu %s: %s %.4f", (unsigned long long)seed, f.v->rows[i].key,
                      stats_verdict_name(f.v->rows[i].verdict), f.v->rows[i].raw);
        teardown(&f);
    }
}

Test(compare_lockstep, rounds_that_do_not_alternate_are_not_lockstep) {
    struct fixture f;
    setup(&f);
    fill_lockstep(f.r, &f.a, &f.b, 4, 10, 1.03, A_THEN_B, 43);
    decide(&f, false);
    cr_expect_eq(f.v->pairs, 4, "%s", f.v->pairing);
    cr_expect_eq(f.v->lockstep_rows, 0);
    teardown(&f);

    setup(&f);
    fill_lockstep(f.r, &f.a, &f.b, 4, 10, 1.03, B_SHORT, 44);
    decide(&f, false);
    cr_expect_eq(f.v->lockstep_rows, 0);
    teardown(&f);
}

Test(compare_lockstep, a_disturbed_pair_is_left_out_of_its_round) {
    struct fixture f;
    setup(&f);
    fill_lockstep(f.r, &f.a, &f.b, 3, 8, 1.0, ALTERNATE, 45);
    /* B's last repetition of every row three times slow, and marked disturbed */
    for (int i = 0; i < f.b.samples.n; i++)
        if (f.b.samples.s[i].rep == 7) f.b.samples.s[i].time_s *= 3, f.b.samples.s[i].disturbed = true;
    decide(&f, false);
    const struct compare_row_verdict *w = &f.v->rows[0];
    cr_assert(w->lockstep);
    cr_expect(fabs(w->raw - 1) < 0.01, "B/A %.4f", w->raw);
    teardown(&f);
}
