/* SPDX-License-Identifier: MIT */
/*
 * The upstream resolver, asked on the command's behalf (docs/network.md,
 * "DNS"): one exchange per query over UDP from a fresh socket connected to
 * the upstream (so only the upstream's replies reach it, from a random
 * port), the reply taken only when its id and question are the query's,
 * asked again over TCP when it comes back truncated; 5 s at most.  And the
 * proxy's own resolution of a name: A, then AAAA when there is no A.
 * Runs on the service's event loop; every callback is called at most once,
 * never after the cancel.
 */
#ifndef DSH_SANDBOX_DNS_UPSTREAM_H
#define DSH_SANDBOX_DNS_UPSTREAM_H

#include <stddef.h>
#include <stdint.h>

#include "network/dns-answer.h"
#include "network/network-context.h"

#define DSH_DNS_UPSTREAM_TIMEOUT_SECONDS 5

typedef struct dsh_dns_exchange dsh_dns_exchange;

/* `answer` is NULL (length 0) when the upstream did not answer in time or could not be reached. */
typedef void dsh_dns_exchange_done(void *data, const uint8_t *answer, size_t length);

/*
 * Sends `query` (checked: dsh_dns_query_read() said OK; its id is the
 * exchange's) to the upstream.  Returns the exchange (freed once `done`
 * has been called, or by the cancel), or NULL when it could not start.
 */
DSH_INTERNAL dsh_dns_exchange *dsh_dns_exchange_start(dsh_network_context *context, const uint8_t *query,
                                                      size_t length, dsh_dns_exchange_done *done, void *data);
DSH_INTERNAL void dsh_dns_exchange_cancel(dsh_dns_exchange *exchange);

typedef enum dsh_dns_resolution_status {
        DSH_DNS_RESOLVED,               /* `addresses` holds at least one */
        DSH_DNS_UNRESOLVED,             /* no address, no answer, an error */
        DSH_DNS_METADATA,               /* an address is link-local or metadata and no entry names it */
} dsh_dns_resolution_status;

typedef struct dsh_dns_resolution dsh_dns_resolution;
typedef void dsh_dns_resolution_done(void *data, dsh_dns_resolution_status status, const dsh_dns_answer *answer);

/* Resolves `name` through the upstream. Returns the resolution (as an exchange is), or NULL. */
DSH_INTERNAL dsh_dns_resolution *dsh_dns_resolve(dsh_network_context *context, const char *name,
                                                 dsh_dns_resolution_done *done, void *data);
DSH_INTERNAL void dsh_dns_resolution_cancel(dsh_dns_resolution *resolution);

#endif
