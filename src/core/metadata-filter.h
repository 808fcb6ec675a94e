/* SPDX-License-Identifier: MIT */
/*
 * The metadata filter: a seccomp filter over every system call that changes
 * a file's metadata (mode, owner, times, extended attributes — POSIX ACLs
 * included —, inode flags), which Landlock does not govern at all.
 *
 *  - DSH_METADATA_DENY (read-only): every such call is sent to the
 *    supervisor, which performs none: each fails with EPERM, and the
 *    supervisor writes down the file it named (a record, refusals.h).  No
 *    file may change anywhere, so the answer depends on nothing the command
 *    passed; only the record does.
 *  - DSH_METADATA_SUPERVISE (workspace-write): every such call is sent to the
 *    metadata supervisor (metadata-supervisor.h) through a seccomp
 *    user-notification listener; the supervisor performs it on the command's
 *    behalf when its target lies in a writable root, and answers.
 *
 * Under both, io_uring is refused (EPERM): a ring changes extended attributes
 * without a system call the filter could see; so is creating a file with a
 * set-user-ID or set-group-ID bit (EPERM: open/openat with O_CREAT or
 * O_TMPFILE, creat, mknod, mknodat, decided on the mode register), and
 * openat2, whose flags and mode are behind a pointer, fails with ENOSYS
 * (metadata-filter.c; the one deviation from issue 20, which asked for it to
 * be supervised).  Under both, every connect() goes to the supervisor,
 * which performs it (socket-call.h), and an AF_UNIX datagram socket cannot
 * be made (EACCES); and so does every write-intent call (write-call.h): an
 * open or openat whose flags hold O_WRONLY, O_RDWR, O_CREAT, O_TRUNC or
 * O_TMPFILE (decided on the flags register, so that a plain read never
 * notifies), creat, mknod, mknodat (after the set-id test), mkdir, unlink,
 * rmdir, the rename family, link, symlink and truncate: the supervisor
 * decides them (write-supervisor.h).  So both modes have a listener.
 * DSH_METADATA_UNSUPERVISED sends nothing anywhere: write intent is then
 * the kernel's (the mounts') to decide.  Installed by the Landlock child
 * and, under bwrap, by dsh-sandbox-exec.
 * libc only, no allocation: installed between clone() and exec().
 */
#ifndef DSH_SANDBOX_METADATA_FILTER_H
#define DSH_SANDBOX_METADATA_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>
#include <sys/syscall.h>

#include "core/kernel-abi.h"
#include "core/network-gate.h"

typedef enum dsh_metadata_policy {
        DSH_METADATA_UNGOVERNED = 0,   /* no filter: the backend governs metadata itself, or nothing is confined */
        DSH_METADATA_DENY,             /* every metadata call to the supervisor, which refuses it (EPERM) */
        DSH_METADATA_SUPERVISE,        /* every metadata call to the supervisor */
        /*
         * No supervisor at all (an argv a harness spawns itself, which nobody
         * outside the sandbox watches): EPERM for every metadata call and
         * EACCES for every connect, decided by the kernel; write intent
         * allowed (bwrap's mounts decide it); no listener.
         */
        DSH_METADATA_UNSUPERVISED,
        /*
         * DENY where the supervisor cannot read the command (Yama's
         * ptrace_scope 2, a seccomp profile refusing process_vm_readv):
         * write intent goes on to the kernel, where Landlock refuses every
         * write of read-only without a record; a supervisor that could not
         * read a path would refuse even the writes to /dev/null.
         */
        DSH_METADATA_DENY_KERNEL_WRITES,
} dsh_metadata_policy;

/*
 * The attribute ioctls, filtered on their command (the kernel dispatches on
 * the low 32 bits of the request): FS_IOC_SETFLAGS (and its 32-bit spelling)
 * sets inode flags (append-only, immutable, no-dump...), FS_IOC_FSSETXATTR
 * the extended flags and project id.  Supervised like the other calls.
 */
#define DSH_FS_IOC_SETFLAGS     0x40086602U  /* _IOW('f', 2, long) */
#define DSH_FS_IOC32_SETFLAGS   0x40046602U  /* _IOW('f', 2, int) */
#define DSH_FS_IOC_FSSETXATTR   0x401c5820U  /* _IOW('X', 32, struct fsxattr) */

/*
 * Attribute ioctls refused outright under both modes: each changes a file
 * for good through any descriptor the owner holds, even one opened
 * read-only, and none is something a build needs.  FS_IOC_SETVERSION sets
 * the inode generation; FS_IOC_ENABLE_VERITY makes a file read-only until it
 * is deleted; FS_IOC_SET_ENCRYPTION_POLICY binds an empty directory to an
 * encryption key.
 */
#define DSH_FS_IOC_SETVERSION              0x40087602U  /* _IOW('v', 2, long) */
#define DSH_FS_IOC32_SETVERSION            0x40047602U  /* _IOW('v', 2, int) */
#define DSH_FS_IOC_ENABLE_VERITY           0x40806685U  /* _IOW('f', 133, struct fsverity_enable_arg) */
#define DSH_FS_IOC_SET_ENCRYPTION_POLICY   0x800c6613U  /* _IOR('f', 19, struct fscrypt_policy_v1) */
/*
 * ext4's own spellings, on the filesystem most workspaces live on: its
 * EXT4_IOC_SETVERSION sets the generation like FS_IOC_SETVERSION (through
 * a read-only descriptor; only the owner is checked), and EXT4_IOC_MIGRATE
 * rewrites an old-format file's block map as extents.
 */
