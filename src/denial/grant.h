/* SPDX-License-Identifier: MIT */
/*
 * One call's grants asked together (child-denials.c): the file guard made
 * for each candidate policy — the call's own, its mode widened, one extra
 * writable root, one allowed socket — is kept and asked again for the
 * call's next denial instead of being made anew (about a millisecond a
 * guard).  The answers are the same: a guard's decisions are pure
 * functions of what it planned when it was made (fs/file-decision.h).
 * grant.c.
 */
#ifndef DSH_SANDBOX_DENIAL_GRANT_H
#define DSH_SANDBOX_DENIAL_GRANT_H

#include "dsh-sandbox/denial.h"
#include "base/util.h"

typedef struct dsh_grant_guards dsh_grant_guards;

/* An empty set, for the grants of one policy (NULL: out of memory). */
DSH_INTERNAL dsh_grant_guards *dsh_grant_guards_new(void);
DSH_INTERNAL void dsh_grant_guards_free(dsh_grant_guards *guards);

/*
 * dsh_denial_find_grant(), asking by the guards of `guards` (made for
 * `policy`, which must not change while `guards` lives; given another
 * policy, the set is emptied first).
 */
DSH_INTERNAL int dsh_denial_find_grant_reusing(dsh_runtime *runtime, const dsh_policy *policy,
                                               dsh_grant_guards *guards, dsh_denial *denial, dsh_error *error);

#endif
