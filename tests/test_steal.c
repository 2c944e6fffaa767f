/* Steal time (roofline/steal.h) and the causes of a disturbed repetition (roofline/rep_counts.h): the parser
 * on captured /proc/stat text, a stat file whose steal grows between two reads, repetitions marked "steal"
 * exactly when the steal they saw exceeds the share of wall x CPUs, and the cause words samples.csv uses. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roofline/rep_counts.h"
#include "roofline/steal.h"

static const char stat_text[] = "cpu  61509 0 12105 36211 316 0 45 395 0 0\n"
                                "cpu0 30000 0 6000 18000 150 0 20 200 0 0\n"
                                "cpu1 31509 0 6105 18211 166 0 25 195 0 0\n"
                                "intr 1 2 3 4\nctxt 12345\n";

Test(steal, parses_the_cpu_line_and_counts_cpus) {
    unsigned long long ticks = 0;
    int cpus = 0;
    cr_assert_eq(steal_parse(stat_text, &ticks, &cpus), 0);
    cr_expect_eq(ticks, 395);
    cr_expect_eq(cpus, 2);
    cr_expect_eq(steal_parse("cpu  1 2 3 4\n", &ticks, &cpus), -1, "no steal field: an old kernel");
    cr_expect_eq(steal_parse("intr 1 2\n", &ticks, &cpus), -1);
    cr_expect_eq(steal_parse("", &ticks, &cpus), -1);
}

/* A stat file of this test's own: "cpu" line with the given steal ticks, over two CPUs. */
static void write_stat(const char *path, unsigned long long steal) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "cpu  100 0 100 100 0 0 0 %llu 0 0\ncpu0 1 0 1 1 0 0 0 0 0 0\ncpu1 1 0 1 1 0 0 0 0 0 0\n",
            steal);
    fclose(f);
}

Test(steal, reads_the_growth_between_two_reads) {
    char path[] = "/tmp/fr-stat-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    write_stat(path, 1000);
    struct steal_clock s;
    struct fr_err err = {{0}};
    cr_assert_eq(steal_open(&s, path, &err), 0, "%s", err.msg);
    double a, b;
    cr_assert_eq(steal_read_s(&s, &a, &err), 0, "%s", err.msg);
    write_stat(path, 1250);
    cr_assert_eq(steal_read_s(&s, &b, &err), 0, "%s", err.msg);
    cr_expect_float_eq(b - a, 250 * s.tick_s, 1e-9);
    cr_expect_eq(s.cpus, 2);
    steal_close(&s);
    unlink(path);
    cr_expect_neq(steal_open(&s, "/nonexistent/stat", &err), 0);
    cr_expect(strstr(err.msg, "cannot open /nonexistent/stat"), "%s", err.msg);
}

Test(steal, proc_stat_is_read_where_linux_has_it) {
    struct steal_clock s;
    struct fr_err err = {{0}};
    if (access("/proc/stat", R_OK) != 0) cr_skip_test("no /proc/stat on this machine");
    cr_assert_eq(steal_open(&s, NULL, &err), 0, "%s", err.msg);
    double a, b;
    cr_expect_eq(steal_read_s(&s, &a, &err), 0);
    cr_expect_eq(steal_read_s(&s, &b, &err), 0);
    cr_expect(b >= a && a >= 0, "steal never runs backwards: %.3f then %.3f", a, b);
    cr_expect_geq(s.cpus, 1);
    steal_close(&s);
}

/* Three repetitions of 0.1 s on two CPUs (0.2 CPU-s): 1 tick of steal in the second (0.01 s at 100 Hz = 5 %),
 * none in the others; the first also faults. Only the second is disturbed, with cause "steal". */
Test(steal, marks_the_repetitions_that_lost_time_to_the_host) {
    char path[] = "/tmp/fr-stat-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    write_stat(path, 500);
    struct steal_clock s;
    struct fr_err err = {{0}};
    cr_assert_eq(steal_open(&s, path, &err), 0, "%s", err.msg);
    struct rep_counts rc;
    cr_assert_eq(rep_counts_init(&rc, NULL, NULL, 8, &err), 0, "%s", err.msg);
    rc.steal = &s;
    unsigned long long ticks_per_rep[3] = {0, (unsigned long long)(0.01 / s.tick_s + 0.5), 0};
    unsigned long long now = 500;
    for (int rep = 0; rep < 3; rep++) {
        rc.hooks.begin(rc.hooks.ctx, rep);
        now += ticks_per_rep[rep];
        write_stat(path, now);
        bool disturbed = rc.hooks.end(rc.hooks.ctx, rep, 0.1);
        cr_expect_eq(disturbed, rep == 1, "rep %d", rep);
    }
    cr_expect_eq(rc.cause[0], 0u);
    cr_expect_eq(rc.cause[1], (unsigned)REP_CAUSE_STEAL);
    cr_expect(rc.steal_s[1] > 0.009 && rc.steal_s[1] < 0.011, "%.4f", rc.steal_s[1]);
    struct rep_counts_summary sum;
    rep_counts_summarize(&rc, &sum);
    cr_expect_eq(sum.steal_reps, 1);
    cr_expect_eq(sum.disturbed_reps, 1);
    cr_expect(fabs(sum.steal_s - rc.steal_s[1] / 3) < 1e-12, "mean steal per repetition %.5f", sum.steal_s);
    /* a threshold above the share (5 %) leaves it clean */
    rep_counts_reset(&rc);
    rc.steal_share = 0.06;
    rc.hooks.begin(rc.hooks.ctx, 0);
    write_stat(path, now += ticks_per_rep[1]);
    cr_expect_not(rc.hooks.end(rc.hooks.ctx, 0, 0.1));
    rep_counts_free(&rc);
    steal_close(&s);
    unlink(path);
}

Test(steal, without_a_clock_nothing_is_read) {
    struct rep_counts rc;
    struct fr_err err = {{0}};
    cr_assert_eq(rep_counts_init(&rc, NULL, NULL, 2, &err), 0);
    rc.hooks.begin(rc.hooks.ctx, 0);
    cr_expect_not(rc.hooks.end(rc.hooks.ctx, 0, 0.1));
    struct rep_counts_summary sum;
    rep_counts_summarize(&rc, &sum);
    cr_expect(isnan(sum.steal_s));
    cr_expect_eq(sum.steal_reps, 0);
    rep_counts_free(&rc);
}

Test(steal, cause_words) {
    char buf[64];
    rep_counts_cause_text(0, buf, sizeof buf);
    cr_expect_str_eq(buf, "");
    rep_counts_cause_text(REP_CAUSE_STEAL, buf, sizeof buf);
    cr_expect_str_eq(buf, "steal");
    rep_counts_cause_text(REP_CAUSE_PREEMPTED | REP_CAUSE_STEAL | REP_CAUSE_FAULTED, buf, sizeof buf);
    cr_expect_str_eq(buf, "preempted+steal+faulted");
    rep_counts_cause_text(REP_CAUSE_MIGRATED | REP_CAUSE_PREEMPTED, buf, sizeof buf);
    cr_expect_str_eq(buf, "preempted+migrated");
    char small[6];
    rep_counts_cause_text(REP_CAUSE_PREEMPTED | REP_CAUSE_MIGRATED, small, sizeof small);
    cr_expect_eq(strlen(small), 5, "cut, never overflowed");
}
