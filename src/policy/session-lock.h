/* SPDX-License-Identifier: MIT */
/*
 * The session log's lock, taken within a bound.
 *
 * Every writer holds flock(LOCK_EX) on the log from before it reads the end
 * of the file until after its fdatasync (docs/sessions.md).  flock needs no
 * write access: any process that can open the log read-only can hold it, a
 * confined command included (the store is readable under read-only on both
 * backends), and an unbounded wait would make `session mode ID read-only`
 * hang exactly when the user needs it.  So the wait has a deadline: the
 * lock is taken at once when it is free; otherwise a waiter process forked
 * for the purpose blocks in flock() on the same open file description (a
 * flock belongs to the description, so what the waiter takes is this
 * process's lock), while this process waits for the waiter's end with
 * poll() on a pipe until the deadline.  Past it the waiter is killed (the
 * pid is this process's unreaped child) and one last non-blocking attempt
 * decides: a waiter that got the lock just before it died leaves it held.
 * No signal handler, no timer, no retry loop with sleeps.
 *
 * On failure nothing was written: the lock is taken before the log's end is
 * read, so a refused writer leaves the log as it was.
 */
#ifndef DSH_SANDBOX_SESSION_LOCK_H
#define DSH_SANDBOX_SESSION_LOCK_H

#include "base/error.h"
#include "base/util.h"

/* The bound, unless DSH_SANDBOX_SESSION_LOCK_TIMEOUT_MS (a positive number of milliseconds) says otherwise. */
#define DSH_SESSION_LOCK_DEFAULT_TIMEOUT_MS 10000

/*
 * flock(LOCK_EX) on `fd` (the log named `path`) within the bound.  Returns
 * 0 with the lock held, or a negative errno with `error` set: -ETIMEDOUT
 * with "session log PATH is locked by process PID (COMMAND): not released
 * within N ms; nothing was written" (the holder from /proc/locks, "an
 * unknown process" where the kernel does not say).
 */
DSH_INTERNAL int dsh_session_lock_take(int fd, const char *path, dsh_error *error);

#endif
