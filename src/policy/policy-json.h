/* SPDX-License-Identifier: MIT */
/*
 * The policy's shapes at the json_t level, for modules that put them inside
 * larger messages or read them out of them (a request's "params.policy"):
 * the policy, a session, the session list.  The rules are those of
 * dsh-sandbox/json.h.  `what` names the value in messages; encoders return
 * a new reference, or NULL with `error` set; the decoder takes a borrowed
 * value, returns 0 or -EINVAL / -ENOMEM with `error` set, and leaves
 * `policy_out` cleared on failure.
 */
#ifndef DSH_SANDBOX_POLICY_JSON_H
#define DSH_SANDBOX_POLICY_JSON_H

#include <jansson.h>

#include "dsh-sandbox/json.h"
#include "base/json-core.h"
#include "base/util.h"

DSH_INTERNAL json_t *dsh_json_policy_value(const dsh_policy *policy, const char *what, dsh_error *error);
DSH_INTERNAL int dsh_json_policy_from_value(const json_t *value, const char *what, dsh_policy *policy_out,
                                            dsh_error *error);

/*
 * The network dimension in the config's shape (docs/configuration.md,
 * "network"): "on", "off", or {"allowHosts": [...], "allowLocalPorts":
 * [...], "dnsUpstream": "IP:PORT"}, an object without hosts being off with
 * its local ports.  The encoder writes "off" for off without ports or
 * upstream, the object otherwise, "on" for on; it refuses a network whose
 * fields contradict its mode (hosts with off).  The decoder checks every
 * entry (dsh_network_pattern_check(): `"allowHosts"[i] "ENTRY": <reason>`),
 * each port (an integer from 1 to 65535) and the upstream
 * (dsh_network_upstream_check()), refuses unknown keys, and keeps the
 * entries as written (dsh_policy_prepare() expands the named sets).
 * `path` names the value inside `what`'s document.
 */
DSH_INTERNAL json_t *dsh_json_network_value(dsh_json_encoder *encoder, const dsh_network_policy *network,
                                            const dsh_json_path *path);
DSH_INTERNAL int dsh_json_network_from_value(const json_t *value, const char *what, const dsh_json_path *path,
                                             dsh_network_policy *network_out, dsh_error *error);

DSH_INTERNAL json_t *dsh_json_session_value(dsh_session *session, dsh_mode default_mode, const char *what,
                                            dsh_error *error);
DSH_INTERNAL json_t *dsh_json_session_list_value(dsh_session_store *store, dsh_mode default_mode,
                                                 dsh_json_session_skipped_fn skipped, void *data, const char *what,
                                                 dsh_error *error);

#endif
