/* SPDX-License-Identifier: MIT */
/* Provider setup for the CLI: --backend, the config's provider keys, the launcher path. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

int cli_provider_create(const cli_policy_options *options, const dsh_config *config, dsh_provider **provider_out)
{
        dsh_error error = DSH_ERROR_INIT;
        dsh_provider *provider = dsh_provider_new();
        const char *sole[2] = { options->backend, NULL };
        int result = 0;

        if (!provider) {
                cli_print_message("out of memory");
                return CLI_EXIT_SANDBOX;
        }
        if (options->backend && strcmp(options->backend, "auto") != 0)
                result = dsh_provider_set_backends(provider, sole, &error);
        else if (config->backends)
                result = dsh_provider_set_backends(provider, (const char *const *) config->backends, &error);
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
