/* forge-roofline sample: one token id per row of a file of little-endian logits (or probabilities), with
 * the sampler of kernels/sampler.h; row r is decode step r. --probs-out writes each row's filtered,
 * renormalized distribution. --bench times the sampler instead (bench/sampler_bench.h).
 * Checked end to end in tests/test_sampler_cli.c (tokens equal sampler_pick's, every bad input exits 2). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/cli/cli.h"
#include "bench/sampler_bench.h"
#include "kernels/sampler.h"
#include "kernels/team.h"

static void usage(FILE *f) {
    fprintf(
        f,
        "usage: forge-roofline sample --in FILE --vocab V --temperature T [--top-p P] [--seed S]\n"
        "                             [--input logits|probs] [--dtype f32|bf16]\n"
        "                             [--top-p-method fast|sort] [--probs-out FILE]\n"
        "       forge-roofline sample --bench [--vocab V[,V...]] [--temperature T] [--top-p P] "
        "[--no-sort] [--isa NAME] [--threads N]\n\n"
        "Reads rows of V little-endian values and prints one token id per row; row r is step r.\n"
        "  --input probs   rows are probabilities (finite, >= 0), used as given: no softmax, no temperature\n"
        "                  (temperature 0 still means greedy)\n"
        "  --temperature   0 = greedy (argmax); > 0 = softmax(logits / T), top-p, seeded draw\n"
        "  --top-p, --seed default 1 (keep every token) and 0, as in decode; greedy uses neither\n"
        "  --probs-out     writes each row's filtered, renormalized distribution as f32 rows\n"
        "                  (one-hot at temperature 0)\n"
        "  --bench         times greedy, softmax, both top-p filters and the draw on generated rows\n"
        "                  (temperature 0.8, top-p 0.9 unless given); markdown table. It reads no file and\n"
        "                  draws with fixed seeds: --in, --input, --dtype, --seed, --top-p-method and\n"
        "                  --probs-out are refused with it, as --no-sort is without it\n"
        "  --isa NAME      " CLI_ISA_HELP " (same bits)\n"
        "  --threads N     OpenMP threads for the softmax of rows of 32768 tokens or more (same bits; "
        "default:\n"
        "                  one a processor); top-p, the draw and greedy run on one\n");
}

struct sample_opts {
    const char *in, *probs_out, *isa;
    long vocab, threads; /* threads 0 until parsed: then --threads, else one per processor */
    bool probs_input, sort, bench, no_sort;
    enum fr_dtype dtype;
    struct sampler_params p;
    bool have_t, have_p, have_seed;
    const char *file_only; /* the first option given that only sampling a file uses (refused with --bench) */
    long bench_vocabs[16];
    int n_bench_vocabs;
};

/* "--name value" or "--name=value"; returns the value or NULL (usage error printed by the caller) */
static const char *opt_value(int argc, char **argv, int *i, const char *name) {
    size_t len = strlen(name);
    if (!argv[*i] || strncmp(argv[*i], name, len) != 0) return NULL;
    if (argv[*i][len] == '=') return argv[*i] + len + 1;
    if (argv[*i][len] != 0) return NULL;
    if (*i + 1 >= argc) return "";
    return argv[++*i];
}

