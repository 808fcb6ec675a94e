/* SPDX-License-Identifier: MIT */
/* The masks of one call: see masks.h. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/path.h"
#include "shield/masks.h"

#define MASK_TEMP_AREA "/tmp"
#define PUBLIC_KEY_SUFFIX ".pub"

void dsh_mask_plan_clear(dsh_mask_plan *plan)
{
        if (!plan)
                return;
        for (size_t i = 0; i < plan->count; i++)
                free(plan->masks[i].path);
        free(plan->masks);
        dsh_strv_free(plan->closed_directories);
        dsh_strv_free(plan->closed_patterns);
        dsh_strv_free(plan->unheld);
        *plan = (dsh_mask_plan) DSH_MASK_PLAN_INIT;
}

static bool strv_has(char *const *strv, const char *value)
{
        for (; strv && *strv; strv++)
                if (strcmp(*strv, value) == 0)
                        return true;
        return false;
}

/* The root of the call that overlaps `path` either way (masks.h: inside_writable_root), or NULL. */
static const char *overlapping_root(const dsh_policy *policy, const char *path)
{
        if (policy->mode != DSH_MODE_WORKSPACE_WRITE)
                return NULL;
        if (policy->workspace_root &&
            (dsh_path_is_beneath(path, policy->workspace_root) || dsh_path_is_beneath(policy->workspace_root, path)))
                return policy->workspace_root;
        for (char **root = policy->additional_writable_roots; root && *root; root++)
                if (dsh_path_is_beneath(path, *root) || dsh_path_is_beneath(*root, path))
                        return *root;
        if (dsh_path_is_beneath(path, MASK_TEMP_AREA))
                return MASK_TEMP_AREA;
        return NULL;
}

/*
 * Adds `canonical` (taken) as seen by one lstat: `status`, or NULL when
 * there was nothing to see.
 */
static int add_mask_seen(dsh_mask_plan *plan, const dsh_policy *policy, char *canonical, const struct stat *status)
{
        dsh_mask *grown;

        for (size_t i = 0; i < plan->count; i++)
                if (strcmp(plan->masks[i].path, canonical) == 0) {
                        free(canonical);
                        return 0;
                }
        grown = realloc(plan->masks, (plan->count + 1) * sizeof(*plan->masks));
        if (!grown) {
                free(canonical);
                return -ENOMEM;
        }
        plan->masks = grown;
        grown[plan->count].path = canonical;
        /*
         * A canonical path that is still a symlink dangles (its target is a
         * mask of its own: add_dangling_target()); nothing can be bound over
         * it without following it, so it is kept unreadable as a name, like
         * one that does not exist.
         */
        grown[plan->count].kind = !status || S_ISLNK(status->st_mode) ? DSH_MASK_ABSENT
                                  : S_ISDIR(status->st_mode)           ? DSH_MASK_DIRECTORY
                                                                       : DSH_MASK_FILE;
        grown[plan->count].inside_writable_root = overlapping_root(policy, canonical);
        plan->count++;
        return 0;
}

static int add_mask(dsh_mask_plan *plan, const dsh_policy *policy, char *canonical)
{
        struct stat status;

        return add_mask_seen(plan, policy, canonical, lstat(canonical, &status) == 0 ? &status : NULL);
}

/*
 * A dangling symlink at a masked name: the canonical spelling stops at the
 * link itself, but what the command would read once the target appears is
 * the target, by its own path.  So the target is masked as well (one level:
 * a chain of dangling links is masked at its first hop and at its second).
 */
static int add_dangling_target(dsh_mask_plan *plan, const dsh_policy *policy, const char *link)
{
        char target[PATH_MAX], joined[PATH_MAX * 2];
        ssize_t length = readlink(link, target, sizeof(target) - 1);
        const char *slash = strrchr(link, '/');
        char *canonical;

        if (length <= 0 || !slash)
                return 0;
        target[length] = '\0';
        if (target[0] == '/')
                snprintf(joined, sizeof(joined), "%s", target);
        else
                snprintf(joined, sizeof(joined), "%.*s/%s", (int) (slash - link), link, target);
        canonical = dsh_path_canonical(joined);
        if (!canonical)
                return errno == ENOMEM ? -ENOMEM : 0;
        return add_mask(plan, policy, canonical);
}

