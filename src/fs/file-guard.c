/* SPDX-License-Identifier: MIT */
/*
 * The file guard: the harness's own file operations under the resolved
 * policy (dsh-sandbox/file-guard.h, docs/file-guard.md).
 *
 * The security argument, in one place:
 *   - where: a path is walked by path-walk.c, one openat2() of one name at a
 *     time, symlinks spliced by the walk, and a writable root recognised by
 *     its directory's identity; the change is made relative to the fd the
 *     walk ended in.  A component swapped for a symlink to outside between
 *     two operations is met by the next walk as a symlink, and its target is
 *     judged where it points;
 *   - what: the shield the runner would plan for the same policy (shield.c,
 *     planned when the guard is made: file-guard-setup.c) says what a
 *     writable root does not make writable; the guard denies what bwrap
 *     holds back, and also the protected subpaths that do not exist yet,
 *     which bwrap can only report;
 *   - which /tmp: the one the command sees (docs/file-guard.md).  Under a
 *     backend whose /tmp is the session's scratch (bwrap), a path at or
 *     beneath /tmp that no writable root holds is mapped, after lexical
 *     normalization, to the same place beneath the scratch's temp area,
 *     which is then the walk's temp root (recognised by identity like the
 *     others) instead of the host's /tmp; the mapping only chooses where
 *     the walk starts, the walk stays fd-relative from there;
 *   - masks (shield/masks.h, docs/secrets.md): the guard is the harness's
 *     own hand, unconfined, so it refuses by itself what no confined
 *     command may read: every operation — read included — whose canonical
 *     target the call's plan covers (dsh_mask_plan_covers() on the prepared
 *     policy's plan, the very one the backends hold) is FS_SANDBOX_DENIED
 *     with the text of every denial, in every confined mode, whether the
 *     masked name exists or not, is a file or a directory, so a refusal
 *     tells nothing a "not found" would; and an entry moved or removed is
 *     refused too when a mask lies beneath it (a renamed ~/.ssh would carry
 *     the key away under a name no later call masks), a move's destination
 *     as its source, and so is a symlink on the route to a mask (~/.aws ->
 *     /data/aws), whose removal or replacement would repoint the entry for
 *     every later call's plan (decide_entry());
 *   - how (file-ops.c): content is written to a new inode and renamed over
 *     the entry, so no existing file is ever opened for writing — a hard
 *     link to a file outside the roots is replaced, not written through —
 *     and a failure leaves the old content whole; a recursive removal goes
 *     by fds and follows no symlink.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsh-sandbox/file-guard.h"

#include "base/error.h"
#include "fs/file-decision.h"
#include "fs/file-guard-state.h"
#include "fs/file-ops.h"
#include "base/path-fd.h"
#include "fs/path-walk.h"
#include "base/path.h"
#include "provider/prepared-policy.h"
#include "shield/masks.h"
#include "shield/shield.h"


/* One operation in progress: what the messages name. */
struct operation {
        dsh_file_guard *guard;
        const char *verb;               /* "write", "edit", "create directory", "remove", "move", "read" */
        const char *given;              /* the path as the caller gave it */
        bool changes;                   /* a mutation: the mode and the roots decide */
        bool refused;                   /* the walk was stopped by a decision (the error says why already) */
        dsh_error *error;
        bool judging;                   /* dsh_file_guard_judge(): decide, change nothing */
        bool parent_allowed;            /* judging: the walk stopped before a parent it would make, allowed */
};

/* An operation starting: the guard's last refusal is forgotten (a later take finds this operation's, or none). */
static struct operation start(dsh_file_guard *guard, const char *verb, const char *given, bool changes,
                              dsh_error *error)
{
        struct operation operation = { guard, verb, given, changes, false, error, false, false };

        pthread_mutex_lock(&guard->refusal_lock);
        free(guard->last_refusal.path);
        guard->last_refusal = (dsh_guard_refusal) { DSH_GUARD_ALLOWED, false, NULL };
        pthread_mutex_unlock(&guard->refusal_lock);
        return operation;
}

/* ---------------------------------------------------------------- errors -- */

/* The path as the caller gave it, as a message quotes it: one line, whatever it holds (C0 controls as \xNN). */
static char *printable_given(const struct operation *operation)
{
        return dsh_error_printable_text(operation->given ? operation->given : "");
}

/* Sets "cannot <verb> \"<given path>\": <formatted>" with `code` and returns -errno_value. */
static int fail(const struct operation *operation, dsh_error_code code, int errno_value, const char *format, ...)
        __attribute__((format(printf, 4, 5)));

