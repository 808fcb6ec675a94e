/* SPDX-License-Identifier: MIT */
/*
 * The local provider: backend selection, the cached verdict, and the two
 * entry points (confine, spawn) that every confined execution goes through.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "config.h"
#include "dsh-sandbox/config.h"
#include "error.h"
#include "path.h"
#include "spawn.h"
#include "core/sandbox-exec-status.h"
#include "verdict-cache.h"
#include "xdg.h"

#define DEFAULT_LANDLOCK_RUN_PATH DSH_SANDBOX_LIBEXECDIR "/landlock-run"

/* The Linux backends in their default chain order: bwrap, then Landlock. */
static const dsh_backend_ops *const known_backends[] = {
        &dsh_backend_bwrap,
        &dsh_backend_landlock,
};

const dsh_backend_ops *dsh_backend_by_name(const char *name)
{
        for (size_t i = 0; i < sizeof(known_backends) / sizeof(known_backends[0]); i++)
                if (strcmp(known_backends[i]->name, name) == 0)
                        return known_backends[i];
        return NULL;
}

void dsh_backend_report_clear(dsh_backend_report *report)
{
        free(report->reason);
        free(report->version);
        free(report->runner_path);
        dsh_strv_free(report->landlock_scopes);
        dsh_strv_free(report->landlock_scopes_missing);
        dsh_strv_free(report->partial_reasons);
        *report = (dsh_backend_report) DSH_BACKEND_REPORT_INIT;
}

static void forget_verdict(dsh_provider *provider)
{
        provider->verdict_cached = false;
        provider->verdict_from_cache = false;
        provider->selected = NULL;
        free(provider->unavailable_detail);
        provider->unavailable_detail = NULL;
}

/* Hooks and config run unconfined at the user's next `git commit`: held back by default. */
static const char *const default_protected_subpaths[] = { ".git/hooks", ".git/config", NULL };

const char *const *dsh_provider_default_protected_subpaths(void)
{
        return default_protected_subpaths;
}

dsh_provider *dsh_provider_new(void)
{
        dsh_provider *provider = calloc(1, sizeof(*provider));

        if (!provider)
                return NULL;
        provider->landlock_run_path = strdup(DEFAULT_LANDLOCK_RUN_PATH);
        if (!provider->landlock_run_path) {
                free(provider);
                return NULL;
        }
        for (size_t i = 0; i < sizeof(known_backends) / sizeof(known_backends[0]); i++)
                provider->backends[provider->backend_count++] = known_backends[i];
        provider->probe_timeout_ms = DSH_CONFIG_DEFAULT_PROBE_TIMEOUT_MS;
        if (dsh_provider_set_protected_subpaths(provider, default_protected_subpaths, false, NULL) < 0) {
                dsh_provider_free(provider);
                return NULL;
        }
        return provider;
}

void dsh_provider_free(dsh_provider *provider)
{
        if (!provider)
                return;
        forget_verdict(provider);
        free(provider->landlock_run_path);
        dsh_strv_free(provider->protected_paths);
        dsh_strv_free(provider->protected_executables);
        dsh_strv_free(provider->protected_subpaths);
        free(provider->bwrap_path);
        dsh_strv_free(provider->runner_command);
        dsh_strv_free(provider->runner_failure_signatures);
        free(provider->verdict_cache_dir);
        free(provider);
}

/*
 * The one check of a backend chain, shared by the provider and the config
 * loader: every name known (known_backends is the only list), none twice,
 * at least one.  Fills `chosen` (DSH_PROVIDER_MAX_BACKENDS entries) when
 * not NULL.
 */
static int resolve_backend_names(const char *const *names, const dsh_backend_ops **chosen, size_t *count_out,
                                 dsh_error *error)
{
        const dsh_backend_ops *seen[DSH_PROVIDER_MAX_BACKENDS];
        size_t count = 0;

        for (; names && *names; names++) {
                const dsh_backend_ops *backend = dsh_backend_by_name(*names);

                if (!backend) {
                        char known[128] = "";

                        for (size_t i = 0; i < sizeof(known_backends) / sizeof(known_backends[0]); i++)
                                snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
                                         i > 0 ? ", " : "", known_backends[i]->name);
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "unknown backend \"%s\" (known: %s)", *names, known);
                }
                for (size_t i = 0; i < count; i++)
                        if (seen[i] == backend)
                                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                                     "backend \"%s\" is listed twice", *names);
                if (count == DSH_PROVIDER_MAX_BACKENDS)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "too many backends");
                seen[count++] = backend;
        }
        if (count == 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the backend list is empty");
        if (chosen)
                memcpy(chosen, seen, count * sizeof(seen[0]));
        *count_out = count;
        return 0;
}

int dsh_provider_check_backends(const char *const *names, dsh_error *error)
{
        size_t count;

        return resolve_backend_names(names, NULL, &count, error);
}

