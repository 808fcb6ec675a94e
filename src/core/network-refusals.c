/* SPDX-License-Identifier: MIT */
/*
 * TEMPORARY: part B's (issue 21).  A minimal implementation of
 * core/network-refusals.h so that src/network/ links and its tests read
 * real records on branch h21-C; the lead takes part B's file instead.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/network-refusals.h"

int dsh_network_refusals_init(dsh_network_refusals *refusals)
{
        memset(refusals, 0, sizeof(*refusals));
        return -pthread_mutex_init(&refusals->lock, NULL);
}

void dsh_network_refusals_add(dsh_network_refusals *refusals, dsh_network_op op, const char *host,
                              unsigned short port, dsh_network_rule rule)
{
        const dsh_network_refusal *last;
        char *copy;

        pthread_mutex_lock(&refusals->lock);
        last = refusals->count ? &refusals->items[refusals->count - 1] : NULL;
        if (last && last->op == op && last->port == port && last->rule == rule && strcmp(last->host, host) == 0)
                goto out;
        copy = refusals->count < DSH_NETWORK_REFUSALS_MAX ? strndup(host, 255) : NULL;
        if (copy == NULL) {
                refusals->dropped++;
                goto out;
        }
        refusals->items[refusals->count++] = (dsh_network_refusal) { op, copy, port, rule };
out:
        pthread_mutex_unlock(&refusals->lock);
}

void dsh_network_refusals_destroy(dsh_network_refusals *refusals)
{
        for (size_t i = 0; i < refusals->count; i++)
                free(refusals->items[i].host);
        refusals->count = 0;
        pthread_mutex_destroy(&refusals->lock);
}

const char *dsh_network_op_name(dsh_network_op op)
{
        switch (op) {
        case DSH_NETWORK_OP_CONNECT:
                return "connect";
        case DSH_NETWORK_OP_DNS:
                return "dns";
        case DSH_NETWORK_OP_HTTP:
                return "http";
        }
        return "connect";
}

const char *dsh_network_rule_name(dsh_network_rule rule)
{
        switch (rule) {
        case DSH_NETWORK_RULE_NETWORK_OFF:
                return "network-off";
        case DSH_NETWORK_RULE_HOST_NOT_ALLOWED:
                return "host-not-allowed";
        case DSH_NETWORK_RULE_ADDRESS_NOT_RESOLVED:
                return "address-not-resolved";
        case DSH_NETWORK_RULE_METADATA_ADDRESS:
                return "metadata-address";
        case DSH_NETWORK_RULE_SNI_MISMATCH:
                return "sni-mismatch";
        case DSH_NETWORK_RULE_PROTOCOL_NOT_ALLOWED:
                return "protocol-not-allowed";
        case DSH_NETWORK_RULE_LOCAL_PORT:
                return "local-port";
        case DSH_NETWORK_RULE_BAD_REQUEST:
                return "bad-request";
        }
        return "bad-request";
}
