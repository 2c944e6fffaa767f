/* The compare's verdicts from raw samples (bench/report/compare_verdict.h) on synthetic sides: log-normal
 * times drawn with the project's counter-based generator, so every case is seeded and repeatable.
 *   - B 5 % slower on every step: the steps are called slower, headline rows come first;
 *   - A against itself (other draws): no row is called faster or slower;
 *   - B's times 25 % longer while its paired reads ran 20 % slower: memory-bound rows are "no change" on the
 *     normalised ratio (1.25 x 0.8 = 1.0), the raw ratio shown beside them; --raw decides them slower;
 *   - times that follow the read as read^-0.75 (the read spread 25 % within each side, B's centre 20 %
 *     lower) and B 5 % slower: the fitted elasticity is near 0.75 and B/A near 1.05, where time x read
 *     would say 1.05 x 0.8^0.25 = 0.993;
 *   - too few samples for a 95 % interval: inconclusive, with the runs that would decide it;
 *   - many repetitions of one run a side, 5 % apart: inconclusive (the run is the unit: one run a side
 *     cannot show that the runs differ), with the runs that would decide it;
 *   - a run folder without samples.csv falls back to its medians, one sample per row. */
#include "tests/compare_fixture.h"
#include "tests/report_testutil.h"

/* runs runs of n samples of every step and block row of r (each run's rows as a run writes them): median x
 * scale x (1 + 1 % noise); reads read_gbs x (1 + 1 %). */
static void fill_runs(const struct run_report *r, struct compare_side *side, int runs, int n, double scale,
                      double read_gbs, uint64_t seed) {
    uint64_t ctr = 0;
    side->runs = runs;
    char key[SAMPLES_ROW_LEN];
    for (int run = 0; run < runs; run++)
        for (int i = 0; i < r->n_steps + r->n_blocks; i++) {
            bool step = i < r->n_steps;
            if (step)
                compare_key_step(r, i, key, sizeof key);
            else
                compare_key_block(r, i - r->n_steps, key, sizeof key);
            double med = step ? r->steps[i].measured.median_s : r->blocks[i - r->n_steps].measured.median_s;
            samples_begin_row(&side->samples, 0, 2, "%s", key);
            for (int k = 0; k < n; k++) {
                samples_append(&side->samples, k,
                               med * scale * (1 + 0.01 * compare_fixture_normal(seed, &ctr)), NAN, false, k);
                side->samples.s[side->samples.n - 1].paired_read_gbs =
                    read_gbs * (1 + 0.01 * compare_fixture_normal(seed, &ctr));
            }
        }
}

/* n samples a row: 5 runs of n / 5 when n >= 20, else one run */
static void fill_side(const struct run_report *r, struct compare_side *side, int n, double scale,
                      double read_gbs, uint64_t seed) {
    fill_runs(r, side, n >= 20 ? 5 : 1, n >= 20 ? n / 5 : n, scale, read_gbs, seed);
}

/* compare.md's verdict section for v, read back (the caller frees it) */
static char *verdicts_md(const struct compare_verdicts *v) {
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    FILE *md = report_file_open(dir, "v.md", NULL);
    compare_verdicts_md(md, v);
    fclose(md);
    char *text = tu_slurp(dir, "v.md");
    tu_rm_flat(dir);
    return text;
}

/* a run folder without samples.csv, dir/old, in a new temporary dir; run names dir/old + `tail` */
static void old_run(char *dir, size_t dir_len, char *run, size_t run_len, const char *tail) {
    tu_tmpdir(dir, dir_len);
    report_fixture_write_run(dir, "old", 1.0, NULL);
    snprintf(run, run_len, "%s/old%s", dir, tail);
}

