/* SPDX-License-Identifier: MIT */
/*
 * The policy service: the one owner of per-call policy resolution
 * (docs/sessions.md), and the session's runtime-only writable-root
 * registrations.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "policy/session.h"
#include "base/path.h"

struct dsh_policy_service {
        dsh_mode default_mode;
        char *workspace_root;                 /* the fallback for agentless calls */
        char **additional_writable_roots;     /* configured; NULL: none */
        char **allowed_unix_sockets;          /* configured (allowUnixSockets) */
        dsh_network_policy network;           /* configured (network): every call's default */
};

int dsh_policy_service_new(const dsh_config *config, dsh_policy_service **service_out, dsh_error *error)
{
        dsh_policy_service *service;

        *service_out = NULL;
        if ((unsigned) config->mode >= DSH_MODE_COUNT)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the configured mode is not a mode");
        service = calloc(1, sizeof(*service));
        if (!service)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        service->default_mode = config->mode;
        service->workspace_root = config->workspace_root ? strdup(config->workspace_root) : NULL;
        service->additional_writable_roots = dsh_strv_copy(config->additional_writable_roots);
        service->allowed_unix_sockets = dsh_strv_copy(config->allowed_unix_sockets);
        if ((config->workspace_root && !service->workspace_root) || !service->additional_writable_roots ||
            !service->allowed_unix_sockets || dsh_network_policy_copy(&service->network, &config->network) < 0) {
                dsh_policy_service_free(service);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        *service_out = service;
        return 0;
}

void dsh_policy_service_free(dsh_policy_service *service)
{
        if (!service)
                return;
        free(service->workspace_root);
        dsh_strv_free(service->additional_writable_roots);
        dsh_strv_free(service->allowed_unix_sockets);
        dsh_network_policy_clear(&service->network);
        free(service);
}

dsh_mode dsh_policy_service_default_mode(const dsh_policy_service *service)
{
        return service->default_mode;
}

const char *dsh_policy_service_workspace_root(const dsh_policy_service *service)
{
        return service->workspace_root;
}

/* ------------------------------------------------------------- resolve -- */

static int append_unique(char ***roots, const char *root)
{
        for (char **existing = *roots; existing && *existing; existing++)
                if (strcmp(*existing, root) == 0)
                        return 0;
        return dsh_strv_append(roots, root);
}

/*
 * A session's root is recorded canonical (dsh_session_create), so a symlink
 * on it now was put there afterwards, and possibly by a confined command:
 * one session's workspace may hold another's root (`c` rooted at `ws/sub`,
 * `a` writing `ws`), and a command in `a` that replaces `ws/sub` with a
 * link to `outside` would otherwise make every later call in `c` grant
 * `outside`.  Following the link would let one session choose another's
 * root, so the root is refused instead; any component counts, a dangling
 * link included.  (The check and the grant are not one step: a command
 * running concurrently in `a` could still swap the directory in between.)
 */
static int check_recorded_root(const dsh_session *session, dsh_error *error)
{
        dsh_autofree char *link = NULL;
        int found = dsh_path_find_symlink(session->cwd, &link);

        if (found < 0)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, -found,
                                     "session %s: recorded cwd \"%s\" cannot be checked: %s", session->id,
                                     session->cwd, strerror(-found));
        if (found > 0)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, ELOOP,
                                     "session %s: recorded cwd \"%s\" now passes through a symlink (\"%s\"); a "
                                     "session's root is fixed when it is created, so it is refused rather than "
                                     "followed",
                                     session->id, session->cwd, link);
        return 0;
}

static int resolve_root(const dsh_policy_service *service, const dsh_policy_request *request, dsh_policy *policy,
                        dsh_error *error)
{
        const dsh_session *session = request->session;
        const char *root = request->workspace_root;
        const char *origin = "workspace root";
        bool recorded = !root && session;

        if (recorded) {
                root = session->cwd;
                origin = "session cwd";
                /* A JSON "\u0000" in the recorded cwd would silently shorten the C string. */
                if (strlen(session->cwd) != session->cwd_length)
                        return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, EINVAL,
                                             "session %s: recorded cwd contains a NUL byte", session->id);
        }
        if (!root)
                root = service->workspace_root;
        if (!root || root[0] != '/')
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, EINVAL,
                                     "%s must be an absolute path: \"%s\"", origin, root ? root : "");
        if (recorded) {
                int result = check_recorded_root(session, error);

                if (result < 0)
                        return result;
        }
        policy->workspace_root = dsh_path_canonical(root);
        if (!policy->workspace_root)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, errno,
                                     "%s \"%s\" cannot be resolved: %s", origin, root, strerror(errno));
        return 0;
}

