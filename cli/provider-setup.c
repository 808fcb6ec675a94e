/* SPDX-License-Identifier: MIT */
/*
 * Provider setup for the CLI: --backend, the config's provider keys
 * (backends, probeTimeoutMs, runnerCommand, runnerFailureSignatures), the
 * launcher path, the bwrap override and the cross-process verdict cache.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsh-sandbox/policy-service.h"

#include "cli.h"
#include "policy-options.h"

/*
 * The launcher named in confined argvs is the one installed beside this
 * executable (the build tree and a relocated install), else the compiled-in
 * libexec path.  It is never searched on PATH: a `landlock-run` planted in the
 * workspace or a writable PATH entry must not become the runner.
 */
static int set_launcher_path(dsh_provider *provider)
{
        char executable[PATH_MAX], candidate[PATH_MAX + 32];
        ssize_t length = readlink("/proc/self/exe", executable, sizeof(executable) - 1);
        char *slash;

        if (length <= 0)
                return 0;
        executable[length] = '\0';
        slash = strrchr(executable, '/');
        if (!slash)
                return 0;
        *slash = '\0';
        snprintf(candidate, sizeof(candidate), "%s/landlock-run", executable);
        if (access(candidate, X_OK) < 0)
                return 0;
        return dsh_provider_set_landlock_run_path(provider, candidate, NULL);
}

/*
 * $DSH_SANDBOX_BWRAP names the bwrap binary explicitly (absolute), for tests
 * and for hosts with bwrap outside the trusted places.  The environment is
 * the invoking user's, not the confined command's: a command that runs
 * dsh-sandbox itself is already inside its own sandbox.
 */
static int apply_environment(dsh_provider *provider, dsh_error *error)
{
        const char *bwrap = getenv("DSH_SANDBOX_BWRAP");
        char *cache_directory;
        int result = 0;

        if (bwrap && bwrap[0])
                result = dsh_provider_set_bwrap_path(provider, bwrap, error);
        if (result < 0)
                return result;
        cache_directory = dsh_provider_default_verdict_cache_dir();
        if (cache_directory)
                result = dsh_provider_set_verdict_cache_dir(provider, cache_directory, error);
        free(cache_directory);
        return result;
}

/* Appends `path` (owned, may be NULL) made absolute against the cwd. */
static int append_protected(char ***paths, char *path)
{
        char cwd[PATH_MAX];
        char *absolute = NULL;
        int result = 0;

        if (!path)
                return 0;
        if (path[0] != '/' && getcwd(cwd, sizeof(cwd)) && asprintf(&absolute, "%s/%s", cwd, path) < 0)
                absolute = NULL;
        if (path[0] == '/' || absolute)
                result = dsh_strv_append(paths, absolute ? absolute : path);
        free(absolute);
        free(path);
        return result;
}

/*
 * This very program: the next call a harness makes runs it again, so no
 * confined command may replace it (the library protects its own launchers
 * and bwrap; it cannot know which front end runs it).
 */
static int protect_own_executable(dsh_provider *provider, dsh_error *error)
{
        char executable[PATH_MAX];
        ssize_t length = readlink("/proc/self/exe", executable, sizeof(executable) - 1);
        char *paths[2] = { executable, NULL };

        if (length <= 0)
                return 0;
        executable[length] = '\0';
        return dsh_provider_set_protected_executables(provider, paths, error);
}

/*
 * What a confined command must never be able to change, because a later
 * call would read it: the config file named for this call, the default
 * config directory (a config.json created there takes effect), the session
 * store and the verdict cache.
 */
static int protect_own_files(dsh_provider *provider, const cli_policy_options *options, dsh_error *error)
{
        const char *named_config = options->config_path ? options->config_path : getenv("DSH_SANDBOX_CONFIG");
        char **paths = NULL;
        int result = 0;

        if (named_config && named_config[0])
                result = append_protected(&paths, strdup(named_config));
        if (result == 0)
                result = append_protected(&paths, dsh_config_default_directory());
        if (result == 0)
                result = append_protected(&paths, dsh_session_store_default_directory());
        if (result == 0)
                result = append_protected(&paths, dsh_provider_default_verdict_cache_dir());
        if (result == 0)
                result = dsh_provider_set_protected_paths(provider, paths, error);
        dsh_strv_free(paths);
        return result == 0 ? protect_own_executable(provider, error) : result;
}

int cli_provider_create(const cli_policy_options *options, const dsh_config *config, dsh_provider **provider_out)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_provider *provider = dsh_provider_new();
        const char *sole[2] = { options->backend, NULL };
        bool explicit_backend = options->backend && strcmp(options->backend, "auto") != 0;
        int result = 0;

        if (!provider) {
                cli_print_message("out of memory");
                return CLI_EXIT_SANDBOX;
        }
        /*
         * An explicit --backend names the runner for this call: the operator
         * override does not apply then.  Both lists were checked already:
         * --backend when parsed, the config's backends at load.
         */
        if (explicit_backend)
                result = dsh_provider_set_backends(provider, sole, &error);
        else if (config->backends)
                result = dsh_provider_set_backends(provider, (const char *const *) config->backends, &error);
        if (result == 0 && config->probe_timeout_ms)
                result = dsh_provider_set_probe_timeout_ms(provider, config->probe_timeout_ms, &error);
        if (result == 0 && !explicit_backend && (config->runner_command || config->runner_failure_signatures))
                result = dsh_provider_set_runner_command(provider, config->runner_command,
                                                         config->runner_failure_signatures, &error);
        if (result == 0 && (config->protected_subpaths_set || config->require_protected_subpaths))
                result = dsh_provider_set_protected_subpaths(
                        provider,
                        config->protected_subpaths_set ? (const char *const *) config->protected_subpaths
                                                       : dsh_provider_default_protected_subpaths(),
                        config->require_protected_subpaths, &error);
        if (result == 0)
                result = apply_environment(provider, &error);
        if (result == 0)
                result = protect_own_files(provider, options, &error);
        if (result == 0)
                result = set_launcher_path(provider);
        if (result < 0) {
                cli_print_error(&error);
                dsh_error_clear(&error);
                dsh_provider_free(provider);
                return CLI_EXIT_USAGE;
        }
        *provider_out = provider;
        return 0;
}
