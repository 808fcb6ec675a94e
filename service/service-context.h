/* SPDX-License-Identifier: MIT */
/*
 * What `serve` and `mcp` share above the transport: the sandbox runtime,
 * made safe for requests that run at once on threads of their own, and the
 * sessions they name.
 *
 * A dsh_runtime is not thread-safe, and a bash command holds the runtime it
 * runs through until it ends.  So the context keeps one primary runtime
 * behind a lock for everything quick (resolving, sessions, confine, probe,
 * the file guard), and hands each long call (a bash command, a job) a
 * runtime of its own from a pool, keyed by backend ("auto", "bwrap",
 * "landlock"), made on demand from the same options and kept for the next
 * call.  Every runtime of the context reads the same configuration and the
 * same session store, so the protections are the runtime's own on every
 * path.
 *
 * Sessions are opened once and kept open for the life of the context: a
 * writable root registered on a session (runtime-only, as the policy
 * service defines it) lasts until it is unregistered or the service ends,
 * and every later resolution of that session sees it.
 */
#ifndef DSH_SERVICE_CONTEXT_H
#define DSH_SERVICE_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "dsh-sandbox/bash-tool.h"
#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/file-guard.h"
#include "dsh-sandbox/policy-service.h"
#include "dsh-sandbox/runtime.h"

typedef struct service_context service_context;

/* The policy fields of one call: a session, or the explicit mode, root, extra roots and backend. */
typedef struct service_policy_fields {
        const char *session_id;         /* NULL: an agentless call */
        bool has_mode;                  /* an explicit mode for this call */
        dsh_mode mode;
        const char *root;               /* NULL: the session's cwd, else the configured root, else the cwd */
        char *const *allow_write;       /* extra writable roots; may be NULL */
        const char *backend;            /* NULL or "auto": the configured chain; "bwrap", "landlock" */
        char *const *allow_unix_sockets;  /* allow-listed unix sockets besides the config's; may be NULL */
        const dsh_network_policy *network;  /* the call's own network, replacing the config's whole; NULL: the config's */
        char *const *masked_paths;      /* masks added to the deployment's (docs/secrets.md); may be NULL */
        char *const *allowed_environment;  /* environment names let through; may be NULL */
} service_policy_fields;

#define SERVICE_POLICY_FIELDS_INIT { NULL, false, DSH_MODE_READ_ONLY, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/*
 * A context over runtimes made from `options` (copied; its `backend` is
 * ignored: each call names its own).  The primary runtime is made here, so
 * a bad config is refused at start.  Returns 0 or a negative errno with
 * `error` set.
 */
int service_context_new(const dsh_runtime_options *options, service_context **context_out, dsh_error *error);

/* Frees the context and every runtime and session it holds; no call may be running. */
void service_context_free(service_context *context);

/*
 * The lock over the primary runtime and the open sessions.  Everything
 * below that says "under the lock" needs it held; the other functions take
 * it themselves.
 */
void service_lock(service_context *context);
void service_unlock(service_context *context);

/* The primary runtime (under the lock). */
dsh_runtime *service_primary_runtime(service_context *context);

/*
 * The open handle of session `id` (under the lock), opened on first use and
 * kept; owned by the context.  Errors as dsh_runtime_open_session().
 */
int service_session(service_context *context, const char *id, dsh_session **session_out, dsh_error *error);

/*
 * A new session (under the lock) with `cwd` and the optional parent, opened
 * and kept; *id_out is owned by the context.
 */
int service_session_create(service_context *context, const char *cwd, const char *parent_id, const char **id_out,
                           dsh_error *error);

/*
 * Resolves the policy of one call (takes the lock): the session named by
 * `fields` (kept open), the explicit fields over it, through the primary
 * runtime.  An unknown backend name is DSH_ERROR_INVALID_INPUT naming it.
 * `policy_out` must be DSH_POLICY_INIT; the caller clears it.
 */
int service_resolve(service_context *context, const service_policy_fields *fields, dsh_policy *policy_out,
                    dsh_error *error);

/*
 * A runtime of its own for a long call, for `backend` (NULL: "auto"):
 * exclusive until released.  Returns 0, or a negative errno with `error`
 * set (an unknown backend: DSH_ERROR_INVALID_INPUT).
 */
int service_runtime_acquire(service_context *context, const char *backend, dsh_runtime **runtime_out,
                            dsh_error *error);
void service_runtime_release(service_context *context, dsh_runtime *runtime);

/*
 * The bash tool under `fields`: resolves the policy, takes a runtime of the
 * fields' backend from the pool, runs `request` (whose `policy` member is
 * set here; everything else — command, timeout, escalation, approval,
 * cancellation, output callback — is the caller's), and gives the runtime
 * back.  Returns what dsh_bash_run() returns; a policy that cannot be
 * resolved is an error here, before anything runs.
 */
int service_bash_run(service_context *context, const service_policy_fields *fields, dsh_bash_request *request,
                     dsh_bash_result *result_out, dsh_error *error);

/*
 * A file guard for the policy `fields` resolve to (takes the lock), made
 * with the primary runtime's protections.  The caller frees it with
 * dsh_file_guard_free(); the guard's operations need no lock.
 */
int service_file_guard(service_context *context, const service_policy_fields *fields, dsh_file_guard **guard_out,
                       dsh_error *error);

/*
 * After an operation of `guard` (made by service_file_guard() for `fields`)
 * failed with FS_SANDBOX_DENIED: the guard's record of it
 * (dsh_file_guard_take_denial()), kept in the session `fields` names, if
 * any, with the surface "fs" (takes the lock).  Returns true with
 * `denial_out` (DSH_DENIAL_INIT) filled, false when the guard left none.  A
 * record that cannot be read or kept sets `*warning_out` (a new string the
 * caller frees; else NULL): the refusal is still the answer.
 */
bool service_file_guard_denial(service_context *context, const service_policy_fields *fields, dsh_file_guard *guard,
                               dsh_denial *denial_out, char **warning_out);

#endif