/*
 * The first symlink on the route to `path` (as spelled, each link followed
 * one hop at a time) whose directory a writable root of the call overlaps:
 * the command could replace that link, and a later call, planning the same
 * entry by name, would mask the new target and leave the old one readable.
 * Returns 1 with *link_out (caller frees), 0 when none, or a negative errno.
 */
static int repointable_link_on_route(const dsh_policy *policy, const char *path, char **link_out)
{
        dsh_autofree char *pending = strdup(path);

        for (int hops = 0; pending && hops < 40; hops++) {
                char target[PATH_MAX];
                dsh_autofree char *link = NULL, *parent = NULL, *next = NULL;
                const char *slash;
                ssize_t length;
                int found = dsh_path_find_symlink(pending, &link);

                if (found <= 0)
                        return found;
                slash = strrchr(link, '/');
                parent = slash == link ? strdup("/") : strndup(link, (size_t) (slash - link));
                dsh_autofree char *canonical_parent = parent ? dsh_path_canonical(parent) : NULL;

                if (canonical_parent && overlapping_root(policy, canonical_parent)) {
                        *link_out = dsh_steal_pointer(&link);
                        return 1;
                }
                if (!parent)
                        return -ENOMEM;
                length = readlink(link, target, sizeof(target) - 1);
                if (length <= 0)
                        return 0;  /* gone since it was found: nothing left to follow */
                target[length] = '\0';
                if (asprintf(&next, "%s%s%s%s", target[0] == '/' ? "" : parent, target[0] == '/' ? "" : "/", target,
                             pending + strlen(link)) < 0)
                        return -ENOMEM;
                free(pending);
                pending = dsh_steal_pointer(&next);
        }
        return pending ? 0 : -ENOMEM;
}

static int note_repointable_route(dsh_mask_plan *plan, const dsh_policy *policy, const char *path)
{
        dsh_autofree char *link = NULL, *sentence = NULL;
        int found = repointable_link_on_route(policy, path, &link);

        if (found <= 0)
                return found;
        if (asprintf(&sentence,
                     "the mask %s is reached through the symlink %s inside a writable root, which the command could "
                     "repoint: a later call would mask the new target and leave this one readable",
                     path, link) < 0)
                return -ENOMEM;
        if (strv_has(plan->unheld, sentence))
                return 0;
        return dsh_strv_append(&plan->unheld, sentence) < 0 ? -ENOMEM : 0;
}

/* One absolute path, no wildcard: its canonical spelling is the mask. */
static int plan_path(dsh_mask_plan *plan, const dsh_policy *policy, const char *path)
{
        bool met_link = true;
        char *canonical = dsh_path_canonical_noting_links(path, &met_link);
        int canonical_errno = errno;
        struct stat status;
        bool seen;
        int result = 0;

        /*
         * A canonical walk that met no symlink (none resolved, none dangling)
         * leaves the route search nothing to find: that walk lstat'd every
         * component the search would, as spelled, up to the first missing
         * one, where both stop.  (The spelling alone would not do: a dangling
         * link on the route is kept as spelled.)  This trusts no fact a
         * command could have changed since: both walks are the same snapshot,
         * taken before anything of this call runs (a link planted after
         * either is one the plan never saw, then and now alike), and the
         * ruleset opens each path afresh, without following a link.
         */
        if (!canonical || met_link)
                result = note_repointable_route(plan, policy, path);
        if (result < 0) {
                free(canonical);
                return result;
        }
        if (!canonical)
                return canonical_errno == ENOMEM ? -ENOMEM : 0;  /* unspellable (too long): nothing there to read either */
        seen = lstat(canonical, &status) == 0;
        if (seen && S_ISLNK(status.st_mode)) {
                result = add_dangling_target(plan, policy, canonical);
                if (result < 0) {
                        free(canonical);
                        return result;
                }
        }
        return add_mask_seen(plan, policy, canonical, seen ? &status : NULL);
}

