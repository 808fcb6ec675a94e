/* SPDX-License-Identifier: MIT */
/* Helpers shared by the subcommands that use the session store and the policy service. */
#ifndef DSH_SANDBOX_CLI_SESSION_CLI_H
#define DSH_SANDBOX_CLI_SESSION_CLI_H

#include "dsh-sandbox/config.h"
#include "dsh-sandbox/policy-service.h"

/*
 * (policy-options.c) Fills `config` with the defaults and loads `path` (NULL:
 * the default config file, if present) over them.  Returns 0, or an exit
 * status after printing the error (2 for a bad file, else `failure_status`).
 */
int cli_config_load(const char *path, int failure_status, dsh_config *config);

/*
 * (cmd-session.c) Opens the default session store and the session `id` in
 * it.  Returns 0, or an exit status after printing the error (2 for an
 * invalid id, else `failure_status`).  Both outputs are the caller's to free.
 */
int cli_session_open(const char *id, int failure_status, dsh_session_store **store_out, dsh_session **session_out);

/* Prints a library error and returns its exit status for the session and policy
 * commands: 2 for bad input, else `failure_status`.  The error is cleared. */
int cli_library_error(dsh_error *error, int failure_status);

#endif
