/* SPDX-License-Identifier: MIT */
/*
 * What a module beside the provider that applies the same policy (the file
 * guard) needs from it, without reading `struct dsh_provider`: the
 * protections, the shield the provider's backends would plan, and where the
 * command's /tmp is.  provider-protections.c.
 */
#ifndef DSH_SANDBOX_PROVIDER_PROTECTIONS_H
#define DSH_SANDBOX_PROVIDER_PROTECTIONS_H

#include <stdbool.h>

#include "dsh-sandbox/provider.h"
#include "base/util.h"
#include "shield/protections.h"
#include "shield/shield.h"

/* The provider's protections (protections.h); borrowed, valid until the next setter call. */
DSH_INTERNAL const dsh_protections *dsh_provider_protections(const dsh_provider *provider);

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
 * Whether the command's /tmp is the call's scratch temp area under the
 * backend this provider would select (probing when nothing is selected yet,
 * as a spawn would): false when none is usable.
 */
DSH_INTERNAL bool dsh_provider_temp_area_is_scratch(dsh_provider *provider);

/* Where each session's scratch lives (dsh_provider_set_scratch_dir()); NULL: none. */
DSH_INTERNAL const char *dsh_provider_scratch_dir(const dsh_provider *provider);

#endif
