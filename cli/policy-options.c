/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsh-sandbox/policy-service.h"

#include "cli.h"
#include "policy-options.h"
#include "session-cli.h"

void cli_policy_options_clear(cli_policy_options *options)
{
        dsh_strv_free(options->allow_write);
        *options = (cli_policy_options) CLI_POLICY_OPTIONS_INIT;
}

/* A relative path named on the command line is taken relative to the cwd, as users expect. */
static char *absolute_from_cwd(const char *path)
{
        char cwd[PATH_MAX];
        char *absolute = NULL;

        if (path[0] == '/')
                return strdup(path);
        if (!getcwd(cwd, sizeof(cwd)))
                return NULL;
        if (asprintf(&absolute, "%s/%s", cwd, path) < 0)
                return NULL;
        return absolute;
}

int cli_config_load(const char *path, int failure_status, dsh_config *config)
{
        dsh_error error = DSH_ERROR_INIT;
        char *chosen = path ? strdup(path) : dsh_config_default_path();
        int result = dsh_config_init(config, &error);

        if (result == 0 && chosen)
                result = dsh_config_load_file(config, chosen, &error);
        free(chosen);
        if (result < 0) {
                cli_print_error(&error);
                result = error.code == DSH_ERROR_INVALID_INPUT ? CLI_EXIT_USAGE : failure_status;
                dsh_error_clear(&error);
                return result;
        }
        return 0;
}

int cli_library_error(dsh_error *error, int failure_status)
{
        int status = error->code == DSH_ERROR_INVALID_INPUT ? CLI_EXIT_USAGE : failure_status;

        cli_print_error(error);
        dsh_error_clear(error);
        return status;
}

/* --allow-write paths, made absolute against the cwd; the provider checks them per call. */
static int absolute_allow_write(const cli_policy_options *options, char ***roots_out)
{
        for (char **root = options->allow_write; root && *root; root++) {
                char *absolute = absolute_from_cwd(*root);

                if (!absolute || dsh_strv_append(roots_out, absolute) < 0) {
                        free(absolute);
                        return cli_usage_error("out of memory");
                }
                free(absolute);
        }
        return 0;
}

/*
 * Every confining subcommand resolves through the library's policy service,
 * the single owner of the precedence: --mode > the session's override > the
 * config's mode; --root > the session's cwd > the config's workspaceRoot
 * (itself the cwd by default).  A session that cannot be read never falls
 * back to a default policy: the command does not run (125).
 */
int cli_policy_resolve(const cli_policy_options *options, dsh_config *config, dsh_policy *policy)
{
        dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
        dsh_error error = DSH_ERROR_INIT;
        dsh_policy_service *service = NULL;
        dsh_session_store *store = NULL;
        dsh_session *session = NULL;
        char **allow_write = NULL;
        char *root = NULL;
        int result = cli_config_load(options->config_path, CLI_EXIT_SANDBOX, config);

        if (result != 0)
                return result;
        if (options->mode) {
                if (dsh_mode_parse(options->mode, &request.mode) < 0)
                        return cli_usage_error("unknown mode \"%s\" (expected read-only, workspace-write or "
                                               "danger-full-access)",
                                               options->mode);
                request.has_mode = true;
        }
        if (options->root) {
                root = absolute_from_cwd(options->root);
                if (!root)
                        return cli_usage_error("cannot resolve the workspace root: %s", strerror(errno));
                request.workspace_root = root;
        }
        result = absolute_allow_write(options, &allow_write);
        request.additional_writable_roots = allow_write;
        if (result == 0 && options->session)
                result = cli_session_open(options->session, CLI_EXIT_SANDBOX, &store, &session);
        request.session = session;
        if (result == 0 && dsh_policy_service_new(config, &service, &error) < 0)
                result = cli_library_error(&error, CLI_EXIT_SANDBOX);
        if (result == 0 && dsh_policy_service_resolve(service, &request, policy, &error) < 0) {
                cli_print_error(&error);
                result = cli_exit_status_for_error(&error);
                if (result == CLI_EXIT_FAILURE)
                        result = CLI_EXIT_SANDBOX;  /* nothing ran: never mistake this for the program's 1 */
                dsh_error_clear(&error);
        }
        dsh_policy_service_free(service);
        dsh_session_free(session);
        dsh_session_store_free(store);
        dsh_strv_free(allow_write);
        free(root);
        return result;
}
