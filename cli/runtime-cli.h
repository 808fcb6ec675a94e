/* SPDX-License-Identifier: MIT */
/*
 * The CLI's side of the runtime (dsh-sandbox/runtime.h): every subcommand
 * makes one runtime and works through it; these helpers only choose its
 * options and turn its errors into the tool's exit statuses.
 */
#ifndef DSH_SANDBOX_CLI_RUNTIME_CLI_H
#define DSH_SANDBOX_CLI_RUNTIME_CLI_H

#include "dsh-sandbox/runtime.h"

/* Reads the config from `config_path` when one is named (--config), else from the default place. */
void cli_runtime_options_set_config(dsh_runtime_options *options, const char *config_path);

/*
 * Creates the runtime.  Returns 0, or an exit status after printing the
 * error: 2 for bad input (a config file that does not load, a relative
 * $DSH_SANDBOX_BWRAP), else `failure_status`.
 */
int cli_runtime_new(const dsh_runtime_options *options, int failure_status, dsh_runtime **runtime_out);

/*
 * Opens session `id` in the runtime's store.  Returns 0, or an exit status
 * after printing the error (2 for an invalid id, else `failure_status`).
 * The session is the caller's to free.
 */
int cli_session_open(dsh_runtime *runtime, const char *id, int failure_status, dsh_session **session_out);

#endif
