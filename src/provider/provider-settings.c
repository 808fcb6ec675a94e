/* SPDX-License-Identifier: MIT */
/*
 * The provider's configuration: creation, the known backends and the chain,
 * and every setter, each checked with the texts the config loader shares.
 * Selection and the verdict live in provider.c; probing in probe.c.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/backend.h"
#include "base/provider-rules.h"
#include "config.h"
#include "dsh-sandbox/config.h"
#include "base/error.h"
#include "base/xdg.h"

#define DEFAULT_LANDLOCK_RUN_PATH DSH_SANDBOX_BINDIR "/landlock-run"

/* The Linux backends in their default chain order: bwrap, then Landlock. */
static const dsh_backend_ops *const known_backends[] = {
        &dsh_backend_bwrap,
        &dsh_backend_landlock,
        NULL,
};

/*
 * Held back by default, each because something outside the sandbox runs
 * what it says, unconfined, later: git's hooks and config at the user's next
 * `git commit`; the agent's own launch configuration when the agent next
 * starts or opens the folder (.mcp.json starts MCP servers with any flags,
 * .claude/settings.json hooks, .vscode/tasks.json `runOn: folderOpen`,
 * direnv's .envrc, husky's hooks, .gitmodules' submodule URLs); and, where a
 * writable root holds the user's home ("~/"), what a shell, git, npm or pip
 * reads when the user next runs one.
 */
static const char *const default_protected_subpaths[] = {
        ".git/hooks", ".git/config",
        ".mcp.json", ".claude", ".codex", ".cursor", ".gemini", ".vscode", ".idea", ".agents", ".gitmodules",
        ".envrc", ".husky",
        "~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile", "~/.zshrc", "~/.zshenv",
        "~/.zprofile", "~/.gitconfig", "~/.config/git", "~/.local/bin", "~/.npmrc", "~/.pypirc",
        NULL,
};

void dsh_provider_forget_verdict(dsh_provider *provider)
{
        provider->verdict_cached = false;
        provider->verdict_from_cache = false;
        provider->selected = NULL;
        free(provider->unavailable_detail);
        provider->unavailable_detail = NULL;
}

const dsh_backend_ops *const *dsh_backends_known(void)
{
        return known_backends;
}

const dsh_backend_ops *dsh_backend_by_name(const char *name)
{
        for (size_t i = 0; known_backends[i]; i++)
                if (strcmp(known_backends[i]->name, name) == 0)
                        return known_backends[i];
        return NULL;
}

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
        if (!provider->landlock_run_path ||
            dsh_protections_set_launcher_directory(&provider->protections, DEFAULT_LANDLOCK_RUN_PATH) < 0) {
                free(provider->landlock_run_path);
                free(provider);
                return NULL;
        }
        for (size_t i = 0; known_backends[i]; i++)
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
        dsh_provider_forget_verdict(provider);
        free(provider->landlock_run_path);
        dsh_protections_clear(&provider->protections);
        free(provider->bwrap_path);
        dsh_strv_free(provider->runner_command);
        dsh_strv_free(provider->runner_failure_signatures);
        free(provider->verdict_cache_dir);
        free(provider->scratch_dir);
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

                        for (size_t i = 0; known_backends[i]; i++)
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
        dsh_provider_forget_verdict(provider);
        return 0;
}

int dsh_provider_set_landlock_run_path(dsh_provider *provider, const char *path, dsh_error *error)
{
        char *copy;

        if (!path || path[0] != '/')
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "the landlock-run path must be absolute: \"%s\"", path ? path : "");
        copy = strdup(path);
        if (!copy || dsh_protections_set_launcher_directory(&provider->protections, path) < 0) {
                free(copy);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        free(provider->landlock_run_path);
        provider->landlock_run_path = copy;
        dsh_provider_forget_verdict(provider);
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
        dsh_provider_forget_verdict(provider);
        return 0;
}

