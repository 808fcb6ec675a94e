/* SPDX-License-Identifier: MIT */
/* The per-call record of refused network calls: see network-refusals.h. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/network-refusals.h"

/* A name is at most 253 bytes, an address's text far less: longer is cut here. */
#define HOST_LIMIT 255

int dsh_network_refusals_init(dsh_network_refusals *refusals)
{
        memset(refusals, 0, sizeof(*refusals));
        return -pthread_mutex_init(&refusals->lock, NULL);
}

static char *copy_host(const char *host)
{
        size_t length = strnlen(host ? host : "", HOST_LIMIT);
        char *copy = malloc(length + 1);

        if (!copy)
                return NULL;
        memcpy(copy, host ? host : "", length);
        copy[length] = '\0';
        return copy;
}

/* The caller holds the lock. */
static bool same_as_last(const dsh_network_refusals *refusals, dsh_network_source source, dsh_network_op op,
                         const char *host, unsigned short port, dsh_network_rule rule)
{
        const dsh_network_refusal *last;

        if (refusals->count == 0)
                return false;
        last = &refusals->items[refusals->count - 1];
        return last->source == source && last->op == op && last->port == port && last->rule == rule &&
               strncmp(last->host, host ? host : "", HOST_LIMIT) == 0;
}

void dsh_network_refusals_add(dsh_network_refusals *refusals, dsh_network_source source, dsh_network_op op,
                              const char *host, unsigned short port, dsh_network_rule rule)
{
        char *copy;

        if (!refusals)
                return;
        pthread_mutex_lock(&refusals->lock);
        if (!same_as_last(refusals, source, op, host, port, rule)) {
                copy = refusals->count < DSH_NETWORK_REFUSALS_MAX ? copy_host(host) : NULL;
                if (copy)
                        refusals->items[refusals->count++] = (dsh_network_refusal) { op, copy, port, rule, source };
                else
                        refusals->dropped++;
        }
        pthread_mutex_unlock(&refusals->lock);
}

void dsh_network_refusals_destroy(dsh_network_refusals *refusals)
{
        if (!refusals)
                return;
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
        return "network-off";
}

const char *dsh_network_source_name(dsh_network_source source)
{
        switch (source) {
        case DSH_NETWORK_SOURCE_SUPERVISOR:
                return "supervisor";
        case DSH_NETWORK_SOURCE_PROXY:
                return "proxy";
        }
        return "supervisor";
}
