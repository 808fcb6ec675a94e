/* SPDX-License-Identifier: MIT */
/*
 * The runtime: one assembled sandbox, the composition root every consumer
 * goes through (the command-line tool, the bash tool, the file guard, the
 * service, the MCP server, an embedding program).
 *
 * A runtime owns the loaded configuration, the session store, the policy
 * service, and a provider already set up with every protection the sandbox
 * promises: the chain and its probe bound, the operator's runner command,
 * the cross-process verdict cache, the launcher directory, the protected
 * subpaths, and the sandbox's own files (the config in use, the default
 * config directory, the session store, the verdict cache — the ones this
 * runtime uses and the default ones, which the next call of another front
 * end reads) and programs (the embedding program itself) as protected paths.
 * A program that confines commands through a runtime gets those protections
 * by construction; one that assembles a dsh_provider by hand gets only what
 * it sets itself.
 *
 * Paths are taken once, at creation: a relative one (a config file, a
 * directory option) is made absolute against the cwd of that moment, so a
 * later chdir() of the embedding program changes nothing.
 *
 *     dsh_runtime *runtime;
 *     dsh_runtime_options options = DSH_RUNTIME_OPTIONS_INIT;
 *     dsh_policy_request request = DSH_POLICY_REQUEST_INIT;
 *     dsh_policy policy = DSH_POLICY_INIT;
 *
 *     dsh_runtime_new(&options, &runtime, &error);          // XDG config, when present
 *     request.has_mode = true;
 *     request.mode = DSH_MODE_WORKSPACE_WRITE;
 *     request.workspace_root = "/home/me/project";
 *     dsh_runtime_resolve(runtime, &request, &policy, &error);
 *     dsh_provider_spawn(dsh_runtime_provider(runtime), argv, &policy, NULL, &child, &error);
 *
 * A runtime is not thread-safe: a multi-threaded consumer serialises calls
 * on one runtime, or makes one per thread.
 */
#ifndef DSH_SANDBOX_RUNTIME_H
#define DSH_SANDBOX_RUNTIME_H

#include "dsh-sandbox/config.h"
#include "dsh-sandbox/policy-service.h"
#include "dsh-sandbox/provider.h"
#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dsh_runtime dsh_runtime;

/* Where the configuration comes from. */
typedef enum dsh_runtime_config_source {
        /* $DSH_SANDBOX_CONFIG when set, else $XDG_CONFIG_HOME/dsh-sandbox/config.json when it exists, else
         * the built-in defaults. */
        DSH_RUNTIME_CONFIG_DEFAULT = 0,
        DSH_RUNTIME_CONFIG_FILE,      /* `config_path`, which must exist */
        DSH_RUNTIME_CONFIG_VALUES,    /* `config` as given in code (copied); no file is read */
} dsh_runtime_config_source;

typedef struct dsh_runtime_options {
        dsh_runtime_config_source config_source;
        const char *config_path;       /* DSH_RUNTIME_CONFIG_FILE: the file (relative to the cwd) */
        const dsh_config *config;      /* DSH_RUNTIME_CONFIG_VALUES: the values (deep-copied) */
        /*
         * A sole backend for this runtime ("bwrap", "landlock"), or NULL /
         * "auto" for the configured chain.  A sole backend bypasses the
         * operator's runnerCommand, as `--backend` does.
         */
        const char *backend;
        /*
         * The directory holding landlock-run and dsh-sandbox-exec.  NULL: the
         * directory of the running executable when both are there (a build
         * tree, a relocated install), else the installed ones (landlock-run in
         * the bin directory, dsh-sandbox-exec in libexec).
         * Never searched on PATH: a launcher planted in the workspace or a
         * writable PATH entry must not become the runner.
         */
        const char *launcher_directory;
        /*
         * Programs later calls will run that no confined command may replace,
         * besides the sandbox's own (NULL-terminated, absolute).  NULL: the
         * running executable (/proc/self/exe), which an embedding program
         * almost always is.
         */
        char *const *protected_executables;
        /* The session store directory; NULL: $DSH_SANDBOX_STATE_DIR, else the XDG state directory. */
        const char *state_directory;
        /* The verdict cache directory; NULL: the XDG cache directory.  use_verdict_cache false: none. */
        const char *cache_directory;
        bool use_verdict_cache;
} dsh_runtime_options;

