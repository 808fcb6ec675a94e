/* SPDX-License-Identifier: MIT */
/*
 * The scratch: one temp area and one cache directory per session (or, for
 * a call without a session, per workspace), kept on the host among the
 * sandbox's own files, so that the calls of one session see the same /tmp
 * and the same package-manager caches, and no other session sees them.
 *
 *   <base>/<key>/owner   who the key belongs to ("session ID" or "workspace ROOT")
 *   <base>/<key>/tmp     bwrap binds it at /tmp (workspace-write)
 *   <base>/<key>/cache   npm, pip, cargo, go... caches (both backends, workspace-write)
 *
 * The security argument:
 *   - who can write it: <base> lies beneath the sandbox's verdict cache
 *     directory, one of the provider's protected paths, so no confined call
 *     can write it (bwrap holds it back or never binds it writable; Landlock
 *     refuses a root that contains it; the file guard refuses it).  Only a
 *     call's own <key>/tmp and <key>/cache are granted to that call;
 *     <key> itself and `owner` never are, so a command cannot rename its
 *     tmp or cache away, nor make its key stand for another session;
 *   - how it is made: by the sandbox, never by the command: every directory
 *     is created with mkdirat() relative to its parent's fd, opened back
 *     with no symlink followed, and must be a directory owned by the caller
 *     that nobody else can write (0700 when created): a symlink or a
 *     directory planted by someone else ends the call
 *     (SANDBOX_INVALID_TEMP_ROOT), it is never followed;
 *   - the key: a hash of "session ID" (or "workspace ROOT", the canonical
 *     root); the hash is not collision-proof, so the `owner` record written
 *     when the key is first made is compared on every open, and a key that
 *     names someone else is refused rather than shared;
 *   - what a later call trusts: what one call of a session left in its
 *     scratch is read by the next call of the same session only — the same
 *     trust as the workspace that session may write anyway.  A user's
 *     shared caches (~/.npm, ~/.cache/pip, ~/.cargo) are never handed to a
 *     confined command: a poisoned shared cache would be read by the next
 *     unconfined `npm install` on the host.
 */
#ifndef DSH_SANDBOX_SCRATCH_H
#define DSH_SANDBOX_SCRATCH_H

#include <stdbool.h>

#include "dsh-sandbox/sandbox.h"
#include "base/util.h"

typedef struct dsh_scratch {
        char *base_path;        /* <base>, canonical: every session's scratch (bwrap hides it) */
        char *temp_path;        /* <base>/<key>/tmp, canonical; NULL: no scratch for this call */
        char *cache_path;       /* <base>/<key>/cache, canonical */
        int temp_fd;            /* O_PATH directory fds of the two, owned; -1 when absent */
        int cache_fd;
} dsh_scratch;

#define DSH_SCRATCH_INIT { NULL, NULL, NULL, -1, -1 }

/* The scratch base beneath `cache_directory` (the sandbox's cache): "<it>/scratch", a new string or NULL. */
DSH_INTERNAL char *dsh_scratch_base_in(const char *cache_directory);

/*
 * Opens (creating what is missing) the scratch of `policy` (prepared: its
 * workspace root canonical) beneath `base` (absolute).  The key is the
 * policy's session id when it has one, else its workspace root.  Returns 0
 * with `scratch` filled, or a negative errno with `error` set
 * (SANDBOX_INVALID_TEMP_ROOT: a directory that is a symlink, not the
 * caller's, writable by others, or a key recorded for someone else); clear
 * `scratch` either way.
 */
DSH_INTERNAL int dsh_scratch_open(const char *base, const dsh_policy *policy, dsh_scratch *scratch,
                                  dsh_error *error);

DSH_INTERNAL void dsh_scratch_clear(dsh_scratch *scratch);

static inline bool dsh_scratch_present(const dsh_scratch *scratch)
{
        return scratch && scratch->temp_path != NULL;
}

/*
 * The variables a confined command of `mode` runs with, as NAME, VALUE
 * pairs (a new strv, even length; NULL when out of memory):
 *   - TMPDIR=/tmp in both confined modes, whatever the caller's said: the
 *     temp area every backend gives (or, read-only under Landlock, the one
 *     place a tool expects), never a directory the policy may not grant;
 *   - workspace-write with a scratch: each package manager's cache in the
 *     scratch's cache directory, except a variable the caller set itself
 *     (that is how a user opts into a shared cache, with --allow-write).
 */
DSH_INTERNAL char **dsh_scratch_variables(const dsh_scratch *scratch, dsh_mode mode);

#endif
