/* End to end: `forge-roofline sample` (tokens equal sampler_pick's, --probs-out equals the fast filter,
 * fast and sort methods agree, every bad input is a one-line error with exit 2) and `forge-roofline
 * verify` (the chapter's check passes, exit status follows). Runs the sanitized CLI from
 * FORGE_ROOFLINE_BIN and, for the slower verify, the -O3 one from FORGE_ROOFLINE_FAST_BIN. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/sampler_rows.h"
#include "kernels/sampler.h"
#include "kernels/team.h"
#include "tests/report_testutil.h"

static char dir[64];

static void make_dir(void) {
    tu_tmpdir(dir, sizeof dir);
}

static void remove_dir(void) {
    tu_rm_tree(dir);
}

TestSuite(sample_cli, .init = make_dir, .fini = remove_dir);

static const char *bin(const char *env) {
    const char *b = getenv(env);
    if (!b) cr_skip_test("%s is not set (run through make test)", env);
    return b;
}

/* Runs "BIN args", stdout to out (if non-NULL, up to cap bytes), stderr to err; returns the exit status. */
static int run(const char *binary, const char *args, char *out, size_t cap, char *err, size_t errcap) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s >%s/out.txt 2>%s/err.txt", binary, args, dir, dir);
    int st = system(cmd);
    const char *names[2] = {"out.txt", "err.txt"};
    char *bufs[2] = {out, err};
    size_t caps[2] = {cap, errcap};
    for (int k = 0; k < 2; k++) {
        if (!bufs[k]) continue;
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        FILE *f = fopen(path, "rb");
        size_t got = f ? fread(bufs[k], 1, caps[k] - 1, f) : 0;
        bufs[k][got] = 0;
        if (f) fclose(f);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_file(const char *name, const void *data, size_t bytes) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, bytes, f), bytes);
    fclose(f);
}

enum { V = 5000, ROWS = 6 };

static float *logit_rows(void) {
    float *x = malloc(sizeof(float) * V * ROWS);
    for (int r = 0; r < ROWS; r++)
        sampler_rows_fill(x + r * V, V, (enum sampler_row_kind)(r % 3), 40 + (uint64_t)r);
    return x;
}

Test(sample_cli, tokens_match_sampler_pick) {
    const char *b = bin("FORGE_ROOFLINE_BIN");
    float *x = logit_rows();
    write_file("logits.f32", x, sizeof(float) * V * ROWS);
    char args[512], out[4096], err[1024];
    snprintf(args, sizeof args,
             "sample --in %s/logits.f32 --vocab %d --temperature 0.8 --top-p 0.9 --seed 77 --probs-out "
             "%s/probs.f32",
             dir, V, dir);
    cr_assert_eq(run(b, args, out, sizeof out, err, sizeof err), 0, "stderr: %s", err);
    void *scratch = malloc(sampler_scratch_bytes(V));
    struct sampler_params p = {0.8f, 0.9f, 77};
    char *line = out;
    float *probs = malloc(sizeof(float) * V), *got = malloc(sizeof(float) * V);
    char path[128];
    snprintf(path, sizeof path, "%s/probs.f32", dir);
    FILE *pf = fopen(path, "rb");
    cr_assert_not_null(pf);
    for (int r = 0; r < ROWS; r++) {
        int want = -1;
        cr_assert_eq(sampler_pick(x + r * V, V, &p, (uint64_t)r, scratch, kernel_team_procs(), &want, NULL),
                     0);
        cr_assert_not_null(line, "row %d missing", r);
        cr_expect_eq(atoi(line), want, "row %d", r);
        line = strchr(line, '\n');
        if (line) line++;
        sampler_softmax(probs, x + r * V, FR_DTYPE_F32, V, 0.8f, kernel_team_procs(), NULL);
        sampler_top_p_ref(probs, V, 0.9f, scratch);
        cr_assert_eq(fread(got, sizeof(float), V, pf), (size_t)V);
        cr_expect_eq(memcmp(got, probs, sizeof(float) * V), 0, "row %d: --probs-out differs", r);
    }
    cr_expect(line == NULL || *line == 0, "one line per row");
    fclose(pf);
    /* the sort method and the fast one draw the same tokens */
    char out2[4096];
    snprintf(
        args, sizeof args,
        "sample --in %s/logits.f32 --vocab %d --temperature 0.8 --top-p 0.9 --seed 77 --top-p-method sort",
        dir, V);
    cr_assert_eq(run(b, args, out2, sizeof out2, err, sizeof err), 0, "stderr: %s", err);
    cr_expect_str_eq(out2, out);
    free(x), free(scratch), free(probs), free(got);
}

