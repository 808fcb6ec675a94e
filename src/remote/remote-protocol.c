/* SPDX-License-Identifier: MIT */
/* The remote provider's JSON messages: requests, hellos and final records, read strictly. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "base/error.h"
#include "base/error-json.h"
#include "base/json-core.h"
#include "dsh-sandbox/json.h"
#include "remote/remote-protocol.h"

static const char *const operation_names[] = {
        [DSH_REMOTE_OPERATION_RUN] = "run",
        [DSH_REMOTE_OPERATION_CONFINE] = "confine",
        [DSH_REMOTE_OPERATION_PROBE] = "probe",
        [DSH_REMOTE_OPERATION_BASH] = "bash",
};

static const char *const outcome_names[] = {
        [DSH_REMOTE_OUTCOME_EXITED] = "exited",
        [DSH_REMOTE_OUTCOME_SIGNALED] = "signaled",
        [DSH_REMOTE_OUTCOME_REFUSED] = "refused",
        [DSH_REMOTE_OUTCOME_ANSWERED] = "answered",
};

#define COUNT(array) (sizeof(array) / sizeof((array)[0]))

static int out_of_memory(dsh_error *error)
{
        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}

/* The index of `name` in `names`, or -1. */
static int name_index(const char *const *names, size_t count, const char *name)
{
        for (size_t i = 0; name && i < count; i++)
                if (strcmp(names[i], name) == 0)
                        return (int) i;
        return -1;
}

void dsh_remote_call_clear(dsh_remote_call *call)
{
        dsh_strv_free(call->argv);
        free(call->workspace_root);
        dsh_strv_free(call->additional_writable_roots);
        free(call->backend);
        dsh_network_policy_clear(&call->network);
        dsh_strv_free(call->masked_paths);
        dsh_strv_free(call->allowed_environment);
        *call = (dsh_remote_call) DSH_REMOTE_CALL_INIT;
}

void dsh_remote_final_clear(dsh_remote_final *final)
{
        dsh_error_clear(&final->refusal);
        json_decref(final->answer);
        *final = (dsh_remote_final) DSH_REMOTE_FINAL_INIT;
}

/* An array of the strings of `strv` (NULL: empty); NULL when out of memory. */
static json_t *string_array(char *const *strv)
{
        json_t *array = json_array();

        for (size_t i = 0; array && strv && strv[i]; i++)
                if (json_array_append_new(array, json_string(strv[i])) < 0) {
                        json_decref(array);
                        return NULL;
                }
        return array;
}

/* Sets member `key` to a new reference, which a NULL (a string that is not UTF-8, or no memory) fails. */
static int set_member(json_t *object, const char *key, json_t *value, dsh_error *error)
{
        if (!value)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "remote request: %s cannot be sent (not valid UTF-8, or out of memory)", key);
        return json_object_set_new(object, key, value) < 0 ? out_of_memory(error) : 0;
}

static int dump_and_release(json_t *object, int result, char **text_out, dsh_error *error)
{
        if (result == 0)
                result = dsh_json_dump(object, text_out, error);
        json_decref(object);
        return result;
}

/*
 * The network in the config's shape ("on", "off", or {"allowHosts",
 * "allowLocalPorts", "dnsUpstream"}), written and read by the policy's own
 * codec (dsh-sandbox/json.h): one shape, one writer and one reader, so the
 * remote never reads a network the local side would not have written.
 * NULL when out of memory or a string is not UTF-8.
 */
static json_t *network_value(const dsh_network_policy *network)
{
        dsh_autofree char *text = NULL;

        if (dsh_json_encode_network_policy(network, &text, NULL) < 0)
                return NULL;
        return json_loads(text, JSON_DECODE_ANY, NULL);
}

