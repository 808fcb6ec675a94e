/* SPDX-License-Identifier: MIT */
/*
 * TEMPORARY (issue 21, part D's branch only): what parts B (core/) and A
 * (the policy's public checks) add, declared here so that the provider's
 * wiring builds before they land.  Every function defined in
 * network-pending.c fails closed (-ENOSYS: the call is refused, never run
 * with the network open).  The lead deletes network-pending.c and this
 * header at the merge: each definition collides with the real one (a
 * duplicate symbol at link time), so it cannot survive by mistake.
 *   - dsh_metadata_supervisor_set_network(): B's, core/metadata-supervisor.h;
 *   - dsh_pending_install_metadata_filter(): B's dsh_install_metadata_filter()
 *     with its new `network` argument; spawn.c's one call becomes
 *     dsh_install_metadata_filter(plan->metadata, plan->network,
 *     plan->metadata_socket, plan->terminal_filter) (B's argument order;
 *     B's branch passes DSH_NETWORK_FILTER_ON there and moves the
 *     capability drop before the filter: keep B's order, pass plan->network);
 *   - dsh_network_refusals_*(), dsh_network_op_name(), dsh_network_rule_name():
 *     B's core/network-refusals.c;
 *   - dsh_network_mode_name(), dsh_network_policy_clear(),
 *     dsh_network_policy_copy(): A's (sandbox.h).
 */
#ifndef DSH_SANDBOX_NETWORK_PENDING_H
#define DSH_SANDBOX_NETWORK_PENDING_H

#include <stdbool.h>

#include "core/metadata-filter.h"
#include "core/metadata-supervisor.h"
#include "core/network-gate.h"

int dsh_metadata_supervisor_set_network(dsh_metadata_supervisor *supervisor, const dsh_network_settings *settings);

int dsh_pending_install_metadata_filter(dsh_metadata_policy policy, int socket_fd, bool terminal_rule,
                                        dsh_network_filter network);

#endif
