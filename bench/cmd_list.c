/* forge-roofline list: placeholder until its issue lands. */
#include "bench/cli.h"

int cmd_list(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_fail("'list' is not implemented yet");
}
