/* SPDX-License-Identifier: MIT */
/*
 * The session log's scanner: reads the append-only JSONL log, validates each
 * complete line (the header, then events whose seqs rise) and folds it into
 * the session's fold, leaving a torn tail alone.  Two fast paths recognise
 * this library's own `sandbox/mode` lines and ignored events without
 * building a JSON tree; every other line takes jansson's parse with the
 * core's strict flags (DSH_JSON_STRICT_PARSE) and its checks.  It is the one
 * JSON reader of the library not on the core's strict decoder, on purpose:
 * session.h says why.  The store (session-store.c) opens, creates and
 * appends; the format and the crash rules are in policy-service.h and
 * docs/sessions.md.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "policy/session-log.h"

/* Reads go in chunks of this size; a longer line grows the buffer.  The fuzz build makes it
 * small, so that short inputs reach lines that cross a chunk and the buffer's growth. */
#ifndef REPLAY_CHUNK_SIZE
#define REPLAY_CHUNK_SIZE (256 * 1024)
#endif

__attribute__((format(printf, 5, 6))) static int line_error(const session_log_replay *replay,
                                                            uint64_t line_number, dsh_error_code code,
                                                            dsh_error *error, const char *format, ...)
{
        char prefix[PATH_MAX + 64];
        va_list arguments;
        int result;

        snprintf(prefix, sizeof(prefix), "session log %s: line %llu: ", replay->path,
                 (unsigned long long) line_number);
        va_start(arguments, format);
        result = dsh_error_vset(error, code, EBADMSG, prefix, format, arguments);
        va_end(arguments);
        return result;
}

int session_check_mode_data(json_t *data, dsh_mode *mode_out, const char *where, dsh_error *error)
{
        json_t *mode = json_is_object(data) ? json_object_get(data, "mode") : NULL;
        const char *name = json_string_value(mode);
        dsh_autofree char *quoted = NULL;

        /* A NUL inside the string would let "read-only\u0000x" pass a C comparison. */
        if (name && json_string_length(mode) == strlen(name) && dsh_mode_parse(name, mode_out) == 0)
                return 0;
        quoted = mode ? json_dumps(mode, JSON_ENCODE_ANY | JSON_COMPACT) : strdup("undefined");
        return dsh_error_set(error, DSH_ERROR_INVARIANT, EINVAL, "%ssandbox/mode carries unknown mode %s", where,
                             quoted ? quoted : "?");
}

static bool json_string_is(json_t *value, const char *expected)
{
        const char *text = json_string_value(value);

        return text && json_string_length(value) == strlen(expected) && strcmp(text, expected) == 0;
}

