/* SPDX-License-Identifier: MIT */
/*
 * TEMPORARY (issue 21, part D's branch only): the network service is part
 * C's.  Until it lands every start fails with its reason, so a call under
 * the allow-list is SANDBOX_UNAVAILABLE and nothing runs.  The lead
 * replaces this file with C's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "network/network-service.h"

int dsh_network_service_start(const dsh_network_policy *network, dsh_network_refusals *refusals,
                              dsh_network_service **service_out, char **reason)
{
        (void) network;
        (void) refusals;
        *service_out = NULL;
        *reason = strdup("this build has no network service yet (issue 21, part C)");
        return -ENOSYS;
}

const dsh_network_gate *dsh_network_service_gate(dsh_network_service *service)
{
        (void) service;
        return NULL;
}

const char *dsh_network_service_proxy_url(const dsh_network_service *service)
{
        (void) service;
        return "http://127.0.0.1:0";
}

void dsh_network_service_stop(dsh_network_service *service)
{
        (void) service;
}
