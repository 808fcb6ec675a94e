/* SPDX-License-Identifier: MIT */
/*
 * A session's denial store: the refusals its calls met, kept across restarts
 * (dsh-sandbox/denial.h, "sessions"; docs/sessions.md, "Denials").
 *
 * Where: `<store>/<id>.denials`, beside the session's log `<id>.jsonl`, not
 * events in the log.  The log is append-only and never compacted (every
 * line is history a later fold may need, and "nothing before the last
 * newline is ever modified" is what makes its crash rules hold), while this
 * store is bounded: DSH_SESSION_DENIALS_MAX records, the oldest going first,
 * so it must drop lines, which only a file of its own can do without
 * rewriting history.  A busy loop of denied writes must not grow the log a
 * policy is resolved from on every call, either.  The name does not end in
 * ".jsonl", so `session list` never takes it for a session (an id cannot
 * start with '.', so neither can the temporary file it is written through).
 *
 * Format, one compact JSON object per line:
 *   {"type":"denials","version":0,"id":"<id>","dropped":N}
 *   {"op":"write",...,"grant":{...},"at":MS,"surface":"bash"}   (oldest first)
 * `dropped` counts every denial the session lost over its life: the oldest
 * ones pushed out, and those a call itself counted past its own bound.
 *
 * Writing: under the session log's lock (session-lock.h: every writer of
 * the session, this store's and the log's, waits for the same flock, within
 * the same bound), the store is read and checked whole, the new records are
 * added (the kept ones as their lines were read: each was just checked), the
 * oldest cut, and the result written to a private temporary file,
 * synced, and renamed over the store, then the directory is synced.  A
 * reader takes no lock: rename is atomic, so it sees the store before or
 * after an append, never half of one, and two appends from two processes
 * cannot lose each other's records (the second reads what the first wrote).
 *
 * What is refused rather than repaired: a store that is a symlink (not
 * followed to someone else's file), a FIFO or anything but a regular file
 * (opened without blocking, as the log is), one longer than the bound allows,
 * and a line that is not a record of this format — reported with the file
 * and the line, and never dropped: an append to a corrupt store fails and
 * leaves it as it is, for the user to look at.
 */
#ifndef DSH_SANDBOX_SESSION_DENIALS_H
#define DSH_SANDBOX_SESSION_DENIALS_H

#include <stdint.h>

#include "dsh-sandbox/denial.h"
#include "base/util.h"
#include "policy/session.h"

/* Longest store read: every record at its largest (escaped PATH_MAX paths), with room. */
#define SESSION_DENIALS_FILE_LIMIT (64u << 20)

/* `surface` names the tool a record came from: 1 to 32 of [a-z0-9._-] ("bash", "fs"). */
DSH_INTERNAL bool session_denials_surface_is_valid(const char *surface);

/*
 * Appends `denials` (copied; their `dropped` added to the session's) to the
 * store of `session`, each with `at_ms` and `surface`, keeping the newest
 * DSH_SESSION_DENIALS_MAX.  Nothing to append (no record, none dropped)
 * writes nothing.  Returns 0, or a negative errno with `error` set (the
 * store is then as it was): the lock's timeout, a refused or corrupt store
 * (DSH_ERROR_INVARIANT, "session denial store PATH: line N: ..."), a write
 * that failed.
 */
DSH_INTERNAL int session_denials_append(dsh_session *session, const char *surface, int64_t at_ms,
                                        const dsh_denials *denials, dsh_error *error);

/*
 * The store of `session`, oldest first, into `out` (DSH_SESSION_DENIALS_INIT;
 * clear with dsh_session_denials_clear()).  A session that never recorded
 * one has none.  Returns 0 or a negative errno with `error` set, as above.
 */
DSH_INTERNAL int session_denials_load(const dsh_session *session, dsh_session_denials *out, dsh_error *error);

#endif