Test(compare_verdict, five_percent_slower_steps_are_slower) {
    struct fixture f;
    setup(&f);
    fill_side(f.r, &f.a, 20, 1.0, 20, 1);
    fill_side(f.r, &f.b, 20, 1.05, 20, 2);
    decide(&f, false);
    cr_assert_eq(f.v->n, f.r->n_steps + f.r->n_blocks);
    int missed = 0;
    for (int i = 0; i < f.r->n_steps; i++) {
        const struct compare_row_verdict *w = &f.v->rows[i];
        cr_expect(w->headline && strncmp(w->key, "step@", 5) == 0, "headline rows first: %s", w->key);
        cr_expect(w->on_norm, "a step rests on the normalised ratio");
        cr_expect_eq(w->verdict, STATS_SLOWER, "%s: %.4f [%.4f, %.4f] p %.3g", w->key, w->norm, w->norm_lo,
                     w->norm_hi, w->p_adj);
        missed += !(w->norm_lo < 1.05 && w->norm_hi > 1.05);
    }
    cr_expect_leq(missed, 1, "95 %% intervals: at most one of five misses 1.05 here, %d did", missed);
    cr_expect_eq(compare_verdicts_slower_headlines(f.v), f.r->n_steps);
    cr_expect_not(f.v->rows[f.r->n_steps].headline, "blocks after the steps");
    teardown(&f);
}

Test(compare_verdict, a_against_itself_is_never_faster_or_slower) {
    struct fixture f;
    setup(&f);
    fill_side(f.r, &f.a, 20, 1.0, 20, 3);
    fill_side(f.r, &f.b, 20, 1.0, 20, 4);
    decide(&f, false);
    for (int i = 0; i < f.v->n; i++)
        cr_expect(f.v->rows[i].verdict == STATS_NO_CHANGE || f.v->rows[i].verdict == STATS_INCONCLUSIVE,
                  "%s: %s", f.v->rows[i].key, stats_verdict_name(f.v->rows[i].verdict));
    cr_expect_eq(compare_verdicts_slower_headlines(f.v), 0);
    teardown(&f);
}

Test(compare_verdict, the_paired_read_cancels_a_busier_machine) {
    struct fixture f;
    setup(&f);
    fill_side(f.r, &f.a, 20, 1.0, 20, 5);
    fill_side(f.r, &f.b, 20, 1.25, 16, 6);
    decide(&f, false);
    const struct compare_row_verdict *step = compare_verdicts_find(f.v, "step@1024");
    const struct compare_row_verdict *rope = compare_verdicts_find(f.v, "block:rope@1024");
    const struct compare_row_verdict *qkv = compare_verdicts_find(f.v, "block:qkv_proj@1024");
    cr_assert(step && rope && qkv);
    cr_expect_eq(step->verdict, STATS_NO_CHANGE, "normalised %.4f [%.4f, %.4f]", step->norm, step->norm_lo,
                 step->norm_hi);
    cr_expect(fabs(step->raw - 1.25) < 0.02, "the raw ratio is shown beside it: %f", step->raw);
    cr_expect_eq(qkv->verdict, STATS_NO_CHANGE);
    cr_expect(!rope->memory_bound && !rope->on_norm && rope->verdict == STATS_SLOWER,
              "a block that is not memory-bound is judged raw");
    decide(&f, true); /* --raw */
    step = compare_verdicts_find(f.v, "step@1024");
    cr_expect(!step->on_norm && step->verdict == STATS_SLOWER);
    teardown(&f);
}

/* 5 runs of 8 samples of every step row: the read centre x exp(0.25 N), the time median x scale x
 * (read / 50 GB/s)^-0.75 x (1 + 1 % noise) */
static void fill_elastic(const struct run_report *r, struct compare_side *side, double scale, double centre,
                         uint64_t seed) {
    uint64_t ctr = 0;
    side->runs = 5;
    char key[SAMPLES_ROW_LEN];
    for (int run = 0; run < 5; run++)
        for (int i = 0; i < r->n_steps; i++) {
            compare_key_step(r, i, key, sizeof key);
            samples_begin_row(&side->samples, 0, 2, "%s", key);
            for (int k = 0; k < 8; k++) {
                double g = centre * exp(0.25 * compare_fixture_normal(seed, &ctr));
                double t = r->steps[i].measured.median_s * scale * pow(g / 50, -0.75) *
                           (1 + 0.01 * compare_fixture_normal(seed, &ctr));
                samples_append(&side->samples, k, t, NAN, false, k);
                side->samples.s[side->samples.n - 1].paired_read_gbs = g;
            }
        }
}

