/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: the policy service and the durable session store (docs/sessions.md).
 *
 * In an agent harness the mode is a property of a session, not of a process.
 * A session is one append-only JSONL log in the state directory:
 *
 *   {"type":"session","version":0,"id":"...","createdAt":<ms>,"cwd":"/abs","delegationDepth":0}
 *   {"type":"sandbox/mode","seq":1,"time":<ms>,"data":{"mode":"workspace-write"}}
 *   {"type":"sandbox/context","seq":2,"time":<ms>,"data":{"text":"Current DSH file policy: ..."}}
 *
 * The header is immutable; events are numbered 1, 2, 3, ... without gaps.
 * The mode of a session is the fold of its `sandbox/mode` events (the last one
 * wins) and nothing else; its workspace root is the header's cwd.  Event types
 * this library does not know are kept in the log and ignored, so logs written
 * by a newer harness still load.
 *
 * Durability and concurrency (see docs/sessions.md):
 *   - an append holds an exclusive flock(2) on the log for its whole
 *     catch-up, write and fdatasync, so appenders in several processes never
 *     interleave or reuse a `seq`; success is reported only after fdatasync;
 *   - only newline-terminated lines are records.  Bytes after the last
 *     newline are a torn write (a crash mid-append): replay ignores them, and
 *     the next appender, under the lock, cuts them off before it writes, so a
 *     new record never glues onto a fragment.  Nothing before the last
 *     newline is ever rewritten;
 *   - a failed append (full disk, I/O error) is rolled back to the previous
 *     end of file under the lock: no event is half-written.
 *
 * The policy service resolves one complete dsh_policy per call from the
 * configuration, a session and an explicit approved mode, so every enforcing
 * tool gets the same answer from one owner.
 *
 * A dsh_session handle is not thread-safe; use one per thread or lock around
 * it.  Several handles (in one or several processes) may share a log.
 */
#ifndef DSH_SANDBOX_POLICY_SERVICE_H
#define DSH_SANDBOX_POLICY_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsh-sandbox/config.h"
#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------ session store -- */

/* Longest accepted session id. */
#define DSH_SESSION_ID_MAX 128

typedef struct dsh_session_store dsh_session_store;
typedef struct dsh_session dsh_session;

/*
 * The default state directory: $DSH_SANDBOX_STATE_DIR, else
 * $XDG_STATE_HOME/dsh-sandbox, else ~/.local/state/dsh-sandbox.  Returns a new
 * string (caller frees), or NULL when none can be determined (no usable
 * environment) or out of memory.
 */
DSH_PUBLIC char *dsh_session_store_default_directory(void);

/*
 * Opens the store rooted at `directory` (NULL: the default).  Nothing is
 * created until a session is; the directory is then made with mode 0700.
 * Returns 0 or a negative errno with `error` set.  Free with dsh_session_store_free().
 */
DSH_PUBLIC int dsh_session_store_open(const char *directory, dsh_session_store **store_out, dsh_error *error);
DSH_PUBLIC void dsh_session_store_free(dsh_session_store *store);

/* The store's directory; owned by the store. */
DSH_PUBLIC const char *dsh_session_store_directory(const dsh_session_store *store);

/*
 * True when `id` can name a session file: 1..DSH_SESSION_ID_MAX characters
 * from [A-Za-z0-9._-], not starting with '.'.  Nothing that could traverse
 * a path ("..", "/", "../x") is accepted.
 */
DSH_PUBLIC bool dsh_session_id_is_valid(const char *id);

/*
 * Every session id in the store, sorted (new ids sort by creation time), as a
 * NULL-terminated vector the caller frees with dsh_strv_free().  A missing
 * store directory is an empty list.  Returns 0 or a negative errno.
 */
DSH_PUBLIC int dsh_session_store_list(dsh_session_store *store, char ***ids_out, dsh_error *error);

/*
 * Creates a session whose immutable workspace root is `cwd` (absolute, no
 * NUL; it need not exist yet).  What is recorded is its canonical spelling,
 * resolved now (realpath of the longest existing prefix, the rest folded
 * lexically), so a directory named through a symlink is recorded as where
 * it leads; a later resolve refuses the root if a symlink has appeared on it
 * since.  A canonical root that is not valid UTF-8 cannot be written into
 * the JSON log and fails with DSH_ERROR_INVALID_INPUT.  The id is new and
 * random (a UUIDv7 string).
 * The header is written to a temporary file, synced and linked into place,
 * so a session file never exists without its complete header.
 *
 * With a `parent`, the child's delegationDepth is the parent's plus one and
 * the parent's override, if any, is stamped on the child
 * (dsh_session_stamp_override).  Returns 0 with `*session_out` owned by the
 * caller (free with dsh_session_free), or a negative errno with `error` set.
 */
DSH_PUBLIC int dsh_session_create(dsh_session_store *store, const char *cwd, dsh_session *parent,
                                  dsh_session **session_out, dsh_error *error);

