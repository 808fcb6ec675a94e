/* SPDX-License-Identifier: MIT */
/*
 * The bash tool's shapes (dsh-sandbox/json.h): its result, which the remote
 * provider also reads back, and an escalation request for the approval
 * command.  Built on the JSON core (base/json-core.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/json.h"
#include "base/error-json.h"
#include "base/json-core.h"
#include "bash/bash-json.h"

/* ------------------------------------------------------------ bash tool -- */

/* An exit code or signal number, or null when there is none. */
static json_t *number_or_null(dsh_json_encoder *encoder, bool present, int value)
{
        return dsh_json_encoder_new(encoder, present ? json_integer(value) : json_null());
}

/* One output stream: its text with each byte that is not UTF-8 as \xNN (see json.h), the truncation, the count. */
static json_t *encode_output(dsh_json_encoder *encoder, const dsh_bash_output *output, const dsh_json_path *path)
{
        json_t *object = dsh_json_encoder_new(encoder, json_object());
        size_t escaped_length = 0;
        dsh_autofree char *escaped = NULL;

        if (encoder->failed)
                return object;
        escaped = dsh_json_utf8_escaped_length(output->text ? output->text : "", output->text ? output->length : 0,
                                               &escaped_length);
        if (!escaped) {
                dsh_json_encoder_out_of_memory(encoder);
                return object;
        }
        dsh_json_set_member(encoder, object, "text", dsh_json_text_value(encoder, escaped, escaped_length, path));
        dsh_json_set_member(encoder, object, "truncated",
                            dsh_json_encoder_new(encoder, json_boolean(output->truncated)));
        dsh_json_set_member(encoder, object, "bytes",
                            dsh_json_encoder_new(encoder, json_integer((json_int_t) output->total_bytes)));
        return object;
}

static json_t *encode_bash_sandbox(dsh_json_encoder *encoder, const dsh_bash_sandbox *sandbox,
                                   const dsh_json_path *path)
{
        json_t *object = dsh_json_encoder_new(encoder, json_object());

        dsh_json_set_string_member(encoder, object, path, "mode", dsh_mode_name(sandbox->mode));
        if (sandbox->backend)
                dsh_json_set_string_member(encoder, object, path, "backend", sandbox->backend);
        else
                dsh_json_set_member(encoder, object, "backend", dsh_json_encoder_new(encoder, json_null()));
        if (sandbox->backend && sandbox->confined)
                dsh_json_set_string_member(encoder, object, path, "enforcement",
                                           dsh_enforcement_name(sandbox->enforcement));
        else
                dsh_json_set_member(encoder, object, "enforcement", dsh_json_encoder_new(encoder, json_null()));
        dsh_json_set_member(encoder, object, "denied", dsh_json_encoder_new(encoder, json_boolean(sandbox->denied)));
        dsh_json_set_member(encoder, object, "runnerFailed",
                            dsh_json_encoder_new(encoder, json_boolean(sandbox->runner_failed)));
        return object;
}

/*
 * One refusal record.  Its path is the command's choice, any bytes: a byte
 * that is not UTF-8 is written \xNN (as in the output), so that a command
 * cannot make the whole result unencodable by naming such a path.
 */
static json_t *encode_refused_write(dsh_json_encoder *encoder, const dsh_write_refusal *refusal,
                                    const dsh_json_path *path)
{
        json_t *object = dsh_json_encoder_new(encoder, json_object());
        dsh_autofree char *escaped = NULL;

        if (encoder->failed)
                return object;
        escaped = dsh_json_utf8_escaped(refusal->path);
        if (!escaped) {
                dsh_json_encoder_out_of_memory(encoder);
                return object;
        }
        dsh_json_set_string_member(encoder, object, path, "op", refusal->op);
        dsh_json_set_string_member(encoder, object, path, "path", escaped);
        dsh_json_set_string_member(encoder, object, path, "rule", refusal->rule);
        return object;
}

/* "refusedWrites" (always, [] when none) and "refusedWritesDropped" (only when some were). */
static void encode_refused_writes(dsh_json_encoder *encoder, json_t *object, const dsh_bash_result *result)
{
        dsh_json_path list_path = dsh_json_path_key(&dsh_json_root, "refusedWrites");
        json_t *list = dsh_json_encoder_new(encoder, json_array());

        for (size_t i = 0; i < result->refused_write_count && !encoder->failed; i++) {
                dsh_json_path item_path = dsh_json_path_index(&list_path, i);

                dsh_json_append_element(encoder, list,
                                        encode_refused_write(encoder, &result->refused_writes[i], &item_path));
        }
        dsh_json_set_member(encoder, object, "refusedWrites", list);
        if (result->refused_writes_dropped > 0)
                dsh_json_set_member(encoder, object, "refusedWritesDropped",
                                    dsh_json_encoder_new(encoder,
                                                         json_integer((json_int_t) result->refused_writes_dropped)));
}