/*
 * What ssh reads in its directory and holds no secret: a wildcard over a
 * directory named ".ssh" never matches these, so the default entry for
 * every name in ~/.ssh masks each private key whatever its name, while ssh
 * still checks host keys and reads its config.
 */
static bool is_public_ssh_name(const char *directory, const char *name)
{
        const char *slash = strrchr(directory, '/');

        if (strcmp(slash ? slash + 1 : directory, ".ssh") != 0)
                return false;
        return strncmp(name, "known_hosts", strlen("known_hosts")) == 0 ||
               strncmp(name, "authorized_keys", strlen("authorized_keys")) == 0 || strcmp(name, "config") == 0;
}

/* Whether a wildcard entry's `pattern` over `directory` (canonical) matches the entry `name`. */
static bool wildcard_matches(const char *directory, const char *pattern, const char *name)
{
        size_t length = strlen(name), suffix = strlen(PUBLIC_KEY_SUFFIX);

        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return false;
        if (length >= suffix && strcmp(name + length - suffix, PUBLIC_KEY_SUFFIX) == 0)
                return false;  /* a public key is no secret; ssh and git signing read it */
        if (is_public_ssh_name(directory, name))
                return false;
        return fnmatch(pattern, name, 0) == 0;
}

static int add_closed(dsh_mask_plan *plan, const char *directory, const char *pattern)
{
        dsh_autofree char *joined = NULL;

        if (asprintf(&joined, "%s/%s", strcmp(directory, "/") == 0 ? "" : directory, pattern) < 0)
                return -ENOMEM;
        if (!strv_has(plan->closed_directories, directory) && dsh_strv_append(&plan->closed_directories, directory) < 0)
                return -ENOMEM;
        if (!strv_has(plan->closed_patterns, joined) && dsh_strv_append(&plan->closed_patterns, joined) < 0)
                return -ENOMEM;
        return 0;
}

/*
 * A wildcard entry: every name of the directory it matches now is a mask,
 * and the directory is closed (a name it matches later must stay hidden).
 * A directory that does not exist yet is masked whole: if it appears during
 * the call, nothing in it is readable.
 */
static int plan_wildcard(dsh_mask_plan *plan, const dsh_policy *policy, const char *directory, const char *pattern)
{
        dsh_autofree char *canonical = dsh_path_canonical(directory);
        struct stat status;
        struct dirent *entry;
        DIR *stream;
        int result;

        if (!canonical)
                return errno == ENOMEM ? -ENOMEM : 0;
        result = note_repointable_route(plan, policy, directory);
        if (result < 0)
                return result;
        if (stat(canonical, &status) < 0 || !S_ISDIR(status.st_mode))
                return plan_path(plan, policy, canonical);
        result = add_closed(plan, canonical, pattern);
        stream = result == 0 ? opendir(canonical) : NULL;
        if (!stream)
                return result < 0 ? result : plan_path(plan, policy, canonical);  /* unreadable: masked whole */
        while (result == 0 && (entry = readdir(stream))) {
                dsh_autofree char *path = NULL;

                if (!wildcard_matches(canonical, pattern, entry->d_name))
                        continue;
                if (asprintf(&path, "%s/%s", canonical, entry->d_name) < 0)
                        result = -ENOMEM;
                else
                        result = plan_path(plan, policy, path);
        }
        closedir(stream);
        return result;
}

static int plan_absolute(dsh_mask_plan *plan, const dsh_policy *policy, const char *path)
{
        const char *slash = strrchr(path, '/');
        dsh_autofree char *directory = NULL;

        if (!strpbrk(slash + 1, "*?["))
                return plan_path(plan, policy, path);
        directory = slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
        if (!directory)
                return -ENOMEM;
        return plan_wildcard(plan, policy, directory, slash + 1);
}

