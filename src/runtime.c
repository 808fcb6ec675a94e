/* SPDX-License-Identifier: MIT */
/*
 * The runtime: the one composition root (see runtime.h).  Everything that
 * decides which protections a confined command runs under is assembled
 * here, once, so the command-line tool, an embedding program and every
 * later consumer get the same ones.  Only the public API of the other
 * modules is used.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dsh-sandbox/remote.h"
#include "dsh-sandbox/runtime.h"

#include "base/error.h"
#include "base/path.h"
#include "provider/provider-protections.h"
#include "remote/remote-registry.h"
#include "remote/remote-ssh.h"

#define LANDLOCK_RUN_NAME "landlock-run"
#define EXEC_HELPER_NAME "dsh-sandbox-exec"

struct dsh_runtime {
        dsh_config config;
        char *config_path;                    /* absolute; NULL: no file was read */
        dsh_policy_service *policy_service;
        dsh_session_store *session_store;     /* NULL: no state directory could be determined */
        dsh_error session_store_error;        /* why there is none */
        dsh_provider *provider;
};

static int out_of_memory(dsh_error *error)
{
        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}

/*
 * `path` made absolute against the cwd (a new string), or NULL with errno
 * set.  Lexically unchanged otherwise: the owners canonicalize where they
 * decide (the policy service its roots, the provider its protected paths).
 */
/* An option's path made absolute, or NULL (absent) into *out; `what` names it in the error. */
static int option_path(const char *path, const char *what, char **out, dsh_error *error)
{
        *out = NULL;
        if (!path)
                return 0;
        if (path[0] == '\0')
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the %s is empty", what);
        *out = dsh_path_from_cwd(path);
        if (!*out)
                return dsh_error_set(error, errno == ENOMEM ? DSH_ERROR_SYSTEM : DSH_ERROR_INVALID_INPUT, errno,
                                     "cannot resolve the %s \"%s\": %s", what, path, strerror(errno));
        return 0;
}

/* ------------------------------------------------------------ config -- */

static int copy_strv(char ***out, char *const *strv)
{
        if (!strv)
                return 0;
        *out = dsh_strv_copy(strv);
        return *out ? 0 : -ENOMEM;
}

/* A deep copy of values given in code: the caller may clear its own afterwards. */
static int copy_config(dsh_config *out, const dsh_config *in, dsh_error *error)
{
        *out = *in;
        out->workspace_root = NULL;
        out->additional_writable_roots = NULL;
        out->backends = NULL;
        out->runner_command = NULL;
        out->runner_failure_signatures = NULL;
        out->protected_subpaths = NULL;
        out->ssh_command = NULL;
        out->remote_program = NULL;
        out->allowed_unix_sockets = NULL;
        out->masked_paths = NULL;
        out->environment_deny = NULL;
        out->environment_allow = NULL;
        out->network = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
        if (dsh_network_policy_copy(&out->network, &in->network) < 0 ||
            (in->workspace_root && !(out->workspace_root = strdup(in->workspace_root))) ||
            copy_strv(&out->additional_writable_roots, in->additional_writable_roots) < 0 ||
            copy_strv(&out->backends, in->backends) < 0 || copy_strv(&out->runner_command, in->runner_command) < 0 ||
            copy_strv(&out->runner_failure_signatures, in->runner_failure_signatures) < 0 ||
            copy_strv(&out->protected_subpaths, in->protected_subpaths) < 0 ||
            copy_strv(&out->ssh_command, in->ssh_command) < 0 ||
            copy_strv(&out->allowed_unix_sockets, in->allowed_unix_sockets) < 0 ||
            copy_strv(&out->masked_paths, in->masked_paths) < 0 ||
            copy_strv(&out->environment_deny, in->environment_deny) < 0 ||
            copy_strv(&out->environment_allow, in->environment_allow) < 0 ||
            (in->remote_program && !(out->remote_program = strdup(in->remote_program)))) {
                dsh_config_clear(out);
                return out_of_memory(error);
        }
        return 0;
}

/*
 * What a file would have been refused for and no later owner checks: the
 * roots must be absolute (the policy service takes the workspace root as
 * given, and a relative writable root would mean a different place in every
 * cwd).  The rest is checked where it is used: the backends, the probe
 * bound, the runner command and the protected subpaths by the provider's
 * setters, the mode by the policy service.
 */
