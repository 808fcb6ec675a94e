/* SPDX-License-Identifier: MIT */
/*
 * The JSON codec: every shape that crosses a process boundary, written and
 * read in one place (dsh-sandbox/json.h states the shapes and the rules).
 *
 * Encoding checks each string before jansson sees it: json_string() returns
 * NULL for bytes that are not UTF-8, and a NULL member or element is easy
 * to skip by accident, which would print `rm -rf "junk\xff" /` as
 * `rm -rf /`.  Here a NULL always fails the whole value, and a string that
 * is not UTF-8 fails it with the member's name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json-codec.h"

/* The one output format: compact, keys in the order they were set (what jansson ≥ 2.8 always does). */
#define DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER)
/*
 * Duplicate keys are refused (which of two would a reader believe?); NUL
 * bytes are let through the parser so that the decoders can name the member
 * that holds one, instead of a parse error at a column.
 */
#define LOAD_FLAGS (JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY)

/* ------------------------------------------------------ member paths -- */

/*
 * Where a member sits, for messages: "\"runnerFailureRules\"[0].\"fatalSignatures\"[1]";
 * empty for the value itself.  Our shapes are shallow: a longer path is cut, never overrun.
 */
typedef struct member_path {
        char text[256];
} member_path;

static const member_path root_path = { "" };

static member_path path_format(const char *format, ...) __attribute__((format(printf, 1, 2)));

static member_path path_format(const char *format, ...)
{
        member_path path;
        va_list arguments;

        va_start(arguments, format);
        vsnprintf(path.text, sizeof(path.text), format, arguments);
        va_end(arguments);
        return path;
}

static member_path path_key(const member_path *parent, const char *key)
{
        return path_format("%s%s\"%s\"", parent->text, parent->text[0] ? "." : "", key);
}

static member_path path_index(const member_path *parent, size_t index)
{
        return path_format("%s[%zu]", parent->text, index);
}

/* Sets `error` to "<what>: <path> <problem>" (no path: "<what>: <problem>"), DSH_ERROR_INVALID_INPUT. */
static int invalid(dsh_error *error, const char *what, const member_path *path, const char *format, ...)
        __attribute__((format(printf, 4, 5)));

static int invalid(dsh_error *error, const char *what, const member_path *path, const char *format, ...)
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

static int out_of_memory(dsh_error *error, const char *what)
{
        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "%s: out of memory", what);
}

/* "\"a\", \"b\" or \"c\"" from a NULL-terminated list, into `buffer`. */
static const char *alternatives(const char *const *names, char *buffer, size_t size)
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

/* One value being built: the first failure is the one reported, the rest are its consequences. */
typedef struct json_encoder {
        const char *what;
        dsh_error *error;
        bool failed;
} json_encoder;

static void encoder_out_of_memory(json_encoder *encoder)
{
        if (!encoder->failed)
                out_of_memory(encoder->error, encoder->what);
        encoder->failed = true;
}

static json_t *encoder_new(json_encoder *encoder, json_t *fresh)
{
        if (!fresh)
                encoder_out_of_memory(encoder);
        return fresh;
}

/* `value` as the finished result, or NULL (and `value` released) after any failure. */
static json_t *encoder_finish(json_encoder *encoder, json_t *value)
{
        if (encoder->failed || !value) {
                json_decref(value);
                if (!encoder->failed)
                        encoder_out_of_memory(encoder);
                return NULL;
        }
        return value;
}

/* `length` bytes as a JSON string (NUL bytes included, as \u0000), or NULL after naming what is wrong. */
static json_t *encode_text(json_encoder *encoder, const char *text, size_t length, const member_path *path)
{
        size_t invalid_offset = 0;

        if (encoder->failed)
                return NULL;
        if (!text) {
                invalid(encoder->error, encoder->what, path, "is not set");
                encoder->failed = true;
                return NULL;
        }
        if (!dsh_text_is_utf8(text, length, &invalid_offset)) {
                invalid(encoder->error, encoder->what, path,
                        "is not valid UTF-8 (byte 0x%02x at offset %zu), and a JSON string cannot carry it",
                        (unsigned char) text[invalid_offset], invalid_offset);
                encoder->failed = true;
                return NULL;
        }
        return encoder_new(encoder, json_stringn(text, length));
}

static json_t *encode_string(json_encoder *encoder, const char *text, const member_path *path)
{
        return encode_text(encoder, text, text ? strlen(text) : 0, path);
}

/* A NULL-terminated vector as an array of strings; NULL encodes as []. */
static json_t *encode_strings(json_encoder *encoder, char *const *strings, const member_path *path)
{
        json_t *array = encoder_new(encoder, json_array());

        for (size_t i = 0; array && strings && strings[i] && !encoder->failed; i++) {
                member_path element = path_index(path, i);
                json_t *string = encode_string(encoder, strings[i], &element);

                if (string && json_array_append_new(array, string) < 0)
                        encoder_out_of_memory(encoder);
        }
        return array;
}

/* Adds `value` (stolen, even on failure) to `object`; a NULL value is a failure already recorded. */
static void set_member(json_encoder *encoder, json_t *object, const char *key, json_t *value)
{
        if (!value || !object) {
                json_decref(value);
                if (!encoder->failed)
                        encoder_out_of_memory(encoder);
                return;
        }
        if (json_object_set_new(object, key, value) < 0)
                encoder_out_of_memory(encoder);
}

static void append_element(json_encoder *encoder, json_t *array, json_t *value)
{
        if (!value || !array) {
                json_decref(value);
                if (!encoder->failed)
                        encoder_out_of_memory(encoder);
                return;
        }
        if (json_array_append_new(array, value) < 0)
                encoder_out_of_memory(encoder);
}

/* A string member named by its key under `parent`. */
static void set_string_member(json_encoder *encoder, json_t *object, const member_path *parent, const char *key,
                              const char *text)
{
        member_path path = path_key(parent, key);

        set_member(encoder, object, key, encode_string(encoder, text, &path));
}

static void set_strings_member(json_encoder *encoder, json_t *object, const member_path *parent, const char *key,
                               char *const *strings)
{
        member_path path = path_key(parent, key);

        set_member(encoder, object, key, encode_strings(encoder, strings, &path));
}