Test(sample_cli, greedy_bf16_and_probs_input) {
    const char *b = bin("FORGE_ROOFLINE_BIN");
    float *x = logit_rows();
    uint16_t *h = malloc(sizeof(uint16_t) * V * ROWS);
    for (int i = 0; i < V * ROWS; i++) h[i] = bf16_from_f32(x[i]);
    write_file("logits.bf16", h, sizeof(uint16_t) * V * ROWS);
    char args[512], out[4096], err[1024];
    snprintf(args, sizeof args,
             "sample --in %s/logits.bf16 --dtype bf16 --vocab %d --temperature 0 --top-p 1 --seed 1", dir, V);
    cr_assert_eq(run(b, args, out, sizeof out, err, sizeof err), 0, "stderr: %s", err);
    char *line = out;
    for (int r = 0; r < ROWS && line; r++) {
        int want = -1;
        sampler_argmax_ref(h + r * V, FR_DTYPE_BF16, V, &want, NULL);
        cr_expect_eq(atoi(line), want, "row %d", r);
        line = strchr(line, '\n');
        if (line) line++;
    }
    /* probabilities in: dyadic row, top_p 0.5 keeps only token 2 */
    float pr[4] = {0.125f, 0.125f, 0.5f, 0.25f};
    write_file("probs.f32", pr, sizeof pr);
    snprintf(args, sizeof args,
             "sample --in %s/probs.f32 --input probs --vocab 4 --temperature 1 --top-p 0.5 --seed 3", dir);
    cr_assert_eq(run(b, args, out, sizeof out, err, sizeof err), 0, "stderr: %s", err);
    cr_expect_str_eq(out, "2\n");
    free(x), free(h);
}

/* every bad input: exit 2, one line on stderr naming the problem, nothing on stdout */
static void expect_usage_error(const char *args_fmt, const char *needle) {
    const char *b = bin("FORGE_ROOFLINE_BIN");
    char args[512], out[1024], err[1024];
    snprintf(args, sizeof args, args_fmt, dir, dir);
    int st = run(b, args, out, sizeof out, err, sizeof err);
    cr_expect_eq(st, 2, "'%s': exit %d, stderr %s", args, st, err);
    cr_expect(strstr(err, needle) != NULL, "'%s': stderr '%s' lacks '%s'", args, err, needle);
    char *nl = strchr(err, '\n');
    cr_expect(nl && nl[1] == 0, "one line: '%s'", err);
    cr_expect_str_eq(out, "");
}

