/* SPDX-License-Identifier: MIT */
/*
 * The JSON core (base/json-core.h): member paths, the checked encoder, the
 * strict decoder, load and dump.  No shape of any domain is written here;
 * each lives beside its domain and is built from these.
 *
 * Encoding checks each string before jansson sees it: json_string() returns
 * NULL for bytes that are not UTF-8, and a NULL member or element is easy
 * to skip by accident, which would print `rm -rf "junk\xff" /` as
 * `rm -rf /`.  Here a NULL always fails the whole value, and a string that
 * is not UTF-8 fails it with the member's name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/json-core.h"

/* The one output format: compact, keys in the order they were set (what jansson ≥ 2.8 always does). */
#define DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER)
/* Any value parses, so that a non-object is named as such ("not a JSON object"), not as a syntax error. */
#define LOAD_FLAGS (DSH_JSON_STRICT_PARSE | JSON_DECODE_ANY)

/* ------------------------------------------------------ member paths -- */

const dsh_json_path dsh_json_root = { "" };

dsh_json_path dsh_json_path_format(const char *format, ...)
{
        dsh_json_path path;
        va_list arguments;

        va_start(arguments, format);
        vsnprintf(path.text, sizeof(path.text), format, arguments);
        va_end(arguments);
        return path;
}

dsh_json_path dsh_json_path_key(const dsh_json_path *parent, const char *key)
{
        return dsh_json_path_format("%s%s\"%s\"", parent->text, parent->text[0] ? "." : "", key);
}

dsh_json_path dsh_json_path_index(const dsh_json_path *parent, size_t index)
{
        return dsh_json_path_format("%s[%zu]", parent->text, index);
}

int dsh_json_invalid(dsh_error *error, const char *what, const dsh_json_path *path, const char *format, ...)
{
        char prefix[sizeof(path->text) + 256];
        va_list arguments;
        int result;

        snprintf(prefix, sizeof(prefix), "%s: %s%s", what, path->text, path->text[0] ? " " : "");
        va_start(arguments, format);
        result = dsh_error_vset(error, DSH_ERROR_INVALID_INPUT, EINVAL, prefix, format, arguments);
        va_end(arguments);
        return result;
}

int dsh_json_out_of_memory(dsh_error *error, const char *what)
{
        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "%s: out of memory", what);
}

/* "\"a\", \"b\" or \"c\"" from a NULL-terminated list, into `buffer`. */
const char *dsh_json_alternatives(const char *const *names, char *buffer, size_t size)
{
        size_t used = 0, count = 0;

        buffer[0] = '\0';
        while (names[count])
                count++;
        for (size_t i = 0; i < count && used < size; i++)
                used += (size_t) snprintf(buffer + used, size - used, "%s\"%s\"",
                                          i == 0 ? "" : i + 1 == count ? " or " : ", ", names[i]);
        return buffer;
}
/* -------------------------------------------------------------- encoding -- */

void dsh_json_encoder_out_of_memory(dsh_json_encoder *encoder)
{
        if (!encoder->failed)
                dsh_json_out_of_memory(encoder->error, encoder->what);
        encoder->failed = true;
}

json_t *dsh_json_encoder_new(dsh_json_encoder *encoder, json_t *fresh)
{
        if (!fresh)
                dsh_json_encoder_out_of_memory(encoder);
        return fresh;
}

/* `value` as the finished result, or NULL (and `value` released) after any failure. */
json_t *dsh_json_encoder_finish(dsh_json_encoder *encoder, json_t *value)
{
        if (encoder->failed || !value) {
                json_decref(value);
                if (!encoder->failed)
                        dsh_json_encoder_out_of_memory(encoder);
                return NULL;
        }
        return value;
}

/* `length` bytes as a JSON string (NUL bytes included, as \u0000), or NULL after naming what is wrong. */
json_t *dsh_json_text_value(dsh_json_encoder *encoder, const char *text, size_t length, const dsh_json_path *path)
{
        size_t invalid_offset = 0;

        if (encoder->failed)
                return NULL;
        if (!text) {
                dsh_json_invalid(encoder->error, encoder->what, path, "is not set");
                encoder->failed = true;
                return NULL;
        }
        if (!dsh_text_is_utf8(text, length, &invalid_offset)) {
                dsh_json_invalid(encoder->error, encoder->what, path,
                                 "is not valid UTF-8 (byte 0x%02x at offset %zu), and a JSON string cannot carry it",
                                 (unsigned char) text[invalid_offset], invalid_offset);
                encoder->failed = true;
                return NULL;
        }
        return dsh_json_encoder_new(encoder, json_stringn(text, length));
}

json_t *dsh_json_string_value(dsh_json_encoder *encoder, const char *text, const dsh_json_path *path)
{
        return dsh_json_text_value(encoder, text, text ? strlen(text) : 0, path);
}

