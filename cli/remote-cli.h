/* SPDX-License-Identifier: MIT */
/*
 * `--remote DEST` for run, confine, bash and probe (dsh-sandbox/remote.h): the
 * same subcommands, answered by the dsh-sandbox on the host `ssh DEST`
 * reaches.  Each returns the subcommand's exit status after printing what
 * went wrong: 125 when nothing ran (the transport, the remote sandbox, the
 * remote's refusal), 126/127 when the remote could not execute the program,
 * 2 for a usage error (--session, which names this host's state).
 */
#ifndef DSH_SANDBOX_CLI_REMOTE_CLI_H
#define DSH_SANDBOX_CLI_REMOTE_CLI_H

#include <stdbool.h>

#include "dsh-sandbox/remote.h"

#include "policy-options.h"

/* `run --remote`: the command's own status, or it dies of the signal that killed the remote command. */
int cli_remote_run(const cli_policy_options *options, char **program);

/* `confine --remote`: the remote's facts, validated, as one JSON object on stdout. */
int cli_remote_confine(const cli_policy_options *options, char **command);

/*
 * `bash --remote`: the bash tool's result from the remote (its output also
 * passed to bash->on_output as it comes).  Returns 0 with `result_out`
 * filled and *first_signal the first signal passed on (0: none), or an exit
 * status after printing the error.
 */
int cli_remote_bash(const cli_policy_options *options, const char *command, const dsh_remote_bash_options *bash,
                    dsh_bash_result *result_out, int *first_signal);

/* `probe --remote`: the remote's probe report as one JSON object; 125 when it selects nothing. */
int cli_remote_probe(const cli_policy_options *options);

#endif
