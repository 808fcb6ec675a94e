/* SPDX-License-Identifier: MIT */
/*
 * The metadata supervisor of one workspace-write call, for either backend
 * (core/metadata-supervisor.h holds the supervisor and its security
 * argument; docs/supervisor.md).  A backend fills a new supervisor with its
 * roots as the command sees them and its protected paths, then starts it
 * here: the thread waits for the listener on a socket whose other end the
 * backend hands to the process that installs the filter (the spawned child
 * under Landlock, dsh-sandbox-exec inside bwrap through --listener-fd).
 */
#ifndef DSH_SANDBOX_SUPERVISION_H
#define DSH_SANDBOX_SUPERVISION_H

#include "core/metadata-supervisor.h"
#include "dsh-sandbox/sandbox.h"
#include "base/util.h"

/*
 * Whether this host lets a supervisor read a command's arguments
 * (dsh_metadata_supervisor_check_host()).  Returns 0, or
 * SANDBOX_UNAVAILABLE for `mode` with the reason and `consequence` (what the
 * backend refuses for want of it).
 */
DSH_INTERNAL int dsh_supervision_check_host(dsh_mode mode, const char *consequence, dsh_error *error);

struct dsh_call_network;

/*
 * Starts `supervisor` (taken: on failure it is freed) on a new SOCK_SEQPACKET
 * pair; *socket_out receives the end to hand over (close-on-exec, the
 * caller's to close once the spawn returned).  The call's `network` (NULL:
 * the policy "on") is told to it first (call-network.h; `loopback_private`:
 * the backend gave the command a network namespace of its own): every
 * backend's supervisor starts here, so none can start one that enforces a
 * network policy it was never told.  Returns 0, or SANDBOX_UNAVAILABLE for
 * `mode` with the reason.
 */
DSH_INTERNAL int dsh_supervision_start(dsh_metadata_supervisor *supervisor, dsh_mode mode,
                                       struct dsh_call_network *network, bool loopback_private, int *socket_out,
                                       dsh_error *error);

#endif
