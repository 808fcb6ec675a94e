/* SPDX-License-Identifier: MIT */
/*
 * The cross-process verdict cache.  Every `dsh-sandbox` invocation is a new
 * process, so a provider's lifetime cache alone would probe the chain (a
 * confined `true` per backend) on every command.  The verdict is therefore
 * also stored on disk, keyed by every fact the probe's outcome depends on.
 *
 * Security argument: the cache can only choose *which configured backend*
 * runs, never a runner path (paths always come from the provider); a cache
 * file forged by someone who can write the user's cache directory can at
 * worst select another backend of the configured chain, each of which
 * confines.  A runner that fails before exec drops the entry, so a stale
 * verdict costs one failed attempt, never an unconfined run.
 */
#ifndef DSH_SANDBOX_VERDICT_CACHE_H
#define DSH_SANDBOX_VERDICT_CACHE_H

#include "provider/backend.h"

/*
 * The key of `provider`'s chain on this host, as compact JSON: library
 * version, effective uid, kernel (uname release and version), the
 * user-namespace sysctls and the active LSM list, each backend's name and
 * runner binary identity (path, device, inode, mtime, size), and the probe
 * timeout.  Returns a new string, or NULL when out of memory.
 */
DSH_INTERNAL char *dsh_verdict_cache_key(dsh_provider *provider);

/* The cache file for `provider`'s chain inside the cache directory; caller frees. */
DSH_INTERNAL char *dsh_verdict_cache_path(const dsh_provider *provider);

/*
 * Looks up the verdict stored at `path` for `key`.  Returns 0 with
 * `*selected` (caller frees) the stored backend name, or -ENOENT when there
 * is no entry for this exact key.  Anything at `path` but a regular file (a
 * FIFO, a symlink, a directory) or a file that does not parse is no entry:
 * it is never followed, waited on or trusted.
 */
DSH_INTERNAL int dsh_verdict_cache_read(const char *path, const char *key, char **selected);

/* Stores `selected` for `key` at `path` atomically (temporary file, then
 * rename).  Best effort: returns 0 or a negative errno that callers may ignore. */
DSH_INTERNAL int dsh_verdict_cache_write(const char *path, const char *key, const char *selected);

/* Removes the entry (a runner it selected failed).  NULL is allowed. */
DSH_INTERNAL void dsh_verdict_cache_drop(const char *path);

#endif
