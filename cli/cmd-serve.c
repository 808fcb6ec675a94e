/* SPDX-License-Identifier: MIT */
/*
 * `dsh-sandbox serve [--config FILE]`: the JSON-RPC 2.0 service on stdin and
 * stdout (service/serve.h, docs/service.md).  Each request names its own
 * policy, so the command line takes only the configuration every runtime of
 * the service reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "policy-options.h"
#include "runtime-cli.h"
#include "serve.h"

static const char serve_help[] =
        "Usage: dsh-sandbox serve [--config FILE] [--approval-timeout MS]\n"
        "Serves JSON-RPC 2.0 on stdin and stdout, one message per line (logs on stderr): sessions,\n"
        "policy resolution, confine, probe, the bash tool, guarded file operations and background\n"
        "jobs, each request under the policy its params name (sessionId, or mode, root, allowWrite,\n"
        "backend).  Requests run concurrently; \"$/cancelRequest\" {id} cancels one.  An escalation\n"
        "is approved by the client, through an \"approval/request\" request.  The methods and their\n"
        "params: docs/service.md.  End of input ends the service once the requests in flight have\n"
        "answered; jobs still running are killed then.  SIGTERM, SIGINT and SIGHUP end it at once,\n"
        "once every command it runs is killed (the service then dies of that signal).\n"
        "Exit status: 0 at end of input; 1 when the input cannot be read; 2 for a usage error or a\n"
        "config file that does not load.\n\n"
        "  -c, --config FILE      config file (default $DSH_SANDBOX_CONFIG, else\n"
        "                         $XDG_CONFIG_HOME/dsh-sandbox/config.json if present)\n"
        "      --approval-timeout MS  how long an approval/request is awaited before it counts as\n"
        "                         rejected (default 300000)\n";

enum { OPTION_APPROVAL_TIMEOUT = CLI_OPTION_OWN };

static const struct option serve_options_table[] = {
        { "approval-timeout", required_argument, NULL, OPTION_APPROVAL_TIMEOUT },
        { NULL, 0, NULL, 0 },
};

static int store_serve_option(int key, const char *value, void *data)
{
        serve_options *options = data;

        if (key == OPTION_APPROVAL_TIMEOUT)
                return cli_parse_positive("serve", "--approval-timeout", value, INT_MAX, &options->approval_timeout_ms);
        return 0;
}

int cli_command_serve(int argc, char **argv)
{
        cli_policy_options options = CLI_POLICY_OPTIONS_INIT;
        serve_options serving = SERVE_OPTIONS_INIT;
        dsh_runtime_options runtime_options;
        service_context *context = NULL;
        dsh_error error = DSH_ERROR_INIT;
        const cli_command_line line = {
                .name = "serve",
                .help = serve_help,
                .policy_options = CLI_POLICY_CONFIG,
                .own_options = serve_options_table,
                .own_option = store_serve_option,
                .data = &serving,
        };
        int operands = argc;
        int result = cli_options_parse(&line, argc, argv, &options, &operands);

        if (result == 0)
                result = cli_refuse_operands(line.name, argc, argv, operands);
        cli_policy_runtime_options(&options, &runtime_options);
        /* A bad config is refused now, before a single request is read. */
        if (result == 0 && service_context_new(&runtime_options, &context, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_FAILURE);
        /*
         * A client that closes our stdout must not kill the service with
         * SIGPIPE while commands run: the write fails (EPIPE) instead.  The
         * commands themselves start with SIGPIPE at its default (the spawn
         * resets it).
         */
        if (result == 0) {
                signal(SIGPIPE, SIG_IGN);
                serving.input_fd = STDIN_FILENO;
                serving.output_fd = STDOUT_FILENO;
                serving.stop_fd = cli_catch_stopping_signals();
        }
        if (result == 0 && serve_run(context, &serving, &error) < 0) {
                cli_print_error(&error);
                dsh_error_clear(&error);
                result = CLI_EXIT_FAILURE;
        }
        service_context_free(context);
        cli_policy_options_clear(&options);
        return cli_command_status(result);
}