#define DSH_RUNTIME_OPTIONS_INIT { DSH_RUNTIME_CONFIG_DEFAULT, NULL, NULL, NULL, NULL, NULL, NULL, NULL, true }

/*
 * Creates a runtime: loads the configuration (a bad file is refused with
 * DSH_ERROR_INVALID_INPUT naming the file and the key, as
 * dsh_config_load_file() words it; values given in code are checked by the
 * same owners: the provider's setters and the policy service), opens the
 * session store (created on first use), and sets up the provider with every
 * protection above.  $DSH_SANDBOX_BWRAP, when set and not empty, names the
 * bwrap binary (the caller's own environment, trusted as such; a relative
 * one is refused with DSH_ERROR_INVALID_INPUT).  When no state directory
 * can be determined (no `state_directory`, $DSH_SANDBOX_STATE_DIR,
 * $XDG_STATE_HOME or $HOME), the runtime is made without a session store:
 * agentless calls work, and the session functions below fail with the
 * reason.  `options` NULL: DSH_RUNTIME_OPTIONS_INIT.  Returns 0 with
 * *runtime_out owned by the caller (dsh_runtime_free), or a negative errno
 * with `error` set.
 */
DSH_PUBLIC int dsh_runtime_new(const dsh_runtime_options *options, dsh_runtime **runtime_out, dsh_error *error);

DSH_PUBLIC void dsh_runtime_free(dsh_runtime *runtime);

/* The loaded configuration; owned by the runtime. */
DSH_PUBLIC const dsh_config *dsh_runtime_config(const dsh_runtime *runtime);

/* The config file in use, or NULL when none was read; owned by the runtime. */
DSH_PUBLIC const char *dsh_runtime_config_path(const dsh_runtime *runtime);

/* The provider, set up; owned by the runtime (never free it). */
DSH_PUBLIC dsh_provider *dsh_runtime_provider(dsh_runtime *runtime);

/* The policy service over the loaded configuration; owned by the runtime. */
DSH_PUBLIC dsh_policy_service *dsh_runtime_policy_service(dsh_runtime *runtime);

/*
 * The session store, owned by the runtime (never free it): returns 0 with
 * *store_out set, or -EINVAL with DSH_ERROR_INVALID_INPUT "no session state
 * directory: set DSH_SANDBOX_STATE_DIR, XDG_STATE_HOME or HOME" when the
 * runtime was made without one.
 */
DSH_PUBLIC int dsh_runtime_session_store(dsh_runtime *runtime, dsh_session_store **store_out, dsh_error *error);

/*
 * Opens session `id` of the runtime's store (dsh_session_open).  Returns 0
 * with *session_out owned by the caller (dsh_session_free), or a negative
 * errno: -EINVAL with DSH_ERROR_INVALID_INPUT for an id that is not an id
 * or a runtime without a store; -ENOENT with "session \"<id>\" does not
 * exist (no <log path>)" for an id the store does not hold; the log's own
 * errors (a corrupt line, not a regular file) otherwise.
 */
DSH_PUBLIC int dsh_runtime_open_session(dsh_runtime *runtime, const char *id, dsh_session **session_out,
                                        dsh_error *error);

/*
 * Resolves the execution policy of one call through the policy service
 * (see dsh_policy_service_resolve): mode = the request's explicit mode,
 * else the session's override, else the configured default; root = the
 * request's root, else the session's cwd, else the configured
 * workspaceRoot, else the cwd; writable roots = the configured ones, the
 * request's, the session's registrations.  A relative root or writable root
 * in the request is taken against the cwd at this call, as a user typing
 * it expects (DSH_ERROR_INVALID_INPUT "cannot resolve ...: <reason>" when
 * the cwd cannot be determined).  `request` NULL: an agentless call with
 * the defaults.  `policy_out` must be DSH_POLICY_INIT; the caller clears it.
 */
DSH_PUBLIC int dsh_runtime_resolve(dsh_runtime *runtime, const dsh_policy_request *request, dsh_policy *policy_out,
                                   dsh_error *error);

#ifdef __cplusplus
}
#endif

#endif
