/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "policy-options.h"

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
                if (strcmp(value, "auto") != 0 && strcmp(value, "bwrap") != 0 && strcmp(value, "landlock") != 0)
                        return cli_usage_error("--backend must be auto, bwrap or landlock, not \"%s\"", value);
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

static int load_config(const cli_policy_options *options, dsh_config *config)
{
        dsh_error error = DSH_ERROR_INIT;
        char *path = options->config_path ? strdup(options->config_path) : dsh_config_default_path();
        int result = dsh_config_init(config, &error);

        if (result == 0 && path)
                result = dsh_config_load_file(config, path, &error);
        free(path);
        if (result < 0) {
                cli_print_error(&error);
                result = error.code == DSH_ERROR_INVALID_INPUT ? CLI_EXIT_USAGE : CLI_EXIT_SANDBOX;
                dsh_error_clear(&error);
                return result;
        }
        return 0;
}

static int resolve_mode(const cli_policy_options *options, const dsh_config *config, dsh_policy *policy)
{
        policy->mode = config->mode;
        if (options->mode && dsh_mode_parse(options->mode, &policy->mode) < 0)
                return cli_usage_error("unknown mode \"%s\" (expected read-only, workspace-write or "
                                       "danger-full-access)",
                                       options->mode);
        return 0;
}

static int resolve_roots(const cli_policy_options *options, const dsh_config *config, dsh_policy *policy)
{
        policy->workspace_root = options->root ? absolute_from_cwd(options->root) : strdup(config->workspace_root);
        if (!policy->workspace_root)
                return cli_usage_error("cannot resolve the workspace root: %s", strerror(errno));
        for (char **root = config->additional_writable_roots; root && *root; root++)
                if (dsh_strv_append(&policy->additional_writable_roots, *root) < 0)
                        return cli_usage_error("out of memory");
        for (char **root = options->allow_write; root && *root; root++) {
                char *absolute = absolute_from_cwd(*root);

                if (!absolute || dsh_strv_append(&policy->additional_writable_roots, absolute) < 0) {
                        free(absolute);
                        return cli_usage_error("out of memory");
                }
                free(absolute);
        }
        return 0;
}

int cli_policy_resolve(const cli_policy_options *options, dsh_config *config, dsh_policy *policy)
{
        int result = load_config(options, config);

        if (result != 0)
                return result;
        if (options->session)
                return cli_usage_error("--session is not supported yet");
        result = resolve_mode(options, config, policy);
        if (result != 0)
                return result;
        return resolve_roots(options, config, policy);
}
