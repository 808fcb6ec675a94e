/* SPDX-License-Identifier: MIT */
/*
 * The prepared policy: the checked, canonical policy of one call together
 * with an O_PATH fd for each writable root, opened once, right after the
 * check, refusing any symlink on the way.  Every later use — a Landlock
 * grant, a bwrap --bind-fd — takes the fd, so what is granted or bound is
 * the directory that was checked, whatever a process outside the sandbox
 * renames or repoints in between (the window a bind by name leaves open).
 */
#ifndef DSH_SANDBOX_PREPARED_POLICY_H
#define DSH_SANDBOX_PREPARED_POLICY_H

#include <stddef.h>

#include "dsh-sandbox/sandbox.h"
#include "provider/scratch.h"
#include "base/util.h"
#include "shield/masks.h"
#include "shield/protections.h"

typedef struct dsh_prepared_policy {
        dsh_policy policy;      /* checked and canonical (dsh_policy_prepare) */
        int *root_fds;          /* workspace-write: [0] the workspace, then each extra root in order; else NULL */
        size_t root_count;
        dsh_scratch scratch;    /* workspace-write with a scratch base: the session's temp area and caches */
        dsh_mask_plan masks;    /* the call's masks (shield/masks.h), planned once for every consumer */
} dsh_prepared_policy;

#define DSH_PREPARED_POLICY_INIT { DSH_POLICY_INIT, NULL, 0, DSH_SCRATCH_INIT, DSH_MASK_PLAN_INIT }

/*
 * Copies and prepares `policy` (a confined mode) and opens its writable
 * roots.  A root that now passes through a symlink fails with
 * SANDBOX_INVALID_ROOT: it was canonical a moment ago, so the link was put
 * there since.  Returns 0 or a negative errno with `error` set; clear
 * `prepared` either way.
 */
DSH_INTERNAL int dsh_prepared_policy_init(dsh_prepared_policy *prepared, const dsh_policy *policy, dsh_error *error);

DSH_INTERNAL void dsh_prepared_policy_clear(dsh_prepared_policy *prepared);

/*
 * Opens the scratch of a prepared workspace-write policy beneath
 * `scratch_base` (scratch.h); nothing for another mode or a NULL base (the
 * backends then give what they gave before: bwrap a private tmpfs, no
 * cache).  Returns 0 or a negative errno with `error` set.
 */
DSH_INTERNAL int dsh_prepared_policy_open_scratch(dsh_prepared_policy *prepared, const char *scratch_base,
                                                  dsh_error *error);

/*
 * Plans the call's masks (dsh_mask_plan_build() over `protections` and the
 * prepared policy, under dsh_shield_user_homes()), once, right after the
 * policy is prepared: where the scratch is opened (provider.c, the file
 * guard's setup).  Returns 0 or a negative errno with `error` set.
 */
DSH_INTERNAL int dsh_prepared_policy_plan_masks(dsh_prepared_policy *prepared, const dsh_protections *protections,
                                                dsh_error *error);

/* The fd of the writable root spelled `root` (as in the policy), or -1. */
DSH_INTERNAL int dsh_prepared_policy_root_fd(const dsh_prepared_policy *prepared, const char *root);

#endif
