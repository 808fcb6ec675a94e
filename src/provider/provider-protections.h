/* SPDX-License-Identifier: MIT */
/*
 * The provider's protections as the modules beside it reach them without
 * reading `struct dsh_provider`: the runtime hands them over, the file
 * guard reads them, plans the shield the provider's backends would plan
 * and learns where the command's /tmp is.  provider-protections.c.
 */
#ifndef DSH_SANDBOX_PROVIDER_PROTECTIONS_H
#define DSH_SANDBOX_PROVIDER_PROTECTIONS_H

#include <stdbool.h>

#include "dsh-sandbox/provider.h"
#include "base/util.h"
#include "core/refusals.h"
#include "shield/protections.h"
#include "shield/shield.h"

/* The provider's protections (protections.h); borrowed, valid until the next setter call. */
DSH_INTERNAL const dsh_protections *dsh_provider_protections(const dsh_provider *provider);

/*
 * Hands `protections` to the provider: its protected paths, executables,
 * subpaths and require flag, checked and copied as
 * dsh_provider_set_protected_paths(), _executables() and _subpaths() do
 * (their errors); the launcher directory stays the landlock-run path's.
 * The runtime builds the protections once and calls this once.  Returns 0
 * or a negative errno with `error` set (the provider's protections then
 * partly set: the caller discards it).
 */
DSH_INTERNAL int dsh_provider_set_protections(dsh_provider *provider, const dsh_protections *protections,
                                              dsh_error *error);

/*
 * Every program any backend of this provider could run to confine a later
 * call, found or not (each backend's runner_candidates): a new strv, NULL
 * with -ENOMEM in `*result` when out of memory.
 */
DSH_INTERNAL char **dsh_provider_runner_candidates(const dsh_provider *provider, int *result);

/*
 * dsh_shield_plan() for `policy` under this provider's protections and
 * runner candidates (see shield.h for the arguments and the refusals).
 */
DSH_INTERNAL int dsh_provider_plan_shield(const dsh_provider *provider, const dsh_policy *policy,
                                          const char *host_temp_area, bool with_subpaths, dsh_shield *shield,
                                          dsh_error *error);

/*
 * The rule a held-back `path` (canonical) is refused under: one of the
 * sandbox's own files (the provider's protected paths, canonicalized), or
 * a protected subpath.  For the supervisor's refusal records.
 */
DSH_INTERNAL dsh_refusal_rule dsh_provider_held_back_rule(const dsh_provider *provider, const char *path);

/*
 * Whether the command's /tmp is the call's scratch temp area under the
 * backend this provider would select (probing when nothing is selected yet,
 * as a spawn would): false when none is usable.
 */
DSH_INTERNAL bool dsh_provider_temp_area_is_scratch(dsh_provider *provider);

/* Where each session's scratch lives (dsh_provider_set_scratch_dir()); NULL: none. */
DSH_INTERNAL const char *dsh_provider_scratch_dir(const dsh_provider *provider);

#endif
