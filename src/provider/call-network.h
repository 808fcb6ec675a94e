/* SPDX-License-Identifier: MIT */
/*
 * One spawned call's network (docs/network.md, docs/backends.md "The
 * network"): what the provider sets up around a call whose policy is not
 * ON, for either backend — the call's refusal records, its network service
 * under the allow-list (src/network/network-service.h: the proxy and the
 * DNS stub), what the supervisor is told (core/network-gate.h) and the
 * variables the command runs with.  Created by the provider before the
 * backend spawns, held by the child, stopped after the child was waited for.
 *
 * The security argument, in one place:
 *   - fail closed: the allow-list needs a supervisor that can read the
 *     command and take its sockets (pidfd_getfd); where the host forbids
 *     either, or the service cannot start, the call is SANDBOX_UNAVAILABLE
 *     and nothing runs.  OFF needs no gate: where the supervisor cannot read
 *     the command, every inet call it is sent is refused, and the filter
 *     limits the families by itself;
 *   - lifetimes: the records and the gate outlive the supervisor (it is
 *     stopped first, at settle, then the service, then the records are
 *     copied out), so no thread ever writes into freed memory;
 *   - the variables point proxy-aware clients at the proxy; nothing depends
 *     on a client honouring them: the supervisor redirects or refuses every
 *     inet connect whatever the environment says.
 */
#ifndef DSH_SANDBOX_CALL_NETWORK_H
#define DSH_SANDBOX_CALL_NETWORK_H

#include <stdbool.h>
#include <stddef.h>

#include "core/metadata-supervisor.h"
#include "core/network-gate.h"
#include "dsh-sandbox/provider.h"
#include "base/util.h"

typedef struct dsh_call_network dsh_call_network;

/*
 * Why a call's allow-list cannot be held where nothing spawns the command
 * (an argv the harness runs itself): its proxy and DNS stub live in the
 * process that spawns it.
 */
#define DSH_CALL_NETWORK_CONFINE_ALLOW_LIST_REASON \
        "the allow-list's proxy and DNS stub live in the process that spawns the command: use run, bash, serve " \
        "or mcp, not confine"

/* Why an argv the harness runs itself cannot allow a host loopback port (nothing supervises its connects). */
#define DSH_CALL_NETWORK_CONFINE_LOCAL_PORT_REASON \
        "an allowed local port is let through by the supervisor of a spawned call, and an argv the caller runs " \
        "itself has none: use run, bash, serve or mcp, not confine"

/* The filter's view of `network`'s mode (core/network-gate.h). */
DSH_INTERNAL dsh_network_filter dsh_call_network_filter_of(const dsh_network_policy *network);

/*
 * Whether the call's command may be given a network namespace of its own
 * (bwrap --unshare-net): OFF with no allowed local port, where nothing
 * outside the sandbox is to be reached, its own loopback included.
 */
DSH_INTERNAL bool dsh_call_network_private_loopback(const dsh_network_policy *network);

/*
 * Whether confine() (an argv the caller runs itself) can hold `network`:
 * 0, or SANDBOX_UNAVAILABLE for `mode` with the reason (the allow-list;
 * under bwrap, `supervised` false, an allowed local port).
 */
DSH_INTERNAL int dsh_call_network_check_confine(const dsh_network_policy *network, dsh_mode mode, bool supervised,
                                                dsh_error *error);

/*
 * Sets up the network of one spawn under `policy` (prepared): NULL in
 * *network_out under ON (nothing to do); else a new call network with its
 * records, and under the allow-list its service started.  Returns 0, or a
 * negative errno with `error` set: SANDBOX_UNAVAILABLE with the reason when
 * the host cannot hold the policy or the service cannot start (nothing runs).
 */
DSH_INTERNAL int dsh_call_network_start(const dsh_policy *policy, dsh_call_network **network_out,
                                        dsh_error *error);

/* The filter's mode for the call (ON for NULL). */
DSH_INTERNAL dsh_network_filter dsh_call_network_filter(const dsh_call_network *network);

/*
 * Tells `supervisor` the call's network (NULL: nothing; ON needs nothing),
 * `loopback_private` when the backend gave the command a network namespace
 * of its own.  The settings point into `network`, which must outlive the
 * supervisor.  Returns 0 or a negative errno.
 */
DSH_INTERNAL int dsh_call_network_supervise(dsh_call_network *network, dsh_metadata_supervisor *supervisor,
                                            bool loopback_private);

/*
 * Appends the call's variables to `pairs` (NAME, VALUE...; scratch.h's
 * shape): under the allow-list the proxy's URL as HTTP_PROXY, HTTPS_PROXY,
 * ALL_PROXY and their lowercase forms, NO_PROXY/no_proxy for loopback, and
 * RES_OPTIONS with "use-vc" added to the caller's (glibc's resolver then
 * asks over TCP, whose answer it takes from the stub's address; over UDP it
 * drops an answer from another address than the server it asked).  Nothing
 * under ON and OFF.  Returns 0 or -ENOMEM.
 */
DSH_INTERNAL int dsh_call_network_add_variables(const dsh_call_network *network, char ***pairs);

/* The allow-list's variables for a proxy at `proxy_url` (the part of the above that needs no service). */
DSH_INTERNAL int dsh_call_network_proxy_variables(const char *proxy_url, char ***pairs);

/*
 * After the supervisor stopped: stops the service (joins its thread) and
 * copies the records out as public ones (a new array the caller frees with
 * dsh_refused_connections_free(); NULL when none), with the count and the
 * dropped count.  Idempotent: the second time nothing is left.
 */
DSH_INTERNAL size_t dsh_call_network_finish(dsh_call_network *network, dsh_refused_connection **records_out,
                                            unsigned long *dropped_out);

/* Frees `count` public records, their strings and the array (NULL: nothing). */
DSH_INTERNAL void dsh_refused_connections_free(dsh_refused_connection *records, size_t count);

/* Finishes (discarding the records) and frees.  NULL is allowed. */
DSH_INTERNAL void dsh_call_network_free(dsh_call_network *network);

/*
 * The network policies `backend_name` can hold on this host, as names
 * ("on", "off", "allow-list"; a new strv, NULL when out of memory): an
 * operator's runner command only "on"; Landlock and bwrap "on" and "off",
 * and "allow-list" where the supervisor can read the command and take its
 * sockets.
 */
DSH_INTERNAL char **dsh_call_network_modes_held(const char *backend_name);

#endif