/* A NULL-terminated vector as an array of strings; NULL encodes as []. */
json_t *dsh_json_strings_value(dsh_json_encoder *encoder, char *const *strings, const dsh_json_path *path)
{
        json_t *array = dsh_json_encoder_new(encoder, json_array());

        for (size_t i = 0; array && strings && strings[i] && !encoder->failed; i++) {
                dsh_json_path element = dsh_json_path_index(path, i);
                json_t *string = dsh_json_string_value(encoder, strings[i], &element);

                if (string && json_array_append_new(array, string) < 0)
                        dsh_json_encoder_out_of_memory(encoder);
        }
        return array;
}

/* Adds `value` (stolen, even on failure) to `object`; a NULL value is a failure already recorded. */
void dsh_json_set_member(dsh_json_encoder *encoder, json_t *object, const char *key, json_t *value)
{
        if (!value || !object) {
                json_decref(value);
                if (!encoder->failed)
                        dsh_json_encoder_out_of_memory(encoder);
                return;
        }
        if (json_object_set_new(object, key, value) < 0)
                dsh_json_encoder_out_of_memory(encoder);
}

void dsh_json_append_element(dsh_json_encoder *encoder, json_t *array, json_t *value)
{
        if (!value || !array) {
                json_decref(value);
                if (!encoder->failed)
                        dsh_json_encoder_out_of_memory(encoder);
                return;
        }
        if (json_array_append_new(array, value) < 0)
                dsh_json_encoder_out_of_memory(encoder);
}

/* A string member named by its key under `parent`. */
void dsh_json_set_string_member(dsh_json_encoder *encoder, json_t *object, const dsh_json_path *parent, const char *key,
                                const char *text)
{
        dsh_json_path path = dsh_json_path_key(parent, key);

        dsh_json_set_member(encoder, object, key, dsh_json_string_value(encoder, text, &path));
}

void dsh_json_set_strings_member(dsh_json_encoder *encoder, json_t *object, const dsh_json_path *parent,
                                 const char *key,
                                 char *const *strings)
{
        dsh_json_path path = dsh_json_path_key(parent, key);

        dsh_json_set_member(encoder, object, key, dsh_json_strings_value(encoder, strings, &path));
}

int dsh_json_dump(const json_t *value, char **text_out, dsh_error *error)
{
        *text_out = json_dumps(value, DUMP_FLAGS);
        if (!*text_out)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "cannot encode JSON: out of memory");
        return 0;
}

int dsh_json_load_object(const char *text, size_t length, const char *what, json_t **value_out, dsh_error *error)
{
        json_error_t parse_error;
        json_t *value;

        *value_out = NULL;
        value = json_loadb(text ? text : "", text ? length : 0, LOAD_FLAGS, &parse_error);
        if (!value) {
                /* The parser quotes the input near the error: keep the message one printable line. */
                dsh_autofree char *reason = dsh_error_printable_text(parse_error.text);

                if (!reason)
                        return dsh_json_out_of_memory(error, what);
                return dsh_json_invalid(error, what, &dsh_json_root, "not valid JSON: %s at line %d, column %d", reason,
                                        parse_error.line, parse_error.column);
        }
        if (!json_is_object(value)) {
                json_decref(value);
                return dsh_json_invalid(error, what, &dsh_json_root, "not a JSON object");
        }
        *value_out = value;
        return 0;
}

int dsh_json_load_object_fd(int fd, size_t limit, const char *what, json_t **value_out, dsh_error *error)
{
        dsh_autofree char *text = NULL;
        size_t length = 0;

        *value_out = NULL;
        /* One byte beyond the limit tells a file of exactly `limit` bytes from a longer one. */
        if (limit >= SIZE_MAX - 1 || !(text = malloc(limit + 1)))
                return dsh_json_out_of_memory(error, what);
        for (;;) {
                ssize_t got = read(fd, text + length, limit + 1 - length);

                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "%s: cannot read: %s", what,
                                             strerror(errno));
                if (got == 0)
                        break;
                length += (size_t) got;
                if (length > limit)
                        return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EFBIG, "%s: longer than %zu bytes",
                                             what, limit);
        }
        return dsh_json_load_object(text, length, what, value_out, error);
}

/* `value` must be an object with no key outside `known`. */
int dsh_json_check_object(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path,
                          const char *const *known)
{
        const char *key;
        size_t key_length;
        json_t *member;

        if (!json_is_object(value))
                return dsh_json_invalid(decoder->error, decoder->what, path, path->text[0] ? "must be an object"
                                                                                   : "not a JSON object");
        json_object_keylen_foreach((json_t *) value, key, key_length, member) {
                bool is_known = false;

                for (const char *const *name = known; *name && !is_known; name++)
                        is_known = strlen(*name) == key_length && memcmp(*name, key, key_length) == 0;
                if (is_known)
                        continue;
                /* The key is the sender's text (jansson refuses a NUL in one): one printable line. */
                {
                        dsh_autofree char *printable = dsh_error_printable_text(key);
                        dsh_json_path unknown;

                        if (!printable)
                                return dsh_json_out_of_memory(decoder->error, decoder->what);
                        unknown = dsh_json_path_key(path, printable);
                        return dsh_json_invalid(decoder->error, decoder->what, &unknown, "is an unknown key");
                }
        }
        return 0;
}

