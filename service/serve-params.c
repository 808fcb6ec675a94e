/* SPDX-License-Identifier: MIT */
/*
 * What every method of `dsh-sandbox serve` reads and answers the same way
 * (serve-params.h): the policy fields, a mode, a backend and a bounded
 * number from a call's params, each refused as -32602 naming the member;
 * a library error, a refused cwd and an encoder's result as the answer; a
 * command's output as a JSON string.  The method table is serve.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/json.h"
#include "dsh-sandbox/provider.h"

#include "serve-params.h"

/* ------------------------------------------------------------ params -- */

void serve_policy_clear(serve_policy *policy)
{
        dsh_strv_free(policy->allow_write);
        dsh_strv_free(policy->allow_unix_sockets);
        dsh_network_policy_clear(&policy->network);
        dsh_strv_free(policy->masked_paths);
        dsh_strv_free(policy->allowed_environment);
        *policy = (serve_policy) SERVE_POLICY_INIT;
}

int serve_param_mode(rpc_call *call, const char *name, bool required, dsh_mode *mode_out)
{
        const char *value = NULL;
        int found = rpc_param_string(call, name, required, &value);

        if (found != 0)
                return found;
        if (dsh_mode_parse(value, mode_out) < 0)
                return rpc_call_fail_params(call, name,
                                            "expected \"read-only\", \"workspace-write\" or \"danger-full-access\""),
                       -1;
        return 0;
}

int serve_param_backend(rpc_call *call, const char **backend_out)
{
        dsh_error error = DSH_ERROR_INIT;
        const char *value = NULL;
        int found = rpc_param_string(call, "backend", false, &value);

        if (found != 0)
                return found;
        /* The provider owns the list of backend names; "auto" is the configured chain. */
        if (strcmp(value, "auto") != 0 && dsh_provider_check_backends((const char *const[]) { value, NULL }, &error) < 0) {
                rpc_call_fail_params(call, "backend", error.message ? error.message : "unknown backend");
                dsh_error_clear(&error);
                return -1;
        }
        *backend_out = value;
        return 0;
}

/*
 * `network`, read by the library's own decoder, so that an entry serve
 * takes is one the CLI and the config take: a bad one is -32602 naming it
 * ("invalid params: network: \"allowHosts\"[1] \"*\": <reason>").
 * 0 with policy->network, 1 when absent or null, -1 after answering.
 */
static int serve_param_network(rpc_call *call, serve_policy *policy)
{
        static const char what[] = "network";
        json_t *member = json_object_get(rpc_call_params(call), what);
        dsh_error error = DSH_ERROR_INIT;
        char *text;
        int result;

        if (!member || json_is_null(member))
                return 1;
        text = json_dumps(member, JSON_ENCODE_ANY | JSON_COMPACT);
        if (!text)
                return rpc_call_fail_params(call, what, "out of memory"), -1;
        result = dsh_json_decode_network_policy(text, strlen(text), what, &policy->network, &error);
        free(text);
        if (result < 0) {
                const char *message = error.message ? error.message : "is not a network policy";

                /* The decoder names the value first ("network: ..."), which the params message names already. */
                if (strncmp(message, "network: ", 9) == 0)
                        message += 9;
                rpc_call_fail_params(call, what, message);
                dsh_error_clear(&error);
                return -1;
        }
        policy->fields.network = &policy->network;
        return 0;
}

static int check_allowed_name(const char *name, const char **reason)
{
        return dsh_environment_pattern_check(name, false, reason);
}

/*
 * A string array each of whose entries passes the library's own `check`, so
 * that what serve takes the CLI and the config take: a bad one is -32602
 * naming it ("invalid params: maskedPaths: \"a/../b\": <reason>").
 * 0 when read or absent, -1 after answering.
 */
