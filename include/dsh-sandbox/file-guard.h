/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: guarded file operations — the harness's own file tools
 * (write, edit, create a directory, remove, move, read) under the same
 * resolved policy that confines its shell commands (docs/file-guard.md).
 *
 * A harness changes files in two ways: through commands, which the kernel
 * confines, and through its own file tools, which run in the harness process
 * and which no runner confines.  The guard makes the second way answer as the
 * first: what a confined `sh -c` may change, the guard changes; what it may
 * not, the guard refuses with FS_SANDBOX_DENIED and the exact text
 *
 *     cannot write "<path>": file access denied under <mode> mode
 *
 * (the path as the caller gave it, C0 control characters written \xNN).
 *
 *   - read-only: every change is denied (reads are allowed);
 *   - danger-full-access: everything is allowed;
 *   - workspace-write: a change is allowed beneath the workspace root, each
 *     additional writable root (configured, requested and registered: all
 *     are in the resolved policy) and the temp area — the host's /tmp, the
 *     one Landlock grants — minus the shield: the sandbox's own files, the
 *     protected subpaths (".git/hooks", ".git/config" by default, mapped to
 *     the real git directories; the agents' launch config such as
 *     ".mcp.json" and ".claude"; a home's startup files where a root holds
 *     the home: dsh_provider_default_protected_subpaths()) and the
 *     directories that hold them (which can be written in, but not removed
 *     or renamed), as bwrap holds them back.  A protected subpath that does
 *     not exist is denied too (bwrap can only report it or move it aside
 *     afterwards); a workspace-write policy that no runner would
 *     accept (a writable root holding a runner, or inside the sandbox's own
 *     files) is refused when the guard is made, with the runner's error.
 *
 * Every decision is taken by resolution, never by comparing path strings:
 * the path is walked one component at a time with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), each symlink read and its
 * target walked with the same care, and a writable root is recognised by the
 * identity of its directory fd, opened when the guard was made.  The change
 * is then made relative to the directory fd the walk ended in, so what was
 * decided is what is changed.  Symlinks are followed as the kernel follows
 * them for the same operation (write, edit and read follow a link as the last
 * component; mkdir, remove and move act on the link itself): a link whose
 * target lies outside the roots, dangling or not, is denied.  A symlink of
 * /proc (/proc/self/root, /proc/self/cwd, ...) is never followed.
 *
 * Writes are atomic: the new content goes to a file in the target's
 * directory (O_TMPFILE where the filesystem has it, else a hidden temporary
 * name), is fsync()ed, and is renamed over the target.  A failure halfway
 * (a full disk) leaves the old content whole and no temporary file behind.
 * The directory entry is replaced, never the file opened for writing in
 * place: writing through a hard link of a file outside the roots changes the
 * link inside and leaves the outside file as it was.
 *
 * Paths: absolute, or relative to the policy's workspace root.  Trailing
 * slashes are ignored; a path whose last component is "." or ".." names no
 * entry and is refused.
 *
 * Errors (every function returns 0 or a negative errno with `error` set):
 *   FS_SANDBOX_DENIED      the policy does not allow the change (the text above);
 *   FS_NOT_FOUND           the entry, or a directory on the way, does not exist;
 *   FS_NOT_A_DIRECTORY     a component on the way is not a directory;
 *   FS_IS_A_DIRECTORY      write, edit or read of a directory;
 *   FS_ALREADY_EXISTS      create-only write, mkdir, or no-replace move onto an existing entry;
 *   FS_NOT_EMPTY           a directory removed, or replaced by a move, still holds entries;
 *   FS_TEXT_NOT_FOUND      edit: the text does not occur;
 *   FS_TEXT_NOT_UNIQUE     edit: the text occurs more than once and one replacement was asked;
 *   FS_TOO_LARGE           read: the file is larger than the read limit (read a range);
 *   INVALID_INPUT          an empty path or edit text, a path ending in "." or "..", a
 *                          non-regular file to write, edit or read, a path through a link of
 *                          /proc where nothing is denied (a read; danger-full-access) — a change
 *                          under the other modes is denied (FS_SANDBOX_DENIED);
 *   SYSTEM                 the operating system's refusal (ENOSPC, EROFS, EACCES for a file
 *                          without write permission, EXDEV for a move across filesystems, ...).
 * Messages read `cannot <write|edit|create directory|remove|move|read> "<path>": <why>`.
 *
 * Results: every operation takes a `result` (may be NULL) that must be
 * DSH_FILE_RESULT_INIT (or cleared); it is filled on success only.
 *
 * A guard holds one call's policy: its writable roots open as fds and the
 * shield planned when it is made.  Make one per tool call (a protected
 * subpath that appears later is known to the next guard).  Operations change
 * nothing of the guard but the refusal it keeps for
 * dsh_file_guard_take_denial() (dsh-sandbox/denial.h), under a lock: several
 * threads may use one guard at once (the last refusal is the one kept).
 */