static int parse(int argc, char **argv, struct sample_opts *o) {
    *o = (struct sample_opts){.dtype = FR_DTYPE_F32, .p = {0, 1, 0}, .vocab = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        unsigned long long u;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return -1;
        } else if (strcmp(a, "--bench") == 0) {
            o->bench = true;
        } else if (strcmp(a, "--no-sort") == 0) {
            o->no_sort = true;
        } else if ((v = opt_value(argc, argv, &i, "--in"))) {
            if (!*v) return cli_usage_error("sample: --in needs a file");
            o->in = v;
            if (!o->file_only) o->file_only = "--in";
        } else if ((v = opt_value(argc, argv, &i, "--probs-out"))) {
            if (!*v) return cli_usage_error("sample: --probs-out needs a file");
            o->probs_out = v;
            if (!o->file_only) o->file_only = "--probs-out";
        } else if ((v = opt_value(argc, argv, &i, "--vocab"))) {
            o->n_bench_vocabs = cli_parse_long_list(v, 1, 1L << 26, o->bench_vocabs, 16);
            if (o->n_bench_vocabs < 1) return cli_usage_error("sample: bad --vocab '%s' (1 .. 2^26)", v);
            o->vocab = o->bench_vocabs[0];
        } else if ((v = opt_value(argc, argv, &i, "--input"))) {
            if (!o->file_only) o->file_only = "--input";
            if (strcmp(v, "logits") == 0)
                o->probs_input = false;
            else if (strcmp(v, "probs") == 0)
                o->probs_input = true;
            else
                return cli_usage_error("sample: --input must be logits or probs (got '%s')", v);
        } else if ((v = opt_value(argc, argv, &i, "--dtype"))) {
            if (!o->file_only) o->file_only = "--dtype";
            if (fr_dtype_parse(v, &o->dtype))
                return cli_usage_error("sample: --dtype must be f32 or bf16 (got '%s')", v);
        } else if ((v = opt_value(argc, argv, &i, "--top-p-method"))) {
            if (!o->file_only) o->file_only = "--top-p-method";
            if (strcmp(v, "fast") == 0)
                o->sort = false;
            else if (strcmp(v, "sort") == 0)
                o->sort = true;
            else
                return cli_usage_error("sample: --top-p-method must be fast or sort (got '%s')", v);
        } else if ((v = opt_value(argc, argv, &i, "--isa"))) {
            o->isa = v;
        } else if ((v = opt_value(argc, argv, &i, "--threads"))) {
            if (cli_parse_long(v, 1, 1024, &o->threads))
                return cli_usage_error("sample: --threads '%s' is not an integer in [1, 1024]", v);
        } else if ((v = opt_value(argc, argv, &i, "--temperature"))) {
            if (cli_parse_float(v, &o->p.temperature))
                return cli_usage_error("sample: bad --temperature '%s' (a finite f32 number)", v);
            o->have_t = true;
        } else if ((v = opt_value(argc, argv, &i, "--top-p"))) {
            if (cli_parse_float(v, &o->p.top_p))
                return cli_usage_error("sample: bad --top-p '%s' (a finite f32 number)", v);
            o->have_p = true;
        } else if ((v = opt_value(argc, argv, &i, "--seed"))) {
            if (cli_parse_u64(v, &u)) return cli_usage_error("sample: bad --seed '%s'", v);
            o->p.seed = u;
            o->have_seed = true;
            if (!o->file_only) o->file_only = "--seed";
        } else {
            return cli_usage_error("sample: unknown option '%s' (try --help)", a);
        }
    }
    int rc = cli_isa_apply("sample: ", o->isa, MATVEC_BACKEND_FORGE);
    if (rc) return rc;
    struct fr_err err;
    if (o->bench) {
        if (o->file_only)
            return cli_usage_error("sample --bench: %s does not apply (the benchmark reads no file and draws "
                                   "with fixed seeds)",
                                   o->file_only);
        if (!o->have_t) o->p.temperature = 0.8f;
        if (!o->have_p) o->p.top_p = 0.9f;
        if (o->p.temperature <= 0) return cli_usage_error("sample --bench: --temperature must be > 0");
    } else {
        if (o->no_sort) return cli_usage_error("sample: --no-sort applies only with --bench");
        if (!o->in) return cli_usage_error("sample: --in FILE is required (try --help)");
        if (o->vocab < 1) return cli_usage_error("sample: --vocab V is required");
        if (o->n_bench_vocabs > 1) return cli_usage_error("sample: --vocab takes one value here");
        /* --temperature chooses between greedy and a draw: never a silent default. --top-p and --seed
         * default to decode's 1 and 0; greedy uses neither, so one command line can sweep temperatures. */
        if (!o->have_t) return cli_usage_error("sample: --temperature is required (0 = greedy; try --help)");
        if (o->threads && (o->probs_input || o->p.temperature == 0))
            return cli_usage_error("sample: --threads applies to the softmax, which %s does not run",
                                   o->probs_input ? "--input probs" : "--temperature 0 (greedy)");
    }
    if (!o->threads) o->threads = kernel_team_procs(); /* OpenMP's default team */
    if (sampler_check_params(&o->p, &err)) return cli_usage_error("sample: %s", err.msg);
    return 0;
}

