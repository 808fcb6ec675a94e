/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: the local provider.
 *
 * A provider answers one question: "wrap this argv under this policy".  It
 * selects a backend (Landlock, bwrap, or an operator's runner command) and
 * either returns the argv to spawn in place of the caller's own
 * (dsh_provider_confine) or spawns the command confined itself
 * (dsh_provider_spawn: for Landlock the restriction is applied in the forked
 * child right before exec, with no launcher process in between).  When no
 * backend can confine, both fail with SANDBOX_UNAVAILABLE: nothing ever runs
 * unconfined under a confined mode.
 *
 * A provider holds configuration and the cached backend verdict; policy is
 * carried per call, so one provider serves concurrent calls under different
 * policies.  It is not thread-safe: use one per thread or lock around it.
 */
#ifndef DSH_SANDBOX_PROVIDER_H
#define DSH_SANDBOX_PROVIDER_H

#include <stdbool.h>
#include <sys/types.h>

#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dsh_provider dsh_provider;

/* A new provider with the Linux defaults (backends: bwrap, then Landlock).
 * Returns NULL only when out of memory.  Free with dsh_provider_free(). */
DSH_PUBLIC dsh_provider *dsh_provider_new(void);
DSH_PUBLIC void dsh_provider_free(dsh_provider *provider);

/*
 * The backends to consider, in order, by name ("bwrap", "landlock").  A sole
 * backend is selected without a probe.  Resets the cached verdict.
 * Returns 0 or -EINVAL (unknown or duplicate name, empty list) with `error` set.
 */
DSH_PUBLIC int dsh_provider_set_backends(dsh_provider *provider, const char *const *names, dsh_error *error);

/* Absolute path of the `landlock-run` launcher that confined argvs name.
 * Defaults to the installed libexec copy.  Returns 0, -EINVAL or -ENOMEM. */
DSH_PUBLIC int dsh_provider_set_landlock_run_path(dsh_provider *provider, const char *path, dsh_error *error);

/*
 * Wraps `argv` (non-empty) so it runs confined under `policy`.  The policy
 * must be confined (read-only or workspace-write); it is checked and
 * canonicalized per call (dsh_policy_prepare) before any argv is built.
 * `out` must be cleared; on success it owns the result.  Returns 0, or a
 * negative errno with `error` set (SANDBOX_UNAVAILABLE when no backend is
 * usable, SANDBOX_INVALID_ROOT / SANDBOX_PREPARATION_FAILED for bad policy).
 */
DSH_PUBLIC int dsh_provider_confine(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                                    dsh_confined_argv *out, dsh_error *error);

/* ------------------------------------------------------------ spawning -- */

typedef struct dsh_spawn_options {
        int stdin_fd;       /* -1: inherit */
        int stdout_fd;      /* -1: inherit */
        int stderr_fd;      /* -1: inherit */
        bool new_session;   /* setsid() in the child: no controlling terminal */
} dsh_spawn_options;

#define DSH_SPAWN_OPTIONS_INIT { -1, -1, -1, false }

/*
 * A spawned command.  `facts` describes how it was confined: the backend,
 * the enforcement, and the dialect its stderr is read in (its argv is the
 * argv actually executed).  For danger-full-access, `facts.backend` is
 * "none" and no dialect is set.
 */
typedef struct dsh_child {
        pid_t pid;
        dsh_confined_argv facts;
        int runner_status_fd;   /* out-of-band runner status (bwrap --json-status-fd), or -1 */
} dsh_child;

#define DSH_CHILD_INIT { -1, DSH_CONFINED_ARGV_INIT, -1 }

/*
 * Spawns `argv` confined under `policy` (or unconfined, on purpose, under
 * danger-full-access).  Returns once the command has been exec'd: a failure
 * before that is reported here and the command never ran —
 * SANDBOX_UNAVAILABLE (with " Runner failure: <detail>") when confinement
 * could not be applied, DSH_ERROR_EXEC_FAILED with errno_value ENOENT or
 * EACCES when the program could not be executed.  Every fd above 2 is closed
 * in the child.  `child_out` must be DSH_CHILD_INIT; on success the caller
 * waits for it with dsh_child_wait() and then calls dsh_child_clear().
 */
DSH_PUBLIC int dsh_provider_spawn(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                                  const dsh_spawn_options *options, dsh_child *child_out, dsh_error *error);

/* Waits for the child (retrying EINTR); `*wait_status` is waitpid()'s status.
 * Returns 0 or a negative errno. */
DSH_PUBLIC int dsh_child_wait(dsh_child *child, int *wait_status);

DSH_PUBLIC void dsh_child_clear(dsh_child *child);

#ifdef __cplusplus
}
#endif

#endif
