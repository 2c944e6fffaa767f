/* Bad input, listed: every subcommand given wrong options, numbers out of range, malformed lists, files that
 * are missing, empty, truncated or binary, JSON of the wrong shape, an unfinished run folder and a run of
 * another model. Each case expects exit status 2 and one stderr line "forge-roofline: ..." that holds a
 * phrase naming what is wrong, run by the sanitized binary (nothing may crash or leak on the way out).
 * The fixtures are made here, in a temporary folder ("@" in a case stands for it). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/cli_run.h"
#include "tests/report_fixture.h"
#include "tests/report_testutil.h"

struct bad_case {
    const char *args; /* "@" is the fixture folder */
    const char *says; /* a phrase the one line must hold */
};

static const struct bad_case cases[] = {
    /* the full run: options and numbers */
    {"--bogus", "unknown or incomplete option '--bogus'"},
    {"--model", "unknown or incomplete option '--model'"},
    {"--quick", "--model is required"},
    {"--model nosuchmodel --quick", "unknown model 'nosuchmodel'"},
    {"--model qwen3-0.6b --threads 0", "--threads: expected 1..4096"},
    {"--model qwen3-0.6b --threads 99999", "--threads: expected 1..4096"},
    {"--model qwen3-0.6b --threads 2x", "--threads: expected 1..4096, got '2x'"},
    {"--model qwen3-0.6b --context 1,,2", "--context: expected up to 16"},
    {"--model qwen3-0.6b --context -1", "--context: expected"},
    {"--model qwen3-0.6b --context 1,1", "1 is given twice"},
    {"--model qwen3-0.6b --context 99999999", "--context: expected"},
    {"--model qwen3-0.6b --context 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", "up to 16"},
    {"--model qwen3-0.6b --context 40960", "holds at most 40960 positions"},
    {"--model qwen3-0.6b --dtype fp8",
     "--dtype 'fp8': bf16, f32, q8_0, q4_0, q4_k, q5_k, q6_k, or llama.cpp's mix q4_k_m"},
    {"--model qwen3-0.6b --kv int4", "--kv: expected bf16 or f32"},
    {"--model qwen3-0.6b --gemv cublas", "--gemv: expected forge or openblas"},
    {"--model qwen3-0.6b --gemv onednn", "--gemv onednn: the full run times oneDNN in the batch sweep only"},
    {"--model qwen3-0.6b --isa neon", "--isa must be scalar, avx2 or avx512"},
    {"--model qwen3-0.6b --batch 0", "--batch: expected 'none' or"},
    {"--model qwen3-0.6b --batch 1,a", "--batch: expected 'none' or"},
    {"--model qwen3-0.6b --batch 2,2", "2 is given twice"},
    {"--model qwen3-0.6b --batch-context -5", "--batch-context: expected an integer >= 0"},
    {"--model qwen3-0.6b --events ,,", "--events: empty event name"},
    {"--model qwen3-0.6b --out /proc/forge-roofline-nope", "cannot create output folder"},
    {"--model qwen3-0.6b --out @/empty.bin", "is not a directory"},
    {"--model qwen3-0.6b extra-arg", "unexpected argument 'extra-arg'"},
    /* the full run: model config files of the wrong shape */
    {"--model @/arr", "top level must be a JSON object"},
    {"--model @/emptymodel", "malformed JSON"},
    {"--model @/binmodel", "malformed JSON"},
    {"--model @/wrongtype", "config.json: "},
    /* predict */
    {"predict", "--model is required"},
    {"predict --model qwen3-0.6b --format xml", "--format: expected md, csv or json"},
    {"predict --model qwen3-0.6b --context x", "--context: expected a comma-separated list"},
    {"predict --model qwen3-0.6b --sampler topk", "--sampler: expected chain or greedy"},
    {"predict --model qwen3-0.6b --batch 1 --peak-gflops -1 --bw-gbs 10",
     "--peak-gflops: expected a positive"},
    {"predict --model qwen3-0.6b --batch 1 --peak-gflops nan --bw-gbs 10",
     "--peak-gflops: expected a positive"},
    {"predict --model qwen3-0.6b --peak-gflops 10", "go together"},
    {"predict --model @/arr", "top level must be a JSON object"},
    /* decode: numbers, lists, weights files */
    {"decode --model qwen3-0.6b", "--prompt-ids is required"},
    {"decode --model qwen3-0.6b --prompt-ids 1,2 --max-new -1", "--max-new '-1' is not an integer >= 0"},
    {"decode --model qwen3-0.6b --prompt-ids 1,x --max-new 1", "not a comma-separated list of integers"},
    {"decode --model qwen3-0.6b --prompt-ids 999999999 --max-new 1", "outside the vocabulary"},
    {"decode --model qwen3-0.6b --prompt-ids 1 --max-new 1 --temperature -1", "--temperature '-1'"},
    {"decode --model qwen3-0.6b --prompt-ids 1 --max-new 1 --top-p 2", "--top-p '2' must be in [0, 1]"},
    {"decode --model qwen3-0.6b --prompt-ids 1 --max-new 1 --seed abc", "--seed 'abc'"},
    {"decode --model qwen3-0.6b --prompt-ids 1 --max-new 1 --weights @/empty.bin", "truncated: 0 bytes"},
    {"decode --model qwen3-0.6b --prompt-ids 1 --max-new 1 --weights @/trunc.safetensors",
     "runs past the end"},
    {"decode --model qwen3-0.6b --prompt-ids 1 --max-new 1 --weights @/garbage.bin", "runs past the end"},
    {"decode --model qwen3-0.6b --prompt-ids 1 --max-new 1 --weights @/nosuch", "cannot open"},
    /* verify */
    {"verify --only", "unknown option '--only'"},
    {"verify --isa avx9", "--isa must be scalar, avx2 or avx512"},
    {"verify extra", "unknown option 'extra'"},
    /* sample: numbers and files */
    {"sample --in @/logits.f32 --vocab 0 --temperature 1", "bad --vocab '0'"},
    {"sample --in @/logits.f32 --vocab 1000 --temperature 1", "not a whole number of rows"},
    {"sample --in @/short.f32 --vocab 4 --temperature 1", "not a whole number of rows"},
    {"sample --in @/empty.bin --vocab 4 --temperature 1", "is empty"},
    {"sample --in @/nosuch --vocab 4 --temperature 1", "cannot open"},
    {"sample --in @/logits.f32 --vocab 4 --temperature nan", "bad --temperature 'nan'"},
    {"sample --in @/logits.f32 --vocab 4 --temperature 1 --top-p -0.5", "top_p must be in [0, 1]"},
    {"sample --in @/logits.f32 --vocab 4 --temperature 1 --input weird", "--input must be logits or probs"},
    {"sample --in @/logits.f32 --vocab 4 --temperature 1 --dtype f64", "--dtype must be f32 or bf16"},
    {"sample --bench --in @/logits.f32", "--in does not apply"},
    {"sample --in @/negative.f32 --vocab 4 --temperature 1 --input probs", "must be finite and >= 0"},
    /* machine */
    {"machine --format yaml", "--format must be md or json"},
    {"machine --threads 0", "--threads needs an integer in [1, 4096]"},
    {"machine --threads 9999", "--threads needs an integer in [1, 4096]"},
    {"machine --events ,", "--events: empty event name"},
    /* compare: run folders missing, empty, binary, of the wrong shape, unfinished, of another model */
    {"compare", "needs two runs"},
    {"compare @/runs/whole", "needs two runs"},
    {"compare @/runs/whole @/runs/whole @/runs/whole", "more than two runs"},
    {"compare @/runs/whole @/runs/whole --out", "--out needs a folder"},
    {"compare @/runs/whole @/runs/whole --bogus", "unknown option '--bogus'"},
    {"compare @/runs/shapeless @/runs/whole", "missing key 'provenance'"},
    {"compare @/runs/whole @/runs/array", "run.json"},
    {"compare @/runs/whole @/runs/blocks-string", "run.json"},
    {"compare @/runs/garbage.json @/runs/whole", "not valid JSON"},
    {"compare @/runs/truncated @/runs/whole", "not valid JSON"},
    {"compare @/nosuch @/runs/whole", "No such file or directory"},
    {"compare @/empty.bin @/runs/whole", "not valid JSON"},
    {"compare @/runs/whole @/runs/unfinished", "not a complete run"},
    {"compare @/runs/whole @/runs/.host-20261204T000000Z.tmp", "not a complete run"},
    {"compare @/runs/whole @/runs/other-model", "use --force"},
    /* list and the command table */
    {"list extra", "list: takes no arguments"},
    {"nosuchcommand", "unknown command 'nosuchcommand'"},
};

