/* SPDX-License-Identifier: MIT */
/*
 * The DNS stub (docs/network.md, "DNS"): UDP and TCP listeners on loopback
 * that answer every query the command sends to any resolver (the gate
 * redirects port 53 here).  Per query: a malformed one is answered FORMERR;
 * a name no entry names REFUSED, recorded {dns, name, 53,
 * host-not-allowed} and never forwarded (no exfiltration through the name
 * itself); an allowed one is forwarded as it came (its id kept) and the
 * answer relayed, unless it carries a link-local or metadata address no
 * entry names (REFUSED, recorded metadata-address); the A and AAAA records
 * of a relayed answer go to the address book for the QNAME and every CNAME
 * target on the chain.  An upstream that does not answer: SERVFAIL.
 */
#ifndef DSH_SANDBOX_DNS_STUB_H
#define DSH_SANDBOX_DNS_STUB_H

#include "network/network-context.h"

typedef struct dsh_dns_stub dsh_dns_stub;

/* Binds the listeners (their addresses into context->stub_udp and stub_tcp) and serves on context->base. */
DSH_INTERNAL int dsh_dns_stub_start(dsh_network_context *context, dsh_dns_stub **stub_out, char **reason);

/* Closes the listeners and every query and connection still open.  NULL is allowed. */
DSH_INTERNAL void dsh_dns_stub_free(dsh_dns_stub *stub);

#endif
