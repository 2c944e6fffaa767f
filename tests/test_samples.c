/* Raw samples (roofline/samples.h): the timing harness keeps every timed repetition with its paired read,
 * samples.csv is written and read back field for field, a missing file is "none" (an older run), and every
 * malformed file is refused with its line number and nothing half read. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roofline/samples.h"
#include "roofline/timing.h"

static void busy(void *ctx, long rep) {
    (void)rep;
    volatile double *x = ctx;
    for (int i = 0; i < 1000; i++) *x += 1e-3;
}

Test(samples, the_harness_keeps_every_timed_repetition) {
    struct sample_set set = {0};
    volatile double x = 0;
    int first = samples_begin_row(&set, 4e6, 2, "block:%s@%d", "rope", 64);
    cr_expect_eq(first, 0);
    struct timing_opts o = {.warmup = 2, .min_reps = 5, .max_reps = 5, .samples = &set};
    struct timing_stats st;
    cr_assert_eq(timing_measure(busy, (void *)&x, &o, &st), 0);
    cr_assert_eq(set.n, 5, "warm-up calls are not samples");
    for (int i = 0; i < 5; i++) {
        cr_expect_str_eq(set.s[i].row, "block:rope@64");
        cr_expect_eq(set.s[i].rep, i);
        cr_expect(set.s[i].time_s >= st.min_s && set.s[i].time_s <= st.max_s);
        cr_expect(isnan(set.s[i].paired_read_gbs), "no partner: no paired read");
        cr_expect_eq(set.s[i].threads, 2);
        if (i) cr_expect_gt(set.s[i].mono_ns, set.s[i - 1].mono_ns);
    }
    /* with a partner, its time in the same repetition is the paired read: bytes / seconds */
    samples_begin_row(&set, 4e6, 2, "step@1");
    struct timing_stats sb;
    cr_assert_eq(timing_measure_pair(busy, (void *)&x, busy, (void *)&x, &o, &st, &sb, NULL), 0);
    cr_assert_eq(set.n, 10);
    for (int i = 5; i < 10; i++) cr_expect(set.s[i].paired_read_gbs > 0, "sample %d has its read", i);
    double reads[5] = {1e-3, 2e-3, 0, 4e-3, 5e-3};
    samples_set_read(&set, 5, reads, 5, 4e6);
    cr_expect_float_eq(set.s[5].paired_read_gbs, 4.0, 1e-12, "4e6 bytes in 1 ms: 4 GB/s");
    cr_expect(isnan(set.s[7].paired_read_gbs), "a read of 0 s is none");
    cr_expect_eq(samples_count_rows(&set), 2);
    samples_free(&set);
}

static char *tmp_file(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/fr-samples-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

Test(samples, written_and_read_back) {
    struct sample_set a = {0}, b = {0};
    samples_begin_row(&a, 8e9, 2, "step@1024");
    samples_append(&a, 0, 0.0125, 0.5, false, 12.5);
    samples_append(&a, 1, 0.0131, NAN, true, 12.75);
    snprintf(a.s[1].cause, sizeof a.s[1].cause, "preempted+migrated");
    samples_begin_row(&a, 0, 1, "sampler:chain_fast@151936");
    samples_append(&a, 0, 4.5e-4, NAN, false, 13);
    char *path = tmp_file("");
    struct fr_err err = {{0}};
    cr_assert_eq(samples_write_csv(&a, path, &err), 0, "%s", err.msg);
    cr_assert_eq(samples_read_csv(path, &b, &err), 0, "%s", err.msg);
    unlink(path);
    cr_assert_eq(b.n, 3);
    for (int i = 0; i < 3; i++) {
        cr_expect_str_eq(b.s[i].row, a.s[i].row);
        cr_expect_eq(b.s[i].rep, a.s[i].rep);
        cr_expect_float_eq(b.s[i].time_s, a.s[i].time_s, 1e-9 * a.s[i].time_s);
        cr_expect_eq(b.s[i].disturbed, a.s[i].disturbed);
        cr_expect_str_eq(b.s[i].cause, a.s[i].cause);
        cr_expect_eq(b.s[i].threads, a.s[i].threads);
        cr_expect_eq(b.s[i].mono_ns, a.s[i].mono_ns);
    }
    cr_expect_float_eq(b.s[0].paired_read_gbs, 16.0, 1e-4, "8e9 bytes in 0.5 s");
    cr_expect(isnan(b.s[1].paired_read_gbs) && isnan(b.s[2].paired_read_gbs));
    int idx[4];
    cr_expect_eq(samples_find_row(&b, "step@1024", idx, 4), 2);
    cr_expect_eq(samples_find_row(&b, "step@1", idx, 4), 0, "keys match exactly");
    samples_free(&a);
    samples_free(&b);
}

Test(samples, a_missing_file_is_an_older_run) {
    struct sample_set s = {0};
    struct fr_err err = {{0}};
    cr_expect_eq(samples_read_csv("/tmp/fr-no-such-dir/samples.csv", &s, &err), 1);
    cr_expect_eq(s.n, 0);
}

Test(samples, malformed_files_are_refused_with_the_line) {
    const char *good = "# forge-roofline-samples/1\n" SAMPLES_HEADER "\nstep@1,0,0.01,30,0,,2,5\n";
    const struct {
        const char *text, *want;
    } bad[] = {
        {"", "no schema line"},
        {"# forge-roofline-samples/2\n" SAMPLES_HEADER "\n", ":1: not a forge-roofline-samples/1"},
        {"# forge-roofline-samples/1\nrow,rep,time_s\n", ":2: header"},
        {"# forge-roofline-samples/1\n" SAMPLES_HEADER "\nstep@1,0,0.01,30,0,,2\n", ":3: malformed"},
        {"# forge-roofline-samples/1\n" SAMPLES_HEADER "\nstep@1,0,abc,30,0,,2,5\n", ":3: malformed"},
        {"# forge-roofline-samples/1\n" SAMPLES_HEADER "\nstep@1,0,0.01,30,2,,2,5\n", ":3: malformed"},
        {"# forge-roofline-samples/1\n" SAMPLES_HEADER "\nstep@1,0,-1,30,0,,2,5\n", ":3: malformed"},
        {"# forge-roofline-samples/1\n" SAMPLES_HEADER "\nstep@1,0,0.01,-3,0,,2,5\n", ":3: malformed"},
        {"# forge-roofline-samples/1\n" SAMPLES_HEADER "\nstep@1,0,0.01,30,0,,2,5\n,0,0.01,,0,,2,5\n",
         ":4: malformed"},
        {"# forge-roofline-samples/1\n" SAMPLES_HEADER "\nstep@1,0,0.01,30,0,,2,5,9\n", ":3: malformed"},
    };
    struct sample_set s = {0};
    struct fr_err err = {{0}};
    char *path = tmp_file(good);
    cr_expect_eq(samples_read_csv(path, &s, &err), 0, "%s", err.msg);
    cr_expect_eq(s.n, 1);
    unlink(path);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        path = tmp_file(bad[i].text);
        err.msg[0] = '\0';
        cr_expect_eq(samples_read_csv(path, &s, &err), -1, "case %zu read", i);
        cr_expect(strstr(err.msg, bad[i].want) && !strchr(err.msg, '\n'), "case %zu: '%s' lacks '%s'", i,
                  err.msg, bad[i].want);
        cr_expect_eq(s.n, 1, "case %zu: nothing half read", i);
        unlink(path);
    }
    samples_free(&s);
}
