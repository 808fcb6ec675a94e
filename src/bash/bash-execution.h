/* SPDX-License-Identifier: MIT */
/*
 * One run of `bash -c COMMAND` for the bash tool, to its end: the spawn
 * through the runtime's provider, both streams read into bounded captures
 * (bash-capture.h), the timeout, the caller's cancellation, and the end of
 * the command's process group.  What happened is bash-tool.c's to say; this
 * module only runs the command and keeps what it saw.
 */
#ifndef DSH_SANDBOX_BASH_EXECUTION_H
#define DSH_SANDBOX_BASH_EXECUTION_H

#include <stdbool.h>
#include <sys/types.h>

#include "bash/bash-capture.h"
#include "dsh-sandbox/bash-tool.h"
#include "base/util.h"

enum { DSH_BASH_STREAM_OUT, DSH_BASH_STREAM_ERR, DSH_BASH_STREAM_COUNT };

typedef struct dsh_bash_execution {
        const dsh_bash_request *request;        /* borrowed */
        dsh_child *child;
        pid_t pid;                      /* the process the provider spawned: the command, or its runner */
        pid_t group;                    /* where signals for the command go */
        int pidfd;                      /* readable once `pid` exited; -1: looked at now and then */
        int streams[DSH_BASH_STREAM_COUNT];     /* the read ends; -1 once at EOF or given up */
        dsh_capture captures[DSH_BASH_STREAM_COUNT];
        long long deadline_ms;          /* the timeout; 0: none */
        long long grace_deadline_ms;    /* SIGKILL after a cancellation's signal; 0: none */
        long long drain_deadline_ms;    /* the end of reading once `pid` has exited */
        bool exited;                    /* `pid` has exited and was reaped */
        bool killed;                    /* SIGKILL went to the group */
        bool timed_out;
        bool cancelled;
        int cancel_signal;
        bool drain_cut;                 /* a process outside the group still held the output at the drain's end */
        int wait_status;
} dsh_bash_execution;

/*
 * Runs `request->command` under `policy` (in a new session, stdin
 * /dev/null, starting in the directory `cwd_fd` names; -1: the caller's
 * cwd) until the spawned process has exited and both streams are at
 * their end (or the drain's bound), and fills `run`, which the caller clears
 * with dsh_bash_execution_clear() in every case.  Returns 0 once it ran:
 * `run->child` was waited for and its status channels read.  Returns a
 * negative errno with `error` set when the spawn failed (`run->child` is
 * NULL: nothing ran; the provider's error), or when the run failed on the
 * way (pipes, memory; the command's group was killed and reaped).
 */
DSH_INTERNAL int dsh_bash_execute(dsh_runtime *runtime, const dsh_bash_request *request, const dsh_policy *policy,
                                  int cwd_fd, dsh_bash_execution *run, dsh_error *error);

DSH_INTERNAL void dsh_bash_execution_clear(dsh_bash_execution *run);

/*
 * The cancellation's side the run reads (bash-cancellation.c).  _take
 * reads the requests that came since the last look and returns the signal
 * to send (SIGKILL when any request asked for it), or 0 when none came;
 * _requested says whether any ever came; _fd is what to poll (-1 for none).
 * NULL is a cancellation that never comes.
 */
DSH_INTERNAL int dsh_bash_cancellation_take(dsh_bash_cancellation *cancellation);
DSH_INTERNAL bool dsh_bash_cancellation_requested(dsh_bash_cancellation *cancellation);
DSH_INTERNAL int dsh_bash_cancellation_fd(const dsh_bash_cancellation *cancellation);

#endif