int dsh_json_dump(const json_t *value, char **text_out, dsh_error *error)
{
        *text_out = json_dumps(value, DUMP_FLAGS);
        if (!*text_out)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "cannot encode JSON: out of memory");
        return 0;
}

/* ------------------------------------------------------------ decoding -- */

typedef struct json_decoder {
        const char *what;
        dsh_error *error;
} json_decoder;

/* What a member must be, beyond its type. */
enum {
        MEMBER_REQUIRED = 1 << 0,       /* absent: "<path> is missing" */
        LIST_NON_EMPTY = 1 << 1,        /* []: "<path> must not be empty" */
        TEXT_NON_EMPTY = 1 << 2,        /* of a string or of each string of a list */
        TEXT_SINGLE_LINE = 1 << 3,      /* no CR or LF: a signature is matched within one line */
};

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
                        return out_of_memory(error, what);
                return invalid(error, what, &root_path, "not valid JSON: %s at line %d, column %d", reason,
                               parse_error.line, parse_error.column);
        }
        if (!json_is_object(value)) {
                json_decref(value);
                return invalid(error, what, &root_path, "not a JSON object");
        }
        *value_out = value;
        return 0;
}

/* `value` must be an object with no key outside `known`. */
static int check_object(json_decoder *decoder, const json_t *value, const member_path *path, const char *const *known)
{
        const char *key;
        size_t key_length;
        json_t *member;

        if (!json_is_object(value))
                return invalid(decoder->error, decoder->what, path, path->text[0] ? "must be an object"
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
                        member_path unknown;

                        if (!printable)
                                return out_of_memory(decoder->error, decoder->what);
                        unknown = path_key(path, printable);
                        return invalid(decoder->error, decoder->what, &unknown, "is an unknown key");
                }
        }
        return 0;
}

/* `*member_out` = the member `key` of `object`, NULL when absent (an error with MEMBER_REQUIRED). */
static int find_member(json_decoder *decoder, const json_t *object, const member_path *path, const char *key,
                       unsigned flags, const json_t **member_out)
{
        *member_out = json_object_get(object, key);
        if (!*member_out && (flags & MEMBER_REQUIRED))
                return invalid(decoder->error, decoder->what, path, "is missing");
        return 0;
}

static const char *text_requirement(unsigned flags)
{
        if ((flags & TEXT_NON_EMPTY) && (flags & TEXT_SINGLE_LINE))
                return "a non-empty single-line string";
        if (flags & TEXT_NON_EMPTY)
                return "a non-empty string";
        if (flags & TEXT_SINGLE_LINE)
                return "a single-line string";
        return "a string";
}

/* A string value as a new C string: no NUL byte inside (a C string would end there). */
static int decode_text(json_decoder *decoder, const json_t *value, const member_path *path, unsigned flags,
                       char **text_out)
{
        const char *text = json_string_value(value);
        size_t length = json_string_length(value);

        *text_out = NULL;
        if (!json_is_string(value) || ((flags & TEXT_NON_EMPTY) && length == 0) ||
            ((flags & TEXT_SINGLE_LINE) && strpbrk(text, "\r\n")))
                return invalid(decoder->error, decoder->what, path, "must be %s", text_requirement(flags));
        if (memchr(text, '\0', length))
                return invalid(decoder->error, decoder->what, path, "must not contain a NUL byte");
        *text_out = strdup(text);
        return *text_out ? 0 : out_of_memory(decoder->error, decoder->what);
}

static int decode_string_member(json_decoder *decoder, const json_t *object, const member_path *parent, const char *key,
                                unsigned flags, char **text_out)
{
        member_path path = path_key(parent, key);
        const json_t *member;
        int result = find_member(decoder, object, &path, key, flags, &member);

        *text_out = NULL;
        if (result == 0 && member)
                result = decode_text(decoder, member, &path, flags, text_out);
        return result;
}

/*
 * An array of strings as a NULL-terminated vector.  An absent member, or an
 * empty one that is not MEMBER_REQUIRED, reads as NULL (none); a required
 * empty one as an empty vector.
 */
static int decode_string_list(json_decoder *decoder, const json_t *object, const member_path *parent, const char *key,
                              unsigned flags, char ***strings_out)
{
        member_path path = path_key(parent, key);
        const json_t *member;
        char **strings;
        size_t count;
        int result = find_member(decoder, object, &path, key, flags, &member);

        *strings_out = NULL;
        if (result < 0 || !member)
                return result;
        if (!json_is_array(member))
                return invalid(decoder->error, decoder->what, &path, "must be an array of %ss",
                               text_requirement(flags) + strlen("a "));
        count = json_array_size(member);
        if (count == 0 && (flags & LIST_NON_EMPTY))
                return invalid(decoder->error, decoder->what, &path, "must not be empty");
        if (count == 0 && !(flags & MEMBER_REQUIRED))
                return 0;
        strings = calloc(count + 1, sizeof(char *));
        if (!strings)
                return out_of_memory(decoder->error, decoder->what);
        for (size_t i = 0; i < count && result == 0; i++) {
                member_path element = path_index(&path, i);

                result = decode_text(decoder, json_array_get(member, i), &element, flags, &strings[i]);
        }
        if (result < 0) {
                dsh_strv_free(strings);
                return result;
        }
        *strings_out = strings;
        return 0;
}

/* ----------------------------------------------------------------- facts -- */

static json_t *encode_rule(json_encoder *encoder, const dsh_runner_failure_rule *rule, const member_path *path)
{
        json_t *object = encoder_new(encoder, json_object());

        if (rule->allowed_exit_code_count > 0) {
                json_t *codes = encoder_new(encoder, json_array());

                for (size_t i = 0; codes && i < rule->allowed_exit_code_count; i++)
                        append_element(encoder, codes, encoder_new(encoder, json_integer(rule->allowed_exit_codes[i])));
                set_member(encoder, object, "allowedExitCodes", codes);
        }
        set_strings_member(encoder, object, path, "fatalSignatures", rule->fatal_signatures);
        if (dsh_strv_length(rule->informational_lines) > 0)
                set_strings_member(encoder, object, path, "informationalLines", rule->informational_lines);
        return object;
}