static int plan_entry(dsh_mask_plan *plan, const dsh_policy *policy, char *const *homes, const char *entry,
                      dsh_error *error)
{
        const char *reason = NULL;
        const char *relative = strncmp(entry, "~/", 2) == 0 ? entry + 2 : entry;
        int result = 0;

        if (dsh_mask_entry_check(entry, &reason) < 0)
                return dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL, "masked path \"%s\": %s", entry, reason);
        if (entry[0] == '/')
                result = plan_absolute(plan, policy, entry);
        for (char *const *home = homes; entry[0] != '/' && result == 0 && home && *home; home++) {
                dsh_autofree char *path = NULL;

                if (asprintf(&path, "%s/%s", strcmp(*home, "/") == 0 ? "" : *home, relative) < 0)
                        result = -ENOMEM;
                else
                        result = plan_absolute(plan, policy, path);
        }
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "cannot plan the masks: %s", strerror(-result));
        return 0;
}

/* Drops each mask beneath another (what covers the directory covers it), keeping the order. */
static void drop_nested(dsh_mask_plan *plan)
{
        size_t kept = 0;

        for (size_t i = 0; i < plan->count; i++) {
                bool nested = false;

                for (size_t j = 0; j < plan->count && !nested; j++)
                        nested = j != i && strcmp(plan->masks[i].path, plan->masks[j].path) != 0 &&
                                 dsh_path_is_beneath(plan->masks[i].path, plan->masks[j].path);
                if (nested)
                        free(plan->masks[i].path);
                else
                        plan->masks[kept++] = plan->masks[i];
        }
        plan->count = kept;
}

/*
 * An entry that resolves to "/" or to a directory holding a whole home (a
 * ~/.aws that is a symlink to ~): masking it would hide everything the
 * command works with, so the call is refused instead, naming where it leads.
 */
static int refuse_whole_homes(dsh_mask_plan *plan, char *const *homes, dsh_error *error)
{
        for (size_t i = 0; i < plan->count; i++) {
                const char *path = plan->masks[i].path;
                bool holds_home = strcmp(path, "/") == 0;

                for (char *const *home = homes; !holds_home && home && *home; home++)
                        holds_home = dsh_path_is_beneath(*home, path);
                /*
                 * Under /proc (--mask /proc/self/environ, or /etc/mtab, a
                 * link to /proc/self/mounts): the canonical spelling names
                 * this process's entries, which the command never sees as
                 * such, and bwrap's fresh /proc has no such pid, so the call
                 * failed with "no sandbox backend is usable".  Said plainly.
                 */
                if (dsh_path_is_beneath(path, "/proc")) {
                        dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                      "a masked path resolves to \"%s\", under /proc, which names this process's "
                                      "own entries and not a file on disk: refusing to mask it",
                                      path);
                        dsh_mask_plan_clear(plan);
                        return -EINVAL;
                }
                if (holds_home) {
                        dsh_error_set(error, DSH_ERROR_INVALID_INPUT, EINVAL,
                                      "a masked path resolves to \"%s\", which is \"/\" or holds a whole home: "
                                      "refusing to mask it",
                                      path);
                        dsh_mask_plan_clear(plan);
                        return -EINVAL;
                }
        }
        return 0;
}

int dsh_mask_plan_build(const dsh_protections *protections, const dsh_policy *policy, char *const *homes,
                        dsh_mask_plan *plan, dsh_error *error)
{
        const char *const *configured =
                protections->masks ? (const char *const *) protections->masks : dsh_default_masked_paths();
        int result = 0;

        if (!dsh_mode_is_confined(policy->mode))
                return 0;
        for (const char *const *entry = configured; result == 0 && *entry; entry++)
                result = plan_entry(plan, policy, homes, *entry, error);
        for (char **entry = policy->masked_paths; result == 0 && entry && *entry; entry++)
                result = plan_entry(plan, policy, homes, *entry, error);
        if (result < 0) {
                dsh_mask_plan_clear(plan);
                return result;
        }
        drop_nested(plan);
        return refuse_whole_homes(plan, homes, error);
}

