/* SPDX-License-Identifier: MIT */
/* dsh-sandbox: subcommand dispatch.  Each subcommand lives in its own cmd-*.c file. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "options.h"

struct subcommand {
        const char *name;
        int (*run)(int argc, char **argv);
        const char *summary;
};

static const struct subcommand subcommands[] = {
        { "run", cli_command_run, "run a program confined under a file-write policy" },
        { "bash", cli_command_bash, "run a shell command as an agent's bash tool: attributed, with markers" },
        { "confine", cli_command_confine, "print the confined argv for a command as JSON" },
        { "probe", cli_command_probe, "report which sandbox backends work on this host" },
        { "session", cli_command_session, "create, switch and inspect durable sessions" },
        { "policy", cli_command_policy, "resolve the execution policy; print the runtime context" },
        { "why", cli_command_why, "say whether the policy allows an operation, the rule and the grant" },
        { "fs", cli_command_fs, "write, edit, create, remove, move and read files under the same policy" },
        { "mcp", cli_command_mcp, "serve the bash and file tools to an agent over MCP (stdio)" },
        { "serve", cli_command_serve, "serve all of the above as JSON-RPC 2.0 on stdin and stdout" },
        /* Internal (no summary: not listed in the help): the remote side of one --remote call, over ssh's stdio. */
        { "remote-helper", cli_command_remote_helper, NULL },
        /* Internal: the remote side of every --remote call to one destination, over one shared connection. */
        { "remote-service", cli_command_remote_service, NULL },
};

#define SUBCOMMAND_COUNT (sizeof(subcommands) / sizeof(subcommands[0]))

/* The help text, with one line per subcommand from the table above (the internal ones left out). */
static const char *help_text(char *buffer, size_t size)
{
        size_t used = (size_t) snprintf(buffer, size,
                                        "Usage: dsh-sandbox [--help | --version] COMMAND [OPTIONS] [ARGS]\n"
                                        "A process sandbox for AI coding agents: commands write only where the "
                                        "policy allows.\n\nCommands:\n");

        for (size_t i = 0; i < SUBCOMMAND_COUNT && used < size; i++) {
                if (subcommands[i].summary)
                        used += (size_t) snprintf(buffer + used, size - used, "  %-9s %s\n", subcommands[i].name,
                                                  subcommands[i].summary);
        }
        if (used < size)
                snprintf(buffer + used, size - used,
                         "\nRun 'dsh-sandbox COMMAND --help' for a command's options.  Options end at the first\n"
                         "operand (or at `--`): `dsh-sandbox run make -j4` runs `make -j4`.\n"
                         "Exit status: run passes the program's own on; otherwise 0 on success, 1 on failure,\n"
                         "2 for a usage error, 125 when the sandbox could not confine a command (it never ran).\n");
        return buffer;
}

int main(int argc, char **argv)
{
        char help[2048];
        const cli_command_line line = { .name = NULL, .help = help_text(help, sizeof(help)) };
        int first = argc, result;

        /* The global options are --help and --version alone; a COMMAND's own come after its name. */
        result = cli_options_parse(&line, argc, argv, NULL, &first);
        if (result != 0)
                return cli_command_status(result);
        if (first >= argc)
                return cli_usage_error("missing COMMAND");
        for (size_t i = 0; i < SUBCOMMAND_COUNT; i++)
                if (strcmp(argv[first], subcommands[i].name) == 0)
                        return subcommands[i].run(argc - first, argv + first);
        return cli_usage_error("unknown command \"%s\"", argv[first]);
}
