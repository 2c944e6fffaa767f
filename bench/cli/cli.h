/* Layer: bench/cli/ is the top of the include graph: main.c and one cmd_<name>.c per command; it uses the
 * suites (bench/), the writers (bench/report/), roofline/, model/ and kernels/.
 * Shared pieces of the forge-roofline command line: the subcommand table, exit codes, and strict parsers
 * for option values (a bad value is a one-line usage error, exit status 2). */
#ifndef FR_CLI_H
#define FR_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/kernels.h"

#define FR_VERSION "0.1.0"

enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,  /* a measurement or validation failed, or a runtime error */
    CLI_EXIT_USAGE = 2, /* bad option, bad value, bad input file */
    CLI_EXIT_BUSY = 3,  /* another run holds the machine lock and --no-wait was given */
};

/* The seed of decode's and quantize's synthetic weights: a fixed one makes two runs of the same command agree
 * token for token, and `quantize --model M` write the weights `decode --model M` runs. */
#define CLI_SYNTHETIC_SEED 0x5eedULL

/* Subcommands; each takes argv with argv[0] = the subcommand name. */
int cmd_run(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_decode(int argc, char **argv);
int cmd_quantize(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_sample(int argc, char **argv);
int cmd_machine(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_lockstep(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_detokenize(int argc, char **argv);
int cmd_history(int argc, char **argv);

/* Appends a completed run folder (compare: a compare folder) to the history store `where` (NULL: the
 * history.sqlite beside the folder) and says so on stderr in one line. A failure is said in one line too,
 * with the folder left whole and how to import it later; returns CLI_EXIT_FAIL then. */
int cli_history_append(const char *where, const char *dir, bool compare);

/* Takes the machine lock (bench/cli/machine_lock.h) for `command`, waiting for it when `wait`: 0 when taken;
 * else says why in one line and returns CLI_EXIT_BUSY (held by another run, not waiting) or CLI_EXIT_FAIL. */
struct machine_lock;
int cli_take_machine_lock(struct machine_lock *l, const char *path, const char *command, bool wait);

/* Prints "forge-roofline: <message>" to stderr and returns CLI_EXIT_USAGE. */
__attribute__((format(printf, 1, 2))) int cli_usage_error(const char *fmt, ...);
/* Prints "forge-roofline: <message>" to stderr and returns CLI_EXIT_FAIL. */
__attribute__((format(printf, 1, 2))) int cli_fail(const char *fmt, ...);

/* Strict parsers: the whole string must be the number, in [lo, hi]. Return 0 on success. */
int cli_parse_long(const char *s, long lo, long hi, long *out);
int cli_parse_u64(const char *s, unsigned long long *out);
int cli_parse_double(const char *s, double *out); /* finite numbers only */
/* A finite number that f32 holds without overflowing or underflowing to zero (1e-50 is refused, not 0). */
int cli_parse_float(const char *s, float *out);
/* "1,1024,4096" -> values in [lo, hi]; at most max_n. Returns the count, or -1 on a malformed list. */
int cli_parse_long_list(const char *s, long lo, long hi, long *out, int max_n);

/* --isa NAME, every command that runs kernels: pins the kernels, the sampler and the ceiling kernels to one
 * instruction set (name NULL: the best the CPU has, the sampler pinned to the kernels' set either way). A
 * name other than scalar, avx2 or avx512, one the CPU lacks, or a bad FORGE_ROOFLINE_MAX_ISA is a one-line
 * usage error: returns CLI_EXIT_USAGE. So is --isa with --gemv openblas or onednn (gemv): those libraries
 * pick their own kernels. prefix starts the message (e.g. "decode: ", or ""). */
int cli_isa_apply(const char *prefix, const char *name, enum matvec_backend gemv);
/* The usage text of --isa, one line. */
#define CLI_ISA_HELP "scalar, avx2 or avx512: pins kernels, sampler and ceiling kernels (default: the best)"

/* The counter source of every command that counts: PAPI for each event it counts, the kernel's
 * perf_event_open for the software events it does not (roofline/perf_events.h). FORGE_ROOFLINE_NO_PAPI=1 in
 * the environment leaves PAPI out (its events then say so): the fallback a CPU unknown to PAPI takes, on any
 * machine. *config receives the source's configuration (static storage). */
struct counters_source;
const struct counters_source *cli_counter_source(const void **config);

/* True when paths a and b both exist and name the same file (an output that would overwrite an input). */
bool cli_same_file(const char *a, const char *b);
/* True when path itself (not a link) is a regular file: an output that may be removed after a failure, where
 * a device (/dev/full), FIFO or link (/dev/stdout) must never be. */
bool cli_is_plain_file(const char *path);

#endif