/* Whether the first component of `path` beneath the closed pattern's directory is a name the pattern matches. */
static bool closed_pattern_covers(const char *closed, const char *path)
{
        const char *pattern_slash = strrchr(closed, '/');
        size_t directory_length = (size_t) (pattern_slash - closed);
        const char *name = path + directory_length + 1;
        const char *end;
        char first[NAME_MAX + 1];

        if (strncmp(closed, path, directory_length) != 0 || path[directory_length] != '/' || !*name)
                return false;
        end = strchrnul(name, '/');
        if ((size_t) (end - name) > NAME_MAX)
                return false;
        char directory[PATH_MAX];

        snprintf(first, sizeof(first), "%.*s", (int) (end - name), name);
        snprintf(directory, sizeof(directory), "%.*s", (int) directory_length, closed);
        return wildcard_matches(directory, pattern_slash + 1, first);
}

bool dsh_mask_plan_covers(const dsh_mask_plan *plan, const char *path)
{
        for (size_t i = 0; i < plan->count; i++)
                if (dsh_path_is_beneath(path, plan->masks[i].path))
                        return true;
        for (char **closed = plan->closed_patterns; closed && *closed; closed++)
                if (closed_pattern_covers(*closed, path))
                        return true;
        return false;
}

/* The search of dsh_mask_plan_holds_inode() (nftw() takes no context: one search per thread at a time). */
#define MASK_INODE_SEARCH_LIMIT 4096
static __thread const struct stat *searched_inode;
static __thread size_t searched_entries;

static int compare_inode(const char *path, const struct stat *status, int type, struct FTW *where)
{
        (void) path;
        (void) where;
        if (++searched_entries > MASK_INODE_SEARCH_LIMIT)
                return 1;
        return type == FTW_F && status->st_dev == searched_inode->st_dev && status->st_ino == searched_inode->st_ino;
}

/*
 * Another name for a credential, made before the call (`ln ~/.netrc
 * ~/proj/notes`): the plan masks names, and this one is none of them.  Only
 * a file with more than one link can be such a name, so the search runs for
 * those alone: every masked file is compared, and every file beneath a
 * masked directory on the same device (never following a symlink or
 * leaving the device), at most MASK_INODE_SEARCH_LIMIT entries each.
 */
bool dsh_mask_plan_holds_inode(const dsh_mask_plan *plan, const struct stat *status)
{
        if (!S_ISREG(status->st_mode) || status->st_nlink < 2)
                return false;
        for (size_t i = 0; i < plan->count; i++) {
                struct stat mask;
                int found;

                if (plan->masks[i].kind == DSH_MASK_ABSENT || stat(plan->masks[i].path, &mask) < 0 ||
                    mask.st_dev != status->st_dev)
                        continue;
                if (plan->masks[i].kind == DSH_MASK_FILE) {
                        if (mask.st_ino == status->st_ino)
                                return true;
                        continue;
                }
                searched_inode = status;
                searched_entries = 0;
                found = nftw(plan->masks[i].path, compare_inode, 16, FTW_PHYS | FTW_MOUNT);
                if (found != 0)
                        return true;  /* the inode, or too many entries to say it is not there */
        }
        return false;
}

char **dsh_mask_plan_paths(const dsh_mask_plan *plan)
{
        char **paths = dsh_strv_copy(NULL);

        for (size_t i = 0; paths && i < plan->count; i++)
                if (dsh_strv_append(&paths, plan->masks[i].path) < 0) {
                        dsh_strv_free(paths);
                        return NULL;
                }
        for (char **closed = plan->closed_patterns; paths && closed && *closed; closed++)
                if (dsh_strv_append(&paths, *closed) < 0) {
                        dsh_strv_free(paths);
                        return NULL;
                }
        return paths;
}
