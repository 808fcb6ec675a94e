/* SPDX-License-Identifier: MIT */
/*
 * The local provider: backend selection and the verdict (cached for the
 * provider's lifetime, persisted across processes when clean), and the
 * entry points every confined execution goes through (confine, spawn, exec,
 * probe), which select, prepare the policy and hand over to the backend.
 * Configuration: provider-settings.c; probing: probe.c; the spawned child
 * and bounded runs: process.c.
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

#include "provider/backend.h"
#include "provider/call-network.h"
#include "provider/process.h"
#include "config.h"
#include "dsh-sandbox/config.h"
#include "base/error.h"
#include "base/network-rules.h"
#include "base/path.h"
#include "provider/spawn.h"
#include "core/sandbox-exec-status.h"
#include "provider/verdict-cache.h"
#include "base/xdg.h"






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

                dsh_probe_backend(provider, provider->backends[i], &report);
                if (report.usable) {
                        provider->selected = provider->backends[i];
                        clean = clean && !report.transient;  /* usable, but its proof was disturbed */
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
        dsh_provider_forget_verdict(provider);
        provider->verdict_cached = true;
        return probe_chain(provider);
}

/*
 * The provider boundary: what confine, spawn and exec return on failure is
 * the negative of the errno their error carries (-EINVAL when it carries
 * none, as dsh_error_set() would answer), the set provider.h documents per
 * code.  A backend's private answers stay inside: -ECHILD (a runner gone
 * before its sandbox existed, already diagnosed as SANDBOX_UNAVAILABLE) and
 * the errno of a step that failed under an UNAVAILABLE error leave as
 * -ENOSYS, as every UNAVAILABLE does.  A failure with no error set (none
 * should exist) stays the negative it was: never success.
 */
static int boundary_result(int result, const dsh_error *error)
{
        if (result >= 0 || error->code == DSH_ERROR_NONE)
                return result;
        return error->errno_value > 0 ? -error->errno_value : -EINVAL;
}

