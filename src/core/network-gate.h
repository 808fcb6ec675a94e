/* SPDX-License-Identifier: MIT */
/*
 * The network policy as the supervisor enforces it (docs/network.md,
 * docs/supervisor.md "Sockets").  core/ decides what it can decide alone —
 * the policy is off, the destination is the command's own loopback server
 * or an allowed local port — and asks a gate for the rest: under the
 * allow-list the gate is the call's network service (src/network/), which
 * owns the proxy, the DNS stub and the addresses the stub gave out.  The
 * launchers (tools/) link core/ alone: they enforce ON and OFF, never the
 * allow-list, which needs a gate.
 *
 * The security argument, in one place:
 *   - under OFF and ALLOW_LIST the filter sends connect, bind, listen,
 *     sendmsg, sendmmsg and a sendto that names an address to the
 *     supervisor; it refuses by itself every socket family but unix, inet,
 *     inet6 and netlink's route protocol (getifaddrs), inet sockets
 *     other than TCP and UDP (raw, ICMP, SCTP), and the socket options that
 *     pick a packet's next hop or device (an IPv6 routing header, IPv4
 *     options, a bound device, the unicast interface, a sticky IPv6 packet
 *     info): with one, a connect or send decided for one address goes to
 *     another, or leaves by another device;
 *   - every such call is performed by the supervisor on the command's own
 *     socket (pidfd_getfd) with an address and data it copied once: never
 *     CONTINUE, since the address and data are behind pointers and the fd
 *     number may name another socket by the time the kernel looks;
 *   - bind and listen: an inet socket is bound on loopback only (a wildcard
 *     address becomes the loopback address of its family; any other is
 *     EADDRNOTAVAIL), so nothing outside can connect in and be answered;
 *     the socket it bound is remembered (its inode) as the command's own;
 *   - a loopback destination is reached when it is an allowed local port,
 *     or when the socket listening (TCP) or bound (UDP) there is one the
 *     command bound (its inode, read from /proc/net), or when every
 *     loopback address is the command's own (a private network namespace);
 *   - everything else: OFF refuses it (EACCES, a record "network-off");
 *     ALLOW_LIST asks the gate, which routes it DIRECT (the proxy's and the
 *     stub's own addresses), REDIRECTs it (port 53 to the stub, a TCP
 *     destination the stub gave out for an allowed name to the proxy, with
 *     the original destination attached) or REFUSEs it with its record.
 * libc only.
 */
#ifndef DSH_SANDBOX_NETWORK_GATE_H
#define DSH_SANDBOX_NETWORK_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "core/network-refusals.h"

/* The filter's and the supervisor's view of the policy (dsh_network_mode's values, libc-side). */
typedef enum dsh_network_filter {
        DSH_NETWORK_FILTER_ON = 0,      /* today's: connect supervised for unix sockets only */
        DSH_NETWORK_FILTER_OFF,
        DSH_NETWORK_FILTER_ALLOW_LIST,
} dsh_network_filter;

typedef enum dsh_network_verdict {
        DSH_NETWORK_DIRECT,             /* perform it as asked */
        DSH_NETWORK_REDIRECT,           /* perform it to `address` instead */
        DSH_NETWORK_REFUSE,             /* answer `error`; the gate has recorded it */
} dsh_network_verdict;

typedef struct dsh_network_route {
        dsh_network_verdict verdict;
        struct sockaddr_storage address;        /* REDIRECT: where to */
        socklen_t length;
        bool attach;                            /* REDIRECT: call gate->attach() before connecting */
        int error;                              /* REFUSE: the positive errno (EACCES) */
} dsh_network_route;

typedef struct dsh_network_gate {
        void *data;
        /*
         * Where a connect (or a send to an address, or a TCP Fast Open) of a
         * `type` socket (SOCK_STREAM or SOCK_DGRAM) to `destination` goes.
         * Never blocks (a table lookup); safe from any thread.  Not asked
         * for what core/ decided itself (an own loopback server, an allowed
         * local port).
         */
        void (*route)(void *data, int type, const struct sockaddr *destination, socklen_t length,
                      dsh_network_route *route);
        /*
         * A REDIRECT with `attach`: the socket, bound at `source` (loopback,
         * its port known; an IPv4-mapped one given in its IPv4 form, as the
         * proxy's IPv4 listener sees its peer), is about to connect to the
         * proxy instead of `destination`.  The proxy reads `destination` back by the peer
         * address it accepts.  Returns 0, or a negative errno (the connect
         * is then refused with it).
         */
        int (*attach)(void *data, const struct sockaddr *source, socklen_t source_length,
                      const struct sockaddr *destination, socklen_t destination_length);
        /* After the connect of an attached socket failed: forget `source`. */
        void (*detach)(void *data, const struct sockaddr *source, socklen_t source_length);
} dsh_network_gate;

/* What a supervisor is told of one call's network policy; every pointer stays valid for the call. */
typedef struct dsh_network_settings {
        dsh_network_filter filter;
        const unsigned short *local_ports;      /* allowed host loopback ports */
        size_t local_port_count;
        bool loopback_private;                  /* a private network namespace: all loopback is the command's */
        const dsh_network_gate *gate;           /* ALLOW_LIST: required; OFF: NULL */
        dsh_network_refusals *refusals;         /* where refusals are recorded; required unless ON */
        /*
         * Called once when the supervisor is freed, after its last thread is
         * done (may be NULL): what the pointers above name may go only then.
         * A supervisor thread stuck in a call past its stop is detached, not
         * joined, and may still ask the gate or add a record when it returns.
         */
        void (*release)(void *data);
        void *release_data;
} dsh_network_settings;

#endif
