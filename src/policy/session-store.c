/* SPDX-License-Identifier: MIT */
/*
 * The session store: one append-only JSONL log per session, replayed into a small fold and appended
 * to under an exclusive flock, taken within a bound (session-lock.h; the format and crash rules:
 * policy-service.h, docs/sessions.md).
 * Reading and validating the log is session-log.c's: the one JSON reader not on base/json-core.h's
 * decoder, on purpose (session.h says why).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fd-io.h"
#include "policy/session-lock.h"
#include "policy/session-log.h"
#include "policy/session.h"
#include "base/xdg.h"
#include "base/path.h"

#define SESSION_LOG_SUFFIX ".jsonl"

struct dsh_session_store {
        char *directory;
};

/* ------------------------------------------------------------- store -- */

char *dsh_session_store_default_directory(void)
{
        return dsh_xdg_directory("DSH_SANDBOX_STATE_DIR", "XDG_STATE_HOME", ".local/state");
}

int dsh_session_store_open(const char *directory, dsh_session_store **store_out, dsh_error *error)
{
        dsh_session_store *store;

        *store_out = NULL;
        store = calloc(1, sizeof(*store));
        if (!store)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        store->directory = directory ? strdup(directory) : dsh_session_store_default_directory();
        if (!store->directory) {
                free(store);
                if (directory)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "no session state directory: set DSH_SANDBOX_STATE_DIR, XDG_STATE_HOME or HOME");
        }
        if (store->directory[0] == '\0') {
                dsh_session_store_free(store);
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "the session state directory is empty");
        }
        *store_out = store;
        return 0;
}

void dsh_session_store_free(dsh_session_store *store)
{
        if (!store)
                return;
        free(store->directory);
        free(store);
}

const char *dsh_session_store_directory(const dsh_session_store *store)
{
        return store->directory;
}

bool dsh_session_id_is_valid(const char *id)
{
        size_t length;

        if (!id || id[0] == '\0' || id[0] == '.')
                return false;
        length = strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
        return id[length] == '\0' && length <= DSH_SESSION_ID_MAX;
}

static char *session_log_path(const dsh_session_store *store, const char *id)
{
        char *path = NULL;

        if (asprintf(&path, "%s/%s" SESSION_LOG_SUFFIX, store->directory, id) < 0)
                return NULL;
        return path;
}

static int compare_strings(const void *left, const void *right)
{
        return strcmp(*(char *const *) left, *(char *const *) right);
}

int dsh_session_store_list(dsh_session_store *store, char ***ids_out, dsh_error *error)
{
        char **ids = calloc(1, sizeof(char *));
        struct dirent *entry;
        DIR *directory;

        *ids_out = NULL;
        if (!ids)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        directory = opendir(store->directory);
        if (!directory) {
                if (errno == ENOENT) {
                        *ids_out = ids;
                        return 0;
                }
                dsh_strv_free(ids);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot read the session directory %s: %s",
                                     store->directory, strerror(errno));
        }
        while ((entry = readdir(directory))) {
                size_t length = strlen(entry->d_name), suffix = strlen(SESSION_LOG_SUFFIX);
                dsh_autofree char *id = NULL;

                if (length <= suffix || strcmp(entry->d_name + length - suffix, SESSION_LOG_SUFFIX) != 0)
                        continue;
                id = strndup(entry->d_name, length - suffix);
                if (!id || (dsh_session_id_is_valid(id) && dsh_strv_append(&ids, id) < 0)) {
                        closedir(directory);
                        dsh_strv_free(ids);
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                }
        }
        closedir(directory);
        qsort(ids, dsh_strv_length(ids), sizeof(char *), compare_strings);
        *ids_out = ids;
        return 0;
}

/* ------------------------------------------------------------ helpers -- */

