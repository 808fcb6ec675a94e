/* SPDX-License-Identifier: MIT */
#include "cli.h"
#include "runtime-cli.h"

void cli_runtime_options_set_config(dsh_runtime_options *options, const char *config_path)
{
        options->config_source = config_path ? DSH_RUNTIME_CONFIG_FILE : DSH_RUNTIME_CONFIG_DEFAULT;
        options->config_path = config_path;
}

int cli_runtime_new(const dsh_runtime_options *options, int failure_status, dsh_runtime **runtime_out)
{
        dsh_error error = DSH_ERROR_INIT;

        if (dsh_runtime_new(options, runtime_out, &error) < 0)
                return cli_library_error(&error, failure_status);
        return 0;
}

int cli_session_open(dsh_runtime *runtime, const char *id, int failure_status, dsh_session **session_out)
{
        dsh_error error = DSH_ERROR_INIT;

        if (dsh_runtime_open_session(runtime, id, session_out, &error) < 0)
                return cli_library_error(&error, failure_status);
        return 0;
}