int dsh_remote_request_encode(dsh_remote_operation operation, const dsh_remote_request *request,
                              char *const *argv, const dsh_remote_bash_options *bash, char **text_out,
                              dsh_error *error)
{
        json_t *object = json_object();
        int result = object ? 0 : out_of_memory(error);

        if (result == 0)
                result = set_member(object, "protocol", json_integer(DSH_REMOTE_PROTOCOL_VERSION), error);
        if (result == 0)
                result = set_member(object, "operation", json_string(operation_names[operation]), error);
        if (result == 0 && argv)
                result = set_member(object, "argv", string_array(argv), error);
        if (result == 0 && request->has_mode)
                result = set_member(object, "mode", json_string(dsh_mode_name(request->mode)), error);
        if (result == 0 && request->workspace_root)
                result = set_member(object, "workspaceRoot", json_string(request->workspace_root), error);
        if (result == 0 && request->additional_writable_roots)
                result = set_member(object, "additionalWritableRoots",
                                    string_array(request->additional_writable_roots), error);
        if (result == 0 && request->backend)
                result = set_member(object, "backend", json_string(request->backend), error);
        if (result == 0 && request->network)
                result = set_member(object, "network", network_value(request->network), error);
        if (result == 0 && request->masked_paths && request->masked_paths[0])
                result = set_member(object, "maskedPaths", string_array(request->masked_paths), error);
        if (result == 0 && request->allowed_environment && request->allowed_environment[0])
                result = set_member(object, "allowEnvironment", string_array(request->allowed_environment), error);
        if (result == 0 && bash && bash->timeout_ms)
                result = set_member(object, "timeoutMs", json_integer(bash->timeout_ms), error);
        if (result == 0 && bash && bash->output_limit)
                result = set_member(object, "outputLimit", json_integer((json_int_t) bash->output_limit), error);
        if (result == 0 && bash && bash->on_output)
                result = set_member(object, "live", json_true(), error);
        return dump_and_release(object, result, text_out, error);
}

/* A string member without NUL bytes (JSON can carry one; a C string would be cut short by it). */
static int read_string(const json_t *value, const char *what, const char *key, char **out, dsh_error *error)
{
        const char *text = json_string_value(value);

        if (!text || json_string_length(value) != strlen(text))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: \"%s\" must be a string without NUL bytes",
                                     what, key);
        *out = strdup(text);
        return *out ? 0 : out_of_memory(error);
}

static int read_string_array(const json_t *value, const char *what, const char *key, char ***out, dsh_error *error)
{
        size_t index;
        json_t *item;

        if (!json_is_array(value))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: \"%s\" must be an array of strings",
                                     what, key);
        if (!*out && !(*out = calloc(1, sizeof(char *))))   /* [] is given, and empty: not absent */
                return out_of_memory(error);
        json_array_foreach(value, index, item) {
                dsh_autofree char *text = NULL;
                int result = read_string(item, what, key, &text, error);

                if (result < 0)
                        return result;
                if (dsh_strv_append(out, text) < 0)
                        return out_of_memory(error);
        }
        return 0;
}

/* The protocol member first: a peer of another version is named as such, whatever else it sends. */
static int check_protocol(const json_t *object, const char *what, dsh_error *error)
{
        const json_t *protocol = json_object_get(object, "protocol");

        if (!json_is_integer(protocol))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EPROTO, "%s: no protocol version", what);
        if (json_integer_value(protocol) != DSH_REMOTE_PROTOCOL_VERSION)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EPROTO,
                                     "%s: speaks protocol %lld, this dsh-sandbox speaks %d (install the same "
                                     "version on both hosts)",
                                     what, (long long) json_integer_value(protocol), DSH_REMOTE_PROTOCOL_VERSION);
        return 0;
}

static int read_positive(const json_t *value, const char *what, const char *key, long *out, dsh_error *error)
{
        if (!json_is_integer(value) || json_integer_value(value) <= 0 || json_integer_value(value) > INT_MAX)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: \"%s\" must be a positive integer",
                                     what, key);
        *out = (long) json_integer_value(value);
        return 0;
}

/* "network" as the config has it, checked as the config checks it (dsh_json_decode_network_policy()). */
static int read_network(const json_t *value, const char *what, dsh_network_policy *network, dsh_error *error)
{
        dsh_autofree char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
        char where[64];

        if (!text)
                return out_of_memory(error);
        snprintf(where, sizeof(where), "%s \"network\"", what);
        return dsh_json_decode_network_policy(text, strlen(text), where, network, error);
}