static int snapshot_writable_roots(const dsh_policy_service *service, const dsh_policy_request *request,
                                   dsh_policy *policy, dsh_error *error)
{
        char **roots = NULL;

        for (char **root = service->additional_writable_roots; root && *root; root++)
                if (append_unique(&roots, *root) < 0)
                        goto out_of_memory;
        for (char *const *root = request->additional_writable_roots; root && *root; root++)
                if (append_unique(&roots, *root) < 0)
                        goto out_of_memory;
        /* Copies, not references: disposing a registration later leaves this result as it is. */
        for (size_t i = 0; request->session && i < request->session->registration_count; i++)
                if (append_unique(&roots, request->session->registrations[i].directory) < 0)
                        goto out_of_memory;
        policy->additional_writable_roots = roots;
        return 0;
out_of_memory:
        dsh_strv_free(roots);
        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}

/* The config's allow-listed unix sockets, then the call's: a call may add to them, never take one away. */
static int snapshot_unix_sockets(const dsh_policy_service *service, const dsh_policy_request *request,
                                 dsh_policy *policy, dsh_error *error)
{
        char **paths = NULL;

        for (char **path = service->allowed_unix_sockets; path && *path; path++)
                if (append_unique(&paths, *path) < 0)
                        goto out_of_memory;
        for (char *const *path = request->allowed_unix_sockets; path && *path; path++)
                if (append_unique(&paths, *path) < 0)
                        goto out_of_memory;
        policy->allowed_unix_sockets = paths;
        return 0;
out_of_memory:
        dsh_strv_free(paths);
        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}

/* The call's own masks and allowed names (the deployment's are the provider's: protections.h). */
static int snapshot_secrets(const dsh_policy_request *request, dsh_policy *policy, dsh_error *error)
{
        for (char *const *entry = request->masked_paths; entry && *entry; entry++)
                if (append_unique(&policy->masked_paths, *entry) < 0)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        for (char *const *name = request->allowed_environment; name && *name; name++)
                if (append_unique(&policy->allowed_environment, *name) < 0)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return 0;
}

int dsh_policy_service_resolve(dsh_policy_service *service, const dsh_policy_request *request,
                               dsh_policy *policy_out, dsh_error *error)
{
        static const dsh_policy_request agentless = DSH_POLICY_REQUEST_INIT;
        dsh_policy policy = DSH_POLICY_INIT;
        int result;

        *policy_out = (dsh_policy) DSH_POLICY_INIT;
        if (!request)
                request = &agentless;
        if (request->has_mode && (unsigned) request->mode >= DSH_MODE_COUNT)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the requested mode is not a mode");
        if (request->session) {
                /* Another process may have switched the mode since this handle last looked. */
                result = dsh_session_refresh(request->session, error);
                if (result < 0)
                        return result;
        }
        policy.mode = service->default_mode;
        if (request->has_mode)
                policy.mode = request->mode;
        else if (request->session && request->session->fold.has_override)
                policy.mode = request->session->fold.override;
        result = resolve_root(service, request, &policy, error);
        if (result == 0)
                result = snapshot_writable_roots(service, request, &policy, error);
        if (result == 0)
                result = snapshot_unix_sockets(service, request, &policy, error);
        if (result == 0)
                result = snapshot_secrets(request, &policy, error);
        /* The call's network replaces the config's whole: merging would let one widen the other. */
        if (result == 0 && dsh_network_policy_copy(&policy.network, request->network ? request->network
                                                                                  : &service->network) < 0)
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (result == 0 && request->session) {
                policy.session_id = strdup(request->session->id);
                if (!policy.session_id)
                        result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        if (result < 0) {
                dsh_policy_clear(&policy);
                return result;
        }
        *policy_out = policy;
        return 0;
}

/* ----------------------------------------------------- registrations -- */

int dsh_session_register_writable_root(dsh_session *session, const char *directory, uint64_t *registration_out,
                                       dsh_error *error)
{
        session_registration *grown;
        char *copy;

        if (!directory || directory[0] != '/')
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "a writable root must be an absolute path: \"%s\"", directory ? directory : "");
        copy = strdup(directory);
        grown = copy ? realloc(session->registrations, (session->registration_count + 1) * sizeof(*grown)) : NULL;
        if (!grown) {
                free(copy);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        session->registrations = grown;
        grown[session->registration_count].id = ++session->next_registration;
        grown[session->registration_count].directory = copy;
        session->registration_count++;
        *registration_out = session->next_registration;
        return 0;
}

int dsh_session_dispose_writable_root(dsh_session *session, uint64_t registration)
{
        for (size_t i = 0; i < session->registration_count; i++) {
                if (session->registrations[i].id != registration)
                        continue;
                free(session->registrations[i].directory);
                memmove(&session->registrations[i], &session->registrations[i + 1],
                        (session->registration_count - i - 1) * sizeof(session->registrations[0]));
                session->registration_count--;
                return 0;
        }
        return -ENOENT;
}