static int check_config_values(const dsh_config *config, dsh_error *error)
{
        if (config->workspace_root && config->workspace_root[0] != '/')
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "config: workspaceRoot must be an absolute path: \"%s\"", config->workspace_root);
        for (char **root = config->additional_writable_roots; root && *root; root++)
                if ((*root)[0] != '/')
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "config: additionalWritableRoots: \"%s\" is not an absolute path", *root);
        for (char **path = config->allowed_unix_sockets; path && *path; path++)
                if ((*path)[0] != '/')
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "config: allowUnixSockets: \"%s\" is not an absolute path", *path);
        if (config->probe_timeout_ms < 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "sandbox-local: probeTimeoutMs must be a positive finite number");
        return 0;
}

/* The defaults, with `path` (may be NULL: none) loaded over them; the path in use is kept, absolute. */
static int load_config_file(dsh_runtime *runtime, const char *path, dsh_error *error)
{
        int result = dsh_config_init(&runtime->config, error);

        if (result < 0 || !path)
                return result;
        /* Loaded by the name given, so that a bad file's message names it as the caller wrote it. */
        result = dsh_config_load_file(&runtime->config, path, error);
        if (result < 0)
                return result;
        return option_path(path, "config file", &runtime->config_path, error);
}

static int load_config(dsh_runtime *runtime, const dsh_runtime_options *options, dsh_error *error)
{
        dsh_autofree char *default_path = NULL;
        int result;

        switch (options->config_source) {
        case DSH_RUNTIME_CONFIG_DEFAULT:
                /* $DSH_SANDBOX_CONFIG (which must then exist), else the XDG file when present. */
                default_path = dsh_config_default_path();
                return load_config_file(runtime, default_path, error);
        case DSH_RUNTIME_CONFIG_FILE:
                if (!options->config_path || options->config_path[0] == '\0')
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "DSH_RUNTIME_CONFIG_FILE needs a config_path");
                return load_config_file(runtime, options->config_path, error);
        case DSH_RUNTIME_CONFIG_VALUES:
                if (!options->config)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "DSH_RUNTIME_CONFIG_VALUES needs a config");
                result = check_config_values(options->config, error);
                return result < 0 ? result : copy_config(&runtime->config, options->config, error);
        }
        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "unknown config source %d",
                             (int) options->config_source);
}

/* ----------------------------------------------------- session store -- */

static int open_session_store(dsh_runtime *runtime, const dsh_runtime_options *options, dsh_error *error)
{
        dsh_autofree char *default_directory = NULL, *directory = NULL;
        const char *named = options->state_directory;
        int result;

        if (!named) {
                default_directory = dsh_session_store_default_directory();
                named = default_directory;
        }
        if (!named) {
                /* No $HOME and nothing set: agentless calls still work, sessions say why they cannot. */
                result = dsh_session_store_open(NULL, &runtime->session_store, &runtime->session_store_error);
                return result == -ENOMEM ? out_of_memory(error) : 0;
        }
        /* Absolute now: the store must not move with the embedding program's cwd. */
        result = option_path(named, "session state directory", &directory, error);
        if (result < 0)
                return result;
        return dsh_session_store_open(directory, &runtime->session_store, error);
}

/* ---------------------------------------------------------- provider -- */

/* The backends, the probe bound and the runner command, as configured. */
static int apply_provider_config(dsh_provider *provider, const dsh_config *config, const char *backend,
                                 dsh_error *error)
{
        const char *sole[2] = { backend, NULL };
        bool explicit_backend = backend && strcmp(backend, "auto") != 0;
        int result = 0;

        /* A sole backend names the runner for this runtime: the operator's override does not apply then. */
        if (explicit_backend)
                result = dsh_provider_set_backends(provider, sole, error);
        else if (config->backends)
                result = dsh_provider_set_backends(provider, (const char *const *) config->backends, error);
        if (result == 0 && config->probe_timeout_ms)
                result = dsh_provider_set_probe_timeout_ms(provider, config->probe_timeout_ms, error);
        if (result == 0 && !explicit_backend && (config->runner_command || config->runner_failure_signatures))
                result = dsh_provider_set_runner_command(provider, config->runner_command,
                                                         config->runner_failure_signatures, error);
        return result;
}

/* The protected subpaths and the require flag, as configured (the provider's defaults when the config is silent). */
static int protect_subpaths(dsh_protections *protections, const dsh_config *config, dsh_error *error)
{
        const char *const *subpaths = config->protected_subpaths_set ? (const char *const *) config->protected_subpaths
                                                                     : dsh_provider_default_protected_subpaths();

        protections->require_subpaths = config->require_protected_subpaths;
        if (subpaths && !(protections->subpaths = dsh_strv_copy((char *const *) subpaths)))
                return out_of_memory(error);
        return 0;
}

