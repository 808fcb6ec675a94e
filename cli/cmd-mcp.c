/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox mcp [policy options]`: the MCP server (service/mcp.h) on
 * stdin and stdout.  The policy options are the server's for its whole
 * life; the model's tool calls can never name one.  They are resolved once
 * here, so that a bad root, an unknown session or a config that does not
 * load is refused at start (and the client shows the server as failed)
 * rather than on every call.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mcp.h"
#include "options.h"
#include "policy-options.h"

static const char mcp_help[] =
        "Usage: dsh-sandbox mcp [policy options]\n"
        "Serves the Model Context Protocol on stdin and stdout (one JSON-RPC message per line; stderr for\n"
        "logs) until the end of its input.  Its tools — bash, read_file, write_file, edit_file,\n"
        "create_directory, remove, move — run every command and every file change under the policy\n"
        "the options give (with --session, the session's, read again on each call).  A bash call may ask\n"
        "for a wider mode (sandbox_permissions + justification): the client's user is asked through MCP\n"
        "elicitation, and a client without elicitation gets a refusal.\n"
        "At the end of input, and on SIGTERM, SIGINT or SIGHUP (it then ends by that signal), every\n"
        "command still running is killed.  An MCP client runs it as its server's command, e.g.\n"
        "  claude mcp add dsh-sandbox -- dsh-sandbox mcp --mode workspace-write\n"
        "Exit status: 0 at the end of input; 1 when its input cannot be read; 2 for a usage error;\n"
        "125 when the policy cannot be resolved (nothing is served).\n\n";

/*
 * The policy of every call, from the command line: the session and the
 * explicit fields over it.  Relative paths are made absolute here, against
 * the directory the server was started in, because the server then moves
 * to the workspace root (below) and they must keep their meaning.
 */
struct command_line_policy {
        service_policy_fields fields;
        char *root;             /* owned: --root, absolute */
        char **allow_write;     /* owned: --allow-write, absolute */
        char *config_path;      /* owned: --config, absolute (the pool reads it again for each runtime it makes) */
};

static int policy_fields(const cli_policy_options *options, struct command_line_policy *policy)
{
        dsh_policy_request request;
        int result = cli_policy_request(options, &request);

        if (result != 0)
                return result;
        policy->fields = (service_policy_fields) SERVICE_POLICY_FIELDS_INIT;
        policy->fields.session_id = options->session;
        policy->fields.has_mode = request.has_mode;
        policy->fields.mode = request.mode;
        policy->fields.backend = options->backend;
        if (options->root && !(policy->root = cli_path_from_cwd(options->root)))
                result = -ENOMEM;
        if (options->config_path && !(policy->config_path = cli_path_from_cwd(options->config_path)))
                result = -ENOMEM;
        for (size_t i = 0; result == 0 && options->allow_write && options->allow_write[i]; i++) {
                char *absolute = cli_path_from_cwd(options->allow_write[i]);

                if (!absolute || dsh_strv_append(&policy->allow_write, absolute) < 0)
                        result = -ENOMEM;
                free(absolute);
        }
        if (result < 0) {
                cli_print_message("mcp: %s", strerror(-result));
                return CLI_EXIT_FAILURE;
        }
        policy->fields.root = policy->root;
        policy->fields.allow_write = policy->allow_write;
        return 0;
}

/*
 * Resolves the policy once and makes a file guard for it (which checks a
 * workspace-write policy as a runner does: the root exists, no writable
 * root holds the sandbox's own files), to refuse at start what every call
 * would refuse; warns about options without effect.  Then moves to the
 * workspace root: commands run in the server's working directory and the
 * file tools take relative paths from the workspace root, and the two must
 * be one directory, or `cat notes.txt` and read_file("notes.txt") would
 * read different files.
 */
static int check_policy_and_enter_root(service_context *context, const cli_policy_options *options,
                                       const service_policy_fields *fields)
{
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_file_guard *guard = NULL;
        int result = 0;

        if (service_resolve(context, fields, &policy, &error) < 0 ||
            service_file_guard(context, fields, &guard, &error) < 0) {
                cli_print_error(&error);
                result = cli_exit_status_for_error(&error);
                if (result == CLI_EXIT_FAILURE)
                        result = CLI_EXIT_SANDBOX;
        } else if (chdir(policy.workspace_root) < 0) {
                cli_print_message("mcp: cannot enter the workspace root \"%s\": %s", policy.workspace_root,
                                  strerror(errno));
                result = CLI_EXIT_SANDBOX;
        } else {
                cli_policy_options_warn_without_effect(options, policy.mode);
        }
        dsh_file_guard_free(guard);
        dsh_policy_clear(&policy);
        dsh_error_clear(&error);
        return result;
}

static int serve(const cli_policy_options *options)
{
        struct command_line_policy policy = { SERVICE_POLICY_FIELDS_INIT, NULL, NULL, NULL };
        dsh_runtime_options runtime_options;
        service_context *context = NULL;
        dsh_error error = DSH_ERROR_INIT;
        int result = policy_fields(options, &policy);

        cli_policy_runtime_options(options, &runtime_options);
        if (policy.config_path)
                runtime_options.config_path = policy.config_path;
        if (result == 0 && service_context_new(&runtime_options, &context, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_SANDBOX);
        if (result == 0)
                result = check_policy_and_enter_root(context, options, &policy.fields);
        if (result == 0) {
                /*
                 * A client that goes away is the end of the input, never a
                 * SIGPIPE that orphans a command.  SIGTERM, SIGINT and SIGHUP
                 * kill every running command, then end the server by the signal.
                 */
                signal(SIGPIPE, SIG_IGN);
                int served = mcp_serve(context, &policy.fields, STDIN_FILENO, STDOUT_FILENO, cli_catch_stopping_signals());

                if (served < 0) {
                        cli_print_message("mcp: cannot serve: %s", strerror(-served));
                        result = CLI_EXIT_FAILURE;
                }
        }
        if (context)
                service_context_free(context);
        free(policy.root);
        free(policy.config_path);
        dsh_strv_free(policy.allow_write);
        return result;
}

int cli_command_mcp(int argc, char **argv)
{
        const cli_command_line line = {
                .name = "mcp",
                .help = mcp_help,
                .policy_options = CLI_POLICY_ALL,
        };
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        if (result == 0)
                result = cli_refuse_operands(line.name, argc, argv, operands);
        if (result == 0)
                result = serve(&options);
        cli_policy_options_clear(&options);
        return result < 0 ? CLI_EXIT_SUCCESS : result;
}
