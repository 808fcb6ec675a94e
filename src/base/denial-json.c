/* SPDX-License-Identifier: MIT */
/* A denial as JSON: see base/denial-json.h and json.h's "denial". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsh-sandbox/json.h"
#include "base/denial-json.h"
#include "base/util.h"

/*
 * A path, a host or a rule, any bytes the command chose (a file it named, a
 * Host header it sent): each byte that is not UTF-8 becomes \xNN, so that
 * no record is lost to one stray byte.  Such a record is for reading, never
 * for acting on byte for byte.
 */
static void set_escaped_member(dsh_json_encoder *encoder, json_t *object, const dsh_json_path *path,
                               const char *key, const char *text)
{
        dsh_autofree char *escaped = NULL;

        if (!text || encoder->failed)
                return;
        escaped = dsh_json_utf8_escaped(text);
        if (!escaped) {
                dsh_json_encoder_out_of_memory(encoder);
                return;
        }
        dsh_json_set_string_member(encoder, object, path, key, escaped);
}

static json_t *grant_value(dsh_json_encoder *encoder, const dsh_grant *grant, const dsh_json_path *path)
{
        json_t *object = dsh_json_encoder_new(encoder, json_object());

        dsh_json_set_string_member(encoder, object, path, "kind", dsh_grant_kind_name(grant->kind));
        if (grant->kind != DSH_GRANT_NONE && grant->kind != DSH_GRANT_MODE)
                set_escaped_member(encoder, object, path, "target", grant->target);
        if (grant->kind == DSH_GRANT_MODE || (grant->kind != DSH_GRANT_NONE && grant->widens))
                dsh_json_set_string_member(encoder, object, path, "mode", dsh_mode_name(grant->mode));
        return object;
}

json_t *dsh_json_denial_value(dsh_json_encoder *encoder, const dsh_denial *denial, const dsh_json_path *path)
{
        json_t *object = dsh_json_encoder_new(encoder, json_object());
        dsh_json_path grant_path = dsh_json_path_key(path, "grant");

        dsh_json_set_string_member(encoder, object, path, "op", dsh_denial_op_name(denial->op));
        set_escaped_member(encoder, object, path, "call", denial->call);
        set_escaped_member(encoder, object, path, "path", denial->path);
        set_escaped_member(encoder, object, path, "host", denial->host);
        if (denial->port > 0)
                dsh_json_set_member(encoder, object, "port", dsh_json_encoder_new(encoder, json_integer(denial->port)));
        set_escaped_member(encoder, object, path, "rule", denial->rule ? denial->rule : "refused");
        dsh_json_set_string_member(encoder, object, path, "source", dsh_denial_source_name(denial->source));
        dsh_json_set_member(encoder, object, "grant", grant_value(encoder, &denial->grant, &grant_path));
        return object;
}

json_t *dsh_json_denials_array(dsh_json_encoder *encoder, const dsh_denials *denials, const dsh_json_path *path)
{
        json_t *array = dsh_json_encoder_new(encoder, json_array());

        for (size_t i = 0; denials && i < denials->count && !encoder->failed; i++) {
                dsh_json_path item = dsh_json_path_index(path, i);

                dsh_json_append_element(encoder, array, dsh_json_denial_value(encoder, &denials->items[i], &item));
        }
        return array;
}

/* ------------------------------------------------------------ decoding -- */

/* A member naming one of a vocabulary's words; `parse` says which. */
static int decode_name(dsh_json_decoder *decoder, const json_t *object, const dsh_json_path *path, const char *key,
                       unsigned flags, int (*parse)(const char *, int *), int *out)
{
        dsh_autofree char *name = NULL;
        dsh_json_path member = dsh_json_path_key(path, key);
        int result = dsh_json_decode_string_member(decoder, object, path, key, flags | DSH_JSON_TEXT_NON_EMPTY,
                                                   &name);

        if (result < 0 || !name)
                return result;
        if (parse(name, out) < 0)
                return dsh_json_invalid(decoder->error, decoder->what, &member, "is not a known name");
        return 0;
}

