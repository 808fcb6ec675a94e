/* SPDX-License-Identifier: MIT */
/*
 * The local provider: backend selection, the cached verdict, and the two
 * entry points (confine, spawn) that every confined execution goes through.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend.h"
#include "config.h"
#include "error.h"
#include "spawn.h"

#define DEFAULT_LANDLOCK_RUN_PATH DSH_SANDBOX_LIBEXECDIR "/landlock-run"

static const dsh_backend_ops *const known_backends[] = {
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
        *report = (dsh_backend_report) DSH_BACKEND_REPORT_INIT;
}

static void forget_verdict(dsh_provider *provider)
{
        provider->verdict_cached = false;
        provider->selected = NULL;
        free(provider->unavailable_detail);
        provider->unavailable_detail = NULL;
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
        provider->backends[provider->backend_count++] = &dsh_backend_landlock;
        return provider;
}

void dsh_provider_free(dsh_provider *provider)
{
        if (!provider)
                return;
        forget_verdict(provider);
        free(provider->landlock_run_path);
        free(provider);
}

int dsh_provider_set_backends(dsh_provider *provider, const char *const *names, dsh_error *error)
{
        const dsh_backend_ops *chosen[DSH_PROVIDER_MAX_BACKENDS];
        size_t count = 0;

        for (; names && *names; names++) {
                const dsh_backend_ops *backend = dsh_backend_by_name(*names);

                if (!backend)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "unknown backend \"%s\"", *names);
                for (size_t i = 0; i < count; i++)
                        if (chosen[i] == backend)
                                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                                     "backend \"%s\" is listed twice", *names);
                if (count == DSH_PROVIDER_MAX_BACKENDS)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "too many backends");
                chosen[count++] = backend;
        }
        if (count == 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the backend list is empty");
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

/*
 * Selects the backend once per provider.  A sole candidate is taken without
 * a probe: its own refusal at confine or spawn time is the fail-closed end.
 * Several candidates are probed in order and the first usable one wins; the
 * verdict, "unavailable" included, is cached.
 */
static const dsh_backend_ops *select_backend(dsh_provider *provider)
{
        if (provider->verdict_cached)
                return provider->selected;
        provider->verdict_cached = true;
        if (provider->backend_count == 1) {
                provider->selected = provider->backends[0];
                return provider->selected;
        }
        for (size_t i = 0; i < provider->backend_count; i++) {
                dsh_backend_report report = DSH_BACKEND_REPORT_INIT;

                provider->backends[i]->probe(provider, &report);
                if (report.usable) {
                        provider->selected = provider->backends[i];
                        dsh_backend_report_clear(&report);
                        return provider->selected;
                }
                free(provider->unavailable_detail);
                provider->unavailable_detail = report.reason ? strdup(report.reason) : NULL;
                dsh_backend_report_clear(&report);
        }
        return NULL;
}

