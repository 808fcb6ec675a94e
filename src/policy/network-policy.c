/* SPDX-License-Identifier: MIT */
/*
 * The network dimension of a policy (dsh-sandbox/sandbox.h,
 * docs/network.md): its words, the checks of its entries, ownership, and
 * what dsh_policy_prepare() makes of it before any backend sees it.
 *
 * The checks are the ones every front end shares (the CLI's flags, the
 * config's `network`, serve's params, the library): an entry the checks
 * refuse is refused everywhere with the same sentence.  prepare() expands
 * the named sets, so that the gate, the proxy and the DNS stub only ever
 * see plain patterns, and refuses every combination that would read as a
 * restriction the call does not get.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/host-pattern.h"
#include "base/network-rules.h"
#include "policy/network-policy.h"

/* A prepared allow-list holds at most this many entries (the proxy and the stub scan them per request). */
#define NETWORK_ALLOW_HOSTS_MAX 1024
#define NETWORK_LOCAL_PORTS_MAX 1024

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
        return "invalid";
}

int dsh_network_mode_parse(const char *name, dsh_network_mode *mode_out)
{
        if (!name)
                return -EINVAL;
        if (strcmp(name, "on") == 0)
                *mode_out = DSH_NETWORK_ON;
        else if (strcmp(name, "off") == 0)
                *mode_out = DSH_NETWORK_OFF;
        else
                return -EINVAL;
        return 0;
}

const char *const *dsh_network_named_sets(void)
{
        return dsh_host_named_sets();
}

const char *const *dsh_network_named_set(const char *name)
{
        return dsh_host_named_set(name);
}

int dsh_network_pattern_check(const char *pattern, const char **reason)
{
        const char *unused = NULL;
        dsh_host_pattern parsed;

        if (!reason)
                reason = &unused;
        *reason = NULL;
        if (pattern && pattern[0] == '@') {
                if (dsh_host_named_set(pattern))
                        return 0;
                *reason = "an unknown named set (@npm, @pypi, @github, @gitlab, @crates, @go and @debian are known)";
                return -EINVAL;
        }
        return dsh_host_pattern_parse(pattern, &parsed, reason);
}

/*
 * "IPV4:PORT" or "[IPV6]:PORT", the port 1..65535: the resolver the DNS
 * stub forwards allowed names to.  A name is refused (resolving it would
 * need a resolver first, and the host's would then decide where the
 * command's queries go), so is a missing port.
 */
int dsh_network_upstream_check(const char *upstream)
{
        dsh_host_pattern parsed;

        if (!upstream || dsh_host_pattern_parse(upstream, &parsed, NULL) < 0)
                return -EINVAL;
        if (parsed.kind != DSH_HOST_PATTERN_IPV4 && parsed.kind != DSH_HOST_PATTERN_IPV6)
                return -EINVAL;
        return parsed.port != 0 ? 0 : -EINVAL;
}

void dsh_network_policy_clear(dsh_network_policy *network)
{
        if (!network)
                return;
        dsh_strv_free(network->allow_hosts);
        free(network->allow_local_ports);
        free(network->dns_upstream);
        *network = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
}

int dsh_network_policy_copy(dsh_network_policy *out, const dsh_network_policy *in)
{
        *out = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
        out->mode = in->mode;
        if (in->allow_hosts && !(out->allow_hosts = dsh_strv_copy(in->allow_hosts)))
                goto out_of_memory;
        /* A count without ports is kept as it is, for dsh_policy_prepare() to refuse: never read from NULL. */
        out->allow_local_port_count = in->allow_local_port_count;
        if (in->allow_local_port_count > 0 && in->allow_local_ports) {
                out->allow_local_ports = calloc(in->allow_local_port_count, sizeof(*out->allow_local_ports));
                if (!out->allow_local_ports)
                        goto out_of_memory;
                memcpy(out->allow_local_ports, in->allow_local_ports,
                       in->allow_local_port_count * sizeof(*out->allow_local_ports));
        }
        if (in->dns_upstream && !(out->dns_upstream = strdup(in->dns_upstream)))
                goto out_of_memory;
        return 0;
out_of_memory:
        dsh_network_policy_clear(out);
        return -ENOMEM;
}

