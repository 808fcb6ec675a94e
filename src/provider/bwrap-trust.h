/* SPDX-License-Identifier: MIT */
/*
 * bwrap-trust: the bwrap binary is never taken from a place the confined
 * command (or a checked-out repository) could have written.  A runner that a
 * workspace-write call could replace would run the next call — read-only or
 * not — unconfined, so only a root-owned binary in a root-owned system
 * directory qualifies (or the one the caller named), PATH is never searched,
 * and every place the lookup could look is a runner candidate the shield
 * keeps out of every writable root.  backend-bwrap.c runs what this finds.
 */
#ifndef DSH_SANDBOX_BWRAP_TRUST_H
#define DSH_SANDBOX_BWRAP_TRUST_H

#include "dsh-sandbox/provider.h"
#include "base/util.h"

/* The last step bwrap runs inside the sandbox, found in the launcher directory (shield.h). */
#define DSH_BWRAP_EXEC_HELPER_NAME "dsh-sandbox-exec"

/* Absolute path of the bwrap binary the bwrap backend would run, or NULL with
 * `*reason` (caller frees) saying why none qualifies. */
DSH_INTERNAL char *dsh_bwrap_find(const dsh_provider *provider, char **reason);

/* The canonical path of `path` when it is a runner no confined command could
 * have written (root-owned, root-writable only, up to "/"), else NULL. */
DSH_INTERNAL char *dsh_bwrap_trusted_binary(const char *path);

/* Every program the bwrap backend could run for a later call, found or not: a new strv, NULL when out of memory. */
DSH_INTERNAL char **dsh_bwrap_runner_candidates(const dsh_provider *provider);

#endif
