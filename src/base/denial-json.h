/* SPDX-License-Identifier: MIT */
/*
 * A denial (dsh-sandbox/denial.h) as a JSON value, for every producer and
 * consumer inside the library: the bash result, the session's store, the
 * service, `why`.  The shape is json.h's "denial".  Decoding is strict on
 * the shape (known members, their types) and lenient on names: an `op`,
 * `source` or grant `kind` this version does not know is refused, a `rule`
 * is kept as written (a newer peer's new rule must not lose the record).
 */
#ifndef DSH_SANDBOX_BASE_DENIAL_JSON_H
#define DSH_SANDBOX_BASE_DENIAL_JSON_H

#include "dsh-sandbox/denial.h"
#include "base/json-core.h"

/* The record as an object (NULL only once the encoder has failed). */
DSH_INTERNAL json_t *dsh_json_denial_value(dsh_json_encoder *encoder, const dsh_denial *denial,
                                           const dsh_json_path *path);

/* The records as an array. */
DSH_INTERNAL json_t *dsh_json_denials_array(dsh_json_encoder *encoder, const dsh_denials *denials,
                                            const dsh_json_path *path);

/* A session's kept record: the record's members, then "at" and "surface" (the store's line, session denials' item). */
DSH_INTERNAL json_t *dsh_json_session_denial_value(dsh_json_encoder *encoder, const dsh_session_denial *kept,
                                                   const dsh_json_path *path);

/* Reads one record at `path` into `out` (DSH_DENIAL_INIT; cleared on failure).  0 or -EINVAL/-ENOMEM. */
DSH_INTERNAL int dsh_json_decode_denial(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path,
                                        dsh_denial *out);

/* Reads an array of at most `limit` records into `out` (DSH_DENIALS_INIT). */
DSH_INTERNAL int dsh_json_decode_denials(dsh_json_decoder *decoder, const json_t *array, const dsh_json_path *path,
                                         size_t limit, dsh_denials *out);

#endif