static char fix[256];

static void put(const char *name, const void *bytes, size_t n) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", fix, name);
    FILE *f = fopen(p, "wb");
    cr_assert_not_null(f, "%s", p);
    if (n) cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

static void folder(const char *name) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", fix, name);
    cr_assert_eq(mkdir(p, 0777), 0, "%s", p);
}

static void other_model(struct run_report *r) {
    snprintf(r->model.name, sizeof r->model.name, "qwen3-4b");
}

static void make_fixtures(void) {
    tu_tmpdir(fix, sizeof fix);
    unsigned char garbage[1000];
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (unsigned char)(i * 2654435761u >> 13);
    put("empty.bin", "", 0);
    put("garbage.bin", garbage, sizeof garbage);
    put("trunc.safetensors", "\x10\0\0\0\0\0\0\0{\"a\":", 13);
    float logits[1024], negative[4] = {0.5f, -0.25f, 0.5f, 0.25f};
    for (int i = 0; i < 1024; i++) logits[i] = (float)(i % 17) * 0.25f;
    put("logits.f32", logits, sizeof logits);
    put("negative.f32", negative, sizeof negative);
    put("short.f32", "abc", 3);
    folder("arr"), put("arr/config.json", "[1,2,3]\n", 8);
    folder("emptymodel"), put("emptymodel/config.json", "", 0);
    folder("binmodel"), put("binmodel/config.json", garbage, sizeof garbage);
    const char wrong[] = "{\"model_type\": \"qwen3\", \"hidden_size\": \"big\", \"num_hidden_layers\": 28}";
    folder("wrongtype"), put("wrongtype/config.json", wrong, sizeof wrong - 1);
    folder("runs");
    char runs[300];
    snprintf(runs, sizeof runs, "%s/runs", fix);
    report_fixture_write_run(runs, "whole", 1.0, NULL);
    report_fixture_write_run(runs, "other-model", 1.0, other_model);
    report_fixture_write_run(runs, "unfinished", 1.0, NULL);
    put("runs/unfinished/INCOMPLETE", "", 0);
    report_fixture_write_run(runs, ".host-20261204T000000Z.tmp", 1.0, NULL);
    folder("runs/shapeless"), put("runs/shapeless/run.json", "{\"schema\": \"forge-roofline/1\"}", 30);
    folder("runs/array"), put("runs/array/run.json", "[]", 2);
    const char bs[] = "{\"schema\": \"forge-roofline/1\", \"provenance\": {}, \"blocks\": \"many\"}";
    folder("runs/blocks-string"), put("runs/blocks-string/run.json", bs, sizeof bs - 1);
    put("runs/garbage.json", garbage, sizeof garbage);
    /* the whole run's run.json cut in half */
    char *text = tu_slurp(runs, "whole/run.json");
    cr_assert_not_null(text);
    folder("runs/truncated");
    put("runs/truncated/run.json", text, strlen(text) / 2);
    free(text);
}

