/* forge-roofline: the command-line entry point. Dispatches to the subcommands of bench/cli/cli.h; with no
 * subcommand, `forge-roofline --model M ...` is the full run (cmd_run). */
#include "bench/cli/cli.h"

#include <stdio.h>
#include <string.h>

#include "roofline/blas_core.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *what;
};

static const struct command commands[] = {
    {"run", cmd_run, "full run: machine, verify, blocks, steps, sampler, report (the default)"},
    {"predict", cmd_predict, "predicted FLOPs and bytes per block and per decode step"},
    {"decode", cmd_decode, "run the Qwen3 decode loop on synthetic, GGUF or safetensors weights"},
    {"quantize", cmd_quantize, "write a checkpoint's matrices as a Q8_0 or Q4_0 GGUF file"},
    {"verify", cmd_verify, "check every optimized kernel against its reference"},
    {"sample", cmd_sample, "sample token ids from rows of logits or probabilities"},
    {"machine", cmd_machine, "topology (hwloc) and measured ceilings"},
    {"compare", cmd_compare, "compare two runs for a pull request"},
    {"lockstep", cmd_lockstep, "two full runs taking turns, one repetition each (for a compare)"},
    {"list", cmd_list, "list blocks, models and counter events"},
    {"tokenize", cmd_tokenize, "text to Qwen3 token ids (tokenizer.json or GGUF)"},
    {"detokenize", cmd_detokenize, "Qwen3 token ids to text"},
    {"history", cmd_history, "every run remembered: series, shifts and trends per machine"},
};

static void usage(FILE *f) {
    fprintf(f, "usage: forge-roofline [COMMAND] [OPTIONS]\n"
               "       forge-roofline --model qwen3-0.6b [run options]   (full run)\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].what);
    fprintf(f, "\n'forge-roofline COMMAND --help' shows a command's options.\n"
               "  --help, -h     this text\n  --version      version\n  --list         same as 'list'\n");
}

static int dispatch(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(first, "--version") == 0) {
        printf("forge-roofline %s\n", FR_VERSION);
        return CLI_EXIT_OK;
    }
    if (strcmp(first, "--list") == 0) return cmd_list(argc - 1, argv + 1);
    if (first[0] == '-') return cmd_run(argc, argv); /* options only: the full run */
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(first, commands[i].name) == 0) return commands[i].fn(argc - 1, argv + 1);
    return cli_usage_error("unknown command '%s' (try --help)", first);
}

int main(int argc, char **argv) {
    /* before anything runs: OpenBLAS read its core when it loaded, so a fallback needs a fresh exec */
    blas_core_restart_if_generic(argv);
    int rc = dispatch(argc, argv);
    /* a full disk or a closed pipe on stdout is a failure, not a silent success */
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == CLI_EXIT_OK) rc = cli_fail("write error on stdout");
    return rc;
}
