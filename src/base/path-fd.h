/* SPDX-License-Identifier: MIT */
/*
 * Path identity by fd: resolution relative to an O_PATH directory fd with
 * openat2(), so that a check and the use that follows it name the same
 * inode, whatever is renamed, replaced or repointed in between (systemd's
 * chaseat() is the model).  Every fd returned is O_CLOEXEC; the caller
 * closes it.
 */
#ifndef DSH_SANDBOX_PATH_FD_H
#define DSH_SANDBOX_PATH_FD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/util.h"

/* openat2(2) itself: `resolve` is a set of RESOLVE_* flags.  Returns the fd or a negative errno. */
DSH_INTERNAL int dsh_openat2(int directory_fd, const char *path, int flags, uint64_t resolve);

/*
 * Opens canonical absolute `path` O_PATH, refusing any symlink and magic
 * link on the way (-ELOOP): a path checked canonical earlier that now
 * passes through a link was swapped since.  `directory`: O_DIRECTORY too.
 */
DSH_INTERNAL int dsh_path_open_canonical(const char *path, bool directory);

/*
 * Opens `relative` beneath the directory fd `root_fd` O_PATH with
 * RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, plus RESOLVE_NO_SYMLINKS when
 * `no_symlinks`: the result is the root itself ("" or ".") or lies beneath
 * it, never outside (-EXDEV), whatever the names on the way now are.
 */
DSH_INTERNAL int dsh_path_open_beneath(int root_fd, const char *relative, bool no_symlinks);

/* True when the two fds name the same inode (st_dev and st_ino). */
DSH_INTERNAL bool dsh_fd_same_file(int first, int second);

/* `path` relative to `root` when canonical `path` lies beneath canonical `root` ("" for the root itself), else NULL. */
DSH_INTERNAL const char *dsh_path_relative_to(const char *path, const char *root);

#endif
