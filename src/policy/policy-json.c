/* SPDX-License-Identifier: MIT */
/*
 * The policy's shapes (dsh-sandbox/json.h): the execution policy, a
 * session as `session show` prints it, the session list and a mode event's
 * data.  Built on the JSON core (base/json-core.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/json.h"
#include "base/error.h"
#include "base/json-core.h"
#include "policy/policy-json.h"

/* --------------------------------------------------------------- network -- */

static json_t *local_ports_value(dsh_json_encoder *encoder, const dsh_network_policy *network)
{
        json_t *ports = dsh_json_encoder_new(encoder, json_array());

        for (size_t i = 0; ports && i < network->allow_local_port_count; i++)
                dsh_json_append_element(encoder, ports,
                                        dsh_json_encoder_new(encoder, json_integer(network->allow_local_ports[i])));
        return ports;
}

json_t *dsh_json_network_value(dsh_json_encoder *encoder, const dsh_network_policy *network,
                               const dsh_json_path *path)
{
        bool restricted = network->allow_local_port_count > 0 || network->dns_upstream;
        json_t *object;

        if ((unsigned) network->mode > DSH_NETWORK_ALLOW_LIST || network->mode == DSH_NETWORK_ON ||
            (network->mode == DSH_NETWORK_OFF && dsh_strv_length(network->allow_hosts) > 0)) {
                /* Off with hosts would read back as an allow-list: a shape that says more than the policy holds. */
                if (network->mode == DSH_NETWORK_ON)
                        return dsh_json_string_value(encoder, "on", path);
                dsh_json_invalid(encoder->error, encoder->what, path, "is not a network policy");
                encoder->failed = true;
                return NULL;
        }
        if (network->mode == DSH_NETWORK_OFF && !restricted)
                return dsh_json_string_value(encoder, "off", path);
        object = dsh_json_encoder_new(encoder, json_object());
        if (network->mode == DSH_NETWORK_ALLOW_LIST)
                dsh_json_set_strings_member(encoder, object, path, "allowHosts", network->allow_hosts);
        if (network->allow_local_port_count > 0)
                dsh_json_set_member(encoder, object, "allowLocalPorts", local_ports_value(encoder, network));
        if (network->dns_upstream)
                dsh_json_set_string_member(encoder, object, path, "dnsUpstream", network->dns_upstream);
        return object;
}

static int decode_allow_hosts(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path,
                              dsh_network_policy *network)
{
        dsh_json_path list = dsh_json_path_key(path, "allowHosts");
        int result = dsh_json_decode_string_list(decoder, value, path, "allowHosts", DSH_JSON_TEXT_NON_EMPTY,
                                                 &network->allow_hosts);

        for (size_t i = 0; result == 0 && network->allow_hosts && network->allow_hosts[i]; i++) {
                dsh_json_path element = dsh_json_path_index(&list, i);
                const char *reason = NULL;
                dsh_autofree char *printable = NULL;

                if (dsh_network_pattern_check(network->allow_hosts[i], &reason) == 0)
                        continue;
                printable = dsh_error_printable_text(network->allow_hosts[i]);
                result = dsh_json_invalid(decoder->error, decoder->what, &element, "\"%s\": %s",
                                          printable ? printable : "?", reason);
        }
        return result;
}

static int decode_local_ports(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path,
                              dsh_network_policy *network)
{
        dsh_json_path list = dsh_json_path_key(path, "allowLocalPorts");
        const json_t *member = NULL;
        int result = dsh_json_find_member(decoder, value, &list, "allowLocalPorts", 0, &member);
        size_t count;

        if (result < 0 || !member)
                return result;
        if (!json_is_array(member))
                return dsh_json_invalid(decoder->error, decoder->what, &list, "must be an array of ports");
        count = json_array_size(member);
        if (count == 0)
                return 0;
        network->allow_local_ports = calloc(count, sizeof(*network->allow_local_ports));
        if (!network->allow_local_ports)
                return dsh_json_out_of_memory(decoder->error, decoder->what);
        for (size_t i = 0; i < count; i++) {
                const json_t *port = json_array_get(member, i);
                dsh_json_path element = dsh_json_path_index(&list, i);

                if (!json_is_integer(port) || json_integer_value(port) < 1 || json_integer_value(port) > 65535)
                        return dsh_json_invalid(decoder->error, decoder->what, &element,
                                                "must be a port, a whole number from 1 to 65535");
                network->allow_local_ports[i] = (unsigned short) json_integer_value(port);
                network->allow_local_port_count = i + 1;
        }
        return 0;
}

