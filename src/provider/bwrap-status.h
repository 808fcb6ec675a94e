/* SPDX-License-Identifier: MIT */
/* The bwrap backend's status channels (bwrap-status.c). */
#ifndef DSH_SANDBOX_BWRAP_STATUS_H
#define DSH_SANDBOX_BWRAP_STATUS_H

#include <stdbool.h>
#include <sys/types.h>

#include "provider/process.h"
#include "base/util.h"

/*
 * Reads the first record bwrap writes on --json-status-fd: { "child-pid": N,
 * ... } once the sandbox's first process exists.  With a deadline
 * (dsh_monotonic_ms() time; 0: none) it waits no longer than that.  Returns
 * 1 when it came, with *child_pid = N (0 when not a plausible pid), 0 on EOF
 * without it (bwrap failed before creating the sandbox), -ETIMEDOUT when the
 * deadline passed first; sets *exec_seen when an "exit-code" record (written
 * only after an exec) was read along with it.
 */
DSH_INTERNAL int dsh_bwrap_read_first_record(int fd, long long deadline_ms, pid_t *child_pid, bool *exec_seen);

/* The process group of the sandbox's init `reported` when it is a child of `runner`, else 0 (bwrap-status.c). */
DSH_INTERNAL pid_t dsh_bwrap_sandbox_process_group(pid_t runner, pid_t reported);

/* After waitpid() of bwrap: what its status channels say (dsh_backend_ops.settle). */
DSH_INTERNAL void dsh_bwrap_settle(dsh_child *child, int wait_status);

/* Two status pipes above stdio: bwrap's --json-status-fd and dsh-sandbox-exec's --status-fd.  0 or SYSTEM. */
DSH_INTERNAL int dsh_bwrap_open_status_pipes(int json_pipe[2], int exec_pipe[2], dsh_error *error);

/*
 * bwrap is gone before the sandbox existed: the command never ran.  Reaps
 * `pid`; SANDBOX_UNAVAILABLE for `mode`, and -ECHILD tells the provider to
 * learn bwrap's own reason from a probe (its stderr was the caller's).
 */
DSH_INTERNAL int dsh_bwrap_report_early_failure(pid_t pid, dsh_mode mode, dsh_error *error);

#endif
