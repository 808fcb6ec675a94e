/* SPDX-License-Identifier: MIT */
/*
 * The library's stand-in: a process of the sandbox's own between the caller
 * and a confined command, so that nothing the command starts outlives its
 * call — without touching the caller's own process.
 *
 * Why a process, not an attribute of the caller.  The child subreaper
 * attribute (core/leftovers.h) is a property of a whole process: set on an
 * embedder (or on `serve`, which runs calls on many threads at once) it would
 * bring every orphan of every descendant of that process to it, and the end
 * of one call could not tell its own leftovers from those of a call still
 * running.  A cgroup of the call's own (cgroup.kill, Linux 5.14) needs a
 * writable cgroup v2 hierarchy: root has one on this project's CI host (a
 * v1/v2 hybrid, v2 at /sys/fs/cgroup/unified), an unprivileged user
 * generally has none outside a systemd-delegated scope, so a spawn that
 * sometimes has a cgroup would need this anyway.  So every spawned
 * Landlock call gets a stand-in: forked from the caller (no exec: it only
 * makes system calls), made the child subreaper, it spawns the command with
 * the library's one spawn path (spawn.h), tells the caller the command's pid
 * or its failure before exec over a pipe, closes every descriptor it holds,
 * waits for the command, kills and reaps whatever is left (core/leftovers.h)
 * and ends the way the command ended (core/stand-in.h).  The caller sees it
 * as the child (dsh_child_pid()); its wait status is the command's.
 *
 * Signals.  The command takes its group, session, terminal and stdio as it
 * would without a stand-in (the spawn options go to it unchanged), and the
 * stand-in stays in the caller's group and session, so the command's group
 * is the command's alone: what the caller sends it reaches the command
 * directly (dsh_child_process_group() names it).  The stand-in blocks every
 * signal and takes them one by one (sigwaitinfo): what a process sent it
 * (kill, sigqueue) it passes on to the command by pid, never what the
 * terminal sent its whole group (the command, in the same group unless it
 * asked for its own, got that too).  SIGKILL cannot be passed on, and a SIGKILL to the
 * stand-in would orphan the leftovers: so dsh_signal_command() never sends
 * one to a stand-in this process spawned; it sends DSH_STAND_IN_END_SIGNAL,
 * on which the stand-in kills the command (its unreaped child: the pid is
 * its own) and then everything left.  The same signal is the stand-in's
 * death signal when the caller asked die_with_parent, so the caller's end
 * ends the whole call too.  The command dies with the stand-in
 * (PR_SET_PDEATHSIG).
 *
 * What is left open: a SIGKILL to the stand-in from elsewhere (the user, the
 * OOM killer; the command itself below Landlock ABI 6, whose signal scope
 * keeps it from signalling outside its domain) ends the command but orphans
 * its leftovers, as a command exec'd in place would have had them.
 */
#ifndef DSH_SANDBOX_STAND_IN_SPAWN_H
#define DSH_SANDBOX_STAND_IN_SPAWN_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/util.h"
#include "provider/spawn.h"

/* The stand-in's request "end the call now": SIGKILL for the command, then for what it left. */
#define DSH_STAND_IN_END_SIGNAL (SIGRTMAX)

/*
 * As dsh_spawn_exec_plan(), through a stand-in: returns the stand-in's pid
 * once the command has exec'd (the command, whose pid goes to
 * `*command_out`, is the stand-in's child), or -ECHILD with `failure`
 * filled (the stand-in reaped), or another negative errno when the stand-in
 * could not be created.  The stand-in is known to dsh_signal_command() until
 * dsh_stand_in_forget().  At most 256 stand-ins live at once in a process:
 * past that the spawn fails (EAGAIN) rather than leave one unknown.
 */
DSH_INTERNAL pid_t dsh_spawn_standing_in(const dsh_exec_plan *plan, const dsh_spawn_options *options,
                                         pid_t *command_out, dsh_spawn_failure *failure);

/* Whether `pid` is a stand-in this process spawned and has not reaped.  Async-signal-safe. */
DSH_INTERNAL bool dsh_stand_in_is_known(pid_t pid);

/* `pid` is reaped (or about to be): no longer a stand-in to signal. */
DSH_INTERNAL void dsh_stand_in_forget(pid_t pid);

/*
 * dsh_signal_command() for a stand-in: SIGKILL becomes the end request, any
 * other signal goes to `group` (the command's own) or, without one, to the
 * stand-in, which passes it on.  Async-signal-safe.
 */
DSH_INTERNAL void dsh_stand_in_signal(pid_t stand_in, pid_t group, int signal_number);

#endif
