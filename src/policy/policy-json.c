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
        return dsh_json_encoder_finish(&encoder, object);
}

int dsh_json_policy_from_value(const json_t *value, const char *what, dsh_policy *policy_out, dsh_error *error)
{
        static const char *const keys[] = { "mode", "workspaceRoot", "additionalWritableRoots", "sessionId",
                                             "allowedUnixSockets", NULL };
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
        if (result == 0)
                result = dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "sessionId", 0,
                                                       &policy.session_id);
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
