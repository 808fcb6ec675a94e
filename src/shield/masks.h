/* SPDX-License-Identifier: MIT */
/*
 * Masks: the credentials on disk a confined command must not read
 * (docs/secrets.md).  The plan of one call expands the configured entries
 * (protections.h `masks`, or the defaults) and the call's own
 * (dsh_policy.masked_paths) into canonical paths, once, before the spawn;
 * every consumer — both backends, the launchers' arguments, the file guard,
 * the facts — reads that one plan, so they can never disagree about what is
 * masked.
 *
 * What the command could do about a mask, and what answers it:
 *  - read it by another name: every entry is canonicalized (a symlinked
 *    ~/.aws masks its target), and both homes ($HOME and the passwd
 *    entry's) are expanded;
 *  - wait for it to appear (a credential the user creates during the
 *    call), or make a wildcard match a new name: `absent` and
 *    `closed_directories` — the backends let the command read only the
 *    entries that existed at the start in every directory on the way
 *    (core/read-mask.h), so nothing named later is readable;
 *  - write through it, or rename or link it away: bwrap binds each existing
 *    mask read-only (EROFS), a mount point cannot be renamed, unlinked or
 *    linked (EBUSY, EXDEV), and inside a writable root every directory
 *    between the root and the mask is pinned, so no ancestor can be moved
 *    with the mask riding on it and found unmasked by a later call under
 *    another name;
 *  - sit inside a writable root, where Landlock's write grant includes
 *    read: such a mask is not held there, and the plan says so
 *    (`inside_writable_root`); the backend reports "partial" or refuses.
 */
#ifndef DSH_SANDBOX_MASKS_H
#define DSH_SANDBOX_MASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "dsh-sandbox/sandbox.h"
#include "base/util.h"
#include "shield/protections.h"

typedef enum dsh_mask_kind {
        DSH_MASK_FILE = 0,      /* exists and is not a directory: presented empty (bwrap) */
        DSH_MASK_DIRECTORY,     /* exists and is a directory: presented empty (bwrap) */
        DSH_MASK_ABSENT,        /* does not exist at the start: must stay unreadable if it appears */
} dsh_mask_kind;

typedef struct dsh_mask {
        char *path;                     /* canonical (absent: the nearest existing ancestor canonical + the rest) */
        dsh_mask_kind kind;
        /*
         * The writable root of the call it lies at or beneath — or that lies
         * beneath it (a root inside a masked directory) — or NULL.  Borrowed
         * from the policy, or the static "/tmp" (workspace-write's temp area).
         */
        const char *inside_writable_root;
} dsh_mask;

typedef struct dsh_mask_plan {
        dsh_mask *masks;
        size_t count;
        /*
         * Directories a wildcard entry ranges over (canonical, existing):
         * the names it matched are masks above; a name created there later
         * must stay unreadable too, so no backend may grant such a directory
         * as a whole.
         */
        char **closed_directories;
        /* Each wildcard entry as "DIR/PATTERN", DIR canonical (what covers() matches a new name against). */
        char **closed_patterns;
        /*
         * Why a mask is not held for later calls, one sentence each: the
         * entry is reached through a symlink inside a writable root, which
         * the command could repoint, so the next call, planning the entry by
         * name again, would mask whatever the link then names.  Every backend
         * reports each as "partial" (or refuses under requireMasks).
         */
        char **unheld;
} dsh_mask_plan;

#define DSH_MASK_PLAN_INIT { NULL, 0, NULL, NULL, NULL }

/*
 * The plan of one call: the entries of `protections` (NULL `masks`: the
 * defaults) and of `policy->masked_paths`, expanded under each of `homes`
 * (dsh_shield_user_homes()) for the relative and "~/" ones, wildcards
 * matched against the directory as it is now, every path canonicalized,
 * duplicates and masks beneath another mask dropped.  Under
 * danger-full-access the plan is empty.  Returns 0, or a negative errno
 * with `error` set (-ENOMEM; -EINVAL for an entry dsh_mask_entry_check()
 * refuses).
 */
DSH_INTERNAL int dsh_mask_plan_build(const dsh_protections *protections, const dsh_policy *policy,
                                     char *const *homes, dsh_mask_plan *plan, dsh_error *error);

DSH_INTERNAL void dsh_mask_plan_clear(dsh_mask_plan *plan);

/*
 * True when the canonical `path` is a mask, lies beneath one, or is a name
 * in a closed directory that its wildcard entry matches (what the file guard
 * refuses, whether the name exists or not).
 */
DSH_INTERNAL bool dsh_mask_plan_covers(const dsh_mask_plan *plan, const char *path);

/*
 * True when the file `status` describes (st_nlink > 1: it has other names)
 * is the inode of a masked file, or of a file beneath a masked directory,
 * as they are now: a hard link made before the call, under a name the plan
 * does not cover (what the file guard refuses to read).  A masked directory
 * too large to search counts as holding it (fail closed).
 */
DSH_INTERNAL bool dsh_mask_plan_holds_inode(const dsh_mask_plan *plan, const struct stat *status);

/* The masks' paths, then each closed directory as "DIR/PATTERN" (the facts' `masked`); NULL on ENOMEM. */
DSH_INTERNAL char **dsh_mask_plan_paths(const dsh_mask_plan *plan);

#endif