int dsh_provider_set_backends(dsh_provider *provider, const char *const *names, dsh_error *error)
{
        const dsh_backend_ops *chosen[DSH_PROVIDER_MAX_BACKENDS];
        size_t count = 0;
        int result = resolve_backend_names(names, chosen, &count, error);

        if (result < 0)
                return result;
        memcpy(provider->backends, chosen, count * sizeof(chosen[0]));
        provider->backend_count = count;
        forget_verdict(provider);
        return 0;
}

int dsh_provider_set_landlock_run_path(dsh_provider *provider, const char *path, dsh_error *error)
{
        char *copy;

        if (!path || path[0] != '/')
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "the landlock-run path must be absolute: \"%s\"", path ? path : "");
        copy = strdup(path);
        if (!copy)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        free(provider->landlock_run_path);
        provider->landlock_run_path = copy;
        forget_verdict(provider);
        return 0;
}

int dsh_provider_set_bwrap_path(dsh_provider *provider, const char *path, dsh_error *error)
{
        char *copy = NULL;

        if (path && path[0] != '/')
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the bwrap path must be absolute: \"%s\"",
                                     path);
        if (path) {
                copy = strdup(path);
                if (!copy)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        free(provider->bwrap_path);
        provider->bwrap_path = copy;
        forget_verdict(provider);
        return 0;
}

int dsh_probe_timeout_check(double timeout_ms, long *checked_out, dsh_error *error)
{
        if (!isfinite(timeout_ms) || timeout_ms <= 0 || timeout_ms > (double) INT_MAX)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "sandbox-local: probeTimeoutMs must be a positive finite number");
        *checked_out = (long) ceil(timeout_ms);
        return 0;
}

int dsh_provider_set_probe_timeout_ms(dsh_provider *provider, long timeout_ms, dsh_error *error)
{
        long checked = 0;
        int result = dsh_probe_timeout_check((double) timeout_ms, &checked, error);

        if (result < 0)
                return result;
        provider->probe_timeout_ms = checked;
        forget_verdict(provider);
        return 0;
}

int dsh_provider_set_runner_command(dsh_provider *provider, char *const *command, char *const *failure_signatures,
                                    dsh_error *error)
{
        char **command_copy = NULL, **signatures_copy = NULL;
        int result = dsh_runner_command_check(command, failure_signatures, NULL, error);

        if (result < 0)
                return result;
        if (command) {
                command_copy = dsh_strv_copy(command);
                signatures_copy = dsh_strv_copy(failure_signatures);
                if (!command_copy || !signatures_copy) {
                        dsh_strv_free(command_copy);
                        dsh_strv_free(signatures_copy);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
        }
        dsh_strv_free(provider->runner_command);
        dsh_strv_free(provider->runner_failure_signatures);
        provider->runner_command = command_copy;
        provider->runner_failure_signatures = signatures_copy;
        forget_verdict(provider);
        return 0;
}

/* Copies absolute `paths` (NULL: none) into *field. */
static int set_absolute_paths(char ***field, char *const *paths, const char *what, dsh_error *error)
{
        char **copy;

        for (char *const *path = paths; path && *path; path++)
                if ((*path)[0] != '/')
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s must be absolute: \"%s\"", what,
                                             *path);
        copy = paths ? dsh_strv_copy(paths) : NULL;
        if (paths && !copy)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        dsh_strv_free(*field);
        *field = copy;
        return 0;
}

int dsh_provider_set_protected_paths(dsh_provider *provider, char *const *paths, dsh_error *error)
{
        return set_absolute_paths(&provider->protected_paths, paths, "a protected path", error);
}

int dsh_provider_set_protected_executables(dsh_provider *provider, char *const *paths, dsh_error *error)
{
        return set_absolute_paths(&provider->protected_executables, paths, "a protected executable", error);
}

/* A name relative to a writable root: no empty, "." or ".." component, not absolute. */
static bool subpath_is_valid(const char *subpath)
{
        const char *component = subpath;

        if (!subpath[0] || subpath[0] == '/')
                return false;
        for (;;) {
                size_t length = strcspn(component, "/");

                if (length == 0 || (length == 1 && component[0] == '.') ||
                    (length == 2 && component[0] == '.' && component[1] == '.'))
                        return false;
                if (!component[length])
                        return true;
                component += length + 1;
        }
}

int dsh_provider_set_protected_subpaths(dsh_provider *provider, const char *const *subpaths, bool required,
                                        dsh_error *error)
{
        char **copy = NULL;

        for (const char *const *subpath = subpaths; subpath && *subpath; subpath++) {
                if (!subpath_is_valid(*subpath)) {
                        dsh_strv_free(copy);
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "a protected subpath must be a relative path without \".\" or \"..\" "
                                             "components: \"%s\"",
                                             *subpath);
                }
                if (dsh_strv_append(&copy, *subpath) < 0) {
                        dsh_strv_free(copy);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
        }
        dsh_strv_free(provider->protected_subpaths);
        provider->protected_subpaths = copy;
        provider->require_protected_subpaths = required;
        return 0;
}

