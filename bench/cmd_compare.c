/* forge-roofline compare: placeholder until its issue lands. */
#include "bench/cli.h"

int cmd_compare(int argc, char **argv) {
    (void)argc;
    (void)argv;
    return cli_fail("'compare' is not implemented yet");
}
