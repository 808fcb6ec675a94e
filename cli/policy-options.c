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

const char cli_policy_options_help[] =
        "Policy options:\n"
        "  --mode MODE          read-only, workspace-write or danger-full-access (explicit, approved)\n"
        "  --root DIR           workspace root (default: the session's cwd, else the config's\n"
        "                       workspaceRoot, else the current directory)\n"
        "  --allow-write DIR    an extra writable root (repeatable): an existing directory, not a symlink\n"
        "  --session ID         resolve mode and root through the session store\n"
        "  --backend NAME       auto (default), bwrap or landlock\n"
        "  --config FILE        config file (default $DSH_SANDBOX_CONFIG, else\n"
        "                       $XDG_CONFIG_HOME/dsh-sandbox/config.json if present)\n";

static const char *const option_names[] = {
        "--mode", "--root", "--allow-write", "--session", "--backend", "--config", NULL,
};

/* Matches `--name VALUE` or `--name=VALUE`; returns the option's index or -1. */
static int match_option(const char *argument, const char **inline_value)
{
        for (int i = 0; option_names[i]; i++) {
                size_t length = strlen(option_names[i]);

                if (strncmp(argument, option_names[i], length) != 0)
                        continue;
                if (argument[length] == '\0') {
                        *inline_value = NULL;
                        return i;
                }
                if (argument[length] == '=') {
                        *inline_value = argument + length + 1;
                        return i;
                }
        }
        return -1;
}

int cli_policy_option_parse(int argc, char **argv, int *index, cli_policy_options *options)
{
        const char *value = NULL;
        int option = match_option(argv[*index], &value);
        int result;

        if (option < 0)
                return 0;
        if (!value) {
                if (*index + 1 >= argc)
                        return cli_usage_error("%s requires a value", option_names[option]);
                value = argv[++*index];
        }
        (*index)++;
        if (value[0] == '\0')
                return cli_usage_error("%s requires a non-empty value", option_names[option]);
        switch (option) {
        case 0:
                options->mode = value;
                break;
        case 1:
                options->root = value;
                break;
        case 2:
                if (dsh_strv_append(&options->allow_write, value) < 0)
                        return cli_usage_error("out of memory");
                break;
        case 3:
                options->session = value;
                break;
        case 4:
                if (strcmp(value, "auto") != 0) {
                        /* The library's own list decides which names exist. */
                        const char *sole[] = { value, NULL };
                        dsh_error error = DSH_ERROR_INIT;

                        if (dsh_provider_check_backends(sole, &error) < 0) {
                                result = cli_usage_error("--backend must be auto or a backend: %s",
                                                         error.message ? error.message : value);
                                dsh_error_clear(&error);
                                return result;
                        }
                }
                options->backend = value;
                break;
        default:
                options->config_path = value;
                break;
        }
        return 1;
}

void cli_policy_options_clear(cli_policy_options *options)
{
        dsh_strv_free(options->allow_write);
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

int cli_parse_policy_and_command(int argc, char **argv, const char *help, cli_policy_options *options,
                                 char ***command)
{
        const char *name = argv[0];
        int index = 1;

        while (index < argc) {
                int result;

                if (strcmp(argv[index], "--") == 0) {
                        if (index + 1 >= argc)
                                return cli_usage_error("%s: missing PROGRAM after `--`", name);
                        *command = &argv[index + 1];
                        return 0;
                }
                if (cli_is_help(argv[index])) {
                        printf("%s%s", help, cli_policy_options_help);
                        return -1;
                }
                result = cli_policy_option_parse(argc, argv, &index, options);
                if (result == 0)
                        return cli_usage_error("%s: unknown argument \"%s\" (the command goes after `--`)", name,
                                               argv[index]);
                if (result != 1)
                        return result;
        }
        return cli_usage_error("%s: missing `-- PROGRAM [ARG...]`", name);
}