int dsh_provider_set_verdict_cache_dir(dsh_provider *provider, const char *directory, dsh_error *error)
{
        char *copy = NULL;

        if (directory && directory[0] != '/')
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "the verdict cache directory must be absolute: \"%s\"", directory);
        if (directory) {
                copy = strdup(directory);
                if (!copy)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        free(provider->verdict_cache_dir);
        provider->verdict_cache_dir = copy;
        forget_verdict(provider);
        return 0;
}

char *dsh_provider_default_verdict_cache_dir(void)
{
        return dsh_xdg_directory(NULL, "XDG_CACHE_HOME", ".cache");
}

/* "a bwrap probe did not finish within 300 ms (probeTimeoutMs)"; NULL when out of memory. */
static char *probe_timeout_reason(const dsh_provider *provider, const dsh_backend_ops *backend)
{
        char *reason = NULL;

        if (asprintf(&reason, "a %s probe did not finish within %ld ms (probeTimeoutMs)", backend->name,
                     provider->probe_timeout_ms) < 0)
                return NULL;
        return reason;
}

/* The policy functional probes run under: read-only, rooted at "/" (always present, already canonical). */
static dsh_policy probe_policy(void)
{
        dsh_policy policy = DSH_POLICY_INIT;

        policy.mode = DSH_MODE_READ_ONLY;
        policy.workspace_root = (char *) "/";
        return policy;
}

/*
 * A probe must prove confinement, not only that a command starts (bwrap run
 * by root without dropping capabilities starts fine and confines nothing):
 * a confined shell tries to create a file in a fresh directory outside the
 * read-only policy, and the backend stays usable only if no file appears.
 */
static void prove_confinement(dsh_provider *provider, const dsh_backend_ops *backend, dsh_backend_report *report)
{
        static const char *const parents[] = { "/tmp", "/var/tmp", NULL };
        char directory[64], target[96];
        char *argv[] = { (char *) "sh", (char *) "-c", (char *) "echo escaped > \"$1\"; exit 0", (char *) "sh",
                         target, NULL };
        dsh_policy policy = probe_policy();
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *stderr_text = NULL;
        bool made = false, escaped;
        int exit_code = 0;

        for (const char *const *parent = parents; *parent && !made; parent++) {
                snprintf(directory, sizeof(directory), "%s/dsh-sandbox-probe.XXXXXX", *parent);
                made = mkdtemp(directory) != NULL;
        }
        if (!made)
                return;  /* nowhere to try: the functional run above is all the evidence there is */
        snprintf(target, sizeof(target), "%s/escaped", directory);
        if (dsh_provider_run_bounded(provider, backend, argv, &policy, &exit_code, &stderr_text, &error) < 0 ||
            exit_code < 0) {
                report->usable = false;
                report->transient = true;  /* out of time or of a resource: proves nothing either way */
                free(report->reason);
                if (exit_code < 0)
                        report->reason = probe_timeout_reason(provider, backend);
                else
                        report->reason = strdup("the confinement check could not run under this backend");
        }
        escaped = access(target, F_OK) == 0;
        unlink(target);
        rmdir(directory);
        if (escaped) {
                report->usable = false;
                report->transient = false;  /* a proven escape is a fact about the runner, not a bad moment */
                free(report->reason);
                if (asprintf(&report->reason, "a command confined by %s could still write outside its policy on "
                                              "this host: it does not confine here",
                             backend->name) < 0)
                        report->reason = NULL;
        }
        dsh_error_clear(&error);
}

/*
 * Probes one backend: its own probe, then — when that probe only checked
 * static facts — a confined `true` through its spawn path, because only a
 * command that really ran proves the backend works on this host; then the
 * confinement proof.  All of it under one deadline (probeTimeoutMs): every
 * step gets what the steps before it left, so a probe ends within its bound
 * however it stalls.  Every failure of the functional run is transient: the
 * static probe has already ruled out what is known to be missing.
 */
static void probe_backend(dsh_provider *provider, const dsh_backend_ops *backend, dsh_backend_report *report)
{
        char *const argv[] = { (char *) "true", NULL };
        dsh_policy policy = probe_policy();
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *stderr_text = NULL;
        bool started = dsh_provider_begin_probe(provider);
        int exit_code = 0;

        backend->probe(provider, report);
        if (backend == &dsh_backend_landlock && !report->runner_path && provider->landlock_run_path)
                report->runner_path = strdup(provider->landlock_run_path);
        if (report->usable && backend->probe_is_functional)
                prove_confinement(provider, backend, report);
        if (!report->usable || backend->probe_is_functional)
                goto out;
        if (dsh_provider_run_bounded(provider, backend, argv, &policy, &exit_code, &stderr_text, &error) < 0) {
                report->usable = false;
                report->transient = true;
                report->reason = strdup(error.message ? error.message : "a confined `true` could not be started");
        } else if (exit_code != 0) {
                report->usable = false;
                report->transient = true;
                if (exit_code < 0)
                        report->reason = probe_timeout_reason(provider, backend);
                else if (asprintf(&report->reason, "a confined `true` failed under %s with status %d: %.*s",
                                  backend->name, exit_code, stderr_text ? (int) strcspn(stderr_text, "\n") : 0,
                                  stderr_text ? stderr_text : "") < 0)
                        report->reason = NULL;
        }
        if (report->usable)
                prove_confinement(provider, backend, report);
out:
        dsh_error_clear(&error);
        dsh_provider_end_probe(provider, started);
}

