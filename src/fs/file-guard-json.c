/* SPDX-License-Identifier: MIT */
/*
 * The file guard's result as `dsh-sandbox fs ... --json` prints it
 * (dsh-sandbox/json.h).  Built on the JSON core (base/json-core.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/json.h"
#include "base/json-core.h"
#include "fs/file-guard-json.h"

/* ------------------------------------------------------------ file guard -- */

static void set_count_member(dsh_json_encoder *encoder, json_t *object, const char *key, size_t count)
{
        dsh_json_set_member(encoder, object, key, dsh_json_encoder_new(encoder, json_integer((json_int_t) count)));
}

json_t *dsh_json_file_result_value(const dsh_file_result *result, const char *what, dsh_error *error)
{
        dsh_json_encoder encoder = { what, error, false };
        json_t *object = dsh_json_encoder_new(&encoder, json_object());
        dsh_json_path content_path = dsh_json_path_key(&dsh_json_root, "content");
        size_t content_length = result->content ? result->bytes : 0;

        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "operation",
                                   dsh_file_operation_name(result->operation));
        if (result->operation == DSH_FILE_MOVE)
                dsh_json_set_string_member(&encoder, object, &dsh_json_root, "source", result->source);
        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "path", result->path);
        switch (result->operation) {
        case DSH_FILE_WRITE:
                dsh_json_set_member(&encoder, object, "created",
                                    dsh_json_encoder_new(&encoder, json_boolean(result->created)));
                set_count_member(&encoder, object, "bytes", result->bytes);
                break;
        case DSH_FILE_EDIT:
                set_count_member(&encoder, object, "replacements", result->replacements);
                set_count_member(&encoder, object, "bytes", result->bytes);
                break;
        case DSH_FILE_MKDIR:
                dsh_json_set_member(&encoder, object, "created",
                                    dsh_json_encoder_new(&encoder, json_boolean(result->created)));
                break;
        case DSH_FILE_REMOVE:
                set_count_member(&encoder, object, "removed", result->removed);
                break;
        case DSH_FILE_READ:
                set_count_member(&encoder, object, "bytes", result->bytes);
                dsh_json_set_member(&encoder, object, "content",
                                    dsh_json_text_value(&encoder, result->content ? result->content : "",
                                                        content_length,
                                                        &content_path));
                break;
        case DSH_FILE_MOVE:
                break;
        }
        return dsh_json_encoder_finish(&encoder, object);
}

int dsh_json_encode_file_result(const dsh_file_result *result, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        int result_code = dsh_json_value_text(dsh_json_file_result_value(result, "file result", used), text_out, used);

        dsh_error_clear(&local);
        return result_code;
}