/*
 * The secrets as configured (docs/secrets.md), through the provider's own
 * setters, which check each entry again (a config given in code skipped the
 * file's checks).  A key the config is silent on leaves the provider's
 * default, which masks and scrubs: an empty list is the only way to none.
 */
static int apply_secrets(dsh_provider *provider, const dsh_config *config, dsh_error *error)
{
        static const char *const none[] = { NULL };
        const char *const *masks = config->masked_paths_set ? (const char *const *) config->masked_paths
                                                            : dsh_default_masked_paths();
        const char *const *deny = NULL;  /* the provider's default */
        int result;

        if (config->environment_deny_set)
                deny = config->environment_deny ? (const char *const *) config->environment_deny : none;
        result = dsh_provider_set_masked_paths(provider, masks, config->require_masks, error);
        if (result == 0)
                result = dsh_provider_set_environment_rules(provider, deny,
                                                            (const char *const *) config->environment_allow, error);
        return result;
}

/*
 * $DSH_SANDBOX_BWRAP names the bwrap binary explicitly (absolute), for tests
 * and for hosts with bwrap outside the trusted places.  The environment is
 * the caller's, not a confined command's: a command that creates a runtime
 * itself is already inside its own sandbox.
 */
static int apply_bwrap_override(dsh_provider *provider, dsh_error *error)
{
        const char *bwrap = getenv("DSH_SANDBOX_BWRAP");

        if (!bwrap || bwrap[0] == '\0')
                return 0;
        return dsh_provider_set_bwrap_path(provider, bwrap, error);
}

/* The cache in use (a new string, or NULL: none). */
static int verdict_cache_directory(const dsh_runtime_options *options, char **directory_out, dsh_error *error)
{
        *directory_out = NULL;
        if (!options->use_verdict_cache)
                return 0;
        if (options->cache_directory)
                return option_path(options->cache_directory, "verdict cache directory", directory_out, error);
        *directory_out = dsh_provider_default_verdict_cache_dir();   /* NULL: no absolute XDG_CACHE_HOME or HOME */
        return 0;
}

/* The running executable's path (a new string), or NULL. */
static char *own_executable(void)
{
        char executable[PATH_MAX];
        ssize_t length = readlink("/proc/self/exe", executable, sizeof(executable) - 1);

        if (length <= 0)
                return NULL;
        executable[length] = '\0';
        return strdup(executable);
}

static bool executable_in(const char *directory, const char *name)
{
        dsh_autofree char *path = NULL;

        return asprintf(&path, "%s/%s", directory, name) >= 0 && access(path, X_OK) == 0;
}

/*
 * The launchers named in confined argvs: the directory given, else the one
 * beside the running executable when it holds both (a build tree, a
 * relocated install: landlock-run for Landlock's argvs, dsh-sandbox-exec for
 * bwrap's last step, which the provider looks for beside landlock-run), else
 * the provider's compiled-in install location.  Never searched on PATH: a
 * launcher planted in the workspace or in a writable PATH entry must not
 * become the runner.
 */
static int apply_launcher_directory(dsh_provider *provider, const dsh_runtime_options *options, dsh_error *error)
{
        dsh_autofree char *directory = NULL, *landlock_run = NULL;
        char *slash;
        int result;

        if (options->launcher_directory) {
                result = option_path(options->launcher_directory, "launcher directory", &directory, error);
                if (result < 0)
                        return result;
        } else {
                directory = own_executable();
                slash = directory ? strrchr(directory, '/') : NULL;
                if (!slash)
                        return 0;
                *slash = '\0';
                if (!executable_in(directory, LANDLOCK_RUN_NAME) || !executable_in(directory, EXEC_HELPER_NAME))
                        return 0;
        }
        if (asprintf(&landlock_run, "%s/%s", directory, LANDLOCK_RUN_NAME) < 0) {
                landlock_run = NULL;
                return out_of_memory(error);
        }
        return dsh_provider_set_landlock_run_path(provider, landlock_run, error);
}

/* Appends `path` (owned, may be NULL: skipped) made absolute, once. */
static int append_protected(char ***paths, char *path)
{
        dsh_autofree char *owned = path, *absolute = NULL;

        if (!owned || owned[0] == '\0')
                return 0;
        absolute = dsh_path_from_cwd(owned);
        if (!absolute)
                return errno == ENOMEM ? -ENOMEM : 0;   /* a relative path with no cwd names nothing to protect */
        for (char **existing = *paths; existing && *existing; existing++)
                if (strcmp(*existing, absolute) == 0)
                        return 0;
        return dsh_strv_append(paths, absolute);
}