static int replay_header(session_log_replay *replay, const char *line, size_t length, dsh_error *error)
{
        json_error_t json_error;
        json_t *root = json_loadb(line, length, DSH_JSON_STRICT_PARSE, &json_error);
        json_t *version, *cwd, *created_at, *depth;
        int result = 0;

        if (!root) {
                /* jansson's complaint cites the offending bytes, which may be control characters. */
                dsh_autofree char *reason = dsh_error_printable_text(json_error.text);

                return line_error(replay, 1, DSH_ERROR_INVARIANT, error, "the session header is not JSON: %s",
                                  reason ? reason : "out of memory");
        }
        version = json_object_get(root, "version");
        cwd = json_object_get(root, "cwd");
        created_at = json_object_get(root, "createdAt");
        depth = json_object_get(root, "delegationDepth");
        if (!json_is_object(root) || !json_string_is(json_object_get(root, "type"), SESSION_TYPE_HEADER))
                result = line_error(replay, 1, DSH_ERROR_INVARIANT, error,
                                    "the first line is not a session header (type \"session\")");
        else if (!json_is_integer(version) || json_integer_value(version) != 0)
                result = line_error(replay, 1, DSH_ERROR_INVARIANT, error,
                                    "unsupported session log version (this build reads version 0)");
        else if (replay->expected_id && !json_string_is(json_object_get(root, "id"), replay->expected_id))
                result = line_error(replay, 1, DSH_ERROR_INVARIANT, error,
                                    "the header's id does not match the file name \"%s\"", replay->expected_id);
        else if (!json_is_string(cwd))
                result = line_error(replay, 1, DSH_ERROR_INVARIANT, error, "the header has no \"cwd\" string");
        else if (created_at && !json_is_integer(created_at))
                result = line_error(replay, 1, DSH_ERROR_INVARIANT, error, "\"createdAt\" is not an integer");
        else if (depth && (!json_is_integer(depth) || json_integer_value(depth) < 0))
                result = line_error(replay, 1, DSH_ERROR_INVARIANT, error,
                                    "\"delegationDepth\" is not a non-negative integer");
        if (result == 0 && replay->header_target) {
                dsh_session *session = replay->header_target;
                size_t cwd_length = json_string_length(cwd);

                /* Kept with its NUL bytes: resolving, not loading, refuses such a root. */
                session->cwd = malloc(cwd_length + 1);
                if (!session->cwd) {
                        result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                } else {
                        memcpy(session->cwd, json_string_value(cwd), cwd_length + 1);
                        session->cwd_length = cwd_length;
                        session->created_at = created_at ? (int64_t) json_integer_value(created_at) : 0;
                        session->delegation_depth = depth ? (int64_t) json_integer_value(depth) : 0;
                }
        }
        json_decref(root);
        return result;
}

static bool match_literal(const char **cursor, const char *end, const char *literal)
{
        size_t length = strlen(literal);

        if ((size_t) (end - *cursor) < length || memcmp(*cursor, literal, length) != 0)
                return false;
        *cursor += length;
        return true;
}

/* A JSON integer as jansson writes it: no sign, no leading zero, at most 18 digits. */
static bool match_integer(const char **cursor, const char *end, uint64_t *value)
{
        const char *start = *cursor;

        *value = 0;
        while (*cursor < end && **cursor >= '0' && **cursor <= '9' && *cursor - start < 18)
                *value = *value * 10 + (uint64_t) (*(*cursor)++ - '0');
        if (*cursor == start || (*start == '0' && *cursor - start > 1))
                return false;
        return *cursor == end || **cursor < '0' || **cursor > '9';
}

/*
 * The fast path of replay.  A `sandbox/mode` line exactly as this library
 * writes it, byte for byte, is recognized without building a JSON tree:
 * such a line is valid JSON by construction, so nothing is lost by not
 * parsing it, and a log of a million switches replays in well under a
 * second.  Any other spelling (another writer, a hand edit, a delegation
 * stamp) falls through to the full jansson parse and its checks.
 */
static bool match_canonical_mode_line(const char *line, size_t length, uint64_t *seq_out, dsh_mode *mode_out)
{
        const char *cursor = line, *end = line + length;
        uint64_t time_value;

        if (!match_literal(&cursor, end, "{\"type\":\"sandbox/mode\",\"seq\":") ||
            !match_integer(&cursor, end, seq_out) || !match_literal(&cursor, end, ",\"time\":") ||
            !match_integer(&cursor, end, &time_value) || !match_literal(&cursor, end, ",\"data\":{\"mode\":\""))
                return false;
        for (int mode = 0; mode < DSH_MODE_COUNT; mode++) {
                const char *after = cursor;

                if (match_literal(&after, end, dsh_sandbox_modes[mode]) && match_literal(&after, end, "\"}}") &&
                    after == end) {
                        *mode_out = (dsh_mode) mode;
                        return true;
                }
        }
        return false;
}

/*
 * A JSON syntax check that builds nothing, for the events replay ignores.
 * It only ever says "valid" for text that is JSON (it is laxer than jansson
 * only about UTF-8 inside strings, which an ignored event may carry); any
 * "invalid" goes back to jansson, whose verdict and message count.
 */
#define SYNTAX_MAX_DEPTH 512

static const char *skip_space(const char *cursor, const char *end)
{
        while (cursor < end && (*cursor == ' ' || *cursor == '\t' || *cursor == '\r' || *cursor == '\n'))
                cursor++;
        return cursor;
}