static int read_call_member(const char *key, const json_t *value, dsh_remote_call *call, dsh_error *error)
{
        static const char what[] = "remote request";
        dsh_autofree char *mode = NULL;
        int result;

        if (strcmp(key, "protocol") == 0)
                return 0;
        if (strcmp(key, "operation") == 0) {
                dsh_autofree char *name = NULL;

                result = read_string(value, what, key, &name, error);
                if (result == 0 && (result = name_index(operation_names, COUNT(operation_names), name)) < 0)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: unknown operation", what);
                call->operation = (dsh_remote_operation) result;
                return 0;
        }
        if (strcmp(key, "argv") == 0)
                return read_string_array(value, what, key, &call->argv, error);
        if (strcmp(key, "mode") == 0) {
                result = read_string(value, what, key, &mode, error);
                if (result == 0 && dsh_mode_parse(mode, &call->mode) < 0)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: unknown mode", what);
                call->has_mode = true;
                return result;
        }
        if (strcmp(key, "workspaceRoot") == 0)
                return read_string(value, what, key, &call->workspace_root, error);
        if (strcmp(key, "additionalWritableRoots") == 0)
                return read_string_array(value, what, key, &call->additional_writable_roots, error);
        if (strcmp(key, "backend") == 0)
                return read_string(value, what, key, &call->backend, error);
        if (strcmp(key, "network") == 0) {
                call->has_network = true;
                return read_network(value, what, &call->network, error);
        }
        if (strcmp(key, "maskedPaths") == 0)
                return read_string_array(value, what, key, &call->masked_paths, error);
        if (strcmp(key, "allowEnvironment") == 0)
                return read_string_array(value, what, key, &call->allowed_environment, error);
        if (strcmp(key, "timeoutMs") == 0)
                return read_positive(value, what, key, &call->timeout_ms, error);
        if (strcmp(key, "outputLimit") == 0)
                return read_positive(value, what, key, &call->output_limit, error);
        if (strcmp(key, "live") == 0 && json_is_true(value)) {
                call->live_output = true;
                return 0;
        }
        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: unknown member", what);
}

int dsh_remote_call_decode(const unsigned char *payload, size_t length, dsh_remote_call *call_out, dsh_error *error)
{
        static const char what[] = "remote request";
        dsh_remote_call call = DSH_REMOTE_CALL_INIT;
        json_t *object = NULL, *value;
        const char *key;
        int result = dsh_json_load_object((const char *) payload, length, what, &object, error);

        if (result == 0)
                result = check_protocol(object, what, error);
        if (result == 0 && !json_object_get(object, "operation"))
                result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: no operation", what);
        json_object_foreach(object, key, value) {
                if (result == 0)
                        result = read_call_member(key, value, &call, error);
        }
        if (result == 0 && call.operation != DSH_REMOTE_OPERATION_BASH &&
            (call.timeout_ms || call.output_limit || call.live_output))
                result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: bash options given to %s", what,
                                       operation_names[call.operation]);
        if (result == 0 && call.operation == DSH_REMOTE_OPERATION_BASH && call.argv && call.argv[0] && call.argv[1])
                result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: bash takes one command line",
                                       what);
        if (result == 0 && (call.operation == DSH_REMOTE_OPERATION_PROBE) != !call.argv)
                result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: argv %s", what,
                                       call.argv ? "given to probe" : "missing");
        if (result == 0 && call.argv && !call.argv[0])
                result = dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: argv is empty", what);
        json_decref(object);
        if (result < 0) {
                dsh_remote_call_clear(&call);
                return result;
        }
        *call_out = call;
        return 0;
}

int dsh_remote_hello_encode(char **text_out, dsh_error *error)
{
        json_t *object = json_pack("{s:i, s:s}", "protocol", DSH_REMOTE_PROTOCOL_VERSION, "version",
                                   DSH_SANDBOX_VERSION);

        return dump_and_release(object, object ? 0 : out_of_memory(error), text_out, error);
}

int dsh_remote_hello_check(const unsigned char *payload, size_t length, dsh_error *error)
{
        static const char what[] = "the remote dsh-sandbox";
        json_t *object = NULL;
        int result = dsh_json_load_object((const char *) payload, length, what, &object, error);

        if (result == 0)
                result = check_protocol(object, what, error);
        json_decref(object);
        return result;
}

