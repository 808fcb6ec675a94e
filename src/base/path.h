/* SPDX-License-Identifier: MIT */
/* Path identity: canonical spelling of paths that may not exist yet, and containment. */
#ifndef DSH_SANDBOX_PATH_H
#define DSH_SANDBOX_PATH_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/util.h"

/*
 * The canonical spelling of an absolute `path`: realpath() of its longest
 * existing prefix, the missing rest normalized lexically.  Returns a new
 * string (caller frees), or NULL with errno set (EINVAL for a relative path).
 */
DSH_INTERNAL char *dsh_path_canonical(const char *path);

/*
 * dsh_path_canonical(), and whether its walk met a symlink on the way
 * (*met_link; resolved or dangling, and always for a relative path, which
 * realpath walks): false means every component it looked at, up to the
 * first missing one, was no link as spelled.
 */
DSH_INTERNAL char *dsh_path_canonical_noting_links(const char *path, bool *met_link);

/* `path` made absolute against the cwd, lexically (nothing resolved): a new string, or NULL with errno set. */
DSH_INTERNAL char *dsh_path_from_cwd(const char *path);

/* `path` (absolute) with "//", "." and ".." folded by spelling alone, no
 * filesystem access.  Returns a new string, or NULL with errno set. */
DSH_INTERNAL char *dsh_path_normalize_lexically(const char *path);

/* True when canonical `path` is `directory` itself or lies beneath it (canonical too). */
DSH_INTERNAL bool dsh_path_is_beneath(const char *path, const char *directory);

/* mkdir -p: creates what is missing of absolute `path` with `mode`.  Returns 0 or a negative errno. */
DSH_INTERNAL int dsh_path_make_directories(const char *path, mode_t mode);

/* True when existing absolute `path` resolves to itself: no symlink anywhere on the way. */
DSH_INTERNAL bool dsh_path_has_no_symlinks(const char *path);

/*
 * The first symlink met on absolute `path` as spelled: every prefix ("/a",
 * "/a/b", "/a/b/..") is lstat()ed in turn, so a dangling link counts too.
 * The walk ends at the first prefix that does not exist (nothing beyond it
 * can be a link yet).  Returns 1 with `*link_out` (caller frees) the prefix
 * that is a symlink, 0 when there is none, or a negative errno (-EINVAL for
 * a relative path).
 */
DSH_INTERNAL int dsh_path_find_symlink(const char *path, char **link_out);

#endif
