/* SPDX-License-Identifier: MIT */
/*
 * The call's masks under Landlock (provider/landlock-masks.h).
 *
 * What holds, and why (core/read-mask.c argues the kernel's side): the
 * read grant of "/" becomes a grant of every entry on the way to a mask but
 * the masks, so a mask, and any name that appears beside one during the
 * call, is readable under no name the command can reach.  What does not:
 *  - a mask inside a writable root: the root's grant covers reading all of
 *    it, and Landlock cannot subtract.  Not held, said so (partial) or
 *    refused (requireMasks).  The command could also move or link such a
 *    mask to a name a later call grants (inode rules follow the name they
 *    were made on, and a later call enumerates what it finds): each one
 *    that exists is handed to the supervisor as held back (`pinned`), which
 *    refuses renaming, linking or removing it or anything holding it, by
 *    name and by inode (core/metadata-supervisor.h), as it refuses a write
 *    to a protected subpath.  Reading it stays possible: that is the
 *    "partial".
 *  - a directory on the way too large to enumerate (-E2BIG): the masks
 *    beneath it are dropped, said so, and the grant is made again without
 *    them; the rules already added grant only entries that are no mask, so
 *    the retry adds to them and takes nothing back that it would not give.
 * The supervisor's performed calls cannot undo any of this: it opens,
 * moves and links for the command on a thread restricted by the command's
 * own ruleset (core/write-supervisor.h), so an open of a mask it performs
 * is refused exactly as the command's own (EACCES).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/path.h"
#include "core/read-mask.h"
#include "provider/landlock-masks.h"

#define LANDLOCK_MASKS_TEMP_AREA "/tmp"

static bool vector_holds(char *const *paths, const char *path)
{
        for (char *const *entry = paths; entry && *entry; entry++)
                if (strcmp(*entry, path) == 0)
                        return true;
        return false;
}

/* The writable root `directory` (a closed directory) lies at or beneath, or NULL; `temp_area` canonical /tmp. */
static const char *writable_root_of(const dsh_policy *policy, const char *temp_area, const char *directory)
{
        if (policy->mode != DSH_MODE_WORKSPACE_WRITE)
                return NULL;
        if (policy->workspace_root && dsh_path_is_beneath(directory, policy->workspace_root))
                return policy->workspace_root;
        for (char **root = policy->additional_writable_roots; root && *root; root++)
                if (dsh_path_is_beneath(directory, *root))
                        return *root;
        if (temp_area && dsh_path_is_beneath(directory, temp_area))
                return LANDLOCK_MASKS_TEMP_AREA;
        return NULL;
}

/* "the mask M lies inside the writable root R, ..." or, `root_inside`, "the writable root R lies inside the mask M, ...". */
static int add_sentence(dsh_landlock_masks *masks, bool root_inside, const char *mask, const char *root)
{
        char *sentence = NULL;
        int written = root_inside ? asprintf(&sentence,
                                             "the writable root %s lies inside the mask %s, where Landlock's write "
                                             "grant includes reading it", root, mask)
                                  : asprintf(&sentence,
                                             "the mask %s lies inside the writable root %s, where Landlock's write "
                                             "grant includes reading it", mask, root);
        int result;

        if (written < 0)
                return -ENOMEM;
        result = dsh_strv_append(&masks->unheld, sentence);
        free(sentence);
        return result;
}

/*
 * One mask of the plan.  At or beneath a writable root: not held, and
 * pinned when it exists.  A root beneath it: that part of it is readable
 * (said), the rest still held — it is left out of the grant all the same
 * (the root's own grant covers only the root), and never pinned: that
 * would freeze the whole root.
 */
static int sort_mask(const dsh_mask *mask, const char *fact, dsh_landlock_masks *masks)
{
        const char *root = mask->inside_writable_root;
        int result = 0;

        if (root && dsh_path_is_beneath(mask->path, root)) {
                result = add_sentence(masks, false, fact, root);
                if (result == 0 && mask->kind != DSH_MASK_ABSENT)
                        result = dsh_strv_append(&masks->pinned, mask->path);
                return result;
        }
        if (root)
                result = add_sentence(masks, true, fact, root);
        if (result == 0 && dsh_strv_append(&masks->masked, mask->path) < 0)
                result = -ENOMEM;
        if (result == 0 && !root && dsh_strv_append(&masks->held_facts, fact) < 0)
                result = -ENOMEM;
        return result;
}

/* A wildcard "DIR/PATTERN" of the plan: held with its closed directory DIR, unless DIR lies in a writable root. */
static int sort_wildcard(const dsh_prepared_policy *prepared, const char *temp_area, const char *wildcard,
                         dsh_landlock_masks *masks)
{
        const char *slash = strrchr(wildcard, '/');
        dsh_autofree char *directory = slash ? strndup(wildcard, slash == wildcard ? 1 : (size_t) (slash - wildcard))
                                             : NULL;
        const char *root;

        if (!directory)
                return -ENOMEM;
        root = writable_root_of(&prepared->policy, temp_area, directory);
        if (root)
                return add_sentence(masks, false, wildcard, root);
        if (dsh_strv_append(&masks->held_facts, wildcard) < 0)
                return -ENOMEM;
        if (!vector_holds(masks->closed, directory) && dsh_strv_append(&masks->closed, directory) < 0)
                return -ENOMEM;
        return 0;
}

