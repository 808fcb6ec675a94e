/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: the deployment configuration (one JSON file).
 *
 *   {"mode": "read-only", "workspaceRoot": "/abs", "additionalWritableRoots": ["/abs"],
 *    "backends": ["bwrap", "landlock"], "probeTimeoutMs": 5000,
 *    "runnerCommand": ["/usr/bin/runner", "--flag"], "runnerFailureSignatures": ["runner: "]}
 *
 * Every key is optional.  Unknown keys and bad values are rejected at load
 * with a message that names the key; nothing is applied from a file that
 * fails to load.
 */
#ifndef DSH_SANDBOX_CONFIG_H
#define DSH_SANDBOX_CONFIG_H

#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DSH_CONFIG_DEFAULT_PROBE_TIMEOUT_MS 5000L

typedef struct dsh_config {
        dsh_mode mode;                        /* default read-only (fail-safe) */
        char *workspace_root;                 /* absolute, canonical; default the process cwd (NULL if unresolvable) */
        char **additional_writable_roots;     /* absolute; NULL: none */
        char **backends;                      /* backend names in order; NULL: the provider's default */
        long probe_timeout_ms;                /* > 0 */
        char **runner_command;                /* operator override argv prefix; NULL: none */
        char **runner_failure_signatures;     /* required with runner_command */
} dsh_config;

/*
 * Fills `config` with the defaults: read-only, the canonical cwd as the
 * workspace root, no extra roots, default backends, 5000 ms probes.
 * Returns 0 or a negative errno with `error` set.  Clear with dsh_config_clear().
 */
DSH_PUBLIC int dsh_config_init(dsh_config *config, dsh_error *error);

/*
 * Loads `path` over the defaults already in `config` (dsh_config_init first).
 * On failure `config` is unchanged and `error` names the file and the key.
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
