/* SPDX-License-Identifier: MIT */
/*
 * The JSON core: the ground floor every shape of dsh-sandbox/json.h is
 * written and read with.  It knows no domain: member paths for messages,
 * an encoder that checks each string's UTF-8 and fails the whole value on
 * the first problem, a strict decoder (one JSON object, every member with
 * its type, unknown and duplicate keys refused, the member named), load and
 * dump.  Each domain's shapes live beside the domain and are built from
 * these: the facts and the probe report in src/provider/provider-json.c,
 * the policy and the sessions in src/policy/policy-json.c, the file guard's
 * result in src/fs/file-guard-json.c, the bash tool's in src/bash/bash-json.c,
 * the typed error in src/base/error-json.c.
 *
 * `what` names the value in error messages, as the caller's reader knows it
 * ("facts", "params.policy"): "<what>: <member path> <what is wrong>", with
 * DSH_ERROR_INVALID_INPUT and -EINVAL; out of memory is DSH_ERROR_SYSTEM and
 * -ENOMEM ("<what>: out of memory").
 */
#ifndef DSH_SANDBOX_JSON_CORE_H
#define DSH_SANDBOX_JSON_CORE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "dsh-sandbox/sandbox.h"
#include "base/util.h"

/* ------------------------------------------------------ member paths -- */

/*
 * Where a member sits, for messages: "\"runnerFailureRules\"[0].\"fatalSignatures\"[1]";
 * empty for the value itself.  Our shapes are shallow: a longer path is cut, never overrun.
 */
typedef struct dsh_json_path {
        char text[256];
} dsh_json_path;

/* The value itself (the empty path). */
DSH_INTERNAL extern const dsh_json_path dsh_json_root;

