/* SPDX-License-Identifier: MIT */
/*
 * Hardening applied to a process right before it execs the confined command,
 * shared by the launcher and the library's spawn path.  libc only; every
 * function is a short run of raw system calls, safe between fork() and exec().
 */
#ifndef DSH_SANDBOX_PROCESS_HARDENING_H
#define DSH_SANDBOX_PROCESS_HARDENING_H

#include <stddef.h>

/*
 * Closes every fd above 2 except `keep_fd` and `other_keep_fd` (-1 for none).
 * Landlock checks every open made after the restriction, whatever the dirfd
 * it is relative to, but a file fd opened before it keeps the rights it was
 * opened with: an inherited writable fd would let the command write a file
 * the policy denies.  Returns 0 or a negative errno.
 */
int dsh_close_inherited_fds(int keep_fd, int other_keep_fd);

/* The same for any number of kept fds, in any order (negative entries keep nothing). */
int dsh_close_inherited_fds_except(const int *keep, size_t count);

/*
 * Installs a seccomp filter that fails ioctl(TIOCSTI) and ioctl(TIOCLINUX)
 * with EPERM.  TIOCSTI pushes bytes into a terminal's input queue: a confined
 * command holding the user's terminal could type a command into the shell
 * that runs after it exits, outside any sandbox.  A filter stops that even
 * when the process cannot leave the terminal's session (setsid() fails for a
 * process-group leader, and leaving the session would also stop Ctrl-C from
 * reaching an in-place exec).  Requires no_new_privs (or CAP_SYS_ADMIN).
 * Returns 0 or a negative errno.
 */
int dsh_install_terminal_injection_filter(void);

/*
 * In a child that shares its parent's memory until it execs (clone with
 * CLONE_VM|CLONE_VFORK): every signal its parent catches goes back to the
 * default action, and what is ignored stays ignored, before the child
 * unblocks signals.  The parent's handlers must never run in the child,
 * on the parent's memory; exec would reset them too, but only later.  An
 * ignored signal is the caller's choice (nohup) and is kept for the command.
 */
void dsh_reset_caught_signals(void);

/*
 * Sets no_new_privs: from here no execve() can grant privileges (setuid and
 * setgid bits and file capabilities are ignored), and the seccomp filter and
 * the Landlock restriction become legal without CAP_SYS_ADMIN.  The first
 * step of every confined pre-exec sequence.  Returns 0 or a negative errno.
 */
int dsh_set_no_new_privs(void);

/*
 * Leaves the calling process with no capability, for good: the ambient set
 * cleared, then (when the process holds CAP_SETPCAP) every capability the
 * kernel knows dropped from the bounding set and the securebits set and
 * locked so that uid 0 gains nothing at exec or setuid, and finally the
 * effective, permitted and inheritable sets emptied with capset().  A process
 * without CAP_SETPCAP (an ordinary user) cannot touch the bounding set or the
 * securebits and needs not: it has nothing to lose there, and no_new_privs
 * already keeps exec from granting any.  Every step that applies must succeed;
 * the result is read back.  Only raw system calls: safe between fork() and
 * exec().  Returns 0 or a negative errno (the process is then partly stripped
 * and must not run the command).
 */
int dsh_drop_capabilities(void);

/*
 * No core dump, ever, hard limit included: the kernel writes one into the
 * crashing process's cwd with no system call a filter sees, so a command
 * could place a file inside a held-back directory (`.git/hooks/core`)
 * under Landlock, which the supervisor would never see.  A raw system
 * call: safe between fork() and exec().  Returns 0 or a negative errno.
 */
int dsh_forbid_core_dumps(void);

#endif