static int64_t now_milliseconds(void)
{
        struct timespec now;

        clock_gettime(CLOCK_REALTIME, &now);
        return (int64_t) now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/*
 * A UUIDv7: 48 bits of Unix milliseconds, then 74 random bits.  Random so that
 * ids cannot be guessed or collide across hosts; time-ordered so that a sorted
 * listing is a creation-order listing.
 */
static int new_session_id(char id[37])
{
        uint64_t milliseconds = (uint64_t) now_milliseconds();
        unsigned char bytes[16];
        size_t filled = 0;

        while (filled < 10) {
                ssize_t got = getrandom(bytes + 6 + filled, 10 - filled, 0);

                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return -errno;
                filled += (size_t) got;
        }
        for (int i = 0; i < 6; i++)
                bytes[i] = (unsigned char) (milliseconds >> (40 - 8 * i));
        bytes[6] = (unsigned char) (0x70 | (bytes[6] & 0x0f));
        bytes[8] = (unsigned char) (0x80 | (bytes[8] & 0x3f));
        snprintf(id, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", bytes[0], bytes[1],
                 bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11],
                 bytes[12], bytes[13], bytes[14], bytes[15]);
        return 0;
}

static int sync_directory(const char *directory)
{
        dsh_autoclose int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        return fsync(fd) < 0 ? -errno : 0;
}

/* A record as one compact JSON line.  jansson escapes every control character, so the
 * only newline in the result is the terminator added here. */
static char *record_line(json_t *record, size_t *length_out)
{
        char *text = json_dumps(record, JSON_COMPACT);
        size_t length;
        char *line;

        if (!text)
                return NULL;
        length = strlen(text);
        line = realloc(text, length + 2);
        if (!line) {
                free(text);
                return NULL;
        }
        line[length] = '\n';
        line[length + 1] = '\0';
        *length_out = length + 1;
        return line;
}

/* ------------------------------------------------------------ sessions -- */

static void session_fold_clear(session_fold *fold)
{
        free(fold->last_context);
        memset(fold, 0, sizeof(*fold));
}

void dsh_session_free(dsh_session *session)
{
        if (!session)
                return;
        if (session->fd >= 0)
                close(session->fd);
        for (size_t i = 0; i < session->registration_count; i++)
                free(session->registrations[i].directory);
        free(session->registrations);
        session_fold_clear(&session->fold);
        free(session->cwd);
        free(session->path);
        free(session->id);
        free(session);
}

int dsh_session_refresh(dsh_session *session, dsh_error *error)
{
        session_log_replay replay = { session->path, session->id, &session->fold, NULL, NULL, NULL };
        int result;

        if (session->fold.line_count == 0)
                replay.header_target = session;
        result = session_log_replay_from(session->fd, &session->consumed, &replay, error);
        if (result == 0 && session->fold.line_count == 0)
                return dsh_error_set(error, DSH_ERROR_INVARIANT, EBADMSG, "session log %s: line 1: missing session header",
                                     session->path);
        return result;
}

int dsh_session_open(dsh_session_store *store, const char *id, dsh_session **session_out, dsh_error *error)
{
        dsh_session *session;
        struct stat status;
        int result;

        *session_out = NULL;
        if (!dsh_session_id_is_valid(id))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "invalid session id \"%s\" (expected [A-Za-z0-9._-], not starting with '.')",
                                     id ? id : "");
        session = calloc(1, sizeof(*session));
        if (!session)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        session->fd = -1;
        session->id = strdup(id);
        session->path = session_log_path(store, id);
        if (!session->id || !session->path) {
                dsh_session_free(session);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        /*
         * O_NOFOLLOW: a log replaced by a symlink is not followed to someone
         * else's file.  O_NONBLOCK: a FIFO named like a log (a command that can
         * write the store could plant one) would block a read-only open until
         * a writer comes, which may be never; with it the open returns at once
         * and the check below refuses anything but a regular file.  On a
         * regular file the flag changes nothing, so it is left set.
         */
        session->fd = open(session->path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        session->writable = session->fd >= 0;
        if (session->fd < 0 && (errno == EACCES || errno == EROFS || errno == EPERM))
                session->fd = open(session->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (session->fd < 0) {
                result = errno == ENOENT
                                 ? dsh_error_set(error, DSH_ERROR_SYSTEM, ENOENT, "session \"%s\" does not exist (no %s)",
                                                 id, session->path)
                                 : dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot open session log %s: %s",
                                                 session->path, strerror(errno));
                dsh_session_free(session);
                return result;
        }
        if (fstat(session->fd, &status) < 0 || !S_ISREG(status.st_mode)) {
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, EINVAL, "session log %s is not a regular file",
                                       session->path);
                dsh_session_free(session);
                return result;
        }
        result = dsh_session_refresh(session, error);
        if (result < 0) {
                dsh_session_free(session);
                return result;
        }
        *session_out = session;
        return 0;
}