static int decode_network_object(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path,
                                 dsh_network_policy *network)
{
        static const char *const keys[] = { "allowHosts", "allowLocalPorts", "dnsUpstream", NULL };
        dsh_json_path upstream = dsh_json_path_key(path, "dnsUpstream");
        int result = dsh_json_check_object(decoder, value, path, keys);

        if (result == 0)
                result = decode_allow_hosts(decoder, value, path, network);
        if (result == 0)
                result = decode_local_ports(decoder, value, path, network);
        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "dnsUpstream", DSH_JSON_TEXT_NON_EMPTY,
                                                       &network->dns_upstream);
        if (result == 0 && network->dns_upstream && dsh_network_upstream_check(network->dns_upstream) < 0)
                result = dsh_json_invalid(decoder->error, decoder->what, &upstream,
                                          "must be IPV4:PORT or [IPV6]:PORT (a resolver's address, not its name)");
        /* Hosts make the allow-list; an object without them is off with its local ports. */
        network->mode = dsh_strv_length(network->allow_hosts) > 0 ? DSH_NETWORK_ALLOW_LIST : DSH_NETWORK_OFF;
        return result;
}

int dsh_json_network_from_value(const json_t *value, const char *what, const dsh_json_path *path,
                                dsh_network_policy *network_out, dsh_error *error)
{
        dsh_network_policy network = DSH_NETWORK_POLICY_INIT;
        dsh_json_decoder decoder = { what, error };
        const char *word = json_string_value(value);
        int result;

        *network_out = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
        if (json_is_string(value)) {
                if (strlen(word) != json_string_length(value) || dsh_network_mode_parse(word, &network.mode) < 0)
                        return dsh_json_invalid(error, what, path,
                                                "must be \"on\", \"off\" or {\"allowHosts\": [...], "
                                                "\"allowLocalPorts\": [...], \"dnsUpstream\": \"IP:PORT\"}");
                *network_out = network;
                return 0;
        }
        if (!json_is_object(value))
                return dsh_json_invalid(error, what, path,
                                        "must be \"on\", \"off\" or {\"allowHosts\": [...], \"allowLocalPorts\": "
                                        "[...], \"dnsUpstream\": \"IP:PORT\"}");
        result = decode_network_object(&decoder, value, path, &network);
        if (result < 0) {
                dsh_network_policy_clear(&network);
                return result;
        }
        *network_out = network;
        return 0;
}

/* ---------------------------------------------------------------- policy -- */

json_t *dsh_json_policy_value(const dsh_policy *policy, const char *what, dsh_error *error)
{
        dsh_json_encoder encoder = { what, error, false };
        json_t *object = dsh_json_encoder_new(&encoder, json_object());

        if ((unsigned) policy->mode >= DSH_MODE_COUNT) {
                dsh_json_path path = dsh_json_path_key(&dsh_json_root, "mode");

                dsh_json_invalid(error, what, &path, "is not a mode");
                encoder.failed = true;
        }
        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "mode", dsh_mode_name(policy->mode));
        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "workspaceRoot", policy->workspace_root);
        if (dsh_strv_length(policy->additional_writable_roots) > 0)
                dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "additionalWritableRoots",
                                            policy->additional_writable_roots);
        if (policy->session_id)
                dsh_json_set_string_member(&encoder, object, &dsh_json_root, "sessionId", policy->session_id);
        if (dsh_strv_length(policy->allowed_unix_sockets) > 0)
                dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "allowedUnixSockets",
                                            policy->allowed_unix_sockets);
        /* The call's own secrets, omitted when none: a policy without them reads back the same. */
        if (dsh_strv_length(policy->masked_paths) > 0)
                dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "maskedPaths", policy->masked_paths);
        if (dsh_strv_length(policy->allowed_environment) > 0)
                dsh_json_set_strings_member(&encoder, object, &dsh_json_root, "allowEnvironment",
                                            policy->allowed_environment);
        /* Absent is on: a policy that says nothing of the network is today's, and reads back the same. */
        if (policy->network.mode != DSH_NETWORK_ON) {
                dsh_json_path path = dsh_json_path_key(&dsh_json_root, "network");

                dsh_json_set_member(&encoder, object, "network", dsh_json_network_value(&encoder, &policy->network,
                                                                                       &path));
        }
        return dsh_json_encoder_finish(&encoder, object);
}