/*
 * Opens an existing session and replays its log.  A missing session, a
 * corrupt line anywhere but a torn (unterminated) end, a `seq` that does not
 * increase, or a `sandbox/mode` event outside the three modes fail with an
 * error naming the file and the line.  Anything but a regular file at the
 * log's path (a symlink, a FIFO) is refused without being followed or
 * waited on.  Returns 0 or a negative errno.
 */
DSH_PUBLIC int dsh_session_open(dsh_session_store *store, const char *id, dsh_session **session_out,
                                dsh_error *error);

/* Frees the handle, its runtime registrations included.  NULL is allowed. */
DSH_PUBLIC void dsh_session_free(dsh_session *session);

/*
 * Replays whatever other handles or processes appended since this handle
 * last looked.  Resolving and appending do this themselves; call it before
 * reading the accessors below when another process may have written.
 */
DSH_PUBLIC int dsh_session_refresh(dsh_session *session, dsh_error *error);

/* Header fields; strings are owned by the session. */
DSH_PUBLIC const char *dsh_session_id(const dsh_session *session);
DSH_PUBLIC const char *dsh_session_path(const dsh_session *session);
/* The recorded cwd as text (it may be relative or contain a NUL byte in a log
 * someone edited; resolving then fails with SANDBOX_INVALID_ROOT).
 * `length_out` (may be NULL) receives the length including any NUL bytes. */
DSH_PUBLIC const char *dsh_session_cwd(const dsh_session *session, size_t *length_out);
DSH_PUBLIC int64_t dsh_session_created_at(const dsh_session *session);
DSH_PUBLIC int64_t dsh_session_delegation_depth(const dsh_session *session);
/* Events replayed so far, every type counted, and the last seq (0: none). */
DSH_PUBLIC uint64_t dsh_session_event_count(const dsh_session *session);
DSH_PUBLIC uint64_t dsh_session_last_seq(const dsh_session *session);

/*
 * overrideOf: the fold of the session's `sandbox/mode` events alone, never
 * the deployment default.  Returns true and sets `*mode_out` when the session
 * has an override, false when it has none.
 */
DSH_PUBLIC bool dsh_session_override(const dsh_session *session, dsh_mode *mode_out);

/*
 * setSandboxMode: appends exactly one `sandbox/mode` event.  This is the only
 * way the mode of a session changes.  `seq_out` (may be NULL) receives the
 * event's seq.  Returns 0 or a negative errno; on failure nothing was
 * appended.
 */
DSH_PUBLIC int dsh_session_set_mode(dsh_session *session, dsh_mode mode, uint64_t *seq_out, dsh_error *error);

/*
 * The write half of delegation: appends `{"mode": ..., "source": "delegation"}`
 * unless the session already folds to `mode` (checked under the log's lock).
 * `*stamped_out` (may be NULL) tells whether an event was appended.
 */
DSH_PUBLIC int dsh_session_stamp_override(dsh_session *session, dsh_mode mode, bool *stamped_out,
                                          dsh_error *error);

/*
 * Appends one event of any type: `data_json` is a JSON object (NULL: {}).
 * The envelope (type, seq, time) is the store's.  A `sandbox/mode` event
 * whose data.mode is not one of the three modes is refused with the
 * invariant's exact message; type "session" is refused (it is the header).
 * `seq_out` (may be NULL) receives the seq.  Returns 0 or a negative errno.
 * Every append (this one, dsh_session_set_mode, dsh_session_stamp_override)
 * fails with -EOVERFLOW, writing nothing, once the log's last seq is
 * INT64_MAX, the largest a JSON reader holds: the log stays loadable.
 */
DSH_PUBLIC int dsh_session_append(dsh_session *session, const char *type, const char *data_json,
                                  uint64_t *seq_out, dsh_error *error);

/* One replayed line, valid only during the visitor call. */
typedef struct dsh_session_event {
        uint64_t line_number;   /* 1-based; line 1 is the header */
        uint64_t seq;           /* 0 for the header */
        const char *type;
        const char *line;       /* the raw JSON text, NUL-terminated, no newline */
        size_t line_length;
} dsh_session_event;

/* Return 0 to continue, anything else to stop (it is returned by the walk). */
typedef int (*dsh_session_event_visitor)(const dsh_session_event *event, void *userdata);

/*
 * Walks the log from the header on, one complete line at a time (a torn end
 * is not visited), with the same checks as dsh_session_open.  Returns 0, the
 * visitor's non-zero value, or a negative errno with `error` set.
 */
DSH_PUBLIC int dsh_session_foreach_event(dsh_session *session, dsh_session_event_visitor visitor,
                                         void *userdata, dsh_error *error);

/* ------------------------------------------ runtime writable roots -- */