/* `*member_out` = the member `key` of `object`, NULL when absent (an error with DSH_JSON_REQUIRED). */
int dsh_json_find_member(dsh_json_decoder *decoder, const json_t *object, const dsh_json_path *path, const char *key,
                         unsigned flags, const json_t **member_out)
{
        *member_out = json_object_get(object, key);
        if (!*member_out && (flags & DSH_JSON_REQUIRED))
                return dsh_json_invalid(decoder->error, decoder->what, path, "is missing");
        return 0;
}

static const char *text_requirement(unsigned flags)
{
        if ((flags & DSH_JSON_TEXT_NON_EMPTY) && (flags & DSH_JSON_TEXT_SINGLE_LINE))
                return "a non-empty single-line string";
        if (flags & DSH_JSON_TEXT_NON_EMPTY)
                return "a non-empty string";
        if (flags & DSH_JSON_TEXT_SINGLE_LINE)
                return "a single-line string";
        return "a string";
}

/* A string value as a new C string: no NUL byte inside (a C string would end there). */
int dsh_json_decode_text(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path, unsigned flags,
                         char **text_out)
{
        const char *text = json_string_value(value);
        size_t length = json_string_length(value);

        *text_out = NULL;
        if (!json_is_string(value) || ((flags & DSH_JSON_TEXT_NON_EMPTY) && length == 0) ||
            ((flags & DSH_JSON_TEXT_SINGLE_LINE) && strpbrk(text, "\r\n")))
                return dsh_json_invalid(decoder->error, decoder->what, path, "must be %s", text_requirement(flags));
        if (memchr(text, '\0', length))
                return dsh_json_invalid(decoder->error, decoder->what, path, "must not contain a NUL byte");
        *text_out = strdup(text);
        return *text_out ? 0 : dsh_json_out_of_memory(decoder->error, decoder->what);
}

int dsh_json_decode_string_member(dsh_json_decoder *decoder, const json_t *object, const dsh_json_path *parent,
                                  const char *key,
                                  unsigned flags, char **text_out)
{
        dsh_json_path path = dsh_json_path_key(parent, key);
        const json_t *member;
        int result = dsh_json_find_member(decoder, object, &path, key, flags, &member);

        *text_out = NULL;
        if (result == 0 && member)
                result = dsh_json_decode_text(decoder, member, &path, flags, text_out);
        return result;
}

/*
 * An array of strings as a NULL-terminated vector.  An absent member, or an
 * empty one that is not DSH_JSON_REQUIRED, reads as NULL (none); a required
 * empty one as an empty vector.
 */
int dsh_json_decode_string_list(dsh_json_decoder *decoder, const json_t *object, const dsh_json_path *parent,
                                const char *key,
                                unsigned flags, char ***strings_out)
{
        dsh_json_path path = dsh_json_path_key(parent, key);
        const json_t *member;
        char **strings;
        size_t count;
        int result = dsh_json_find_member(decoder, object, &path, key, flags, &member);

        *strings_out = NULL;
        if (result < 0 || !member)
                return result;
        if (!json_is_array(member))
                return dsh_json_invalid(decoder->error, decoder->what, &path, "must be an array of %ss",
                                        text_requirement(flags) + strlen("a "));
        count = json_array_size(member);
        if (count == 0 && (flags & DSH_JSON_LIST_NON_EMPTY))
                return dsh_json_invalid(decoder->error, decoder->what, &path, "must not be empty");
        if (count == 0 && !(flags & DSH_JSON_REQUIRED))
                return 0;
        strings = calloc(count + 1, sizeof(char *));
        if (!strings)
                return dsh_json_out_of_memory(decoder->error, decoder->what);
        for (size_t i = 0; i < count && result == 0; i++) {
                dsh_json_path element = dsh_json_path_index(&path, i);

                result = dsh_json_decode_text(decoder, json_array_get(member, i), &element, flags, &strings[i]);
        }
        if (result < 0) {
                dsh_strv_free(strings);
                return result;
        }
        *strings_out = strings;
        return 0;
}