/* Checks the call's inputs and prepares a private copy of the policy. */
static int prepare_call(char *const *argv, const dsh_policy *policy, dsh_policy *prepared, dsh_error *error)
{
        int result;

        if (!argv || !argv[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command argv is empty");
        if (!dsh_mode_is_confined(policy->mode))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "mode \"%s\" is not a confined mode; a provider only confines read-only "
                                     "and workspace-write",
                                     dsh_mode_name(policy->mode));
        result = dsh_policy_copy(prepared, policy);
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        result = dsh_policy_prepare(prepared, error);
        if (result < 0)
                dsh_policy_clear(prepared);
        return result;
}

int dsh_provider_confine(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                         dsh_confined_argv *out, dsh_error *error)
{
        dsh_policy prepared = DSH_POLICY_INIT;
        const dsh_backend_ops *backend;
        int result = prepare_call(argv, policy, &prepared, error);

        if (result < 0)
                return result;
        backend = select_backend(provider);
        if (!backend)
                result = dsh_error_set_unavailable(error, prepared.mode, provider->unavailable_detail);
        else
                result = backend->confine(provider, argv, &prepared, out, error);
        dsh_policy_clear(&prepared);
        return result;
}

/* danger-full-access: the original argv, unconfined on purpose. */
static int spawn_unconfined(char *const *argv, const dsh_spawn_options *options, dsh_child *child, dsh_error *error)
{
        dsh_exec_plan plan = { argv, -1, false, -1 };
        dsh_spawn_failure failure;
        pid_t pid = dsh_spawn_exec_plan(&plan, options, &failure);

        if (pid == -ECHILD)
                return dsh_spawn_failure_to_error(&failure, DSH_MODE_DANGER_FULL_ACCESS, argv[0], error);
        if (pid < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, (int) -pid, "cannot start the command: %s",
                                     strerror((int) -pid));
        child->pid = pid;
        child->facts.argv = dsh_strv_copy(argv);
        child->facts.backend = strdup("none");
        return 0;
}

int dsh_provider_spawn(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                       const dsh_spawn_options *options, dsh_child *child_out, dsh_error *error)
{
        static const dsh_spawn_options default_options = DSH_SPAWN_OPTIONS_INIT;
        dsh_policy prepared = DSH_POLICY_INIT;
        const dsh_backend_ops *backend;
        int result;

        if (!options)
                options = &default_options;
        if (policy->mode == DSH_MODE_DANGER_FULL_ACCESS) {
                if (!argv || !argv[0])
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command argv is empty");
                return spawn_unconfined(argv, options, child_out, error);
        }
        result = prepare_call(argv, policy, &prepared, error);
        if (result < 0)
                return result;
        backend = select_backend(provider);
        if (!backend)
                result = dsh_error_set_unavailable(error, prepared.mode, provider->unavailable_detail);
        else
                result = backend->spawn(provider, argv, &prepared, options, child_out, error);
        dsh_policy_clear(&prepared);
        return result;
}

/* A backend without an in-place path: exec the runner argv it would hand a caller. */
static int exec_confined_argv(dsh_provider *provider, const dsh_backend_ops *backend, char *const *argv,
                              const dsh_policy *policy, dsh_exec_announce_fn announce, void *announce_data,
                              dsh_error *error)
{
        dsh_confined_argv confined = DSH_CONFINED_ARGV_INIT;
        dsh_exec_plan plan = { NULL, -1, false, -1 };
        static const dsh_spawn_options inherit = DSH_SPAWN_OPTIONS_INIT;
        dsh_spawn_failure failure;
        int result = backend->confine(provider, argv, policy, &confined, error);

        if (result < 0)
                return result;
        if (announce)
                announce(&confined, announce_data);
        plan.argv = confined.argv;
        dsh_exec_plan_apply(&plan, &inherit, -1, &failure);
        result = dsh_spawn_failure_to_error(&failure, policy->mode, confined.argv[0], error);
        dsh_confined_argv_clear(&confined);
        return result;
}

int dsh_provider_exec(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                      dsh_exec_announce_fn announce, void *announce_data, dsh_error *error)
{
        static const dsh_spawn_options inherit = DSH_SPAWN_OPTIONS_INIT;
        dsh_policy prepared = DSH_POLICY_INIT;
        const dsh_backend_ops *backend;
        int result;

        if (policy->mode == DSH_MODE_DANGER_FULL_ACCESS) {
                dsh_exec_plan plan = { argv, -1, false, -1 };
                dsh_spawn_failure failure;

                if (!argv || !argv[0])
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command argv is empty");
                dsh_exec_plan_apply(&plan, &inherit, -1, &failure);
                return dsh_spawn_failure_to_error(&failure, policy->mode, argv[0], error);
        }
        result = prepare_call(argv, policy, &prepared, error);
        if (result < 0)
                return result;
        backend = select_backend(provider);
        if (!backend)
                result = dsh_error_set_unavailable(error, prepared.mode, provider->unavailable_detail);
        else if (backend->exec)
                result = backend->exec(provider, argv, &prepared, announce, announce_data, error);
        else
                result = exec_confined_argv(provider, backend, argv, &prepared, announce, announce_data, error);
        dsh_policy_clear(&prepared);
        return result;
}

int dsh_child_wait(dsh_child *child, int *wait_status)
{
        pid_t pid;

        do
                pid = waitpid(child->pid, wait_status, 0);
        while (pid < 0 && errno == EINTR);
        return pid < 0 ? -errno : 0;
}

void dsh_child_clear(dsh_child *child)
{
        if (!child)
                return;
        dsh_confined_argv_clear(&child->facts);
        if (child->runner_status_fd >= 0)
                close(child->runner_status_fd);
        *child = (dsh_child) DSH_CHILD_INIT;
}
