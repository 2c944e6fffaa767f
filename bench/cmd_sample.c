/* forge-roofline sample: placeholder until its issue lands. */
#include "bench/cli.h"

int cmd_sample(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_fail("'sample' is not implemented yet");
}