static bool backend_in_chain(const dsh_provider *provider, const dsh_backend_ops *backend)
{
        for (size_t i = 0; i < provider->backend_count; i++)
                if (provider->backends[i] == backend)
                        return true;
        return false;
}

/* The persisted verdict for this exact key, when it names a backend of the chain. */
static const dsh_backend_ops *cached_verdict(dsh_provider *provider)
{
        dsh_autofree char *path = dsh_verdict_cache_path(provider);
        dsh_autofree char *key = path ? dsh_verdict_cache_key(provider) : NULL;
        dsh_autofree char *name = NULL;
        const dsh_backend_ops *backend;

        if (!key || dsh_verdict_cache_read(path, key, &name) < 0)
                return NULL;
        backend = dsh_backend_by_name(name);
        return backend && backend_in_chain(provider, backend) ? backend : NULL;
}

/*
 * Only a usable verdict is persisted.  A refusal costs a probe only on hosts
 * that cannot run anything confined anyway, and a persisted refusal could
 * outlive a fix that no key observes (an AppArmor profile for bwrap, a
 * container's seccomp profile).  And only a clean one (see probe_chain).
 */
static void persist_verdict(dsh_provider *provider, const dsh_backend_ops *backend)
{
        dsh_autofree char *path = dsh_verdict_cache_path(provider);
        dsh_autofree char *key = path ? dsh_verdict_cache_key(provider) : NULL;

        if (key && backend)
                (void) dsh_verdict_cache_write(path, key, backend->name);
}

/*
 * Probes the chain in order; the first usable backend wins.  Records the
 * verdict for this provider, and persists it only when the probe was clean:
 * every backend before the winner failed for a deterministic reason.  One
 * that failed transiently (a timeout under load, a process out of fds) may
 * work on the next call, and a persisted verdict would pass it over for good.
 */
static const dsh_backend_ops *probe_chain(dsh_provider *provider)
{
        bool clean = true;

        for (size_t i = 0; i < provider->backend_count; i++) {
                dsh_backend_report report = DSH_BACKEND_REPORT_INIT;

                probe_backend(provider, provider->backends[i], &report);
                if (report.usable) {
                        provider->selected = provider->backends[i];
                        dsh_backend_report_clear(&report);
                        if (clean)
                                persist_verdict(provider, provider->selected);
                        return provider->selected;
                }
                clean = clean && !report.transient;
                free(provider->unavailable_detail);
                provider->unavailable_detail = report.reason ? strdup(report.reason) : NULL;
                dsh_backend_report_clear(&report);
        }
        return NULL;
}

/*
 * Selects the backend once per provider.  The operator's runner command
 * needs no probe (the operator vouches for it).  A sole candidate is taken
 * without a probe: its own refusal at confine or spawn time is the
 * fail-closed end.  Several candidates are probed in order and the first
 * usable one wins; the verdict, "unavailable" included, is cached for the
 * provider's lifetime, and a usable one also across processes when the
 * verdict cache is enabled.
 */
static const dsh_backend_ops *select_backend(dsh_provider *provider)
{
        if (provider->verdict_cached)
                return provider->selected;
        provider->verdict_cached = true;
        if (provider->runner_command) {
                provider->selected = &dsh_backend_runner_command;
                return provider->selected;
        }
        if (provider->backend_count == 1) {
                provider->selected = provider->backends[0];
                return provider->selected;
        }
        provider->selected = cached_verdict(provider);
        if (provider->selected) {
                provider->verdict_from_cache = true;
                return provider->selected;
        }
        return probe_chain(provider);
}

/*
 * A runner selected from the persisted cache failed before exec: the entry is
 * stale.  Drop it, probe the chain afresh, and return what it selects.
 */
static const dsh_backend_ops *reselect_after_runner_failure(dsh_provider *provider)
{
        dsh_autofree char *path = dsh_verdict_cache_path(provider);

        dsh_verdict_cache_drop(path);
        forget_verdict(provider);
        provider->verdict_cached = true;
        return probe_chain(provider);
}

