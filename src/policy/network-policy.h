/* SPDX-License-Identifier: MIT */
/* The network dimension's part of dsh_policy_prepare() (network-policy.c). */
#ifndef DSH_SANDBOX_NETWORK_POLICY_H
#define DSH_SANDBOX_NETWORK_POLICY_H

#include "dsh-sandbox/sandbox.h"
#include "base/util.h"

/*
 * Checks and normalizes `network` in place for a call under `mode`: every
 * allow-list entry passes dsh_network_pattern_check() (else
 * DSH_ERROR_INVALID_INPUT "network: allow-list entry \"E\": <reason>"), the
 * named sets are expanded and duplicates dropped (the order kept), so are
 * repeated local ports (port 0 refused); dns_upstream must pass
 * dsh_network_upstream_check().  Refused as INVALID_INPUT: entries, ports or
 * an upstream with ON (they would read as a restriction the call does not
 * get), entries with OFF.  A mode other than ON under danger-full-access is
 * SANDBOX_UNAVAILABLE.  An allow-list left with no entry becomes OFF (its
 * local ports kept).  Returns 0 or a negative errno with `error` set; on
 * failure `network` is as it was, or with its entries already expanded.
 */
DSH_INTERNAL int dsh_network_policy_prepare(dsh_network_policy *network, dsh_mode mode, dsh_error *error);

#endif
