/* SPDX-License-Identifier: MIT */
/*
 * What the parts of one call's network service share (network-service.c
 * makes it): the event loop they all run on, the allow-list, the records,
 * the address book, the capture table, the upstream resolver, and the
 * addresses of the stub and the proxy.  Everything but the loop is set
 * before the loop thread starts and read-only after, or locked itself (the
 * book, the captures, the records), so the gate may read it from the
 * supervisor's threads.
 */
#ifndef DSH_SANDBOX_NETWORK_CONTEXT_H
#define DSH_SANDBOX_NETWORK_CONTEXT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "base/host-pattern.h"
#include "base/util.h"
#include "core/network-refusals.h"
#include "network/address-book.h"

struct event_base;

/* One loopback listener's address, for each family the host has a loopback for. */
typedef struct dsh_network_endpoint {
        struct sockaddr_in ipv4;
        struct sockaddr_in6 ipv6;
        bool has_ipv6;
} dsh_network_endpoint;

typedef struct dsh_network_context {
        struct event_base *base;
        dsh_host_pattern *patterns;
        size_t pattern_count;
        dsh_network_refusals *refusals;
        dsh_address_book *book;
        dsh_captures *captures;
        struct sockaddr_storage upstream;
        socklen_t upstream_length;
        dsh_network_endpoint stub_udp;
        dsh_network_endpoint stub_tcp;
        dsh_network_endpoint proxy;
} dsh_network_context;

/*
 * Adds a record (core/network-refusals.h).  `source`: the supervisor for a
 * connect or send the gate refused it (it asked, gate_route()), the proxy
 * for what the service itself refused (a query, a request, a captured
 * connection).
 */
DSH_INTERNAL void dsh_network_record(dsh_network_context *context, dsh_network_source source, dsh_network_op op,
                                     const char *host, unsigned short port, dsh_network_rule rule);

/* The address's text (no brackets, an IPv4-mapped IPv6 address as its IPv4 form) and its port. */
DSH_INTERNAL void dsh_network_address_text(const struct sockaddr *address, char text[INET6_ADDRSTRLEN],
                                           unsigned short *port);

/*
 * Binds a listening socket of `type` (SOCK_STREAM: listening; SOCK_DGRAM)
 * on 127.0.0.1 port 0, and on ::1 port 0 when the host has it, into
 * `endpoint`; fds[0] the IPv4 one, fds[1] the IPv6 one or -1.  Returns 0,
 * or a negative errno with `*reason` a new string naming what failed.
 */
DSH_INTERNAL int dsh_network_listen(int type, const char *what, dsh_network_endpoint *endpoint, int fds[2],
                                    char **reason);

#endif