Test(compare_verdict, the_read_elasticity_is_fitted_within_the_sides) {
    struct fixture f;
    setup(&f);
    fill_elastic(f.r, &f.a, 1.0, 50, 11);
    fill_elastic(f.r, &f.b, 1.05, 40, 12);
    decide(&f, false);
    for (int i = 0; i < f.r->n_steps; i++) {
        const struct compare_row_verdict *w = &f.v->rows[i];
        cr_expect(w->on_norm && w->beta > 0.65 && w->beta < 0.85, "%s: beta %.3f", w->key, w->beta);
        cr_expect(fabs(w->norm / 1.05 - 1) < 0.02, "%s: normalised %.4f [%.4f, %.4f]", w->key, w->norm,
                  w->norm_lo, w->norm_hi);
        cr_expect_eq(w->verdict, STATS_SLOWER, "%s", w->key);
    }
    teardown(&f);
}

Test(compare_verdict, too_few_samples_are_inconclusive_with_the_runs_needed) {
    struct fixture f;
    setup(&f);
    fill_side(f.r, &f.a, 3, 1.0, 20, 7);
    fill_side(f.r, &f.b, 3, 1.5, 20, 8);
    decide(&f, false);
    const struct compare_row_verdict *w = &f.v->rows[0];
    cr_expect_eq(w->verdict, STATS_INCONCLUSIVE, "3 and 3 samples reach a 90 %% interval at best");
    cr_expect(w->more_runs >= 1 && isfinite(w->more_runs), "more runs: %f", w->more_runs);
    char *text = verdicts_md(f.v);
    cr_expect(strstr(text, "| **step@1** | 3 | 3 |") && strstr(text, "more run"), "%s", text);
    free(text);
    teardown(&f);
}

Test(compare_verdict, a_run_without_samples_falls_back_to_its_medians) {
    struct fixture f;
    setup(&f);
    char dir[256], run[300];
    old_run(dir, sizeof dir, run, sizeof run, "/run.json");
    struct fr_err err = {{0}};
    cr_assert_eq(compare_side_add(&f.a, run, f.r, &err), 0, "%s", err.msg);
    cr_expect_eq(f.a.runs, 1);
    cr_expect_eq(f.a.runs_without_samples, 1);
    int idx[4];
    cr_expect_eq(samples_find_row(&f.a.samples, "step@1024", idx, 4), 1, "one sample: the median");
    cr_expect_eq(f.a.samples.s[idx[0]].time_s, f.r->steps[2].measured.median_s);
    /* a malformed samples.csv is refused, in one line */
    snprintf(run, sizeof run, "%s/old/samples.csv", dir);
    FILE *bad = fopen(run, "w");
    fputs("# forge-roofline-samples/1\nrow\n", bad);
    fclose(bad);
    snprintf(run, sizeof run, "%s/old", dir);
    cr_expect_eq(compare_side_add(&f.b, run, f.r, &err), -1);
    cr_expect(strstr(err.msg, "samples.csv:2: header") && !strchr(err.msg, '\n'), "%s", err.msg);
    tu_rm_flat(dir);
    snprintf(run, sizeof run, "%s/old", dir);
    teardown(&f);
}

Test(compare_verdict, one_run_a_side_decides_no_faster_or_slower) {
    struct fixture f;
    setup(&f);
    fill_runs(f.r, &f.a, 1, 40, 1.0, 20, 9);
    fill_runs(f.r, &f.b, 1, 40, 1.05, 20, 10);
    decide(&f, false);
    const struct compare_row_verdict *w = compare_verdicts_find(f.v, "step@1024");
    cr_assert(w);
    cr_expect(w->norm_lo > 1.02, "the repetitions alone would say slower: [%f, %f]", w->norm_lo, w->norm_hi);
    cr_expect_eq(w->verdict, STATS_INCONCLUSIVE, "one run a side: %s", stats_verdict_name(w->verdict));
    cr_expect_eq(w->runs_a, 1);
    cr_expect(w->more_runs >= 3, "at least 4 runs a side: %f more", w->more_runs);
    teardown(&f);
}

