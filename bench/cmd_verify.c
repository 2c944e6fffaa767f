/* forge-roofline verify: placeholder until its issue lands. */
#include "bench/cli.h"

int cmd_verify(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_fail("'verify' is not implemented yet");
}