static const char *skip_string(const char *cursor, const char *end)
{
        for (cursor++; cursor < end; cursor++) {
                unsigned char c = (unsigned char) *cursor;

                if (c == '"')
                        return cursor + 1;
                if (c < 0x20)
                        return NULL;
                if (c != '\\')
                        continue;
                if (++cursor >= end)
                        return NULL;
                if (*cursor == 'u') {
                        for (int i = 0; i < 4; i++)
                                if (++cursor >= end || !strchr("0123456789abcdefABCDEF", *cursor) || *cursor == '\0')
                                        return NULL;
                } else if (!strchr("\"\\/bfnrt", *cursor) || *cursor == '\0') {
                        return NULL;
                }
        }
        return NULL;
}

static const char *skip_digits(const char *cursor, const char *end, bool required)
{
        const char *start = cursor;

        while (cursor < end && *cursor >= '0' && *cursor <= '9')
                cursor++;
        return required && cursor == start ? NULL : cursor;
}

static const char *skip_number(const char *cursor, const char *end)
{
        if (cursor < end && *cursor == '-')
                cursor++;
        if (cursor < end && *cursor == '0')
                cursor++;
        else if (!(cursor = skip_digits(cursor, end, true)))
                return NULL;
        if (cursor < end && *cursor == '.' && !(cursor = skip_digits(cursor + 1, end, true)))
                return NULL;
        if (cursor < end && (*cursor == 'e' || *cursor == 'E')) {
                cursor++;
                if (cursor < end && (*cursor == '+' || *cursor == '-'))
                        cursor++;
                cursor = skip_digits(cursor, end, true);
        }
        return cursor;
}

static const char *skip_value(const char *cursor, const char *end, int depth)
{
        char close;

        cursor = skip_space(cursor, end);
        if (cursor >= end || depth > SYNTAX_MAX_DEPTH)
                return NULL;
        switch (*cursor) {
        case '"':
                return skip_string(cursor, end);
        case 't':
                return match_literal(&cursor, end, "true") ? cursor : NULL;
        case 'f':
                return match_literal(&cursor, end, "false") ? cursor : NULL;
        case 'n':
                return match_literal(&cursor, end, "null") ? cursor : NULL;
        case '{':
        case '[':
                close = *cursor == '{' ? '}' : ']';
                cursor = skip_space(cursor + 1, end);
                if (cursor < end && *cursor == close)
                        return cursor + 1;
                for (int key_index = 0;; key_index++) {
                        if (close == '}') {
                                const char *key;

                                cursor = skip_space(cursor, end);
                                key = cursor;
                                if (cursor >= end || *cursor != '"' || !(cursor = skip_string(cursor, end)))
                                        return NULL;
                                /* The envelope's keys appear once, unescaped: a second "type" or "seq"
                                 * would be read differently by other parsers (the last one wins in
                                 * JSON.parse), so such a line goes to jansson, which refuses it. */
                                if (depth == 0 && key_index > 1 &&
                                    (memchr(key, '\\', (size_t) (cursor - key)) ||
                                     (cursor - key == 6 && memcmp(key, "\"type\"", 6) == 0) ||
                                     (cursor - key == 5 && memcmp(key, "\"seq\"", 5) == 0)))
                                        return NULL;
                                cursor = skip_space(cursor, end);
                                if (cursor >= end || *cursor++ != ':')
                                        return NULL;
                        }
                        if (!(cursor = skip_value(cursor, end, depth + 1)))
                                return NULL;
                        cursor = skip_space(cursor, end);
                        if (cursor < end && *cursor == ',') {
                                cursor++;
                                continue;
                        }
                        return cursor < end && *cursor == close ? cursor + 1 : NULL;
                }
        default:
                return skip_number(cursor, end);
        }
}

/*
 * The second fast path: an event of a type this library ignores, in the
 * envelope every writer of this format uses (`{"type":"...","seq":N,`), is
 * syntax-checked without building a tree.  Known types (`sandbox/...`,
 * `session`) always take the full parse, since their content matters.
 */
