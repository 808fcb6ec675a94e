/* SPDX-License-Identifier: MIT */
/* A session's denial store: where it is, why a file of its own, and its rules are in session-denials.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/denial-json.h"
#include "base/error.h"
#include "base/fd-io.h"
#include "policy/session-denials.h"
#include "policy/session-lock.h"

#define STORE_TYPE "denials"
#define STORE_SUFFIX ".denials"
#define LOG_SUFFIX ".jsonl"
#define SURFACE_MAX 32

bool session_denials_surface_is_valid(const char *surface)
{
        size_t length;

        if (!surface || !surface[0])
                return false;
        length = strspn(surface, "abcdefghijklmnopqrstuvwxyz0123456789._-");
        return surface[length] == '\0' && length <= SURFACE_MAX;
}

void dsh_session_denials_clear(dsh_session_denials *denials)
{
        if (!denials)
                return;
        for (size_t i = 0; i < denials->count; i++) {
                dsh_denial_clear(&denials->items[i].denial);
                free(denials->items[i].surface);
        }
        free(denials->items);
        *denials = (dsh_session_denials) DSH_SESSION_DENIALS_INIT;
}

/* <store>/<id>.denials, beside the log <store>/<id>.jsonl (the store made that path: it ends so). */
static char *store_path(const dsh_session *session)
{
        size_t length = strlen(session->path), suffix = strlen(LOG_SUFFIX);
        char *path = NULL;

        if (length < suffix || strcmp(session->path + length - suffix, LOG_SUFFIX) != 0) {
                errno = EINVAL;
                return NULL;
        }
        if (asprintf(&path, "%.*s" STORE_SUFFIX, (int) (length - suffix), session->path) < 0)
                return NULL;
        return path;
}

static int out_of_memory(dsh_error *error)
{
        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}

/* ------------------------------------------------------------ reading -- */

/* A line that is not a record of this format: named, never skipped. */
static int corrupt_line(dsh_error *error, const char *path, size_t line, const char *reason)
{
        return dsh_error_set(error, DSH_ERROR_INVARIANT, EBADMSG, "session denial store %s: line %zu: %s", path, line,
                             reason);
}

/*
 * The whole store, or no text (NULL, 0) when the session never recorded a
 * denial.  O_NOFOLLOW: a store replaced by a symlink is not followed to
 * someone else's file.  O_NONBLOCK: a FIFO planted in its place would block
 * the open until a writer came; with it the open returns at once and the
 * check below refuses anything but a regular file.  The read is bounded:
 * a file another process can write must not make this one allocate
 * without bound.
 */
static int read_store(const char *path, char **text_out, size_t *length_out, dsh_error *error)
{
        dsh_autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        dsh_autofree char *text = NULL;
        size_t length = 0, capacity = 0;
        struct stat status;

        *text_out = NULL;
        *length_out = 0;
        if (fd < 0 && errno == ENOENT)
                return 0;
        if (fd < 0 && errno != ELOOP)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot open session denial store %s: %s", path,
                                     strerror(errno));
        if (fd < 0 || fstat(fd, &status) < 0 || !S_ISREG(status.st_mode))
                return dsh_error_set(error, DSH_ERROR_SYSTEM, EINVAL,
                                     "session denial store %s is not a regular file: refused", path);
        for (;;) {
                ssize_t got;

                if (length > SESSION_DENIALS_FILE_LIMIT)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, EFBIG,
                                             "session denial store %s is longer than %u bytes: refused", path,
                                             SESSION_DENIALS_FILE_LIMIT);
                if (length == capacity) {
                        char *larger;

                        /* One byte past the limit at most: enough to know the file is longer. */
                        capacity = capacity ? capacity * 2 : 65536;
                        if (capacity > SESSION_DENIALS_FILE_LIMIT + 1)
                                capacity = SESSION_DENIALS_FILE_LIMIT + 1;
                        larger = realloc(text, capacity + 1);
                        if (!larger)
                                return out_of_memory(error);
                        text = larger;
                }
                got = read(fd, text + length, capacity - length);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot read session denial store %s: %s",
                                             path, strerror(errno));
                if (got == 0)
                        break;
                length += (size_t) got;
        }
        *length_out = length;
        *text_out = dsh_steal_pointer(&text);
        return 0;
}