json_t *dsh_json_confined_argv_value(const dsh_confined_argv *facts, const char *what, dsh_error *error)
{
        json_encoder encoder = { what, error, false };
        json_t *object = encoder_new(&encoder, json_object());
        json_t *rules = encoder_new(&encoder, json_array());
        member_path rules_path = path_key(&root_path, "runnerFailureRules");

        set_strings_member(&encoder, object, &root_path, "argv", facts->argv);
        set_string_member(&encoder, object, &root_path, "enforcement", dsh_enforcement_name(facts->enforcement));
        set_strings_member(&encoder, object, &root_path, "denialSignatures", facts->denial_signatures);
        for (size_t i = 0; rules && i < facts->runner_failure_rule_count && !encoder.failed; i++) {
                member_path rule_path = path_index(&rules_path, i);

                append_element(&encoder, rules, encode_rule(&encoder, &facts->runner_failure_rules[i], &rule_path));
        }
        set_member(&encoder, object, "runnerFailureRules", rules);
        if (facts->backend)
                set_string_member(&encoder, object, &root_path, "backend", facts->backend);
        if (facts->partial_reasons)
                set_strings_member(&encoder, object, &root_path, "partialReasons", facts->partial_reasons);
        return encoder_finish(&encoder, object);
}

/* An exit status that can prove a runner failed: what waitpid() reports for a nonzero exit. */
#define EXIT_CODE_MIN 1
#define EXIT_CODE_MAX 255

static int decode_exit_codes(json_decoder *decoder, const json_t *rule, const member_path *parent,
                             dsh_runner_failure_rule *out)
{
        member_path path = path_key(parent, "allowedExitCodes");
        const json_t *member;
        size_t count;
        int result = find_member(decoder, rule, &path, "allowedExitCodes", 0, &member);

        if (result < 0 || !member)
                return result;
        if (!json_is_array(member))
                return invalid(decoder->error, decoder->what, &path, "must be an array of integers");
        count = json_array_size(member);
        if (count == 0)
                return 0;   /* as absent: any nonzero exit */
        out->allowed_exit_codes = calloc(count, sizeof(int));
        if (!out->allowed_exit_codes)
                return out_of_memory(decoder->error, decoder->what);
        out->allowed_exit_code_count = count;
        for (size_t i = 0; i < count; i++) {
                const json_t *code = json_array_get(member, i);
                member_path element = path_index(&path, i);

                if (!json_is_integer(code) || json_integer_value(code) < EXIT_CODE_MIN ||
                    json_integer_value(code) > EXIT_CODE_MAX)
                        return invalid(decoder->error, decoder->what, &element, "must be an integer from %d to %d",
                                       EXIT_CODE_MIN, EXIT_CODE_MAX);
                out->allowed_exit_codes[i] = (int) json_integer_value(code);
        }
        return 0;
}

/* A signature is matched as a substring of one stderr line: an empty one would match every line. */
#define SIGNATURE_RULES (TEXT_NON_EMPTY | TEXT_SINGLE_LINE)

static int decode_rule(json_decoder *decoder, const json_t *value, const member_path *path, dsh_runner_failure_rule *out)
{
        static const char *const keys[] = { "allowedExitCodes", "fatalSignatures", "informationalLines", NULL };
        int result = check_object(decoder, value, path, keys);

        if (result == 0)
                result = decode_exit_codes(decoder, value, path, out);
        if (result == 0)
                result = decode_string_list(decoder, value, path, "fatalSignatures",
                                            MEMBER_REQUIRED | LIST_NON_EMPTY | SIGNATURE_RULES, &out->fatal_signatures);
        if (result == 0)
                result = decode_string_list(decoder, value, path, "informationalLines", 0, &out->informational_lines);
        return result;
}

static int decode_rules(json_decoder *decoder, const json_t *object, dsh_confined_argv *out)
{
        member_path path = path_key(&root_path, "runnerFailureRules");
        const json_t *member;
        size_t count;
        int result = find_member(decoder, object, &path, "runnerFailureRules", MEMBER_REQUIRED, &member);

        if (result < 0)
                return result;
        /* Without a rule nothing could tell the runner's failure from the command's: its status would be misread. */
        if (!json_is_array(member) || json_array_size(member) == 0)
                return invalid(decoder->error, decoder->what, &path, "must be a non-empty array of objects");
        count = json_array_size(member);
        out->runner_failure_rules = calloc(count, sizeof(dsh_runner_failure_rule));
        if (!out->runner_failure_rules)
                return out_of_memory(decoder->error, decoder->what);
        out->runner_failure_rule_count = count;
        for (size_t i = 0; i < count && result == 0; i++) {
                member_path element = path_index(&path, i);

                result = decode_rule(decoder, json_array_get(member, i), &element, &out->runner_failure_rules[i]);
        }
        return result;
}

static int decode_enforcement(json_decoder *decoder, const json_t *object, dsh_enforcement *enforcement_out)
{
        static const dsh_enforcement known[] = { DSH_ENFORCEMENT_FULL, DSH_ENFORCEMENT_PARTIAL };
        const char *const names[] = { dsh_enforcement_name(known[0]), dsh_enforcement_name(known[1]), NULL };
        member_path path = path_key(&root_path, "enforcement");
        const json_t *member;
        char buffer[64];
        int result = find_member(decoder, object, &path, "enforcement", MEMBER_REQUIRED, &member);

        if (result < 0)
                return result;
        for (size_t i = 0; json_is_string(member) && names[i]; i++)
                if (strcmp(json_string_value(member), names[i]) == 0 &&
                    json_string_length(member) == strlen(names[i])) {
                        *enforcement_out = known[i];
                        return 0;
                }
        return invalid(decoder->error, decoder->what, &path, "must be %s",
                       alternatives(names, buffer, sizeof(buffer)));
}

