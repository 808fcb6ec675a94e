/* SPDX-License-Identifier: MIT */
/*
 * The file guard's decisions: whether a change (or a read) of the entry at
 * a canonical path is allowed under the guard's policy, and if not, which
 * rule refuses it.  Pure functions of the guard's state — the roots, the
 * shield and the masks planned when the guard was made — so that the
 * guard's operations (file-guard.c) and dsh_why() (src/denial/why.c, by
 * dsh_file_guard_judge()) are answered by the same code.
 */
#ifndef DSH_SANDBOX_FILE_DECISION_H
#define DSH_SANDBOX_FILE_DECISION_H

#include <stdbool.h>

#include "base/error.h"
#include "base/util.h"
#include "fs/file-guard-state.h"
#include "fs/path-walk.h"

/* True when a change (`changes`) is confined: not under danger-full-access. */
DSH_INTERNAL bool dsh_guard_confined_change(const dsh_file_guard *guard, bool changes);

/* True when `path` is at or beneath one of `list`. */
DSH_INTERNAL bool dsh_guard_beneath_any(char *const *list, const char *path);

/*
 * Whether canonical `path` is masked for the call (see file-decision.c);
 * `entry_moves`: the entry is removed or renamed, so a mask beneath it
 * counts too.
 */
DSH_INTERNAL bool dsh_guard_is_masked(const dsh_file_guard *guard, const char *path, bool entry_moves);

/*
 * The rule that refuses the entry at canonical `path`, in writable root
 * `root` (-1: in none), for a change (`changes`) or a read; or
 * DSH_GUARD_ALLOWED.
 */
DSH_INTERNAL dsh_guard_rule dsh_guard_decide(const dsh_file_guard *guard, bool changes, int root, const char *path,
                                             bool entry_moves);

/* The same for an entry that is removed, renamed or renamed over (the entry is the link itself). */
DSH_INTERNAL dsh_guard_rule dsh_guard_decide_entry(const dsh_file_guard *guard, const dsh_walk_target *target);

/* "outside-roots", "protected-subpath", "own-file", "masked-path" (and "allowed"); static. */
DSH_INTERNAL const char *dsh_guard_rule_name(dsh_guard_rule rule);

/* ------------------------------------------------ file-guard.c's side -- */

/* What dsh_file_guard_judge() is asked about. */
typedef enum dsh_guard_question {
        DSH_GUARD_ASK_WRITE,            /* the entry written or created (a symlink as the last component followed) */
        DSH_GUARD_ASK_METADATA,         /* the entry's mode, owner, times or xattrs changed (followed likewise) */
        DSH_GUARD_ASK_READ,             /* the entry read */
} dsh_guard_question;

/*
 * Would the guard allow `question` on `path` (absolute, or relative to the
 * workspace root)?  Resolved as the guard's operations resolve it — the
 * walk, the temp area's mapping, the masks as given — and decided by the
 * same functions, but nothing is made: where a write would make missing
 * parents, the walk stops before the first and the entry it would have is
 * judged.  Returns 0 with `*rule_out` (DSH_GUARD_ALLOWED or the rule) and
 * `*canonical_out` (a new string: the path as the command names it,
 * canonical as far as it exists; NULL when allowed), or a negative errno
 * with `error` set (INVALID_INPUT: the path names no entry; SYSTEM).  A
 * path the policy allows but the operation would fail on (not found, not
 * a directory) is allowed: that is no refusal.
 */
DSH_INTERNAL int dsh_file_guard_judge(dsh_file_guard *guard, dsh_guard_question question, const char *path,
                                      dsh_guard_rule *rule_out, char **canonical_out, dsh_error *error);

/* Moves the guard's last refusal into `*out` (emptied in the guard).  Returns true when there was one. */
DSH_INTERNAL bool dsh_file_guard_take_refusal(dsh_file_guard *guard, dsh_guard_refusal *out);

#endif