int dsh_provider_set_probe_timeout_ms(dsh_provider *provider, long timeout_ms, dsh_error *error)
{
        long checked = 0;
        int result = dsh_probe_timeout_check((double) timeout_ms, &checked, error);

        if (result < 0)
                return result;
        provider->probe_timeout_ms = checked;
        dsh_provider_forget_verdict(provider);
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
        dsh_provider_forget_verdict(provider);
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
        return set_absolute_paths(&provider->protections.paths, paths, "a protected path", error);
}

int dsh_provider_set_protected_executables(dsh_provider *provider, char *const *paths, dsh_error *error)
{
        return set_absolute_paths(&provider->protections.executables, paths, "a protected executable", error);
}

/* A name relative to a writable root: no empty, "." or ".." component, not absolute. */
static bool subpath_is_valid(const char *subpath)
{
        const char *component = strncmp(subpath, "~/", 2) == 0 ? subpath + 2 : subpath;  /* in the home */

        if (!component[0] || component[0] == '/')
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
                                             "a protected subpath must be a relative path (\"~/\" for one in the home) "
                                             "without \".\" or \"..\" components: \"%s\"",
                                             *subpath);
                }
                if (dsh_strv_append(&copy, *subpath) < 0) {
                        dsh_strv_free(copy);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
        }
        dsh_strv_free(provider->protections.subpaths);
        provider->protections.subpaths = copy;
        provider->protections.require_subpaths = required;
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
        dsh_provider_forget_verdict(provider);
        return 0;
}

int dsh_provider_set_scratch_dir(dsh_provider *provider, const char *directory, dsh_error *error)
{
        char *copy = NULL;

        if (directory && directory[0] != '/')
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "the scratch directory must be absolute: \"%s\"", directory);
        if (directory) {
                copy = strdup(directory);
                if (!copy)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        free(provider->scratch_dir);
        provider->scratch_dir = copy;
        return 0;
}

char *dsh_provider_default_verdict_cache_dir(void)
{
        return dsh_xdg_directory(NULL, "XDG_CACHE_HOME", ".cache");
}

/* A copy of `entries` after `check` passes each (an empty list stays an empty vector: "none", not "the defaults"). */
static int copy_checked(const char *const *entries, int (*check)(const char *entry, const char **reason),
                        const char *what, char ***out, dsh_error *error)
{
        char **copy = dsh_strv_copy(NULL);

        if (!copy)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        for (const char *const *entry = entries; entry && *entry; entry++) {
                const char *reason = NULL;

                if (check(*entry, &reason) < 0) {
                        dsh_strv_free(copy);
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s \"%s\": %s", what, *entry,
                                             reason);
                }
                if (dsh_strv_append(&copy, *entry) < 0) {
                        dsh_strv_free(copy);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
        }
        *out = copy;
        return 0;
}

int dsh_provider_set_masked_paths(dsh_provider *provider, const char *const *entries, bool required, dsh_error *error)
{
        char **copy = NULL;
        int result = copy_checked(entries, dsh_mask_entry_check, "masked path", &copy, error);

        if (result < 0)
                return result;
        dsh_strv_free(provider->protections.masks);
        provider->protections.masks = copy;
        provider->protections.require_masks = required;
        return 0;
}

static int check_deny_pattern(const char *pattern, const char **reason)
{
        return dsh_environment_pattern_check(pattern, true, reason);
}

static int check_allowed_name(const char *name, const char **reason)
{
        return dsh_environment_pattern_check(name, false, reason);
}

int dsh_provider_set_environment_rules(dsh_provider *provider, const char *const *deny, const char *const *allow,
                                       dsh_error *error)
{
        char **deny_copy = NULL, **allow_copy = NULL;
        int result = deny ? copy_checked(deny, check_deny_pattern, "environment pattern", &deny_copy, error) : 0;

        if (result == 0)
                result = copy_checked(allow, check_allowed_name, "allowed environment variable", &allow_copy, error);
        if (result < 0) {
                dsh_strv_free(deny_copy);
                return result;
        }
        dsh_strv_free(provider->protections.environment_deny);
        dsh_strv_free(provider->protections.environment_allow);
        provider->protections.environment_deny = deny_copy;
        provider->protections.environment_allow = allow_copy;
        return 0;
}
