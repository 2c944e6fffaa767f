/* The full run's weights phase on gguf-py's fixture: the provenance names the file, its format and its
 * SHA-256 (against coreutils' sha256sum), and after the fixed prompt every sampler call samples the
 * model's own logits for that prompt, whatever the step computed last. Synthetic weights keep the run as it
 * was. Bad --weights files fail before anything is measured. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "bench/cli/run_weights.h"
#include "model/weights_file.h"
#include "tests/cli_run.h"

#define GGUF_FIX "tests/fixtures/gguf/tiny-bf16.gguf"

Test(run_weights, file_weights_record_the_file_and_sample_the_prompt_logits, .timeout = 60) {
    static struct run_report rep;
    struct qwen3_config c;
    struct fr_err err = {{0}};
    cr_assert_eq(weights_file_config(GGUF_FIX, NULL, &c, &err), 0, "%s", err.msg);
    struct qwen3_weights w;
    cr_assert_eq(qwen3_weights_alloc(&w, &c, FR_DTYPE_BF16, &err), 0, "%s", err.msg);
    struct run_weights rw = {.file = GGUF_FIX};
    cr_assert_eq(run_weights_load(&rw, &w, &rep, &err), 0, "%s", err.msg);
    cr_expect_str_eq(rep.prov.weights_source, "file");
    cr_expect_str_eq(rep.prov.weights_file, GGUF_FIX);
    cr_expect_str_eq(rep.prov.weights_format, "gguf");
    char want[80] = "";
    FILE *p = popen("sha256sum " GGUF_FIX, "r");
    cr_assert_not_null(p);
    cr_assert(fgets(want, sizeof want, p));
    pclose(p);
    want[64] = '\0';
    cr_expect_str_eq(rep.prov.weights_sha256, want);

    struct decode_state st;
    cr_assert_eq(decode_state_init(&st, &w, 32, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, 1, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(run_weights_prompt(&rw, &st, &rep, &err), 0, "%s", err.msg);
    cr_assert_eq(st.sample_logits, rw.prompt_logits);
    cr_expect(strstr(rep.prov.sampler_logits, "fixed prompt") != NULL, "%s", rep.prov.sampler_logits);
    int want_tok = 0;
    for (int i = 1; i < c.vocab; i++)
        if (rw.prompt_logits[i] > rw.prompt_logits[want_tok]) want_tok = i;
    /* a later step overwrites st.logits; greedy sampling still picks the prompt's argmax */
    cr_assert_eq(decode_step(&st, 5, 20, NULL, &err), 0, "%s", err.msg);
    int other = 0;
    for (int i = 1; i < c.vocab; i++)
        if (st.logits[i] > st.logits[other]) other = i;
    st.sampler_params = (struct sampler_params){.temperature = 0.0f, .top_p = 1.0f, .seed = 0};
    cr_assert_eq(decode_block_run(&st, BLOCK_SAMPLER, 0, 21), 0, "%s", st.err.msg);
    cr_expect_eq(st.sampled_token, want_tok, "sampled %d, the prompt's argmax is %d (the last step's %d)",
                 st.sampled_token, want_tok, other);
    decode_state_free(&st);
    run_weights_free(&rw);
    qwen3_weights_free(&w);
}

Test(run_weights, synthetic_weights_say_so) {
    static struct run_report rep;
    struct qwen3_config c;
    struct fr_err err = {{0}};
    cr_assert_eq(weights_file_config(NULL, "tests/fixtures/tiny-qwen3", &c, &err), 0, "%s", err.msg);
    struct qwen3_weights w;
    cr_assert_eq(qwen3_weights_alloc(&w, &c, FR_DTYPE_BF16, &err), 0, "%s", err.msg);
    struct run_weights rw = {0};
    cr_assert_eq(run_weights_load(&rw, &w, &rep, &err), 0, "%s", err.msg);
    cr_expect_str_eq(rep.prov.weights_source, "synthetic");
    cr_expect_str_eq(rep.prov.weights_file, "");
    struct decode_state st;
    cr_assert_eq(decode_state_init(&st, &w, 4, FR_DTYPE_BF16, MATVEC_BACKEND_FORGE, 1, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(run_weights_prompt(&rw, &st, &rep, &err), 0, "%s", err.msg);
    cr_expect_null(st.sample_logits);
    cr_expect_null(rw.prompt_logits);
    decode_state_free(&st);
    qwen3_weights_free(&w);
}

Test(run_weights, bad_weights_fail_before_measuring) {
    const char *cmds[] = {
        "--weights /nonexistent.gguf --quick",
        "--weights tests/fixtures/gguf/tiny-bf16.safetensors --quick",
        "--model tests/fixtures/tiny-qwen3 --weights " GGUF_FIX " --quick",
        "--model tests/fixtures/tiny-qwen3 --weights tests/fixtures/gguf/tiny-bf16.safetensors --quick",
        "--weights tests/fuzz/corpus/fuzz_gguf/missing-tensor.gguf --quick",
    };
    cli_expect_usage_errors(1, cmds, sizeof cmds / sizeof cmds[0]);
}
