/* SPDX-License-Identifier: MIT */
/* The network dimension's rule about its mode and the file-effect mode (network-rules.h). */
#include <errno.h>

#include "base/error.h"
#include "base/network-rules.h"

/*
 * Under ON the command reaches everything, so entries, local ports or an
 * upstream given with it say a restriction the call would not get: a
 * caller that built such a policy misread it, and is told so rather than
 * run unrestricted.  danger-full-access confines nothing, the network
 * included: no backend could hold a network policy there.
 */
int dsh_network_rules_check(const dsh_network_policy *network, dsh_mode mode, dsh_error *error)
{
        if ((unsigned) network->mode > DSH_NETWORK_ALLOW_LIST)
                return dsh_error_set(error, DSH_ERROR_INVARIANT, EINVAL, "network carries unknown mode %d",
                                     (int) network->mode);
        if (network->mode == DSH_NETWORK_ON &&
            (dsh_strv_length(network->allow_hosts) > 0 || network->allow_local_port_count > 0 || network->dns_upstream))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "network: allowed hosts, allowed local ports and a DNS upstream restrict the "
                                     "network, which is on: choose off or an allow-list");
        if (network->mode == DSH_NETWORK_OFF && dsh_strv_length(network->allow_hosts) > 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "network: allowed hosts select the allow-list; the network cannot be off too");
        if (network->mode != DSH_NETWORK_ON && mode == DSH_MODE_DANGER_FULL_ACCESS)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_UNAVAILABLE, ENOSYS,
                                     "danger-full-access confines nothing, so no network policy can be held; use "
                                     "read-only or workspace-write");
        return 0;
}

