/* SPDX-License-Identifier: MIT */
/*
 * The call's masks under bwrap (shield/masks.h plans them; docs/secrets.md):
 * what backend-bwrap.c mounts over each, pins around it, hands on to
 * dsh-sandbox-exec's inner Landlock layer, and reports as not held; and the
 * hidden directories, the other empty mounts made last.  The argument is in
 * bwrap-masks.c, above the code.
 */
#ifndef DSH_SANDBOX_BWRAP_MASKS_H
#define DSH_SANDBOX_BWRAP_MASKS_H

#include <stdbool.h>

#include "dsh-sandbox/sandbox.h"
#include "base/util.h"
#include "provider/prepared-policy.h"
#include "shield/masks.h"
#include "shield/protections.h"

/* The file bwrap binds, read-only, over every masked file: beside the launchers, zero bytes, mode 0444. */
#define DSH_BWRAP_MASK_FILE_NAME "dsh-sandbox-mask"

typedef struct dsh_bwrap_masks {
        char *empty_file;       /* the mask file's path; NULL: no masked file to cover */
        char **files;           /* existing masked files: --ro-bind EMPTY PATH */
        char **directories;     /* existing masked directories: an empty read-only tmpfs */
        char **inner_masked;    /* absent masks for dsh-sandbox-exec's inner layer (--mask) */
        char **inner_closed;    /* closed directories for it (--mask-closed) */
        char **not_held;        /* one sentence for each mask bwrap cannot hold (partial reasons) */
        char **masked;          /* the facts' `masked`: the plan's paths, less those not held */
        const dsh_policy *policy;       /* the prepared policy's (borrowed): its roots are seen under /tmp */
} dsh_bwrap_masks;

#define DSH_BWRAP_MASKS_INIT { NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL }

/*
 * Plans one call's masks: the prepared policy's plan (`prepared`, borrowed
 * by `masks`: keep it alive), under workspace-write inside the directories
 * bound writable (the workspace, the extra roots and `extra_writable`, the
 * git directories a worktree needs).  Every directory between a writable
 * directory and an existing mask inside it is added to *pins (sorted parents
 * first).  Checks the mask file when a masked file is to be covered
 * (SANDBOX_UNAVAILABLE when it is missing or not an empty
 * read-only file); with `protections->require_masks`, a mask not held is
 * SANDBOX_PREPARATION_FAILED naming it.  Returns 0 or a negative errno with
 * `error` set; clear `masks` either way.
 */
DSH_INTERNAL int dsh_bwrap_masks_plan(dsh_bwrap_masks *masks, const dsh_protections *protections,
                                      const dsh_prepared_policy *prepared, char *const *extra_writable,
                                      char ***pins, dsh_error *error);

/*
 * The mounts made after every other (over the roots' binds, the pins, the
 * shield's read-only binds), in both modes, spawn and confine: an empty
 * read-only tmpfs over each of `hidden` (the protections' hidden
 * directories, those that exist), then the masks.  `start_directory` is the
 * directory the command starts in (NULL: the cwd): beneath /tmp, bwrap binds
 * it back over the call's own /tmp, so a mask beneath it is visible there.
 * Returns 0 or -ENOMEM.
 */
DSH_INTERNAL int dsh_bwrap_append_last_mounts(char ***argv, char *const *hidden, const dsh_bwrap_masks *masks,
                                              const char *start_directory);

/* dsh-sandbox-exec's `--mask PATH` and `--mask-closed DIR` words (before its "--").  Returns 0 or -ENOMEM. */
DSH_INTERNAL int dsh_bwrap_masks_append_exec_options(char ***argv, const dsh_bwrap_masks *masks,
                                                     const char *start_directory);

/* The partial reasons and the facts' `masked` into `out`.  Returns 0 or -ENOMEM. */
DSH_INTERNAL int dsh_bwrap_masks_report(dsh_confined_argv *out, const dsh_bwrap_masks *masks);

DSH_INTERNAL void dsh_bwrap_masks_clear(dsh_bwrap_masks *masks);

#endif
