/* SPDX-License-Identifier: MIT */
/*
 * The file guard's result at the json_t level (dsh-sandbox/json.h's
 * "file" shape): a new reference, or NULL with `error` set naming a member
 * JSON cannot carry.
 */
#ifndef DSH_SANDBOX_FILE_GUARD_JSON_H
#define DSH_SANDBOX_FILE_GUARD_JSON_H

#include <jansson.h>

#include "dsh-sandbox/file-guard.h"
#include "base/util.h"

DSH_INTERNAL json_t *dsh_json_file_result_value(const dsh_file_result *result, const char *what, dsh_error *error);

#endif