static int parse_op(const char *name, int *out)
{
        dsh_denial_op op;
        int result = dsh_denial_op_parse(name, &op);

        *out = (int) op;
        return result;
}

static int parse_source(const char *name, int *out)
{
        dsh_denial_source source;
        int result = dsh_denial_source_parse(name, &source);

        *out = (int) source;
        return result;
}

static int parse_grant_kind(const char *name, int *out)
{
        dsh_grant_kind kind;
        int result = dsh_grant_kind_parse(name, &kind);

        *out = (int) kind;
        return result;
}

static int decode_grant(dsh_json_decoder *decoder, const json_t *object, const dsh_json_path *path, dsh_grant *out)
{
        static const char *const keys[] = { "kind", "target", "mode", NULL };
        int kind = DSH_GRANT_NONE;
        int result = dsh_json_check_object(decoder, object, path, keys);

        if (result == 0)
                result = decode_name(decoder, object, path, "kind", DSH_JSON_REQUIRED, parse_grant_kind, &kind);
        out->kind = (dsh_grant_kind) kind;
        if (result == 0)
                result = dsh_json_decode_string_member(decoder, object, path, "target", DSH_JSON_TEXT_NON_EMPTY,
                                                       &out->target);
        out->widens = json_object_get(object, "mode") != NULL;
        if (result == 0 && out->widens)
                result = dsh_json_decode_mode(decoder, object, &out->mode);
        return result;
}

int dsh_json_decode_denial(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path,
                           dsh_denial *out)
{
        static const char *const keys[] = { "op", "call", "path", "host", "port", "rule", "source", "grant", NULL };
        dsh_json_path grant_path = dsh_json_path_key(path, "grant");
        const json_t *port = json_object_get(value, "port"), *grant = NULL;
        int op = 0, source = 0;
        int result = dsh_json_check_object(decoder, value, path, keys);

        if (result == 0)
                result = decode_name(decoder, value, path, "op", DSH_JSON_REQUIRED, parse_op, &op);
        out->op = (dsh_denial_op) op;
        if (result == 0)
                result = decode_name(decoder, value, path, "source", DSH_JSON_REQUIRED, parse_source, &source);
        out->source = (dsh_denial_source) source;
        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "call",
                                                       DSH_JSON_TEXT_NON_EMPTY | DSH_JSON_TEXT_SINGLE_LINE,
                                                       &out->call);
        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "path", DSH_JSON_TEXT_NON_EMPTY,
                                                       &out->path);
        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "host", DSH_JSON_TEXT_NON_EMPTY,
                                                       &out->host);
        if (result == 0)
                result = dsh_json_decode_string_member(decoder, value, path, "rule",
                                                       DSH_JSON_REQUIRED | DSH_JSON_TEXT_NON_EMPTY |
                                                       DSH_JSON_TEXT_SINGLE_LINE, &out->rule);
        if (result == 0 && port && (!json_is_integer(port) || json_integer_value(port) < 1 ||
                                    json_integer_value(port) > 65535)) {
                dsh_json_path port_path = dsh_json_path_key(path, "port");

                result = dsh_json_invalid(decoder->error, decoder->what, &port_path, "must be a port, 1 to 65535");
        }
        out->port = result == 0 && port ? (int) json_integer_value(port) : 0;
        if (result == 0)
                result = dsh_json_find_member(decoder, value, path, "grant", DSH_JSON_REQUIRED, &grant);
        if (result == 0)
                result = decode_grant(decoder, grant, &grant_path, &out->grant);
        if (result < 0)
                dsh_denial_clear(out);
        return result;
}

