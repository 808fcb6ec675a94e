/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: the deployment configuration (one JSON file).
 *
 *   {"mode": "read-only", "workspaceRoot": "/abs", "additionalWritableRoots": ["/abs"],
 *    "backends": ["bwrap", "landlock"], "probeTimeoutMs": 5000,
 *    "runnerCommand": ["/usr/bin/runner", "--flag"], "runnerFailureSignatures": ["runner: "],
 *    "protectedSubpaths": {"add": ["secrets"], "remove": [".vscode"]}, "requireProtectedSubpaths": false,
 *    "sshCommand": ["ssh", "-F", "/abs/ssh_config"], "remoteProgram": "dsh-sandbox",
 *    "fileReadLimitBytes": 16777216, "network": {"allowHosts": ["@npm", "*.example.com:443"]}}
 *
 * Every key is optional.  Unknown keys and bad values are rejected at load
 * with a message that names the file and the key ("config <path>: key
 * \"<key>\": <what is wrong>"), the backend list included (unknown, listed
 * twice, empty: the provider's own check); nothing is applied from a file
 * that fails to load.
 */
#ifndef DSH_SANDBOX_CONFIG_H
#define DSH_SANDBOX_CONFIG_H

#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DSH_CONFIG_DEFAULT_PROBE_TIMEOUT_MS 5000L
/* The most a file guard's read of a whole file loads (fileReadLimitBytes): 16 MiB. */
#define DSH_CONFIG_DEFAULT_FILE_READ_LIMIT_BYTES ((size_t) 16 << 20)

typedef struct dsh_config {
        dsh_mode mode;                        /* default read-only (fail-safe) */
        char *workspace_root;                 /* absolute, canonical; default the process cwd (NULL if unresolvable) */
        char **additional_writable_roots;     /* absolute; NULL: none */
        char **backends;                      /* backend names in order; NULL: the provider's default */
        long probe_timeout_ms;                /* > 0 */
        char **runner_command;                /* operator override argv prefix; NULL: none */
        char **runner_failure_signatures;     /* required with runner_command */
        /*
         * Names relative to each writable root that a confined command may not
         * change (protectedSubpaths): each non-empty, relative ("~/NAME": NAME
         * in the user's home), its components neither empty nor "." nor "..".
         * NULL with protected_subpaths_set false: the key is absent and the
         * default applies (dsh_provider_default_protected_subpaths()); an empty
         * vector with protected_subpaths_set true: `[]`, the feature turned
         * off.  The object form {"add": [...], "remove": [...]} is resolved at
         * load into the whole list here (the defaults, minus each removed one,
         * which must be a default, plus each added one).
         */
        char **protected_subpaths;
        bool protected_subpaths_set;
        bool require_protected_subpaths;      /* refuse where a backend cannot protect them; default false */
        /* The remote provider (dsh-sandbox/remote.h): the argv prefix that runs ssh (sshCommand, non-empty
         * words), NULL: {"ssh"}; the remote dsh-sandbox (remoteProgram, one non-empty line), NULL: "dsh-sandbox". */
        char **ssh_command;
        char *remote_program;
        /* The file guard's read bound (fileReadLimitBytes), > 0: a read of a whole file larger than this is
         * refused with FS_TOO_LARGE, and a range read returns at most this much.  A long-lived service must
         * not allocate whatever size a file claims (a sparse file can claim terabytes). */
        size_t file_read_limit_bytes;
        /* allowUnixSockets: absolute paths of unix sockets every confined command may connect to wherever
         * they lie (an ssh-agent's, a gpg-agent's); each must be a socket when a call is prepared.  NULL: none. */
        char **allowed_unix_sockets;
        /* network: "on" (the default), "off", or {"allowHosts": [...], "allowLocalPorts": [...], "dnsUpstream":
         * "IP:PORT"} (docs/configuration.md); every entry checked at load.  The default of every call; a call's
         * own network (flags, params) replaces it whole. */
        dsh_network_policy network;
        /*
         * Secrets (docs/secrets.md).  maskedPaths: the masked entries, each as
         * dsh_mask_entry_check() accepts; NULL with masked_paths_set false:
         * the key is absent and dsh_default_masked_paths() applies; an empty
         * vector with masked_paths_set true: `[]`, nothing masked.
         * requireMasks: a mask a backend cannot hold refuses the call
         * (default false).  environment.deny: the deny patterns, NULL with
         * environment_deny_set false: dsh_default_environment_deny();
         * environment.allow: names let through (no wildcards), NULL: none.
         */
        char **masked_paths;
        bool masked_paths_set;
        bool require_masks;
        char **environment_deny;
        bool environment_deny_set;
        char **environment_allow;
} dsh_config;

/*
 * Fills `config` with the defaults: read-only, the canonical cwd as the
 * workspace root, no extra roots, default backends, 5000 ms probes.
 * Returns 0 or a negative errno with `error` set.  Clear with dsh_config_clear().
 */
DSH_PUBLIC int dsh_config_init(dsh_config *config, dsh_error *error);

/*
 * Loads `path` over the defaults already in `config` (dsh_config_init first).
 * The path may be a symlink; what it leads to must be a regular file, and is
 * opened without blocking (a FIFO is refused, never waited on).  On failure
 * `config` is unchanged and `error` (DSH_ERROR_INVALID_INPUT) names the file
 * and, for a bad value, the key: "config <path>: cannot open: <reason>",
 * "config <path>: not a regular file", "config <path>: line N: <syntax>",
 * "config <path>: line N: not valid UTF-8 (...)", "config <path>: key
 * \"<key>\": <what is wrong>".
 */
DSH_PUBLIC int dsh_config_load_file(dsh_config *config, const char *path, dsh_error *error);

/*
 * The config file to use: $DSH_SANDBOX_CONFIG, else
 * $XDG_CONFIG_HOME/dsh-sandbox/config.json (or ~/.config/...) if it exists,
 * else NULL.  Returns a new string (caller frees) or NULL.
 */
DSH_PUBLIC char *dsh_config_default_path(void);

/*
 * The directory where the default config file lives, whether or not it
 * exists: $XDG_CONFIG_HOME/dsh-sandbox, else ~/.config/dsh-sandbox.  Returns a
 * new string (caller frees) or NULL.
 */
DSH_PUBLIC char *dsh_config_default_directory(void);

DSH_PUBLIC void dsh_config_clear(dsh_config *config);

#ifdef __cplusplus
}
#endif

#endif
