/* SPDX-License-Identifier: MIT */
/*
 * The process module: a spawned child (dsh_child, opaque to callers), how
 * it is waited for and what its runner said out of band, and bounded runs
 * (collection within a deadline, kill and reap of a whole group).  Backends
 * fill a child at spawn time; the provider hands it out; nothing here knows
 * a backend by name — a runner's status channels are settled through the
 * backend's own `settle` operation.
 */
#ifndef DSH_SANDBOX_PROCESS_H
#define DSH_SANDBOX_PROCESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "dsh-sandbox/provider.h"
#include "base/util.h"

struct dsh_backend_ops;

struct dsh_child {
        pid_t pid;
        pid_t process_group;            /* where signals for the command go; 0: the caller's group */
        dsh_confined_argv facts;
        dsh_mode mode;                  /* the mode the command runs under */
        const struct dsh_backend_ops *backend;  /* settles the runner's status channels; NULL: none */
        int runner_status_fd;           /* the runner's out-of-band status (bwrap --json-status-fd), or -1 */
        int exec_status_fd;             /* the runner's last step inside (dsh-sandbox-exec), or -1 */
        bool command_started;           /* an out-of-band channel proved the command was exec'd (see provider.h) */
        bool runner_failed;             /* the runner exited without running the command */
        char *runner_failure_detail;    /* what is known about that failure */
        int exec_errno;                 /* the program could not be executed (errno), else 0 */
        char *stale_verdict_path;       /* the persisted verdict to drop when the runner fails */
        char **audit_absent;            /* paths the command must not have created (see dsh_shield_audit()) */
        int moved_aside;                /* how many of them it had created: moved aside at settle */
        char **moved_aside_paths;       /* their original paths (NULL when none, or none could be kept) */
        char **warnings;                /* what the sandbox undid or noticed after the command, sentences */
        struct dsh_metadata_supervisor *metadata_supervisor;  /* both backends' supervisor: stopped at settle */
        dsh_write_refusal *refusals;    /* what the supervisor refused or saw refused, kept at settle; owned */
        size_t refusal_count;
        unsigned long refusals_dropped; /* refusals past the bound, or that could not be kept */
        unsigned long write_calls;      /* write-intent notifications the supervisor received */
        /*
         * The call's network (call-network.h) under a policy other than
         * "on", set up by the provider before the backend spawns; finished
         * at settle, after the supervisor stopped.  NULL: none.
         */
        struct dsh_call_network *network;
        dsh_refused_connection *refused_connections;    /* kept at settle; owned */
        size_t refused_connection_count;
        unsigned long refused_connections_dropped;
};

/*
 * After dsh_child_wait(): how many write-intent calls the command's filter
 * sent its supervisor (the filter decides in BPF, so a plain read sends
 * none).  A diagnostic, for the tests and the benchmarks: a read-heavy
 * command shows 0.  0 when no supervisor ran.
 */
DSH_INTERNAL unsigned long dsh_child_write_calls(const dsh_child *child);

/*
 * After dsh_child_wait(): the child's refusal records (dsh_child_refusals())
 * handed to the caller, who frees them with dsh_write_refusals_free(); the
 * child keeps none (its dropped count stays).  Returns the count; `*refusals`
 * is NULL when there is none.
 */
DSH_INTERNAL size_t dsh_child_take_refusals(dsh_child *child, dsh_write_refusal **refusals, unsigned long *dropped);

/* Frees `count` records, their strings and the array (NULL: nothing). */
DSH_INTERNAL void dsh_write_refusals_free(dsh_write_refusal *refusals, size_t count);

/*
 * After dsh_child_wait(): the network refusals (dsh_child_network_refusals())
 * handed to the caller, who frees them with dsh_refused_connections_free()
 * (call-network.h);
 * the child keeps none (its dropped count stays).
 */
DSH_INTERNAL size_t dsh_child_take_network_refusals(dsh_child *child, dsh_refused_connection **refusals,
                                                    unsigned long *dropped);

/* A new, empty child (pid -1, fds -1); NULL when out of memory. */
DSH_INTERNAL dsh_child *dsh_child_new(void);

/*
 * After waitpid(): the metadata supervisor stopped (the command is gone:
 * whatever it left behind now gets ENOSYS for a metadata call), and what
 * the runner's status channels still hold (through the backend's settle).
 */
DSH_INTERNAL void dsh_child_settle(dsh_child *child, int wait_status);

/* danger-full-access: `argv` as it is, unconfined on purpose, into `child`. */
DSH_INTERNAL int dsh_spawn_unconfined(char *const *argv, const dsh_spawn_options *options, dsh_child *child,
                                      dsh_error *error);

/* CLOCK_MONOTONIC in milliseconds: the clock of every deadline here. */
DSH_INTERNAL long long dsh_monotonic_ms(void);

/* poll()'s timeout for `deadline_ms`: -1 (none) for 0, else what is left, 0 once it has passed. */
DSH_INTERNAL int dsh_poll_timeout_ms(long long deadline_ms);

/*
 * A pidfd for `pid` (pidfd_open(2), close-on-exec): poll() finds it readable
 * once the process has exited.  Returns the fd, or -1 with errno set (ENOSYS
 * before Linux 5.3: the caller then looks with dsh_process_has_exited()).
 */
/*
 * How many paths the sandbox keeps absent the command had created, each
 * moved aside once it was gone and named in dsh_child_warnings()
 * (dsh_child_moved_aside_paths() names them).
 */
DSH_INTERNAL int dsh_child_moved_aside(const dsh_child *child);

DSH_INTERNAL int dsh_pidfd_open(pid_t pid);

/* True once `pid`, a child of this process, has exited; it is left unreaped (its pid stays reserved). */
DSH_INTERNAL bool dsh_process_has_exited(pid_t pid);

/*
 * SIGKILL to `pid`, a child of this process, and to the command's `group`
 * (as dsh_child_process_group(): 0 none, `pid` its own, else a sandbox's,
 * whose init is ended too: dsh_signal_command()), then reaps it.
 */
DSH_INTERNAL void dsh_kill_and_reap(pid_t pid, pid_t group, int *wait_status);

/*
 * Reads `fd` (closing it) until EOF and reaps `pid`, both before
 * `deadline_ms` (dsh_monotonic_ms() time); a child still running at the
 * deadline is killed with SIGKILL along with `group` (dsh_kill_and_reap())
 * and reaped.  `*text` receives what was read (at most 64 KiB kept; caller
 * frees), `*wait_status` waitpid()'s status.  Returns 0, -ETIMEDOUT, or
 * another negative errno.
 */
DSH_INTERNAL int dsh_collect_bounded(pid_t pid, pid_t group, int fd, long long deadline_ms, char **text,
                                     int *wait_status);

#endif
