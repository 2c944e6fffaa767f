/* forge-roofline run: placeholder until its issue lands. */
#include "bench/cli.h"

int cmd_run(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_fail("'run' is not implemented yet");
}
