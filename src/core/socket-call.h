/* SPDX-License-Identifier: MIT */
/*
 * connect(), performed by the supervisor (docs/supervisor.md, "Sockets";
 * docs/security.md, "Unix sockets").  The filter (metadata-filter.c) sends
 * every connect of the command here under both confined modes, and refuses
 * by itself an AF_UNIX datagram socket (socket, socketpair: EACCES), which
 * would send to any pathname socket with sendto/sendmsg.
 *
 * The security argument, in one place:
 *   - never CONTINUE: the address is behind a pointer, and the socket is a
 *     number in an fd table another thread of the command may change
 *     between a check and the kernel's use.  So the supervisor takes the
 *     command's socket itself (pidfd_getfd: the same open file), copies the
 *     address once (bounded by sizeof(struct sockaddr_storage), as the
 *     kernel bounds it) and performs the connect on that socket with its
 *     copy; the answer is the connect's own result;
 *   - a pathname unix socket is resolved in the command's view (its cwd, or
 *     beneath /proc/<tid>/root; a symlink followed as connect follows it),
 *     opened O_PATH, and must be a socket.  It is reached when it lies in
 *     one of the command's own writable roots (the supervisor's containment
 *     test on that open file: not the host's shared /tmp, where other
 *     users' and daemons' sockets live — tmux's, X11's, ssh-agent's) and
 *     outside every protected path, or when it is one of the allow-listed
 *     sockets (the same device and inode as the path opened at setup).
 *     The connect then names "/proc/thread-self/fd/N" of that O_PATH fd: the
 *     kernel finds the socket by its inode, with no second path walk the
 *     command could race.  Otherwise EACCES, nothing is asked, and the
 *     refusal is written down (rule "unix-socket", the path the O_PATH fd
 *     names in the command's view);
 *   - an abstract name (sun_path[0] == 0) or an address with no name is
 *     refused (EACCES) and written down (rule "abstract-socket", path
 *     "@name"): Landlock's scope would refuse the command one outside its
 *     domain, but the supervisor is outside every domain, so it would reach
 *     them all, and it may not CONTINUE;
 *   - an inet socket's connect is the network policy's (inet-call.h, given
 *     with dsh_socket_calls_set_inet()); without one (ON) it passes as
 *     asked, performed here all the same; any other family passes as asked;
 *   - a connect may wait for long (a TCP handshake, a full unix backlog),
 *     and whether the socket blocks is the command's to change at any
 *     moment (O_NONBLOCK is the shared open file's): every connect is
 *     performed in a worker thread, which the supervisor thread
 *     (capability-less) creates, so it has no capability either (checked
 *     again there), which answers that one notification, and which is
 *     cancelled when the listener hangs up.  The supervisor's own thread
 *     never waits on the command.
 *
 * libc (and pthread) only.
 */
#ifndef DSH_SANDBOX_SOCKET_CALL_H
#define DSH_SANDBOX_SOCKET_CALL_H

#include <stdbool.h>
#include <linux/seccomp.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "core/call-workers.h"
#include "core/inet-call.h"
#include "core/metadata-tracee.h"
#include "core/refusals.h"

typedef struct dsh_socket_calls dsh_socket_calls;

/*
 * Whether the open socket file `fd` (fstat in `target`) lies in one of the
 * command's own writable roots and outside every protected path: 0, or a
 * negative errno.  The supervisor's containment test, handed in.
 */
typedef int (*dsh_socket_containment_fn)(void *data, int fd, const struct stat *target);

/*
 * Writes down one refused connect: `path` the socket as the command sees it
 * (absolute), or "@name" for an abstract address ("@" alone: none); NULL
 * when it cannot be named (then only counted).  The supervisor's record.
 */
typedef void (*dsh_socket_record_fn)(void *data, const char *path, dsh_refusal_rule rule);

/* What a connect is judged against, handed in by the supervisor. */
typedef struct dsh_socket_scope {
        dsh_socket_containment_fn contained;
        dsh_socket_record_fn record;
        void *data;
} dsh_socket_scope;

/* A new, empty allow-list and worker set; NULL when out of memory. */
dsh_socket_calls *dsh_socket_calls_new(void);

/* Frees it; every worker must be stopped (dsh_socket_calls_stop()). */
void dsh_socket_calls_free(dsh_socket_calls *calls);

/*
 * Lets the command reach the unix socket at absolute `path` (opened here,
 * symlinks followed: the caller named it).  Returns 0, -EINVAL (not
 * absolute), -ENOTSOCK (not a socket), -ENOMEM or open()'s errno.
 */
int dsh_socket_calls_allow(dsh_socket_calls *calls, const char *path);

/* Whether the system call `nr` is this module's (connect). */
bool dsh_socket_call_is_ours(int nr);

/*
 * Decides and performs one connect notification, and answers it (now, or
 * from a worker).  A unix socket refused by the policy (neither allowed nor
 * contained: "unix-socket"; an abstract or unnamed address:
 * "abstract-socket") is written down through `scope->record`.  Returns true
 * when it was refused because the command's socket or address could not be
 * taken (pidfd_getfd refused, memory unreadable): the caller counts those.
 */
bool dsh_socket_call_handle(dsh_socket_calls *calls, dsh_metadata_call *c, const struct seccomp_notif *request,
                            const dsh_socket_scope *scope);

/* The network policy's decisions for inet connects (NULL: none; not owned). */
void dsh_socket_calls_set_inet(dsh_socket_calls *calls, dsh_inet_calls *inet);

/* The worker threads its connects run on (call-workers.h), shared with the inet calls. */
dsh_call_workers *dsh_socket_calls_workers(dsh_socket_calls *calls);

/*
 * Cancels every worker still connecting and waits for each: before the
 * listener is closed (a worker answers on it).  Their calls then get ENOSYS
 * from the kernel once the listener closes.
 */
void dsh_socket_calls_stop(dsh_socket_calls *calls);

/*
 * Whether connect can be performed here: pidfd_getfd() is allowed (a
 * container's seccomp profile may refuse it).  Returns 0, or a negative
 * errno with `*reason` a static sentence saying what then happens (every
 * connect of a confined command is refused with EACCES).
 */
int dsh_socket_call_check_host(const char **reason);

#endif
