/* SPDX-License-Identifier: MIT */
/*
 * The held-back watch: evidence, gathered outside the sandbox, that a
 * confined call tried to change a file the backend holds back inside a
 * writable root (bwrap's read-only binds over .git/config, .git/hooks and
 * the sandbox's own files: src/shield/shield.h).  Such a write is refused, but not
 * in the backend's denial dialect: git writes .git/config.lock and renames
 * it over .git/config, a mount point, and the kernel answers EBUSY ("Device
 * or resource busy") — or git carries on, exits 0 and the change is lost.
 *
 * Two kinds of evidence (docs/bash-tool.md, "Held-back files"):
 *  - inotify, armed on the directory of every held-back file before the
 *    command starts: NAME.lock created (or moved in) next to a held-back
 *    NAME is an attempted replacement.  The command cannot hide it: the
 *    event is queued when the file is created, however soon it is deleted,
 *    and the directory is pinned (a mount point), so it cannot be swapped
 *    for another.  A lock then renamed over NAME is a replacement that
 *    succeeded — a writer outside the sandbox (the user's own git) — and is
 *    not counted.  A command that creates such a file itself only makes its
 *    own call look denied; a lock made by another confined call at the same
 *    time (serve's jobs in one repository) cannot be told from its own.
 *  - text, for a command that failed: a stderr line with EBUSY's or EROFS's
 *    words that names a held-back path of this call.  A command can print
 *    that, again only against itself.
 * The evidence only names what happened; the refusal itself is the
 * backend's and holds without any of this.
 */
#ifndef DSH_SANDBOX_HELD_BACK_WATCH_H
#define DSH_SANDBOX_HELD_BACK_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "dsh-sandbox/provider.h"
#include "base/util.h"

typedef struct dsh_held_back_watch dsh_held_back_watch;

/*
 * Arms a watch on the directory of each of `held_back` (canonical absolute
 * paths).  Call it before the command can run.  Returns 0 with a new watch
 * (free with dsh_held_back_watch_free()), or a negative errno (inotify
 * refused: EMFILE, ENOSPC for max_user_watches, ...; ENOMEM) and nothing.
 */
DSH_INTERNAL int dsh_held_back_watch_start(char *const *held_back, dsh_held_back_watch **watch_out);

DSH_INTERNAL void dsh_held_back_watch_free(dsh_held_back_watch *watch);

/* The fd to poll (readable when events wait), or -1 for NULL. */
DSH_INTERNAL int dsh_held_back_watch_fd(const dsh_held_back_watch *watch);

/* Reads every queued event and keeps what they prove.  NULL is a watch that saw nothing. */
DSH_INTERNAL void dsh_held_back_watch_read(dsh_held_back_watch *watch);

/*
 * Marks the held-back paths that a line of `text` (`length` bytes, NUL
 * bytes allowed) names — by its absolute path or its last two components
 * (".git/config") — on a line that also carries EBUSY's or EROFS's words.
 */
DSH_INTERNAL void dsh_held_back_watch_match_text(dsh_held_back_watch *watch, const char *text, size_t length);

/* The watch saw an attempted replacement (not text: the command cannot print this evidence). */
DSH_INTERNAL bool dsh_held_back_watch_saw_attempt(const dsh_held_back_watch *watch);

/* Some held-back path was named by the text (dsh_held_back_watch_match_text()). */
DSH_INTERNAL bool dsh_held_back_watch_named(const dsh_held_back_watch *watch);

/* The held-back paths seen attempted or named, joined with ", " (new string), or NULL for none or no memory. */
DSH_INTERNAL char *dsh_held_back_watch_refused_paths(const dsh_held_back_watch *watch);

/* The kernel's event queue overflowed: an attempt may have gone unseen. */
DSH_INTERNAL bool dsh_held_back_watch_overflowed(const dsh_held_back_watch *watch);

/*
 * dsh_provider_spawn() that also arms a held-back watch for the command,
 * where the selected backend holds files back (bwrap, workspace-write):
 * dsh_child_held_back_watch() then returns it.  provider.c.
 */
DSH_INTERNAL int dsh_provider_spawn_watched(dsh_provider *provider, char *const *argv, const dsh_policy *policy,
                                            const dsh_spawn_options *options, dsh_child **child_out,
                                            dsh_error *error);

/* The child's held-back watch (owned by the child), or NULL when none was armed.  process.c. */
DSH_INTERNAL dsh_held_back_watch *dsh_child_held_back_watch(const dsh_child *child);

/*
 * How many paths the sandbox keeps absent the command had created, each
 * moved aside once it was gone and named in dsh_child_warnings().  process.c.
 */
DSH_INTERNAL int dsh_child_moved_aside(const dsh_child *child);

#endif