int dsh_session_foreach_event(dsh_session *session, dsh_session_event_visitor visitor, void *userdata,
                              dsh_error *error)
{
        session_fold fold = { 0 };
        session_log_replay replay = { session->path, session->id, &fold, NULL, visitor, userdata };
        off_t offset = 0;
        int result = session_log_replay_from(session->fd, &offset, &replay, error);

        session_fold_clear(&fold);
        return result;
}

/*
 * The root a new session records: `cwd` canonical, resolved once, now.  A
 * user may name the directory through a symlink; what is recorded is where
 * it leads today, and every later call refuses the root if a symlink has
 * appeared on it since (policy-service.c), rather than follow wherever it
 * leads then.  The log is JSON, so the root must be UTF-8.
 */
static int record_root(const char *cwd, char **recorded_out, dsh_error *error)
{
        dsh_autofree char *canonical = NULL;
        size_t invalid_offset = 0;

        *recorded_out = NULL;
        if (!cwd || cwd[0] != '/')
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, EINVAL,
                                     "session cwd must be an absolute path: \"%s\"", cwd ? cwd : "");
        canonical = dsh_path_canonical(cwd);
        if (!canonical)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_ROOT, errno,
                                     "session cwd \"%s\" cannot be resolved: %s", cwd, strerror(errno));
        if (!dsh_text_is_utf8(canonical, strlen(canonical), &invalid_offset))
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EILSEQ,
                                     "session cwd \"%.*s...\" is not valid UTF-8 (byte 0x%02x at offset %zu), and a "
                                     "session log, which is JSON, cannot record it",
                                     (int) invalid_offset, canonical, (unsigned char) canonical[invalid_offset],
                                     invalid_offset);
        *recorded_out = dsh_steal_pointer(&canonical);
        return 0;
}

/* The header (and a delegation stamp) in a private file, synced, then linked into place. */
static int write_new_log(dsh_session_store *store, const char *id, const char *header, const char *stamp,
                         dsh_error *error)
{
        dsh_autofree char *final_path = session_log_path(store, id);
        dsh_autofree char *temporary = NULL;
        dsh_autoclose int fd = -1;
        int result;

        if (!final_path || asprintf(&temporary, "%s/.%s.tmp-XXXXXX", store->directory, id) < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        fd = mkostemp(temporary, O_CLOEXEC);
        if (fd < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot create a session log in %s: %s",
                                     store->directory, strerror(errno));
        result = dsh_write_all(fd, header, strlen(header));
        if (result == 0 && stamp)
                result = dsh_write_all(fd, stamp, strlen(stamp));
        if (result == 0 && fsync(fd) < 0)
                result = -errno;
        /* link(), unlike rename(), never replaces an existing session. */
        if (result == 0 && link(temporary, final_path) < 0)
                result = -errno;
        unlink(temporary);
        if (result == 0)
                result = sync_directory(store->directory);
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot create session log %s: %s",
                                     final_path, strerror(-result));
        return 0;
}