DSH_INTERNAL dsh_json_path dsh_json_path_format(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* `parent`."key" (just "key" under the root). */
DSH_INTERNAL dsh_json_path dsh_json_path_key(const dsh_json_path *parent, const char *key);
/* `parent`[index]. */
DSH_INTERNAL dsh_json_path dsh_json_path_index(const dsh_json_path *parent, size_t index);

/* Sets `error` to "<what>: <path> <problem>" (no path: "<what>: <problem>"), DSH_ERROR_INVALID_INPUT; -EINVAL. */
DSH_INTERNAL int dsh_json_invalid(dsh_error *error, const char *what, const dsh_json_path *path, const char *format,
                                  ...) __attribute__((format(printf, 4, 5)));
/* Sets `error` to "<what>: out of memory", DSH_ERROR_SYSTEM; -ENOMEM. */
DSH_INTERNAL int dsh_json_out_of_memory(dsh_error *error, const char *what);
/* "\"a\", \"b\" or \"c\"" from a NULL-terminated list, into `buffer` (cut to `size`); returns `buffer`. */
DSH_INTERNAL const char *dsh_json_alternatives(const char *const *names, char *buffer, size_t size);

/* -------------------------------------------------------------- encoding -- */

/*
 * One value being built: the first failure is the one reported (in
 * `error`), the rest are its consequences.  Every function below takes a
 * NULL value or container as a failure already recorded, so a builder
 * calls them in a row and asks dsh_json_encoder_finish() at the end.
 */
typedef struct dsh_json_encoder {
        const char *what;
        dsh_error *error;
        bool failed;
} dsh_json_encoder;

DSH_INTERNAL void dsh_json_encoder_out_of_memory(dsh_json_encoder *encoder);
/* `fresh` (a new jansson value), recording out of memory when it is NULL. */
DSH_INTERNAL json_t *dsh_json_encoder_new(dsh_json_encoder *encoder, json_t *fresh);
/* `value` as the finished result, or NULL (and `value` released) after any failure. */
DSH_INTERNAL json_t *dsh_json_encoder_finish(dsh_json_encoder *encoder, json_t *value);

/*
 * `length` bytes as a JSON string (NUL bytes included, as \u0000), or NULL
 * after naming what is wrong at `path`: "is not set" for NULL text, "is not
 * valid UTF-8 (byte 0xff at offset 4), and a JSON string cannot carry it".
 */
DSH_INTERNAL json_t *dsh_json_text_value(dsh_json_encoder *encoder, const char *text, size_t length,
                                         const dsh_json_path *path);
DSH_INTERNAL json_t *dsh_json_string_value(dsh_json_encoder *encoder, const char *text, const dsh_json_path *path);
/* A NULL-terminated vector as an array of strings, each checked; NULL encodes as []. */
DSH_INTERNAL json_t *dsh_json_strings_value(dsh_json_encoder *encoder, char *const *strings, const dsh_json_path *path);

/* Adds `value` (stolen, even on failure) to `object`; a NULL value is a failure already recorded. */
DSH_INTERNAL void dsh_json_set_member(dsh_json_encoder *encoder, json_t *object, const char *key, json_t *value);
DSH_INTERNAL void dsh_json_append_element(dsh_json_encoder *encoder, json_t *array, json_t *value);
/* A string (a vector of strings) member named by its key under `parent`. */
DSH_INTERNAL void dsh_json_set_string_member(dsh_json_encoder *encoder, json_t *object, const dsh_json_path *parent,
                                             const char *key, const char *text);
DSH_INTERNAL void dsh_json_set_strings_member(dsh_json_encoder *encoder, json_t *object, const dsh_json_path *parent,
                                              const char *key, char *const *strings);

/*
 * `length` bytes with each byte that does not decode as UTF-8 written as
 * the four characters \xNN (text for a person: an error's message, a
 * command's output).  A new string, caller frees, its length in
 * `*escaped_length`; NULL when out of memory.
 */
DSH_INTERNAL char *dsh_json_utf8_escaped_length(const char *text, size_t length, size_t *escaped_length);
DSH_INTERNAL char *dsh_json_utf8_escaped(const char *text);

/* `value` as compact text (the codec's one output format) into `*text_out`, caller frees.  0 or -ENOMEM. */
DSH_INTERNAL int dsh_json_dump(const json_t *value, char **text_out, dsh_error *error);

/*
 * A built value (NULL: `error` already says why) as text into `*text_out`
 * (NULL on failure); the value is released.  0 or the negative errno.
 */
DSH_INTERNAL int dsh_json_value_text(json_t *value, char **text_out, dsh_error *error);
/* The caller's error, or `local` when the caller passed NULL (it wants only the errno). */
DSH_INTERNAL dsh_error *dsh_json_error_or(dsh_error *error, dsh_error *local);

/* ------------------------------------------------------------ decoding -- */

/*
 * The strict decoder.  A decoder reads what another process sent, so it
 * refuses rather than guesses: an unknown key may qualify the others, a
 * duplicate one leaves the reader to pick, a NUL byte would cut a C string.
 * Every function returns 0 or -EINVAL / -ENOMEM with `error` set, the
 * member named by its path.
 */
typedef struct dsh_json_decoder {
        const char *what;
        dsh_error *error;
} dsh_json_decoder;

/* What a member must be, beyond its type. */
enum {
        DSH_JSON_REQUIRED = 1 << 0,             /* absent: "<path> is missing" */
        DSH_JSON_LIST_NON_EMPTY = 1 << 1,       /* []: "<path> must not be empty" */
        DSH_JSON_TEXT_NON_EMPTY = 1 << 2,       /* of a string or of each string of a list */
        DSH_JSON_TEXT_SINGLE_LINE = 1 << 3,     /* no CR or LF: a signature is matched within one line */
};

/*
 * The strict parse every reader of JSON uses: a duplicate key is refused
 * (which of two would a reader believe?), and a NUL byte in a string is let
 * through the parser so that the reader can name the member that holds one
 * instead of a parse error at a column.  dsh_json_load_object() parses with
 * these; a reader that keeps its own messages (the configuration's line
 * numbers, the session log's) passes them to jansson itself.
 */
#define DSH_JSON_STRICT_PARSE (JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL)

/*
 * Parses `length` bytes as one JSON object, strictly (duplicate keys
 * refused, NUL bytes in strings kept for the decoders to name): 0 with a new
 * reference in `*value_out`, or -EINVAL with "<what>: not valid JSON: <the
 * parser's reason> at line L, column C" / "<what>: not a JSON object".
 */
DSH_INTERNAL int dsh_json_load_object(const char *text, size_t length, const char *what, json_t **value_out,
                                      dsh_error *error);

/*
 * Reads `fd` to its end and parses it as dsh_json_load_object() does.  At
 * most `limit` bytes are read: a longer file is -EFBIG, "<what>: longer
 * than <limit> bytes", without the rest being read (a file another process
 * can write must not make this one allocate without bound).  A read error
 * is its -errno, "<what>: cannot read: <strerror>".  `fd` stays open.
 */
DSH_INTERNAL int dsh_json_load_object_fd(int fd, size_t limit, const char *what, json_t **value_out,
                                         dsh_error *error);

/*
 * `value` must be an object ("must be an object"; at the root "not a JSON
 * object") with no key outside the NULL-terminated `known` ("<path>.\"key\"
 * is an unknown key", the key made one printable line).
 */
DSH_INTERNAL int dsh_json_check_object(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path,
                                       const char *const *known);
/* `*member_out` = the member `key` of `object`, NULL when absent (an error with DSH_JSON_REQUIRED). */
DSH_INTERNAL int dsh_json_find_member(dsh_json_decoder *decoder, const json_t *object, const dsh_json_path *path,
                                      const char *key, unsigned flags, const json_t **member_out);
/* A string value as a new C string (caller frees): the DSH_JSON_TEXT_* flags kept, no NUL byte inside. */
DSH_INTERNAL int dsh_json_decode_text(dsh_json_decoder *decoder, const json_t *value, const dsh_json_path *path,
                                      unsigned flags, char **text_out);
/* The string member `key` of `object` (under `parent`, for messages); absent and optional: NULL. */
DSH_INTERNAL int dsh_json_decode_string_member(dsh_json_decoder *decoder, const json_t *object,
                                               const dsh_json_path *parent, const char *key, unsigned flags,
                                               char **text_out);
/*
 * An array of strings as a NULL-terminated vector (caller frees with
 * dsh_strv_free()).  An absent member, or an empty one that is not
 * DSH_JSON_REQUIRED, reads as NULL (none); a required empty one as an empty
 * vector.
 */
DSH_INTERNAL int dsh_json_decode_string_list(dsh_json_decoder *decoder, const json_t *object,
                                             const dsh_json_path *parent, const char *key, unsigned flags,
                                             char ***strings_out);
/* A boolean member, required: "must be true or false". */
DSH_INTERNAL int dsh_json_decode_boolean(dsh_json_decoder *decoder, const json_t *object, const dsh_json_path *parent,
                                         const char *key, bool *out);
/* A required member of the value itself that is null (`*out` = `absent`) or an integer from `minimum` to `maximum`. */
DSH_INTERNAL int dsh_json_decode_number_or_null(dsh_json_decoder *decoder, const json_t *object, const char *key,
                                                json_int_t minimum, json_int_t maximum, int absent, int *out);

/*
 * The two names of dsh-sandbox/sandbox.h that several shapes carry (the
 * facts, the policy, the bash result's "sandbox"): the required member
 * "enforcement" ("must be \"full\" or \"partial\"") and "mode" (one of
 * dsh_sandbox_modes), each named as a member of the value itself.
 */
DSH_INTERNAL int dsh_json_decode_enforcement(dsh_json_decoder *decoder, const json_t *object,
                                             dsh_enforcement *enforcement_out);
DSH_INTERNAL int dsh_json_decode_mode(dsh_json_decoder *decoder, const json_t *object, dsh_mode *mode_out);

#endif
