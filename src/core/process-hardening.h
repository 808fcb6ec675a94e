/* SPDX-License-Identifier: MIT */
/*
 * Hardening applied to a process right before it execs the confined command,
 * shared by the launcher and the library's spawn path.  libc only; every
 * function is a short run of raw system calls, safe between fork() and exec().
 */
#ifndef DSH_SANDBOX_PROCESS_HARDENING_H
#define DSH_SANDBOX_PROCESS_HARDENING_H

/*
 * Closes every fd above 2 except `keep_fd` and `other_keep_fd` (-1 for none).  An inherited
 * directory fd is a known Landlock escape (openat() relative to an fd opened
 * before the restriction is not checked against the new domain's rules for
 * path resolution of that fd itself), and an inherited writable fd lets the
 * command write a file the policy denies.  Returns 0 or a negative errno.
 */
int dsh_close_inherited_fds(int keep_fd, int other_keep_fd);

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

#endif