int dsh_session_create(dsh_session_store *store, const char *cwd, dsh_session *parent, dsh_session **session_out,
                       dsh_error *error)
{
        char id[37];
        int64_t now = now_milliseconds(), depth = 0;
        json_t *header = NULL, *stamp = NULL;
        dsh_autofree char *recorded = NULL;
        dsh_autofree char *header_line = NULL;
        dsh_autofree char *stamp_line = NULL;
        size_t length;
        int result;

        *session_out = NULL;
        result = record_root(cwd, &recorded, error);
        if (result < 0)
                return result;
        if (parent) {
                result = dsh_session_refresh(parent, error);
                if (result < 0)
                        return result;
                depth = parent->delegation_depth + 1;
        }
        /* 0700: session logs name the directories and modes of other sessions. */
        result = dsh_path_make_directories(store->directory, 0700);
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot create the session directory %s: %s",
                                     store->directory, strerror(-result));
        result = new_session_id(id);
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot make a session id: %s",
                                     strerror(-result));
        header = json_pack("{s:s, s:i, s:s, s:I, s:s, s:I}", "type", SESSION_TYPE_HEADER, "version", 0, "id", id,
                           "createdAt", (json_int_t) now, "cwd", recorded, "delegationDepth", (json_int_t) depth);
        header_line = header ? record_line(header, &length) : NULL;
        json_decref(header);
        /* Delegation: a new child cannot already fold to the parent's override, so the stamp
         * is always written, and written with the header so the child never exists without it. */
        if (parent && parent->fold.has_override) {
                stamp = json_pack("{s:s, s:i, s:I, s:{s:s, s:s}}", "type", SESSION_TYPE_MODE, "seq", 1, "time",
                                  (json_int_t) now, "data", "mode", dsh_mode_name(parent->fold.override), "source",
                                  "delegation");
                stamp_line = stamp ? record_line(stamp, &length) : NULL;
                json_decref(stamp);
                if (!stamp_line)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        if (!header_line)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        result = write_new_log(store, id, header_line, stamp_line, error);
        if (result < 0)
                return result;
        return dsh_session_open(store, id, session_out, error);
}

/* -------------------------------------------------------------- append -- */

/*
 * Called with the lock held.  Every writer holds the lock from before it
 * reads the end of the file until after its fdatasync, so bytes past the last
 * newline can only be the remains of a writer that crashed or failed: never
 * acknowledged, never read as a record.  Cutting them off is not rewriting
 * history; it is what keeps the next record from gluing onto a fragment.
 */
static int cut_torn_tail(dsh_session *session, dsh_error *error)
{
        struct stat status;

        if (fstat(session->fd, &status) < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, errno, "cannot read session log %s: %s", session->path,
                                     strerror(errno));
        if (status.st_size > session->consumed && ftruncate(session->fd, session->consumed) < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, errno,
                                     "cannot drop the torn end of session log %s: %s", session->path,
                                     strerror(errno));
        return 0;
}

static int write_record_locked(dsh_session *session, const char *type, json_t *data, uint64_t *seq_out,
                               dsh_error *error)
{
        uint64_t seq = session->fold.last_seq + 1;
        dsh_autofree char *line = NULL;
        json_t *record;
        size_t length = 0;
        int result;

        /*
         * seq is a JSON integer, which every reader of the format (jansson
         * included) holds in 64 signed bits: INT64_MAX is the last one a log
         * can carry.  Past it the next record would wrap to a negative seq that
         * no load accepts, breaking the log for good; refusing the append
         * keeps it loadable.
         */
        if (session->fold.last_seq >= (uint64_t) INT64_MAX)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, EOVERFLOW,
                                     "cannot append to session log %s: its last event has seq %llu, the largest a "
                                     "session log can hold",
                                     session->path, (unsigned long long) session->fold.last_seq);
        record = json_pack("{s:s, s:I, s:I, s:O}", "type", type, "seq", (json_int_t) seq, "time",
                           (json_int_t) now_milliseconds(), "data", data);
        line = record ? record_line(record, &length) : NULL;
        json_decref(record);
        if (!line)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        result = dsh_write_all(session->fd, line, length);
        if (result == 0 && fdatasync(session->fd) < 0)
                result = -errno;
        if (result < 0) {
                /* Roll back to the end we started from: a failed append leaves no fragment and no
                 * event a later reader could count although the caller was told it failed. */
                if (ftruncate(session->fd, session->consumed) == 0)
                        (void) fdatasync(session->fd);
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot append to session log %s: %s",
                                     session->path, strerror(-result));
        }
        *seq_out = seq;
        return 0;
}