/*
 * One network refusal.  Its host is the command's choice too (a name it
 * asked the DNS stub for, the Host header it sent): escaped like a path.
 */
static json_t *encode_refused_connection(dsh_json_encoder *encoder, const dsh_refused_connection *refusal,
                                         const dsh_json_path *path)
{
        json_t *object = dsh_json_encoder_new(encoder, json_object());
        dsh_autofree char *escaped = NULL;

        if (encoder->failed)
                return object;
        escaped = dsh_json_utf8_escaped(refusal->host);
        if (!escaped) {
                dsh_json_encoder_out_of_memory(encoder);
                return object;
        }
        dsh_json_set_string_member(encoder, object, path, "op", refusal->op);
        dsh_json_set_string_member(encoder, object, path, "host", escaped);
        dsh_json_set_member(encoder, object, "port", dsh_json_encoder_new(encoder, json_integer(refusal->port)));
        dsh_json_set_string_member(encoder, object, path, "rule", refusal->rule);
        if (refusal->source)
                dsh_json_set_string_member(encoder, object, path, "source", refusal->source);
        return object;
}

/* "refusedConnections" (always, [] when none) and "refusedConnectionsDropped" (only when some were). */
static void encode_refused_connections(dsh_json_encoder *encoder, json_t *object, const dsh_bash_result *result)
{
        dsh_json_path list_path = dsh_json_path_key(&dsh_json_root, "refusedConnections");
        json_t *list = dsh_json_encoder_new(encoder, json_array());

        for (size_t i = 0; i < result->refused_connection_count && !encoder->failed; i++) {
                dsh_json_path item_path = dsh_json_path_index(&list_path, i);

                dsh_json_append_element(encoder, list,
                                        encode_refused_connection(encoder, &result->refused_connections[i],
                                                                  &item_path));
        }
        dsh_json_set_member(encoder, object, "refusedConnections", list);
        if (result->refused_connections_dropped > 0)
                dsh_json_set_member(encoder, object, "refusedConnectionsDropped",
                                    dsh_json_encoder_new(encoder, json_integer((json_int_t)
                                                                               result->refused_connections_dropped)));
}

json_t *dsh_json_bash_result_value(const dsh_bash_result *result, const char *what, dsh_error *error)
{
        dsh_json_encoder encoder = { what, error, false };
        json_t *object = dsh_json_encoder_new(&encoder, json_object());
        dsh_json_path stdout_path = dsh_json_path_key(&dsh_json_root,
                                                      "stdout"), stderr_path = dsh_json_path_key(&dsh_json_root,
                                                                                                 "stderr");
        dsh_json_path sandbox_path = dsh_json_path_key(&dsh_json_root, "sandbox");

        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "kind", dsh_bash_kind_name(result->kind));
        dsh_json_set_member(&encoder, object, "exitCode",
                            number_or_null(&encoder, result->exit_code >= 0, result->exit_code));
        dsh_json_set_member(&encoder, object, "signal", number_or_null(&encoder, result->signal > 0, result->signal));
        dsh_json_set_member(&encoder, object, "timedOut",
                            dsh_json_encoder_new(&encoder, json_boolean(result->timed_out)));
        dsh_json_set_member(&encoder, object, "cancelled",
                            dsh_json_encoder_new(&encoder, json_boolean(result->cancelled)));
        dsh_json_set_member(&encoder, object, "stdout",
                            encode_output(&encoder, &result->standard_output, &stdout_path));
        dsh_json_set_member(&encoder, object, "stderr", encode_output(&encoder, &result->standard_error, &stderr_path));
        dsh_json_set_member(&encoder, object, "sandbox",
                            encode_bash_sandbox(&encoder, &result->sandbox, &sandbox_path));
        dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "markers", result->markers);
        if (result->message)
                dsh_json_set_string_member(&encoder, object, &dsh_json_root, "message", result->message);
        if (result->error.code != DSH_ERROR_NONE && !encoder.failed)
                dsh_json_set_member(&encoder, object, "error", dsh_json_error_value(&result->error, what, error));
        if (result->warnings && result->warnings[0])
                dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "warnings", result->warnings);
        encode_refused_writes(&encoder, object, result);
        encode_refused_connections(&encoder, object, result);
        return dsh_json_encoder_finish(&encoder, object);
}

