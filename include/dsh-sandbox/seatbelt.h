/* SPDX-License-Identifier: MIT */
/*
 * dsh-sandbox: the macOS Seatbelt (sandbox-exec) profile generator.
 *
 * Pure text generation, so it is built and tested on every platform, though
 * only macOS can run what it produces (docs/backends.md):
 *
 *   sandbox-exec -p PROFILE -- ARGV...
 *   read-only:       (version 1) (allow default) (deny file-write*) (allow file-write* (literal "/dev/null"))
 *   workspace-write: the same, then ` (allow file-write* (subpath "ROOT") ...)` over the canonical,
 *                    de-duplicated writable roots (the workspace first, then the extra roots in order).
 *
 * SBPL strings are wrapped in `"` with `\` and `"` escaped.  Dialect: denial
 * "operation not permitted"; runner failure {fatalSignatures: ["sandbox-exec: "]}.
 */
#ifndef DSH_SANDBOX_SEATBELT_H
#define DSH_SANDBOX_SEATBELT_H

#include "dsh-sandbox/sandbox.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The SBPL profile for `policy`, which must already be prepared
 * (dsh_policy_prepare: absolute, canonical roots) and confined.  Roots are
 * used as given: canonicalization belongs to the host that runs the profile.
 * `*profile_out` receives a new string (caller frees).  Returns 0, -EINVAL
 * (unconfined mode, relative root) or -ENOMEM, with `error` set.
 */
DSH_PUBLIC int dsh_seatbelt_profile(const dsh_policy *policy, char **profile_out, dsh_error *error);

/*
 * The whole confined argv: "/usr/bin/sandbox-exec", "-p", PROFILE, "--",
 * then `argv`, with Seatbelt's enforcement (full) and dialect.  `out` must be
 * cleared.  Returns 0 or a negative errno with `error` set.
 */
DSH_PUBLIC int dsh_seatbelt_confine(char *const *argv, const dsh_policy *policy, dsh_confined_argv *out,
                                    dsh_error *error);

#ifdef __cplusplus
}
#endif

#endif
