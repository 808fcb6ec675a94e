/* SPDX-License-Identifier: MIT */
/*
 * Nothing outlives its call: the process that stays beside a confined
 * command (the library's stand-in, landlock-run) is its child subreaper, so
 * that whatever the command leaves behind (`setsid`, a double fork, `nohup
 * ... &`) is reparented to it rather than to init, and it kills all of that
 * once the command has ended.  libc only: the launchers link it.
 *
 * Why a pid is safe to kill here: only a child of this process that it has
 * not reaped is ever signalled, by pid.  Its pid stays reserved until this
 * process reaps it (a zombie's pid is not reused), and only this process
 * reaps its children (the caller's promise: nothing else in it waits for
 * any child, waitpid(-1), once the command is reaped).  So no pid can name
 * another process by the time the signal is sent.
 *
 * Why nothing is missed: a process leaves a subreaper's subtree only by
 * being reparented, and reparenting goes to the nearest living ancestor
 * that is a subreaper — this one at the latest (clone(CLONE_PARENT) moves a
 * child one level up, to a process still in the subtree, or to this one).
 * Everything the command started is therefore a descendant of this process
 * while it lives.  Killing goes by rounds: every current child gets SIGKILL,
 * one is reaped (blocking), and by then the children of the one that died
 * are this process's children (reparenting happens in the exit, before the
 * parent is told of it).  A process with SIGKILL pending cannot fork (the
 * kernel refuses a fork with a fatal signal pending), so the set only
 * shrinks; a stopped process (SIGSTOP) still dies of SIGKILL.
 *
 * A fork bomb: each round kills the layer of processes that are this
 * process's children, while deeper ones may still fork; the end comes once
 * it stops growing (no pids limit is set here, nor by bwrap).
 *
 * What it cannot stop: a SIGKILL to this process itself.  Its orphans then
 * go to the next subreaper up, or init, and live on.  Under Landlock ABI 6
 * and later the command cannot send that signal (the domain's signal scope);
 * below, a command running as the same user can (src/core/landlock.c reports
 * it as a partial-enforcement reason).
 */
#ifndef DSH_SANDBOX_CORE_LEFTOVERS_H
#define DSH_SANDBOX_CORE_LEFTOVERS_H

/* Makes this process the child subreaper of what it spawns.  Returns 0 or a negative errno. */
int dsh_leftovers_adopt(void);

/*
 * Kills and reaps every child this process still has (after the command was
 * reaped: all of them are what the command left behind), round by round,
 * until none is left.  Returns the number killed, -EAGAIN when a child lived
 * on that the kernel's lists never showed, or -ENOENT when the children
 * could not be listed (no /proc: nothing was waited for, so this
 * never blocks on a process it cannot kill).  Async-signal-safe (open, read,
 * close, kill, wait4): the library's stand-in calls it in a forked child.
 */
int dsh_leftovers_end(void);

#endif
