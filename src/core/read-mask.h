/* SPDX-License-Identifier: MIT */
/*
 * Read grants that leave masks out (shield/masks.h), for a Landlock ruleset
 * that handles reading.  libc only: the launchers (landlock-run,
 * dsh-sandbox-exec) build it too.
 *
 * Landlock can only grant, and a grant on a directory covers everything
 * beneath it, whenever it was made.  So instead of one read grant on "/",
 * every directory on the way to a mask is opened entry by entry: each entry
 * of it that is neither a mask nor itself on the way to one is granted as a
 * whole; the masks, and any name that appears in those directories after
 * the grants were made, are covered by no rule and cannot be read (EACCES).
 * A closed directory (a wildcard's) is on the way by definition: its entries
 * at the start are granted one by one, the matches left out.
 *
 * Each entry is opened O_PATH|O_NOFOLLOW beneath a directory fd opened with
 * no symlink followed, so what is granted is the inode seen then; a symlink
 * entry is granted nothing (reading through it is decided on its target's
 * own path).  The directories on the way get READ_DIR (beneath them: names
 * list, a masked directory's too, contents do not read).  The enumeration
 * is bounded (`rule_limit`): a directory too large to enumerate is
 * reported, never granted whole.  *failed_path points into a buffer of the
 * calling thread, good until its next call.
 */
#ifndef DSH_SANDBOX_READ_MASK_H
#define DSH_SANDBOX_READ_MASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/landlock.h"

#define DSH_READ_MASK_DEFAULT_RULE_LIMIT 4096

typedef struct dsh_read_mask {
        char *const *masked;            /* canonical paths not to grant (existing or not); NULL: none */
        char *const *closed;            /* canonical directories granted entry by entry; NULL: none */
        size_t rule_limit;              /* 0: DSH_READ_MASK_DEFAULT_RULE_LIMIT */
} dsh_read_mask;

/*
 * Adds `access` (READ_FILE | READ_DIR, and EXECUTE where the ruleset handles
 * it) beneath "/" to `ruleset`, except for the masks, as described above.
 * With no mask and no closed directory, one grant on "/".  Returns the
 * number of rules added, or a negative errno: -E2BIG when `rule_limit` would
 * be passed (*failed_path: the directory being enumerated), another from
 * open/readdir/landlock_add_rule (*failed_path: the entry).  On failure the
 * ruleset must not be enforced.
 */
/*
 * Whether `path` is absolute with no empty, `.` or `..` component and no
 * trailing slash ("/" is): the form a mask must have to be compared by name
 * (the launchers refuse any other, never taking it as given).
 */
bool dsh_read_mask_path_well_formed(const char *path);

int dsh_read_mask_grant(dsh_landlock_ruleset *ruleset, uint64_t access, const dsh_read_mask *mask,
                        const char **failed_path);

#endif