static bool match_ignored_event_line(const char *line, size_t length, uint64_t *seq_out, char *type,
                                     size_t type_size)
{
        const char *cursor = line, *end = line + length, *type_start, *after;
        size_t type_length;

        if (!match_literal(&cursor, end, "{\"type\":\""))
                return false;
        type_start = cursor;
        while (cursor < end && *cursor != '"' && *cursor != '\\' && (unsigned char) *cursor >= 0x20)
                cursor++;
        type_length = (size_t) (cursor - type_start);
        if (type_length == 0 || type_length >= type_size ||
            (type_length >= 8 && memcmp(type_start, "sandbox/", 8) == 0) ||
            (type_length == 7 && memcmp(type_start, "session", 7) == 0))
                return false;
        if (!match_literal(&cursor, end, "\",\"seq\":") || !match_integer(&cursor, end, seq_out) || *seq_out == 0 ||
            cursor >= end || (*cursor != ',' && *cursor != '}'))
                return false;
        after = skip_value(line, end, 0);
        if (!after || skip_space(after, end) != end)
                return false;
        memcpy(type, type_start, type_length);
        type[type_length] = '\0';
        return true;
}

static int replay_visit(session_log_replay *replay, uint64_t line_number, uint64_t seq, const char *type,
                        const char *line, size_t length)
{
        dsh_session_event event = { line_number, seq, type, line, length };

        return replay->visitor ? replay->visitor(&event, replay->userdata) : 0;
}

static int replay_event(session_log_replay *replay, uint64_t line_number, const char *line, size_t length,
                        dsh_error *error)
{
        session_fold *fold = replay->fold;
        char ignored_type[128];
        json_error_t json_error;
        json_t *root, *type, *seq, *data;
        dsh_mode mode;
        uint64_t seq_value;
        int result = 0;

        if (match_canonical_mode_line(line, length, &seq_value, &mode)) {
                if (seq_value <= fold->last_seq)
                        return line_error(replay, line_number, DSH_ERROR_INVARIANT, error,
                                          "seq %llu does not follow seq %llu", (unsigned long long) seq_value,
                                          (unsigned long long) fold->last_seq);
                fold->has_override = true;
                fold->override = mode;
                fold->last_seq = seq_value;
                fold->event_count++;
                return replay_visit(replay, line_number, seq_value, SESSION_TYPE_MODE, line, length);
        }
        if (match_ignored_event_line(line, length, &seq_value, ignored_type, sizeof(ignored_type))) {
                if (seq_value <= fold->last_seq)
                        return line_error(replay, line_number, DSH_ERROR_INVARIANT, error,
                                          "seq %llu does not follow seq %llu", (unsigned long long) seq_value,
                                          (unsigned long long) fold->last_seq);
                fold->last_seq = seq_value;
                fold->event_count++;
                return replay_visit(replay, line_number, seq_value, ignored_type, line, length);
        }

        root = json_loadb(line, length, DSH_JSON_STRICT_PARSE, &json_error);
        if (!root) {
                dsh_autofree char *reason = dsh_error_printable_text(json_error.text);

                return line_error(replay, line_number, DSH_ERROR_INVARIANT, error, "corrupt line (not JSON: %s)",
                                  reason ? reason : "out of memory");
        }
        type = json_object_get(root, "type");
        seq = json_object_get(root, "seq");
        data = json_object_get(root, "data");
        if (!json_is_object(root) || !json_is_string(type) ||
            json_string_length(type) != strlen(json_string_value(type))) {
                result = line_error(replay, line_number, DSH_ERROR_INVARIANT, error,
                                    "corrupt line (not an event object with a \"type\" string)");
        } else if (!json_is_integer(seq) || json_integer_value(seq) < 1) {
                result = line_error(replay, line_number, DSH_ERROR_INVARIANT, error,
                                    "event has no positive integer \"seq\"");
        } else if ((uint64_t) json_integer_value(seq) <= fold->last_seq) {
                result = line_error(replay, line_number, DSH_ERROR_INVARIANT, error,
                                    "seq %lld does not follow seq %llu", (long long) json_integer_value(seq),
                                    (unsigned long long) fold->last_seq);
        } else if (json_string_is(type, SESSION_TYPE_HEADER)) {
                result = line_error(replay, line_number, DSH_ERROR_INVARIANT, error,
                                    "a second session header");
        } else if (json_string_is(type, SESSION_TYPE_MODE)) {
                char *where = NULL;

                if (asprintf(&where, "session log %s: line %llu: ", replay->path,
                             (unsigned long long) line_number) < 0)
                        where = NULL;
                result = session_check_mode_data(data, &mode, where ? where : "", error);
                free(where);
                if (result == 0) {
                        fold->has_override = true;
                        fold->override = mode;
                }
        } else if (json_string_is(type, SESSION_TYPE_CONTEXT)) {
                json_t *text = json_is_object(data) ? json_object_get(data, "text") : NULL;

                if (!json_is_string(text)) {
                        result = line_error(replay, line_number, DSH_ERROR_INVARIANT, error,
                                            "sandbox/context has no \"text\" string");
                } else {
                        char *copy = strdup(json_string_value(text));

                        if (!copy) {
                                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                        } else {
                                free(fold->last_context);
                                fold->last_context = copy;
                        }
                }
        }
        /* Any other type is a newer harness's event: kept in the log, counted, ignored. */
        if (result == 0) {
                fold->last_seq = (uint64_t) json_integer_value(seq);
                fold->event_count++;
                result = replay_visit(replay, line_number, fold->last_seq, json_string_value(type), line, length);
        }
        json_decref(root);
        return result;
}

