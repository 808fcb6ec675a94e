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
#include "base/util.h"

DSH_INTERNAL json_t *dsh_json_policy_value(const dsh_policy *policy, const char *what, dsh_error *error);
DSH_INTERNAL int dsh_json_policy_from_value(const json_t *value, const char *what, dsh_policy *policy_out,
                                            dsh_error *error);

DSH_INTERNAL json_t *dsh_json_session_value(dsh_session *session, dsh_mode default_mode, const char *what,
                                            dsh_error *error);
DSH_INTERNAL json_t *dsh_json_session_list_value(dsh_session_store *store, dsh_mode default_mode,
                                                 dsh_json_session_skipped_fn skipped, void *data, const char *what,
                                                 dsh_error *error);

#endif