/* The record's own members: {"outcome":..., and "status" | "signal" | "error"(,"errno") | "answer"}. */
static json_t *final_value(const dsh_remote_final *final, dsh_error *error)
{
        json_t *error_value;

        switch (final->outcome) {
        case DSH_REMOTE_OUTCOME_EXITED:
                return json_pack("{s:s, s:i}", "outcome", "exited", "status", final->value);
        case DSH_REMOTE_OUTCOME_SIGNALED:
                return json_pack("{s:s, s:i}", "outcome", "signaled", "signal", final->value);
        case DSH_REMOTE_OUTCOME_REFUSED:
                error_value = dsh_json_error_value(&final->refusal, "refusal", error);
                return error_value ? json_pack("{s:s, s:o, s:i}", "outcome", "refused", "error", error_value,
                                               "errno", final->value)
                                   : NULL;
        case DSH_REMOTE_OUTCOME_ANSWERED:
                return json_pack("{s:s, s:O}", "outcome", "answered", "answer", final->answer);
        }
        return NULL;
}

int dsh_remote_final_encode(const dsh_remote_final *final, char **text_out, dsh_error *error)
{
        json_t *object = final_value(final, error);

        if (!object && error && error->code == DSH_ERROR_NONE)
                return out_of_memory(error);
        return dump_and_release(object, object ? 0 : -EINVAL, text_out, error);
}

/* Reads the members `outcome` carries; `format` is json_unpack's, strict ("!": no other member). */
static int read_final_members(json_t *object, dsh_remote_final *final, dsh_error *error)
{
        static const char what[] = "the remote's final record";
        json_error_t unpack_error;
        json_t *error_value = NULL;
        const char *outcome;
        int index;

        if (json_unpack(object, "{s:s}", "outcome", &outcome) < 0 ||
            (index = name_index(outcome_names, COUNT(outcome_names), outcome)) < 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EPROTO, "%s: no known outcome", what);
        final->outcome = (dsh_remote_outcome) index;
        switch (final->outcome) {
        case DSH_REMOTE_OUTCOME_EXITED:
                if (json_unpack_ex(object, &unpack_error, JSON_STRICT, "{s:s, s:i}", "outcome", &outcome, "status",
                                   &final->value) < 0 || final->value < 0 || final->value > 255)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EPROTO,
                                             "%s: an exit needs a status from 0 to 255", what);
                return 0;
        case DSH_REMOTE_OUTCOME_SIGNALED:
                if (json_unpack_ex(object, &unpack_error, JSON_STRICT, "{s:s, s:i}", "outcome", &outcome, "signal",
                                   &final->value) < 0 || final->value < 1 || final->value >= NSIG)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EPROTO,
                                             "%s: a death needs a signal number", what);
                return 0;
        case DSH_REMOTE_OUTCOME_REFUSED:
                if (json_unpack_ex(object, &unpack_error, JSON_STRICT, "{s:s, s:o, s:i}", "outcome", &outcome,
                                   "error", &error_value, "errno", &final->value) < 0 || final->value < 0)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EPROTO,
                                             "%s: a refusal needs an error and an errno", what);
                return dsh_json_error_from_value(error_value, "the remote's refusal", &final->refusal, error);
        case DSH_REMOTE_OUTCOME_ANSWERED:
                if (json_unpack_ex(object, &unpack_error, JSON_STRICT, "{s:s, s:O}", "outcome", &outcome, "answer",
                                   &final->answer) < 0 || !json_is_object(final->answer))
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EPROTO,
                                             "%s: an answer needs an object", what);
                return 0;
        }
        return -EPROTO;
}

int dsh_remote_final_decode(const unsigned char *payload, size_t length, dsh_remote_final *final_out,
                            dsh_error *error)
{
        dsh_remote_final final = DSH_REMOTE_FINAL_INIT;
        json_t *object = NULL;
        int result = dsh_json_load_object((const char *) payload, length, "the remote's final record", &object, error);

        if (result == 0)
                result = read_final_members(object, &final, error);
        json_decref(object);
        if (result < 0) {
                dsh_remote_final_clear(&final);
                return result;
        }
        *final_out = final;
        return 0;
}