/* The inputs every confined call checks before anything is selected or prepared. */
static int check_call(char *const *argv, const dsh_policy *policy, dsh_error *error)
{
        if (!argv || !argv[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command argv is empty");
        if (!dsh_mode_is_confined(policy->mode))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "mode \"%s\" is not a confined mode; a provider only confines read-only "
                                     "and workspace-write",
                                     dsh_mode_name(policy->mode));
        return 0;
}

/* Checks the call's inputs and prepares a private copy of the policy, its writable roots and its scratch opened. */
static int prepare_call(const dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                        dsh_prepared_policy *prepared, dsh_error *error)
{
        int result = check_call(argv, policy, error);

        if (result < 0)
                return result;
        result = dsh_prepared_policy_init(prepared, policy, error);
        if (result == 0)
                result = dsh_prepared_policy_open_scratch(prepared, provider->scratch_dir, error);
        if (result == 0)
                result = dsh_prepared_policy_plan_masks(prepared, &provider->protections, error);
        if (result < 0)
                dsh_prepared_policy_clear(prepared);
        return result;
}

/*
 * The network dimension (call-network.h).  A backend that cannot hold the
 * policy's network — an operator's runner command receives no policy from
 * us — refuses it rather than run the command with the network open; so
 * does danger-full-access, which confines nothing (dsh_policy_prepare()
 * says the same for a prepared policy; an unconfined spawn prepares none).
 */
static int check_network(const dsh_backend_ops *backend, const dsh_policy *policy, dsh_error *error)
{
        char detail[256];

        /* The same rules as dsh_policy_prepare(): danger-full-access is spawned unprepared. */
        int result = dsh_network_rules_check(&policy->network, policy->mode, error);

        if (result < 0 || policy->network.mode == DSH_NETWORK_ON || !backend || backend->holds_network)
                return result;
        snprintf(detail, sizeof(detail), "the %s backend cannot hold the network policy \"%s\" (it is given no "
                                         "policy by dsh-sandbox)", backend->name,
                 dsh_network_mode_name(policy->network.mode));
        return dsh_error_set_unavailable(error, policy->mode, detail);
}

/* The facts say which network policy the command runs under. */
static int set_network_fact(dsh_confined_argv *facts, const dsh_policy *policy, dsh_error *error)
{
        free(facts->network);
        facts->network = strdup(dsh_network_mode_name(policy->network.mode));
        if (facts->network)
                return 0;
        return error ? dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory") : -ENOMEM;
}

const dsh_backend_ops *dsh_provider_selected_backend(dsh_provider *provider)
{
        return select_backend(provider);
}

static int provider_confine(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                            dsh_confined_argv *out, dsh_error *error)
{
        dsh_prepared_policy prepared = DSH_PREPARED_POLICY_INIT;
        const dsh_backend_ops *backend;
        int result = prepare_call(provider, argv, policy, &prepared, error);

        if (result < 0)
                return result;
        backend = select_backend(provider);
        if (!backend)
                result = dsh_error_set_unavailable(error, prepared.policy.mode, provider->unavailable_detail);
        else
                result = check_network(backend, &prepared.policy, error);
        if (result == 0)
                result = backend->confine(provider, argv, &prepared, out, error);
        if (result == 0 && set_network_fact(out, &prepared.policy, error) < 0) {
                dsh_confined_argv_clear(out);
                result = -ENOMEM;
        }
        dsh_prepared_policy_clear(&prepared);
        return result;
}

int dsh_provider_confine(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                         dsh_confined_argv *out, dsh_error *error)
{
        dsh_error local_error = DSH_ERROR_INIT;
        dsh_error *reported = error ? error : &local_error;
        int result = boundary_result(provider_confine(provider, argv, policy, out, reported), reported);

        dsh_error_clear(&local_error);
        return result;
}

/*
 * A runner that exited before it created its sandbox (-ECHILD from a
 * backend's spawn) said why on the caller's stderr, which is not ours to
 * read: the backend's own probe runs the same profile with stderr captured,
 * and its reason (bwrap's own line, namespaces blocked, ...) replaces the
 * bare exit status.  Outside any probe: a probe's own spawn is never
 * diagnosed (it captures stderr itself).
 */
static void diagnose_early_failure(dsh_provider *provider, const dsh_backend_ops *backend, dsh_mode mode,
                                   dsh_error *error)
{
        dsh_backend_report report = DSH_BACKEND_REPORT_INIT;

        dsh_probe_backend(provider, backend, &report);
        if (report.reason)
                dsh_error_set_unavailable(error, mode, report.reason);
        dsh_backend_report_clear(&report);
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
        result = check_network(backend, &prepared->policy, error);
        /* Records, and under the allow-list the proxy and DNS stub, before the backend starts the supervisor. */
        if (result == 0)
                result = dsh_call_network_start(&prepared->policy, &child->network, error);
        if (result < 0)
                return result;
        result = backend->spawn(provider, argv, prepared, options, child, error);
        if (result == -ECHILD)
                diagnose_early_failure(provider, backend, prepared->policy.mode, error);
        if (result < 0 && provider->verdict_from_cache && error->code == DSH_ERROR_SANDBOX_UNAVAILABLE) {
                backend = reselect_after_runner_failure(provider);
                if (!backend)
                        return dsh_error_set_unavailable(error, prepared->policy.mode, provider->unavailable_detail);
                result = check_network(backend, &prepared->policy, error);
                if (result < 0)
                        return result;
                result = backend->spawn(provider, argv, prepared, options, child, error);
                if (result == -ECHILD)
                        diagnose_early_failure(provider, backend, prepared->policy.mode, error);
                if (result == 0)
                        dsh_error_clear(error);  /* the stale runner's failure is not the caller's */
        }
        if (result == 0) {
                /* The command runs by now: out of memory leaves the fact unset (NULL), never the call undone. */
                (void) set_network_fact(&child->facts, &prepared->policy, NULL);
                child->backend = backend;
                if (!provider->runner_command && provider->backend_count > 1)
                        child->stale_verdict_path = dsh_verdict_cache_path(provider);
        }
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
                       const dsh_spawn_options *options, dsh_child **child_out, dsh_error *error)
{
        static const dsh_spawn_options default_options = DSH_SPAWN_OPTIONS_INIT;
        dsh_error local_error = DSH_ERROR_INIT;
        dsh_prepared_policy prepared = DSH_PREPARED_POLICY_INIT;
        dsh_child *child;
        int result;

        *child_out = NULL;
        if (!options)
                options = &default_options;
        if (!argv || !argv[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command argv is empty");
        child = dsh_child_new();
        if (!child)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (policy->mode == DSH_MODE_DANGER_FULL_ACCESS) {
                result = check_network(NULL, policy, error ? error : &local_error);
                if (result == 0)
                        result = dsh_spawn_unconfined(argv, options, child, error ? error : &local_error);
                if (result == 0)
                        (void) set_network_fact(&child->facts, policy, NULL);
        } else {
                result = prepare_call(provider, argv, policy, &prepared, error);
                if (result == 0)
                        result = spawn_selected(provider, argv, &prepared, options, child,
                                                error ? error : &local_error);
        }
        dsh_prepared_policy_clear(&prepared);
        result = boundary_result(result, error ? error : &local_error);
        dsh_error_clear(&local_error);
        if (result < 0) {
                dsh_child_free(child);
                return result;
        }
        default_process_group(child, options);
        *child_out = child;
        return 0;
}

/*
 * dsh_provider_exec() under a confined mode.  No backend confines the calling
 * process in place any more: bwrap and a runner command need a runner
 * process, and Landlock a parent that stays to host its supervisor (which
 * performs every connect, in both modes) and the stand-in that ends what the
 * command leaves.  So once a backend is selected the answer is -EOPNOTSUPP,
 * before anything is prepared (no roots opened, no scratch made), and the
 * caller's spawn prepares the policy once and reuses the selection, which the
 * provider keeps.  No usable backend is reported after the preparation, as
 * dsh_provider_spawn() reports it: a bad root is named before "unavailable".
 */
static int exec_confined(dsh_provider *provider, char *const *argv, const dsh_policy *policy, dsh_error *error)
{
        dsh_prepared_policy prepared = DSH_PREPARED_POLICY_INIT;
        int result = check_call(argv, policy, error);

        if (result < 0)
                return result;
        if (select_backend(provider))
                return -EOPNOTSUPP;
        result = prepare_call(provider, argv, policy, &prepared, error);
        if (result == 0)
                result = dsh_error_set_unavailable(error, prepared.policy.mode, provider->unavailable_detail);
        dsh_prepared_policy_clear(&prepared);
        return result;
}

static int exec_unconfined(char *const *argv, const dsh_policy *policy, dsh_error *error)
{
        static const dsh_spawn_options inherit = DSH_SPAWN_OPTIONS_INIT;
        dsh_exec_plan plan = DSH_EXEC_PLAN_INIT(argv);
        dsh_spawn_failure failure;

        if (!argv || !argv[0])
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the command argv is empty");
        dsh_exec_plan_apply(&plan, &inherit, &failure);
        return dsh_spawn_failure_to_error(&failure, policy->mode, argv[0], error);
}

int dsh_provider_exec(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                      dsh_exec_announce_fn announce, void *announce_data, dsh_error *error)
{
        dsh_error local_error = DSH_ERROR_INIT;
        dsh_error *reported = error ? error : &local_error;
        int result;

        /* Kept for the API: no confined call execs in place any more, so nothing is ever announced. */
        (void) announce;
        (void) announce_data;
        if (policy->mode == DSH_MODE_DANGER_FULL_ACCESS) {
                result = check_network(NULL, policy, reported);
                if (result == 0)
                        result = exec_unconfined(argv, policy, reported);
        } else {
                result = exec_confined(provider, argv, policy, reported);
        }
        /* -EOPNOTSUPP leaves `error` untouched: it is an answer, not a failure. */
        if (result != -EOPNOTSUPP)
                result = boundary_result(result, reported);
        dsh_error_clear(&local_error);
        return result;
}

/* --------------------------------------------------------------- probe -- */

int dsh_provider_probe(dsh_provider *provider, dsh_probe_report *report, dsh_error *error)
{
        const dsh_backend_ops *candidates[DSH_PROVIDER_MAX_BACKENDS + 1];
        const dsh_backend_ops *selected = NULL;
        bool usable[DSH_PROVIDER_MAX_BACKENDS + 1] = { false }, transient[DSH_PROVIDER_MAX_BACKENDS + 1] = { false };
        bool clean = true;
        size_t count = 0;

        for (const dsh_backend_ops *const *known = dsh_backends_known(); *known; known++)
                candidates[count++] = *known;
        if (provider->runner_command)
                candidates[count++] = &dsh_backend_runner_command;
        dsh_provider_forget_verdict(provider);
        if (dsh_probe_report_fill(provider, candidates, count, report, usable, transient,
                                  &provider->unavailable_detail) < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
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
                        /* Unusable for a moment, or usable with a disturbed proof: either way not persisted. */
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

