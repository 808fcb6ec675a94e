/* SPDX-License-Identifier: MIT */
/* dsh-sandbox: subcommand dispatch.  Each subcommand lives in its own cmd-*.c file. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config.h"

struct subcommand {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *summary;
};

static const struct subcommand subcommands[] = {
        { "run", cli_command_run, "run a program confined under a file-write policy" },
        { "confine", cli_command_confine, "print the confined argv for a command as JSON" },
        { "probe", cli_command_probe, "report which sandbox backends work on this host" },
        { "session", cli_command_session, "create, switch and inspect durable sessions" },
        { "policy", cli_command_policy, "resolve the execution policy; print the runtime context" },
};

static void print_help(void)
{
        printf("Usage: dsh-sandbox COMMAND [OPTIONS]\n"
               "A process sandbox for AI coding agents: commands write only where the policy allows.\n\n"
               "Commands:\n");
        for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
                printf("  %-9s %s\n", subcommands[i].name, subcommands[i].summary);
        printf("\nRun 'dsh-sandbox COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
        if (argc < 2)
                return cli_usage_error("missing COMMAND");
        if (cli_is_help(argv[1])) {
                print_help();
                return CLI_EXIT_SUCCESS;
        }
        if (strcmp(argv[1], "--version") == 0) {
                printf("dsh-sandbox %s\n", DSH_SANDBOX_VERSION);
                return CLI_EXIT_SUCCESS;
        }
        for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
                if (strcmp(argv[1], subcommands[i].name) == 0)
                        return subcommands[i].run(argc - 1, argv + 1);
        return cli_usage_error("unknown command \"%s\"", argv[1]);
}