#ifndef DSH_SANDBOX_FILE_GUARD_H
#define DSH_SANDBOX_FILE_GUARD_H

#include <stdbool.h>
#include <stddef.h>

#include "dsh-sandbox/runtime.h"
#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dsh_file_guard dsh_file_guard;

typedef enum dsh_file_operation {
        DSH_FILE_WRITE = 0,
        DSH_FILE_EDIT,
        DSH_FILE_MKDIR,
        DSH_FILE_REMOVE,
        DSH_FILE_MOVE,
        DSH_FILE_READ,
} dsh_file_operation;

/* "write", "edit", "mkdir", "remove", "move", "read"; a static string. */
DSH_PUBLIC const char *dsh_file_operation_name(dsh_file_operation operation);

/* What an operation did.  Strings are owned by the result (dsh_file_result_clear). */
typedef struct dsh_file_result {
        dsh_file_operation operation;
        char *path;             /* the canonical path changed or read (move: the destination) */
        char *source;           /* move: the canonical path moved from; otherwise NULL */
        bool created;           /* write, mkdir: the entry did not exist before */
        size_t bytes;           /* write: bytes written; edit: the file's new size; read: bytes read */
        size_t replacements;    /* edit: occurrences replaced */
        size_t removed;         /* remove: entries removed (the entry itself, and with recursion all beneath) */
        char *content;          /* read: the `bytes` bytes read, NUL-terminated after them (they may hold NULs) */
} dsh_file_result;

#define DSH_FILE_RESULT_INIT { DSH_FILE_WRITE, NULL, NULL, false, 0, 0, 0, NULL }

/* Frees the strings and resets the result.  NULL is allowed. */
DSH_PUBLIC void dsh_file_result_clear(dsh_file_result *result);

/*
 * Makes a guard for `policy` (as dsh_runtime_resolve() returned it) with the
 * protections of `runtime`'s provider: its sandbox's own files and protected
 * subpaths.  workspace-write: the policy is checked as a runner checks it
 * (dsh_policy_prepare: SANDBOX_INVALID_ROOT, SANDBOX_PREPARATION_FAILED), the
 * writable roots and /tmp are opened, and the shield is planned (a root
 * holding a runner or inside the sandbox's own files: SANDBOX_PREPARATION_FAILED,
 * as every backend refuses it; with requireProtectedSubpaths, a protected
 * subpath reached through a symlink the command could repoint is refused as
 * bwrap refuses it).  Returns 0 with *guard_out owned by the caller
 * (dsh_file_guard_free), or a negative errno with `error` set.
 */
DSH_PUBLIC int dsh_file_guard_new(dsh_runtime *runtime, const dsh_policy *policy, dsh_file_guard **guard_out,
                                  dsh_error *error);

DSH_PUBLIC void dsh_file_guard_free(dsh_file_guard *guard);

/* The guard's policy, checked and canonical under workspace-write; owned by the guard. */
DSH_PUBLIC const dsh_policy *dsh_file_guard_policy(const dsh_file_guard *guard);

/* -------------------------------------------------------------- write -- */

enum {
        /* Never replace: an existing entry (FS_ALREADY_EXISTS) is left as it is.  The check and the creation
         * are one operation (linkat or renameat2 RENAME_NOREPLACE), so a racing creator cannot be overwritten. */
        DSH_FILE_WRITE_CREATE_ONLY = 1 << 0,
};

/*
 * Writes `length` bytes of `content` to `path`, atomically (see above),
 * making missing parent directories beneath the writable root as agents'
 * write tools do (each one only where the file itself is allowed).  An
 * existing file keeps its permission bits (and, when the caller may, its
 * owner); a new one gets 0666 less the umask.  A file with no write
 * permission for the caller (or none at all) is not replaced (SYSTEM,
 * EACCES), as a confined command could not write it either.  `result` may
 * be NULL.
 */
