/* SPDX-License-Identifier: MIT */
#include "cli.h"

int cli_command_confine(int argc, char **argv)
{
        (void) argc;
        (void) argv;
        cli_print_message("confine: not available in this build");
        return CLI_EXIT_FAILURE;
}
