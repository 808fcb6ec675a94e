/* SPDX-License-Identifier: MIT */
/* One spawned call's network: see call-network.h. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "core/metadata-tracee.h"
#include "core/network-refusals.h"
#include "core/socket-call.h"
#include "network/network-service.h"
#include "provider/call-network.h"

struct dsh_call_network {
        dsh_network_filter filter;
        dsh_network_refusals refusals;  /* initialised at start; shared by the supervisor and the service */
        dsh_network_service *service;   /* ALLOW_LIST; NULL once stopped */
        unsigned short *local_ports;    /* the policy's, copied: the prepared policy goes before the call ends */
        size_t local_port_count;
        dsh_network_settings settings;  /* what the supervisor was told; points into this struct */
        bool finished;                  /* the records handed out */
        /*
         * The call's and, once told, the supervisor's (released when it is
         * freed): a supervisor thread stuck past its stop is detached and may
         * still ask the gate or add a record, so the service and the list
         * live until both let go.
         */
        atomic_int references;
};

static void call_network_destroy(dsh_call_network *network)
{
        dsh_network_service_stop(network->service);
        dsh_network_refusals_destroy(&network->refusals);
        free(network->local_ports);
        free(network);
}

static void call_network_release(void *data)
{
        dsh_call_network *network = data;

        if (atomic_fetch_sub(&network->references, 1) == 1)
                call_network_destroy(network);
}

dsh_network_filter dsh_call_network_filter_of(const dsh_network_policy *network)
{
        switch (network->mode) {
        case DSH_NETWORK_ON:
                return DSH_NETWORK_FILTER_ON;
        case DSH_NETWORK_OFF:
                return DSH_NETWORK_FILTER_OFF;
        case DSH_NETWORK_ALLOW_LIST:
                return DSH_NETWORK_FILTER_ALLOW_LIST;
        }
        return DSH_NETWORK_FILTER_OFF;  /* an unknown value holds the most */
}

bool dsh_call_network_private_loopback(const dsh_network_policy *network)
{
        return network->mode == DSH_NETWORK_OFF && network->allow_local_port_count == 0;
}

int dsh_call_network_check_confine(const dsh_network_policy *network, dsh_mode mode, bool supervised,
                                   dsh_error *error)
{
        if (network->mode == DSH_NETWORK_ALLOW_LIST)
                return dsh_error_set_unavailable(error, mode, DSH_CALL_NETWORK_CONFINE_ALLOW_LIST_REASON);
        if (network->mode == DSH_NETWORK_OFF && !supervised && network->allow_local_port_count > 0)
                return dsh_error_set_unavailable(error, mode, DSH_CALL_NETWORK_CONFINE_LOCAL_PORT_REASON);
        return 0;
}

/*
 * The allow-list is decided call by call by the supervisor (a connect
 * redirected to the proxy, port 53 to the stub): one that cannot read the
 * command's calls or take its sockets could only refuse them all, and a
 * policy that names hosts would then silently be "off".  Refused instead.
 */
static int check_allow_list_host(dsh_mode mode, dsh_error *error)
{
        const char *problem = NULL;
        char detail[512];

        if (dsh_metadata_supervisor_check_host(&problem) == 0 && dsh_socket_call_check_host(&problem) == 0)
                return 0;
        snprintf(detail, sizeof(detail), "%s; the network allow-list is enforced by the supervisor, call by call, "
                                         "so it is refused here rather than held as \"off\"", problem);
        return dsh_error_set_unavailable(error, mode, detail);
}

static int start_service(dsh_call_network *network, const dsh_policy *policy, dsh_error *error)
{
        char *reason = NULL;
        char detail[640];
        int result = dsh_network_service_start(&policy->network, &network->refusals, &network->service, &reason);

        if (result == 0)
                return 0;
        network->service = NULL;
        snprintf(detail, sizeof(detail), "the network allow-list's proxy and DNS stub cannot start: %s",
                 reason ? reason : strerror(-result));
        free(reason);
        return dsh_error_set_unavailable(error, policy->mode, detail);
}

