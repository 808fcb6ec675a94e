/* SPDX-License-Identifier: MIT */
/*
 * The network policy on the command's inet sockets (docs/supervisor.md,
 * "Sockets"; network-gate.h has the policy's whole argument): connect (asked
 * by socket-call.c for an inet socket), bind, listen, sendto, sendmsg and
 * sendmmsg, which the filter sends here under OFF and ALLOW_LIST.
 *
 * The security argument, in one place:
 *   - never CONTINUE on an inet call: the socket is a number another thread
 *     may point at another socket between a check and the kernel's use, and
 *     the address and the data are behind pointers.  Each call is performed
 *     here on the command's own socket (pidfd_getfd: the same open file),
 *     with an address and data copied once (inet-message.h bounds them), and
 *     the answer is its result.  A race that swaps the fd number reaches
 *     only the socket taken, judged as what it is (SO_DOMAIN, SO_TYPE read
 *     on the taken one);
 *   - one call is let through: bind of a non-inet socket (unix, netlink's
 *     route protocol).  The fd may be swapped for an inet socket before the
 *     kernel binds it; that socket is then bound where nobody chose, so it
 *     is never the command's own, each connect and send of it is still
 *     decided here, and listen refuses it unless it is on loopback;
 *   - bind: an inet socket is bound on loopback only (the wildcard becomes
 *     the loopback address of its form, any other address is
 *     EADDRNOTAVAIL), so nothing outside reaches a server of the command;
 *     the socket is then the command's own (its inode, a bounded table);
 *     listen binds an unbound socket on loopback first (listen would bind
 *     the wildcard) and refuses one bound anywhere else;
 *   - a destination (connect, a datagram's address, TCP Fast Open) is
 *     judged by inet-address.h's rules (the wildcard is the loopback;
 *     IPv4-mapped by its IPv4 form): a loopback one is reached when every
 *     loopback socket that takes it — each listener (TCP) or bound socket
 *     (UDP) at that port on that address or a wildcard, read from the
 *     supervisor's /proc/thread-self/net, the command's network namespace
 *     — is the command's own, so that a host service sharing the port
 *     (SO_REUSEPORT) is never reached; or when the port is an allowed local
 *     port; or when the namespace is private.  Anything else: OFF refuses
 *     it (EACCES, a record), ALLOW_LIST asks the gate;
 *   - an inet send whose control data picks the next hop (a source route,
 *     a routing header, a next hop) or a device but loopback (a packet
 *     info) is refused: the packet would go there, not to the destination
 *     decided;
 *   - a stream socket's send ignores its address (the connect decided),
 *     except TCP Fast Open, decided as a connect; the address is dropped
 *     before the send all the same;
 *   - a unix socket's sendmsg is performed too (the number may name an inet
 *     socket by the time the kernel looks): its SCM_RIGHTS descriptors are
 *     the command's, taken one by one (pidfd_getfd) and sent as ours, found
 *     by the kernel's own header walk; a unix datagram socket (one the
 *     command was handed: it cannot make one) sends to no address;
 *   - every send is tried here with MSG_DONTWAIT, so that a flag the command
 *     clears meanwhile never makes the supervisor's thread wait; on a socket
 *     that waits, what would wait is finished by a worker (call-workers.h).
 *
 * What stays open, written down: a loopback destination judged own can be
 * closed by the command and bound by a host process between the check and
 * the connect (the command cannot make a host service bind); a send by the
 * supervisor carries the supervisor's credentials (SCM_CREDENTIALS of the
 * command's pid is refused by the kernel, EPERM); sendmmsg is performed
 * here, message by message, without waiting (EAGAIN on a full buffer).
 * libc (and pthread) only.
 */
#ifndef DSH_SANDBOX_INET_CALL_H
#define DSH_SANDBOX_INET_CALL_H

#include <stdbool.h>
#include <linux/seccomp.h>
#include <sys/socket.h>

#include "core/call-workers.h"
#include "core/metadata-tracee.h"
#include "core/network-gate.h"

typedef struct dsh_inet_calls dsh_inet_calls;

/* A socket the gate was told of (a redirect to the proxy), to forget if its connect fails. */
typedef struct dsh_inet_attachment {
        const dsh_network_gate *gate;   /* NULL: nothing attached */
        struct sockaddr_storage source;
        socklen_t source_length;
} dsh_inet_attachment;

/* A new set with the policy ON (nothing decided); NULL when out of memory. */
dsh_inet_calls *dsh_inet_calls_new(void);

void dsh_inet_calls_free(dsh_inet_calls *inet);

/*
 * The call's network policy (copied; its pointers must live for the call).
 * Returns 0, or -EINVAL: ALLOW_LIST without a gate, OFF or ALLOW_LIST
 * without a refusal list, a filter it does not know.
 */
int dsh_inet_calls_configure(dsh_inet_calls *inet, const dsh_network_settings *settings);

/* Whether a policy other than ON was given. */
bool dsh_inet_calls_enforce(const dsh_inet_calls *inet);

/* Whether the system call `nr` is this module's (bind, listen, sendto, sendmsg, sendmmsg). */
bool dsh_inet_call_is_ours(int nr);

/*
 * The connect of the inet socket `socket_fd` (taken) to `*address`: 0 to
 * perform it to `*address` (rewritten when redirected, `*attachment` then
 * set), or the negative errno to answer (recorded).  ON: 0, as asked.
 */
int dsh_inet_decide_connect(dsh_inet_calls *inet, int socket_fd, struct sockaddr_storage *address,
                            socklen_t *length, dsh_inet_attachment *attachment);

/* After an attached socket's connect failed: the gate forgets it (nothing when none). */
void dsh_inet_attachment_forget(dsh_inet_attachment *attachment);

/*
 * Decides, performs and answers one bind, listen, sendto, sendmsg or
 * sendmmsg notification (now, or from a worker of `workers`).  Returns true
 * when it was refused because the command could not be read (counted by
 * the caller).
 */
bool dsh_inet_call_handle(dsh_inet_calls *inet, dsh_call_workers *workers, dsh_metadata_call *c,
                          const struct seccomp_notif *request);

#endif
