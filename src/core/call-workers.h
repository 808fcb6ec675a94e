/* SPDX-License-Identifier: MIT */
/*
 * The supervisor's worker threads, for the calls it performs that may block
 * (a connect, a send on a blocking socket: socket-call.h, inet-call.h).  The
 * supervisor's own thread never waits on the command: whether a socket
 * blocks is the command's to change at any moment (O_NONBLOCK is the shared
 * open file's), so such a call is handed to a worker, which performs it and
 * answers its notification.  A worker is made by the capability-less
 * supervisor thread, so it has none either (checked again there), runs with
 * every signal blocked, and is cancelled when the listener hangs up
 * (dsh_call_workers_stop()), so a call that never returns ends with its
 * command.  At most DSH_CALL_WORKER_LIMIT at once: one more is answered
 * EAGAIN, so a command cannot make the supervisor start threads without
 * bound.
 * libc (and pthread) only.
 */
#ifndef DSH_SANDBOX_CALL_WORKERS_H
#define DSH_SANDBOX_CALL_WORKERS_H

#include <stdint.h>

#define DSH_CALL_WORKER_LIMIT 32

typedef struct dsh_call_workers dsh_call_workers;

/* A call a worker performs. */
typedef struct dsh_call_work {
        long (*perform)(void *data);    /* in the worker: the call's value, or a negative errno */
        void (*release)(void *data);    /* frees `data` and closes its fds, also when cancelled */
        void *data;
} dsh_call_work;

/* A new, idle set; NULL when out of memory. */
dsh_call_workers *dsh_call_workers_new(void);

/* Frees it; every worker must be stopped first (dsh_call_workers_stop()). */
void dsh_call_workers_free(dsh_call_workers *workers);

/*
 * Hands `work` to a worker, which performs it and answers the call `id` on
 * `listener` with its result.  Returns 0, or a negative errno (EAGAIN: every
 * worker is busy) after releasing the work; the call is then not answered.
 */
int dsh_call_workers_run(dsh_call_workers *workers, int listener, uint64_t id, const dsh_call_work *work);

/*
 * Cancels every worker still performing and waits for each: before the
 * listener is closed (a worker answers on it).  Their calls then get ENOSYS
 * from the kernel once the listener closes.
 */
void dsh_call_workers_stop(dsh_call_workers *workers);

/* Answers the call `id` on `listener`: a negative errno, or the call's value (a send's byte count). */
void dsh_call_answer(int listener, uint64_t id, long result);

#endif