int session_append_built(dsh_session *session, const char *type, session_event_builder builder, void *userdata,
                         uint64_t *seq_out, bool *appended_out, dsh_error *error)
{
        json_t *data = NULL;
        dsh_mode mode;
        uint64_t seq = 0;
        int result;

        if (appended_out)
                *appended_out = false;
        if (!session->writable)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, EROFS, "session log %s is not writable", session->path);
        /* Within a bound (session-lock.h): a reader that holds the lock cannot make this wait for ever. */
        result = dsh_session_lock_take(session->fd, session->path, error);
        if (result < 0)
                return result;
        result = dsh_session_refresh(session, error);
        if (result == 0)
                result = cut_torn_tail(session, error);
        if (result == 0)
                result = builder(session, userdata, &data, error);
        if (result == 0 && data && strcmp(type, SESSION_TYPE_MODE) == 0)
                result = session_check_mode_data(data, &mode, "", error);
        if (result == 0 && data)
                result = write_record_locked(session, type, data, &seq, error);
        /* Fold our own line in through the same replay every reader uses. */
        if (result == 0 && data)
                result = dsh_session_refresh(session, error);
        json_decref(data);
        flock(session->fd, LOCK_UN);
        if (result < 0)
                return result;
        if (seq_out && seq)
                *seq_out = seq;
        if (appended_out)
                *appended_out = seq != 0;
        return 0;
}

struct prepared_data {
        json_t *data;
};

static int build_prepared(dsh_session *session, void *userdata, json_t **data_out, dsh_error *error)
{
        (void) session;
        (void) error;
        *data_out = json_incref(((struct prepared_data *) userdata)->data);
        return 0;
}

int dsh_session_append(dsh_session *session, const char *type, const char *data_json, uint64_t *seq_out,
                       dsh_error *error)
{
        struct prepared_data prepared = { NULL };
        json_error_t json_error;
        int result;

        if (!type || type[0] == '\0' || strcmp(type, SESSION_TYPE_HEADER) == 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                     "an event needs a type other than \"session\"");
        prepared.data = data_json ? json_loads(data_json, DSH_JSON_STRICT_PARSE, &json_error)
                                  : json_object();
        if (!json_is_object(prepared.data)) {
                json_decref(prepared.data);
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "event data must be a JSON object");
        }
        result = session_append_built(session, type, build_prepared, &prepared, seq_out, NULL, error);
        json_decref(prepared.data);
        return result;
}

int dsh_session_set_mode(dsh_session *session, dsh_mode mode, uint64_t *seq_out, dsh_error *error)
{
        struct prepared_data prepared = { NULL };
        int result;

        prepared.data = json_pack("{s:s}", "mode", dsh_mode_name(mode));
        if (!prepared.data)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        /* An out-of-range enum becomes "invalid" here and is refused by the invariant. */
        result = session_append_built(session, SESSION_TYPE_MODE, build_prepared, &prepared, seq_out, NULL, error);
        json_decref(prepared.data);
        return result;
}

static int build_stamp(dsh_session *session, void *userdata, json_t **data_out, dsh_error *error)
{
        dsh_mode mode = *(const dsh_mode *) userdata;

        *data_out = NULL;
        if (session->fold.has_override && session->fold.override == mode)
                return 0;
        *data_out = json_pack("{s:s, s:s}", "mode", dsh_mode_name(mode), "source", "delegation");
        return *data_out ? 0 : dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
}

int dsh_session_stamp_override(dsh_session *session, dsh_mode mode, bool *stamped_out, dsh_error *error)
{
        return session_append_built(session, SESSION_TYPE_MODE, build_stamp, &mode, NULL, stamped_out, error);
}

/* ----------------------------------------------------------- accessors -- */

const char *dsh_session_id(const dsh_session *session)
{
        return session->id;
}

const char *dsh_session_path(const dsh_session *session)
{
        return session->path;
}

const char *dsh_session_cwd(const dsh_session *session, size_t *length_out)
{
        if (length_out)
                *length_out = session->cwd_length;
        return session->cwd;
}

int64_t dsh_session_created_at(const dsh_session *session)
{
        return session->created_at;
}

int64_t dsh_session_delegation_depth(const dsh_session *session)
{
        return session->delegation_depth;
}

uint64_t dsh_session_event_count(const dsh_session *session)
{
        return session->fold.event_count;
}

uint64_t dsh_session_last_seq(const dsh_session *session)
{
        return session->fold.last_seq;
}

bool dsh_session_override(const dsh_session *session, dsh_mode *mode_out)
{
        if (!session->fold.has_override)
                return false;
        *mode_out = session->fold.override;
        return true;
}

const char *dsh_session_last_context(const dsh_session *session)
{
        return session->fold.last_context;
}
