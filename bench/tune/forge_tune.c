/* forge-tune: the harness behind docs/tuning/. It times a kernel alternated with the all-threads read
 * kernel in one process (kernel, read, kernel, read, ...), so both see the same load of a shared machine,
 * the read chosen as a full run chooses the one it pairs its steps with (ceilings_choose_team_read),
 * and prints each configuration's median GB/s and the median over the pairs of kernel GB/s / read GB/s.
 *   forge-tune matvec    [--isa I] [--threads N] [--profile l1|l2] [--shape RxC] [--gib G] [--reps N]
 *                        [--dtype bf16|f32|q8_0|q4_0]
 *   forge-tune attention [--isa I] [--threads N] [--profile l1|l2] [--positions P] [--heads Q/KV]
 *                        [--layers L] [--reps N]
 * Without --isa, --threads or --shape/--positions it sweeps every ISA from AVX2 up to the CPU's best, one
 * thread and one per core, and the notes' shapes. Bad options: one line on stderr, exit 2. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/huge_map.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "kernels/team.h"
#include "roofline/ceilings.h"
#include "roofline/timing.h"
#include "roofline/topology.h"

#define TUNE_MAX_ITEMS 8

struct tune_opts {
    int isa[KERNEL_ISA_COUNT], n_isa;
    int threads[2], n_threads;
    int profile; /* KERNEL_PREFETCH_COUNT: the CPU's */
    int rows[TUNE_MAX_ITEMS], cols[TUNE_MAX_ITEMS], n_shapes;
    int positions[TUNE_MAX_ITEMS], n_positions;
    int heads, kv_heads, layers, reps;
    double gib;
    enum fr_dtype wtype; /* the matvec's weights */
};

/* One timed function and its bytes: the kernel over all its matrices or layers, or the read. */
struct tune_job {
    const uint16_t *w; /* matvec: the matrices back to back; attention: K then V of every layer */
    float *x, *y, *scratch;
    const float *read;
    size_t read_n, bytes;
    int rows, cols, count; /* matvec: count matrices of rows x cols; attention: count layers */
    int positions, heads, kv_heads;
    int threads; /* the team's */
    enum fr_dtype wtype;
};

/* The kernel's calls over every matrix or layer in one kernel team, as the decode step runs them: one
 * parallel region, the team's own barrier between calls (kernels/team.h). */
static void tune_run(void *ctx, long rep) {
    (void)rep;
    const struct tune_job *j = ctx;
    const size_t each = fr_dtype_bytes(j->wtype, (size_t)j->rows * (size_t)j->cols),
                 layer = (size_t)j->kv_heads * (size_t)j->positions * 128;
    const uint16_t *v = j->w + layer * (size_t)j->count;
    struct kernel_team team;
    kernel_team_init(&team);
#pragma omp parallel num_threads(j->threads)
    {
        kernel_team_join(&team);
        for (int m = 0; m < j->count; m++) {
            if (j->positions)
                attention(j->y, j->x, j->w + layer * (size_t)m, v + layer * (size_t)m, FR_DTYPE_BF16,
                          j->positions, (size_t)j->positions * 128, j->heads, j->kv_heads, 128, j->scratch,
                          j->threads);
            else
                matvec(j->y, (const unsigned char *)j->w + (size_t)m * each, j->wtype, j->x, j->rows, j->cols,
                       MATVEC_BACKEND_FORGE, j->threads, NULL);
            kernel_team_sync();
        }
        kernel_team_leave();
    }
}

static volatile double tune_sink;
static void tune_run_read(void *ctx, long rep) {
    (void)rep;
    const struct tune_job *j = ctx;
    tune_sink += ceilings_read_team(j->read, j->read_n, j->threads);
}