int dsh_json_confined_argv_from_value(const json_t *value, const char *what, dsh_confined_argv *facts_out,
                                      dsh_error *error)
{
        static const char *const keys[] = { "argv", "enforcement", "denialSignatures", "runnerFailureRules",
                                            "backend", "partialReasons", NULL };
        dsh_confined_argv facts = DSH_CONFINED_ARGV_INIT;
        json_decoder decoder = { what, error };
        int result = check_object(&decoder, value, &root_path, keys);

        if (result == 0)
                result = decode_string_list(&decoder, value, &root_path, "argv", MEMBER_REQUIRED | LIST_NON_EMPTY,
                                            &facts.argv);
        if (result == 0)
                result = decode_enforcement(&decoder, value, &facts.enforcement);
        if (result == 0)
                result = decode_string_list(&decoder, value, &root_path, "denialSignatures",
                                            MEMBER_REQUIRED | SIGNATURE_RULES, &facts.denial_signatures);
        if (result == 0)
                result = decode_rules(&decoder, value, &facts);
        if (result == 0)
                result = decode_string_member(&decoder, value, &root_path, "backend", TEXT_NON_EMPTY | TEXT_SINGLE_LINE,
                                              &facts.backend);
        if (result == 0)
                result = decode_string_list(&decoder, value, &root_path, "partialReasons", TEXT_NON_EMPTY,
                                            &facts.partial_reasons);
        /* A reason qualifies a "partial" claim; beside "full" it contradicts the claim it sits next to. */
        if (result == 0 && facts.partial_reasons && facts.enforcement != DSH_ENFORCEMENT_PARTIAL) {
                member_path path = path_key(&root_path, "partialReasons");

                result = invalid(error, what, &path, "requires \"enforcement\": \"%s\"",
                                 dsh_enforcement_name(DSH_ENFORCEMENT_PARTIAL));
        }
        if (result < 0) {
                dsh_confined_argv_clear(&facts);
                return result;
        }
        *facts_out = facts;
        return 0;
}

/* ---------------------------------------------------------------- policy -- */

json_t *dsh_json_policy_value(const dsh_policy *policy, const char *what, dsh_error *error)
{
        json_encoder encoder = { what, error, false };
        json_t *object = encoder_new(&encoder, json_object());

        if ((unsigned) policy->mode >= DSH_MODE_COUNT) {
                member_path path = path_key(&root_path, "mode");

                invalid(error, what, &path, "is not a mode");
                encoder.failed = true;
        }
        set_string_member(&encoder, object, &root_path, "mode", dsh_mode_name(policy->mode));
        set_string_member(&encoder, object, &root_path, "workspaceRoot", policy->workspace_root);
        if (dsh_strv_length(policy->additional_writable_roots) > 0)
                set_strings_member(&encoder, object, &root_path, "additionalWritableRoots",
                                   policy->additional_writable_roots);
        if (policy->session_id)
                set_string_member(&encoder, object, &root_path, "sessionId", policy->session_id);
        return encoder_finish(&encoder, object);
}

static int decode_mode(json_decoder *decoder, const json_t *object, dsh_mode *mode_out)
{
        member_path path = path_key(&root_path, "mode");
        const json_t *member;
        char buffer[128];
        int result = find_member(decoder, object, &path, "mode", MEMBER_REQUIRED, &member);

        if (result < 0)
                return result;
        if (json_is_string(member) && strlen(json_string_value(member)) == json_string_length(member) &&
            dsh_mode_parse(json_string_value(member), mode_out) == 0)
                return 0;
        return invalid(decoder->error, decoder->what, &path, "must be %s",
                       alternatives(dsh_sandbox_modes, buffer, sizeof(buffer)));
}