/* Rounds of one run a side, as compare-commits.sh makes them: round i's runs start 14 s apart, A first on
 * even rounds and B first on odd ones (A B B A ...), 40 s after the round before (when `rounds_in_time` is
 * false, all of A's runs come first). Each round's machine state scales both of its runs' steps by
 * exp(0.05 N) (the drift they share), each run its own exp(0.004 N); 3 repetitions a run, no paired read;
 * B's times x scale. */
static void fill_rounds(const struct run_report *r, struct compare_side *a, struct compare_side *b,
                        int rounds, double scale, bool rounds_in_time, uint64_t seed) {
    uint64_t ctr = 0;
    char key[SAMPLES_ROW_LEN];
    for (int round = 0; round < rounds; round++) {
        double state = exp(0.05 * compare_fixture_normal(seed, &ctr));
        for (int s = 0; s < 2; s++) {
            struct compare_side *side = s ? b : a;
            long long start = 1800000000LL + (rounds_in_time ? 40 * round + 14 * (s ^ (round & 1))
                                                             : 40 * (s * rounds + round));
            cr_assert_eq(compare_side_begin_run(side, start), 0);
            double run = state * exp(0.004 * compare_fixture_normal(seed, &ctr)) * (s ? scale : 1);
            for (int i = 0; i < r->n_steps; i++) {
                compare_key_step(r, i, key, sizeof key);
                samples_begin_row(&side->samples, 0, 2, "%s", key);
                for (int k = 0; k < 3; k++)
                    samples_append(&side->samples, k, r->steps[i].measured.median_s * run, NAN, false,
                                   (double)start + k);
            }
        }
    }
}

Test(compare_verdict, runs_made_in_rounds_pair_with_their_round) {
    struct fixture f;
    setup(&f);
    fill_rounds(f.r, &f.a, &f.b, 6, 1.03, true, 21);
    decide(&f, false);
    cr_expect_eq(f.v->pairs, 6, "%s", f.v->pairing);
    const struct compare_row_verdict *w = compare_verdicts_find(f.v, "step@1024");
    cr_assert(w);
    cr_expect_eq(w->run_pairs, 6);
    /* paired with the right run, every round's difference is 3 % +- 0.6 %; the shared drift (5 %) hides it
     * from the unpaired test on the runs' medians */
    cr_expect_lt(w->p_pair_t, 0.001, "paired t %g", w->p_pair_t);
    cr_expect(fabs(w->p_pair_wsr - 2.0 / 64) < 1e-12, "6 positive differences: %g", w->p_pair_wsr);
    cr_expect_gt(w->p_runs, 0.01, "unpaired %g", w->p_runs);
    char dir[256];
    tu_tmpdir(dir, sizeof dir);
    struct fr_err err = {{0}};
    cr_assert_eq(compare_verdicts_csv_write(f.v, dir, &err), 0, "%s", err.msg);
    char *csv = tu_slurp(dir, "compare_verdicts.csv"), *text = verdicts_md(f.v);
    cr_expect(strstr(csv, ",p_runs,run_pairs,p_pair_t,p_pair_wsr,lockstep\n"), "%s", csv);
    cr_expect(strstr(text, "6 rounds of one run each"), "%s", text);
    free(csv);
    free(text);
    tu_rm_flat(dir);
    teardown(&f);
}