/* One output stream as the encoder wrote it: the text as kept (NUL bytes and all: it is output, not a name). */
static int decode_output(dsh_json_decoder *decoder, const json_t *object, const char *key, dsh_bash_output *out)
{
        static const char *const keys[] = { "text", "truncated", "bytes", NULL };
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, key), text_path = dsh_json_path_key(&path, "text");
        const json_t *member = json_object_get(object, key), *text, *bytes;
        int result = member ? dsh_json_check_object(decoder, member, &path, keys)
                            : dsh_json_invalid(decoder->error, decoder->what, &path, "is missing");

        if (result == 0)
                result = dsh_json_decode_boolean(decoder, member, &path, "truncated", &out->truncated);
        if (result < 0)
                return result;
        text = json_object_get(member, "text");
        if (!json_is_string(text))
                return dsh_json_invalid(decoder->error, decoder->what, &text_path, "must be a string");
        out->length = json_string_length(text);
        out->text = malloc(out->length + 1);
        if (!out->text)
                return dsh_json_out_of_memory(decoder->error, decoder->what);
        memcpy(out->text, json_string_value(text), out->length + 1);
        bytes = json_object_get(member, "bytes");
        if (!json_is_integer(bytes) || json_integer_value(bytes) < 0) {
                dsh_json_path bytes_path = dsh_json_path_key(&path, "bytes");

                return dsh_json_invalid(decoder->error, decoder->what, &bytes_path, "must be a non-negative integer");
        }
        out->total_bytes = (unsigned long long) json_integer_value(bytes);
        return 0;
}

static int decode_bash_sandbox(dsh_json_decoder *decoder, const json_t *object, dsh_bash_sandbox *out)
{
        static const char *const keys[] = { "mode", "backend", "enforcement", "denied", "runnerFailed", NULL };
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "sandbox");
        const json_t *member = json_object_get(object, "sandbox");
        int result = member ? dsh_json_check_object(decoder, member, &path, keys)
                            : dsh_json_invalid(decoder->error, decoder->what, &path, "is missing");

        if (result == 0)
                result = dsh_json_decode_mode(decoder, member, &out->mode);
        if (result == 0 && !json_is_null(json_object_get(member, "backend")))
                result = dsh_json_decode_string_member(decoder, member, &path, "backend",
                                                       DSH_JSON_REQUIRED | DSH_JSON_TEXT_NON_EMPTY |
                                                       DSH_JSON_TEXT_SINGLE_LINE, &out->backend);
        out->confined = result == 0 && !json_is_null(json_object_get(member, "enforcement"));
        if (out->confined)
                result = dsh_json_decode_enforcement(decoder, member, &out->enforcement);
        if (result == 0)
                result = dsh_json_decode_boolean(decoder, member, &path, "denied", &out->denied);
        if (result == 0)
                result = dsh_json_decode_boolean(decoder, member, &path, "runnerFailed", &out->runner_failed);
        return result;
}

static int decode_bash_kind(dsh_json_decoder *decoder, const json_t *object, dsh_bash_kind *kind_out)
{
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "kind");
        const json_t *member = json_object_get(object, "kind");

        for (dsh_bash_kind kind = DSH_BASH_COMPLETED; kind <= DSH_BASH_REJECTED; kind++)
                if (json_is_string(member) && strcmp(json_string_value(member), dsh_bash_kind_name(kind)) == 0) {
                        *kind_out = kind;
                        return 0;
                }
        return dsh_json_invalid(decoder->error, decoder->what, &path, "must be one of the bash result kinds");
}

static int decode_refused_write(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path,
                                dsh_write_refusal *out)
{
        static const char *const keys[] = { "op", "path", "rule", NULL };
        int result = dsh_json_check_object(decoder, value, path, keys);

        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "op",
                                                       DSH_JSON_REQUIRED | DSH_JSON_TEXT_NON_EMPTY |
                                                       DSH_JSON_TEXT_SINGLE_LINE, &out->op);
        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "path",
                                                       DSH_JSON_REQUIRED | DSH_JSON_TEXT_NON_EMPTY, &out->path);
        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "rule",
                                                       DSH_JSON_REQUIRED | DSH_JSON_TEXT_NON_EMPTY |
                                                       DSH_JSON_TEXT_SINGLE_LINE, &out->rule);
        return result;
}

/*
 * "refusedWrites" and "refusedWritesDropped", absent from a result an older
 * helper wrote: then none.  No more records than a call keeps: a peer that
 * sends more is not one of ours.  The rule is taken as a name, not checked
 * against a list: a newer peer's new rule must not lose the whole result.
 */