int dsh_json_policy_from_value(const json_t *value, const char *what, dsh_policy *policy_out, dsh_error *error)
{
        static const char *const keys[] = { "mode", "workspaceRoot", "additionalWritableRoots", "sessionId", NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        json_decoder decoder = { what, error };
        int result = check_object(&decoder, value, &root_path, keys);

        if (result == 0)
                result = decode_mode(&decoder, value, &policy.mode);
        if (result == 0)
                result = decode_string_member(&decoder, value, &root_path, "workspaceRoot", MEMBER_REQUIRED,
                                              &policy.workspace_root);
        if (result == 0)
                result = decode_string_list(&decoder, value, &root_path, "additionalWritableRoots", 0,
                                            &policy.additional_writable_roots);
        if (result == 0)
                result = decode_string_member(&decoder, value, &root_path, "sessionId", 0, &policy.session_id);
        if (result == 0 && policy.session_id && !dsh_session_id_is_valid(policy.session_id)) {
                member_path path = path_key(&root_path, "sessionId");

                result = invalid(error, what, &path, "is not a valid session id");
        }
        if (result < 0) {
                dsh_policy_clear(&policy);
                return result;
        }
        *policy_out = policy;
        return 0;
}

/* ---------------------------------------------------------------- errors -- */

/*
 * `text` with each byte that does not decode as UTF-8 written as the four
 * characters \xNN: an error message must reach the other side even when it
 * quotes a path JSON cannot carry.  Returns a new string, or NULL (ENOMEM).
 */
static char *utf8_escaped_length(const char *text, size_t length, size_t *escaped_length)
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

static char *utf8_escaped(const char *text)
{
        size_t length;

        return utf8_escaped_length(text, strlen(text), &length);
}

json_t *dsh_json_error_value(const dsh_error *value, const char *what, dsh_error *error)
{
        json_encoder encoder = { what, error, false };
        const char *code = dsh_error_code_wire_name(value->code);
        const char *message = value->message ? value->message : strerror(value->errno_value ? value->errno_value
                                                                                            : EINVAL);
        dsh_autofree char *escaped = utf8_escaped(message);
        json_t *object;

        if (!code) {
                member_path path = path_key(&root_path, "code");

                invalid(error, what, &path, "is not set: there is no error to encode");
                return NULL;
        }
        if (!escaped) {
                out_of_memory(error, what);
                return NULL;
        }
        object = encoder_new(&encoder, json_object());
        set_string_member(&encoder, object, &root_path, "code", code);
        set_string_member(&encoder, object, &root_path, "message", escaped);
        return encoder_finish(&encoder, object);
}

static int decode_error_code(json_decoder *decoder, const json_t *object, dsh_error_code *code_out)
{
        const char *names[DSH_ERROR_CODE_LAST + 1];
        member_path path = path_key(&root_path, "code");
        const json_t *member;
        size_t count = 0;
        char buffer[512];
        int result = find_member(decoder, object, &path, "code", MEMBER_REQUIRED, &member);

        if (result < 0)
                return result;
        if (json_is_string(member) && strlen(json_string_value(member)) == json_string_length(member) &&
            dsh_error_code_from_wire_name(json_string_value(member), code_out) == 0)
                return 0;
        for (dsh_error_code code = DSH_ERROR_SANDBOX_UNAVAILABLE; code <= DSH_ERROR_CODE_LAST; code++)
                names[count++] = dsh_error_code_wire_name(code);
        names[count] = NULL;
        return invalid(decoder->error, decoder->what, &path, "must be %s", alternatives(names, buffer, sizeof(buffer)));
}

int dsh_json_error_from_value(const json_t *value, const char *what, dsh_error *value_out, dsh_error *error)
{
        static const char *const keys[] = { "code", "message", NULL };
        dsh_error decoded = DSH_ERROR_INIT;
        json_decoder decoder = { what, error };
        int result = check_object(&decoder, value, &root_path, keys);

        if (result == 0)
                result = decode_error_code(&decoder, value, &decoded.code);
        if (result == 0)
                result = decode_string_member(&decoder, value, &root_path, "message", MEMBER_REQUIRED,
                                              &decoded.message);
        if (result < 0) {
                dsh_error_clear(&decoded);
                return result;
        }
        *value_out = decoded;
        return 0;
}

/* ----------------------------------------------------------------- probe -- */

static const char *bwrap_version(const dsh_probe_report *report)
{
        for (size_t i = 0; i < report->backend_count; i++)
                if (strcmp(report->backends[i].name, "bwrap") == 0)
                        return report->backends[i].version;
        return NULL;
}

/* A backend's member, named the way a person reads the report: "backend bwrap's \"runner\"". */
static void set_backend_member(json_encoder *encoder, json_t *entry, const dsh_backend_status *status, const char *key,
                               const char *text, char *const *strings)
{
        member_path path = path_format("backend %s's \"%s\"", status->name, key);

        set_member(encoder, entry, key,
                   strings ? encode_strings(encoder, strings, &path) : encode_string(encoder, text, &path));
}

static json_t *encode_backend_status(json_encoder *encoder, const dsh_backend_status *status, size_t index)
{
        member_path name_path = path_format("\"backends\"[%zu].\"name\"", index);
        json_t *entry = encoder_new(encoder, json_object());

        set_member(encoder, entry, "name", encode_string(encoder, status->name, &name_path));
        set_member(encoder, entry, "usable", encoder_new(encoder, json_boolean(status->usable)));
        if (status->usable)
                set_backend_member(encoder, entry, status, "enforcement", dsh_enforcement_name(status->enforcement),
                                   NULL);
        if (status->reason)
                set_backend_member(encoder, entry, status, "reason", status->reason, NULL);
        if (status->version)
                set_backend_member(encoder, entry, status, "version", status->version, NULL);
        if (status->runner_path)
                set_backend_member(encoder, entry, status, "runner", status->runner_path, NULL);
        if (status->usable && status->partial_reasons)
                set_backend_member(encoder, entry, status, "partialReasons", NULL, status->partial_reasons);
        if (status->usable && status->notes)
                set_backend_member(encoder, entry, status, "notes", NULL, status->notes);
        return entry;
}

json_t *dsh_json_probe_report_value(const dsh_probe_report *report, const char *what, dsh_error *error)
{
        json_encoder encoder = { what, error, false };
        json_t *object = encoder_new(&encoder, json_object());
        json_t *backends = encoder_new(&encoder, json_array());
        const char *version = bwrap_version(report);

        for (size_t i = 0; backends && i < report->backend_count && !encoder.failed; i++)
                append_element(&encoder, backends, encode_backend_status(&encoder, &report->backends[i], i));
        set_member(&encoder, object, "backends", backends);
        if (version)
                set_string_member(&encoder, object, &root_path, "bwrapVersion", version);
        set_member(&encoder, object, "landlockAbi", encoder_new(&encoder, json_integer(report->landlock_abi)));
        set_strings_member(&encoder, object, &root_path, "landlockScopes", report->landlock_scopes);
        set_strings_member(&encoder, object, &root_path, "landlockScopesMissing", report->landlock_scopes_missing);
        if (report->selected)
                set_string_member(&encoder, object, &root_path, "selected", report->selected);
        else
                set_member(&encoder, object, "selected", encoder_new(&encoder, json_null()));
        return encoder_finish(&encoder, object);
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
        json_encoder encoder = { what, error, false };
        struct session_walk walk = { NULL, NULL, 0 };
        member_path path_path = path_key(&root_path, "path");
        json_t *path = encode_string(&encoder, dsh_session_path(session), &path_path);
        json_t *object = NULL;
        dsh_mode effective;
        bool has_override = session_modes(session, default_mode, &effective);
        int walked = 0;

        walk.events = encoder_new(&encoder, json_array());
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
                        encoder_out_of_memory(&encoder);
                }
        }
        if (!encoder.failed) {
                object = encoder_new(&encoder, json_object());
                set_member(&encoder, object, "header", json_incref(walk.header));
                set_member(&encoder, object, "events", json_incref(walk.events));
                set_string_member(&encoder, object, &root_path, "effectiveMode", dsh_mode_name(effective));
                set_member(&encoder, object, "path", json_incref(path));
                if (has_override)
                        set_string_member(&encoder, object, &root_path, "override", dsh_mode_name(effective));
        }
        json_decref(walk.header);
        json_decref(walk.events);
        json_decref(path);
        return encoder_finish(&encoder, object);
}

static json_t *encode_list_entry(json_encoder *encoder, dsh_session *session, dsh_mode default_mode,
                                 const member_path *path)
{
        member_path id_path = path_key(path, "id"), cwd_path = path_key(path, "cwd");
        json_t *entry = encoder_new(encoder, json_object());
        size_t cwd_length = 0;
        /* The recorded cwd whole: a NUL byte in an edited log is shown (\u0000), not cut at. */
        const char *cwd = dsh_session_cwd(session, &cwd_length);
        dsh_mode effective;
        bool has_override = session_modes(session, default_mode, &effective);

        set_member(encoder, entry, "id", encode_string(encoder, dsh_session_id(session), &id_path));
        set_member(encoder, entry, "cwd", encode_text(encoder, cwd, cwd_length, &cwd_path));
        set_string_member(encoder, entry, path, "effectiveMode", dsh_mode_name(effective));
        if (has_override)
                set_string_member(encoder, entry, path, "override", dsh_mode_name(effective));
        return entry;
}

