/* SPDX-License-Identifier: MIT */
/*
 * The call's masks (shield/masks.h) as a Landlock ruleset holds them: the
 * read grant of "/" leaves them out (core/read-mask.h), in the in-process
 * spawn and as landlock-run's --mask/--mask-closed; what it cannot hold is
 * said (partial) or, under requireMasks, refused.
 */
#ifndef DSH_SANDBOX_LANDLOCK_MASKS_H
#define DSH_SANDBOX_LANDLOCK_MASKS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"
#include "core/landlock.h"
#include "provider/prepared-policy.h"

typedef struct dsh_landlock_masks {
        char **masked;          /* the masks' paths the read grant leaves out (held) */
        char **closed;          /* the closed directories it enumerates (held) */
        char **unheld;          /* why a mask is not held, one sentence each (the partial reasons) */
        char **held_facts;      /* the facts' `masked`: dsh_mask_plan_paths() minus the unheld */
        /* Existing masks inside a writable root: the supervisor refuses moving or linking them (not reading). */
        char **pinned;
} dsh_landlock_masks;

#define DSH_LANDLOCK_MASKS_INIT { NULL, NULL, NULL, NULL, NULL }

/*
 * Grants `access` beneath "/" to `ruleset` with the call's masks left out,
 * and fills `masks` (cleared by the caller either way): a mask inside a
 * writable root is not held (its write grant includes reading); a
 * directory too large to enumerate (-E2BIG) leaves the masks beneath it
 * unheld, and the grant is made again without them.  With `require_masks`
 * any unheld mask fails the call: SANDBOX_PREPARATION_FAILED with its
 * sentence.  For confine, `ruleset` is a throwaway one: the enumeration
 * landlock-run will make is known to fit, and `masks` holds its arguments.
 * Returns 0 or a negative errno with `error` set.
 */
DSH_INTERNAL int dsh_landlock_masks_grant_read(dsh_landlock_ruleset *ruleset, uint64_t access,
                                               const dsh_prepared_policy *prepared, bool require_masks,
                                               dsh_landlock_masks *masks, dsh_error *error);

/* landlock-run's `--mask PATH`, `--mask-closed DIR` and, for the pinned ones, `--protect PATH`. */
DSH_INTERNAL int dsh_landlock_masks_append_arguments(const dsh_landlock_masks *masks, char ***argv);

DSH_INTERNAL void dsh_landlock_masks_clear(dsh_landlock_masks *masks);

#endif