DSH_PUBLIC int dsh_file_guard_write(dsh_file_guard *guard, const char *path, const void *content, size_t length,
                                    unsigned flags, dsh_file_result *result, dsh_error *error);

/* --------------------------------------------------------------- edit -- */

enum {
        /* Replace every occurrence (at least one must exist) instead of the one that must be unique. */
        DSH_FILE_EDIT_ALL = 1 << 0,
};

/*
 * Replaces `old_text` (non-empty) by `new_text` in the regular file `path`:
 * the one occurrence it must have (FS_TEXT_NOT_FOUND for none,
 * FS_TEXT_NOT_UNIQUE naming the count for several), or with
 * DSH_FILE_EDIT_ALL every occurrence, left to right, none overlapping.  The
 * new content is written as dsh_file_guard_write() writes, atomically; a
 * file found replaced by someone else just before the rename is left as it
 * is (SYSTEM, EAGAIN).  `result` may be NULL.
 */
DSH_PUBLIC int dsh_file_guard_edit(dsh_file_guard *guard, const char *path, const char *old_text,
                                   const char *new_text, unsigned flags, dsh_file_result *result, dsh_error *error);

/* -------------------------------------------------------------- mkdir -- */

enum {
        /* Make missing parents too, and let an existing directory be (mkdir -p). */
        DSH_FILE_MKDIR_PARENTS = 1 << 0,
};

/* Creates directory `path` (0777 less the umask).  `result` may be NULL. */
DSH_PUBLIC int dsh_file_guard_mkdir(dsh_file_guard *guard, const char *path, unsigned flags, dsh_file_result *result,
                                    dsh_error *error);

/* ------------------------------------------------------------- remove -- */

enum {
        /* Remove a directory with everything beneath it (rm -r). */
        DSH_FILE_REMOVE_RECURSIVE = 1 << 0,
};

/*
 * Removes the entry `path`: a file, a symlink (the link itself, never its
 * target), an empty directory, or with DSH_FILE_REMOVE_RECURSIVE a
 * directory and everything beneath it.  The recursion goes through fds with
 * O_NOFOLLOW: a symlink inside is removed, never followed, whatever is
 * swapped meanwhile, and it does not descend into another mount (SYSTEM,
 * EXDEV, before that mount is touched).  A tree that holds a protected path
 * is denied before anything is removed.  `result` may be NULL.
 */
DSH_PUBLIC int dsh_file_guard_remove(dsh_file_guard *guard, const char *path, unsigned flags,
                                     dsh_file_result *result, dsh_error *error);

/* --------------------------------------------------------------- move -- */

enum {
        /* Never replace an existing destination (FS_ALREADY_EXISTS), atomically (renameat2 RENAME_NOREPLACE). */
        DSH_FILE_MOVE_NO_REPLACE = 1 << 0,
};

/*
 * Renames `source` to `destination` (rename(2): the destination names the
 * new entry itself, and an existing file or empty directory there is
 * replaced).  Both must lie beneath writable roots: a move out of the roots,
 * or into them from outside, is denied.  Within one filesystem only (SYSTEM,
 * EXDEV otherwise: nothing is copied).  `result` may be NULL.
 */
DSH_PUBLIC int dsh_file_guard_move(dsh_file_guard *guard, const char *source, const char *destination,
                                   unsigned flags, dsh_file_result *result, dsh_error *error);

/* --------------------------------------------------------------- read -- */

/*
 * Reads the regular file `path` whole into result->content (which must be
 * cleared), resolved as the other operations resolve it.  Reads are not
 * restricted by the mode.  A file larger than the read limit (the config's
 * fileReadLimitBytes, 16 MiB by default) is refused with FS_TOO_LARGE, and
 * no more than the limit is ever allocated: read it by ranges instead.
 */
DSH_PUBLIC int dsh_file_guard_read(dsh_file_guard *guard, const char *path, dsh_file_result *result,
                                   dsh_error *error);

/*
 * Reads at most `length` bytes of `path` from byte `offset` (fewer at the end
 * of the file; none past it).  `length` is at most the read limit
 * (INVALID_INPUT otherwise); 0 means the limit.
 */
DSH_PUBLIC int dsh_file_guard_read_range(dsh_file_guard *guard, const char *path, unsigned long long offset,
                                         size_t length, dsh_file_result *result, dsh_error *error);

#ifdef __cplusplus
}
#endif

#endif