Test(compare_verdict, runs_not_made_in_rounds_are_not_paired) {
    struct fixture f;
    setup(&f);
    fill_rounds(f.r, &f.a, &f.b, 4, 1.03, false, 22);
    decide(&f, false);
    cr_expect_eq(f.v->pairs, 0);
    cr_expect(strstr(f.v->pairing, "not made in rounds: in time order, runs 1 and 2 are both A's"), "%s",
              f.v->pairing);
    const struct compare_row_verdict *w = compare_verdicts_find(f.v, "step@1024");
    cr_expect(w && w->run_pairs == 0 && isnan(w->p_pair_t) && w->p_runs < 1);
    char *text = verdicts_md(f.v);
    cr_expect(strstr(text, "the runs do not pair (they were not made in rounds"), "%s", text);
    free(text);
    teardown(&f);

    setup(&f); /* one run more on A's side */
    fill_rounds(f.r, &f.a, &f.b, 4, 1.03, true, 23);
    compare_side_begin_run(&f.a, 1800009000LL);
    decide(&f, false);
    cr_expect_eq(f.v->pairs, 0);
    cr_expect_str_eq(f.v->pairing, "A has 5 runs and B 4");
    teardown(&f);

    setup(&f); /* rounds whose two runs carry the same second and no samples to order them */
    fill_rounds(f.r, &f.a, &f.b, 2, 1.03, true, 24);
    compare_side_begin_run(&f.a, 1800009000LL);
    compare_side_begin_run(&f.b, 1800009000LL);
    decide(&f, false);
    cr_expect_eq(f.v->pairs, 0);
    cr_expect(strstr(f.v->pairing, "same second"), "%s", f.v->pairing);
    teardown(&f);
}

Test(compare_verdict, a_runs_start_is_its_utc_stamp) {
    struct fixture f;
    setup(&f);
    char dir[256], run[300];
    old_run(dir, sizeof dir, run, sizeof run, "");
    struct fr_err err = {{0}};
    const char *stamps[] = {"20261129T173000Z", "20261129T180000Z", "20261130T000001Z", "17:30 today"};
    for (int i = 0; i < 4; i++) {
        snprintf(f.r->prov.utc_stamp, sizeof f.r->prov.utc_stamp, "%s", stamps[i]);
        cr_assert_eq(compare_side_add(&f.a, run, f.r, &err), 0, "%s", err.msg);
    }
    cr_expect_eq(f.a.runs, 4);
    cr_expect_eq(f.a.marked, 4);
    cr_expect_eq(f.a.run[1].utc_s - f.a.run[0].utc_s, 1800);
    cr_expect_eq(f.a.run[2].utc_s - f.a.run[0].utc_s, 6 * 3600 + 30 * 60 + 1);
    cr_expect_eq(f.a.run[3].utc_s, -1, "a stamp that does not parse is unknown");
    cr_expect_eq(f.a.run[1].first, 1 * (f.a.samples.n / 4), "each run's samples begin where the last's end");
    tu_rm_flat(dir);
    teardown(&f);
}

/* A row whose samples on one side are all disturbed (none clean, so all kept) is inconclusive whatever its
 * ratio, and says why; a 30 % slower step otherwise decided slower. */
Test(compare_verdict, rows_resting_on_disturbed_repetitions_are_inconclusive) {
    struct fixture f;
    setup(&f);
    fill_side(f.r, &f.a, 20, 1.0, 20, 5);
    fill_side(f.r, &f.b, 20, 1.3, 20, 6);
    char key[SAMPLES_ROW_LEN];
    compare_key_step(f.r, 0, key, sizeof key);
    int marked = 0;
    for (int i = 0; i < f.b.samples.n; i++)
        if (strcmp(f.b.samples.s[i].row, key) == 0) f.b.samples.s[i].disturbed = true, marked++;
    cr_assert_eq(marked, 20);
    decide(&f, false);
    const struct compare_row_verdict *w = &f.v->rows[0], *other = &f.v->rows[1];
    cr_assert_str_eq(w->key, key);
    cr_expect_eq(w->disturbed_b, 20);
    cr_expect_eq(w->verdict, STATS_INCONCLUSIVE, "%s: %s", w->key, stats_verdict_name(w->verdict));
    cr_expect_eq(other->verdict, STATS_SLOWER, "%s: %s", other->key, stats_verdict_name(other->verdict));
    char *md = verdicts_md(f.v);
    cr_expect(strstr(md, "inconclusive (disturbed repetitions kept, too few clean: 0 in A, 20 in B)") != NULL,
              "%s", md);
    free(md);
    teardown(&f);
}
