/* SPDX-License-Identifier: MIT */
/*
 * The record of what one call was refused on the network: each connect,
 * send, DNS query or proxied request the supervisor, the DNS stub or the
 * proxy refused, as {op, host, port, rule, source} (docs/network.md,
 * "Records").
 * The enforcing layer writes it, never the command.  Unlike the file
 * records (refusals.h), several threads add to one list (the supervisor's
 * thread, its workers, the network service's event loop), so it is locked.
 * Bounded per call (DSH_NETWORK_REFUSALS_MAX; past that only a count).
 * libc (and pthread) only, like the rest of core/.
 */
#ifndef DSH_SANDBOX_NETWORK_REFUSALS_H
#define DSH_SANDBOX_NETWORK_REFUSALS_H

#include <pthread.h>
#include <stddef.h>

/* What was refused. */
typedef enum dsh_network_op {
        DSH_NETWORK_OP_CONNECT,         /* "connect": a connect, a send to an address, a captured connection */
        DSH_NETWORK_OP_DNS,             /* "dns": a query the stub answered NXDOMAIN or REFUSED */
        DSH_NETWORK_OP_HTTP,            /* "http": a request to the proxy (absolute URI or CONNECT) */
} dsh_network_op;

/* Why. */
typedef enum dsh_network_rule {
        DSH_NETWORK_RULE_NETWORK_OFF,           /* "network-off": the policy is off */
        DSH_NETWORK_RULE_HOST_NOT_ALLOWED,      /* "host-not-allowed": no allow-list entry names it */
        DSH_NETWORK_RULE_ADDRESS_NOT_RESOLVED,  /* "address-not-resolved": an address the stub never gave out */
        DSH_NETWORK_RULE_METADATA_ADDRESS,      /* "metadata-address": link-local or a cloud metadata address */
        DSH_NETWORK_RULE_SNI_MISMATCH,          /* "sni-mismatch": the TLS name is not the host asked for, or absent */
        DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED,  /* "protocol-not-allowed": UDP other than DNS, raw TCP, a family */
        DSH_NETWORK_RULE_LOCAL_PORT,            /* "local-port": a host loopback port not allowed */
        DSH_NETWORK_RULE_BAD_REQUEST,           /* "bad-request": a request the proxy cannot read */
} dsh_network_rule;

/* Which layer refused. */
typedef enum dsh_network_source {
        DSH_NETWORK_SOURCE_SUPERVISOR,  /* "supervisor": a connect or send the seccomp supervisor refused */
        DSH_NETWORK_SOURCE_PROXY,       /* "proxy": the network service (a DNS query, a request, a captured connection) */
} dsh_network_source;

typedef struct dsh_network_refusal {
        dsh_network_op op;
        char *host;                     /* a name, or an address in its text form; owned */
        unsigned short port;            /* 0 when none applies */
        dsh_network_rule rule;
        dsh_network_source source;
} dsh_network_refusal;

#define DSH_NETWORK_REFUSALS_MAX 64

typedef struct dsh_network_refusals {
        pthread_mutex_t lock;
        dsh_network_refusal items[DSH_NETWORK_REFUSALS_MAX];
        size_t count;
        unsigned long dropped;
} dsh_network_refusals;

/* Initializes an empty list (the lock too).  Returns 0 or a negative errno. */
int dsh_network_refusals_init(dsh_network_refusals *refusals);

/*
 * Adds one record (the host copied, cut at 255 bytes).  The same record as
 * the last one is not added again.  Safe from any thread.
 */
void dsh_network_refusals_add(dsh_network_refusals *refusals, dsh_network_source source, dsh_network_op op,
                              const char *host, unsigned short port, dsh_network_rule rule);

/* Frees the hosts and destroys the lock. */
void dsh_network_refusals_destroy(dsh_network_refusals *refusals);

/* "connect", "dns", "http". */
const char *dsh_network_op_name(dsh_network_op op);

/* "network-off", "host-not-allowed", ... (above). */
const char *dsh_network_rule_name(dsh_network_rule rule);

/* "supervisor", "proxy". */
const char *dsh_network_source_name(dsh_network_source source);

#endif