/*
 * registerWritableRoot: permits writes under `directory` (absolute, no NUL)
 * in this session handle's future resolutions.  Runtime-only: never written
 * to the log, gone with the handle, to be registered again after resume.
 * Several registrations of one directory are independent.  A policy already
 * resolved keeps its permissions.  `*registration_out` receives the
 * disposer's id (never 0).  Returns 0 or a negative errno.
 */
DSH_PUBLIC int dsh_session_register_writable_root(dsh_session *session, const char *directory,
                                                  uint64_t *registration_out, dsh_error *error);

/* Disposes one registration; the others stay.  Returns 0, or -ENOENT when
 * it was already disposed (disposing twice is harmless). */
DSH_PUBLIC int dsh_session_dispose_writable_root(dsh_session *session, uint64_t registration);

/* ------------------------------------------------------ policy service -- */

typedef struct dsh_policy_service dsh_policy_service;

/*
 * A service over the deployment configuration (copied: `config` may be
 * cleared afterwards).  Its default mode and fallback root are the config's.
 * Returns 0 or a negative errno.  Free with dsh_policy_service_free().
 */
DSH_PUBLIC int dsh_policy_service_new(const dsh_config *config, dsh_policy_service **service_out,
                                      dsh_error *error);
DSH_PUBLIC void dsh_policy_service_free(dsh_policy_service *service);

DSH_PUBLIC dsh_mode dsh_policy_service_default_mode(const dsh_policy_service *service);
DSH_PUBLIC const char *dsh_policy_service_workspace_root(const dsh_policy_service *service);

typedef struct dsh_policy_request {
        dsh_session *session;               /* NULL: an agentless call */
        bool has_mode;                      /* an explicit, approved mode for this call */
        dsh_mode mode;
        const char *workspace_root;         /* explicit root; NULL: the session's cwd, else config */
        char *const *additional_writable_roots;  /* per-call extra roots; may be NULL */
        char *const *allowed_unix_sockets;  /* per-call allow-listed unix sockets, absolute, besides the
                                               config's allowUnixSockets; may be NULL */
        /* The call's own network (copied); NULL: the config's `network`.  It replaces the config's whole:
         * the two are never merged (an allow-list of the call's is not widened by the config's). */
        const dsh_network_policy *network;
        /* The call's own secrets (docs/secrets.md), copied into the policy's masked_paths and
         * allowed_environment: masks added to the deployment's, names let through.  May be NULL. */
        char *const *masked_paths;
        char *const *allowed_environment;
} dsh_policy_request;

#define DSH_POLICY_REQUEST_INIT { NULL, false, DSH_MODE_READ_ONLY, NULL, NULL, NULL, NULL, NULL, NULL }

/*
 * resolve({session?, mode?}).  mode = the explicit mode, else the session's
 * override (its log is caught up first), else the default.  Root = the
 * explicit root, else the session's immutable cwd, else the configured
 * fallback; canonicalized with filesystem semantics first (realpath of the
 * longest existing prefix, so `link/..` lands where chdir lands) and
 * lexically after.  A relative or NUL-containing root fails with
 * SANDBOX_INVALID_ROOT, and so does a session's recorded cwd that now
 * passes through a symlink (any component, a dangling one included): it was
 * canonical when recorded, so the link was put there since, perhaps by a
 * confined command, and is not followed.  Writable roots = the configured ones, the request's,
 * and the session's live registrations, snapshotted (de-duplicated, in that
 * order).  Network = the request's, else the config's (copied as given:
 * dsh_policy_prepare() checks and expands it).  `policy_out` must be cleared; the caller owns the result.
 */
DSH_PUBLIC int dsh_policy_service_resolve(dsh_policy_service *service, const dsh_policy_request *request,
                                          dsh_policy *policy_out, dsh_error *error);

/* ----------------------------------------------------- runtime context -- */

/*
 * The `sandbox:policy` runtime-context line for a resolved policy: one of the
 * three exact texts of docs/sessions.md (the workspace root JSON-quoted).
 * Returns a new string (caller frees), or NULL when out of memory.
 */
DSH_PUBLIC char *dsh_runtime_context_text(const dsh_policy *policy);

/*
 * The context the model must be told now: resolves the session's standing
 * policy and compares its text with the last `sandbox/context` event in the
 * log.  When it differs (or there is none) the new text is logged as
 * `{"type":"sandbox/context","data":{"text":...}}` and returned in
 * `*text_out` (caller frees); when unchanged `*text_out` is NULL and nothing
 * is written.  Check and append happen under the log's lock, so two callers
 * never both report one change.  Returns 0 or a negative errno.
 */
DSH_PUBLIC int dsh_policy_service_context(dsh_policy_service *service, dsh_session *session, char **text_out,
                                          dsh_error *error);

/* The text of the last logged `sandbox/context` event, or NULL; owned by the session. */
DSH_PUBLIC const char *dsh_session_last_context(const dsh_session *session);

#ifdef __cplusplus
}
#endif

#endif