static int serve_param_checked_array(rpc_call *call, const char *name,
                                     int (*check)(const char *entry, const char **reason), char ***out)
{
        if (rpc_param_string_array(call, name, false, out) < 0)
                return -1;
        for (char **entry = *out; entry && *entry; entry++) {
                const char *reason = NULL;
                char *what = NULL;

                if (check(*entry, &reason) == 0)
                        continue;
                if (asprintf(&what, "\"%s\": %s", *entry, reason) < 0)
                        what = NULL;
                rpc_call_fail_params(call, name, what ? what : reason);
                free(what);
                return -1;
        }
        return 0;
}

int serve_param_policy(rpc_call *call, serve_policy *policy)
{
        service_policy_fields *fields = &policy->fields;
        int found;

        if (rpc_param_string(call, "sessionId", false, &fields->session_id) < 0 ||
            rpc_param_string(call, "root", false, &fields->root) < 0 ||
            rpc_param_string_array(call, "allowWrite", false, &policy->allow_write) < 0 ||
            rpc_param_string_array(call, "allowUnixSockets", false, &policy->allow_unix_sockets) < 0 ||
            serve_param_backend(call, &fields->backend) < 0 || serve_param_network(call, policy) < 0 ||
            serve_param_checked_array(call, "maskedPaths", dsh_mask_entry_check, &policy->masked_paths) < 0 ||
            serve_param_checked_array(call, "allowEnvironment", check_allowed_name, &policy->allowed_environment) < 0) {
                serve_policy_clear(policy);  /* after answering: the callers only return */
                return -1;
        }
        found = serve_param_mode(call, "mode", false, &fields->mode);
        if (found < 0) {
                serve_policy_clear(policy);
                return -1;
        }
        fields->has_mode = found == 0;
        fields->allow_write = policy->allow_write;
        fields->allow_unix_sockets = policy->allow_unix_sockets;
        fields->masked_paths = policy->masked_paths;
        fields->allowed_environment = policy->allowed_environment;
        return 0;
}

int serve_param_positive(rpc_call *call, const char *name, long long maximum, long long *value_out)
{
        long long value = 0;
        int found = rpc_param_integer(call, name, false, &value);
        char what[96];

        if (found != 0)
                return found;
        if (value < 1 || value > maximum) {
                snprintf(what, sizeof(what), "expected a whole number from 1 to %lld", maximum);
                return rpc_call_fail_params(call, name, what), -1;
        }
        *value_out = value;
        return 0;
}

/* ----------------------------------------------------------- answers -- */

void serve_fail(rpc_call *call, dsh_error *error)
{
        rpc_call_fail_sandbox(call, error);
        dsh_error_clear(error);
}

void serve_fail_cwd(rpc_call *call, const dsh_error *error)
{
        const char *message = error->message ? error->message : "not a directory";

        /* The library's text begins "cwd ", which the params message names already. */
        rpc_call_fail_params(call, "cwd", strncmp(message, "cwd ", 4) == 0 ? message + 4 : message);
}

void serve_reply_encoded(rpc_call *call, int encoded, char *text, dsh_error *error)
{
        json_t *value = service_encoded_json(encoded, text, error);

        if (value)
                rpc_call_reply(call, value);
        else
                serve_fail(call, error);
}

json_t *serve_output_json(const char *bytes, size_t length)
{
        size_t capacity = length * 4 + 1, used = 0, invalid = 0;
        char *text = malloc(capacity);
        json_t *value;

        if (!text)
                return NULL;
        while (length > 0) {
                size_t valid = dsh_text_is_utf8(bytes, length, &invalid) ? length : invalid;

                memcpy(text + used, bytes, valid);
                used += valid;
                bytes += valid;
                length -= valid;
                if (length > 0) {
                        used += (size_t) snprintf(text + used, capacity - used, "\\x%02x", (unsigned char) *bytes);
                        bytes++;
                        length--;
                }
        }
        value = json_stringn_nocheck(text, used);
        free(text);
        return value;
}
