/* SPDX-License-Identifier: MIT */
/* The policy options every confining or resolving subcommand shares (docs/cli.md);
 * options.h parses them. */
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
        const char *remote;        /* --remote: the ssh destination, or NULL for this host */
        char **allow_unix_socket;  /* --allow-unix-socket, repeatable, made absolute, each a socket; owned */
        /*
         * --network, --allow-host, --allow-local-port and --dns-upstream, each
         * entry checked as it is read, the mode set once all are (--allow-host:
         * the allow-list; else --network's word; else --allow-local-port: off);
         * owned.  network_given: any of them was, and the call's network then
         * replaces the config's whole.
         */
        const char *network_word;  /* --network as typed: "on" or "off" */
        dsh_network_policy network;
        bool network_given;
        /* --mask and --allow-env, repeatable, each checked as it is read (docs/secrets.md); owned. */
        char **mask;
        char **allow_env;
} cli_policy_options;

#define CLI_POLICY_OPTIONS_INIT                                                                                       \
        { NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, DSH_NETWORK_POLICY_INIT, false, NULL, NULL }

void cli_policy_options_clear(cli_policy_options *options);

/*
 * The runtime --config and --backend ask for (dsh-sandbox/runtime.h).
 */
void cli_policy_runtime_options(const cli_policy_options *options, dsh_runtime_options *runtime_options);

/*
 * The request --mode, --root, --allow-write, --allow-unix-socket, the network options, --mask and --allow-env ask for (the session is the
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