static int fail(const struct operation *operation, dsh_error_code code, int errno_value, const char *format, ...)
{
        dsh_autofree char *printable = printable_given(operation);
        dsh_autofree char *prefix = NULL;
        va_list arguments;
        int result;

        if (!printable || asprintf(&prefix, "cannot %s \"%s\": ", operation->verb, printable) < 0)
                return dsh_error_set(operation->error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        va_start(arguments, format);
        result = dsh_error_vset(operation->error, code, errno_value, prefix, format, arguments);
        va_end(arguments);
        return result;
}

/*
 * How a message names the canonical `path`: "it" when that is the path as
 * given, else the path quoted (a relative path, a symlink followed), C0
 * controls written \xNN.  `buffer` (`size` bytes) holds the text.
 */
static const char *named(const struct operation *operation, const char *path, char *buffer, size_t size)
{
        size_t used = 0;

        if (operation->given && strcmp(path, operation->given) == 0)
                return "it";
        buffer[used++] = '"';
        for (const unsigned char *byte = (const unsigned char *) path; *byte && used + 6 < size; byte++)
                used += *byte < 0x20 ? (size_t) snprintf(buffer + used, size - used, "\\x%02x", *byte)
                                     : (size_t) (buffer[used] = (char) *byte, 1);
        buffer[used++] = '"';
        buffer[used] = '\0';
        return buffer;
}

/* A message's name for `path` (see named()), in a buffer that lives as long as the full expression. */
#define NAMED(operation, path) named((operation), (path), (char[2 * PATH_MAX]) { 0 }, 2 * PATH_MAX)

/* FS_SANDBOX_DENIED with the spec's exact text (which says "write" for every change). */
static int deny(const struct operation *operation)
{
        dsh_autofree char *printable = printable_given(operation);

        if (!printable)
                return dsh_error_set(operation->error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return dsh_error_set(operation->error, DSH_ERROR_FS_SANDBOX_DENIED, EACCES,
                             "cannot write \"%s\": file access denied under %s mode", printable,
                             dsh_mode_name(operation->guard->prepared.policy.mode));
}

static int system_failure(const struct operation *operation, int errno_value)
{
        return fail(operation, DSH_ERROR_SYSTEM, errno_value, "%s", strerror(errno_value));
}

/* ------------------------------------------------------------- decisions -- */

static char *command_spelling(const dsh_file_guard *guard, const char *path);

/*
 * Refuses the operation under `rule` (FS_SANDBOX_DENIED, deny()'s text) and
 * keeps the refusal as the guard's last, for dsh_file_guard_take_denial():
 * the rule the decision named and `path` as the command names it.  Out of
 * memory keeps the rule without a path (taking it then fails); the
 * operation is refused all the same.
 */
static int refuse(struct operation *operation, dsh_guard_rule rule, const char *path)
{
        dsh_file_guard *guard = operation->guard;
        char *spelled = path ? command_spelling(guard, path) : NULL;

        pthread_mutex_lock(&guard->refusal_lock);
        free(guard->last_refusal.path);
        guard->last_refusal = (dsh_guard_refusal) { rule, !operation->changes, spelled };
        pthread_mutex_unlock(&guard->refusal_lock);
        return deny(operation);
}

/* refuse() for `absolute` as given (not walked, or not to the end): normalized lexically. */
static int refuse_as_given(struct operation *operation, dsh_guard_rule rule, const char *absolute)
{
        dsh_autofree char *normal = dsh_path_normalize_lexically(absolute);

        return refuse(operation, rule, normal);
}

/* The decision for the entry at canonical `path` (file-decision.c), as the operation's error. */
static int decide(struct operation *operation, int root, const char *path, bool entry_moves)
{
        dsh_guard_rule rule = dsh_guard_decide(operation->guard, operation->changes, root, path, entry_moves);

        return rule == DSH_GUARD_ALLOWED ? 0 : refuse(operation, rule, path);
}

/* The same for an entry removed, renamed or renamed over. */
static int decide_entry(struct operation *operation, const dsh_walk_target *target)
{
        dsh_guard_rule rule = dsh_guard_decide_entry(operation->guard, target);

        return rule == DSH_GUARD_ALLOWED ? 0 : refuse(operation, rule, target->path);
}

/* The walk asks before each parent directory it makes: the entry that will be there must be allowed. */
static int approve_parent(int root, const char *final_path, void *data)
{
        struct operation *operation = data;
        int result = decide(operation, root, final_path, false);

        operation->refused = result < 0;
        /* Judging (dsh_file_guard_judge()): the entry that would be there is decided; nothing is made. */
        if (result == 0 && operation->judging) {
                operation->parent_allowed = true;
                return -ECANCELED;
        }
        return result;
}

/* ------------------------------------------------------------ resolution -- */

/*
 * The caller's `path` as an absolute path for the walk (a new string in
 * *absolute_out): empty is refused, trailing slashes go, a relative path is
 * taken from the workspace root, and a last component "." or ".." — which
 * names a directory by another name, not an entry — is refused.
 */
static int absolute_path(struct operation *operation, const char *path, char **absolute_out)
{
        const char *root = operation->guard->prepared.policy.workspace_root;
        dsh_autofree char *copy = NULL;
        size_t length = path ? strlen(path) : 0;
        const char *last;

        *absolute_out = NULL;
        if (length == 0)
                return fail(operation, DSH_ERROR_INVALID_INPUT, EINVAL, "the path is empty");
        while (length > 1 && path[length - 1] == '/')
                length--;
        copy = strndup(path, length);
        if (!copy)
                return system_failure(operation, ENOMEM);
        last = strrchr(copy, '/');
        last = last ? last + 1 : copy;
        if (strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
                return fail(operation, DSH_ERROR_INVALID_INPUT, EINVAL,
                            "the path ends in \"%s\" and names no entry: name the entry itself", last);
        if (strcmp(copy, "/") == 0)
                return dsh_guard_confined_change(operation->guard, operation->changes)
                               ? refuse(operation, DSH_GUARD_OUTSIDE_ROOTS, "/")
                                                  : fail(operation, DSH_ERROR_INVALID_INPUT, EINVAL,
                                                         "the path names the root directory");
        if (copy[0] == '/') {
                *absolute_out = dsh_steal_pointer(&copy);
                return 0;
        }
        if (!root || root[0] != '/')
                return fail(operation, DSH_ERROR_INVALID_INPUT, EINVAL,
                            "a relative path needs the policy's workspace root, and it has none");
        if (asprintf(absolute_out, "%s/%s", strcmp(root, "/") == 0 ? "" : root, copy) < 0) {
                *absolute_out = NULL;
                return system_failure(operation, ENOMEM);
        }
        return 0;
}

/* A failed walk as the caller's error: outside the roots, a change is simply denied, whatever stopped the walk. */
static int walk_failure(struct operation *operation, const char *absolute, const dsh_walk_target *target,
                        int result)
{
        const char *where = target->failed_at ? target->failed_at : operation->given ? operation->given : "";

        if (operation->refused)
                return result;
        /* A mask's missing parent says no more than the mask would: "not found" is the plan's to refuse. */
        if (target->failed_at && dsh_guard_is_masked(operation->guard, target->failed_at, false))
                return refuse(operation, DSH_GUARD_MASKED_PATH, target->failed_at);
        if (dsh_guard_confined_change(operation->guard, operation->changes) && (target->root < 0 || target->proc_link))
                return refuse_as_given(operation, DSH_GUARD_OUTSIDE_ROOTS, absolute);
        switch (-result) {
        case ENOENT:
                return fail(operation, DSH_ERROR_FS_NOT_FOUND, ENOENT, "%s does not exist", NAMED(operation, where));
        case ENOTDIR:
                return fail(operation, DSH_ERROR_FS_NOT_A_DIRECTORY, ENOTDIR,
                            "%s is not a directory", NAMED(operation, where));
        case EISDIR:
                return fail(operation, DSH_ERROR_FS_IS_A_DIRECTORY, EISDIR, "%s names a directory",
                            NAMED(operation, where));
        case ELOOP:
                if (target->proc_link)
                        return fail(operation, DSH_ERROR_INVALID_INPUT, ELOOP,
                                    "it passes through %s, a link of /proc, which the guard never follows",
                                    NAMED(operation, where));
                return fail(operation, DSH_ERROR_SYSTEM, ELOOP, "too many levels of symbolic links at %s",
                            NAMED(operation, where));
        case EAGAIN:
                return fail(operation, DSH_ERROR_SYSTEM, EAGAIN,
                            "a directory on the way moved while the path was resolved (at %s); nothing was changed",
                            NAMED(operation, where));
        default:
                return fail(operation, DSH_ERROR_SYSTEM, -result, "%s: %s", NAMED(operation, where),
                            strerror(-result));
        }
}

/* True when a writable root of the policy holds `path` (lexically, canonical roots): bwrap binds it over /tmp. */
static bool in_a_root(const dsh_policy *policy, const char *path)
{
        if (dsh_path_is_beneath(path, policy->workspace_root))
                return true;
        return dsh_guard_beneath_any(policy->additional_writable_roots, path);
}

/*
 * `*absolute` as the command would see it: under a backend whose /tmp is
 * the session's scratch, /tmp and what lies beneath it — unless a writable
 * root, bound over the scratch, holds it — is the scratch's temp area.
 * Normalized lexically first: inside the sandbox /tmp is a mount point whose
 * parent is "/", so "/tmp/../etc" is "/etc" there too.  Replaces `*absolute`.
 */
static int map_temp_area(const dsh_file_guard *guard, char **absolute)
{
        dsh_autofree char *normal = NULL;
        const char *rest;
        char *mapped = NULL;

        if (!guard->temp_is_scratch)
                return 0;
        normal = dsh_path_normalize_lexically(*absolute);
        if (!normal)
                return -ENOMEM;
        rest = dsh_path_relative_to(normal, GUARD_TEMP_AREA);
        if (!rest || in_a_root(&guard->prepared.policy, normal))
                return 0;
        if (asprintf(&mapped, "%s%s%s", guard->temp_path, rest[0] ? "/" : "", rest) < 0)
                return -ENOMEM;
        free(*absolute);
        *absolute = mapped;
        return 0;
}

/*
 * Whether `absolute`, normalized lexically, is masked.  Only ever more
 * refusals: the walk's canonical target is judged again after it (decide()),
 * so a path that reaches a mask by a symlink is refused there, and one
 * whose `..` crosses a symlink and so lands elsewhere is at worst refused
 * here for its spelling.  Out of memory refuses too.
 */
static bool is_masked_as_given(const dsh_file_guard *guard, const char *absolute)
{
        dsh_autofree char *normal = NULL;

        if (guard->prepared.masks.count == 0 && !guard->prepared.masks.closed_directories)
                return false;
        normal = dsh_path_normalize_lexically(absolute);
        return !normal || dsh_guard_is_masked(guard, normal, false);
}

/* Walks `path` for `operation`: the mode first (read-only changes nothing), then the walk. */
static int resolve(struct operation *operation, const char *path, unsigned flags, dsh_walk_target *target)
{
        const dsh_file_guard *guard = operation->guard;
        dsh_autofree char *absolute = NULL;
        int result = absolute_path(operation, path, &absolute);

        *target = (dsh_walk_target) DSH_WALK_TARGET_INIT;
        if (result < 0)
                return result;
        /* As given, before any walk (and before /tmp is mapped): a mask named by its own path is refused at once. */
        if (is_masked_as_given(guard, absolute))
                return refuse_as_given(operation, DSH_GUARD_MASKED_PATH, absolute);
        if (map_temp_area(guard, &absolute) < 0)
                return system_failure(operation, ENOMEM);
        if (operation->changes && guard->prepared.policy.mode == DSH_MODE_READ_ONLY)
                return refuse_as_given(operation, DSH_GUARD_OUTSIDE_ROOTS, absolute);
        operation->refused = false;
        result = dsh_walk(guard->roots, guard->root_count, absolute, flags, approve_parent, operation, target);
        if (result < 0 && operation->parent_allowed)
                return -ECANCELED;  /* judging: the entry a made parent would hold is allowed */
        return result < 0 ? walk_failure(operation, absolute, target, result) : 0;
}

static int replacement_failure(struct operation *operation, const char *path, int result)
{
        switch (-result) {
        case EEXIST:
                return fail(operation, DSH_ERROR_FS_ALREADY_EXISTS, EEXIST,
                            "%s already exists", NAMED(operation, path));
        case EISDIR:
                return fail(operation, DSH_ERROR_FS_IS_A_DIRECTORY, EISDIR,
                            "%s is a directory", NAMED(operation, path));
        case EAGAIN:
                return fail(operation, DSH_ERROR_SYSTEM, EAGAIN,
                            "%s was replaced by another while it was edited; it was left as the other left it",
                            NAMED(operation, path));
        default:
                return fail(operation, DSH_ERROR_SYSTEM, -result, "%s", strerror(-result));
        }
}

/* Writes the content atomically (file-ops.c), and says what went wrong in the operation's words. */
static int replace_atomically(struct operation *operation, const dsh_file_replacement *replacement,
                              const char *path, const void *content, size_t length)
{
        int result = dsh_file_replace(replacement, content, length);

        return result < 0 ? replacement_failure(operation, path, result) : 0;
}

/* ------------------------------------------------------------- checks -- */

/*
 * The entry must be a regular file, and for a change one the caller could
 * write: a file the caller could not write is not replaced, as a confined
 * command could not write it either (without CAP_DAC_OVERRIDE, even root is
 * bound by the owner's bits), and replacing the entry would be a way around
 * them.
 */
static int check_regular_file(struct operation *operation, const dsh_walk_target *target)
{
        const struct stat *status = &target->status;

        if (S_ISDIR(status->st_mode))
                return fail(operation, DSH_ERROR_FS_IS_A_DIRECTORY, EISDIR,
                            "%s is a directory", NAMED(operation, target->path));
        if (!S_ISREG(status->st_mode))
                return fail(operation, DSH_ERROR_INVALID_INPUT, EINVAL,
                            "%s is not a regular file", NAMED(operation, target->path));
        if (!operation->changes)
                return 0;
        if (faccessat(target->directory_fd, target->name, W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) < 0 &&
            errno != EACCES && errno != EPERM)
                return system_failure(operation, errno);  /* EROFS: a read-only filesystem, said so */
        if ((status->st_mode & 0222) == 0 ||
            faccessat(target->directory_fd, target->name, W_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) < 0)
                return fail(operation, DSH_ERROR_SYSTEM, EACCES,
                            "%s is not writable (mode %04o)", NAMED(operation, target->path),
                            (unsigned) (status->st_mode & 07777));
        return 0;
}

/* What one read asks: the whole file (bounded by the guard's limit), or a range of it. */
struct read_request {
        bool whole;
        off_t offset;
        size_t length;          /* the most to read; for a whole file the limit itself */
};

/* Opens the regular file the walk found (FS_NOT_FOUND when it found none), checking that what is opened is
 * what was found.  Returns the fd, or a negative errno with the operation's error set. */
static int open_found_file(struct operation *operation, const dsh_walk_target *target, struct stat *status)
{
        dsh_autoclose int fd = -1;
        int outcome;

        if (!target->exists)
                return fail(operation, DSH_ERROR_FS_NOT_FOUND, ENOENT, "%s does not exist",
                            NAMED(operation, target->path));
        outcome = check_regular_file(operation, target);
        if (outcome != 0)
                return outcome;
        fd = openat(target->directory_fd, target->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return fail(operation, DSH_ERROR_SYSTEM, errno, "%s: %s", NAMED(operation, target->path),
                            strerror(errno));
        if (fstat(fd, status) < 0)
                return system_failure(operation, errno);
        if (status->st_dev != target->status.st_dev || status->st_ino != target->status.st_ino)
                return fail(operation, DSH_ERROR_SYSTEM, EAGAIN, "%s was replaced while it was opened; try again",
                            NAMED(operation, target->path));
        /* A hard link to a credential is a name the plan does not cover: refused by the inode (masks.h). */
        if (dsh_mask_plan_holds_inode(&operation->guard->prepared.masks, status))
                return refuse(operation, DSH_GUARD_MASKED_PATH, target->path);
        return dsh_take_fd(&fd);
}

static int too_large(struct operation *operation, const dsh_walk_target *target, unsigned long long size)
{
        return fail(operation, DSH_ERROR_FS_TOO_LARGE, EFBIG,
                    "%s is %s%llu bytes, over the %zu bytes one read or edit may load (fileReadLimitBytes): "
                    "read a range of it (an offset and a length)",
                    NAMED(operation, target->path), size > operation->guard->read_limit ? "" : "over ", size,
                    operation->guard->read_limit);
}

/*
 * Reads what `request` asks of the file the walk found.  The buffer never
 * grows past the request's length (plus one byte, for a whole file, to
 * see that it is larger than it claimed): a file's claimed size is only a
 * hint, and a sparse or growing file must not make a long-lived service
 * allocate without bound.
 */
static int read_existing_file(struct operation *operation, const dsh_walk_target *target,
                              const struct read_request *request, char **content_out, size_t *length_out)
{
        size_t capacity, wanted = request->length + (request->whole ? 1 : 0), length = 0;
        struct stat status;
        char *content;
        dsh_autoclose int fd = open_found_file(operation, target, &status);

        if (fd < 0)
                return fd;
        if (request->whole && status.st_size > 0 && (unsigned long long) status.st_size > request->length) {
                return too_large(operation, target, (unsigned long long) status.st_size);
        }
        capacity = status.st_size > 0 && (size_t) status.st_size < wanted ? (size_t) status.st_size + 1 : 4096;
        if (capacity > wanted + 1)
                capacity = wanted + 1;
        content = malloc(capacity);
        for (;;) {
                ssize_t got;

                if (!content) {
                                return system_failure(operation, ENOMEM);
                }
                if (length == wanted)
                        break;
                if (length + 1 >= capacity) {
                        size_t larger_capacity = capacity * 2 > wanted + 1 ? wanted + 1 : capacity * 2;
                        char *larger = realloc(content, larger_capacity);

                        if (!larger) {
                                free(content);
                                                return system_failure(operation, ENOMEM);
                        }
                        content = larger;
                        capacity = larger_capacity;
                }
                got = pread(fd, content + length, capacity - length - 1, request->offset + (off_t) length);
                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0) {
                        int saved = errno;

                        free(content);
                                return system_failure(operation, saved);
                }
                if (got == 0)
                        break;
                length += (size_t) got;
        }
        if (request->whole && length > request->length) {
                free(content);
                return too_large(operation, target, (unsigned long long) length);
        }
        content[length] = '\0';
        *content_out = content;
        *length_out = length;
        return 0;
}

/*
 * `path` (canonical, as the walk spelled it) as the command names it, a new
 * string: beneath the scratch's temp area it is /tmp/..., so the result
 * names the file the caller asked for and a command can use — bwrap hides
 * the scratch's host path from it.
 */
static char *command_spelling(const dsh_file_guard *guard, const char *path)
{
        const char *rest = guard->temp_is_scratch && guard->temp_path ? dsh_path_relative_to(path, guard->temp_path)
                                                                       : NULL;
        char *spelled = NULL;

        if (!rest)
                return strdup(path);
        if (asprintf(&spelled, "%s%s%s", GUARD_TEMP_AREA, rest[0] ? "/" : "", rest) < 0)
                return NULL;
        return spelled;
}

static int fill_result(const dsh_file_guard *guard, dsh_file_result *result, dsh_file_operation kind,
                       const char *path)
{
        if (!result)
                return 0;
        *result = (dsh_file_result) DSH_FILE_RESULT_INIT;
        result->operation = kind;
        result->path = command_spelling(guard, path);
        return result->path ? 0 : -ENOMEM;
}

/* -------------------------------------------------------------- write -- */

int dsh_file_guard_write(dsh_file_guard *guard, const char *path, const void *content, size_t length, unsigned flags,
                         dsh_file_result *result, dsh_error *error)
{
        struct operation operation = start(guard, "write", path, true, error);
        dsh_walk_target target;
        bool create_only = flags & DSH_FILE_WRITE_CREATE_ONLY;
        int outcome = resolve(&operation, path, DSH_WALK_FOLLOW_LAST | DSH_WALK_CREATE_PARENTS, &target);

        if (outcome == 0)
                outcome = decide(&operation, target.root, target.path, false);
        if (outcome == 0 && target.exists && create_only)
                outcome = fail(&operation, DSH_ERROR_FS_ALREADY_EXISTS, EEXIST,
                               "%s already exists", NAMED(&operation, target.path));
        if (outcome == 0 && target.exists)
                outcome = check_regular_file(&operation, &target);
        if (outcome == 0) {
                dsh_file_replacement replacement = {
                        .directory_fd = target.directory_fd, .name = target.name,
                        .existing = target.exists ? &target.status : NULL, .no_replace = create_only,
                };

                outcome = replace_atomically(&operation, &replacement, target.path, length ? content : "", length);
        }
        if (outcome == 0 && fill_result(guard, result, DSH_FILE_WRITE, target.path) < 0)
                outcome = system_failure(&operation, ENOMEM);
        if (outcome == 0 && result) {
                result->created = !target.exists;
                result->bytes = length;
        }
        dsh_walk_target_clear(&target);
        return outcome;
}

/* --------------------------------------------------------------- edit -- */

/* Occurrences of `needle` in `haystack`, left to right, none overlapping. */
static size_t count_occurrences(const char *haystack, size_t length, const char *needle, size_t needle_length)
{
        const char *found = haystack;
        size_t count = 0;

        while ((found = memmem(found, length - (size_t) (found - haystack), needle, needle_length))) {
                count++;
                found += needle_length;
        }
        return count;
}

/* `content` with each occurrence of `old_text` replaced by `new_text` (a new buffer). */
static char *replaced(const char *content, size_t length, const char *old_text, const char *new_text, size_t count,
                      size_t *new_length)
{
        size_t old_length = strlen(old_text), replacement_length = strlen(new_text);
        char *result, *out;
        const char *cursor = content, *found;

        *new_length = length - count * old_length + count * replacement_length;
        result = malloc(*new_length + 1);
        if (!result)
                return NULL;
        out = result;
        while ((found = memmem(cursor, length - (size_t) (cursor - content), old_text, old_length))) {
                memcpy(out, cursor, (size_t) (found - cursor));
                out += found - cursor;
                memcpy(out, new_text, replacement_length);
                out += replacement_length;
                cursor = found + old_length;
        }
        memcpy(out, cursor, length - (size_t) (cursor - content));
        result[*new_length] = '\0';
        return result;
}

int dsh_file_guard_edit(dsh_file_guard *guard, const char *path, const char *old_text, const char *new_text,
                        unsigned flags, dsh_file_result *result, dsh_error *error)
{
        struct operation operation = start(guard, "edit", path, true, error);
        dsh_walk_target target = DSH_WALK_TARGET_INIT;
        dsh_autofree char *content = NULL;
        dsh_autofree char *edited = NULL;
        size_t length = 0, edited_length = 0, count = 0;
        int outcome = 0;

        if (!old_text || !old_text[0])
                outcome = fail(&operation, DSH_ERROR_INVALID_INPUT, EINVAL, "the text to replace is empty");
        else if (!new_text)
                outcome = fail(&operation, DSH_ERROR_INVALID_INPUT, EINVAL, "the replacement text is missing");
        if (outcome == 0)
                outcome = resolve(&operation, path, DSH_WALK_FOLLOW_LAST, &target);
        if (outcome == 0)
                outcome = decide(&operation, target.root, target.path, false);
        if (outcome == 0) {
                struct read_request whole = { true, 0, guard->read_limit };

                outcome = read_existing_file(&operation, &target, &whole, &content, &length);
        }
        if (outcome == 0) {
                count = count_occurrences(content, length, old_text, strlen(old_text));
                if (count == 0)
                        outcome = fail(&operation, DSH_ERROR_FS_TEXT_NOT_FOUND, ENOENT,
                                       "the text to replace does not occur in \"%s\"", target.path);
                else if (count > 1 && !(flags & DSH_FILE_EDIT_ALL))
                        outcome = fail(&operation, DSH_ERROR_FS_TEXT_NOT_UNIQUE, EINVAL,
                                       "the text to replace occurs %zu times in \"%s\"; give more context to make it "
                                       "unique, or replace every occurrence",
                                       count, target.path);
        }
        if (outcome == 0 && !(edited = replaced(content, length, old_text, new_text, count, &edited_length)))
                outcome = system_failure(&operation, ENOMEM);
        if (outcome == 0) {
                dsh_file_replacement replacement = {
                        .directory_fd = target.directory_fd, .name = target.name, .existing = &target.status,
                        .must_still_be = &target.status,
                };

                outcome = replace_atomically(&operation, &replacement, target.path, edited, edited_length);
        }
        if (outcome == 0 && fill_result(guard, result, DSH_FILE_EDIT, target.path) < 0)
                outcome = system_failure(&operation, ENOMEM);
        if (outcome == 0 && result) {
                result->bytes = edited_length;
                result->replacements = count;
        }
        dsh_walk_target_clear(&target);
        return outcome;
}

/* -------------------------------------------------------------- mkdir -- */

int dsh_file_guard_mkdir(dsh_file_guard *guard, const char *path, unsigned flags, dsh_file_result *result,
                         dsh_error *error)
{
        struct operation operation = start(guard, "create directory", path, true, error);
        bool parents = flags & DSH_FILE_MKDIR_PARENTS;
        dsh_walk_target target;
        bool created = false;
        int outcome = resolve(&operation, path, parents ? DSH_WALK_CREATE_PARENTS : 0, &target);

        if (outcome == 0)
                outcome = decide(&operation, target.root, target.path, false);
        if (outcome == 0 && !(target.exists && parents && S_ISDIR(target.status.st_mode))) {
                created = mkdirat(target.directory_fd, target.name, 0777) == 0;
                if (!created && errno == EEXIST) {
                        struct stat status;

                        if (!parents || fstatat(target.directory_fd, target.name, &status, AT_SYMLINK_NOFOLLOW) < 0 ||
                            !S_ISDIR(status.st_mode))
                                outcome = fail(&operation, DSH_ERROR_FS_ALREADY_EXISTS, EEXIST, "%s already exists",
                                               NAMED(&operation, target.path));
                } else if (!created) {
                        outcome = system_failure(&operation, errno);
                }
        }
        if (outcome == 0 && fill_result(guard, result, DSH_FILE_MKDIR, target.path) < 0)
                outcome = system_failure(&operation, ENOMEM);
        if (outcome == 0 && result)
                result->created = created;
        dsh_walk_target_clear(&target);
        return outcome;
}

/* ------------------------------------------------------------- remove -- */

static int removal_failure(struct operation *operation, const char *path, int result)
{
        switch (-result) {
        case ENOTEMPTY:
        case EEXIST:
                return fail(operation, DSH_ERROR_FS_NOT_EMPTY, ENOTEMPTY, "%s is a directory that is not empty",
                            NAMED(operation, path));
        case EXDEV:
                return fail(operation, DSH_ERROR_SYSTEM, EXDEV,
                            "%s holds a mount point, which a recursive remove does not enter", NAMED(operation, path));
        case EAGAIN:
                return fail(operation, DSH_ERROR_SYSTEM, EAGAIN,
                            "something beneath \"%s\" was replaced while it was removed; the rest was left", path);
        case ELOOP:
                return fail(operation, DSH_ERROR_SYSTEM, ELOOP, "%s is deeper than %d levels", NAMED(operation, path),
                            DSH_FILE_REMOVE_MAX_DEPTH);
        case EBUSY:
                return fail(operation, DSH_ERROR_SYSTEM, EBUSY, "%s is a mount point", NAMED(operation, path));
        default:
                return fail(operation, DSH_ERROR_SYSTEM, -result, "%s", strerror(-result));
        }
}

int dsh_file_guard_remove(dsh_file_guard *guard, const char *path, unsigned flags, dsh_file_result *result,
                          dsh_error *error)
{
        struct operation operation = start(guard, "remove", path, true, error);
        size_t removed_count = 0;
        dsh_walk_target target;
        int outcome = resolve(&operation, path, 0, &target);

        if (outcome == 0)
                outcome = decide_entry(&operation, &target);
        if (outcome == 0 && !target.exists)
                outcome = fail(&operation, DSH_ERROR_FS_NOT_FOUND, ENOENT,
                               "%s does not exist", NAMED(&operation, target.path));
        if (outcome == 0) {
                int flag = S_ISDIR(target.status.st_mode) ? AT_REMOVEDIR : 0;
                int removed = 0;

                if (flag && (flags & DSH_FILE_REMOVE_RECURSIVE))
                        removed = dsh_file_remove_tree(target.directory_fd, target.name, &target.status,
                                                       &removed_count);
                else if (unlinkat(target.directory_fd, target.name, flag) < 0)
                        removed = -errno;
                else
                        removed_count = 1;
                if (removed < 0)
                        outcome = removal_failure(&operation, target.path, removed);
        }
        if (outcome == 0 && fill_result(guard, result, DSH_FILE_REMOVE, target.path) < 0)
                outcome = system_failure(&operation, ENOMEM);
        if (outcome == 0 && result)
                result->removed = removed_count;
        dsh_walk_target_clear(&target);
        return outcome;
}

/* --------------------------------------------------------------- move -- */

static int move_failure(struct operation *operation, const dsh_walk_target *source,
                        const dsh_walk_target *destination, int errno_value)
{
        switch (errno_value) {
        case EEXIST:
                return fail(operation, DSH_ERROR_FS_ALREADY_EXISTS, EEXIST,
                            "%s already exists", NAMED(operation, destination->path));
        case ENOTEMPTY:
                return fail(operation, DSH_ERROR_FS_NOT_EMPTY, ENOTEMPTY, "%s is a directory that is not empty",
                            NAMED(operation, destination->path));
        case EISDIR:
                return fail(operation, DSH_ERROR_FS_IS_A_DIRECTORY, EISDIR,
                            "\"%s\" is a directory, and \"%s\" is not", destination->path, source->path);
        case ENOTDIR:
                return fail(operation, DSH_ERROR_FS_NOT_A_DIRECTORY, ENOTDIR,
                            "\"%s\" is a directory, and \"%s\" is not", source->path, destination->path);
        case EXDEV:
                return fail(operation, DSH_ERROR_SYSTEM, EXDEV,
                            "\"%s\" and \"%s\" are on different filesystems (or mounts); a move only renames",
                            source->path, destination->path);
        case EINVAL:
                return fail(operation, DSH_ERROR_INVALID_INPUT, EINVAL, "%s cannot be moved beneath itself",
                            NAMED(operation, source->path));
        default:
                return fail(operation, DSH_ERROR_SYSTEM, errno_value, "%s", strerror(errno_value));
        }
}

int dsh_file_guard_move(dsh_file_guard *guard, const char *source, const char *destination, unsigned flags,
                        dsh_file_result *result, dsh_error *error)
{
        struct operation from = start(guard, "move", source, true, error);
        struct operation to = start(guard, "move", destination, true, error);
        dsh_walk_target source_target, destination_target = DSH_WALK_TARGET_INIT;
        int outcome = resolve(&from, source, 0, &source_target);

        if (outcome == 0)
                outcome = resolve(&to, destination, 0, &destination_target);
        if (outcome == 0)
                outcome = decide_entry(&from, &source_target);
        if (outcome == 0)
                outcome = decide_entry(&to, &destination_target);
        if (outcome == 0 && !source_target.exists)
                outcome = fail(&from, DSH_ERROR_FS_NOT_FOUND, ENOENT,
                               "%s does not exist", NAMED(&from, source_target.path));
        if (outcome == 0) {
                int moved = flags & DSH_FILE_MOVE_NO_REPLACE
                                    ? renameat2(source_target.directory_fd, source_target.name,
                                                destination_target.directory_fd, destination_target.name,
                                                RENAME_NOREPLACE)
                                    : renameat(source_target.directory_fd, source_target.name,
                                               destination_target.directory_fd, destination_target.name);

                if (moved < 0)
                        outcome = move_failure(&from, &source_target, &destination_target, errno);
        }
        if (outcome == 0 && fill_result(guard, result, DSH_FILE_MOVE, destination_target.path) < 0)
                outcome = system_failure(&from, ENOMEM);
        if (outcome == 0 && result && !(result->source = command_spelling(guard, source_target.path))) {
                dsh_file_result_clear(result);
                outcome = system_failure(&from, ENOMEM);
        }
        dsh_walk_target_clear(&source_target);
        dsh_walk_target_clear(&destination_target);
        return outcome;
}

/* --------------------------------------------------------------- read -- */

static int guarded_read(dsh_file_guard *guard, const char *path, const struct read_request *request,
                        dsh_file_result *result, dsh_error *error)
{
        struct operation operation = start(guard, "read", path, false, error);
        dsh_walk_target target;
        char *content = NULL;
        size_t length = 0;
        int outcome = resolve(&operation, path, DSH_WALK_FOLLOW_LAST, &target);

        if (outcome == 0)
                outcome = decide(&operation, target.root, target.path, false);
        if (outcome == 0)
                outcome = read_existing_file(&operation, &target, request, &content, &length);
        if (outcome == 0 && result && fill_result(guard, result, DSH_FILE_READ, target.path) < 0)
                outcome = system_failure(&operation, ENOMEM);
        if (outcome == 0 && result) {
                result->content = content;
                result->bytes = length;
                content = NULL;
        }
        free(content);
        dsh_walk_target_clear(&target);
        return outcome;
}

int dsh_file_guard_read(dsh_file_guard *guard, const char *path, dsh_file_result *result, dsh_error *error)
{
        struct read_request request = { true, 0, guard->read_limit };

        return guarded_read(guard, path, &request, result, error);
}

int dsh_file_guard_read_range(dsh_file_guard *guard, const char *path, unsigned long long offset, size_t length,
                              dsh_file_result *result, dsh_error *error)
{
        struct operation operation = start(guard, "read", path, false, error);
        struct read_request request = { false, (off_t) offset, length ? length : guard->read_limit };

        if (offset > (unsigned long long) INT64_MAX)
                return fail(&operation, DSH_ERROR_INVALID_INPUT, EINVAL, "offset %llu is too large", offset);
        if (length > guard->read_limit)
                return fail(&operation, DSH_ERROR_INVALID_INPUT, EINVAL,
                            "a range's length must be at most the read limit, %zu bytes (fileReadLimitBytes)",
                            guard->read_limit);
        return guarded_read(guard, path, &request, result, error);
}

/* -------------------------------------------------------------- judge -- */

/* Whether an operation's failure is one the policy allows (the operation itself would fail): no refusal. */
static bool allowed_failure(const dsh_error *error)
{
        return error->code == DSH_ERROR_FS_NOT_FOUND || error->code == DSH_ERROR_FS_NOT_A_DIRECTORY ||
               error->code == DSH_ERROR_FS_IS_A_DIRECTORY;
}

int dsh_file_guard_judge(dsh_file_guard *guard, dsh_guard_question question, const char *path,
                         dsh_guard_rule *rule_out, char **canonical_out, dsh_error *error)
{
        bool reads = question == DSH_GUARD_ASK_READ;
        dsh_error failure = DSH_ERROR_INIT;
        struct operation operation = start(guard, reads ? "read" : "write", path, !reads, &failure);
        unsigned flags = DSH_WALK_FOLLOW_LAST | (question == DSH_GUARD_ASK_WRITE ? DSH_WALK_CREATE_PARENTS : 0);
        dsh_guard_refusal refusal;
        dsh_walk_target target;
        int outcome;

        *rule_out = DSH_GUARD_ALLOWED;
        *canonical_out = NULL;
        operation.judging = true;
        outcome = resolve(&operation, path, flags, &target);
        if (outcome == 0)
                outcome = decide(&operation, target.root, target.path, false);
        /* A read reaches the inode: a hard link to a credential is refused by it, as open_found_file() does. */
        if (outcome == 0 && reads && target.exists && dsh_mask_plan_holds_inode(&guard->prepared.masks, &target.status))
                outcome = refuse(&operation, DSH_GUARD_MASKED_PATH, target.path);
        dsh_walk_target_clear(&target);
        if (dsh_file_guard_take_refusal(guard, &refusal)) {
                dsh_error_clear(&failure);
                *rule_out = refusal.rule;
                *canonical_out = refusal.path;
                return refusal.path ? 0 : dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        if (outcome == 0 || outcome == -ECANCELED || allowed_failure(&failure)) {
                dsh_error_clear(&failure);
                return 0;
        }
        if (error) {
                dsh_error_clear(error);
                *error = failure;
        } else {
                dsh_error_clear(&failure);
        }
        return outcome;
}