/* Line 1: {"type":"denials","version":0,"id":ID,"dropped":N}, for this session. */
static int parse_header(json_t *value, const char *id, unsigned long long *dropped_out, dsh_error *error)
{
        static const char *const keys[] = { "type", "version", "id", "dropped", NULL };
        dsh_json_decoder decoder = { "the header", error };
        const json_t *type = json_object_get(value, "type"), *version = json_object_get(value, "version");
        const json_t *named = json_object_get(value, "id"), *dropped = json_object_get(value, "dropped");
        int result = dsh_json_check_object(&decoder, value, &dsh_json_root, keys);

        if (result < 0)
                return result;
        if (!json_is_string(type) || strcmp(json_string_value(type), STORE_TYPE) != 0)
                return dsh_error_set(error, DSH_ERROR_INVARIANT, EBADMSG, "not a denial store header");
        if (!json_is_integer(version) || json_integer_value(version) != 0)
                return dsh_error_set(error, DSH_ERROR_INVARIANT, EBADMSG, "unknown version (this reads version 0)");
        if (!json_is_string(named) || strcmp(json_string_value(named), id) != 0)
                return dsh_error_set(error, DSH_ERROR_INVARIANT, EBADMSG, "the header names another session");
        if (!json_is_integer(dropped) || json_integer_value(dropped) < 0)
                return dsh_error_set(error, DSH_ERROR_INVARIANT, EBADMSG, "\"dropped\" must be a whole number");
        *dropped_out = (unsigned long long) json_integer_value(dropped);
        return 0;
}

/*
 * One record: the denial's members, strictly, with "at" (ms, >= 0) and
 * "surface" beside them.  `value` is this reader's own parse: the two are
 * taken out of it, and what is left must be a denial, nothing more.
 */
static int parse_record(json_t *value, dsh_session_denial *out, dsh_error *error)
{
        dsh_json_decoder decoder = { "the record", error };
        const json_t *at = json_object_get(value, "at"), *surface = json_object_get(value, "surface");

        if (!json_is_object(value))
                return dsh_error_set(error, DSH_ERROR_INVARIANT, EBADMSG, "not a JSON object");
        if (!json_is_integer(at) || json_integer_value(at) < 0)
                return dsh_error_set(error, DSH_ERROR_INVARIANT, EBADMSG, "\"at\" must be a time in milliseconds");
        if (!json_is_string(surface) || !session_denials_surface_is_valid(json_string_value(surface)))
                return dsh_error_set(error, DSH_ERROR_INVARIANT, EBADMSG, "\"surface\" must name a tool");
        out->at_ms = (long long) json_integer_value(at);
        out->surface = strdup(json_string_value(surface));
        if (!out->surface)
                return out_of_memory(error);
        json_object_del(value, "at");
        json_object_del(value, "surface");
        return dsh_json_decode_denial(&decoder, value, &dsh_json_root, &out->denial);
}

/* Line `number` (1: the header) into `out`; what is wrong with it in `error`, as parse_* say it. */
static int parse_line(const char *id, size_t number, const char *line, size_t length, dsh_session_denials *out,
                      dsh_error *error)
{
        json_error_t parse_error;
        json_t *value = json_loadb(line, length, DSH_JSON_STRICT_PARSE, &parse_error);
        int result;

        if (!value) {
                dsh_autofree char *reason = dsh_error_printable_text(parse_error.text);

                return dsh_error_set(error, DSH_ERROR_INVARIANT, EBADMSG, "not JSON: %s", reason ? reason : "?");
        }
        if (number == 1) {
                result = parse_header(value, id, &out->dropped, error);
        } else if (out->count >= DSH_SESSION_DENIALS_MAX) {
                result = dsh_error_set(error, DSH_ERROR_INVARIANT, EBADMSG, "more than %d records",
                                       DSH_SESSION_DENIALS_MAX);
        } else {
                out->items[out->count] = (dsh_session_denial) { DSH_DENIAL_INIT, 0, NULL };
                result = parse_record(value, &out->items[out->count], error);
                if (result == 0) {
                        out->count++;
                } else {
                        free(out->items[out->count].surface);
                        out->items[out->count].surface = NULL;
                }
        }
        json_decref(value);
        return result;
}

/* What was read of a store: every record decoded (so checked), and each one's line as it was, to write again. */
typedef struct store_contents {
        dsh_session_denials kept;
        const char **lines;             /* kept.count lines into the text read, without their newlines */
        size_t *lengths;
} store_contents;

static void store_contents_clear(store_contents *contents)
{
        dsh_session_denials_clear(&contents->kept);
        free(contents->lines);
        free(contents->lengths);
        contents->lines = NULL;
        contents->lengths = NULL;
}

