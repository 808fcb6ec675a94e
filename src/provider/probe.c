/* SPDX-License-Identifier: MIT */
/*
 * Probing: one backend's functional probe under one deadline (its own
 * static checks, a confined `true`, the confinement proof), bounded runs of
 * a backend's spawn path, and the probe report's storage.  The verdict that
 * follows from a probe is the provider's (provider.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "provider/backend.h"
#include "provider/call-network.h"
#include "provider/confinement-proof.h"
#include "base/error.h"
#include "provider/process.h"

char *dsh_probe_timeout_reason(const dsh_provider *provider, const dsh_backend_ops *backend)
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
 * Probes one backend: its own probe, then — when that probe only checked
 * static facts — a confined `true` through its spawn path, because only a
 * command that really ran proves the backend works on this host; then the
 * confinement proof.  All of it under one deadline (probeTimeoutMs): every
 * step gets what the steps before it left, so a probe ends within its bound
 * however it stalls.  Every failure of the functional run is transient: the
 * static probe has already ruled out what is known to be missing.
 */
void dsh_probe_backend(dsh_provider *provider, const dsh_backend_ops *backend, dsh_backend_report *report)
{
        char *const argv[] = { (char *) "true", NULL };
        dsh_policy policy = probe_policy();
        dsh_error error = DSH_ERROR_INIT;
        dsh_autofree char *stderr_text = NULL;
        bool started = dsh_provider_begin_probe(provider);
        int exit_code = 0;

        backend->probe(provider, report);
        if (!report->runner_path && backend->runner_path)
                report->runner_path = backend->runner_path(provider);
        if (report->usable && backend->probe_is_functional)
                dsh_confinement_proof(provider, backend, report);
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
                        report->reason = dsh_probe_timeout_reason(provider, backend);
                else if (asprintf(&report->reason, "a confined `true` failed under %s with status %d: %.*s",
                                  backend->name, exit_code, stderr_text ? (int) strcspn(stderr_text, "\n") : 0,
                                  stderr_text ? stderr_text : "") < 0)
                        report->reason = NULL;
        }
        if (report->usable)
                dsh_confinement_proof(provider, backend, report);
out:
        dsh_error_clear(&error);
        dsh_provider_end_probe(provider, started);
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

int dsh_provider_run_bounded(dsh_provider *provider, const dsh_backend_ops *backend, char *const *argv,
                             const dsh_policy *policy, int *exit_code, char **stderr_text, dsh_error *error)
{
        return dsh_provider_run_bounded_with_input(provider, backend, argv, policy, -1, exit_code, stderr_text,
                                                   error);
}

int dsh_provider_run_bounded_with_input(dsh_provider *provider, const dsh_backend_ops *backend, char *const *argv,
                                        const dsh_policy *policy, int stdin_fd, int *exit_code, char **stderr_text,
                                        dsh_error *error)
{
        dsh_spawn_options options = DSH_SPAWN_OPTIONS_INIT;
        dsh_prepared_policy prepared = DSH_PREPARED_POLICY_INIT;
        dsh_child *child = dsh_child_new();
        bool started = dsh_provider_begin_probe(provider);
        long long deadline_ms = provider->probe_deadline_ms;
        int errors[2], wait_status = 0, result;
        pid_t group;
        int null_fd;

        *exit_code = 0;
        *stderr_text = NULL;
        if (!child) {
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                goto out;
        }
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
        options.stdin_fd = stdin_fd >= 0 ? stdin_fd : null_fd;
        options.stdout_fd = null_fd;
        options.stderr_fd = errors[1];
        /* A group of its own, so that the deadline takes whatever the runner started along with it. */
        options.new_process_group = true;
        result = backend->spawn(provider, argv, &prepared, &options, child, error);
        child->backend = backend;
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
                dsh_collect_bounded(-1, 0, errors[0], deadline_ms, stderr_text, &wait_status);
                goto out;
        }
        /* The runner leads a group of its own (above); bwrap's sandbox has one of its own besides. */
        group = child->process_group ? child->process_group : child->pid;
        result = dsh_collect_bounded(child->pid, group, errors[0], deadline_ms, stderr_text, &wait_status);
        if (result == -ETIMEDOUT) {
                *exit_code = -1;
                dsh_child_free(child);
                child = NULL;
                result = 0;
                goto out;
        }
        if (result < 0) {
                dsh_child_free(child);
                child = NULL;
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot collect a probe: %s",
                                       strerror(-result));
                goto out;
        }
        dsh_child_settle(child, wait_status);
        if (WIFEXITED(wait_status))
                *exit_code = WEXITSTATUS(wait_status);
        else if (WIFSIGNALED(wait_status))
                *exit_code = 128 + WTERMSIG(wait_status);
        if (child->runner_failed && *exit_code == 0)
                *exit_code = 125;
        dsh_child_free(child);
        child = NULL;
