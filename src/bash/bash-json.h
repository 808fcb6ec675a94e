/* SPDX-License-Identifier: MIT */
/*
 * The bash tool's shapes at the json_t level, for the remote provider,
 * which relays a result inside its messages: the result and an escalation
 * request.  The rules are those of dsh-sandbox/json.h.  `what` names the
 * value in messages; encoders return a new reference, or NULL with `error`
 * set; the decoder takes a borrowed value, returns 0 or -EINVAL / -ENOMEM
 * with `error` set, and leaves `result_out` cleared on failure.
 */
#ifndef DSH_SANDBOX_BASH_JSON_H
#define DSH_SANDBOX_BASH_JSON_H

#include <jansson.h>

#include "dsh-sandbox/bash-tool.h"
#include "base/util.h"

DSH_INTERNAL json_t *dsh_json_bash_result_value(const dsh_bash_result *result, const char *what, dsh_error *error);
DSH_INTERNAL int dsh_json_bash_result_from_value(const json_t *value, const char *what, dsh_bash_result *result_out,
                                                 dsh_error *error);
DSH_INTERNAL json_t *dsh_json_bash_escalation_value(const dsh_bash_escalation *escalation, const char *what,
                                                    dsh_error *error);

#endif