static int decode_refused_writes(dsh_json_decoder *decoder, const json_t *object, dsh_bash_result *out)
{
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "refusedWrites");
        dsh_json_path dropped_path = dsh_json_path_key(&dsh_json_root, "refusedWritesDropped");
        const json_t *list = json_object_get(object, "refusedWrites");
        const json_t *dropped = json_object_get(object, "refusedWritesDropped");
        size_t count = json_array_size(list);
        int result = 0;

        if (dropped && (!json_is_integer(dropped) || json_integer_value(dropped) < 0))
                return dsh_json_invalid(decoder->error, decoder->what, &dropped_path, "must be a non-negative integer");
        out->refused_writes_dropped = dropped ? (unsigned long) json_integer_value(dropped) : 0;
        if (!list)
                return 0;
        if (!json_is_array(list))
                return dsh_json_invalid(decoder->error, decoder->what, &path, "must be an array of objects");
        if (count > DSH_WRITE_REFUSALS_MAX)
                return dsh_json_invalid(decoder->error, decoder->what, &path, "must hold at most %d records",
                                        DSH_WRITE_REFUSALS_MAX);
        if (count == 0)
                return 0;
        out->refused_writes = calloc(count, sizeof(*out->refused_writes));
        if (!out->refused_writes)
                return dsh_json_out_of_memory(decoder->error, decoder->what);
        for (size_t i = 0; i < count && result == 0; i++) {
                dsh_json_path item = dsh_json_path_index(&path, i);

                out->refused_write_count = i + 1;   /* each record is freed by the clear, whole or not */
                result = decode_refused_write(decoder, json_array_get(list, i), &item, &out->refused_writes[i]);
        }
        return result;
}

static int decode_refused_connection(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path,
                                     dsh_refused_connection *out)
{
        static const char *const keys[] = { "op", "host", "port", "rule", "source", NULL };
        int result = dsh_json_check_object(decoder, value, path, keys);
        const json_t *port;

        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "op",
                                                       DSH_JSON_REQUIRED | DSH_JSON_TEXT_NON_EMPTY |
                                                       DSH_JSON_TEXT_SINGLE_LINE, &out->op);
        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "host", DSH_JSON_REQUIRED, &out->host);
        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "rule",
                                                       DSH_JSON_REQUIRED | DSH_JSON_TEXT_NON_EMPTY |
                                                       DSH_JSON_TEXT_SINGLE_LINE, &out->rule);
        /* Optional: a peer from before the records named their layer sends none (then NULL). */
        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "source",
                                                       DSH_JSON_TEXT_NON_EMPTY | DSH_JSON_TEXT_SINGLE_LINE,
                                                       &out->source);
        if (result < 0)
                return result;
        port = json_object_get(value, "port");
        if (!json_is_integer(port) || json_integer_value(port) < 0 || json_integer_value(port) > 65535) {
                dsh_json_path port_path = dsh_json_path_key(path, "port");

                return dsh_json_invalid(decoder->error, decoder->what, &port_path, "must be an integer 0..65535");
        }
        out->port = (int) json_integer_value(port);
        return 0;
}

/*
 * "refusedConnections" and "refusedConnectionsDropped", absent from a result
 * an older helper wrote: then none.  Bounded like the writes; the rule and
 * the op are taken as names (a newer peer's must not lose the result).
 */
static int decode_refused_connections(dsh_json_decoder *decoder, const json_t *object, dsh_bash_result *out)
{
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "refusedConnections");
        dsh_json_path dropped_path = dsh_json_path_key(&dsh_json_root, "refusedConnectionsDropped");
        const json_t *list = json_object_get(object, "refusedConnections");
        const json_t *dropped = json_object_get(object, "refusedConnectionsDropped");
        size_t count = json_array_size(list);
        int result = 0;

        if (dropped && (!json_is_integer(dropped) || json_integer_value(dropped) < 0))
                return dsh_json_invalid(decoder->error, decoder->what, &dropped_path, "must be a non-negative integer");
        out->refused_connections_dropped = dropped ? (unsigned long) json_integer_value(dropped) : 0;
        if (!list)
                return 0;
        if (!json_is_array(list))
                return dsh_json_invalid(decoder->error, decoder->what, &path, "must be an array of objects");
        if (count > DSH_REFUSED_CONNECTIONS_MAX)
                return dsh_json_invalid(decoder->error, decoder->what, &path, "must hold at most %d records",
                                        DSH_REFUSED_CONNECTIONS_MAX);
        if (count == 0)
                return 0;
        out->refused_connections = calloc(count, sizeof(*out->refused_connections));
        if (!out->refused_connections)
                return dsh_json_out_of_memory(decoder->error, decoder->what);
        for (size_t i = 0; i < count && result == 0; i++) {
                dsh_json_path item = dsh_json_path_index(&path, i);

                out->refused_connection_count = i + 1;   /* each record is freed by the clear, whole or not */
                result = decode_refused_connection(decoder, json_array_get(list, i), &item,
                                                   &out->refused_connections[i]);
        }
        return result;
}

