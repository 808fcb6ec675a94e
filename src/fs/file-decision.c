/* SPDX-License-Identifier: MIT */
/*
 * The file guard's decisions (file-decision.h): one place that says which
 * rule refuses an entry, for the guard's operations (file-guard.c) and for
 * dsh_why() (src/denial/why.c) alike, so that "would it be allowed" and
 * "was it allowed" cannot disagree.  Every path here is canonical, as the
 * walk spelled it (path-walk.c); nothing here touches the filesystem but
 * decide_entry()'s realpath(), which only ever adds a refusal.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/path.h"
#include "fs/file-decision.h"
#include "fs/file-guard-state.h"
#include "shield/masks.h"
#include "shield/shield.h"

bool dsh_guard_confined_change(const dsh_file_guard *guard, bool changes)
{
        return changes && guard->prepared.policy.mode != DSH_MODE_DANGER_FULL_ACCESS;
}

bool dsh_guard_beneath_any(char *const *list, const char *path)
{
        for (; list && *list; list++)
                if (dsh_path_is_beneath(path, *list))
                        return true;
        return false;
}

/* The entry of `list` that `path` is at or beneath, or NULL. */
static const char *beneath_which(char *const *list, const char *path)
{
        for (; list && *list; list++)
                if (dsh_path_is_beneath(path, *list))
                        return *list;
        return NULL;
}

/* True when one of `list` is `path` or lies beneath it. */
static bool holds_any(char *const *list, const char *path)
{
        for (; list && *list; list++)
                if (dsh_path_is_beneath(*list, path))
                        return true;
        return false;
}

/*
 * Which rule a held-back `entry` is refused under: the sandbox's own files
 * are the provider's protected paths (file-guard-setup.c kept the shield's
 * entries dsh_provider_held_back_rule() names so, the supervisor's source
 * of truth for the same choice); everything else held back is a protected
 * subpath.
 */
static dsh_guard_rule held_back_rule(const dsh_file_guard *guard, const char *entry)
{
        for (char *const *own = guard->own_files; own && *own; own++)
                if (strcmp(*own, entry) == 0)
                        return DSH_GUARD_OWN_FILE;
        return DSH_GUARD_PROTECTED_SUBPATH;
}

/*
 * What a writable root does not make writable, by canonical path (the walk
 * spells the entry canonically from the root it is in, and the shield's
 * lists are canonical): a path at or beneath something held back, or
 * something that must stay absent, is denied.  An entry that is removed or
 * renamed (`entry_moves`) is denied too when it is or holds one of them, or
 * one of the directories bwrap pins on the way to them: removing or
 * renaming it would take the protection along (own-file when it would take
 * one of the sandbox's own files).
 */
static dsh_guard_rule shield_rule(const dsh_file_guard *guard, const char *path, bool entry_moves)
{
        const dsh_shield *shield = &guard->shield;
        const char *held = beneath_which(shield->read_only, path);

        if (!held)
                held = beneath_which(shield->must_stay_absent, path);
        if (!held)
                held = beneath_which(shield->kept_absent, path);
        if (held)
                return held_back_rule(guard, held);
        if (dsh_guard_beneath_any(guard->protected_spellings, path))
                return DSH_GUARD_PROTECTED_SUBPATH;
        if (!entry_moves)
                return DSH_GUARD_ALLOWED;
        if (holds_any(guard->own_files, path))
                return DSH_GUARD_OWN_FILE;
        if (holds_any(shield->read_only, path) || holds_any(shield->must_stay_absent, path) ||
            holds_any(shield->kept_absent, path) || holds_any(guard->protected_spellings, path) ||
            holds_any(shield->pins, path))
                return DSH_GUARD_PROTECTED_SUBPATH;
        return DSH_GUARD_ALLOWED;
}

/*
 * Whether canonical `path` is masked for the call: covered by the plan (a
 * mask, beneath one, or a name a wildcard entry matches in its directory),
 * or, for an entry that is removed or renamed (`entry_moves`), holding a
 * mask or a wildcard's directory beneath it.  The plan is empty under
 * danger-full-access.
 */
bool dsh_guard_is_masked(const dsh_file_guard *guard, const char *path, bool entry_moves)
{
        const dsh_mask_plan *plan = &guard->prepared.masks;

        if (dsh_mask_plan_covers(plan, path))
                return true;
        if (!entry_moves)
                return false;
        for (size_t i = 0; i < plan->count; i++)
                if (dsh_path_is_beneath(plan->masks[i].path, path))
                        return true;
        return holds_any(plan->closed_directories, path);
}

/*
 * The decision for the entry at canonical `path`, in writable root `root`
 * (-1: in none): a masked one is denied whatever the operation; then
 * read-only denies every change, danger-full-access allows every one,
 * workspace-write allows one inside a root and outside the shield.
 */
dsh_guard_rule dsh_guard_decide(const dsh_file_guard *guard, bool changes, int root, const char *path,
                                bool entry_moves)
{
        if (dsh_guard_is_masked(guard, path, entry_moves))
                return DSH_GUARD_MASKED_PATH;
        if (!changes)
                return DSH_GUARD_ALLOWED;
        switch (guard->prepared.policy.mode) {
        case DSH_MODE_DANGER_FULL_ACCESS:
                return DSH_GUARD_ALLOWED;
        case DSH_MODE_READ_ONLY:
                return DSH_GUARD_OUTSIDE_ROOTS;
        case DSH_MODE_WORKSPACE_WRITE:
                if (root < 0)
                        return DSH_GUARD_OUTSIDE_ROOTS;
                return shield_rule(guard, path, entry_moves);
        }
        return DSH_GUARD_OUTSIDE_ROOTS;
}

/*
 * The decision for an entry that is removed, renamed or renamed over (never
 * followed: the entry is the link itself).  A symlink whose target is or
 * holds a mask is a route the plan resolved through (~/.aws -> /data/aws:
 * the mask is /data/aws), and removing, moving or replacing it would point
 * the entry somewhere else for every later call's plan while the credential
 * stays where it was: denied too.  realpath() here only ever adds a
 * refusal; the change itself is made on the entry by its directory's fd.
 */
dsh_guard_rule dsh_guard_decide_entry(const dsh_file_guard *guard, const dsh_walk_target *target)
{
        char resolved[PATH_MAX];
        dsh_guard_rule rule = dsh_guard_decide(guard, true, target->root, target->path, true);

        if (rule == DSH_GUARD_ALLOWED && target->exists && S_ISLNK(target->status.st_mode) &&
            realpath(target->path, resolved) && dsh_guard_is_masked(guard, resolved, true))
                return DSH_GUARD_MASKED_PATH;
        return rule;
}

const char *dsh_guard_rule_name(dsh_guard_rule rule)
{
        switch (rule) {
        case DSH_GUARD_ALLOWED:
                return "allowed";
        case DSH_GUARD_OUTSIDE_ROOTS:
                return "outside-roots";
        case DSH_GUARD_PROTECTED_SUBPATH:
                return "protected-subpath";
        case DSH_GUARD_OWN_FILE:
                return "own-file";
        case DSH_GUARD_MASKED_PATH:
                return "masked-path";
        }
        return "outside-roots";
}