/*
 * Every line of `text`, checked.  The store is only ever written whole and
 * renamed into place, so it is never torn: a last line without its newline,
 * or a file without its header, was cut or written by something else, and
 * is reported like any other corrupt line.
 */
static int parse_store(const char *path, const char *id, const char *text, size_t length, store_contents *out,
                       dsh_error *error)
{
        size_t number = 0;

        out->kept.items = calloc(DSH_SESSION_DENIALS_MAX, sizeof(*out->kept.items));
        out->lines = calloc(DSH_SESSION_DENIALS_MAX, sizeof(*out->lines));
        out->lengths = calloc(DSH_SESSION_DENIALS_MAX, sizeof(*out->lengths));
        if (!out->kept.items || !out->lines || !out->lengths)
                return out_of_memory(error);
        if (length == 0)
                return corrupt_line(error, path, 1, "missing header (the file is empty)");
        for (const char *line = text; line < text + length;) {
                const char *end = memchr(line, '\n', (size_t) (text + length - line));
                size_t before = out->kept.count;
                dsh_error local = DSH_ERROR_INIT;
                int result;

                number++;
                if (!end)
                        return corrupt_line(error, path, number, "not terminated by a newline (the file was cut short)");
                result = parse_line(id, number, line, (size_t) (end - line), &out->kept, &local);
                if (result < 0) {
                        result = result == -ENOMEM ? out_of_memory(error)
                                                   : corrupt_line(error, path, number, local.message ? local.message
                                                                                                     : "corrupt");
                        dsh_error_clear(&local);
                        return result;
                }
                if (out->kept.count > before) {
                        out->lines[before] = line;
                        out->lengths[before] = (size_t) (end - line);
                }
                line = end + 1;
        }
        return 0;
}

/* The store at `path` into `out` (its lines point into `*text_out`, which the caller frees after). */
static int load_contents(const char *path, const char *id, char **text_out, store_contents *out, dsh_error *error)
{
        size_t length = 0;
        int result = read_store(path, text_out, &length, error);

        if (result == 0 && *text_out)
                result = parse_store(path, id, *text_out, length, out, error);
        if (result < 0)
                store_contents_clear(out);
        return result;
}

static int load_path(const char *path, const char *id, dsh_session_denials *out, dsh_error *error)
{
        store_contents contents = { DSH_SESSION_DENIALS_INIT, NULL, NULL };
        dsh_autofree char *text = NULL;
        int result = load_contents(path, id, &text, &contents, error);

        *out = contents.kept;
        contents.kept = (dsh_session_denials) DSH_SESSION_DENIALS_INIT;
        store_contents_clear(&contents);
        return result;
}

int session_denials_load(const dsh_session *session, dsh_session_denials *out, dsh_error *error)
{
        dsh_autofree char *path = store_path(session);

        *out = (dsh_session_denials) DSH_SESSION_DENIALS_INIT;
        if (!path)
                return out_of_memory(error);
        return load_path(path, session->id, out, error);
}

/* ------------------------------------------------------------ writing -- */

static unsigned long long saturating_add(unsigned long long a, unsigned long long b)
{
        return a > ~0ULL - b ? ~0ULL : a + b;
}