static void to_little_endian(void *buf, size_t n_values, size_t width) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    unsigned char *b = buf;
    for (size_t i = 0; i < n_values; i++)
        for (size_t j = 0; j < width / 2; j++) {
            unsigned char t = b[i * width + j];
            b[i * width + j] = b[i * width + width - 1 - j];
            b[i * width + width - 1 - j] = t;
        }
#else
    (void)buf, (void)n_values, (void)width;
#endif
}

static int run_bench(const struct sample_opts *o) {
    struct sampler_bench_opts bo;
    sampler_bench_default_opts(&bo);
    int vocabs[16];
    if (o->n_bench_vocabs > 0) {
        for (int i = 0; i < o->n_bench_vocabs; i++) vocabs[i] = (int)o->bench_vocabs[i];
        bo.vocabs = vocabs;
        bo.n_vocabs = o->n_bench_vocabs;
    }
    bo.temperature = o->p.temperature;
    bo.top_p = o->p.top_p;
    bo.skip_sort = o->no_sort;
    bo.threads = (int)o->threads;
    int threads = sampler_softmax_threads(1 << 26, bo.threads);
    printf("# sampler benchmark: isa %s, timer resolution %.0f ns, softmax on %d thread%s from %d tokens "
           "(top-p, the draw and greedy on one), temperature %g, top_p %g\n",
           sampler_isa_name(sampler_isa_active()), timing_resolution_s() * 1e9, threads,
           threads > 1 ? "s" : "", SAMPLER_SOFTMAX_SPLIT_MIN, (double)bo.temperature, (double)bo.top_p);
    printf("# rows: realistic = normal(0, 2.5) bulk + 1-8 peaks (the median-nucleus row of 15 seeds); flat = "
           "normal(0, 0.05); times per row\n\n");
    fflush(stdout);
    struct sampler_bench_result *r = NULL;
    int n = 0;
    struct fr_err err;
    if (sampler_bench_run(&bo, &r, &n, &err)) {
        printf("\nvalidation: FAILED\n");
        return cli_fail("%s", err.msg);
    }
    sampler_bench_print_markdown(stdout, r, n);
    printf("\n");
    for (int i = 0; i < n; i++) {
        if (strcmp(r[i].variant, "chain_fast") != 0) continue;
        for (int j = 0; j < n; j++)
            if (strcmp(r[j].variant, "chain_sort") == 0 && r[j].vocab == r[i].vocab &&
                strcmp(r[j].row_kind, r[i].row_kind) == 0)
                printf("chain speed-up over sort, vocab %d, %s rows: %.0fx (medians)\n", r[i].vocab,
                       r[i].row_kind, r[j].timing.median_s / r[i].timing.median_s);
    }
    printf(
        "validation: on every timed row, fast top-p == sort reference bitwise and sampler_pick == the sort "
        "chain's token on 32 steps: PASSED\n");
    free(r);
    return CLI_EXIT_OK;
}

/* one row: token in *tok, the distribution sampled from in dist (one-hot when greedy) */
static int sample_row(const struct sample_opts *o, const void *row, int n, uint64_t step, float *dist,
                      void *scratch, int *tok, struct fr_err *err) {
    if (o->probs_input) {
        if (o->dtype == FR_DTYPE_BF16)
            for (int i = 0; i < n; i++) dist[i] = bf16_to_f32(((const uint16_t *)row)[i]);
        else
            memcpy(dist, row, sizeof(float) * (size_t)n);
        if (sampler_check_probs(dist, n, err)) return -1;
    } else if (o->p.temperature > 0) {
        if (sampler_softmax(dist, row, o->dtype, n, o->p.temperature, (int)o->threads, err)) return -1;
    }
    if (o->p.temperature == 0) {
        const void *src = o->probs_input ? (const void *)dist : row;
        enum fr_dtype t = o->probs_input ? FR_DTYPE_F32 : o->dtype;
        if (sampler_argmax(src, t, n, tok, err)) return -1;
        memset(dist, 0, sizeof(float) * (size_t)n);
        dist[*tok] = 1.0f;
        return 0;
    }
    if (o->sort)
        sampler_top_p_ref(dist, n, o->p.top_p, scratch);
    else
        sampler_top_p_fast(dist, n, o->p.top_p, scratch);
    *tok = sampler_draw(dist, n, sampler_uniform(o->p.seed, step));
    if (*tok < 0) return fr_err_set(err, "no token with positive probability");
    return 0;
}