json_t *dsh_json_session_list_value(dsh_session_store *store, dsh_mode default_mode,
                                    dsh_json_session_skipped_fn skipped, void *data, const char *what,
                                    dsh_error *error)
{
        json_encoder encoder = { what, error, false };
        char **ids = NULL;
        json_t *array;

        if (dsh_session_store_list(store, &ids, error) < 0)
                return NULL;
        array = encoder_new(&encoder, json_array());
        for (char **id = ids; array && id && *id && !encoder.failed; id++) {
                member_path path = path_index(&root_path, json_array_size(array));
                dsh_error skip = DSH_ERROR_INIT;
                dsh_session *session = NULL;

                if (dsh_session_open(store, *id, &session, &skip) < 0) {
                        if (skipped)
                                skipped(*id, &skip, data);
                        dsh_error_clear(&skip);
                        continue;
                }
                append_element(&encoder, array, encode_list_entry(&encoder, session, default_mode, &path));
                dsh_session_free(session);
        }
        dsh_strv_free(ids);
        return encoder_finish(&encoder, array);
}

/* ------------------------------------------------------------ file guard -- */

static void set_count_member(json_encoder *encoder, json_t *object, const char *key, size_t count)
{
        set_member(encoder, object, key, encoder_new(encoder, json_integer((json_int_t) count)));
}

json_t *dsh_json_file_result_value(const dsh_file_result *result, const char *what, dsh_error *error)
{
        json_encoder encoder = { what, error, false };
        json_t *object = encoder_new(&encoder, json_object());
        member_path content_path = path_key(&root_path, "content");
        size_t content_length = result->content ? result->bytes : 0;

        set_string_member(&encoder, object, &root_path, "operation", dsh_file_operation_name(result->operation));
        if (result->operation == DSH_FILE_MOVE)
                set_string_member(&encoder, object, &root_path, "source", result->source);
        set_string_member(&encoder, object, &root_path, "path", result->path);
        switch (result->operation) {
        case DSH_FILE_WRITE:
                set_member(&encoder, object, "created", encoder_new(&encoder, json_boolean(result->created)));
                set_count_member(&encoder, object, "bytes", result->bytes);
                break;
        case DSH_FILE_EDIT:
                set_count_member(&encoder, object, "replacements", result->replacements);
                set_count_member(&encoder, object, "bytes", result->bytes);
                break;
        case DSH_FILE_MKDIR:
                set_member(&encoder, object, "created", encoder_new(&encoder, json_boolean(result->created)));
                break;
        case DSH_FILE_REMOVE:
                set_count_member(&encoder, object, "removed", result->removed);
                break;
        case DSH_FILE_READ:
                set_count_member(&encoder, object, "bytes", result->bytes);
                set_member(&encoder, object, "content",
                           encode_text(&encoder, result->content ? result->content : "", content_length,
                                       &content_path));
                break;
        case DSH_FILE_MOVE:
                break;
        }
        return encoder_finish(&encoder, object);
}

/* ------------------------------------------------------------ bash tool -- */

/* An exit code or signal number, or null when there is none. */
static json_t *number_or_null(json_encoder *encoder, bool present, int value)
{
        return encoder_new(encoder, present ? json_integer(value) : json_null());
}

/* One output stream: its text with each byte that is not UTF-8 as \xNN (see json.h), the truncation, the count. */
static json_t *encode_output(json_encoder *encoder, const dsh_bash_output *output, const member_path *path)
{
        json_t *object = encoder_new(encoder, json_object());
        size_t escaped_length = 0;
        dsh_autofree char *escaped = NULL;

        if (encoder->failed)
                return object;
        escaped = utf8_escaped_length(output->text ? output->text : "", output->text ? output->length : 0,
                                      &escaped_length);
        if (!escaped) {
                encoder_out_of_memory(encoder);
                return object;
        }
        set_member(encoder, object, "text", encode_text(encoder, escaped, escaped_length, path));
        set_member(encoder, object, "truncated", encoder_new(encoder, json_boolean(output->truncated)));
        set_member(encoder, object, "bytes", encoder_new(encoder, json_integer((json_int_t) output->total_bytes)));
        return object;
}

static json_t *encode_bash_sandbox(json_encoder *encoder, const dsh_bash_sandbox *sandbox, const member_path *path)
{
        json_t *object = encoder_new(encoder, json_object());

        set_string_member(encoder, object, path, "mode", dsh_mode_name(sandbox->mode));
        if (sandbox->backend)
                set_string_member(encoder, object, path, "backend", sandbox->backend);
        else
                set_member(encoder, object, "backend", encoder_new(encoder, json_null()));
        if (sandbox->backend && sandbox->confined)
                set_string_member(encoder, object, path, "enforcement", dsh_enforcement_name(sandbox->enforcement));
        else
                set_member(encoder, object, "enforcement", encoder_new(encoder, json_null()));
        set_member(encoder, object, "denied", encoder_new(encoder, json_boolean(sandbox->denied)));
        set_member(encoder, object, "runnerFailed", encoder_new(encoder, json_boolean(sandbox->runner_failed)));
        return object;
}