int dsh_call_network_start(const dsh_policy *policy, dsh_call_network **network_out, dsh_error *error)
{
        const dsh_network_policy *wanted = &policy->network;
        dsh_call_network *network;
        size_t ports = wanted->allow_local_port_count;
        int result;

        *network_out = NULL;
        if (wanted->mode == DSH_NETWORK_ON)
                return 0;
        if (wanted->mode == DSH_NETWORK_ALLOW_LIST && check_allow_list_host(policy->mode, error) < 0)
                return -ENOSYS;
        network = calloc(1, sizeof(*network));
        if (network && ports > 0 && !(network->local_ports = calloc(ports, sizeof(unsigned short)))) {
                free(network);
                network = NULL;
        }
        if (!network)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (ports > 0)
                memcpy(network->local_ports, wanted->allow_local_ports, ports * sizeof(unsigned short));
        network->local_port_count = ports;
        network->filter = dsh_call_network_filter_of(wanted);
        atomic_init(&network->references, 1);
        result = dsh_network_refusals_init(&network->refusals);
        if (result < 0) {
                free(network->local_ports);
                free(network);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot record the network's refusals: %s",
                                     strerror(-result));
        }
        /* Started before the spawn: the command's first connect already finds its gate. */
        if (wanted->mode == DSH_NETWORK_ALLOW_LIST && start_service(network, policy, error) < 0) {
                dsh_call_network_free(network);
                return -ENOSYS;
        }
        *network_out = network;
        return 0;
}

dsh_network_filter dsh_call_network_filter(const dsh_call_network *network)
{
        return network ? network->filter : DSH_NETWORK_FILTER_ON;
}

int dsh_call_network_supervise(dsh_call_network *network, dsh_metadata_supervisor *supervisor, bool loopback_private)
{
        if (!network)
                return 0;
        network->settings = (dsh_network_settings) {
                .filter = network->filter,
                .local_ports = network->local_ports,
                .local_port_count = network->local_port_count,
                .loopback_private = loopback_private,
                .gate = network->service ? dsh_network_service_gate(network->service) : NULL,
                .refusals = &network->refusals,
                .release = call_network_release,
                .release_data = network,
        };
        int result;

        /* The allow-list without its gate would decide nothing: refused rather than told half. */
        if (network->filter == DSH_NETWORK_FILTER_ALLOW_LIST && !network->settings.gate)
                return -ENOSYS;
        atomic_fetch_add(&network->references, 1);
        result = dsh_metadata_supervisor_set_network(supervisor, &network->settings);
        if (result < 0)
                atomic_fetch_sub(&network->references, 1);  /* not taken: it will never release */
        return result;
}

static int append_pair(char ***pairs, const char *name, const char *value)
{
        if (dsh_strv_append(pairs, name) < 0 || dsh_strv_append(pairs, value) < 0)
                return -ENOMEM;
        return 0;
}

/* RES_OPTIONS with "use-vc" after the caller's own options (the last word of a kind wins in glibc). */
static int append_resolver_options(char ***pairs)
{
        const char *caller = getenv("RES_OPTIONS");
        dsh_autofree char *options = NULL;

        if (asprintf(&options, "%s%suse-vc", caller ? caller : "", caller && caller[0] ? " " : "") < 0)
                return -ENOMEM;
        return append_pair(pairs, "RES_OPTIONS", options);
}

int dsh_call_network_proxy_variables(const char *proxy_url, char ***pairs)
{
        static const char *const proxy_names[] = { "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy",
                                                   "https_proxy", "all_proxy", NULL };
        static const char *const no_proxy_names[] = { "NO_PROXY", "no_proxy", NULL };

        for (const char *const *name = proxy_names; *name; name++)
                if (append_pair(pairs, *name, proxy_url) < 0)
                        return -ENOMEM;
        /* Loopback is the command's own (or an allowed local port): never sent to the proxy, which refuses it. */
        for (const char *const *name = no_proxy_names; *name; name++)
                if (append_pair(pairs, *name, "localhost,127.0.0.1,::1") < 0)
                        return -ENOMEM;
        return append_resolver_options(pairs);
}