int cmd_sample(int argc, char **argv) {
    struct sample_opts o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc < 0 ? CLI_EXIT_OK : rc;
    if (o.bench) return run_bench(&o);
    if (!o.in) return cli_usage_error("sample: --in FILE is required");

    int n = (int)o.vocab;
    size_t width = fr_dtype_size(o.dtype), row_bytes = width * (size_t)n;
    struct stat st;
    /* before opening: fopen of a FIFO would wait for a writer, and rows need a file size */
    if (stat(o.in, &st) == 0 && !S_ISREG(st.st_mode))
        return cli_usage_error("sample: %s is not a regular file", o.in);
    FILE *in = fopen(o.in, "rb");
    if (!in) return cli_usage_error("sample: cannot open %s: %s", o.in, strerror(errno));
    if (fseek(in, 0, SEEK_END) != 0) {
        fclose(in);
        return cli_usage_error("sample: %s is not a seekable file", o.in);
    }
    long size = ftell(in);
    rewind(in);
    if (size <= 0 || (size_t)size % row_bytes != 0) {
        fclose(in);
        if (size == 0) return cli_usage_error("sample: %s is empty", o.in);
        return cli_usage_error(
            "sample: %s has %ld bytes, not a whole number of rows of %d %s values (%zu bytes)", o.in, size, n,
            fr_dtype_name(o.dtype), row_bytes);
    }
    long rows = size / (long)row_bytes;
    void *row = malloc(row_bytes);
    float *dist = malloc(sizeof(float) * (size_t)n);
    void *scratch = malloc(sampler_top_p_scratch_bytes(n));
    int *tokens = malloc(sizeof(int) * (size_t)rows); /* printed only once every row succeeded */
    FILE *pout = NULL;
    bool pout_plain = false; /* removed after a failure only when a plain file (never /dev/full) */
    rc = CLI_EXIT_OK;
    if (!row || !dist || !scratch || !tokens) {
        rc = cli_fail("sample: out of memory for vocabulary %d", n);
        goto done;
    }
    if (o.probs_out && cli_same_file(o.in, o.probs_out)) {
        rc = cli_usage_error("sample: --probs-out %s is the --in file", o.probs_out);
        goto done;
    }
    if (o.probs_out && !(pout = fopen(o.probs_out, "wb"))) {
        rc = cli_usage_error("sample: cannot write %s: %s", o.probs_out, strerror(errno));
        goto done;
    }
    pout_plain = pout && cli_is_plain_file(o.probs_out);
    for (long r = 0; r < rows; r++) {
        if (fread(row, 1, row_bytes, in) != row_bytes) {
            rc = cli_fail("sample: %s: read error at row %ld", o.in, r);
            goto done;
        }
        to_little_endian(row, (size_t)n, width);
        struct fr_err err;
        int tok;
        if (sample_row(&o, row, n, (uint64_t)r, dist, scratch, &tok, &err)) {
            rc = cli_usage_error("sample: %s: row %ld: %s", o.in, r, err.msg);
            goto done;
        }
        tokens[r] = tok;
        if (pout) {
            to_little_endian(dist, (size_t)n, sizeof(float));
            if (fwrite(dist, sizeof(float), (size_t)n, pout) != (size_t)n) {
                rc = cli_fail("sample: write error on %s", o.probs_out);
                goto done;
            }
        }
    }
    for (long r = 0; r < rows; r++) printf("%d\n", tokens[r]);
    if (fflush(stdout) != 0) rc = cli_fail("sample: write error on stdout");
done:
    if (pout && fclose(pout) != 0 && rc == CLI_EXIT_OK)
        rc = cli_fail("sample: write error on %s", o.probs_out);
    if (pout_plain && rc != CLI_EXIT_OK) remove(o.probs_out); /* no half-written output behind an error */
    fclose(in);
    free(row);
    free(dist);
    free(scratch);
    free(tokens);
    return rc;
}
