/* Run folders for the history tests: the report fixture's run.json (tests/report_fixture.h) with its own UTC
 * stamp and commit, and optionally a samples.csv (the schema of HELPERS' contract) whose repetitions the
 * test knows: rep k of a row is its median x (1 + (k - 2) / 100), rep 1 of each step disturbed. */
#ifndef FR_TEST_HISTORY_FIXTURE_H
#define FR_TEST_HISTORY_FIXTURE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include <sys/types.h>
#include <unistd.h>

#include "bench/history/history.h"
#include "tests/report_fixture.h"

#define HF_REPS 5

static char hf_utc[32], hf_commit[48];
static void hf_tweak(struct run_report *r) {
    snprintf(r->prov.utc_stamp, sizeof r->prov.utc_stamp, "%s", hf_utc);
    snprintf(r->prov.git_commit, sizeof r->prov.git_commit, "%s", hf_commit);
    snprintf(r->prov.kernel, sizeof r->prov.kernel, "Linux 6.1.0-test");
}

static inline double hf_rep_time(double median, int k) {
    return median * (1 + (k - 2) / 100.0);
}

/* <parent>/<name>/ with run.json (times x slow) and, with samples, samples.csv for the steps, the blocks
 * and the top_p fast rows on flat logits. */
static inline void hf_write_run(const char *parent, const char *name, double slow, const char *utc,
                                const char *commit, bool samples) {
    snprintf(hf_utc, sizeof hf_utc, "%s", utc);
    snprintf(hf_commit, sizeof hf_commit, "%s", commit);
    report_fixture_write_run(parent, name, slow, hf_tweak);
    if (!samples) return;
    struct run_report *r = calloc(1, sizeof *r);
    report_fixture_fill(r, slow);
    char path[1200];
    snprintf(path, sizeof path, "%s/%s/samples.csv", parent, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("# forge-roofline-samples/1\nrow,rep,time_s,paired_read_gbs,disturbed,cause,threads,mono_ns\n", f);
    long long mono = 1000;
    for (int i = 0; i < r->n_steps; i++)
        for (int k = 0; k < HF_REPS; k++)
            fprintf(f, "step@%ld,%d,%.17g,%.17g,%d,%s,2,%lld\n", r->steps[i].context, k,
                    hf_rep_time(r->steps[i].measured.median_s, k), 30.0 + k, k == 1,
                    k == 1 ? "preempted" : "", mono += 1000);
    for (int i = 0; i < r->n_blocks; i++)
        for (int k = 0; k < HF_REPS; k++)
            fprintf(f, "block:%s@%ld,%d,%.17g,,0,,2,%lld\n", r->blocks[i].name, r->blocks_context, k,
                    hf_rep_time(r->blocks[i].measured.median_s, k), mono += 1000);
    for (int i = 0; i < r->n_sampler; i++)
        if (strcmp(r->sampler[i].variant, "topp_fast") == 0 && strcmp(r->sampler[i].row_kind, "flat") == 0)
            for (int k = 0; k < HF_REPS; k++)
                fprintf(f, "sampler:topp_fast.flat@%ld,%d,%.17g,,0,,1,%lld\n", r->sampler[i].vocab, k,
                        hf_rep_time(r->sampler[i].measured.median_s, k), mono += 1000);
    cr_assert_eq(fclose(f), 0);
    free(r);
}

/* A writer process: opens the store `where` and appends <tmp>/run<i> for i = first, first + step, ... below
 * end. It exits 0 when every run landed as new, 1 when one did not, 2 when the store would not open. */
static inline pid_t hf_spawn_writer(const char *where, const char *tmp, int first, int step, int end) {
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid != 0) return pid;
    struct history_store *s = NULL;
    struct history_open_opts o = {.write = true};
    struct fr_err err = {{0}};
    if (history_open(where, &o, &s, &err) != 0) _exit(2);
    for (int i = first; i < end; i += step) {
        char dir[400];
        snprintf(dir, sizeof dir, "%s/run%d", tmp, i);
        struct history_append_result res;
        if (history_append_run(s, dir, NULL, &res, &err) != 0 || res.duplicate) _exit(1);
    }
    history_close(s);
    _exit(0);
}

#endif
