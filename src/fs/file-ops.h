/* SPDX-License-Identifier: MIT */
/*
 * The file guard's mechanics, relative to a directory fd and with no policy
 * in them (file-guard.c decides what may be done; these only do it so that
 * nothing outside that directory, and nothing half-done, can result):
 *
 *  - an atomic replacement: the content goes to a new inode in the
 *    directory (O_TMPFILE, named through linkat; or a hidden temporary name
 *    made O_EXCL where the filesystem has no O_TMPFILE), is fsync()ed, and
 *    is renamed over the entry.  Nothing is visible under the entry's name
 *    until the content is complete and on disk; on any failure the new inode
 *    goes and the entry is as it was.  No existing file is ever opened for
 *    writing, so a hard link is replaced, never written through;
 *  - a recursive removal through directory fds opened O_NOFOLLOW: a symlink
 *    inside is unlinked, never followed, a directory swapped in since it was
 *    seen is not descended into, and no other mount is entered.
 */
#ifndef DSH_SANDBOX_FILE_OPS_H
#define DSH_SANDBOX_FILE_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "base/util.h"

typedef struct dsh_file_replacement {
        int directory_fd;                       /* the directory of the entry (O_PATH will do) */
        const char *name;                       /* the entry's name in it */
        const struct stat *existing;            /* the entry replaced, whose owner and permission bits the new
                                                 * file keeps (never set-user-ID, set-group-ID or sticky); or NULL */
        bool no_replace;                        /* only where nothing is: EEXIST otherwise, checked atomically */
        const struct stat *must_still_be;       /* the inode that must still be the entry just before the
                                                 * rename (an edit's file): EAGAIN otherwise; or NULL */
} dsh_file_replacement;

/*
 * Puts `length` bytes of `content` at the entry `replacement` describes,
 * atomically.  Returns 0, or a negative errno: -EEXIST (no_replace found an
 * entry), -EAGAIN (must_still_be was replaced), -EISDIR (a directory is
 * there), or the system's (-ENOSPC, -EROFS, ...).
 */
DSH_INTERNAL int dsh_file_replace(const dsh_file_replacement *replacement, const void *content, size_t length);

/* Deepest directory tree dsh_file_remove_tree() descends (each level holds one fd). */
#define DSH_FILE_REMOVE_MAX_DEPTH 256

/*
 * Removes directory `name` of `parent_fd`, whose lstat(2) was `expected`,
 * and everything beneath it, as described above; `*removed` counts the
 * entries removed, the directory itself included (also on failure: what was
 * removed stays removed).  Returns 0, or a negative errno: -EAGAIN
 * (something was replaced while it was removed), -EXDEV (a mount inside),
 * -ELOOP (deeper than DSH_FILE_REMOVE_MAX_DEPTH), -ENOTEMPTY (an entry was
 * added meanwhile), or the system's.
 */
DSH_INTERNAL int dsh_file_remove_tree(int parent_fd, const char *name, const struct stat *expected, size_t *removed);

#endif