#define DSH_EXT4_IOC_SETVERSION            0x40086604U  /* _IOW('f', 4, long) */
#define DSH_EXT4_IOC32_SETVERSION          0x40046604U  /* _IOW('f', 4, int) */
#define DSH_EXT4_IOC_MIGRATE               0x00006609U  /* _IO('f', 9) */

/*
 * TIOCGPTPEER (_IO('T', 0x41)): opens the slave of a pty from its master.
 * Under DSH_METADATA_SUPERVISE the supervisor answers it (a new pty's slave
 * lies in /dev/pts, which Landlock does not grant: metadata-supervisor.c,
 * "pty peers"); under DSH_METADATA_DENY the filter lets it through to the
 * kernel, where Landlock decides as before.
 */
#define DSH_TIOCGPTPEER 0x00005441U

/* Why a supervised call cannot run where an ancestor's listener already watches (the install's EBUSY). */
#define DSH_METADATA_NESTED_LISTENER_REASON \
        "another seccomp supervisor already watches this process, and the metadata supervisor cannot run under " \
        "it (nested listeners are refused)"

/*
 * The metadata system calls of this architecture, in filter order, ended by
 * -1; ioctl is not among them (it is filtered on its command).
 */
const int *dsh_metadata_syscalls(void);

/*
 * Installs the filter for `policy` in the calling thread (no_new_privs must
 * be set).  A foreign architecture's call kills the process, and so does an
 * x32-numbered one: no call reaches the kernel under a number the filter did
 * not look at.
 *
 * DENY and SUPERVISE ask for a listener (connect and write intent are supervised under both)
 * with NEW_LISTENER and WAIT_KILLABLE_RECV (once the supervisor has received a call, only a fatal
 * signal interrupts the caller's wait: a call it is performing is never
 * restarted and performed twice), sends the listener over the unix socket
 * `socket_fd` (SCM_RIGHTS) and closes it here: the command never holds its
 * own listener.  It never asks for nested listeners: the kernel then refuses
 * a listener in any process that already has one above it (EBUSY), which is
 * what stops the command from installing its own, and what makes a call
 * under another supervisor fail closed.  DSH_METADATA_UNSUPERVISED asks for
 * none and ignores `socket_fd`.
 *
 * `network` (network-gate.h): DSH_NETWORK_FILTER_ON adds nothing (connect
 * is the supervisor's, as above).  OFF and ALLOW_LIST limit the socket
 * families and protocols (unix, TCP and UDP over inet and inet6, netlink's
 * route protocol; everything else EAFNOSUPPORT or EPROTONOSUPPORT) and,
 * where a listener exists, send bind, listen, sendmsg, sendmmsg and a
 * sendto naming an address to the supervisor (socket-call.h, inet-call.h).
 * Under DSH_METADATA_UNSUPERVISED nothing can be sent: OFF then makes no
 * inet socket at all (EACCES), and connect stays EACCES.
 *
 * `terminal_rule` adds the terminal filter's rule (ioctl TIOCSTI and
 * TIOCLINUX fail with EPERM; dsh_install_terminal_injection_filter() says
 * why) to the same program: one filter to install instead of two, which the
 * kernel charges for at install time (it builds each filter's action cache).
 *
 * Returns 0 or a negative errno (-ENOSYS on an architecture it does not
 * know, -EINVAL for DSH_METADATA_UNGOVERNED or a `network` it does not know).
 */
int dsh_install_metadata_filter(dsh_metadata_policy policy, dsh_network_filter network, int socket_fd,
                                bool terminal_rule);

/*
 * The program dsh_install_metadata_filter() installs, copied into `program`
 * (room for `capacity` instructions): its length, or 0 when it does not fit
 * or the architecture is one this filter does not know.  For the tests,
 * which run it over every system call number.
 */
size_t dsh_metadata_filter_program(dsh_metadata_policy policy, dsh_network_filter network, bool terminal_rule,
                                   struct sock_filter *program, size_t capacity);

/*
 * Under a network policy the listener is offered, not sent (metadata-filter.c,
 * offer_listener(): a sendmsg would be the listener's own to answer): its
 * number, written, which the receiver takes with pidfd_getfd() from the pid
 * the kernel attests (SCM_CREDENTIALS).  The sender then waits for the
 * receiver's one byte before it closes the listener.
 */
#define DSH_FD_OFFER_MAGIC 0x4f485344U  /* "DSHO" */
struct dsh_fd_offer {
        uint32_t magic;
        int32_t fd;
};

/*
 * Makes `socket_fd` ready to take an offered fd (SO_PASSCRED: the kernel
 * attaches each sender's pid); before the sender can write.  0 or a
 * negative errno.
 */
int dsh_prepare_fd_receiver(int socket_fd);

/*
 * Receives one fd on `socket_fd` (blocking; EINTR retried): sent with
 * SCM_RIGHTS, or offered (above; `socket_fd` prepared with
 * dsh_prepare_fd_receiver()).  Returns the fd (O_CLOEXEC), -ENODATA at end
 * of file (the sender is gone without sending), or another negative errno.
 */
int dsh_receive_fd(int socket_fd);

/* Sends `fd` with SCM_RIGHTS on `socket_fd` (one byte of data; EINTR retried).  Returns 0 or a negative errno. */
int dsh_send_fd(int socket_fd, int fd);

#endif
