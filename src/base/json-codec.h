/* SPDX-License-Identifier: MIT */
/*
 * The JSON codec at the json_t level, for modules of the library that put
 * these shapes inside larger messages (the service's requests and results)
 * and read them out of them.  The public dsh_json_* functions
 * (dsh-sandbox/json.h) are these plus text.
 *
 * `what` names the value in error messages, as the caller's reader knows it
 * ("facts", "params.policy"): "<what>: <member path> <what is wrong>".
 * Encoders return a new reference, or NULL with `error` set
 * (DSH_ERROR_INVALID_INPUT naming a member that JSON cannot carry, or
 * DSH_ERROR_SYSTEM / ENOMEM).  Decoders take a borrowed value, return 0 or
 * -EINVAL / -ENOMEM with `error` set, and leave their output cleared on
 * failure.  The rules are those of dsh-sandbox/json.h.
 */
#ifndef DSH_SANDBOX_JSON_CODEC_H
#define DSH_SANDBOX_JSON_CODEC_H

#include <jansson.h>

#include "dsh-sandbox/json.h"
#include "base/util.h"

DSH_INTERNAL json_t *dsh_json_confined_argv_value(const dsh_confined_argv *facts, const char *what, dsh_error *error);
DSH_INTERNAL int dsh_json_confined_argv_from_value(const json_t *value, const char *what, dsh_confined_argv *facts_out,
                                                   dsh_error *error);

DSH_INTERNAL json_t *dsh_json_policy_value(const dsh_policy *policy, const char *what, dsh_error *error);
DSH_INTERNAL int dsh_json_policy_from_value(const json_t *value, const char *what, dsh_policy *policy_out,
                                            dsh_error *error);

DSH_INTERNAL json_t *dsh_json_error_value(const dsh_error *value, const char *what, dsh_error *error);
DSH_INTERNAL int dsh_json_error_from_value(const json_t *value, const char *what, dsh_error *value_out,
                                           dsh_error *error);

DSH_INTERNAL json_t *dsh_json_probe_report_value(const dsh_probe_report *report, const char *what, dsh_error *error);

DSH_INTERNAL json_t *dsh_json_session_value(dsh_session *session, dsh_mode default_mode, const char *what,
                                            dsh_error *error);
DSH_INTERNAL json_t *dsh_json_session_list_value(dsh_session_store *store, dsh_mode default_mode,
                                                 dsh_json_session_skipped_fn skipped, void *data, const char *what,
                                                 dsh_error *error);

DSH_INTERNAL json_t *dsh_json_file_result_value(const dsh_file_result *result, const char *what, dsh_error *error);
DSH_INTERNAL json_t *dsh_json_bash_result_value(const dsh_bash_result *result, const char *what, dsh_error *error);
DSH_INTERNAL int dsh_json_bash_result_from_value(const json_t *value, const char *what, dsh_bash_result *result_out,
                                                 dsh_error *error);
DSH_INTERNAL json_t *dsh_json_bash_escalation_value(const dsh_bash_escalation *escalation, const char *what,
                                                    dsh_error *error);

/* `value` as compact text (the codec's one output format) into `*text_out`, caller frees.  0 or -ENOMEM. */
DSH_INTERNAL int dsh_json_dump(const json_t *value, char **text_out, dsh_error *error);

/*
 * Parses `length` bytes as one JSON object, strictly (duplicate keys
 * refused, NUL bytes in strings kept for the decoders to name): 0 with a new
 * reference in `*value_out`, or -EINVAL with "<what>: not valid JSON: <the
 * parser's reason> at line L, column C" / "<what>: not a JSON object".
 */
DSH_INTERNAL int dsh_json_load_object(const char *text, size_t length, const char *what, json_t **value_out,
                                      dsh_error *error);

#endif
