/* SPDX-License-Identifier: MIT */
/*
 * What serve and mcp both answer with: a library error of their own making,
 * and the library's encoders' results (include/dsh-sandbox/json.h) read
 * back into JSON values, so that each front end sends the very object the
 * library writes rather than an encoding of its own.
 */
#ifndef DSH_SERVICE_RESULTS_H
#define DSH_SERVICE_RESULTS_H

#include <jansson.h>

#include "dsh-sandbox/bash-tool.h"
#include "dsh-sandbox/denial.h"
#include "dsh-sandbox/file-guard.h"
#include "dsh-sandbox/sandbox.h"

/* Sets `error` (cleared first) to DSH_ERROR_SYSTEM with `errno_value` and a message; returns -errno_value. */
int service_error_set(dsh_error *error, int errno_value, const char *format, ...) __attribute__((format(printf, 3, 4)));

/*
 * What a dsh_json_encode_*() call returned (`encoded`, `text`) as a new
 * JSON value; frees `text`.  NULL with `error` set when the encoder failed
 * or memory ran out.
 */
json_t *service_encoded_json(int encoded, char *text, dsh_error *error);

/* The bash tool's result object (dsh_json_encode_bash_result), as a new JSON value; NULL with `error` set. */
json_t *service_bash_result_json(const dsh_bash_result *result, dsh_error *error);

/* The file guard's result object (dsh_json_encode_file_result), as a new JSON value; NULL with `error` set. */
json_t *service_file_result_json(const dsh_file_result *result, dsh_error *error);

/* A denial's object (dsh_json_encode_denial), as a new JSON value; NULL with `error` set. */
json_t *service_denial_json(const dsh_denial *denial, dsh_error *error);

#endif
