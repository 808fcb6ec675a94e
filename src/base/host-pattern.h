/* SPDX-License-Identifier: MIT */
/*
 * Allow-list entries (docs/network.md, "Patterns"): parsed once, matched by
 * the DNS stub, the proxy and the gate.  An entry is
 *   - "host": that name, exactly (compared without case, a trailing dot ignored);
 *   - "*.domain": every name beneath domain, not domain itself;
 *   - an IPv4 literal or a bracketed IPv6 literal ("[::1]");
 * each with an optional ":port" (1..65535; none: every port).  Refused:
 * "*" alone, a bare top-level name ("com", "*.com"), a scheme, a path, a
 * query, user info, an empty label, a label over 63 bytes, a name over 253,
 * a character outside letters, digits, '-' and '_'.  A named set ("@npm")
 * is no pattern: dsh_network_named_set() expands it first.
 * Pure functions; no I/O.
 */
#ifndef DSH_SANDBOX_HOST_PATTERN_H
#define DSH_SANDBOX_HOST_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <netinet/in.h>

#include "base/util.h"

typedef enum dsh_host_pattern_kind {
        DSH_HOST_PATTERN_NAME,          /* exactly `name` */
        DSH_HOST_PATTERN_SUBDOMAINS,    /* beneath `name` ("*.name") */
        DSH_HOST_PATTERN_IPV4,          /* `ipv4` */
        DSH_HOST_PATTERN_IPV6,          /* `ipv6` */
} dsh_host_pattern_kind;

typedef struct dsh_host_pattern {
        dsh_host_pattern_kind kind;
        char name[254];                 /* NAME, SUBDOMAINS: lower case, no trailing dot */
        struct in_addr ipv4;
        struct in6_addr ipv6;
        unsigned short port;            /* 0: every port */
} dsh_host_pattern;

/* Parses one entry.  Returns 0, or -EINVAL with `*reason` (if not NULL) a static sentence. */
DSH_INTERNAL int dsh_host_pattern_parse(const char *text, dsh_host_pattern *out, const char **reason);

/*
 * Whether `pattern` allows `host` (a name, any case, a trailing dot
 * ignored; or an address in text form) on `port` (0: any port asked, as
 * the DNS stub asks: a name is allowed when some entry names it at all).
 */
DSH_INTERNAL bool dsh_host_pattern_matches(const dsh_host_pattern *pattern, const char *host, unsigned short port);

/* The same over `count` patterns: whether any allows it. */
DSH_INTERNAL bool dsh_host_patterns_allow(const dsh_host_pattern *patterns, size_t count, const char *host,
                                          unsigned short port);

/*
 * Whether any pattern is the address literal `address` (AF_INET or
 * AF_INET6; an IPv4-mapped IPv6 address compares as its IPv4 form) for
 * `port`: an address the allow-list names itself, which needs no name.
 */
DSH_INTERNAL bool dsh_host_patterns_allow_address(const dsh_host_pattern *patterns, size_t count, int family,
                                                  const void *address, unsigned short port);

/*
 * Whether `address` (AF_INET or AF_INET6) is link-local or a cloud
 * metadata address: 169.254.0.0/16, Alibaba's 100.100.100.200, fe80::/10,
 * fd00:ec2::254, and the IPv4-mapped (::ffff:0:0/96) and NAT64
 * (64:ff9b::/96) forms of the IPv4 ones; or unspecified (0.0.0.0/8, ::),
 * which a connect takes to the host itself (a resolver that blocks a name
 * answers 0.0.0.0: the command would reach every host loopback service).
 */
DSH_INTERNAL bool dsh_address_is_metadata(int family, const void *address);

/*
 * The named sets: "@npm", "@pypi", "@github", "@gitlab", "@crates",
 * "@go", "@debian" (docs/network.md lists what each holds).  Static,
 * NULL-terminated; dsh_host_named_set() is NULL for an unknown name.
 */
DSH_INTERNAL const char *const *dsh_host_named_sets(void);
DSH_INTERNAL const char *const *dsh_host_named_set(const char *name);

#endif
