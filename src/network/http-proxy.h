/* SPDX-License-Identifier: MIT */
/*
 * The proxy (docs/network.md, "The proxy"): one listener on loopback
 * (127.0.0.1, and ::1 for the IPv6 sockets the gate redirects), two kinds
 * of connection told apart by the capture table.
 *   - Proxy-aware (HTTP_PROXY, HTTPS_PROXY): a request head of at most
 *     64 KiB.  CONNECT host:port: the authority must be allowed, is resolved
 *     through the upstream (a metadata address refused), connected, answered
 *     200, and the tunnel must then open with a ClientHello whose SNI is the
 *     host (none only for an allowed IP literal); anything else in the
 *     tunnel, a second CONNECT included, is closed and recorded.  An
 *     absolute-URI request: the authority checked the same way, the head
 *     sent on in origin form with Host set to the authority and
 *     "Connection: close", its body (Content-Length; chunked is refused)
 *     and nothing more.  Anything else: 400.  Refusals are 403 with a
 *     one-line body naming the rule; each is recorded {http, host, port,
 *     rule}.
 *   - Captured (the gate attached the original destination): to an allowed
 *     IP literal, relayed as it comes; otherwise at most 16 KiB in 10 s must
 *     make a ClientHello or an HTTP head, whose name (SNI, Host) must be
 *     allowed for the original port and must be a name the stub gave the
 *     original address out for.  Anything else is closed and recorded
 *     {connect, name or address, port, rule}.
 */
#ifndef DSH_SANDBOX_HTTP_PROXY_H
#define DSH_SANDBOX_HTTP_PROXY_H

#include "network/network-context.h"

typedef struct dsh_http_proxy dsh_http_proxy;

/* Binds the listener (its address into context->proxy) and serves on context->base. */
DSH_INTERNAL int dsh_http_proxy_start(dsh_network_context *context, dsh_http_proxy **proxy_out, char **reason);

/* Closes the listener and every connection.  NULL is allowed. */
DSH_INTERNAL void dsh_http_proxy_free(dsh_http_proxy *proxy);

#endif
