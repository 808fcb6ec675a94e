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
