/* SPDX-License-Identifier: MIT */
/*
 * The network dimension's rule about the mode it comes with, one copy
 * beneath both the policy (dsh_policy_prepare(), policy/network-policy.c)
 * and the provider, which runs a danger-full-access call without preparing
 * its policy (nothing is confined, so nothing is prepared) and so must ask
 * here before it spawns: a network policy it dropped there would be a
 * restriction silently not held.
 */
#ifndef DSH_SANDBOX_NETWORK_RULES_H
#define DSH_SANDBOX_NETWORK_RULES_H

#include "dsh-sandbox/sandbox.h"
#include "base/util.h"

/*
 * Whether `network` can be held under `mode`: its mode known
 * (DSH_ERROR_INVARIANT otherwise); ON without entries, local ports or an
 * upstream, OFF without entries (DSH_ERROR_INVALID_INPUT otherwise); any
 * mode but ON under danger-full-access is DSH_ERROR_SANDBOX_UNAVAILABLE
 * "danger-full-access confines nothing, so no network policy can be held;
 * use read-only or workspace-write".  Returns 0 or -EINVAL with `error` set.
 * network-rules.c.
 */
DSH_INTERNAL int dsh_network_rules_check(const dsh_network_policy *network, dsh_mode mode, dsh_error *error);

#endif
