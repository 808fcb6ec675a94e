/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "policy-options.h"
#include "runtime-cli.h"

void cli_policy_options_clear(cli_policy_options *options)
{
        dsh_strv_free(options->allow_write);
        dsh_strv_free(options->allow_unix_socket);
        dsh_network_policy_clear(&options->network);
        dsh_strv_free(options->mask);
        dsh_strv_free(options->allow_env);
        *options = (cli_policy_options) CLI_POLICY_OPTIONS_INIT;
}

void cli_policy_runtime_options(const cli_policy_options *options, dsh_runtime_options *runtime_options)
{
        *runtime_options = (dsh_runtime_options) DSH_RUNTIME_OPTIONS_INIT;
        cli_runtime_options_set_config(runtime_options, options->config_path);
        runtime_options->backend = options->backend;
}

int cli_policy_request(const cli_policy_options *options, dsh_policy_request *request)
{
        *request = (dsh_policy_request) DSH_POLICY_REQUEST_INIT;
        if (options->mode) {
                if (dsh_mode_parse(options->mode, &request->mode) < 0)
                        return cli_usage_error("unknown mode \"%s\" (expected read-only, workspace-write or "
                                               "danger-full-access)",
                                               options->mode);
                request->has_mode = true;
        }
        /* Relative ones are taken against the cwd by the runtime, as users expect. */
        request->workspace_root = options->root;
        request->additional_writable_roots = options->allow_write;
        request->allowed_unix_sockets = options->allow_unix_socket;
        request->network = options->network_given ? &options->network : NULL;
        request->masked_paths = options->mask;
        request->allowed_environment = options->allow_env;
        return 0;
}

/*
 * Every confining subcommand resolves through the runtime's policy service,
 * the single owner of the precedence: --mode > the session's override > the
 * config's mode; --root > the session's cwd > the config's workspaceRoot
 * (itself the cwd by default).  A session that cannot be read never falls
 * back to a default policy: the command does not run (125).
 */
int cli_policy_resolve(const cli_policy_options *options, dsh_runtime **runtime_out, dsh_policy *policy)
{
        dsh_runtime_options runtime_options;
        dsh_policy_request request;
        dsh_error error = DSH_ERROR_INIT;
        dsh_session *session = NULL;
        int result = cli_policy_request(options, &request);

        cli_policy_runtime_options(options, &runtime_options);
        if (result == 0)
                result = cli_runtime_new(&runtime_options, CLI_EXIT_SANDBOX, runtime_out);
        if (result == 0 && options->session)
                result = cli_session_open(*runtime_out, options->session, CLI_EXIT_SANDBOX, &session);
        request.session = session;
        if (result == 0 && dsh_runtime_resolve(*runtime_out, &request, policy, &error) < 0) {
                cli_print_error(&error);
                result = cli_exit_status_for_error(&error);
                if (result == CLI_EXIT_FAILURE)
                        result = CLI_EXIT_SANDBOX;  /* nothing ran: never mistake this for the program's 1 */
                dsh_error_clear(&error);
        }
        dsh_session_free(session);
        return result;
}

char *cli_path_from_cwd(const char *path)
{
        char *cwd, *absolute = NULL;

        if (path[0] == '/')
                return strdup(path);
        cwd = getcwd(NULL, 0);
        if (cwd && asprintf(&absolute, "%s/%s", cwd, path) < 0)
                absolute = NULL;
        free(cwd);
        return absolute;
}
