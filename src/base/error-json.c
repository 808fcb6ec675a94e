/* SPDX-License-Identifier: MIT */
/*
 * The typed error's shape (dsh-sandbox/json.h), beside the error: the
 * bash result and the remote provider carry it.  Built on the JSON core
 * (base/json-core.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/json.h"
#include "base/error.h"
#include "base/error-json.h"
#include "base/json-core.h"

json_t *dsh_json_error_value(const dsh_error *value, const char *what, dsh_error *error)
{
        dsh_json_encoder encoder = { what, error, false };
        const char *code = dsh_error_code_wire_name(value->code);
        const char *message = value->message ? value->message : strerror(value->errno_value ? value->errno_value
                                                                                            : EINVAL);
        dsh_autofree char *escaped = dsh_json_utf8_escaped(message);
        json_t *object;

        if (!code) {
                dsh_json_path path = dsh_json_path_key(&dsh_json_root, "code");

                dsh_json_invalid(error, what, &path, "is not set: there is no error to encode");
                return NULL;
        }
        if (!escaped) {
                dsh_json_out_of_memory(error, what);
                return NULL;
        }
        object = dsh_json_encoder_new(&encoder, json_object());
        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "code", code);
        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "message", escaped);
        return dsh_json_encoder_finish(&encoder, object);
}

static int decode_error_code(dsh_json_decoder *decoder, const json_t *object, dsh_error_code *code_out)
{
        const char *names[DSH_ERROR_CODE_LAST + 1];
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "code");
        const json_t *member;
        size_t count = 0;
        char buffer[512];
        int result = dsh_json_find_member(decoder, object, &path, "code", DSH_JSON_REQUIRED, &member);

        if (result < 0)
                return result;
        if (json_is_string(member) && strlen(json_string_value(member)) == json_string_length(member) &&
            dsh_error_code_from_wire_name(json_string_value(member), code_out) == 0)
                return 0;
        for (dsh_error_code code = DSH_ERROR_SANDBOX_UNAVAILABLE; code <= DSH_ERROR_CODE_LAST; code++)
                names[count++] = dsh_error_code_wire_name(code);
        names[count] = NULL;
        return dsh_json_invalid(decoder->error, decoder->what, &path, "must be %s",
                                dsh_json_alternatives(names, buffer, sizeof(buffer)));
}

int dsh_json_error_from_value(const json_t *value, const char *what, dsh_error *value_out, dsh_error *error)
{
        static const char *const keys[] = { "code", "message", NULL };
        dsh_error decoded = DSH_ERROR_INIT;
        dsh_json_decoder decoder = { what, error };
        int result = dsh_json_check_object(&decoder, value, &dsh_json_root, keys);

        if (result == 0)
                result = decode_error_code(&decoder, value, &decoded.code);
        if (result == 0)
                result = dsh_json_decode_string_member(&decoder, value, &dsh_json_root, "message", DSH_JSON_REQUIRED,
                                                       &decoded.message);
        if (result < 0) {
                dsh_error_clear(&decoded);
                return result;
        }
        *value_out = decoded;
        return 0;
}

int dsh_json_encode_error(const dsh_error *value, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        int result = dsh_json_value_text(dsh_json_error_value(value, "error", used), text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_decode_error(const char *text, size_t length, dsh_error *value_out, dsh_error *error)
{
        json_t *value;
        int result = dsh_json_load_object(text, length, "error", &value, error);

        if (result == 0)
                result = dsh_json_error_from_value(value, "error", value_out, error);
        json_decref(value);
        return result;
}
