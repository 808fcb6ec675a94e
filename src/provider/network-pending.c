/* SPDX-License-Identifier: MIT */
/* TEMPORARY: see network-pending.h.  Every definition fails closed; the lead deletes this file at the merge. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/network-refusals.h"
#include "dsh-sandbox/sandbox.h"
#include "provider/network-pending.h"

int dsh_metadata_supervisor_set_network(dsh_metadata_supervisor *supervisor, const dsh_network_settings *settings)
{
        (void) supervisor;
        return settings->filter == DSH_NETWORK_FILTER_ON ? 0 : -ENOSYS;
}

/* Between clone() and exec(): raw calls only. */
int dsh_pending_install_metadata_filter(dsh_metadata_policy policy, int socket_fd, bool terminal_rule,
                                        dsh_network_filter network)
{
        if (network != DSH_NETWORK_FILTER_ON)
                return -ENOSYS;
        return dsh_install_metadata_filter(policy, socket_fd, terminal_rule);
}

int dsh_network_refusals_init(dsh_network_refusals *refusals)
{
        memset(refusals, 0, sizeof(*refusals));
        return -pthread_mutex_init(&refusals->lock, NULL);
}

void dsh_network_refusals_add(dsh_network_refusals *refusals, dsh_network_op op, const char *host,
                              unsigned short port, dsh_network_rule rule)
{
        pthread_mutex_lock(&refusals->lock);
        if (refusals->count < DSH_NETWORK_REFUSALS_MAX &&
            (refusals->items[refusals->count].host = strndup(host, 255))) {
                refusals->items[refusals->count].op = op;
                refusals->items[refusals->count].port = port;
                refusals->items[refusals->count].rule = rule;
                refusals->count++;
        } else {
                refusals->dropped++;
        }
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
        static const char *const names[] = { "connect", "dns", "http" };

        return (size_t) op < sizeof(names) / sizeof(names[0]) ? names[op] : "connect";
}

const char *dsh_network_rule_name(dsh_network_rule rule)
{
        static const char *const names[] = { "network-off", "host-not-allowed", "address-not-resolved",
                                             "metadata-address", "sni-mismatch", "protocol-not-allowed",
                                             "local-port", "bad-request" };

        return (size_t) rule < sizeof(names) / sizeof(names[0]) ? names[rule] : "network-off";
}

const char *dsh_network_mode_name(dsh_network_mode mode)
{
        switch (mode) {
        case DSH_NETWORK_ON:
                return "on";
        case DSH_NETWORK_OFF:
                return "off";
        case DSH_NETWORK_ALLOW_LIST:
                return "allow-list";
        }
        return "off";
}

void dsh_network_policy_clear(dsh_network_policy *network)
{
        dsh_strv_free(network->allow_hosts);
        free(network->allow_local_ports);
        free(network->dns_upstream);
        *network = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
}

int dsh_network_policy_copy(dsh_network_policy *out, const dsh_network_policy *in)
{
        size_t ports = in->allow_local_port_count;

        *out = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
        out->mode = in->mode;
        if ((in->allow_hosts && !(out->allow_hosts = dsh_strv_copy(in->allow_hosts))) ||
            (in->dns_upstream && !(out->dns_upstream = strdup(in->dns_upstream))) ||
            (ports > 0 && !(out->allow_local_ports = calloc(ports, sizeof(unsigned short))))) {
                dsh_network_policy_clear(out);
                return -ENOMEM;
        }
        if (ports > 0)
                memcpy(out->allow_local_ports, in->allow_local_ports, ports * sizeof(unsigned short));
        out->allow_local_port_count = ports;
        return 0;
}