out:
        dsh_child_free(child);
        dsh_prepared_policy_clear(&prepared);
        dsh_provider_end_probe(provider, started);
        return result;
}

static int status_from_report(dsh_backend_status *status, const char *name, dsh_backend_report *report)
{
        status->name = strdup(name);
        status->usable = report->usable;
        status->enforcement = report->enforcement;
        status->reason = report->reason;
        status->version = report->version;
        status->runner_path = report->runner_path;
        status->partial_reasons = report->partial_reasons;
        status->notes = report->notes;
        report->reason = report->version = report->runner_path = NULL;
        report->partial_reasons = report->notes = NULL;
        /* What it holds of the network dimension (call-network.h): where it is usable, never claimed otherwise. */
        status->network = report->usable ? dsh_call_network_modes_held(name) : calloc(1, sizeof(char *));
        return status->name && status->network ? 0 : -ENOMEM;
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
                dsh_strv_free(report->backends[i].notes);
                dsh_strv_free(report->backends[i].network);
        }
        free(report->backends);
        dsh_strv_free(report->landlock_scopes);
        dsh_strv_free(report->landlock_scopes_missing);
        free(report->selected);
        dsh_strv_free(report->secrets_masked_paths);
        dsh_strv_free(report->secrets_environment_deny);
        dsh_strv_free(report->secrets_environment_allow);
        *report = (dsh_probe_report) DSH_PROBE_REPORT_INIT;
}

void dsh_backend_report_clear(dsh_backend_report *report)
{
        free(report->reason);
        free(report->version);
        free(report->runner_path);
        dsh_strv_free(report->landlock_scopes);
        dsh_strv_free(report->landlock_scopes_missing);
        dsh_strv_free(report->partial_reasons);
        dsh_strv_free(report->notes);
        *report = (dsh_backend_report) DSH_BACKEND_REPORT_INIT;
}

/* A copy of `configured`, or of `defaults` when nobody configured it (NULL: an empty vector). */
static char **secrets_list(char *const *configured, const char *const *defaults)
{
        return dsh_strv_copy(configured ? configured : (char *const *) defaults);
}

/* What every call of this provider holds back: the same fields the mask plan and the scrub read. */
static int report_secrets(const dsh_provider *provider, dsh_probe_report *report)
{
        const dsh_protections *protections = &provider->protections;

        report->secrets_masked_paths = secrets_list(protections->masks, dsh_default_masked_paths());
        report->secrets_require_masks = protections->require_masks;
        report->secrets_environment_deny = secrets_list(protections->environment_deny, dsh_default_environment_deny());
        report->secrets_environment_allow = secrets_list(protections->environment_allow, NULL);
        if (!report->secrets_masked_paths || !report->secrets_environment_deny || !report->secrets_environment_allow)
                return -ENOMEM;
        return 0;
}

int dsh_probe_report_fill(dsh_provider *provider, const dsh_backend_ops *const *candidates, size_t count,
                          dsh_probe_report *report, bool *usable, bool *transient, char **last_reason)
{
        report->backends = calloc(count, sizeof(dsh_backend_status));
        if (!report->backends)
                return -ENOMEM;
        for (size_t i = 0; i < count; i++) {
                dsh_backend_report backend_report = DSH_BACKEND_REPORT_INIT;

                dsh_probe_backend(provider, candidates[i], &backend_report);
                if (backend_report.landlock_abi != 0) {
                        report->landlock_abi = backend_report.landlock_abi;
                        report->landlock_scopes = backend_report.landlock_scopes;
                        report->landlock_scopes_missing = backend_report.landlock_scopes_missing;
                        backend_report.landlock_scopes = backend_report.landlock_scopes_missing = NULL;
                }
                usable[i] = backend_report.usable;
                transient[i] = backend_report.transient;
                if (!backend_report.usable) {
                        free(*last_reason);
                        *last_reason = backend_report.reason ? strdup(backend_report.reason) : NULL;
                }
                if (status_from_report(&report->backends[report->backend_count++], candidates[i]->name,
                                       &backend_report) < 0) {
                        dsh_backend_report_clear(&backend_report);
                        dsh_probe_report_clear(report);
                        return -ENOMEM;
                }
                dsh_backend_report_clear(&backend_report);
        }
        if (report_secrets(provider, report) < 0) {
                dsh_probe_report_clear(report);
                return -ENOMEM;
        }
        return 0;
}