int dsh_json_policy_from_value(const json_t *value, const char *what, dsh_policy *policy_out, dsh_error *error)
{
        static const char *const keys[] = { "mode", "workspaceRoot", "additionalWritableRoots", "sessionId",
                                             "allowedUnixSockets", "network", "maskedPaths", "allowEnvironment",
                                             NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_json_decoder decoder = { what, error };
        int result = dsh_json_check_object(&decoder, value, &dsh_json_root, keys);

        if (result == 0)
                result = dsh_json_decode_mode(&decoder, value, &policy.mode);
        if (result == 0)
                result = dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "workspaceRoot",
                                                       DSH_JSON_REQUIRED,
                                                       &policy.workspace_root);
        if (result == 0)
                result = dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "additionalWritableRoots", 0,
                                                     &policy.additional_writable_roots);
        if (result == 0)
                result = dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "allowedUnixSockets", 0,
                                                     &policy.allowed_unix_sockets);
        /* Read as given; dsh_policy_prepare() checks each entry before any call uses it. */
        if (result == 0)
                result = dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "maskedPaths", 0,
                                                     &policy.masked_paths);
        if (result == 0)
                result = dsh_json_decode_string_list(&decoder, value, &dsh_json_root, "allowEnvironment", 0,
                                                     &policy.allowed_environment);
        if (result == 0)
                result = dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "sessionId", 0,
                                                       &policy.session_id);
        if (result == 0 && json_object_get(value, "network")) {
                dsh_json_path path = dsh_json_path_key(&dsh_json_root, "network");

                result = dsh_json_network_from_value(json_object_get(value, "network"), what, &path,
                                                     &policy.network, error);
        }
        if (result == 0 && policy.session_id && !dsh_session_id_is_valid(policy.session_id)) {
                dsh_json_path path = dsh_json_path_key(&dsh_json_root, "sessionId");

                result = dsh_json_invalid(error, what, &path, "is not a valid session id");
        }
        if (result < 0) {
                dsh_policy_clear(&policy);
                return result;
        }
        *policy_out = policy;
        return 0;
}

/* -------------------------------------------------------------- sessions -- */

struct session_walk {
        json_t *header;
        json_t *events;
        uint64_t unloadable_line;       /* a line replay accepted that no JSON reader can load (0: none) */
};

static int collect_event(const dsh_session_event *event, void *userdata)
{
        struct session_walk *walk = userdata;
        /* As the log holds it: a NUL escaped there (\u0000) stays escaped here. */
        json_t *value = json_loadb(event->line, event->line_length, JSON_ALLOW_NUL, NULL);

        /* Replay only checks the syntax of events it ignores, not their UTF-8: jansson may refuse one. */
        if (!value) {
                walk->unloadable_line = event->line_number;
                return 1;
        }
        if (event->seq == 0 && !walk->header) {
                walk->header = value;
                return 0;
        }
        return json_array_append_new(walk->events, value) < 0 ? 1 : 0;
}

/* The session's override, and the mode in effect without an explicit one: the override, else the default. */
static bool session_modes(const dsh_session *session, dsh_mode default_mode, dsh_mode *effective_out)
{
        *effective_out = default_mode;
        return dsh_session_override(session, effective_out);
}

json_t *dsh_json_session_value(dsh_session *session, dsh_mode default_mode, const char *what, dsh_error *error)
{
        dsh_json_encoder encoder = { what, error, false };
        struct session_walk walk = { NULL, NULL, 0 };
        dsh_json_path path_path = dsh_json_path_key(&dsh_json_root, "path");
        json_t *path = dsh_json_string_value(&encoder, dsh_session_path(session), &path_path);
        json_t *object = NULL;
        dsh_mode effective;
        bool has_override = session_modes(session, default_mode, &effective);
        int walked = 0;

        walk.events = dsh_json_encoder_new(&encoder, json_array());
        if (!encoder.failed) {
                walked = dsh_session_foreach_event(session, collect_event, &walk, error);
                if (walked < 0)
                        encoder.failed = true;  /* the store said why */
                else if (walk.unloadable_line) {
                        dsh_error_set(error, DSH_ERROR_INVARIANT, EINVAL,
                                      "session log %s: line %" PRIu64 " is not valid UTF-8 JSON, and JSON cannot "
                                      "carry it", dsh_session_path(session), walk.unloadable_line);
                        encoder.failed = true;
                } else if (walked > 0) {
                        dsh_json_encoder_out_of_memory(&encoder);
                }
        }
        if (!encoder.failed) {
                object = dsh_json_encoder_new(&encoder, json_object());
                dsh_json_set_member(&encoder, object, "header", json_incref(walk.header));
                dsh_json_set_member(&encoder, object, "events", json_incref(walk.events));
                dsh_json_set_string_member(&encoder, object, &dsh_json_root, "effectiveMode", dsh_mode_name(effective));
                dsh_json_set_member(&encoder, object, "path", json_incref(path));
                if (has_override)
                        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "override",
                                                   dsh_mode_name(effective));
        }
        json_decref(walk.header);
        json_decref(walk.events);
        json_decref(path);
        return dsh_json_encoder_finish(&encoder, object);
}