/* Times fn alternated with the read and prints one line. Returns 0, or 1 when timing could not allocate. */
static int tune_measure(const char *what, void (*fn)(void *, long), struct tune_job *j,
                        const struct tune_opts *o, const char *isa, int threads) {
    struct timing_opts t = {.warmup = 2, .min_reps = o->reps, .max_reps = o->reps, .min_time_s = 0};
    struct timing_stats sk = {0}, sr = {0};
    double ratio = NAN; /* median over pairs of kernel time / read time */
    if (timing_measure_pair(fn, j, tune_run_read, j, &t, &sk, &sr, &ratio) != 0) return 1;
    double kg = (double)j->bytes / sk.median_s / 1e9,
           rg = (double)(j->read_n * sizeof(float)) / sr.median_s / 1e9;
    double of_read = (double)j->bytes / (double)(j->read_n * sizeof(float)) / ratio;
    printf("%-26s %-7s %-3s %7d %9.1f %8.1f %8.3f %5d\n", what, isa,
           kernel_prefetch_active() == KERNEL_PREFETCH_L2 ? "l2" : "l1", threads, kg, rg, of_read, sk.reps);
    fflush(stdout);
    return 0;
}

static int tune_parse_int(const char *s, int lo, int hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

static int tune_usage(const char *why) {
    fprintf(stderr,
            "forge-tune: %s (usage: forge-tune matvec|attention [--isa I] [--threads N] "
            "[--profile l1|l2] [--shape RxC] [--gib G] [--dtype bf16|f32|q8_0|q4_0] [--positions P] "
            "[--heads Q/KV] [--layers L] [--reps N])\n",
            why);
    return 2;
}

static int tune_parse(int argc, char **argv, int attention, struct tune_opts *o) {
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        enum kernel_isa isa;
        int n, q, kv;
        double g;
        if (!strcmp(a, "--help")) return tune_usage("help"), -1;
        if (!v) return tune_usage("an option needs a value");
        i++;
        if (!strcmp(a, "--isa") && kernel_isa_parse(v, &isa) == 0 && isa != KERNEL_ISA_SCALAR)
            o->isa[0] = (int)isa, o->n_isa = 1;
        else if (!strcmp(a, "--threads") && tune_parse_int(v, 1, 4096, &n) == 0)
            o->threads[0] = n, o->n_threads = 1;
        else if (!strcmp(a, "--profile") && (!strcmp(v, "l1") || !strcmp(v, "l2")))
            o->profile = v[1] == '1' ? KERNEL_PREFETCH_L1 : KERNEL_PREFETCH_L2;
        else if (!strcmp(a, "--reps") && tune_parse_int(v, 3, 100000, &n) == 0)
            o->reps = n;
        else if (!attention && !strcmp(a, "--shape") && sscanf(v, "%dx%d", &o->rows[0], &o->cols[0]) == 2 &&
                 o->rows[0] > 0 && o->cols[0] > 0)
            o->n_shapes = 1;
        else if (!attention && !strcmp(a, "--gib") && (g = strtod(v, NULL)) > 0 && g <= 64)
            o->gib = g;
        else if (!attention && !strcmp(a, "--dtype") && fr_wtype_parse(v, &o->wtype) == 0)
            continue;
        else if (attention && !strcmp(a, "--positions") && tune_parse_int(v, 1, 1 << 20, &n) == 0)
            o->positions[0] = n, o->n_positions = 1;
        else if (attention && !strcmp(a, "--heads") && sscanf(v, "%d/%d", &q, &kv) == 2 && q > 0 && kv > 0 &&
                 q % kv == 0)
            o->heads = q, o->kv_heads = kv;
        else if (attention && !strcmp(a, "--layers") && tune_parse_int(v, 1, 1024, &n) == 0)
            o->layers = n;
        else
            return fprintf(stderr, "forge-tune: bad option or value: %s %s\n", a, v), 2;
    }
    return 0;
}

/* Fills n bf16 values with small pseudo-random weights (the time does not depend on them). */
static void tune_fill(uint16_t *w, size_t n) {
    uint32_t s = 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        w[i] = (uint16_t)(0x3c00u | (s >> 25)); /* about 0.0078-0.016, positive */
    }
}

/* The bytes at w, for a block format: 4096 weights of seeded values in [-1, 1) quantised as one row group
 * (QUANT_GROUP_ROWS rows of 256) and put in memory order (kernels/quant.h), the bytes repeated over the
 * buffer (the time does not depend on the codes; quantising a GiB would take seconds). Every row group of a
 * matrix of whole groups then reads real scales: its block columns are as long as the unit's. */