/* One value as one line: the dump is compact and escapes every control character, so its only newline is ours. */
static void write_value_line(FILE *out, json_t *value, bool *failed)
{
        char *text = value ? json_dumps(value, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

        if (!text || fprintf(out, "%s\n", text) < 0)
                *failed = true;
        free(text);
        json_decref(value);
}

/*
 * The store's new text: the header with the new count dropped, the kept
 * records that still fit (their lines as read: each was just checked), then
 * the new ones, the oldest of all cut past DSH_SESSION_DENIALS_MAX.
 */
static int store_text(const char *id, const store_contents *old, const char *surface, int64_t at_ms,
                      const dsh_denials *denials, char **text_out, size_t *length_out, dsh_error *error)
{
        dsh_json_encoder encoder = { "session denial store", error, false };
        size_t total = old->kept.count + denials->count;
        size_t excess = total > DSH_SESSION_DENIALS_MAX ? total - DSH_SESSION_DENIALS_MAX : 0;
        unsigned long long dropped = saturating_add(saturating_add(old->kept.dropped, denials->dropped), excess);
        FILE *out = open_memstream(text_out, length_out);
        bool failed = false;

        if (!out)
                return out_of_memory(error);
        write_value_line(out,
                         json_pack("{s:s, s:i, s:s, s:I}", "type", STORE_TYPE, "version", 0, "id", id, "dropped",
                                   (json_int_t) (dropped > (unsigned long long) INT64_MAX ? INT64_MAX : dropped)),
                         &failed);
        for (size_t i = excess; i < old->kept.count && !failed; i++)
                if (fprintf(out, "%.*s\n", (int) old->lengths[i], old->lines[i]) < 0)
                        failed = true;
        for (size_t i = excess > old->kept.count ? excess - old->kept.count : 0;
             i < denials->count && !failed && !encoder.failed; i++) {
                /* A view of the caller's record, not a copy: the encoder only reads it. */
                dsh_session_denial item = { denials->items[i], (long long) at_ms, (char *) surface };

                write_value_line(out, dsh_json_session_denial_value(&encoder, &item, &dsh_json_root), &failed);
        }
        if (fclose(out) != 0)
                failed = true;
        if (failed || encoder.failed) {
                free(*text_out);
                *text_out = NULL;
                return encoder.failed ? -(error->errno_value ? error->errno_value : EINVAL) : out_of_memory(error);
        }
        return 0;
}

static int sync_directory(const char *path)
{
        dsh_autofree char *directory = strdup(path);
        dsh_autoclose int fd = -1;
        char *slash = directory ? strrchr(directory, '/') : NULL;

        if (!slash)
                return directory ? -EINVAL : -ENOMEM;
        slash[slash == directory ? 1 : 0] = '\0';
        fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return fsync(fd) < 0 ? -errno : 0;
}

/*
 * `text` in a private file beside the store (".<id>.denials.tmp-XXXXXX":
 * no session id starts with '.'), synced, renamed over the store: a reader
 * sees the old store or the new one, a crash leaves one of them whole.
 */
static int replace_store(const char *path, const char *text, size_t length, dsh_error *error)
{
        const char *slash = strrchr(path, '/');
        dsh_autofree char *temporary = NULL;
        dsh_autoclose int fd = -1;
        int result;

        if (!slash || asprintf(&temporary, "%.*s/.%s.tmp-XXXXXX", (int) (slash - path), path, slash + 1) < 0)
                return out_of_memory(error);
        fd = mkostemp(temporary, O_CLOEXEC);
        if (fd < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot write session denial store %s: %s", path,
                                     strerror(errno));
        result = dsh_write_all(fd, text, length);
        if (result == 0 && fsync(fd) < 0)
                result = -errno;
        if (result == 0 && rename(temporary, path) < 0)
                result = -errno;
        if (result < 0)
                unlink(temporary);
        if (result == 0)
                result = sync_directory(path);
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot write session denial store %s: %s", path,
                                     strerror(-result));
        return 0;
}

/* Under the lock: read and check the store, add, cut, write it back whole. */
static int append_locked(const char *path, const char *id, const char *surface, int64_t at_ms,
                         const dsh_denials *denials, dsh_error *error)
{
        store_contents old = { DSH_SESSION_DENIALS_INIT, NULL, NULL };
        dsh_autofree char *old_text = NULL, *text = NULL;
        size_t length = 0;
        int result = load_contents(path, id, &old_text, &old, error);

        if (result == 0)
                result = store_text(id, &old, surface, at_ms, denials, &text, &length, error);
        if (result == 0)
                result = replace_store(path, text, length, error);
        store_contents_clear(&old);
        return result;
}

int session_denials_append(dsh_session *session, const char *surface, int64_t at_ms, const dsh_denials *denials,
                           dsh_error *error)
{
        dsh_autofree char *path = NULL;
        int result;

        if (!session_denials_surface_is_valid(surface))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "a denial's surface must be 1 to %d of [a-z0-9._-], not \"%s\"", SURFACE_MAX,
                                     surface ? surface : "");
        if (!denials || (denials->count == 0 && denials->dropped == 0))
                return 0;
        path = store_path(session);
        if (!path)
                return out_of_memory(error);
        /*
         * The session log's own lock, within its bound: every writer of the
         * session waits for this one flock, so two processes appending at
         * once take turns, and the second reads what the first wrote.
         */
        result = dsh_session_lock_take(session->fd, session->path, error);
        if (result < 0)
                return result;
        result = append_locked(path, session->id, surface, at_ms, denials, error);
        flock(session->fd, LOCK_UN);
        return result;
}