/* ----------------------------------------------------------- prepare -- */

static bool strv_has(char *const *strv, const char *value)
{
        for (; strv && *strv; strv++)
                if (strcmp(*strv, value) == 0)
                        return true;
        return false;
}

/* `pattern`, or the patterns of the set it names, appended to `prepared` unless there already. */
static int append_expanded(char ***prepared, const char *pattern)
{
        const char *const *set = pattern[0] == '@' ? dsh_host_named_set(pattern) : NULL;
        const char *const sole[] = { pattern, NULL };

        for (const char *const *entry = set ? set : sole; *entry; entry++) {
                if (strv_has(*prepared, *entry))
                        continue;
                if (dsh_strv_append(prepared, *entry) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int entry_error(dsh_error *error, const char *entry, const char *reason)
{
        dsh_autofree char *printable = dsh_error_printable_text(entry);

        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "network: allow-list entry \"%s\": %s",
                             printable ? printable : "?", reason);
}

static int prepare_allow_hosts(dsh_network_policy *network, dsh_error *error)
{
        char **prepared = NULL;

        for (char **entry = network->allow_hosts; entry && *entry; entry++) {
                const char *reason = NULL;

                if (dsh_network_pattern_check(*entry, &reason) < 0) {
                        dsh_strv_free(prepared);
                        return entry_error(error, *entry, reason);
                }
                if (append_expanded(&prepared, *entry) < 0) {
                        dsh_strv_free(prepared);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
        }
        if (dsh_strv_length(prepared) > NETWORK_ALLOW_HOSTS_MAX) {
                dsh_strv_free(prepared);
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, E2BIG,
                                     "network: an allow-list holds at most %d entries", NETWORK_ALLOW_HOSTS_MAX);
        }
        dsh_strv_free(network->allow_hosts);
        network->allow_hosts = prepared;
        return 0;
}

/* Port 0 is no port; a repeated one is dropped, the order kept. */
static int prepare_local_ports(dsh_network_policy *network, dsh_error *error)
{
        size_t kept = 0;

        if (network->allow_local_port_count > NETWORK_LOCAL_PORTS_MAX)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, E2BIG,
                                     "network: at most %d allowed local ports", NETWORK_LOCAL_PORTS_MAX);
        if (network->allow_local_port_count > 0 && !network->allow_local_ports)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "network: allowed local ports counted but not given");
        for (size_t i = 0; i < network->allow_local_port_count; i++) {
                unsigned short port = network->allow_local_ports[i];
                bool seen = false;

                if (port == 0)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                             "network: allowed local port 0: a port is a number from 1 to 65535");
                for (size_t j = 0; j < kept && !seen; j++)
                        seen = network->allow_local_ports[j] == port;
                if (!seen)
                        network->allow_local_ports[kept++] = port;
        }
        network->allow_local_port_count = kept;
        return 0;
}

int dsh_network_policy_prepare(dsh_network_policy *network, dsh_mode mode, dsh_error *error)
{
        int result = dsh_network_rules_check(network, mode, error);

        if (result < 0)
                return result;
        if (network->dns_upstream && dsh_network_upstream_check(network->dns_upstream) < 0) {
                dsh_autofree char *printable = dsh_error_printable_text(network->dns_upstream);

                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "network: DNS upstream \"%s\" is not IPV4:PORT or [IPV6]:PORT",
                                     printable ? printable : "?");
        }
        result = prepare_allow_hosts(network, error);
        if (result == 0)
                result = prepare_local_ports(network, error);
        if (result < 0)
                return result;
        /* An allow-list that allows no host is OFF with its local ports: no proxy, no stub to start. */
        if (network->mode == DSH_NETWORK_ALLOW_LIST && dsh_strv_length(network->allow_hosts) == 0)
                network->mode = DSH_NETWORK_OFF;
        return 0;
}