int dsh_json_decode_enforcement(dsh_json_decoder *decoder, const json_t *object, dsh_enforcement *enforcement_out)
{
        static const dsh_enforcement known[] = { DSH_ENFORCEMENT_FULL, DSH_ENFORCEMENT_PARTIAL };
        const char *const names[] = { dsh_enforcement_name(known[0]), dsh_enforcement_name(known[1]), NULL };
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "enforcement");
        const json_t *member;
        char buffer[64];
        int result = dsh_json_find_member(decoder, object, &path, "enforcement", DSH_JSON_REQUIRED, &member);

        if (result < 0)
                return result;
        for (size_t i = 0; json_is_string(member) && names[i]; i++)
                if (strcmp(json_string_value(member), names[i]) == 0 &&
                    json_string_length(member) == strlen(names[i])) {
                        *enforcement_out = known[i];
                        return 0;
                }
        return dsh_json_invalid(decoder->error, decoder->what, &path, "must be %s",
                                dsh_json_alternatives(names, buffer, sizeof(buffer)));
}

int dsh_json_decode_mode(dsh_json_decoder *decoder, const json_t *object, dsh_mode *mode_out)
{
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, "mode");
        const json_t *member;
        char buffer[128];
        int result = dsh_json_find_member(decoder, object, &path, "mode", DSH_JSON_REQUIRED, &member);

        if (result < 0)
                return result;
        if (json_is_string(member) && strlen(json_string_value(member)) == json_string_length(member) &&
            dsh_mode_parse(json_string_value(member), mode_out) == 0)
                return 0;
        return dsh_json_invalid(decoder->error, decoder->what, &path, "must be %s",
                                dsh_json_alternatives(dsh_sandbox_modes, buffer, sizeof(buffer)));
}


/*
 * `text` with each byte that does not decode as UTF-8 written as the four
 * characters \xNN: an error message must reach the other side even when it
 * quotes a path JSON cannot carry.  Returns a new string, or NULL (ENOMEM).
 */
char *dsh_json_utf8_escaped_length(const char *text, size_t length, size_t *escaped_length)
{
        size_t offset = 0, used = 0, invalid_offset;
        char *escaped = length <= (SIZE_MAX - 1) / 4 ? malloc(length * 4 + 1) : NULL;

        if (!escaped)
                return NULL;
        while (offset < length) {
                size_t valid = length - offset;

                if (!dsh_text_is_utf8(text + offset, length - offset, &invalid_offset))
                        valid = invalid_offset;
                memcpy(escaped + used, text + offset, valid);
                used += valid;
                offset += valid;
                if (offset < length) {
                        used += (size_t) snprintf(escaped + used, 5, "\\x%02x", (unsigned char) text[offset]);
                        offset++;
                }
        }
        escaped[used] = '\0';
        *escaped_length = used;
        return escaped;
}

char *dsh_json_utf8_escaped(const char *text)
{
        size_t length;

        return dsh_json_utf8_escaped_length(text, strlen(text), &length);
}

/* A boolean member, required. */
int dsh_json_decode_boolean(dsh_json_decoder *decoder, const json_t *object, const dsh_json_path *parent,
                            const char *key,
                            bool *out)
{
        dsh_json_path path = dsh_json_path_key(parent, key);
        const json_t *member;
        int result = dsh_json_find_member(decoder, object, &path, key, DSH_JSON_REQUIRED, &member);

        if (result < 0)
                return result;
        if (!json_is_boolean(member))
                return dsh_json_invalid(decoder->error, decoder->what, &path, "must be true or false");
        *out = json_is_true(member);
        return 0;
}

/* A required member that is null (`*out` = `absent`) or an integer from `minimum` to `maximum`. */
int dsh_json_decode_number_or_null(dsh_json_decoder *decoder, const json_t *object, const char *key, json_int_t minimum,
                                   json_int_t maximum, int absent, int *out)
{
        dsh_json_path path = dsh_json_path_key(&dsh_json_root, key);
        const json_t *member;
        int result = dsh_json_find_member(decoder, object, &path, key, DSH_JSON_REQUIRED, &member);

        if (result < 0)
                return result;
        if (json_is_null(member)) {
                *out = absent;
                return 0;
        }
        if (!json_is_integer(member) || json_integer_value(member) < minimum || json_integer_value(member) > maximum)
                return dsh_json_invalid(decoder->error, decoder->what, &path,
                                        "must be null or an integer from %lld to %lld",
                                        (long long) minimum, (long long) maximum);
        *out = (int) json_integer_value(member);
        return 0;
}


/* The caller's error, or a local one when the caller wants only the errno. */
dsh_error *dsh_json_error_or(dsh_error *error, dsh_error *local)
{
        return error ? error : local;
}

/* A built value (NULL: `error` says why) as text; the value is released. */
int dsh_json_value_text(json_t *value, char **text_out, dsh_error *error)
{
        int result;

        *text_out = NULL;
        if (!value)
                return error->errno_value > 0 ? -error->errno_value : -EINVAL;
        result = dsh_json_dump(value, text_out, error);
        json_decref(value);
        return result;
}