static int tune_fill_blocks(unsigned char *w, size_t bytes, enum fr_dtype t) {
    enum { N = 4096 };
    float v[N];
    uint32_t s = 12345u;
    for (int i = 0; i < N; i++) {
        s = s * 1664525u + 1013904223u;
        v[i] = (float)(s >> 8) / 8388608.0f - 1.0f;
    }
    const size_t unit = fr_dtype_bytes(t, N);
    if (bytes < unit) return -1;
    quant_quantize_row(w, t, v, N);
    quant_matrix_pack(w, t, QUANT_GROUP_ROWS, N / QUANT_GROUP_ROWS);
    for (size_t at = unit; at < bytes; at += unit) memcpy(w + at, w, bytes - at < unit ? bytes - at : unit);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2 || (strcmp(argv[1], "matvec") != 0 && strcmp(argv[1], "attention") != 0))
        return tune_usage("the first argument is matvec or attention");
    const int att = !strcmp(argv[1], "attention");
    struct fr_err err = {{0}};
    struct machine m;
    if (machine_detect(&m, 0, &err) != 0) return fprintf(stderr, "forge-tune: %s\n", err.msg), 1;
    struct tune_opts o = {.profile = KERNEL_PREFETCH_COUNT,
                          .reps = 15,
                          .gib = 1.0,
                          .heads = 16,
                          .kv_heads = 8,
                          .layers = 28,
                          .rows = {1024, 1024, 4096},
                          .cols = {1024, 3072, 1024},
                          .n_shapes = 3,
                          .positions = {1024, 4096},
                          .n_positions = 2,
                          .threads = {1, m.threads}};
    o.n_threads = m.threads > 1 ? 2 : 1;
    for (int i = KERNEL_ISA_AVX2; i <= (int)kernel_isa_best(); i++) o.isa[o.n_isa++] = i;
    int rc = tune_parse(argc, argv, att, &o);
    if (rc != 0) return rc < 0 ? 0 : rc;
    if (o.n_isa == 0) return fprintf(stderr, "forge-tune: this CPU has no AVX2\n"), 1;
    if (o.threads[0] > m.threads)
        return fprintf(stderr, "forge-tune: --threads above the %d cores this process may run on\n",
                       m.threads),
               2;
    if (o.profile != KERNEL_PREFETCH_COUNT) kernel_prefetch_force((enum kernel_prefetch)o.profile);

    /* the read: 1 GiB, at least 4x the last-level cache as the ceilings' rule asks */
    size_t read_n = ((size_t)1 << 30) / sizeof(float);
    if (read_n * sizeof(float) < 4 * m.llc_total_bytes) read_n = 4 * m.llc_total_bytes / sizeof(float);
    float *rd = ceilings_stream_alloc(read_n);
    size_t wmax = att ? 0 : (size_t)(o.gib * (double)(1u << 30));
    for (int p = 0; att && p < o.n_positions; p++) {
        size_t b = 2 * (size_t)o.layers * (size_t)o.kv_heads * (size_t)o.positions[p] * 128 * 2;
        wmax = b > wmax ? b : wmax;
    }
    uint16_t *w = huge_map_alloc(wmax);
    size_t xn = att ? (size_t)o.heads * 128 : 1u << 16;
    int maxpos = 0;
    for (int p = 0; p < o.n_positions; p++) maxpos = o.positions[p] > maxpos ? o.positions[p] : maxpos;
    size_t yn = att ? xn : 1u << 20, sn = (size_t)o.heads * (size_t)maxpos + 64;
    float *x = calloc(xn, sizeof *x), *y = calloc(yn, sizeof *y), *scr = calloc(sn, sizeof *scr);
    if (!rd || !w || !x || !y || !scr) {
        fprintf(stderr, "forge-tune: out of memory\n");
        rc = 1;
        goto done;
    }
    if (fr_dtype_is_block(o.wtype))
        tune_fill_blocks((unsigned char *)w, wmax, o.wtype);
    else
        tune_fill(w, wmax / 2);
    for (size_t i = 0; i < xn; i++) x[i] = (float)(i % 7) * 0.125f - 0.375f;
    for (size_t i = 0; i < read_n; i++) rd[i] = (float)(i & 3); /* the pattern the read choice checks */

    printf("# forge-tune %s on %s, %d cores; the read: %.2f GiB; medians of %d alternations (kernel, read)\n",
           argv[1], m.cpu_model, m.threads, (double)(read_n * sizeof(float)) / (1u << 30), o.reps);
    printf("%-26s %-7s %-3s %7s %9s %8s %8s %5s\n", "what", "isa", "pf", "threads", "GB/s", "read", "of read",
           "reps");
    for (int t = 0; t < o.n_threads && rc == 0; t++) {
        m.threads = o.threads[t];
        if (machine_bind_threads(&m, &err) != 0) {
            fprintf(stderr, "forge-tune: %s\n", err.msg);
            rc = 1;
        }
        for (int i = 0; i < o.n_isa && rc == 0; i++) {
            const char *isa = kernel_isa_name((enum kernel_isa)o.isa[i]);
            if (kernel_isa_force((enum kernel_isa)o.isa[i]) != 0) {
                fprintf(stderr, "forge-tune: this CPU lacks %s\n", isa);
                rc = 2;
            }
            /* pair with the read a full run would pair its steps with on this ISA and team, chosen the same
             * way: on the Zen 5 VM the two-stream read, 1.14-1.28x the ISA's own */
            char chose[384];
            if (rc == 0 &&
                ceilings_choose_team_read(rd, read_n, o.threads[t], 3, chose, sizeof chose, &err)) {
                fprintf(stderr, "forge-tune: %s\n", err.msg);
                rc = 1;
            }
            if (rc == 0) printf("# %s, %d thread(s): the read is %s\n", isa, o.threads[t], chose);
            for (int s = 0; !att && s < o.n_shapes && rc == 0; s++) {
                size_t each = fr_dtype_bytes(o.wtype, (size_t)o.rows[s] * (size_t)o.cols[s]);
                struct tune_job j = {.w = w,
                                     .x = x,
                                     .y = y,
                                     .read = rd,
                                     .read_n = read_n,
                                     .rows = o.rows[s],
                                     .cols = o.cols[s],
                                     .count = (int)(wmax / each),
                                     .threads = o.threads[t],
                                     .wtype = o.wtype};
                const char *why = "it does not fit the buffers (--gib, 65536 columns, 1048576 rows)";
                if (j.count < 1 || o.cols[s] > (int)xn || o.rows[s] > (int)yn ||
                    quant_check_cols(o.wtype, o.cols[s], &why) != 0) {
                    fprintf(stderr, "forge-tune: shape %dx%d refused: %s\n", o.rows[s], o.cols[s], why);
                    rc = 2;
                    break;
                }
                j.bytes = each * (size_t)j.count;
                char what[64];
                snprintf(what, sizeof what, "matvec %s %dx%d x%d", fr_dtype_name(o.wtype), o.rows[s],
                         o.cols[s], j.count);
                rc = tune_measure(what, tune_run, &j, &o, isa, o.threads[t]);
            }
            for (int p = 0; att && p < o.n_positions && rc == 0; p++) {
                struct tune_job j = {.w = w,
                                     .x = x,
                                     .y = y,
                                     .scratch = scr,
                                     .read = rd,
                                     .read_n = read_n,
                                     .count = o.layers,
                                     .positions = o.positions[p],
                                     .heads = o.heads,
                                     .kv_heads = o.kv_heads,
                                     .threads = o.threads[t]};
                j.bytes = 2 * (size_t)o.layers * (size_t)o.kv_heads * (size_t)o.positions[p] * 128 * 2;
                char what[64];
                snprintf(what, sizeof what, "attention %d/%d @%d x%d", o.heads, o.kv_heads, o.positions[p],
                         o.layers);
                rc = tune_measure(what, tune_run, &j, &o, isa, o.threads[t]);
            }
        }
    }
done:
    huge_map_free(w, wmax);
    if (rd) ceilings_stream_free(rd, read_n);
    free(x), free(y), free(scr);
    return rc;
}
