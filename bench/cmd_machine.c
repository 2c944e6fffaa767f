/* forge-roofline machine: placeholder until its issue lands. */
#include "bench/cli.h"

int cmd_machine(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_fail("'machine' is not implemented yet");
}