/*
 * Sorts the plan into held and unheld.  `paths` is dsh_mask_plan_paths():
 * each mask's path, then each wildcard as "DIR/PATTERN", whose DIR is one of
 * the closed directories (a pattern is one last component).
 */
static int sort_plan(const dsh_prepared_policy *prepared, char *const *paths, dsh_landlock_masks *masks)
{
        const dsh_mask_plan *plan = &prepared->masks;
        dsh_autofree char *temp_area = dsh_path_canonical(LANDLOCK_MASKS_TEMP_AREA);
        size_t count = dsh_strv_length(paths);
        int result = 0;

        for (size_t i = 0; result == 0 && i < plan->count && i < count; i++)
                result = sort_mask(&plan->masks[i], paths[i], masks);
        for (size_t i = plan->count; result == 0 && i < count; i++)
                result = sort_wildcard(prepared, temp_area, paths[i], masks);
        /* A closed directory no wildcard named (none should be): still enumerated, never granted whole. */
        for (char **directory = plan->closed_directories; result == 0 && directory && *directory; directory++)
                if (!writable_root_of(&prepared->policy, temp_area, *directory) &&
                    !vector_holds(masks->closed, *directory) && dsh_strv_append(&masks->closed, *directory) < 0)
                        result = -ENOMEM;
        return result;
}

/* Removes from `*paths` every entry at or beneath `directory`; returns how many. */
static size_t drop_beneath(char **paths, const char *directory)
{
        size_t kept = 0, dropped = 0;

        for (size_t i = 0; paths && paths[i]; i++) {
                if (dsh_path_is_beneath(paths[i], directory)) {
                        free(paths[i]);
                        dropped++;
                } else {
                        paths[kept++] = paths[i];
                }
        }
        if (paths)
                paths[kept] = NULL;
        return dropped;
}

/* -E2BIG at `directory`: the masks beneath it are not held.  Returns 0, or -E2BIG when none was (no progress). */
static int give_up_beneath(dsh_landlock_masks *masks, const char *directory)
{
        char *sentence = NULL;
        size_t dropped = drop_beneath(masks->masked, directory) + drop_beneath(masks->closed, directory);
        int result;

        (void) drop_beneath(masks->held_facts, directory);
        if (dropped == 0)
                return -E2BIG;
        if (asprintf(&sentence, "the masks beneath %s are not held: it has more than %d entries to enumerate",
                     directory, DSH_READ_MASK_DEFAULT_RULE_LIMIT) < 0)
                return -ENOMEM;
        result = dsh_strv_append(&masks->unheld, sentence);
        free(sentence);
        return result;
}

static int refuse_unheld(const dsh_landlock_masks *masks, dsh_error *error)
{
        return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                             "a mask cannot be held under Landlock and requireMasks is set: %s", masks->unheld[0]);
}

int dsh_landlock_masks_grant_read(dsh_landlock_ruleset *ruleset, uint64_t access, const dsh_prepared_policy *prepared,
                                  bool require_masks, dsh_landlock_masks *masks, dsh_error *error)
{
        char **paths = dsh_mask_plan_paths(&prepared->masks);
        const char *failed_path = NULL;
        char failed[PATH_MAX];
        int result = paths ? sort_plan(prepared, paths, masks) : -ENOMEM;

        /* What the plan knows no backend holds (masks.h: a route a later call would follow elsewhere). */
        for (char **sentence = prepared->masks.unheld; result == 0 && sentence && *sentence; sentence++)
                result = dsh_strv_append(&masks->unheld, *sentence);
        dsh_strv_free(paths);
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        for (;;) {
                dsh_read_mask mask = { masks->masked, masks->closed, 0 };

                if (masks->unheld && require_masks)
                        return refuse_unheld(masks, error);
                result = dsh_read_mask_grant(ruleset, access, &mask, &failed_path);
                if (result != -E2BIG)
                        break;
                snprintf(failed, sizeof(failed), "%s", failed_path ? failed_path : "/");
                result = give_up_beneath(masks, failed);
                if (result == -ENOMEM)
                        return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
                if (result < 0)
                        return dsh_error_set_unavailable(error, prepared->policy.mode,
                                                         "the masks cannot be enumerated: too many entries");
        }
        if (result < 0) {
                char detail[PATH_MAX + 64];

                snprintf(detail, sizeof(detail), "cannot open rule path: %s: %s", failed_path ? failed_path : "/",
                         strerror(-result));
                return dsh_error_set_unavailable(error, prepared->policy.mode, detail);
        }
        return 0;
}

static int append_each(char ***argv, const char *option, char *const *paths)
{
        for (char *const *path = paths; path && *path; path++)
                if (dsh_strv_append(argv, option) < 0 || dsh_strv_append(argv, *path) < 0)
                        return -ENOMEM;
        return 0;
}

int dsh_landlock_masks_append_arguments(const dsh_landlock_masks *masks, char ***argv)
{
        if (append_each(argv, "--mask", masks->masked) < 0 || append_each(argv, "--mask-closed", masks->closed) < 0 ||
            append_each(argv, "--protect", masks->pinned) < 0)
                return -ENOMEM;
        return 0;
}

void dsh_landlock_masks_clear(dsh_landlock_masks *masks)
{
        dsh_strv_free(masks->masked);
        dsh_strv_free(masks->closed);
        dsh_strv_free(masks->unheld);
        dsh_strv_free(masks->held_facts);
        dsh_strv_free(masks->pinned);
        *masks = (dsh_landlock_masks) DSH_LANDLOCK_MASKS_INIT;
}