int dsh_call_network_add_variables(const dsh_call_network *network, char ***pairs)
{
        if (!network || network->filter != DSH_NETWORK_FILTER_ALLOW_LIST || !network->service)
                return 0;
        return dsh_call_network_proxy_variables(dsh_network_service_proxy_url(network->service), pairs);
}

void dsh_refused_connections_free(dsh_refused_connection *records, size_t count)
{
        for (size_t i = 0; records && i < count; i++) {
                free(records[i].op);
                free(records[i].host);
                free(records[i].rule);
                free(records[i].source);
        }
        free(records);
}

/* The core records as public ones; a record that cannot be copied is counted as dropped. */
static size_t copy_records(dsh_network_refusals *refusals, dsh_refused_connection **records_out,
                           unsigned long *dropped_out)
{
        dsh_refused_connection *records = refusals->count ? calloc(refusals->count, sizeof(*records)) : NULL;
        size_t count = 0;

        *dropped_out = refusals->dropped;
        for (size_t i = 0; i < refusals->count; i++) {
                const dsh_network_refusal *item = &refusals->items[i];
                dsh_refused_connection record = { NULL, NULL, item->port, NULL, NULL };

                if (records) {
                        record.op = strdup(dsh_network_op_name(item->op));
                        record.host = strdup(item->host ? item->host : "");
                        record.rule = strdup(dsh_network_rule_name(item->rule));
                        record.source = strdup(dsh_network_source_name(item->source));
                }
                if (record.op && record.host && record.rule && record.source) {
                        records[count++] = record;
                        continue;
                }
                free(record.op);
                free(record.host);
                free(record.rule);
                free(record.source);
                (*dropped_out)++;
        }
        if (count == 0) {
                free(records);
                records = NULL;
        }
        *records_out = records;
        return count;
}

size_t dsh_call_network_finish(dsh_call_network *network, dsh_refused_connection **records_out,
                               unsigned long *dropped_out)
{
        size_t count;

        *records_out = NULL;
        *dropped_out = 0;
        if (!network || network->finished)
                return 0;
        network->finished = true;
        /*
         * The supervisor is normally freed by now, and the service is then the
         * last writer of the records: stopped first, so none comes after the
         * copy.  One stuck past its stop still holds its reference, and the
         * service stays up for it (call_network_destroy() stops it).
         */
        if (atomic_load(&network->references) == 1) {
                dsh_network_service_stop(network->service);
                network->service = NULL;
        }
        pthread_mutex_lock(&network->refusals.lock);
        count = copy_records(&network->refusals, records_out, dropped_out);
        pthread_mutex_unlock(&network->refusals.lock);
        return count;
}

void dsh_call_network_free(dsh_call_network *network)
{
        if (network)
                call_network_release(network);
}

char **dsh_call_network_modes_held(const char *backend_name)
{
        const char *problem = NULL;
        char **modes = calloc(1, sizeof(char *));
        bool confining = strcmp(backend_name, "landlock") == 0 || strcmp(backend_name, "bwrap") == 0;
        int result = modes ? dsh_strv_append(&modes, dsh_network_mode_name(DSH_NETWORK_ON)) : -ENOMEM;

        if (result == 0 && confining)
                result = dsh_strv_append(&modes, dsh_network_mode_name(DSH_NETWORK_OFF));
        if (result == 0 && confining && dsh_metadata_supervisor_check_host(&problem) == 0 &&
            dsh_socket_call_check_host(&problem) == 0)
                result = dsh_strv_append(&modes, dsh_network_mode_name(DSH_NETWORK_ALLOW_LIST));
        if (result < 0) {
                dsh_strv_free(modes);
                return NULL;
        }
        return modes;
}
