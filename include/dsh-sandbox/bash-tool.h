/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: the bash tool, an agent's "run this shell command" (docs/bash-tool.md).
 *
 * dsh_bash_run() hands the runtime's provider exactly ["bash", "-c", COMMAND]
 * under a resolved policy, captures stdout and stderr within a bound, ends
 * the command's whole process group at a timeout or on the caller's
 * cancellation, and says which of these happened:
 *
 *   - the command ran and failed on its own (fix the command): "completed";
 *   - the sandbox denied it a file effect or a connection, as the enforcing
 *     layers recorded it (ask for the grant the record names, or stop):
 *     "denied", with the denial marker and, where a one-call grant exists,
 *     the escalation hint;
 *   - the sandbox runner failed and the command never ran (a sandbox
 *     problem, never to be "fixed" by dropping the sandbox): "runner-failed",
 *     with the runner marker;
 *   - the tool ended it: "timed-out" or "cancelled";
 *   - an escalation was not approved: "rejected", nothing ran.
 *
 * Attribution, in this order: cancellation, the timeout, the runner could not
 * be spawned, the runner failed (learned out of band where the backend has a
 * channel: bwrap's --json-status-fd, the in-process spawn's pre-exec report;
 * the backend's runner-failure rules over stderr only where it has none),
 * denial (a typed record in `denials`, whatever the exit status, a signal
 * death included: docs/bash-tool.md, "Attribution"), the ordinary result.
 * Text the command printed never makes a denial, and a runner's fatal line
 * printed by the command is never a runner failure where the channel says
 * the command ran.
 *
 * Escalation: `sandbox_permissions` (a wider mode), `additional_write`
 * (extra writable roots) or `additional_hosts` (extra allowed hosts), with a
 * `justification`, retries this one call with that grant once the approval
 * channel says yes.
 * Nothing about a grant is kept: the next call resolves as before.  A
 * granted confined mode still goes through the provider (an unusable
 * backend still fails closed); only a granted danger-full-access runs the
 * command unconfined.
 *
 * Not thread-safe on one runtime (see runtime.h); dsh_bash_cancel() is the
 * exception, callable from any thread or a signal handler.
 */
#ifndef DSH_SANDBOX_BASH_TOOL_H
#define DSH_SANDBOX_BASH_TOOL_H

#include <stdbool.h>
#include <stddef.h>

#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/runtime.h"
#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What happened to the call (the attribution order above). */
typedef enum dsh_bash_kind {
        DSH_BASH_COMPLETED = 0,   /* it ran and ended on its own: its status is its own */
        DSH_BASH_DENIED,          /* it ran, and the enforcing layers recorded a refusal (`denials`), any exit status */
        DSH_BASH_RUNNER_FAILED,   /* the sandbox runner failed or could not be spawned: the command did not run */
        DSH_BASH_TIMED_OUT,       /* still running at the timeout: its process group was killed */
        DSH_BASH_CANCELLED,       /* the caller cancelled it (before or while it ran) */
        DSH_BASH_REJECTED,        /* the escalation it asked for was not approved: nothing ran */
} dsh_bash_kind;

/* "completed", "denied", "runner-failed", "timed-out", "cancelled", "rejected"; a static string. */
DSH_PUBLIC const char *dsh_bash_kind_name(dsh_bash_kind kind);

/* Bytes kept of each stream when the request names no limit. */
#define DSH_BASH_OUTPUT_LIMIT_DEFAULT (256 * 1024)

/* How long a cancelled command's group has to end after the signal, before SIGKILL. */
#define DSH_BASH_CANCEL_GRACE_MS 2000

/*
 * How long the output is still read once the command (the process the
 * provider spawned) has exited and the rest of its group was killed: only a
 * process that left the group (setsid) can still hold the pipe.
 */
#define DSH_BASH_DRAIN_MS 2000

/* The default bound of the approval command (dsh_bash_approve_with_command). */
#define DSH_BASH_APPROVAL_TIMEOUT_DEFAULT_MS (5 * 60 * 1000)

/* ------------------------------------------------------- cancellation -- */

/*
 * A cancellation the caller triggers, from any thread or from a signal
 * handler, while dsh_bash_run() waits: a pipe underneath, so the run wakes
 * at once.  Once triggered it stays triggered (one per call, or per run of
 * calls that end together).
 */
typedef struct dsh_bash_cancellation dsh_bash_cancellation;

/* Returns 0 with a new cancellation (free with dsh_bash_cancellation_free()), or a negative errno with `error` set. */
DSH_PUBLIC int dsh_bash_cancellation_new(dsh_bash_cancellation **cancellation_out, dsh_error *error);

DSH_PUBLIC void dsh_bash_cancellation_free(dsh_bash_cancellation *cancellation);

/*
 * Cancels: `signal_number` (SIGINT, SIGTERM, ...) goes to the command's
 * process group, whose handlers may clean up; whatever of the group still
 * runs DSH_BASH_CANCEL_GRACE_MS later is killed with SIGKILL.  SIGKILL (or a
 * number that is not a signal) kills at once.  A second call sends its
 * signal too.  Async-signal-safe and thread-safe (one write(2); errno is
 * preserved); a cancellation before the command started means it never
 * starts.
 */
DSH_PUBLIC void dsh_bash_cancel(dsh_bash_cancellation *cancellation, int signal_number);

/* --------------------------------------------------------- escalation -- */

/*
 * What the user is asked to approve: one call, under a wider mode, or with
 * extra writable roots or allowed hosts, or both — exactly what is granted,
 * and nothing is kept after the call.
 */
typedef struct dsh_bash_escalation {
        const char *command;            /* the command, exactly as it will run */
        dsh_mode current_mode;          /* the call's mode without the grant */
        dsh_mode requested_mode;        /* sandbox_permissions: strictly wider; else the current mode */
        const char *justification;      /* the caller's (the model's) reason, one non-empty line */
        const char *workspace_root;     /* the call's workspace root */
        const char *session_id;         /* NULL for an agentless call */
        char *const *additional_write;  /* extra writable roots for this call, canonical (NULL-terminated; NULL: none) */
        char *const *additional_hosts;  /* extra allowed hosts for this call ("host[:port]"; NULL: none) */
} dsh_bash_escalation;

/*
 * An approval channel: returns 1 when the user allowed this one call, 0
 * when they did not, or a negative errno with `error` set when the channel
 * could not ask (which counts as not allowed; the reason becomes a warning
 * of the result).  Called at most once per dsh_bash_run(), before anything
 * runs.
 */
typedef int (*dsh_bash_approve_fn)(const dsh_bash_escalation *escalation, void *data, dsh_error *error);

/* The approval command channel: dsh_bash_approve_with_command()'s `data`. */
typedef struct dsh_bash_approval_command {
        const char *command;    /* a shell command line, run as /bin/sh -c COMMAND */
        long timeout_ms;        /* its bound; 0: DSH_BASH_APPROVAL_TIMEOUT_DEFAULT_MS */
        int output_fd;          /* where its stdout and stderr go; -1: /dev/null */
} dsh_bash_approval_command;

/*
 * Asks a harness's approval command.  It runs unconfined (it is the
 * harness's, not the model's), in a process group of its own, with the
 * request as JSON on stdin (dsh_json_encode_bash_escalation) and in its
 * environment: DSH_SANDBOX_ESCALATION_COMMAND, _MODE (the requested one),
 * _CURRENT_MODE, _JUSTIFICATION, _WORKSPACE_ROOT, _SESSION_ID (when the
 * call has a session), _ADDITIONAL_WRITE and _ADDITIONAL_HOSTS (one entry a
 * line; absent when none).  Exit 0 allows the call once; any other status, a
 * signal, or still running at the bound (its group is then killed) does
 * not.  Nothing of its group outlives the call.  A request JSON cannot
 * carry (a command that is not UTF-8) is not asked: -EINVAL.
 */
DSH_PUBLIC int dsh_bash_approve_with_command(const dsh_bash_escalation *escalation, void *data, dsh_error *error);

/* ------------------------------------------------------------ the call -- */

/*
 * Called with each chunk the command writes, as it arrives (`stream` 1 for
 * stdout, 2 for stderr): a front end that shows the output live.  A
 * negative return stops the stream: it is no longer read and its pipe is
 * closed, so the command's next write to it fails (EPIPE, SIGPIPE) as in a
 * shell pipeline whose reader went away.
 */
typedef int (*dsh_bash_output_fn)(int stream, const char *data, size_t length, void *user_data);

typedef struct dsh_bash_request {
        const char *command;            /* bash -c COMMAND: non-empty, not only blanks */
        const dsh_policy *policy;       /* resolved (dsh_runtime_resolve()): mode, root, writable roots */
        long timeout_ms;                /* 0: none; else the group is killed once it has run this long */
        size_t output_limit;            /* bytes kept per stream; 0: DSH_BASH_OUTPUT_LIMIT_DEFAULT */
        /*
         * Escalation: a justification with sandbox_permissions, additional
         * writable roots, additional hosts, or any of them together; each
         * needs the approval channel (the validation texts are in
         * dsh_bash_run()).  Extra roots need the call to run under
         * workspace-write (its own mode or the requested one), extra hosts a
         * restricted network ("off" or an allow-list).
         */
        const char *sandbox_permissions;
        const char *justification;
        dsh_bash_approve_fn approve;    /* NULL: no channel, an escalation that needs approval is refused */
        void *approve_data;
        dsh_bash_cancellation *cancellation;   /* NULL: none */
        dsh_bash_output_fn on_output;   /* NULL: only captured */
        void *output_data;
        /*
         * Where the command starts: absolute, or relative to the policy's
         * workspace root; NULL: the workspace root itself (a session's
         * recorded cwd when the policy was resolved through the session).
         * It must exist and be a directory.  Not a grant: the writable
         * roots are what they are from any cwd (docs/bash-tool.md).
         */
        const char *cwd;
        char *const *additional_write;  /* --additional-write DIR...: absolute or relative to the root; NULL: none */
        char *const *additional_hosts;  /* --additional-host HOST...: allow-list patterns; NULL: none */
} dsh_bash_request;

#define DSH_BASH_REQUEST_INIT { NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/*
 * One stream as kept.  Within the limit it is the whole output; beyond it,
 * the first half of the limit, the line "[... N bytes omitted ...]", and
 * the last half (cut on UTF-8 character boundaries).  Memory stays within
 * the limit however much the command writes.
 */
typedef struct dsh_bash_output {
        char *text;                     /* NUL-terminated; may hold NUL bytes: use `length` */
        size_t length;
        bool truncated;
        unsigned long long total_bytes; /* everything the command wrote to the stream */
} dsh_bash_output;

typedef struct dsh_bash_sandbox {
        dsh_mode mode;                  /* the mode the call ran under (the granted one after an escalation) */
        char *backend;                  /* "bwrap", "landlock", "runner-command", "none"; NULL: nothing spawned */
        dsh_enforcement enforcement;    /* meaningful only when `confined` */
        bool confined;                  /* a backend confined the command (a backend, and not danger-full-access) */
        bool denied;
        bool runner_failed;
} dsh_bash_sandbox;

typedef struct dsh_bash_result {
        dsh_bash_kind kind;
        int exit_code;                  /* its exit status, or -1 (killed by a signal, or it never ran) */
        int signal;                     /* the signal that killed it, or 0 */
        bool timed_out;
        bool cancelled;
        dsh_bash_output standard_output;
        dsh_bash_output standard_error;
        dsh_bash_sandbox sandbox;
        char **markers;                 /* the marker lines, in order (NULL-terminated, never NULL) */
        char *message;                  /* rejected, timed out, cancelled, a held-back file denied (the paths of
                                           its protected-subpath records), a path moved aside: one sentence
                                           for the model; else NULL */
        dsh_error error;                /* runner-failed: SANDBOX_UNAVAILABLE with " Runner failure: <detail>" */
        char **warnings;                /* for the user: what the sandbox undid or noticed (never NULL) */
        /*
         * The writes the sandbox refused the command, as the enforcing layer
         * recorded them (dsh_child_refusals(): its bounds, and what it does
         * not hold), owned by the result; NULL and 0 when none.  The raw
         * records; `denials` below is the typed list that decides `kind`.
         */
        dsh_write_refusal *refused_writes;
        size_t refused_write_count;
        unsigned long refused_writes_dropped;   /* refusals past the bound */
        /*
         * The connections, DNS queries and proxied requests the network
         * policy refused the command (dsh_child_network_refusals()), owned
         * by the result; NULL and 0 when none (always under "on").
         */
        dsh_refused_connection *refused_connections;
        size_t refused_connection_count;
        unsigned long refused_connections_dropped;      /* refusals past the bound */
        /*
         * Every refusal the enforcing layers recorded for the call, typed,
         * each with its grant (dsh-sandbox/denial.h).  `kind` is "denied"
         * and `sandbox.denied` true exactly when this holds a record (or
         * counted one past the bound): text the command printed never makes
         * a denial.
         */
        dsh_denials denials;
} dsh_bash_result;

#define DSH_BASH_RESULT_INIT                                                                                   \
        { DSH_BASH_COMPLETED, -1, 0, false, false, { NULL, 0, false, 0 }, { NULL, 0, false, 0 },              \
          { DSH_MODE_READ_ONLY, NULL, DSH_ENFORCEMENT_FULL, false, false, false }, NULL, NULL, DSH_ERROR_INIT, \
          NULL, NULL, 0, 0, NULL, 0, 0, DSH_DENIALS_INIT }

/*
 * Runs `request->command` as the bash tool, through `runtime`'s provider,
 * and fills `result_out` (which must be DSH_BASH_RESULT_INIT; clear it with
 * dsh_bash_result_clear()).  stdin is /dev/null; the command runs in a new
 * session (no controlling terminal: it cannot read or write the user's
 * terminal, and the terminal's signals reach only the caller) in the
 * caller's environment, starting in `request->cwd` (default: the workspace
 * root), which was opened once and is entered by fd (under bwrap, by that
 * fd's path inside the sandbox: a directory the sandbox does not show is a
 * runner failure).  When the spawned process
 * exits, whatever is left of its process group is killed (under bwrap the
 * sandbox's pid namespace ends anyway), so nothing outlives the call but a
 * process that left the group (setsid) outside bwrap: docs/bash-tool.md.
 *
 * Returns 0 with a result for every call that was valid (the kinds above),
 * or a negative errno with `error` set, nothing run:
 *   - DSH_ERROR_INVALID_INPUT, -EINVAL, for the request: "the command is
 *     empty", "invalid escalation: sandbox_permissions requires a
 *     justification" (and "additional_write requires a justification",
 *     "additional_hosts requires a justification"), "invalid escalation:
 *     justification is only valid together with sandbox_permissions,
 *     additional_write or additional_hosts", "invalid justification: expected
 *     a non-empty sentence" (blank, or holding a control character: the
 *     prompt shows it to the user), "invalid escalation: sandbox_permissions
 *     must be \"read-only\", \"workspace-write\" or \"danger-full-access\"",
 *     and for a narrower mode "sandbox escalation to \"<mode>\" is not
 *     strictly wider than this call's current \"<mode>\" mode" (the same
 *     mode needs no approval and simply runs); for the extra roots and
 *     hosts the texts of docs/bash-tool.md, "Escalation" ("invalid
 *     escalation: additional_write \"<dir>\" does not exist", "...
 *     additional_write needs workspace-write ...", "... additional_hosts
 *     needs a restricted network ..."); for the cwd "cwd \"<path>\"
 *     does not exist", "cwd \"<path>\" is not a directory", "cwd is empty"
 *     (the path made absolute), checked before any approval is asked;
 *   - the provider's refusals that are not runner failures
 *     (SANDBOX_PREPARATION_FAILED, SANDBOX_INVALID_ROOT, ...);
 *   - DSH_ERROR_EXEC_FAILED when bash itself cannot be executed (ENOENT,
 *     EACCES), and DSH_ERROR_SYSTEM for pipes and memory.
 * A rejection is a result (kind "rejected") whose message is "the user
 * rejected escalating this command to \"<mode>\"; it stays denied, so stop
 * and explain instead of working around it" (with extra roots or hosts:
 * "... to \"<mode>\" with the writable root \"<dir>\" and the host
 * \"<host>\"; ...").
 */
DSH_PUBLIC int dsh_bash_run(dsh_runtime *runtime, const dsh_bash_request *request, dsh_bash_result *result_out,
                            dsh_error *error);

DSH_PUBLIC void dsh_bash_result_clear(dsh_bash_result *result);

/*
 * The cwd check of dsh_bash_run(), on its own: for a front end that answers
 * a bad cwd before it starts anything (a background job).  Returns 0 when
 * `cwd` (NULL: the workspace root) names a directory now, or a negative
 * errno with `error` set to the texts dsh_bash_run() gives.  The run checks
 * again: a directory removed in between fails the run the same way.
 */
DSH_PUBLIC int dsh_bash_check_cwd(const dsh_policy *policy, const char *cwd, dsh_error *error);

/*
 * The request's own checks of dsh_bash_run() on their own, with nothing
 * asked and nothing run: the command, the escalation (sandbox_permissions,
 * additional_write, additional_hosts, the justification: the texts above)
 * and the cwd.  For a front end that answers a bad request before it starts
 * anything (serve's job.start).  Returns 0, or a negative errno with
 * `error` set.  The run checks again.
 */
DSH_PUBLIC int dsh_bash_check_request(const dsh_bash_request *request, dsh_error *error);

#ifdef __cplusplus
}
#endif

#endif
