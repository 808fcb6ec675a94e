/* SPDX-License-Identifier: MIT */
/* The session log's scanner (session-log.c): what the store replays a log with. */
#ifndef DSH_SANDBOX_SESSION_LOG_H
#define DSH_SANDBOX_SESSION_LOG_H

#include <stdint.h>
#include <sys/types.h>

#include "dsh-sandbox/policy-service.h"
#include "base/util.h"
#include "policy/session.h"

/* One replay: where it reads, what it checks the header against, and what it fills. */
typedef struct session_log_replay {
        const char *path;               /* named in every error */
        const char *expected_id;        /* the header's id must be this; NULL: not checked */
        session_fold *fold;             /* the fold the lines are folded into (its counts say where replay is) */
        dsh_session *header_target;     /* line 1 fills it; NULL: checked only */
        dsh_session_event_visitor visitor;
        void *userdata;
} session_log_replay;

/*
 * Replays every complete line of `fd` from *offset to the end of the file and
 * moves *offset past each line replayed.  Bytes after the last newline are a
 * torn write and are left alone: they were never acknowledged.  A line that
 * breaks the format (not JSON, a duplicate key, a seq that does not rise, a
 * second header, an unknown mode) stops the replay with INVARIANT and the
 * line named.  Returns 0, a visitor's non-zero value, or a negative errno with
 * `error` set.
 */
DSH_INTERNAL int session_log_replay_from(int fd, off_t *offset, session_log_replay *replay, dsh_error *error);

#endif
