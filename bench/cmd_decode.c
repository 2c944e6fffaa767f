/* forge-roofline decode: placeholder until its issue lands. */
#include "bench/cli.h"

int cmd_decode(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_fail("'decode' is not implemented yet");
}