Test(sample_cli, bad_input_is_exit_2, .timeout = 120) {
    float row[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    write_file("eight.f32", row, sizeof row);
    row[6] = NAN;
    write_file("nan.f32", row, sizeof row);
    row[6] = INFINITY;
    write_file("inf.f32", row, sizeof row);
    float ninf[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    write_file("ninf.f32", ninf, sizeof ninf);
    float neg[4] = {0.5f, 0.5f, -0.25f, 0.25f};
    write_file("neg.f32", neg, sizeof neg);
    write_file("odd.f32", row, 30);
    write_file("empty.f32", row, 0);
    expect_usage_error("sample --in %s/odd.f32 --vocab 4 --temperature 1 --top-p 0.9 --seed 1",
                       "not a whole number");
    expect_usage_error("sample --in %s/eight.f32 --vocab 3 --temperature 1 --top-p 0.9 --seed 1",
                       "not a whole number");
    expect_usage_error("sample --in %s/empty.f32 --vocab 4 --temperature 1 --top-p 0.9 --seed 1", "empty");
    expect_usage_error("sample --in %s/nan.f32 --vocab 4 --temperature 1 --top-p 0.9 --seed 1",
                       "row 1: NaN at index 2");
    expect_usage_error("sample --in %s/inf.f32 --vocab 4 --temperature 0 --top-p 0.9 --seed 1",
                       "row 1: +inf at index 2");
    expect_usage_error("sample --in %s/ninf.f32 --vocab 4 --temperature 1 --top-p 0.9 --seed 1",
                       "row 0: every value is -inf");
    expect_usage_error("sample --in %s/neg.f32 --input probs --vocab 4 --temperature 1 --top-p 0.9 --seed 1",
                       "row 0: probability -0.25 at index 2");
    expect_usage_error("sample --in %s/missing.f32 --vocab 4 --temperature 1 --top-p 0.9 --seed 1",
                       "cannot open");
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --temperature -1 --top-p 0.9 --seed 1",
                       "temperature");
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --temperature nan --top-p 0.9 --seed 1",
                       "temperature");
    /* 1e-50 would round to 0 in f32 and silently mean greedy: refused */
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --temperature 1e-50 --top-p 0.9 --seed 1",
                       "temperature");
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --temperature 1 --top-p 1.5 --seed 1", "top_p");
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --temperature 1 --top-p -0.1 --seed 1", "top_p");
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --top-p 0.9 --seed 1",
                       "--temperature is required");
    expect_usage_error("sample --in %s/eight.f32 --vocab 0 --temperature 1 --top-p 0.9 --seed 1", "--vocab");
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --dtype fp16 --temperature 1 --top-p 0.9 --seed 1",
                       "--dtype");
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --input odds --temperature 1 --top-p 0.9 --seed 1",
                       "--input");
    expect_usage_error(
        "sample --in %s/eight.f32 --vocab 4 --top-p-method heap --temperature 1 --top-p 0.9 --seed 1",
        "--top-p-method");
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --temperature 1 --top-p 0.9 --seed -3", "--seed");
    /* strtoull skips blanks and wraps a sign: " -3" must not become 2^64 - 3 */
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --temperature 1 --top-p 0.9 --seed ' -3'",
                       "--seed");
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --frobnicate", "unknown option");
    expect_usage_error("sample --vocab 4 --temperature 1 --top-p 0.9 --seed 1 --probs-out %s/p.f32", "--in");
    /* an error leaves no half-written --probs-out behind */
    expect_usage_error(
        "sample --in %s/nan.f32 --vocab 4 --temperature 1 --top-p 0.9 --seed 1 --probs-out %s/p.f32",
        "NaN at index 2");
    char path[128];
    snprintf(path, sizeof path, "%s/p.f32", dir);
    cr_expect_neq(access(path, F_OK), 0, "%s was left behind", path);
    /* --probs-out naming the --in file is refused before the input is truncated */
    expect_usage_error("sample --in %s/eight.f32 --vocab 4 --temperature 1 --top-p 0.9 --seed 1 "
                       "--probs-out %s/eight.f32",
                       "is the --in file");
    /* only a plain file is removed after an error: never a link (/dev/stdout) or a device (/dev/full) */
    char target[128], link[128];
    snprintf(target, sizeof target, "%s/target.f32", dir);
    snprintf(link, sizeof link, "%s/link.f32", dir);
    write_file("target.f32", row, 4);
    cr_assert_eq(symlink(target, link), 0);
    expect_usage_error(
        "sample --in %s/nan.f32 --vocab 4 --temperature 1 --top-p 0.9 --seed 1 --probs-out %s/link.f32",
        "NaN at index 2");
    struct stat lst;
    cr_expect(lstat(link, &lst) == 0 && S_ISLNK(lst.st_mode), "%s was removed", link);
    /* a FIFO or a folder is refused at once (fopen of a FIFO would wait for a writer) */
    snprintf(path, sizeof path, "%s/fifo.f32", dir);
    cr_assert_eq(mkfifo(path, 0600), 0);
    expect_usage_error("sample --in %s/fifo.f32 --vocab 4 --temperature 1 --top-p 0.9 --seed 1",
                       "not a regular file");
    expect_usage_error("sample --in %s --vocab 4 --temperature 1 --top-p 0.9 --seed 1", "not a regular file");
    struct stat st;
    snprintf(path, sizeof path, "%s/eight.f32", dir);
    cr_expect(stat(path, &st) == 0 && st.st_size == (off_t)sizeof row, "%s was damaged", path);
}

Test(sample_cli, verify_chapter_check_passes) {
    const char *b = bin("FORGE_ROOFLINE_FAST_BIN");
    static char out[8192];
    char err[1024];
    cr_assert_eq(run(b, "verify --only sampler.top_p", out, sizeof out, err, sizeof err), 0, "%s%s", out,
                 err);
    cr_expect(strstr(out, "max |fast - sort| 0.00e+00") != NULL, "%s", out);
    cr_expect(strstr(out, "draws agree 64/64") != NULL, "%s", out);
    cr_expect(strstr(out, "FAILED") == NULL, "%s", out);
    cr_expect(strstr(out, "verify: 2 passed, 0 failed") != NULL, "%s", out);
    cr_expect_eq(run(b, "verify --only nosuch", out, sizeof out, err, sizeof err), 2);
    cr_expect_eq(run(b, "verify --only sampler.philox", out, sizeof out, err, sizeof err), 0);
    cr_expect(strstr(out, "3/3") != NULL, "%s", out);
}