static char *copy_or_null(const char *text)
{
        return text ? strdup(text) : NULL;
}

/*
 * What a confined command must never be able to change, because a later
 * call reads it: the config file in use, the default config directory (a
 * config.json created there takes effect), the session store and the
 * verdict cache, the remote provider's control sockets (whoever can
 * replace one gets the next remote call: src/remote/remote-ssh.c) and the ssh
 * config that call reads.  The default verdict cache also holds every
 * session's scratch (apply_scratch_directory()): only a call's own
 * temp area and cache are ever granted, by the backends themselves.  The default
 * store and cache are protected too when this
 * runtime uses others: the next call of another front end (the CLI) reads
 * those.
 */
static int hide_own_directories(const dsh_runtime *runtime, dsh_protections *protections, dsh_error *error);

/*
 * Every control directory any call of this user made, under whatever
 * XDG_RUNTIME_DIR or HOME (src/remote/remote-registry.c), and the registry
 * itself: a master or endpoint there is as reachable as the current one.
 * They are protected (read-only; both backends' supervisors refuse every
 * write and connect into them), not hidden: why in remote-registry.c.
 * A registry that is there but not trusted refuses the sandbox (fail
 * closed: which directories to protect is unknown).  0, -ENOMEM, or the
 * error set.
 */
static int append_registered_control_directories(char ***paths, dsh_error *error)
{
        char **registered = NULL;
        int result = dsh_remote_registry_list(&registered);

        if (result == -ENOMEM)
                return result;
        if (result < 0) {
                dsh_autofree char *registry = dsh_remote_registry_directory();

                dsh_error_set(error, DSH_ERROR_SYSTEM, -result,
                              "the remote's registry of control directories (%s) is not this user's own regular file",
                              registry ? registry : "?");
                return -EPERM;
        }
        result = append_protected(paths, dsh_remote_registry_directory());
        for (size_t i = 0; result == 0 && registered && registered[i]; i++)
                result = append_protected(paths, strdup(registered[i]));
        dsh_strv_free(registered);
        return result;
}

static int protect_own_files(dsh_protections *protections, const dsh_runtime *runtime, const char *cache_directory,
                             dsh_error *error)
{
        char **paths = NULL;
        int result = append_protected(&paths, copy_or_null(runtime->config_path));

        if (result == 0)
                result = append_protected(&paths, dsh_config_default_directory());
        if (result == 0 && runtime->session_store)
                result = append_protected(&paths, copy_or_null(dsh_session_store_directory(runtime->session_store)));
        if (result == 0)
                result = append_protected(&paths, dsh_session_store_default_directory());
        if (result == 0)
                result = append_protected(&paths, copy_or_null(cache_directory));
        if (result == 0)
                result = append_protected(&paths, dsh_provider_default_verdict_cache_dir());
        if (result == 0)
                result = append_protected(&paths, dsh_remote_default_control_directory());
        /* Both places a later call may use, whichever this process's XDG_RUNTIME_DIR names (remote-ssh.c). */
        if (result == 0)
                result = append_protected(&paths, dsh_remote_home_control_directory());
        if (result == 0)
                result = append_registered_control_directories(&paths, error);
        /*
         * ~/.ssh: every `--remote` call runs ssh, which reads ~/.ssh/config
         * — a ProxyCommand, LocalCommand or `Match exec` there runs
         * unconfined on the next call, and a ControlPath there hands that
         * call to whoever listens on it.  On a remote host, its
         * authorized_keys decides who logs in.
         */
        if (result == 0)
                result = append_protected(&paths, dsh_remote_user_ssh_directory(false));
        if (result == 0)
                result = append_protected(&paths, dsh_remote_user_ssh_directory(true));
        if (result < 0) {
                dsh_strv_free(paths);
                return result == -ENOMEM ? out_of_memory(error) : result;   /* else the registry's, set */
        }
        protections->paths = paths;
        return hide_own_directories(runtime, protections, error);
}