int dsh_json_bash_result_from_value(const json_t *value, const char *what, dsh_bash_result *result_out,
                                    dsh_error *error)
{
        static const char *const keys[] = { "kind", "exitCode", "signal", "timedOut", "cancelled", "stdout",
                                            "stderr", "sandbox", "markers", "message", "error", "warnings",
                                            "refusedWrites", "refusedWritesDropped", "refusedConnections",
                                            "refusedConnectionsDropped", NULL };
        dsh_bash_result decoded = DSH_BASH_RESULT_INIT;
        dsh_json_decoder decoder = { what, error };
        const json_t *error_value;
        int result = dsh_json_check_object(&decoder, value, &dsh_json_root, keys);

        if (result == 0)
                result = decode_bash_kind(&decoder, value, &decoded.kind);
        if (result == 0)
                result = dsh_json_decode_number_or_null(&decoder, value, "exitCode", 0, 255, -1, &decoded.exit_code);
        if (result == 0)
                result = dsh_json_decode_number_or_null(&decoder, value, "signal", 1, 64, 0, &decoded.signal);
        if (result == 0)
                result = dsh_json_decode_boolean(&decoder, value, &dsh_json_root, "timedOut", &decoded.timed_out);
        if (result == 0)
                result = dsh_json_decode_boolean(&decoder, value, &dsh_json_root, "cancelled", &decoded.cancelled);
        if (result == 0)
                result = decode_output(&decoder, value, "stdout", &decoded.standard_output);
        if (result == 0)
                result = decode_output(&decoder, value, "stderr", &decoded.standard_error);
        if (result == 0)
                result = decode_bash_sandbox(&decoder, value, &decoded.sandbox);
        if (result == 0)
                result = dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "markers", DSH_JSON_REQUIRED,
                                                     &decoded.markers);
        if (result == 0)
                result = dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "message", 0, &decoded.message);
        if (result == 0 && (error_value = json_object_get(value, "error")))
                result = dsh_json_error_from_value(error_value, what, &decoded.error, error);
        if (result == 0)
                result = dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "warnings", 0, &decoded.warnings);
        if (result == 0)
                result = decode_refused_writes(&decoder, value, &decoded);
        if (result == 0)
                result = decode_refused_connections(&decoder, value, &decoded);
        /* Never NULL in a result (dsh-sandbox/bash-tool.h): absent reads as none. */
        if (result == 0 && !decoded.warnings && !(decoded.warnings = calloc(1, sizeof(char *))))
                result = dsh_json_out_of_memory(error, what);
        if (result < 0) {
                dsh_bash_result_clear(&decoded);
                return result;
        }
        *result_out = decoded;
        return 0;
}

json_t *dsh_json_bash_escalation_value(const dsh_bash_escalation *escalation, const char *what, dsh_error *error)
{
        dsh_json_encoder encoder = { what, error, false };
        json_t *object = dsh_json_encoder_new(&encoder, json_object());

        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "command", escalation->command);
        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "sandboxPermissions",
                                   dsh_mode_name(escalation->requested_mode));
        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "currentMode",
                                   dsh_mode_name(escalation->current_mode));
        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "justification", escalation->justification);
        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "workspaceRoot", escalation->workspace_root);
        if (escalation->session_id)
                dsh_json_set_string_member(&encoder, object, &dsh_json_root, "sessionId", escalation->session_id);
        return dsh_json_encoder_finish(&encoder, object);
}

/* ------------------------------------------------------------------ text -- */
int dsh_json_encode_bash_result(const dsh_bash_result *result, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        int result_code = dsh_json_value_text(dsh_json_bash_result_value(result, "bash result", used), text_out, used);

        dsh_error_clear(&local);
        return result_code;
}

int dsh_json_encode_bash_escalation(const dsh_bash_escalation *escalation, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        int result = dsh_json_value_text(dsh_json_bash_escalation_value(escalation, "escalation", used), text_out,
                                         used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_decode_bash_result(const char *text, size_t length, dsh_bash_result *result_out, dsh_error *error)
{
        json_t *value;
        int result = dsh_json_load_object(text, length, "bash result", &value, error);

        if (result == 0)
                result = dsh_json_bash_result_from_value(value, "bash result", result_out, error);
        json_decref(value);
        return result;
}