static int replay_line(session_log_replay *replay, char *line, size_t length, dsh_error *error)
{
        uint64_t line_number = replay->fold->line_count + 1;
        int result;

        if (line_number == 1) {
                result = replay_header(replay, line, length, error);
                if (result == 0)
                        result = replay_visit(replay, 1, 0, SESSION_TYPE_HEADER, line, length);
        } else {
                result = replay_event(replay, line_number, line, length, error);
        }
        if (result == 0)
                replay->fold->line_count = line_number;
        return result;
}

/* Reads in chunks, growing the buffer for a longer line; stops at the last newline (a torn tail is left alone). */
int session_log_replay_from(int fd, off_t *offset, session_log_replay *replay, dsh_error *error)
{
        size_t capacity = REPLAY_CHUNK_SIZE, filled = 0;
        off_t read_at = *offset;
        dsh_autofree char *buffer = NULL;
        struct stat status;

        if (fstat(fd, &status) < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot read session log %s: %s", replay->path,
                                     strerror(errno));
        if (status.st_size <= *offset)
                return 0;
        if ((uint64_t) (status.st_size - *offset) + 1 < capacity)
                capacity = (size_t) (status.st_size - *offset) + 1;
        buffer = malloc(capacity);
        if (!buffer)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        for (;;) {
                ssize_t got;
                char *start = buffer, *newline;

                if (filled == capacity) {
                        char *grown = realloc(buffer, capacity * 2);

                        if (!grown)
                                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                        buffer = grown;
                        capacity *= 2;
                        start = buffer;
                }
                got = pread(fd, buffer + filled, capacity - filled, read_at);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot read session log %s: %s",
                                             replay->path, strerror(errno));
                if (got == 0)
                        return 0;
                read_at += got;
                filled += (size_t) got;
                while ((newline = memchr(start, '\n', filled - (size_t) (start - buffer)))) {
                        size_t length = (size_t) (newline - start);
                        int result;

                        *newline = '\0';
                        result = replay_line(replay, start, length, error);
                        if (result != 0)
                                return result;
                        *offset += (off_t) length + 1;
                        start = newline + 1;
                }
                filled -= (size_t) (start - buffer);
                memmove(buffer, start, filled);
        }
}
