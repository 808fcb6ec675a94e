/* SPDX-License-Identifier: MIT */
/*
 * The head of one HTTP/1.x request, as the proxy reads it before it lets
 * anything through (docs/network.md, "The proxy"): the request line (a
 * CONNECT's authority, an absolute URI's authority and origin form, or an
 * origin-form target), the Host header, the body's framing.  Pure: the
 * grammar is http_parser's (strict build), the authority's checks are ours
 * (a host a pattern can speak of: letters, digits, '-', '_', dots; an IPv4
 * literal; a bracketed IPv6 literal).  Bounded: a head is at most
 * DSH_HTTP_HEAD_MAX bytes and DSH_HTTP_HEAD_HEADERS_MAX header lines.
 */
#ifndef DSH_SANDBOX_HTTP_HEAD_H
#define DSH_SANDBOX_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

#define DSH_HTTP_HEAD_MAX (64 * 1024)
#define DSH_HTTP_HEAD_HEADERS_MAX 100
#define DSH_HTTP_HOST_SIZE 254

typedef enum dsh_http_head_status {
        DSH_HTTP_HEAD_INCOMPLETE,       /* no blank line yet: read more (up to DSH_HTTP_HEAD_MAX) */
        DSH_HTTP_HEAD_MALFORMED,        /* not a request head the proxy takes */
        DSH_HTTP_HEAD_COMPLETE,
} dsh_http_head_status;

typedef enum dsh_http_target {
        DSH_HTTP_TARGET_AUTHORITY,      /* CONNECT host:port */
        DSH_HTTP_TARGET_ABSOLUTE,       /* GET http://host[:port]/path: a proxy request */
        DSH_HTTP_TARGET_ORIGIN,         /* GET /path (the host from the Host header): a captured request */
} dsh_http_target;

typedef struct dsh_http_span {
        size_t offset;
        size_t length;
} dsh_http_span;

typedef struct dsh_http_header {
        dsh_http_span name;
        dsh_http_span value;
} dsh_http_header;

typedef struct dsh_http_head {
        dsh_http_target target;
        /*
         * The host the request is for, lower case, an IPv6 literal without
         * its brackets: the authority (CONNECT, absolute URI), else the Host
         * header's.  "" when an origin-form request has no Host header.
         */
        char host[DSH_HTTP_HOST_SIZE];
        bool host_is_literal;           /* an IPv4 or IPv6 address, no name */
        unsigned short port;            /* the authority's port, else 80 */
        const char *method;             /* static: "GET", "CONNECT"... */
        dsh_http_span origin;           /* ABSOLUTE: path and query ("" means "/"); ORIGIN: the target */
        size_t length;                  /* the head's bytes, through its blank line */
        bool chunked;                   /* Transfer-Encoding present: a body of unknown length */
        unsigned long long content_length; /* 0 when none */
        int minor_version;              /* HTTP/1.minor */
        dsh_http_header headers[DSH_HTTP_HEAD_HEADERS_MAX];
        size_t header_count;
} dsh_http_head;

/* Reads the request head at the start of `data` (`length` bytes so far). */
DSH_INTERNAL dsh_http_head_status dsh_http_head_read(const char *data, size_t length, dsh_http_head *head);

/*
 * The head to send the origin server for an ABSOLUTE or ORIGIN request:
 * the request line in origin form, Host set to the host checked (the
 * client's own Host header dropped: the server must serve the name that
 * was allowed, not another one on the same address), the hop-by-hop
 * headers dropped (Connection, Proxy-Connection, Keep-Alive, Proxy-
 * Authorization, TE, Upgrade) and "Connection: close" added: one request
 * per connection, so that a second request on the same connection never
 * reaches the server unchecked.  Returns a new string (its length in
 * *length_out) or NULL when out of memory.
 */
DSH_INTERNAL char *dsh_http_head_forwarded(const char *data, const dsh_http_head *head, size_t *length_out);

#endif