/* Checks the call's inputs and prepares a private copy of the policy, its writable roots opened. */
static int prepare_call(char *const *argv, const dsh_policy *policy, dsh_prepared_policy *prepared, dsh_error *error)
{
        int result;

        if (!argv || !argv[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command argv is empty");
        if (!dsh_mode_is_confined(policy->mode))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "mode \"%s\" is not a confined mode; a provider only confines read-only "
                                     "and workspace-write",
                                     dsh_mode_name(policy->mode));
        result = dsh_prepared_policy_init(prepared, policy, error);
        if (result < 0)
                dsh_prepared_policy_clear(prepared);
        return result;
}

int dsh_provider_confine(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                         dsh_confined_argv *out, dsh_error *error)
{
        dsh_prepared_policy prepared = DSH_PREPARED_POLICY_INIT;
        const dsh_backend_ops *backend;
        int result = prepare_call(argv, policy, &prepared, error);

        if (result < 0)
                return result;
        backend = select_backend(provider);
        if (!backend)
                result = dsh_error_set_unavailable(error, prepared.policy.mode, provider->unavailable_detail);
        else
                result = backend->confine(provider, argv, &prepared, out, error);
        dsh_prepared_policy_clear(&prepared);
        return result;
}

/* danger-full-access: the original argv, unconfined on purpose. */
static int spawn_unconfined(char *const *argv, const dsh_spawn_options *options, dsh_child *child, dsh_error *error)
{
        dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(argv);
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        dsh_spawn_failure failure;
        pid_t pid;

        facts.argv = dsh_strv_copy(argv);
        facts.backend = strdup("none");
        if (!facts.argv || !facts.backend) {
                dsh_confined_argv_clear(&facts);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        pid = dsh_spawn_exec_plan(&plan, options, &failure);
        if (pid < 0) {
                dsh_confined_argv_clear(&facts);
                if (pid == -ECHILD)
                        return dsh_spawn_failure_to_error(&failure, DSH_MODE_DANGER_FULL_ACCESS, argv[0], error);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, (int) -pid, "cannot start the command: %s",
                                     strerror((int) -pid));
        }
        child->pid = pid;
        child->mode = DSH_MODE_DANGER_FULL_ACCESS;
        child->facts = facts;
        return 0;
}

/*
 * Spawns through the selected backend.  When the selection came from the
 * persisted cache and the runner fails before exec, the command never ran:
 * the stale entry is dropped, the chain probed afresh, and the command
 * spawned once through what the probe selects — never unconfined.
 */
static int spawn_selected(dsh_provider *provider, char *const *argv, const dsh_prepared_policy *prepared,
                          const dsh_spawn_options *options, dsh_child *child, dsh_error *error)
{
        const dsh_backend_ops *backend = select_backend(provider);
        int result;

        if (!backend)
                return dsh_error_set_unavailable(error, prepared->policy.mode, provider->unavailable_detail);
        result = backend->spawn(provider, argv, prepared, options, child, error);
        if (result < 0 && provider->verdict_from_cache && error->code == DSH_ERROR_SANDBOX_UNAVAILABLE) {
                backend = reselect_after_runner_failure(provider);
                if (!backend)
                        return dsh_error_set_unavailable(error, prepared->policy.mode, provider->unavailable_detail);
                result = backend->spawn(provider, argv, prepared, options, child, error);
                if (result == 0)
                        dsh_error_clear(error);  /* the stale runner's failure is not the caller's */
        }
        if (result == 0 && !provider->runner_command && provider->backend_count > 1)
                child->stale_verdict_path = dsh_verdict_cache_path(provider);
        return result;
}

/*
 * A child spawned into a group (or session) of its own leads it, and signals
 * for the command go to that group — unless the backend named another (bwrap:
 * the sandbox's group, where the command runs).
 */
static void default_process_group(dsh_child *child, const dsh_spawn_options *options)
{
        if (child->process_group == 0 && (options->new_process_group || options->new_session))
                child->process_group = child->pid;
}

int dsh_provider_spawn(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                       const dsh_spawn_options *options, dsh_child *child_out, dsh_error *error)
{
        static const dsh_spawn_options default_options = DSH_SPAWN_OPTIONS_INIT;
        dsh_error local_error = DSH_ERROR_INIT;
        dsh_prepared_policy prepared = DSH_PREPARED_POLICY_INIT;
        int result;

        if (!options)
                options = &default_options;
        if (policy->mode == DSH_MODE_DANGER_FULL_ACCESS) {
                if (!argv || !argv[0])
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command argv is empty");
                result = spawn_unconfined(argv, options, child_out, error);
                if (result == 0)
                        default_process_group(child_out, options);
                return result;
        }
        result = prepare_call(argv, policy, &prepared, error);
        if (result < 0)
                return result;
        result = spawn_selected(provider, argv, &prepared, options, child_out, error ? error : &local_error);
        if (result == 0)
                default_process_group(child_out, options);
        dsh_prepared_policy_clear(&prepared);
        dsh_error_clear(&local_error);
        return result;
}

int dsh_provider_exec(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                      dsh_exec_announce_fn announce, void *announce_data, dsh_error *error)
{
        static const dsh_spawn_options inherit = DSH_SPAWN_OPTIONS_INIT;
        dsh_prepared_policy prepared = DSH_PREPARED_POLICY_INIT;
        const dsh_backend_ops *backend;
        int result;

        if (policy->mode == DSH_MODE_DANGER_FULL_ACCESS) {
                dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(argv);
                dsh_spawn_failure failure;

                if (!argv || !argv[0])
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command argv is empty");
                dsh_exec_plan_apply(&plan, &inherit, &failure);
                return dsh_spawn_failure_to_error(&failure, policy->mode, argv[0], error);
        }
        result = prepare_call(argv, policy, &prepared, error);
        if (result < 0)
                return result;
        backend = select_backend(provider);
        if (!backend)
                result = dsh_error_set_unavailable(error, prepared.policy.mode, provider->unavailable_detail);
        else if (backend->exec)
                result = backend->exec(provider, argv, &prepared, announce, announce_data, error);
        else
                result = -EOPNOTSUPP;  /* a runner process: only a waiting parent can attribute its failures */
        dsh_prepared_policy_clear(&prepared);
        return result;
}

/* Everything a finished runner left in `fd` (non-blocking), NUL-terminated in `buffer`; closes the fd. */
static void drain_status_fd(int *fd, char *buffer, size_t size)
{
        size_t used = 0;
        ssize_t length;

        buffer[0] = '\0';
        if (*fd < 0)
                return;
        fcntl(*fd, F_SETFL, O_NONBLOCK);
        while (used < size - 1 &&
               ((length = read(*fd, buffer + used, size - 1 - used)) > 0 || (length < 0 && errno == EINTR)))
                if (length > 0)
                        used += (size_t) length;
        buffer[used] = '\0';
        close(*fd);
        *fd = -1;
}

/*
 * What the runner's last step inside the sandbox (dsh-sandbox-exec) said on
 * its own channel: that the program could not be executed (the command's
 * failure, 126/127), or that it could not prepare the command (the runner's).
 */
static void settle_exec_status(dsh_child *child)
{
        char record[700], text[600];
        int errno_value;

        drain_status_fd(&child->exec_status_fd, record, sizeof(record));
        switch (dsh_sandbox_exec_status_parse(record, &errno_value, text, sizeof(text))) {
        case DSH_SANDBOX_EXEC_STATUS_EXEC:
                child->exec_errno = errno_value > 0 ? errno_value : EIO;
                break;
        case DSH_SANDBOX_EXEC_STATUS_HELPER:
                child->runner_failed = true;
                free(child->runner_failure_detail);
                child->runner_failure_detail = strdup(text);
                break;
        case DSH_SANDBOX_EXEC_STATUS_NONE:
                break;
        }
}

void dsh_child_settle_runner_status(dsh_child *child, int wait_status)
{
        char buffer[4096];

        if (child->runner_status_fd < 0)
                return;
        /*
         * bwrap writes its "exit-code" record before it exits, so after
         * waitpid() the record is in the pipe if it was ever written.  The
         * read does not block: a daemon the command left behind cannot hold
         * the status fd (bwrap closes it before exec), but nothing here
         * should wait on anyone else's goodwill either.
         */
        drain_status_fd(&child->runner_status_fd, buffer, sizeof(buffer));
        if (strstr(buffer, "\"exit-code\""))
                child->command_started = true;
        /* The last step's refusal (stdio it could not hand over) is no sign of a broken runner: the verdict stays. */
        settle_exec_status(child);
        if (child->runner_failed)
                return;
        /*
         * Only a runner that exited with a failure status and never reported
         * an exec is called failed.  A runner killed by a signal may have been
         * running the command when it died: that is the command's outcome.
         */
        if (child->command_started || !WIFEXITED(wait_status) || WEXITSTATUS(wait_status) == 0)
                return;
        child->runner_failed = true;
        free(child->runner_failure_detail);
        if (asprintf(&child->runner_failure_detail, "%s exited with status %d before it executed the command",
                     child->facts.backend ? child->facts.backend : "the runner", WEXITSTATUS(wait_status)) < 0)
                child->runner_failure_detail = NULL;
        dsh_verdict_cache_drop(child->stale_verdict_path);
}

int dsh_child_wait(dsh_child *child, int *wait_status)
{
        pid_t pid;

        do
                pid = waitpid(child->pid, wait_status, 0);
        while (pid < 0 && errno == EINTR);
        if (pid < 0)
                return -errno;
        dsh_child_settle_runner_status(child, *wait_status);
        return 0;
}

/* The program the caller asked for: the argv after the last "--" of the confined argv. */
static const char *dsh_child_program(const dsh_child *child)
{
        char **argv = child->facts.argv;
        const char *program = argv && argv[0] ? argv[0] : "the command";

        for (size_t i = 0; argv && argv[i]; i++)
                if (strcmp(argv[i], "--") == 0 && argv[i + 1])
                        program = argv[i + 1];
        return program;
}

int dsh_child_runner_error(const dsh_child *child, dsh_error *error)
{
        if (!child->runner_failed && child->exec_errno)
                return dsh_error_set(error, DSH_ERROR_EXEC_FAILED, child->exec_errno, "%s: %s",
                                     dsh_child_program(child), strerror(child->exec_errno));
        if (!child->runner_failed)
                return 0;
        return dsh_error_set_unavailable(error, child->mode,
                                         child->runner_failure_detail ? child->runner_failure_detail
                                                                      : "the runner failed before exec");
}

void dsh_child_clear(dsh_child *child)
{
        if (!child)
                return;
        dsh_confined_argv_clear(&child->facts);
        if (child->runner_status_fd >= 0)
                close(child->runner_status_fd);
        if (child->exec_status_fd >= 0)
                close(child->exec_status_fd);
        free(child->runner_failure_detail);
        free(child->stale_verdict_path);
        *child = (dsh_child) DSH_CHILD_INIT;
}

/* ------------------------------------------------------- bounded runs -- */

long long dsh_monotonic_ms(void)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (long long) now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

bool dsh_provider_begin_probe(dsh_provider *provider)
{
        if (provider->probe_deadline_ms)
                return false;
        provider->probe_deadline_ms = dsh_monotonic_ms() + provider->probe_timeout_ms;
        return true;
}

void dsh_provider_end_probe(dsh_provider *provider, bool started)
{
        if (started)
                provider->probe_deadline_ms = 0;
}

void dsh_kill_and_reap(pid_t pid, bool group, int *wait_status)
{
        int status = 0;

        /* The group first: a helper the child left behind (a runner script's own children) goes with it. */
        if (group)
                kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (wait_status)
                *wait_status = status;
}

int dsh_poll_timeout_ms(long long deadline_ms)
{
        long long remaining;

        if (!deadline_ms)
                return -1;
        remaining = deadline_ms - dsh_monotonic_ms();
        if (remaining <= 0)
                return 0;
        return remaining > INT_MAX ? INT_MAX : (int) remaining;
}

#define COLLECT_LIMIT (64 * 1024)

int dsh_collect_bounded(pid_t pid, bool group, int fd, long long deadline_ms, char **text, int *wait_status)
{
        char *collected = calloc(1, COLLECT_LIMIT + 1);
        size_t used = 0;
        int result = 0;

        *text = NULL;
        *wait_status = 0;
        if (!collected) {
                close(fd);
                result = -ENOMEM;
                goto reap;
        }
        for (;;) {
                struct pollfd poll_fd = { fd, POLLIN, 0 };
                char chunk[4096];
                ssize_t length;
                int ready = poll(&poll_fd, 1, dsh_poll_timeout_ms(deadline_ms));

                if (ready < 0 && errno == EINTR)
                        continue;
                if (ready <= 0) {
                        result = ready == 0 ? -ETIMEDOUT : -errno;
                        break;
                }
                length = read(fd, chunk, sizeof(chunk));
                if (length < 0 && errno == EINTR)
                        continue;
                if (length <= 0)
                        break;
                if (used < COLLECT_LIMIT) {
                        size_t keep = (size_t) length < COLLECT_LIMIT - used ? (size_t) length : COLLECT_LIMIT - used;

                        memcpy(collected + used, chunk, keep);
                        used += keep;
                }
        }
        close(fd);
        *text = collected;
reap:
        if (pid <= 0)
                return result;
        while (result == 0) {
                pid_t reaped = waitpid(pid, wait_status, WNOHANG);
                struct timespec pause = { 0, 200 * 1000 };

                if (reaped == pid)
                        return 0;
                if (reaped < 0 && errno != EINTR)
                        return -errno;
                if (dsh_monotonic_ms() >= deadline_ms)
                        result = -ETIMEDOUT;
                else
                        nanosleep(&pause, NULL);
        }
        /* Over time (or out of memory): the probe's processes must not outlive it. */
        dsh_kill_and_reap(pid, group, wait_status);
        return result;
}

int dsh_provider_run_bounded(dsh_provider *provider, const dsh_backend_ops *backend, char *const *argv,
                             const dsh_policy *policy, int *exit_code, char **stderr_text, dsh_error *error)
{
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_prepared_policy prepared = DSH_PREPARED_POLICY_INIT;
        dsh_child child = DSH_CHILD_INIT;
        bool was_probing = provider->probing;
        bool started = dsh_provider_begin_probe(provider);
        long long deadline_ms = provider->probe_deadline_ms;
        int errors[2], wait_status = 0, result;
        int null_fd;

        *exit_code = 0;
        *stderr_text = NULL;
        result = dsh_prepared_policy_init(&prepared, policy, error);
        if (result < 0)
                goto out;
        null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null_fd < 0) {
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot open /dev/null: %s", strerror(errno));
                goto out;
        }
        if (pipe2(errors, O_CLOEXEC) < 0) {
                int pipe_errno = errno;

                close(null_fd);
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, pipe_errno, "cannot create a pipe: %s",
                                       strerror(pipe_errno));
                goto out;
        }
        options.stdin_fd = null_fd;
        options.stdout_fd = null_fd;
        options.stderr_fd = errors[1];
        /* A group of its own, so that the deadline takes whatever the runner started along with it. */
        options.new_process_group = true;
        provider->probing = true;
        result = backend->spawn(provider, argv, &prepared, &options, &child, error);
        provider->probing = was_probing;
        close(errors[1]);
        close(null_fd);
        if (result == -ETIMEDOUT) {
                /* The runner did not even report its sandbox in time; the backend killed and reaped it. */
                dsh_error_clear(error);
                *exit_code = -1;
                close(errors[0]);
                result = 0;
                goto out;
        }
        if (result < 0) {
                /* The runner is reaped already; what it said before it failed is still in the pipe. */
                *exit_code = 125;
                dsh_collect_bounded(-1, false, errors[0], deadline_ms, stderr_text, &wait_status);
                goto out;
        }
        result = dsh_collect_bounded(child.pid, true, errors[0], deadline_ms, stderr_text, &wait_status);
        if (result == -ETIMEDOUT) {
                *exit_code = -1;
                dsh_child_clear(&child);
                result = 0;
                goto out;
        }
        if (result < 0) {
                dsh_child_clear(&child);
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot collect a probe: %s",
                                       strerror(-result));
                goto out;
        }
        dsh_child_settle_runner_status(&child, wait_status);
        if (WIFEXITED(wait_status))
                *exit_code = WEXITSTATUS(wait_status);
        else if (WIFSIGNALED(wait_status))
                *exit_code = 128 + WTERMSIG(wait_status);
        if (child.runner_failed && *exit_code == 0)
                *exit_code = 125;
        dsh_child_clear(&child);