/* The names of the ISAs this CPU runs, as verify lists them ("scalar+avx2+avx512"). */
static void isa_names(char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = 0;
    for (int i = 0; i < KERNEL_ISA_COUNT; i++) {
        if (sampler_isa_force((enum kernel_isa)i) != 0) continue;
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? "+" : "",
                                sampler_isa_name((enum kernel_isa)i));
    }
    sampler_isa_force(KERNEL_ISA_COUNT);
}

/* The sampler checks that once passed without comparing (issue 15): top_p_mix counts only rows whose
 * top_p lies inside (0, 1) with a nucleus between 1 and n, on every ISA; sampler.simd compares the vector
 * passes with the scalar ones; sampler.pick checks the fused chain the decode step runs. */
Test(sample_cli, verify_sampler_checks_compare_for_real, .timeout = 120) {
    const char *b = bin("FORGE_ROOFLINE_FAST_BIN");
    static char out[8192];
    char err[1024], isas[64];
    isa_names(isas, sizeof isas);

    cr_assert_eq(run(b, "verify --only sampler.top_p_mix", out, sizeof out, err, sizeof err), 0, "%s%s", out,
                 err);
    const char *at = strstr(out, "nucleus ");
    int rows = 0, n = 0, kmin = 0, kmax = 0;
    float tmin = 0, tmax = 0;
    cr_assert(at && sscanf(at, "nucleus %d..%d", &kmin, &kmax) == 2, "%s", out);
    const char *rows_at = strstr(out, "tied rows: "), *tp_at = strstr(out, "top_p in [");
    cr_assert(rows_at && sscanf(rows_at, "tied rows: %d rows x %d", &rows, &n) == 2, "%s", out);
    cr_assert(tp_at && sscanf(tp_at, "top_p in [%g, %g]", &tmin, &tmax) == 2, "top_p not stated: %s", out);
    cr_expect(rows == 64 && kmin > 1 && kmax < n, "trivial rows counted: %s", out);
    cr_expect(tmin > 0 && tmax < 1, "top_p 0 or 1 counted: %s", out);
    cr_expect(strstr(out, isas) != NULL, "not every ISA (%s): %s", isas, out);
    cr_expect(strstr(out, "draws agree 64/64") && strstr(out, "PASSED"), "%s", out);

    cr_assert_eq(run(b, "verify --only sampler.simd", out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
    if (strcmp(isas, "scalar") != 0) {
        cr_expect(strstr(out, "vs scalar, bit for bit") && strstr(out, ": 0 differ") && strstr(out, "PASSED"),
                  "%s", out);
        cr_expect(strstr(out, " 0 rows") == NULL, "compared nothing: %s", out);
    }

    cr_assert_eq(run(b, "verify --only sampler.pick", out, sizeof out, err, sizeof err), 0, "%s%s", out, err);
    int agree = -1, total = -2;
    at = strstr(out, "tokens agree ");
    cr_assert(at && sscanf(at, "tokens agree %d/%d", &agree, &total) == 2, "no sampler.pick check: %s", out);
    cr_expect(total > 0 && agree == total && strstr(out, isas), "%s", out);
}

/* --threads sets the softmax's threads: the same tokens on one thread and two (rows long enough to split);
 * refused where no softmax runs, and outside [1, 1024]. */
Test(sample_cli, threads_give_the_same_tokens) {
    enum { W = 40000, R = 3 };
    float *x = malloc(sizeof(float) * W * R);
    for (int r = 0; r < R; r++) sampler_rows_fill(x + r * W, W, (enum sampler_row_kind)r, 90 + (uint64_t)r);
    write_file("wide.f32", x, sizeof(float) * W * R);
    const char *b = bin("FORGE_ROOFLINE_BIN");
    char args[512], one[1024], two[1024], err[1024];
    snprintf(args, sizeof args,
             "sample --in %s/wide.f32 --vocab %d --temperature 0.7 --top-p 0.95 --threads 1", dir, W);
    cr_assert_eq(run(b, args, one, sizeof one, err, sizeof err), 0, "stderr: %s", err);
    snprintf(args, sizeof args,
             "sample --in %s/wide.f32 --vocab %d --temperature 0.7 --top-p 0.95 --threads 2", dir, W);
    cr_assert_eq(run(b, args, two, sizeof two, err, sizeof err), 0, "stderr: %s", err);
    cr_expect_str_eq(one, two);
    expect_usage_error("sample --in %s/wide.f32 --vocab 40000 --temperature 0 --threads 2", "greedy");
    expect_usage_error("sample --in %s/wide.f32 --vocab 40000 --input probs --temperature 1 --threads 2",
                       "--input probs");
    expect_usage_error("sample --bench --threads 0", "[1, 1024]");
    free(x);
}
