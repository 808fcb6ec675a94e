/* SPDX-License-Identifier: MIT */
/* The policy options every confining or resolving subcommand shares (CLI.md). */
#ifndef DSH_SANDBOX_CLI_POLICY_OPTIONS_H
#define DSH_SANDBOX_CLI_POLICY_OPTIONS_H

#include "dsh-sandbox/runtime.h"

typedef struct cli_policy_options {
        const char *mode;          /* --mode: the explicit (approved) mode, as typed */
        const char *root;          /* --root */
        char **allow_write;        /* --allow-write, repeatable; owned */
        const char *session;       /* --session */
        const char *backend;       /* --backend: auto, bwrap, landlock */
        const char *config_path;   /* --config */
} cli_policy_options;

#define CLI_POLICY_OPTIONS_INIT { NULL, NULL, NULL, NULL, NULL, NULL }

/*
 * If argv[*index] is a policy option (`--name VALUE` or `--name=VALUE`),
 * stores it, advances *index past it and returns 1.  Returns 0 when it is not
 * a policy option, or CLI_EXIT_USAGE after printing what was wrong.
 */
int cli_policy_option_parse(int argc, char **argv, int *index, cli_policy_options *options);

void cli_policy_options_clear(cli_policy_options *options);

/*
 * Parses `NAME [policy options] -- PROGRAM [ARG...]` (argv[0] is the
 * subcommand's name).  Returns 0 with *command pointing into argv, -1 after
 * printing `help` for --help, or CLI_EXIT_USAGE after printing what was wrong.
 */
int cli_parse_policy_and_command(int argc, char **argv, const char *help, cli_policy_options *options,
                                 char ***command);

/* The help text lines for the shared options. */
extern const char cli_policy_options_help[];

/* The runtime --config and --backend ask for (dsh-sandbox/runtime.h). */
void cli_policy_runtime_options(const cli_policy_options *options, dsh_runtime_options *runtime_options);

/*
 * The request --mode, --root and --allow-write ask for (the session is the
 * caller's to add; `request` points into `options`).  Returns 0, or
 * CLI_EXIT_USAGE after printing an unknown mode.
 */
int cli_policy_request(const cli_policy_options *options, dsh_policy_request *request);

/*
 * Creates the runtime (--config, --backend) and resolves the execution
 * policy through it: mode = --mode, else the session's override, else the
 * config's mode; root = --root (relative to the cwd), else the session's
 * cwd, else the config's workspaceRoot, else the cwd; writable roots = the
 * config's plus --allow-write.  Returns 0, or an exit status after printing
 * the error (125: nothing can run; 2: usage).  The caller frees the runtime
 * (even on failure: it may have been made) and clears the policy.
 */
int cli_policy_resolve(const cli_policy_options *options, dsh_runtime **runtime_out, dsh_policy *policy);

#endif
