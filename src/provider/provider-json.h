/* SPDX-License-Identifier: MIT */
/*
 * The provider's shapes at the json_t level, for the remote provider, which
 * puts them inside its messages and reads them out of them: the confined
 * argv and its facts, the probe report.  The rules are those of
 * dsh-sandbox/json.h.  `what` names the value in messages ("facts");
 * encoders return a new reference, or NULL with `error` set; the decoder
 * takes a borrowed value, returns 0 or -EINVAL / -ENOMEM with `error` set,
 * and leaves `facts_out` cleared on failure.
 */
#ifndef DSH_SANDBOX_PROVIDER_JSON_H
#define DSH_SANDBOX_PROVIDER_JSON_H

#include <jansson.h>

#include "dsh-sandbox/provider.h"
#include "base/util.h"

DSH_INTERNAL json_t *dsh_json_confined_argv_value(const dsh_confined_argv *facts, const char *what, dsh_error *error);
DSH_INTERNAL int dsh_json_confined_argv_from_value(const json_t *value, const char *what, dsh_confined_argv *facts_out,
                                                   dsh_error *error);

DSH_INTERNAL json_t *dsh_json_probe_report_value(const dsh_probe_report *report, const char *what, dsh_error *error);

#endif
