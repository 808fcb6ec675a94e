/* SPDX-License-Identifier: MIT */
/*
 * Git-layout discovery: where git will read hooks and config from, for a
 * ".git" beneath a writable root — a plain git directory, a ".git" file
 * ("gitdir: X") of a linked worktree or a submodule checkout, a worktree's
 * common directory ("commondir"), a submodule's git directory beneath
 * modules/.  The shield (shield.c) decides what to hold back; this module
 * only finds the directories.
 *
 * Every file read here is one a command of an earlier call may have
 * written: each is read by one open() that follows no symlink at its last
 * component and never blocks on a FIFO, a bounded amount, and what it names
 * is canonicalized before anyone compares it.  A linked worktree's common
 * directory is believed only when every file agrees the way `git worktree
 * add` leaves them (dsh_git_layout_worktree_common()), since the shield
 * makes that directory writable; a submodule is found from the config
 * (which is held back), never by listing modules/ (which the command can
 * fill with decoys).
 */
#ifndef DSH_SANDBOX_GIT_LAYOUT_H
#define DSH_SANDBOX_GIT_LAYOUT_H

#include <stdbool.h>

#include "base/util.h"

/* The directory a ".git" file names ("gitdir: X", X relative to `directory`), canonical; new string or NULL. */
DSH_INTERNAL char *dsh_git_layout_gitdir_of_file(const char *directory, const char *dotgit);

/* The common directory of git directory `gitdir` (its "commondir" file), canonical; NULL when it is its own. */
DSH_INTERNAL char *dsh_git_layout_commondir(const char *gitdir);

/*
 * The git directories of the submodules of `gitdir`: modules/NAME for each
 * [submodule "NAME"] its config declares with a plain relative name (no
 * "..", ".", empty or absolute component) whose directory exists, in the
 * config's order, as a new strv in `*directories_out` (NULL: none).
 * Returns 0, or -ENOMEM with `*directories_out` NULL.
 */
DSH_INTERNAL int dsh_git_layout_submodule_directories(const char *gitdir, char ***directories_out);

/*
 * True when the repository of git directory `gitdir` (or of its common
 * directory) sets extensions.worktreeConfig, so that git reads
 * config.worktree: a plain text search that errs towards "set".
 */
DSH_INTERNAL bool dsh_git_layout_worktree_config_enabled(const char *gitdir);

/* True when `directory` holds HEAD, objects and refs, as a git directory (or a bare repository) does. */
DSH_INTERNAL bool dsh_git_layout_is_common_directory(const char *directory);

/*
 * The canonical common directory (new string) of the linked worktree whose
 * ".git" file is `dotgit` and whose git directory is `gitdir`, when they
 * agree the way `git worktree add` leaves them: `gitdir` is
 * COMMON/worktrees/NAME, its commondir leads to COMMON, its gitdir file
 * points back at `dotgit`, and COMMON is a git directory.  NULL otherwise.
 */
DSH_INTERNAL char *dsh_git_layout_worktree_common(const char *dotgit, const char *gitdir);

#endif