static json_t *encode_list_entry(dsh_json_encoder *encoder, dsh_session *session, dsh_mode default_mode,
                                 const dsh_json_path *path)
{
        dsh_json_path id_path = dsh_json_path_key(path, "id"), cwd_path = dsh_json_path_key(path, "cwd");
        json_t *entry = dsh_json_encoder_new(encoder, json_object());
        size_t cwd_length = 0;
        /* The recorded cwd whole: a NUL byte in an edited log is shown (\u0000), not cut at. */
        const char *cwd = dsh_session_cwd(session, &cwd_length);
        dsh_mode effective;
        bool has_override = session_modes(session, default_mode, &effective);

        dsh_json_set_member(encoder, entry, "id", dsh_json_string_value(encoder, dsh_session_id(session), &id_path));
        dsh_json_set_member(encoder, entry, "cwd", dsh_json_text_value(encoder, cwd, cwd_length, &cwd_path));
        dsh_json_set_string_member(encoder, entry, path, "effectiveMode", dsh_mode_name(effective));
        if (has_override)
                dsh_json_set_string_member(encoder, entry, path, "override", dsh_mode_name(effective));
        return entry;
}

json_t *dsh_json_session_list_value(dsh_session_store *store, dsh_mode default_mode,
                                    dsh_json_session_skipped_fn skipped, void *data, const char *what,
                                    dsh_error *error)
{
        dsh_json_encoder encoder = { what, error, false };
        char **ids = NULL;
        json_t *array;

        if (dsh_session_store_list(store, &ids, error) < 0)
                return NULL;
        array = dsh_json_encoder_new(&encoder, json_array());
        for (char **id = ids; array && id && *id && !encoder.failed; id++) {
                dsh_json_path path = dsh_json_path_index(&dsh_json_root, json_array_size(array));
                dsh_error skip = DSH_ERROR_INIT;
                dsh_session *session = NULL;

                if (dsh_session_open(store, *id, &session, &skip) < 0) {
                        if (skipped)
                                skipped(*id, &skip, data);
                        dsh_error_clear(&skip);
                        continue;
                }
                dsh_json_append_element(&encoder, array, encode_list_entry(&encoder, session, default_mode, &path));
                dsh_session_free(session);
        }
        dsh_strv_free(ids);
        return dsh_json_encoder_finish(&encoder, array);
}

int dsh_json_encode_policy(const dsh_policy *policy, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        int result = dsh_json_value_text(dsh_json_policy_value(policy, "policy", used), text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_encode_network_policy(const dsh_network_policy *network, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        dsh_json_encoder encoder = { "network", used, false };
        json_t *value = dsh_json_encoder_finish(&encoder, dsh_json_network_value(&encoder, network, &dsh_json_root));
        int result = 0;

        /* A bare "on" or "off" is a whole value here, which the core's dump (objects only) does not write. */
        *text_out = NULL;
        if (!value)
                result = used->errno_value > 0 ? -used->errno_value : -EINVAL;
        else if (!(*text_out = json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY)))
                result = dsh_error_set(used, DSH_ERROR_SYSTEM, ENOMEM, "cannot encode JSON: out of memory");
        json_decref(value);
        dsh_error_clear(&local);
        return result;
}

int dsh_json_decode_network_policy(const char *text, size_t length, const char *what,
                                   dsh_network_policy *network_out, dsh_error *error)
{
        json_error_t json_error;
        json_t *value = json_loadb(text, length, JSON_DECODE_ANY | DSH_JSON_STRICT_PARSE, &json_error);
        int result;

        *network_out = (dsh_network_policy) DSH_NETWORK_POLICY_INIT;
        if (!value) {
                dsh_autofree char *reason = dsh_error_printable_text(json_error.text);

                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "%s: not valid JSON: %s", what,
                                     reason ? reason : "?");
        }
        result = dsh_json_network_from_value(value, what, &dsh_json_root, network_out, error);
        json_decref(value);
        return result;
}

int dsh_json_encode_session(dsh_session *session, dsh_mode default_mode, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        int result = dsh_json_value_text(dsh_json_session_value(session, default_mode, "session", used), text_out,
                                         used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_encode_session_list(dsh_session_store *store, dsh_mode default_mode,
                                 dsh_json_session_skipped_fn skipped, void *data, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        json_t *value = dsh_json_session_list_value(store, default_mode, skipped, data, "session list", used);
        int result = dsh_json_value_text(value, text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_encode_mode_event_data(const char *mode, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        dsh_json_encoder encoder = { "sandbox/mode data", used, false };
        json_t *object = dsh_json_encoder_new(&encoder, json_object());
        int result;

        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "mode", mode);
        result = dsh_json_value_text(dsh_json_encoder_finish(&encoder, object), text_out, used);
        dsh_error_clear(&local);
        return result;
}

int dsh_json_decode_policy(const char *text, size_t length, dsh_policy *policy_out, dsh_error *error)
{
        json_t *value;
        int result = dsh_json_load_object(text, length, "policy", &value, error);

        if (result == 0)
                result = dsh_json_policy_from_value(value, "policy", policy_out, error);
        json_decref(value);
        return result;
}