json_t *dsh_json_bash_result_value(const dsh_bash_result *result, const char *what, dsh_error *error)
{
        json_encoder encoder = { what, error, false };
        json_t *object = encoder_new(&encoder, json_object());
        member_path stdout_path = path_key(&root_path, "stdout"), stderr_path = path_key(&root_path, "stderr");
        member_path sandbox_path = path_key(&root_path, "sandbox");

        set_string_member(&encoder, object, &root_path, "kind", dsh_bash_kind_name(result->kind));
        set_member(&encoder, object, "exitCode", number_or_null(&encoder, result->exit_code >= 0, result->exit_code));
        set_member(&encoder, object, "signal", number_or_null(&encoder, result->signal > 0, result->signal));
        set_member(&encoder, object, "timedOut", encoder_new(&encoder, json_boolean(result->timed_out)));
        set_member(&encoder, object, "cancelled", encoder_new(&encoder, json_boolean(result->cancelled)));
        set_member(&encoder, object, "stdout", encode_output(&encoder, &result->standard_output, &stdout_path));
        set_member(&encoder, object, "stderr", encode_output(&encoder, &result->standard_error, &stderr_path));
        set_member(&encoder, object, "sandbox", encode_bash_sandbox(&encoder, &result->sandbox, &sandbox_path));
        set_strings_member(&encoder, object, &root_path, "markers", result->markers);
        if (result->message)
                set_string_member(&encoder, object, &root_path, "message", result->message);
        if (result->error.code != DSH_ERROR_NONE && !encoder.failed)
                set_member(&encoder, object, "error", dsh_json_error_value(&result->error, what, error));
        if (result->warnings && result->warnings[0])
                set_strings_member(&encoder, object, &root_path, "warnings", result->warnings);
        return encoder_finish(&encoder, object);
}

/* A boolean member, required. */
static int decode_boolean(json_decoder *decoder, const json_t *object, const member_path *parent, const char *key,
                          bool *out)
{
        member_path path = path_key(parent, key);
        const json_t *member;
        int result = find_member(decoder, object, &path, key, MEMBER_REQUIRED, &member);

        if (result < 0)
                return result;
        if (!json_is_boolean(member))
                return invalid(decoder->error, decoder->what, &path, "must be true or false");
        *out = json_is_true(member);
        return 0;
}

/* A required member that is null (`*out` = `absent`) or an integer from `minimum` to `maximum`. */
static int decode_number_or_null(json_decoder *decoder, const json_t *object, const char *key, json_int_t minimum,
                                 json_int_t maximum, int absent, int *out)
{
        member_path path = path_key(&root_path, key);
        const json_t *member;
        int result = find_member(decoder, object, &path, key, MEMBER_REQUIRED, &member);

        if (result < 0)
                return result;
        if (json_is_null(member)) {
                *out = absent;
                return 0;
        }
        if (!json_is_integer(member) || json_integer_value(member) < minimum || json_integer_value(member) > maximum)
                return invalid(decoder->error, decoder->what, &path, "must be null or an integer from %lld to %lld",
                               (long long) minimum, (long long) maximum);
        *out = (int) json_integer_value(member);
        return 0;
}

/* One output stream as the encoder wrote it: the text as kept (NUL bytes and all: it is output, not a name). */
static int decode_output(json_decoder *decoder, const json_t *object, const char *key, dsh_bash_output *out)
{
        static const char *const keys[] = { "text", "truncated", "bytes", NULL };
        member_path path = path_key(&root_path, key), text_path = path_key(&path, "text");
        const json_t *member = json_object_get(object, key), *text, *bytes;
        int result = member ? check_object(decoder, member, &path, keys)
                            : invalid(decoder->error, decoder->what, &path, "is missing");

        if (result == 0)
                result = decode_boolean(decoder, member, &path, "truncated", &out->truncated);
        if (result < 0)
                return result;
        text = json_object_get(member, "text");
        if (!json_is_string(text))
                return invalid(decoder->error, decoder->what, &text_path, "must be a string");
        out->length = json_string_length(text);
        out->text = malloc(out->length + 1);
        if (!out->text)
                return out_of_memory(decoder->error, decoder->what);
        memcpy(out->text, json_string_value(text), out->length + 1);
        bytes = json_object_get(member, "bytes");
        if (!json_is_integer(bytes) || json_integer_value(bytes) < 0) {
                member_path bytes_path = path_key(&path, "bytes");

                return invalid(decoder->error, decoder->what, &bytes_path, "must be a non-negative integer");
        }
        out->total_bytes = (unsigned long long) json_integer_value(bytes);
        return 0;
}

static int decode_bash_sandbox(json_decoder *decoder, const json_t *object, dsh_bash_sandbox *out)
{
        static const char *const keys[] = { "mode", "backend", "enforcement", "denied", "runnerFailed", NULL };
        member_path path = path_key(&root_path, "sandbox");
        const json_t *member = json_object_get(object, "sandbox");
        int result = member ? check_object(decoder, member, &path, keys)
                            : invalid(decoder->error, decoder->what, &path, "is missing");

        if (result == 0)
                result = decode_mode(decoder, member, &out->mode);
        if (result == 0 && !json_is_null(json_object_get(member, "backend")))
                result = decode_string_member(decoder, member, &path, "backend", MEMBER_REQUIRED | TEXT_NON_EMPTY |
                                              TEXT_SINGLE_LINE, &out->backend);
        out->confined = result == 0 && !json_is_null(json_object_get(member, "enforcement"));
        if (out->confined)
                result = decode_enforcement(decoder, member, &out->enforcement);
        if (result == 0)
                result = decode_boolean(decoder, member, &path, "denied", &out->denied);
        if (result == 0)
                result = decode_boolean(decoder, member, &path, "runnerFailed", &out->runner_failed);
        return result;
}

static int decode_bash_kind(json_decoder *decoder, const json_t *object, dsh_bash_kind *kind_out)
{
        member_path path = path_key(&root_path, "kind");
        const json_t *member = json_object_get(object, "kind");

        for (dsh_bash_kind kind = DSH_BASH_COMPLETED; kind <= DSH_BASH_REJECTED; kind++)
                if (json_is_string(member) && strcmp(json_string_value(member), dsh_bash_kind_name(kind)) == 0) {
                        *kind_out = kind;
                        return 0;
                }
        return invalid(decoder->error, decoder->what, &path, "must be one of the bash result kinds");
}