/*
 * Some of the sandbox's own directories are not only kept unchanged but
 * hidden (protections.h: `hidden`), because a read-only view is enough to
 * act through them:
 *  - the remote's ssh control directories: a read-only view of a master's
 *    control socket is enough to connect to it, and the unconfined master
 *    then does what it is asked — `-O forward -L PATH:...` creates a socket
 *    file wherever this user can write, `-O exit` ends it, a new session
 *    runs on the remote;
 *  - the session store: flock() needs only a read-only descriptor, so a
 *    command that can open the log can hold its lock while the user narrows
 *    the session (the lock is bounded too: policy/session-lock.h).
 */
static int hide_own_directories(const dsh_runtime *runtime, dsh_protections *protections, dsh_error *error)
{
        int result = append_protected(&protections->hidden, dsh_remote_default_control_directory());

        if (result == 0)
                result = append_protected(&protections->hidden, dsh_remote_home_control_directory());
        if (result == 0)
                result = append_protected(&protections->hidden, dsh_remote_registry_directory());
        if (result == 0 && runtime->session_store)
                result = append_protected(&protections->hidden,
                                          copy_or_null(dsh_session_store_directory(runtime->session_store)));
        return result == -ENOMEM ? out_of_memory(error) : result;
}

/*
 * The programs later calls run: by default this very program, since the
 * next call a harness makes runs it again (the provider protects its own
 * launchers and bwrap; it cannot know which front end runs it).
 */
static int protect_executables(dsh_protections *protections, const dsh_runtime_options *options, dsh_error *error)
{
        dsh_autofree char *executable = NULL;

        if (options->protected_executables) {
                protections->executables = dsh_strv_copy(options->protected_executables);
                return protections->executables ? 0 : out_of_memory(error);
        }
        executable = own_executable();
        if (!executable)
                return 0;
        return dsh_strv_append(&protections->executables, executable) < 0 ? out_of_memory(error) : 0;
}

/*
 * Each session's scratch (its /tmp under bwrap, its package-manager caches):
 * in the default verdict cache directory, which protect_own_files() puts out
 * of every confined command's reach, whichever cache this runtime uses.  No
 * absolute XDG_CACHE_HOME or HOME: no scratch, bwrap's /tmp is then a tmpfs
 * per call and the caches stay where the tools put them.
 */
static int apply_scratch_directory(dsh_provider *provider, dsh_error *error)
{
        dsh_autofree char *cache = dsh_provider_default_verdict_cache_dir();
        dsh_autofree char *scratch = NULL;

        if (!cache)
                return 0;
        if (asprintf(&scratch, "%s/scratch", cache) < 0) {
                scratch = NULL;
                return out_of_memory(error);
        }
        return dsh_provider_set_scratch_dir(provider, scratch, error);
}

/*
 * The protections, built here once and handed to the provider in one step
 * (dsh_provider_set_protections(), checked as its setters check them):
 * its backends, the shield they plan and the file guard all read that one
 * copy.  The launcher directory is the landlock-run path's
 * (apply_launcher_directory()).
 */
static int protect(dsh_runtime *runtime, const dsh_runtime_options *options, const char *cache_directory,
                   dsh_error *error)
{
        dsh_protections protections = DSH_PROTECTIONS_INIT;
        int result = protect_subpaths(&protections, &runtime->config, error);

        if (result == 0)
                result = protect_own_files(&protections, runtime, cache_directory, error);
        if (result == 0)
                result = protect_executables(&protections, options, error);
        if (result == 0)
                result = dsh_provider_set_protections(runtime->provider, &protections, error);
        dsh_protections_clear(&protections);
        return result;
}

static int setup_provider(dsh_runtime *runtime, const dsh_runtime_options *options, dsh_error *error)
{
        dsh_autofree char *cache_directory = NULL;
        int result;

        runtime->provider = dsh_provider_new();
        if (!runtime->provider)
                return out_of_memory(error);
        result = apply_provider_config(runtime->provider, &runtime->config, options->backend, error);
        if (result == 0)
                result = apply_bwrap_override(runtime->provider, error);
        if (result == 0)
                result = verdict_cache_directory(options, &cache_directory, error);
        if (result == 0 && cache_directory)
                result = dsh_provider_set_verdict_cache_dir(runtime->provider, cache_directory, error);
        if (result == 0)
                result = apply_launcher_directory(runtime->provider, options, error);
        if (result == 0)
                result = apply_scratch_directory(runtime->provider, error);
        if (result == 0)
                result = protect(runtime, options, cache_directory, error);
        if (result == 0)
                result = apply_secrets(runtime->provider, &runtime->config, error);
        return result;
}

/* ------------------------------------------------------------ runtime -- */

