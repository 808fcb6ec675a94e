/* SPDX-License-Identifier: MIT */
/*
 * Internal view of a session handle, shared by the store, the replay and the policy service.
 *
 * JSON: the session log's replay (session-log.c) is the one reader in the library that does not
 * decode with the JSON core's strict decoder (base/json-core.h), and it is on purpose.  Replay runs
 * on every call in a session (`policy resolve --session`, each `run`), and a log only grows: a
 * `sandbox/mode` line exactly as this library writes it, and an ignored event in the envelope every
 * writer uses, are recognized by a hand-written scanner that builds no tree, which is what keeps a
 * 1M-event log resolving in well under a second (bench/resolve-scaling.bench.sh measures it: a tree
 * per line, of jansson or of the core, is what it avoids).  The scanner only ever accepts JSON; every
 * other line goes to jansson with the core's strict parse (DSH_JSON_STRICT_PARSE: a duplicate key
 * refused) and replay's own checks, whose messages name the log and the line.
 */
#ifndef DSH_SANDBOX_SESSION_H
#define DSH_SANDBOX_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "dsh-sandbox/policy-service.h"
#include "base/json-core.h"
#include "base/util.h"

#define SESSION_TYPE_HEADER "session"
#define SESSION_TYPE_MODE "sandbox/mode"
#define SESSION_TYPE_CONTEXT "sandbox/context"

/* What replay keeps of a log: only what resolving and appending need, never every event. */
typedef struct session_fold {
        uint64_t line_count;     /* complete lines replayed, header included */
        uint64_t event_count;
        uint64_t last_seq;
        bool has_override;
        dsh_mode override;
        char *last_context;      /* owned; NULL when none was logged */
} session_fold;

typedef struct session_registration {
        uint64_t id;
        char *directory;
} session_registration;

struct dsh_session {
        char *id;
        char *path;
        int fd;                  /* O_APPEND, O_RDWR when the log is writable, else O_RDONLY */
        bool writable;
        char *cwd;               /* as recorded; may hold NUL bytes (cwd_length counts them) */
        size_t cwd_length;
        int64_t created_at;
        int64_t delegation_depth;
        session_fold fold;
        off_t consumed;          /* bytes of complete lines replayed */
        session_registration *registrations;
        size_t registration_count;
        uint64_t next_registration;
};

/*
 * Called under the log's exclusive lock after the handle caught up: sets
 * `*data_out` to the event's data (a new reference) or to NULL to append
 * nothing.  Returns 0 or a negative errno with `error` set.
 */
typedef int (*session_event_builder)(dsh_session *session, void *userdata, json_t **data_out, dsh_error *error);

/*
 * The one write path: lock, catch up, cut a torn tail, build, write,
 * fdatasync, fold the new line in, unlock.  `appended_out` and `seq_out` may
 * be NULL.  The data is checked against the invariant before it is written.
 */
DSH_INTERNAL int session_append_built(dsh_session *session, const char *type, session_event_builder builder,
                                      void *userdata, uint64_t *seq_out, bool *appended_out, dsh_error *error);

/* The invariant: data.mode of a sandbox/mode event parses, or the exact message is set. */
DSH_INTERNAL int session_check_mode_data(json_t *data, dsh_mode *mode_out, const char *where, dsh_error *error);

#endif
