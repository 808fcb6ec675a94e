/* SPDX-License-Identifier: MIT */
/*
 * The pure part of the inet supervision (inet-call.c): what an address is
 * to the network policy, and the /proc/net lines that say who listens where.
 * Nothing here reads the command or the system: each function judges the
 * bytes it is given, so that the unit tests can hold every rule.
 *
 *   - an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is judged by its IPv4
 *     form everywhere: a dual-stack socket reaches 127.0.0.1 through it;
 *   - a wildcard destination (0.0.0.0, ::, ::ffff:0.0.0.0) is where the
 *     kernel's connect and sendto go to the local host (the loopback): it
 *     is judged, and performed, as the loopback address of its form, so
 *     that "connect to 0.0.0.0:P" cannot reach a host service on 127.0.0.1:P
 *     as a destination nobody judged;
 *   - loopback is 127.0.0.0/8 and ::1.
 * libc only.
 */
#ifndef DSH_SANDBOX_INET_ADDRESS_H
#define DSH_SANDBOX_INET_ADDRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

typedef enum dsh_inet_kind {
        DSH_INET_INVALID,       /* too short for its family, or not an inet family */
        DSH_INET_UNSPEC,        /* AF_UNSPEC: a disconnect, reaching nothing */
        DSH_INET_WILDCARD,      /* 0.0.0.0, ::, ::ffff:0.0.0.0 */
        DSH_INET_LOOPBACK,      /* 127.0.0.0/8, ::1, ::ffff:127.0.0.0/104 */
        DSH_INET_OTHER,         /* any other address */
} dsh_inet_kind;

/* One endpoint, in a form both families compare in: v4 (mapped included) or v6, and the port. */
typedef struct dsh_inet_endpoint {
        bool v4;                        /* an IPv4 address, or an IPv4-mapped IPv6 one */
        uint8_t address[16];            /* v4: the first 4 bytes (network order) */
        uint16_t port;                  /* host order */
} dsh_inet_endpoint;

/*
 * What `address` (`length` bytes, as a command gave it) is, with its
 * endpoint in `*endpoint` (may be NULL) for WILDCARD, LOOPBACK and OTHER.
 * The length rules are the kernel's: a sockaddr_in needs 16 bytes, a
 * sockaddr_in6 24 (SIN6_LEN_RFC2133), AF_UNSPEC only its family.
 */
dsh_inet_kind dsh_inet_classify(const struct sockaddr_storage *address, socklen_t length,
                                dsh_inet_endpoint *endpoint);

/*
 * Rewrites a WILDCARD `address` (classified so) to the loopback address of
 * the same form (127.0.0.1, ::1, ::ffff:127.0.0.1), the port kept; a
 * destination that was the wildcard reaches just that.  Anything else is
 * left as it is.
 */
void dsh_inet_wildcard_to_loopback(struct sockaddr_storage *address, socklen_t length);

/*
 * The loopback address of `family` (AF_INET: 127.0.0.1, AF_INET6: ::1) at
 * `port` (host order) into `address`; its length, or 0 for another family.
 */
socklen_t dsh_inet_loopback_address(int family, uint16_t port, struct sockaddr_storage *address);

/* The text of `endpoint`'s address ("127.0.0.1", "::1", "192.0.2.1") into `text` (INET6_ADDRSTRLEN bytes). */
void dsh_inet_endpoint_text(const dsh_inet_endpoint *endpoint, char *text, size_t size);

/* One line of /proc/net/{tcp,udp}{,6}. */
typedef struct dsh_proc_net_entry {
        dsh_inet_endpoint local;        /* v4 for a mapped address too */
        bool wildcard;                  /* bound to 0.0.0.0 or :: */
        bool any_family;                /* bound to ::, which may take IPv4 too */
        unsigned int state;             /* TCP_LISTEN is 0x0A */
        unsigned long inode;
} dsh_proc_net_entry;

/*
 * Parses one line of /proc/net/tcp (`ipv6` false) or tcp6 (true), udp
 * likewise: false for the header line or anything malformed.
 */
bool dsh_proc_net_parse_line(const char *line, bool ipv6, dsh_proc_net_entry *entry);

/*
 * Whether `entry` takes what is sent to `destination` (a loopback endpoint,
 * its wildcard already rewritten): the same port, and the same address, or a
 * wildcard of the destination's family (:: takes both).
 */
bool dsh_proc_net_entry_serves(const dsh_proc_net_entry *entry, const dsh_inet_endpoint *destination);

#endif
