/* SPDX-License-Identifier: MIT */
/* The policy options every confining or resolving subcommand shares (docs/cli.md);
 * options.h parses them. */
#ifndef DSH_SANDBOX_CLI_POLICY_OPTIONS_H
#define DSH_SANDBOX_CLI_POLICY_OPTIONS_H

#include "dsh-sandbox/config.h"
#include "dsh-sandbox/provider.h"

typedef struct cli_policy_options {
        const char *mode;          /* --mode: the explicit (approved) mode, as typed */
        const char *root;          /* --root */
        char **allow_write;        /* --allow-write, repeatable; owned */
        const char *session;       /* --session */
        const char *backend;       /* --backend: auto, bwrap, landlock */
        const char *config_path;   /* --config */
} cli_policy_options;

#define CLI_POLICY_OPTIONS_INIT { NULL, NULL, NULL, NULL, NULL, NULL }

void cli_policy_options_clear(cli_policy_options *options);

/*
 * Loads the configuration (only when one is named or present) into `config`
 * and resolves the execution policy: mode = --mode, else the session's
 * override, else the config's mode; root = --root (relative to the cwd),
 * else the session's cwd, else the config's workspaceRoot, else the cwd;
 * writable roots = the config's plus --allow-write.  Returns 0, or an exit
 * status after printing the error.  Both outputs must be cleared by the caller.
 */
int cli_policy_resolve(const cli_policy_options *options, dsh_config *config, dsh_policy *policy);

/* (provider-setup.c) Creates the provider that --backend and the config ask for.  Returns 0, or
 * an exit status after printing the error. */
int cli_provider_create(const cli_policy_options *options, const dsh_config *config, dsh_provider **provider_out);

#endif
