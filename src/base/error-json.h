/* SPDX-License-Identifier: MIT */
/*
 * The typed error's shape at the json_t level, for shapes that carry one
 * (the bash result) and messages that do (the remote provider's).  The
 * rules are those of dsh-sandbox/json.h (dsh_json_encode_error): `what`
 * names the value in messages; the encoder returns a new reference or NULL
 * with `error` set, the decoder 0 or -EINVAL / -ENOMEM with `value_out`
 * left cleared on failure.
 */
#ifndef DSH_SANDBOX_ERROR_JSON_H
#define DSH_SANDBOX_ERROR_JSON_H

#include <jansson.h>

#include "dsh-sandbox/sandbox.h"
#include "base/util.h"

DSH_INTERNAL json_t *dsh_json_error_value(const dsh_error *value, const char *what, dsh_error *error);
DSH_INTERNAL int dsh_json_error_from_value(const json_t *value, const char *what, dsh_error *value_out,
                                           dsh_error *error);

#endif