static void args_for(const char *tmpl, char *out, size_t len) {
    size_t o = 0;
    for (const char *c = tmpl; *c && o + 1 < len; c++) {
        if (*c == '@') {
            int n = snprintf(out + o, len - o, "%s", fix);
            o += n > 0 ? (size_t)n : 0;
        } else {
            out[o++] = *c;
        }
    }
    out[o < len ? o : len - 1] = '\0';
}

Test(bad_input, each_is_one_line_and_exit_2, .timeout = 600) {
    size_t n = sizeof cases / sizeof cases[0];
    cr_assert_geq(n, 40, "at least 40 bad inputs");
    make_fixtures();
    static struct cli_result r;
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        char args[1024];
        args_for(cases[i].args, args, sizeof args);
        cli_run(&r, 0, args);
        const char *nl = strchr(r.err, '\n');
        bool one_line = strncmp(r.err, "forge-roofline: ", 16) == 0 && nl && nl[1] == '\0';
        bool says = strstr(r.err, cases[i].says) != NULL;
        if (r.status != 2 || !one_line || !says) failed++;
        cr_expect_eq(r.status, 2, "case %zu '%s': exit %d, stderr: %s", i, cases[i].args, r.status, r.err);
        cr_expect(one_line, "case %zu '%s': not one line: %s", i, cases[i].args, r.err);
        cr_expect(says, "case %zu '%s': expected '%s' in: %s", i, cases[i].args, cases[i].says, r.err);
    }
    cr_log_info("bad input: %zu cases, %d failed", n, failed);
    tu_rm_tree(fix);
}