int dsh_json_decode_denials(dsh_json_decoder *decoder, const json_t *array, const dsh_json_path *path, size_t limit,
                            dsh_denials *out)
{
        size_t count = json_array_size(array);
        int result = 0;

        if (!json_is_array(array))
                return dsh_json_invalid(decoder->error, decoder->what, path, "must be an array of denials");
        if (count > limit)
                return dsh_json_invalid(decoder->error, decoder->what, path, "must hold at most %zu records", limit);
        out->items = count > 0 ? calloc(count, sizeof(*out->items)) : NULL;
        if (count > 0 && !out->items)
                return dsh_json_out_of_memory(decoder->error, decoder->what);
        for (size_t i = 0; result == 0 && i < count; i++) {
                dsh_json_path item = dsh_json_path_index(path, i);

                out->items[i] = (dsh_denial) DSH_DENIAL_INIT;
                result = dsh_json_decode_denial(decoder, json_array_get(array, i), &item, &out->items[i]);
                if (result == 0)
                        out->count++;
        }
        if (result < 0)
                dsh_denials_clear(out);
        return result;
}

/* ------------------------------------------------- the public texts -- */

int dsh_json_encode_denial(const dsh_denial *denial, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        dsh_json_encoder encoder = { "denial", used, false };
        json_t *value = dsh_json_denial_value(&encoder, denial, &dsh_json_root);
        int result = dsh_json_value_text(dsh_json_encoder_finish(&encoder, value), text_out, used);

        dsh_error_clear(&local);
        return result;
}

/* {"denials":[...]} and "dropped" when some were: the list form of every surface. */
static void set_denials_members(dsh_json_encoder *encoder, json_t *object, const dsh_denials *denials)
{
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "denials");

        dsh_json_set_member(encoder, object, "denials", dsh_json_denials_array(encoder, denials, &path));
        if (denials->dropped > 0)
                dsh_json_set_member(encoder, object, "dropped",
                                    dsh_json_encoder_new(encoder, json_integer((json_int_t) denials->dropped)));
}

int dsh_json_encode_denials(const dsh_denials *denials, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        dsh_json_encoder encoder = { "denials", used, false };
        json_t *object = dsh_json_encoder_new(&encoder, json_object());
        int result;

        set_denials_members(&encoder, object, denials);
        result = dsh_json_value_text(dsh_json_encoder_finish(&encoder, object), text_out, used);
        dsh_error_clear(&local);
        return result;
}

json_t *dsh_json_session_denial_value(dsh_json_encoder *encoder, const dsh_session_denial *kept,
                                      const dsh_json_path *path)
{
        json_t *object = dsh_json_denial_value(encoder, &kept->denial, path);

        dsh_json_set_member(encoder, object, "at", dsh_json_encoder_new(encoder, json_integer(kept->at_ms)));
        set_escaped_member(encoder, object, path, "surface", kept->surface);
        return object;
}

int dsh_json_encode_session_denials(const char *session_id, const dsh_session_denials *denials, char **text_out,
                                    dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = dsh_json_error_or(error, &local);
        dsh_json_encoder encoder = { "session denials", used, false };
        dsh_json_path list_path = dsh_json_path_key(&dsh_json_root, "denials");
        json_t *object = dsh_json_encoder_new(&encoder, json_object());
        json_t *list = dsh_json_encoder_new(&encoder, json_array());
        int result;

        dsh_json_set_string_member(&encoder, object, &dsh_json_root, "sessionId", session_id);
        for (size_t i = 0; i < denials->count && !encoder.failed; i++) {
                dsh_json_path item = dsh_json_path_index(&list_path, i);

                dsh_json_append_element(&encoder, list, dsh_json_session_denial_value(&encoder, &denials->items[i], &item));
        }
        dsh_json_set_member(&encoder, object, "denials", list);
        if (denials->dropped > 0)
                dsh_json_set_member(&encoder, object, "dropped",
                                    dsh_json_encoder_new(&encoder, json_integer((json_int_t) denials->dropped)));
        result = dsh_json_value_text(dsh_json_encoder_finish(&encoder, object), text_out, used);
        dsh_error_clear(&local);
        return result;
}
