/* Runs the forge-roofline CLI from tests: captures stdout, stderr and the exit status. */
#ifndef FR_TESTS_CLI_RUN_H
#define FR_TESTS_CLI_RUN_H

#include <stddef.h>

struct cli_result {
    int status;      /* exit status, or -1 if it did not exit normally */
    char out[65536]; /* stdout (truncated) */
    char err[8192];  /* stderr (truncated) */
};

/* Runs "$FORGE_ROOFLINE_BIN <args>" (args is a shell-quoted string) and fills r. fast = use the -O3 binary.
 */
void cli_run(struct cli_result *r, int fast, const char *args);

/* Runs each command and expects a usage error: exit status 2 and one stderr line "forge-roofline: ...". */
void cli_expect_usage_errors(int fast, const char *const *cmds, size_t n);
/* The single run folder a full run left under parent, into out (asserts there is exactly one). */
void cli_find_run(const char *parent, char *out, size_t len);

#endif