out:
        dsh_prepared_policy_clear(&prepared);
        dsh_provider_end_probe(provider, started);
        return result;
}

/* --------------------------------------------------------------- probe -- */

static int status_from_report(dsh_backend_status *status, const char *name, dsh_backend_report *report)
{
        status->name = strdup(name);
        status->usable = report->usable;
        status->enforcement = report->enforcement;
        status->reason = report->reason;
        status->version = report->version;
        status->runner_path = report->runner_path;
        status->partial_reasons = report->partial_reasons;
        report->reason = report->version = report->runner_path = NULL;
        report->partial_reasons = NULL;
        return status->name ? 0 : -ENOMEM;
}

int dsh_provider_probe(dsh_provider *provider, dsh_probe_report *report, dsh_error *error)
{
        const dsh_backend_ops *candidates[] = { &dsh_backend_bwrap, &dsh_backend_landlock, NULL };
        const dsh_backend_ops *selected = NULL;
        bool usable[3] = { false, false, false }, transient[3] = { false, false, false };
        bool clean = true;
        size_t count = provider->runner_command ? 3 : 2;

        report->backends = calloc(count, sizeof(dsh_backend_status));
        if (!report->backends)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        candidates[2] = provider->runner_command ? &dsh_backend_runner_command : NULL;
        forget_verdict(provider);
        for (size_t i = 0; i < count; i++) {
                dsh_backend_report backend_report = DSH_BACKEND_REPORT_INIT;

                probe_backend(provider, candidates[i], &backend_report);
                if (candidates[i] == &dsh_backend_landlock) {
                        report->landlock_abi = backend_report.landlock_abi;
                        report->landlock_scopes = backend_report.landlock_scopes;
                        report->landlock_scopes_missing = backend_report.landlock_scopes_missing;
                        backend_report.landlock_scopes = backend_report.landlock_scopes_missing = NULL;
                }
                usable[i] = backend_report.usable;
                transient[i] = backend_report.transient;
                if (!backend_report.usable) {
                        free(provider->unavailable_detail);
                        provider->unavailable_detail = backend_report.reason ? strdup(backend_report.reason) : NULL;
                }
                if (status_from_report(&report->backends[report->backend_count++], candidates[i]->name,
                                       &backend_report) < 0) {
                        dsh_backend_report_clear(&backend_report);
                        dsh_probe_report_clear(report);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
                dsh_backend_report_clear(&backend_report);
        }
        /*
         * What `auto` selects: the operator's runner, else the first usable
         * backend in chain order — persisted only when every backend before
         * it failed for a deterministic reason (see probe_chain).
         */
        if (provider->runner_command)
                selected = &dsh_backend_runner_command;
        for (size_t i = 0; !selected && i < provider->backend_count; i++)
                for (size_t j = 0; j < count; j++) {
                        if (candidates[j] != provider->backends[i])
                                continue;
                        if (usable[j])
                                selected = candidates[j];
                        else
                                clean = clean && !transient[j];
                }
        provider->verdict_cached = true;
        provider->selected = selected;
        if (selected && clean && !provider->runner_command && provider->backend_count > 1)
                persist_verdict(provider, selected);
        if (selected) {
                report->selected = strdup(selected->name);
                if (!report->selected) {
                        dsh_probe_report_clear(report);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
        }
        return 0;
}

void dsh_probe_report_clear(dsh_probe_report *report)
{
        if (!report)
                return;
        for (size_t i = 0; i < report->backend_count; i++) {
                free(report->backends[i].name);
                free(report->backends[i].reason);
                free(report->backends[i].version);
                free(report->backends[i].runner_path);
                dsh_strv_free(report->backends[i].partial_reasons);
        }
        free(report->backends);
        dsh_strv_free(report->landlock_scopes);
        dsh_strv_free(report->landlock_scopes_missing);
        free(report->selected);
        *report = (dsh_probe_report) DSH_PROBE_REPORT_INIT;
}
