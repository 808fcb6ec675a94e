/* SPDX-License-Identifier: MIT */
/* The remote service's local side: the destination's endpoint, found or started (remote-endpoint.c). */
#ifndef DSH_SANDBOX_REMOTE_ENDPOINT_H
#define DSH_SANDBOX_REMOTE_ENDPOINT_H

#include "dsh-sandbox/remote.h"
#include "base/util.h"

/*
 * A connection to the destination's remote service, its hello already read
 * and checked (nothing sent yet): the socket's fd (blocking, close-on-exec),
 * or -1 when there is none to use — sharing is the user's or off, the
 * control directory is unsafe, the remote has no service, forwarding is
 * refused — and the call runs a session of its own.
 */
DSH_INTERNAL int dsh_remote_service_connect(const dsh_remote_target *target);

#endif
