/* SPDX-License-Identifier: MIT */
#include "cli.h"

int cli_command_session(int argc, char **argv)
{
        (void) argc;
        (void) argv;
        cli_print_message("session: not available in this build");
        return CLI_EXIT_FAILURE;
}
