/* SPDX-License-Identifier: MIT */
/*
 * What the library's own users of a denial share beyond the public
 * dsh-sandbox/denial.h: the one test of "the same refusal" (the bounded
 * list's de-duplication, a call's grant reused for a record seen before)
 * and a grant's copy.  base/denial.c.
 */
#ifndef DSH_SANDBOX_BASE_DENIAL_VALUE_H
#define DSH_SANDBOX_BASE_DENIAL_VALUE_H

#include <stdbool.h>

#include "dsh-sandbox/denial.h"
#include "base/util.h"

/* The same refusal: op, call, path, host, port, rule and source (the grant is not compared). */
DSH_INTERNAL bool dsh_denial_same_refusal(const dsh_denial *a, const dsh_denial *b);

/* A deep copy of `in` into `out` (whose target is overwritten, not freed).  0 or -ENOMEM. */
DSH_INTERNAL int dsh_grant_copy(dsh_grant *out, const dsh_grant *in);

#endif