int dsh_json_bash_result_from_value(const json_t *value, const char *what, dsh_bash_result *result_out,
                                    dsh_error *error)
{
        static const char *const keys[] = { "kind", "exitCode", "signal", "timedOut", "cancelled", "stdout",
                                            "stderr", "sandbox", "markers", "message", "error", "warnings", NULL };
        dsh_bash_result decoded = DSH_BASH_RESULT_INIT;
        json_decoder decoder = { what, error };
        const json_t *error_value;
        int result = check_object(&decoder, value, &root_path, keys);

        if (result == 0)
                result = decode_bash_kind(&decoder, value, &decoded.kind);
        if (result == 0)
                result = decode_number_or_null(&decoder, value, "exitCode", 0, 255, -1, &decoded.exit_code);
        if (result == 0)
                result = decode_number_or_null(&decoder, value, "signal", 1, 64, 0, &decoded.signal);
        if (result == 0)
                result = decode_boolean(&decoder, value, &root_path, "timedOut", &decoded.timed_out);
        if (result == 0)
                result = decode_boolean(&decoder, value, &root_path, "cancelled", &decoded.cancelled);
        if (result == 0)
                result = decode_output(&decoder, value, "stdout", &decoded.standard_output);
        if (result == 0)
                result = decode_output(&decoder, value, "stderr", &decoded.standard_error);
        if (result == 0)
                result = decode_bash_sandbox(&decoder, value, &decoded.sandbox);
        if (result == 0)
                result = decode_string_list(&decoder, value, &root_path, "markers", MEMBER_REQUIRED, &decoded.markers);
        if (result == 0)
                result = decode_string_member(&decoder, value, &root_path, "message", 0, &decoded.message);
        if (result == 0 && (error_value = json_object_get(value, "error")))
                result = dsh_json_error_from_value(error_value, what, &decoded.error, error);
        if (result == 0)
                result = decode_string_list(&decoder, value, &root_path, "warnings", 0, &decoded.warnings);
        /* Never NULL in a result (dsh-sandbox/bash-tool.h): absent reads as none. */
        if (result == 0 && !decoded.warnings && !(decoded.warnings = calloc(1, sizeof(char *))))
                result = out_of_memory(error, what);
        if (result < 0) {
                dsh_bash_result_clear(&decoded);
                return result;
        }
        *result_out = decoded;
        return 0;
}

json_t *dsh_json_bash_escalation_value(const dsh_bash_escalation *escalation, const char *what, dsh_error *error)
{
        json_encoder encoder = { what, error, false };
        json_t *object = encoder_new(&encoder, json_object());

        set_string_member(&encoder, object, &root_path, "command", escalation->command);
        set_string_member(&encoder, object, &root_path, "sandboxPermissions",
                          dsh_mode_name(escalation->requested_mode));
        set_string_member(&encoder, object, &root_path, "currentMode", dsh_mode_name(escalation->current_mode));
        set_string_member(&encoder, object, &root_path, "justification", escalation->justification);
        set_string_member(&encoder, object, &root_path, "workspaceRoot", escalation->workspace_root);
        if (escalation->session_id)
                set_string_member(&encoder, object, &root_path, "sessionId", escalation->session_id);
        return encoder_finish(&encoder, object);
}

/* ------------------------------------------------------------------ text -- */

/* The caller's error, or a local one when the caller wants only the errno. */
static dsh_error *error_or(dsh_error *error, dsh_error *local)
{
        return error ? error : local;
}

/* A built value (NULL: `error` says why) as text; the value is released. */
static int encoded_text(json_t *value, char **text_out, dsh_error *error)
{
        int result;

        *text_out = NULL;
        if (!value)
                return error->errno_value > 0 ? -error->errno_value : -EINVAL;
        result = dsh_json_dump(value, text_out, error);
        json_decref(value);
        return result;
}

int dsh_json_encode_confined_argv(const dsh_confined_argv *facts, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = error_or(error, &local);
        int result = encoded_text(dsh_json_confined_argv_value(facts, "facts", used), text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_encode_policy(const dsh_policy *policy, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = error_or(error, &local);
        int result = encoded_text(dsh_json_policy_value(policy, "policy", used), text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_encode_error(const dsh_error *value, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = error_or(error, &local);
        int result = encoded_text(dsh_json_error_value(value, "error", used), text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_encode_probe_report(const dsh_probe_report *report, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = error_or(error, &local);
        int result = encoded_text(dsh_json_probe_report_value(report, "probe", used), text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_encode_session(dsh_session *session, dsh_mode default_mode, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = error_or(error, &local);
        int result = encoded_text(dsh_json_session_value(session, default_mode, "session", used), text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_encode_session_list(dsh_session_store *store, dsh_mode default_mode,
                                 dsh_json_session_skipped_fn skipped, void *data, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = error_or(error, &local);
        json_t *value = dsh_json_session_list_value(store, default_mode, skipped, data, "session list", used);
        int result = encoded_text(value, text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_encode_file_result(const dsh_file_result *result, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = error_or(error, &local);
        int result_code = encoded_text(dsh_json_file_result_value(result, "file result", used), text_out, used);

        dsh_error_clear(&local);
        return result_code;
}

int dsh_json_encode_bash_result(const dsh_bash_result *result, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = error_or(error, &local);
        int result_code = encoded_text(dsh_json_bash_result_value(result, "bash result", used), text_out, used);

        dsh_error_clear(&local);
        return result_code;
}

int dsh_json_encode_bash_escalation(const dsh_bash_escalation *escalation, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = error_or(error, &local);
        int result = encoded_text(dsh_json_bash_escalation_value(escalation, "escalation", used), text_out, used);

        dsh_error_clear(&local);
        return result;
}

int dsh_json_encode_mode_event_data(const char *mode, char **text_out, dsh_error *error)
{
        dsh_error local = DSH_ERROR_INIT, *used = error_or(error, &local);
        json_encoder encoder = { "sandbox/mode data", used, false };
        json_t *object = encoder_new(&encoder, json_object());
        int result;

        set_string_member(&encoder, object, &root_path, "mode", mode);
        result = encoded_text(encoder_finish(&encoder, object), text_out, used);
        dsh_error_clear(&local);
        return result;
}

int dsh_json_decode_confined_argv(const char *text, size_t length, dsh_confined_argv *facts_out, dsh_error *error)
{
        json_t *value;
        int result = dsh_json_load_object(text, length, "facts", &value, error);

        if (result == 0)
                result = dsh_json_confined_argv_from_value(value, "facts", facts_out, error);
        json_decref(value);
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

int dsh_json_decode_bash_result(const char *text, size_t length, dsh_bash_result *result_out, dsh_error *error)
{
        json_t *value;
        int result = dsh_json_load_object(text, length, "bash result", &value, error);

        if (result == 0)
                result = dsh_json_bash_result_from_value(value, "bash result", result_out, error);
        json_decref(value);
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
