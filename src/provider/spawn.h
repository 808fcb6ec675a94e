/* SPDX-License-Identifier: MIT */
/*
 * The one spawn routine of the library.  Everything between clone() and
 * exec() is a system call (no allocation, no locks), so it is safe to call
 * from a multi-threaded harness.  The child shares the parent's memory until
 * it execs, and leaves the stage and errno of a failure before exec there:
 * the parent knows out of band whether the command was exec'd.
 */
#ifndef DSH_SANDBOX_SPAWN_H
#define DSH_SANDBOX_SPAWN_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "core/metadata-filter.h"
#include "core/network-gate.h"
#include "dsh-sandbox/provider.h"
#include "base/util.h"

typedef enum dsh_spawn_stage {
        DSH_SPAWN_STAGE_NONE = 0,
        DSH_SPAWN_STAGE_SETUP,     /* stdio, session, fds: the runner failed */
        DSH_SPAWN_STAGE_CONFINE,   /* filter or Landlock restriction failed: nothing may run */
        DSH_SPAWN_STAGE_METADATA,  /* the metadata filter or its listener failed: nothing may run */
        DSH_SPAWN_STAGE_PRIVATE_DEVICES,  /* the private /dev/shm and /dev/pts could not be mounted: nothing may run */
        DSH_SPAWN_STAGE_EXEC,      /* the program could not be executed */
} dsh_spawn_stage;

typedef struct dsh_exec_plan {
        char *const *argv;
        int landlock_ruleset_fd;   /* restrict the child with this ruleset, or -1 */
        bool terminal_filter;      /* install the TIOCSTI/TIOCLINUX filter */
        const int *keep_fds;       /* extra fds the child keeps (status channels, fds to bind from), any order */
        size_t keep_fd_count;
        bool drop_capabilities;    /* empty every capability set and lock the securebits */
        char *const *environment;  /* the program's environment (NAME=VALUE, NULL-terminated); NULL: the caller's */
        dsh_metadata_policy metadata;  /* the metadata filter (core/metadata-filter.h), or none */
        int metadata_socket;       /* where the listener goes (SCM_RIGHTS; both policies have one), else -1 */
        const struct dsh_private_devices *private_devices;  /* to move onto /dev (core/private-dev.h), or NULL */
        dsh_network_filter network;  /* the metadata filter's network part (core/network-gate.h); ON: none */
} dsh_exec_plan;

/* A plan that runs `command` with nothing applied and nothing kept. */
#define DSH_EXEC_PLAN_INIT(command) \
        { (command), -1, false, NULL, 0, false, NULL, DSH_METADATA_UNGOVERNED, -1, NULL, DSH_NETWORK_FILTER_ON }

typedef struct dsh_spawn_failure {
        dsh_spawn_stage stage;
        int errno_value;
} dsh_spawn_failure;

/*
 * Starts a child that execs `plan->argv` (PATH searched).  Returns the pid
 * once the child has exec'd, or a negative errno: -ECHILD with `failure`
 * filled when the child failed before exec (it has been reaped), another
 * errno when the child could not be created.
 */
DSH_INTERNAL pid_t dsh_spawn_exec_plan(const dsh_exec_plan *plan, const dsh_spawn_options *options,
                                       dsh_spawn_failure *failure);

/* The same, the child starting with `child_mask` blocked (NULL: the calling thread's mask, as above). */
DSH_INTERNAL pid_t dsh_spawn_exec_plan_masked(const dsh_exec_plan *plan, const dsh_spawn_options *options,
                                              const sigset_t *child_mask, dsh_spawn_failure *failure);

/*
 * Applies the plan to the calling process and execs: the body of the spawned
 * child, and the whole of an in-place exec.  Returns
 * only on failure, with `failure` saying at which stage.
 */
DSH_INTERNAL void dsh_exec_plan_apply(const dsh_exec_plan *plan, const dsh_spawn_options *options,
                                      dsh_spawn_failure *failure);

/*
 * pipe2(O_CLOEXEC) whose both ends are above 2.  A caller that started with
 * stdin, stdout or stderr closed would otherwise get one of them back, and a
 * status channel that lands on the command's own stdio is one the command
 * can write.  Returns 0 or a negative errno.
 */
DSH_INTERNAL int dsh_pipe_above_stdio(int fds[2]);

/* Turns a pre-exec failure into the library error for `mode`; returns the negative errno. */
DSH_INTERNAL int dsh_spawn_failure_to_error(const dsh_spawn_failure *failure, dsh_mode mode, const char *argv0,
                                            dsh_error *error);

#endif
