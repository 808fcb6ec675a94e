/* SPDX-License-Identifier: MIT */
/*
 * One call's network service under the allow-list (docs/network.md): the
 * proxy and the DNS stub, on one event-loop thread (libevent) of the
 * process that hosts the call's supervisor, and the gate the supervisor
 * asks (core/network-gate.h).  Started before the command is spawned,
 * stopped after it was waited for.
 *
 *   - the DNS stub (UDP and TCP on 127.0.0.1, ephemeral ports) answers
 *     every query the command sends to any resolver (the supervisor
 *     redirects port 53 here): a name no allow-list entry names gets
 *     REFUSED and is never forwarded; an allowed one is forwarded to the
 *     upstream resolver and its answer returned, unless it holds a
 *     link-local, metadata or unspecified address no entry names (then
 *     REFUSED: dsh_address_is_metadata()); the
 *     A and AAAA records it returns are kept, name by address, for the
 *     gate and the proxy;
 *   - the proxy (TCP on 127.0.0.1, an ephemeral port) takes what
 *     HTTP_PROXY and HTTPS_PROXY send it (an absolute-URI request, whose
 *     authority is checked; CONNECT, whose authority is checked and whose
 *     tunnel must open with a TLS ClientHello naming the same host), and
 *     every TCP connection the supervisor redirected (the name from the
 *     SNI or the Host header, which must be allowed and must have resolved
 *     to the original destination);
 *   - the gate: port 53 to the stub; the proxy's and the stub's own
 *     addresses DIRECT; a TCP destination the stub gave out for an allowed
 *     name, or an allowed IP literal, to the proxy (attached); every other
 *     destination refused with its record.
 */
#ifndef DSH_SANDBOX_NETWORK_SERVICE_H
#define DSH_SANDBOX_NETWORK_SERVICE_H

#include "base/util.h"
#include "core/network-gate.h"
#include "dsh-sandbox/sandbox.h"

typedef struct dsh_network_service dsh_network_service;

/*
 * Starts the service for `network` (ALLOW_LIST, prepared: sets expanded,
 * entries checked) with its records going to `refusals` (the caller's,
 * alive until dsh_network_service_stop() returned).  Returns 0 with
 * *service_out set, or a negative errno with `*reason` a new string saying
 * what could not start (the upstream resolver unknown or unreadable, a
 * listener, the thread): the caller refuses the call SANDBOX_UNAVAILABLE
 * with it and runs nothing.
 */
DSH_INTERNAL int dsh_network_service_start(const dsh_network_policy *network, dsh_network_refusals *refusals,
                                           dsh_network_service **service_out, char **reason);

/* The gate the supervisor asks; valid until dsh_network_service_stop(). */
DSH_INTERNAL const dsh_network_gate *dsh_network_service_gate(dsh_network_service *service);

/* "http://127.0.0.1:PORT": the value of HTTP_PROXY, HTTPS_PROXY and ALL_PROXY for the command. */
DSH_INTERNAL const char *dsh_network_service_proxy_url(const dsh_network_service *service);

/*
 * Stops the loop, closes every listener and connection, joins the thread
 * and frees the service.  NULL is allowed.
 */
DSH_INTERNAL void dsh_network_service_stop(dsh_network_service *service);

#endif
