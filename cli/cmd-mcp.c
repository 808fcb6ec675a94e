/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox mcp [policy options]`: the MCP server (service/mcp.h) on
 * stdin and stdout.  The policy options are the server's for its whole
 * life; the model's tool calls can never name one.  They are resolved once
 * here, so that a bad root, an unknown session, a config that does not
 * load or no usable backend is refused at start rather than on every call:
 * said on stderr, and to the client as the answer to every request
 * (initialize first), so that it shows the cause and not only "connection
 * closed"; the exit status (125) follows at the end of input.
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
        "  claude mcp add dsh-sandbox -- dsh-sandbox mcp --mode workspace-write --root \"$PWD\"\n"
        "Commands start in the workspace root (the bash tool's cwd argument may name another directory);\n"
        "the file tools take relative paths from it.  The instructions and the bash tool's description\n"
        "tell the model the mode, the root, the extra writable roots and what /tmp is.\n"
        "Exit status: 0 at the end of input; 1 when its input cannot be read; 2 for a usage error;\n"
        "125 when the policy cannot be served: every request is then answered with an error naming the\n"
        "cause, until the end of input, and nothing else is done.\n\n";

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
        /* Made absolute and checked when parsed (cli/options.c); `options` outlives the server. */
        policy->fields.allow_unix_sockets = options->allow_unix_socket;
        /* Every call's network, replacing the config's whole, as run's flags do (`options` outlives the server). */
        policy->fields.network = request.network;
        /* Checked when parsed; every call's masks and allowed names, as run's flags give them. */
        policy->fields.masked_paths = options->mask;
        policy->fields.allowed_environment = options->allow_env;
        return 0;
}

/*
 * Said on stderr, then to the client: every request answered with the
 * cause until the end of input (mcp_serve_refusal).  Returns the exit status.
 */
static int refuse_to_serve(dsh_error *error)
{
        int served;

        cli_print_error(error);
        signal(SIGPIPE, SIG_IGN);
        served = mcp_serve_refusal(error, STDIN_FILENO, STDOUT_FILENO, cli_catch_stopping_signals());
        dsh_error_clear(error);
        if (served < 0)
                cli_print_message("mcp: cannot serve: %s", strerror(-served));
        return CLI_EXIT_SANDBOX;
}

/*
 * Resolves the policy once, makes a file guard for it (which checks a
 * workspace-write policy as a runner does: the root exists, no writable
 * root holds the sandbox's own files) and describes it, which finds the
 * backend that confines it: what every call would refuse is refused at
 * start (*error set, nothing served).  Warns about options without effect.
 * Then moves to the workspace root, so that the server's own relative
 * paths mean what the model's do (the bash tool starts its commands there
 * itself, and the file tools take relative paths from it).
 */
static int check_policy_and_enter_root(service_context *context, const cli_policy_options *options,
                                       const service_policy_fields *fields, char **policy_text, dsh_error *error)
{
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_file_guard *guard = NULL;
        int result = 0;

        if (service_resolve(context, fields, &policy, error) < 0 ||
            service_file_guard(context, fields, &guard, error) < 0 ||
            mcp_describe_policy(context, fields, policy_text, error) < 0) {
                result = -EINVAL;
        } else if (chdir(policy.workspace_root) < 0) {
                result = -errno;
                dsh_error_clear(error);
                error->code = DSH_ERROR_SANDBOX_INVALID_ROOT;
                error->errno_value = -result;
                if (asprintf(&error->message, "cannot enter the workspace root \"%s\": %s", policy.workspace_root,
                             strerror(-result)) < 0)
                        error->message = NULL;
        } else {
                cli_policy_options_warn_without_effect(options, policy.mode);
        }
        dsh_file_guard_free(guard);
        dsh_policy_clear(&policy);
        return result;
}

static int serve(const cli_policy_options *options)
{
        struct command_line_policy policy = { SERVICE_POLICY_FIELDS_INIT, NULL, NULL, NULL };
        dsh_runtime_options runtime_options;
        service_context *context = NULL;
        dsh_error error = DSH_ERROR_INIT;
        char *policy_text = NULL;
        int result = policy_fields(options, &policy);

        cli_policy_runtime_options(options, &runtime_options);
        if (policy.config_path)
                runtime_options.config_path = policy.config_path;
        if (result == 0 && (service_context_new(&runtime_options, &context, &error) < 0 ||
                            check_policy_and_enter_root(context, options, &policy.fields, &policy_text, &error) < 0))
                result = refuse_to_serve(&error);
        if (result == 0) {
                /*
                 * A client that goes away is the end of the input, never a
                 * SIGPIPE that orphans a command.  SIGTERM, SIGINT and SIGHUP
                 * kill every running command, then end the server by the signal.
                 */
                signal(SIGPIPE, SIG_IGN);
                int served = mcp_serve(context, &policy.fields, policy_text, STDIN_FILENO, STDOUT_FILENO,
                                       cli_catch_stopping_signals());

                if (served < 0) {
                        cli_print_message("mcp: cannot serve: %s", strerror(-served));
                        result = CLI_EXIT_FAILURE;
                }
        }
        if (context)
                service_context_free(context);
        free(policy_text);
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
        return cli_command_status(result);
}
