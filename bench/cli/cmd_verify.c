/* forge-roofline verify: runs the check tables of bench/verify_checks.c and kernels/kernels_check.c, then the
 * quantised decodes against bf16 (bench/quant_fidelity.h) on --model (default qwen3-0.6b) and --weights; one
 * line per check ending PASSED, FAILED, SKIPPED or MEASURED, then a summary. Exit status 1 if any check
 * failed (STREAM's lesson: a failed validation never exits 0). Checked end to end in
 * tests/test_sampler_cli.c and tests/test_quant_fidelity.c. */
#include <stdio.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "bench/cli/model_opts.h"
#include "bench/cli/run_weights.h"
#include "bench/verify_run.h"
#include "kernels/kernels.h"
#include "kernels/sampler.h"
#include "kernels/team.h"
#include "model/weights_file.h"
#include "roofline/timing.h"

#define VERIFY_DEFAULT_MODEL "qwen3-0.6b"

int cmd_verify(int argc, char **argv) {
    const char *only = NULL, *isa = NULL, *model = NULL, *weights = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: forge-roofline verify [--only PREFIX] [--list] [--isa scalar|avx2|avx512]\n"
                   "                             [--model M] [--weights FILE]\n"
                   "Checks every optimized kernel against its reference on seeded data; exit status 1 on any "
                   "failure.\n  --isa NAME: " CLI_ISA_HELP "; the sampler's cross-ISA checks run the sets up "
                   "to it\n"
                   "  --model M (default " VERIFY_DEFAULT_MODEL "), --weights FILE: the model whose q8_0 and "
                   "q4_0 decodes\n  decode.*_vs_bf16 compare with its bf16 decode (top-1 agreement and KL, "
                   "measured, not a verdict)\n");
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--list") == 0) {
            verify_list(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--isa") == 0 && i + 1 < argc) {
            isa = argv[++i];
        } else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
            model = argv[++i];
        } else if (strcmp(argv[i], "--weights") == 0 && i + 1 < argc) {
            weights = argv[++i];
        } else {
            return cli_usage_error("verify: unknown option '%s' (try --help)", argv[i]);
        }
    }
    int rc = cli_isa_apply("verify: ", isa, MATVEC_BACKEND_FORGE);
    if (rc) return rc;
    if (verify_count(only) == 0) return cli_usage_error("verify: no check matches '%s' (try --list)", only);
    const bool decode = verify_wants_model(only);
    if ((model || weights) && !decode)
        return cli_usage_error("verify: --%s applies to the decode.* checks, and --only '%s' selects none",
                               model ? "model" : "weights", only);
    struct qwen3_config cfg;
    struct fr_err err = {{0}};
    if (decode && weights) {
        if (weights_file_config(weights, model, &cfg, &err) != 0) return cli_usage_error("%s", err.msg);
    } else if (decode && (rc = model_opts_load(model ? model : VERIFY_DEFAULT_MODEL, &cfg)) != 0) {
        return rc;
    }
    const int threads = kernel_team_procs(); /* one per processor, as OpenMP's default team */
    printf("# forge-roofline verify: kernels isa %s, sampler isa %s, %d thread%s, timer resolution %.0f ns\n",
           kernel_isa_name(kernel_isa_active()), sampler_isa_name(sampler_isa_active()), threads,
           threads == 1 ? "" : "s", timing_resolution_s() * 1e9);
    const struct verify_model vm = {.cfg = &cfg,
                                    .weights_file = weights,
                                    .seed = RUN_SYNTHETIC_SEED,
                                    .prompt = run_prompt_ids,
                                    .prompt_len = RUN_PROMPT_LEN,
                                    .kv = FR_DTYPE_BF16};
    int counts[VERIFY_STATUS_COUNT];
    verify_run(stdout, only, threads, decode ? &vm : NULL, counts);
    printf("verify: %d passed, %d failed, %d skipped, %d measured\n", counts[VERIFY_PASSED],
           counts[VERIFY_FAILED], counts[VERIFY_SKIPPED], counts[VERIFY_MEASURED]);
    return counts[VERIFY_FAILED] ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