int dsh_runtime_new(const dsh_runtime_options *options, dsh_runtime **runtime_out, dsh_error *error)
{
        static const dsh_runtime_options defaults = DSH_RUNTIME_OPTIONS_INIT;
        dsh_runtime *runtime;
        int result;

        *runtime_out = NULL;
        if (!options)
                options = &defaults;
        runtime = calloc(1, sizeof(*runtime));
        if (!runtime)
                return out_of_memory(error);
        runtime->session_store_error = (dsh_error) DSH_ERROR_INIT;
        result = load_config(runtime, options, error);
        if (result == 0)
                result = dsh_policy_service_new(&runtime->config, &runtime->policy_service, error);
        if (result == 0)
                result = open_session_store(runtime, options, error);
        if (result == 0)
                result = setup_provider(runtime, options, error);
        if (result < 0) {
                dsh_runtime_free(runtime);
                return result;
        }
        *runtime_out = runtime;
        return 0;
}

void dsh_runtime_free(dsh_runtime *runtime)
{
        if (!runtime)
                return;
        dsh_provider_free(runtime->provider);
        dsh_session_store_free(runtime->session_store);
        dsh_error_clear(&runtime->session_store_error);
        dsh_policy_service_free(runtime->policy_service);
        free(runtime->config_path);
        dsh_config_clear(&runtime->config);
        free(runtime);
}

const dsh_config *dsh_runtime_config(const dsh_runtime *runtime)
{
        return &runtime->config;
}

const char *dsh_runtime_config_path(const dsh_runtime *runtime)
{
        return runtime->config_path;
}

dsh_provider *dsh_runtime_provider(dsh_runtime *runtime)
{
        return runtime->provider;
}

dsh_policy_service *dsh_runtime_policy_service(dsh_runtime *runtime)
{
        return runtime->policy_service;
}

int dsh_runtime_session_store(dsh_runtime *runtime, dsh_session_store **store_out, dsh_error *error)
{
        const dsh_error *why = &runtime->session_store_error;

        *store_out = runtime->session_store;
        if (runtime->session_store)
                return 0;
        return dsh_error_set(error, why->code, why->errno_value, "%s",
                             why->message ? why->message : "no session state directory");
}

int dsh_runtime_open_session(dsh_runtime *runtime, const char *id, dsh_session **session_out, dsh_error *error)
{
        dsh_session_store *store;
        int result;

        *session_out = NULL;
        result = dsh_runtime_session_store(runtime, &store, error);
        return result < 0 ? result : dsh_session_open(store, id, session_out, error);
}

/* ------------------------------------------------------------ resolve -- */

/* The request's relative paths made absolute; `roots_out` owns the writable roots' copies. */
static int absolute_request(const dsh_policy_request *request, char **root_out, char ***roots_out, dsh_error *error)
{
        int result = option_path(request->workspace_root, "workspace root", root_out, error);

        for (char *const *root = request->additional_writable_roots; result == 0 && root && *root; root++) {
                dsh_autofree char *absolute = NULL;

                result = option_path(*root, "writable root", &absolute, error);
                if (result == 0 && dsh_strv_append(roots_out, absolute) < 0)
                        result = out_of_memory(error);
        }
        return result;
}

int dsh_runtime_resolve(dsh_runtime *runtime, const dsh_policy_request *request, dsh_policy *policy_out,
                        dsh_error *error)
{
        static const dsh_policy_request agentless = DSH_POLICY_REQUEST_INIT;
        dsh_policy_request absolute = DSH_POLICY_REQUEST_INIT;
        dsh_autofree char *root = NULL, *cwd = NULL;
        char **roots = NULL;
        int result;

        *policy_out = (dsh_policy) DSH_POLICY_INIT;
        if (!request)
                request = &agentless;
        absolute = *request;
        result = absolute_request(request, &root, &roots, error);
        absolute.workspace_root = root;
        absolute.additional_writable_roots = roots;
        /* Values given in code may carry no workspaceRoot: an agentless call then works in the cwd. */
        if (result == 0 && !root && !request->session && !dsh_policy_service_workspace_root(runtime->policy_service)) {
                cwd = getcwd(NULL, 0);
                if (!cwd)
                        result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, errno,
                                               "cannot resolve the workspace root: the cwd: %s", strerror(errno));
                absolute.workspace_root = cwd;
        }
        if (result == 0)
                result = dsh_policy_service_resolve(runtime->policy_service, &absolute, policy_out, error);
        dsh_strv_free(roots);
        return result;
}
