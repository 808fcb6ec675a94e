/* SPDX-License-Identifier: MIT */
/* The shield: see shield.h for what it protects and why. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/path.h"
#include "base/xdg.h"
#include "shield/git-layout.h"
#include "shield/shield.h"

/*
 * What the dynamic loader reads to start a dynamically linked runner (bwrap
 * is one): a writable root containing any of these lets the command replace
 * code that the next call's runner loads before it confines anything.
 */
static const char *const loader_paths[] = {
        "/etc/ld.so.preload", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
        "/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", NULL,
};

/* Bounds the walk of a repository's submodule git directories (each level of nesting counts). */
#define MAX_GIT_DIRECTORIES 256
/* Symlinks followed on one route before it is called a loop, as the kernel does. */
#define MAX_ROUTE_SYMLINKS 40

static bool strv_contains(char *const *strv, const char *value)
{
        for (; strv && *strv; strv++)
                if (strcmp(*strv, value) == 0)
                        return true;
        return false;
}

void dsh_shield_clear(dsh_shield *shield)
{
        if (!shield)
                return;
        dsh_strv_free(shield->pins);
        dsh_strv_free(shield->read_only);
        dsh_strv_free(shield->extra_writable);
        dsh_strv_free(shield->unprotected);
        dsh_strv_free(shield->must_stay_absent);
        dsh_strv_free(shield->kept_absent);
        *shield = (dsh_shield) DSH_SHIELD_INIT;
}

/* ---------------------------------------------------------- writable roots -- */

/* A writable root of the call and its identity, for root_aliasing(). */
struct root_identity {
        const char *root;
        struct stat status;
};

/* The roots' identities, taken once per plan (again when `extra` grows). */
struct root_identities {
        struct root_identity *list;
        size_t count;
        size_t extra_count;     /* how many of `extra` the list holds */
        bool taken;
};

struct writable_roots {
        const dsh_policy *policy;
        const char *host_temp_area;
        char *const *extra;     /* git directories this call makes writable (bwrap), planned before the checks */
        struct root_identities *identities;
};

/* The writable root `path` lies beneath (itself included), or NULL. */
static const char *root_holding(const struct writable_roots *roots, const char *path)
{
        const dsh_policy *policy = roots->policy;

        if (policy->mode != DSH_MODE_WORKSPACE_WRITE)
                return NULL;
        if (dsh_path_is_beneath(path, policy->workspace_root))
                return policy->workspace_root;
        for (char **root = policy->additional_writable_roots; root && *root; root++)
                if (dsh_path_is_beneath(path, *root))
                        return *root;
        if (roots->host_temp_area && dsh_path_is_beneath(path, roots->host_temp_area))
                return roots->host_temp_area;
        for (char *const *directory = roots->extra; directory && *directory; directory++)
                if (dsh_path_is_beneath(path, *directory))
                        return *directory;
        return NULL;
}

/* Appends `root` with its identity, when it can be stat()ed. */
static void identify_root(struct root_identities *identities, const char *root)
{
        if (stat(root, &identities->list[identities->count].status) == 0)
                identities->list[identities->count++].root = root;
}

/* Takes the identities of the roots, once per plan (again when a git directory was added to them). */
static bool identify_roots(const struct writable_roots *roots)
{
        struct root_identities *identities = roots->identities;
        const dsh_policy *policy = roots->policy;
        size_t extra = dsh_strv_length(roots->extra);

        if (identities->taken && identities->extra_count == extra)
                return true;
        free(identities->list);
        *identities = (struct root_identities) { NULL, 0, extra, false };
        identities->list = calloc(2 + dsh_strv_length(policy->additional_writable_roots) + extra,
                                  sizeof(*identities->list));
        if (!identities->list)
                return false;
        identify_root(identities, policy->workspace_root);
        for (char **root = policy->additional_writable_roots; root && *root; root++)
                identify_root(identities, *root);
        for (char *const *directory = roots->extra; directory && *directory; directory++)
                identify_root(identities, *directory);
        if (roots->host_temp_area)
                identify_root(identities, roots->host_temp_area);
        identities->taken = true;
        return true;
}

/*
 * A writable root that is another name for a directory on the way to
 * `path` (canonical): a bind mount of ~ or /usr elsewhere holds the same
 * inodes under other spellings, so a comparison of strings alone would let
 * it through.  Compared by identity, ancestor by ancestor.  NULL when none.
 */
static const char *root_aliasing(const struct writable_roots *roots, const char *path)
{
        char ancestor[PATH_MAX];
        char *slash;

        if (roots->policy->mode != DSH_MODE_WORKSPACE_WRITE || strlen(path) >= sizeof(ancestor))
                return NULL;
        if (!identify_roots(roots))
                return roots->policy->workspace_root;  /* out of memory: refused, never let through unchecked */
        strcpy(ancestor, path);
        while ((slash = strrchr(ancestor, '/')) && slash != ancestor) {
                const struct root_identities *identities = roots->identities;
                struct stat status;

                *slash = '\0';
                if (stat(ancestor, &status) < 0)
                        continue;
                for (size_t i = 0; i < identities->count; i++)
                        if (identities->list[i].status.st_dev == status.st_dev &&
                            identities->list[i].status.st_ino == status.st_ino)
                                return identities->list[i].root;
        }
        return NULL;
}

/* A writable root of this call that lies inside `path` (canonical), or NULL. */
static const char *root_inside(const struct writable_roots *roots, const char *path)
{
        const dsh_policy *policy = roots->policy;

        if (policy->mode != DSH_MODE_WORKSPACE_WRITE)
                return NULL;
        if (dsh_path_is_beneath(policy->workspace_root, path))
                return policy->workspace_root;
        for (char **root = policy->additional_writable_roots; root && *root; root++)
                if (dsh_path_is_beneath(*root, path))
                        return *root;
        if (roots->host_temp_area && dsh_path_is_beneath(roots->host_temp_area, path))
                return roots->host_temp_area;
        for (char *const *directory = roots->extra; directory && *directory; directory++)
                if (dsh_path_is_beneath(*directory, path))
                        return *directory;
        return NULL;
}

/* ------------------------------------------------------------------ routes -- */

/*
 * Walks absolute `path` component by component as the kernel would, and
 * returns (new string) the first symlink on the way whose directory lies
 * beneath a writable root — one the command could replace to repoint the
 * route — or NULL when there is none (errno 0), or NULL with errno set when
 * the walk itself fails (ELOOP, ENOMEM).  A missing component ends the walk:
 * what does not exist yet is not reached through anything.
 */
static char *repointable_symlink_on_route(const struct writable_roots *roots, const char *path)
{
        char walked[PATH_MAX] = "", pending[PATH_MAX * 2];
        int followed = 0;

        if (snprintf(pending, sizeof(pending), "%s", path) >= (int) sizeof(pending)) {
                errno = ENAMETOOLONG;
                return NULL;
        }
        for (;;) {
                char *component = pending, next[PATH_MAX], target[PATH_MAX];
                size_t length;
                struct stat status;
                ssize_t target_length;

                while (*component == '/')
                        component++;
                if (!*component)
                        break;
                length = strcspn(component, "/");
                if (length == 1 && component[0] == '.') {
                        memmove(pending, component + length, strlen(component + length) + 1);
                        continue;
                }
                if (length == 2 && component[0] == '.' && component[1] == '.') {
                        char *slash = strrchr(walked, '/');

                        if (slash)
                                *slash = '\0';
                        memmove(pending, component + length, strlen(component + length) + 1);
                        continue;
                }
                if (snprintf(next, sizeof(next), "%s/%.*s", walked, (int) length, component) >= (int) sizeof(next)) {
                        errno = ENAMETOOLONG;
                        return NULL;
                }
                memmove(pending, component + length, strlen(component + length) + 1);
                if (lstat(next, &status) < 0)
                        break;
                if (!S_ISLNK(status.st_mode)) {
                        memcpy(walked, next, strlen(next) + 1);
                        continue;
                }
                if (root_holding(roots, walked[0] ? walked : "/")) {
                        errno = 0;
                        return strdup(next);
                }
                if (++followed > MAX_ROUTE_SYMLINKS) {
                        errno = ELOOP;
                        return NULL;
                }
                target_length = readlink(next, target, sizeof(target) - 1);
                if (target_length < 0)
                        return NULL;
                target[target_length] = '\0';
                /* The rest of the route now continues from the link's target. */
                if (strlen(target) + strlen(pending) + 2 > sizeof(pending)) {
                        errno = ENAMETOOLONG;
                        return NULL;
                }
                memmove(pending + strlen(target) + 1, pending, strlen(pending) + 1);
                memcpy(pending, target, strlen(target));
                pending[strlen(target)] = '/';
                if (target[0] == '/')
                        walked[0] = '\0';
        }
        errno = 0;
        return NULL;
}

/* ---------------------------------------------------------------- runners -- */

static int refuse_runner_root(const struct writable_roots *roots, const char *runner, dsh_error *error)
{
        dsh_autofree char *canonical = runner ? dsh_path_canonical(runner) : NULL;
        const char *root = canonical ? root_holding(roots, canonical) : NULL;

        if (!root && canonical && (root = root_aliasing(roots, canonical)))
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                                     "writable root \"%s\" is another name (a bind mount) for a directory that "
                                     "holds \"%s\", which the sandbox runs or loads to confine later commands. "
                                     "Use a narrower root",
                                     root, canonical);
        if (!root)
                return 0;
        return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                             "writable root \"%s\" contains \"%s\", which the sandbox runs or loads to confine later "
                             "commands: a confined command could replace it and every later call would run it "
                             "unconfined. Use a narrower root",
                             root, canonical);
}

/*
 * Every runner any later call could start (`runners`, whether or not it
 * exists now: a bwrap planted where the trusted lookup would find it is as
 * dangerous as one replaced), what the loader reads to start them, and the
 * programs the deployment names as trusted.
 */
static int check_runners(const dsh_protections *protections, char *const *runners, const struct writable_roots *roots,
                         dsh_error *error)
{
        int result = 0;

        for (char *const *path = runners; result == 0 && path && *path; path++)
                result = refuse_runner_root(roots, *path, error);
        for (const char *const *path = loader_paths; result == 0 && *path; path++)
                result = refuse_runner_root(roots, *path, error);
        for (char **path = protections->executables; result == 0 && path && *path; path++)
                result = refuse_runner_root(roots, *path, error);
        return result;
}

/* ------------------------------------------------------------- own files -- */

/* Adds every directory strictly between `root` and `path` (both canonical) to the pins. */
static int pin_ancestors(dsh_shield *shield, const char *root, const char *path)
{
        size_t root_length = strcmp(root, "/") == 0 ? 0 : strlen(root);
        const char *cursor = path + root_length;

        while ((cursor = strchr(cursor + 1, '/'))) {
                dsh_autofree char *directory = strndup(path, (size_t) (cursor - path));

                if (!directory)
                        return -ENOMEM;
                if (!strv_contains(shield->pins, directory) && dsh_strv_append(&shield->pins, directory) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int hold_back(dsh_shield *shield, const char *root, const char *path)
{
        if (!dsh_path_is_beneath(path, root))
                return -EXDEV;  /* never pin or bind anything outside the writable root that holds it */
        if (pin_ancestors(shield, root, path) < 0)
                return -ENOMEM;
        if (strv_contains(shield->read_only, path))
                return 0;
        return dsh_strv_append(&shield->read_only, path);
}

static int shield_own_file(const struct writable_roots *roots, const char *given, dsh_shield *shield,
                           dsh_error *error)
{
        dsh_autofree char *symlink = repointable_symlink_on_route(roots, given);
        dsh_autofree char *path = NULL;
        const char *root;

        if (symlink)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                                     "the sandbox's own file \"%s\" is reached through the symlink \"%s\", which a "
                                     "confined command of this call could repoint: later calls would read another "
                                     "file. Use a narrower root",
                                     given, symlink);
        if (errno != 0)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, errno,
                                     "cannot resolve the protected path \"%s\": %s", given, strerror(errno));
        path = dsh_path_canonical(given);
        if (!path)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, errno,
                                     "cannot resolve the protected path \"%s\": %s", given, strerror(errno));
        root = root_inside(roots, path);
        if (root)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                                     "writable root \"%s\" lies inside \"%s\", the sandbox's own files: a confined "
                                     "command could change the policy of later calls",
                                     root, path);
        root = root_holding(roots, path);
        if (!root && (root = root_aliasing(roots, path)))
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                                     "writable root \"%s\" is another name (a bind mount) for a directory that "
                                     "holds \"%s\", the sandbox's own files: a confined command could change the "
                                     "policy of later calls. Use a narrower root",
                                     root, path);
        if (root && hold_back(shield, root, path) < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return 0;
}

/* -------------------------------------------------------- protected subpaths -- */

struct subpath_plan {
        const dsh_protections *protections;
        struct writable_roots *roots;
        dsh_shield *shield;
        bool with_subpaths;
        size_t git_directories;
};


/* Records that `path` cannot be held back, and why (`why` continues the sentence after the path). */
static int note_unprotected(struct subpath_plan *plan, const char *path, const char *why, const char *detail)
{
        char *sentence = NULL;
        int result;

        plan->shield->has_subpaths = true;
        if (!plan->with_subpaths)
                return 0;
        if (asprintf(&sentence, "%s %s%s", path, why, detail) < 0)
                return -ENOMEM;
        result = strv_contains(plan->shield->unprotected, sentence) ? 0 : dsh_strv_append(&plan->shield->unprotected,
                                                                                          sentence);
        free(sentence);
        return result;
}

static int keep_absent(struct subpath_plan *plan, const char *holder, const char *path);

/*
 * A git subpath that is missing while its directory exists (`.git` without
 * `hooks`): nothing can be bound over a missing name without creating it on
 * the host, so it is kept absent like a missing launch config — the
 * supervisor refuses its creation during the call (both backends), and a
 * spawn moves aside what appeared once the command is gone.  Kept by its
 * canonical name (the directory resolved, the name joined), which is what
 * the supervisor and the audit compare; a directory that resolves outside
 * its holder is a gap, reported.
 */
static int keep_missing(struct subpath_plan *plan, const char *holder, const char *path)
{
        dsh_autofree char *directory = strdup(path);
        dsh_autofree char *canonical_directory = NULL;
        dsh_autofree char *canonical = NULL;
        char *slash = directory ? strrchr(directory, '/') : NULL;

        if (!directory)
                return -ENOMEM;
        if (!slash || slash == directory || !holder)
                return note_unprotected(plan, path,
                                        "does not exist, and it cannot be held back without creating it on the host",
                                        "");
        *slash = '\0';
        canonical_directory = dsh_path_canonical(directory);
        if (!canonical_directory)
                return -errno;
        if (asprintf(&canonical, "%s/%s", strcmp(canonical_directory, "/") == 0 ? "" : canonical_directory,
                     slash + 1) < 0)
                return -ENOMEM;
        if (!dsh_path_is_beneath(canonical, holder))
                return note_unprotected(plan, path, "moved while the sandbox examined it", "");
        plan->shield->has_subpaths = true;
        return keep_absent(plan, holder, canonical);
}

/*
 * One protected candidate `path` (lexical, absolute) that the writable root
 * or git directory `holder` contains.  `required_to_exist`: a missing entry
 * is a gap to report (its directory exists, so the command could create it);
 * otherwise it is simply not there to protect.
 */
static int protect_candidate(struct subpath_plan *plan, const char *holder, const char *path, bool required_to_exist)
{
        dsh_autofree char *symlink = repointable_symlink_on_route(plan->roots, path);
        dsh_autofree char *canonical = NULL;
        dsh_autofree char *parent = strdup(path);
        struct stat status;
        char *slash;

        if (symlink)
                return note_unprotected(plan, path, "is reached through a symlink the command could repoint: ",
                                        symlink);
        if (!parent)
                return -ENOMEM;
        slash = strrchr(parent, '/');
        if (slash && slash != parent)
                *slash = '\0';
        if (stat(parent, &status) < 0 || !S_ISDIR(status.st_mode))
                return 0;  /* nothing there: nothing that git (or anyone) reads later */
        if (lstat(path, &status) < 0) {
                if (!required_to_exist)
                        return 0;
                return keep_missing(plan, holder, path);
        }
        plan->shield->has_subpaths = true;
        if (!plan->with_subpaths)
                return 0;
        canonical = dsh_path_canonical(path);
        if (!canonical)
                return -errno;
        /*
         * Resolved after the route was checked: a component swapped for a
         * symlink in between (a process of an earlier call racing this one)
         * shows here as a path outside its holder.  Nothing is pinned or
         * bound for it then — a pin outside the roots would be a writable
         * bind of whatever the swap pointed at.
         */
        if (!holder || !dsh_path_is_beneath(canonical, holder))
                return note_unprotected(plan, path, "moved while the sandbox examined it", "");
        return hold_back(plan->shield, holder, canonical);
}

/* The writable root or extra git directory that holds `path`, for pinning. */
static const char *holder_of(struct subpath_plan *plan, const char *path)
{
        const char *root = root_holding(plan->roots, path);

        if (root)
                return root;
        for (char **directory = plan->shield->extra_writable; directory && *directory; directory++)
                if (dsh_path_is_beneath(path, *directory))
                        return *directory;
        return NULL;
}

static int protect_git_directory(struct subpath_plan *plan, const char *gitdir, bool primary);

/*
 * The git directories of the submodules of `gitdir` (git-layout.h), each
 * protected in turn, nested submodules included.
 */
static int protect_submodules(struct subpath_plan *plan, const char *gitdir)
{
        char **modules = NULL;
        int result = dsh_git_layout_submodule_directories(gitdir, &modules);

        for (char **module = modules; result == 0 && module && *module; module++)
                result = protect_git_directory(plan, *module, true);
        dsh_strv_free(modules);
        return result;
}

/*
 * git reads `commondir` in any git directory and takes hooks and config
 * from where it points, so one created in a repository's own git directory
 * redirects them past every bind.  Git itself writes it only in a linked
 * worktree's private directory.  One already there is held back and
 * reported; a missing one cannot be held back without creating it, so it
 * must still be missing when the command is gone (checked then, when the
 * backend spawns the command itself; a confined argv run by someone else
 * says so as a gap).
 */
static int watch_commondir(struct subpath_plan *plan, const char *holder, const char *gitdir)
{
        dsh_autofree char *commondir = NULL;
        struct stat status;

        if (asprintf(&commondir, "%s/commondir", gitdir) < 0)
                return -ENOMEM;
        if (lstat(commondir, &status) == 0) {
                int result = note_unprotected(plan, commondir,
                                              "sends git to another directory's hooks and config; git never writes "
                                              "it in a repository's own git directory, so remove it if you did not",
                                              "");

                return result < 0 ? result : protect_candidate(plan, holder, commondir, false);
        }
        plan->shield->has_subpaths = true;
        if (!plan->with_subpaths || strv_contains(plan->shield->must_stay_absent, commondir))
                return 0;
        return dsh_strv_append(&plan->shield->must_stay_absent, commondir);
}

/*
 * Protects the ".git/"-subpaths in git directory `gitdir`, then in the git
 * directories of its submodules (gitdir/modules/..., nested).  `primary`:
 * git reads hooks and config here (a worktree's private directory is not
 * primary: git reads those from the common directory).
 */
static int protect_git_directory(struct subpath_plan *plan, const char *gitdir, bool primary)
{
        const char *holder = holder_of(plan, gitdir);
        int result = 0;

        if (!holder)
                return 0;
        if (++plan->git_directories > MAX_GIT_DIRECTORIES)
                return note_unprotected(plan, gitdir,
                                        "is beyond the number of git directories the sandbox examines: its hooks "
                                        "and config are not held back",
                                        "");
        if (primary && dsh_strv_length(plan->protections->subpaths) > 0)
                result = watch_commondir(plan, holder, gitdir);
        for (char **subpath = plan->protections->subpaths; result == 0 && subpath && *subpath; subpath++) {
                dsh_autofree char *candidate = NULL;

                if (strncmp(*subpath, ".git/", 5) != 0)
                        continue;
                if (asprintf(&candidate, "%s/%s", gitdir, *subpath + 5) < 0)
                        return -ENOMEM;
                result = protect_candidate(plan, holder, candidate, primary);
                /*
                 * config.worktree is a config too, once the repository turns on
                 * extensions.worktreeConfig (sparse checkout does): held back
                 * beside config, and reported when missing while git would
                 * read it.
                 */
                if (result == 0 && strcmp(*subpath, ".git/config") == 0) {
                        dsh_autofree char *worktree_config = NULL;

                        if (asprintf(&worktree_config, "%s/config.worktree", gitdir) < 0)
                                return -ENOMEM;
                        result = protect_candidate(plan, holder, worktree_config,
                                                   dsh_git_layout_worktree_config_enabled(gitdir));
                }
        }
        return result < 0 ? result : protect_submodules(plan, gitdir);
}
/*
 * A ".git" file (linked worktree, submodule checkout) names the real git
 * directory; a linked worktree's also names the common directory, where git
 * keeps hooks, config, objects and refs.  The ".git" file itself, and in the
 * git directory the `commondir` and `gitdir` files, are held back too: a
 * command that rewrote them would send the user's next git command to hooks
 * of its choosing.  Git must write the common directory (index, refs,
 * objects), so for a linked worktree that checks out (see
 * dsh_git_layout_worktree_common()) a backend that can hold hooks and config back
 * makes it writable for this call — minus what is protected; the shield then
 * treats it like a writable root (no runner, none of the sandbox's own files
 * inside).  A git directory outside every root that does not check out is
 * not made writable: nothing in it can be planted by this call.
 */
static int protect_linked_git_directory(struct subpath_plan *plan, const char *root, const char *dotgit)
{
        dsh_autofree char *gitdir = dsh_git_layout_gitdir_of_file(root, dotgit);
        dsh_autofree char *common = NULL;
        int result = protect_candidate(plan, root, dotgit, true);

        if (result < 0 || !gitdir)
                return result;
        if (!root_holding(plan->roots, gitdir)) {
                if (!plan->with_subpaths)
                        return 0;  /* Landlock makes nothing outside the roots writable */
                common = dsh_git_layout_worktree_common(dotgit, gitdir);
                if (!common)
                        return 0;
                if (!strv_contains(plan->shield->extra_writable, common) &&
                    dsh_strv_append(&plan->shield->extra_writable, common) < 0)
                        return -ENOMEM;
                plan->roots->extra = plan->shield->extra_writable;
        } else {
                common = dsh_git_layout_commondir(gitdir);
        }
        if (common && root_holding(plan->roots, common))
                result = protect_git_directory(plan, common, true);
        for (const char *const *name = (const char *const[]) { "commondir", "gitdir", NULL }; result == 0 && *name;
             name++) {
                dsh_autofree char *path = NULL;

                if (asprintf(&path, "%s/%s", gitdir, *name) < 0)
                        return -ENOMEM;
                result = protect_candidate(plan, root_holding(plan->roots, gitdir), path, false);
        }
        if (result == 0)
                result = protect_git_directory(plan, gitdir, !common);
        return result;
}

static bool is_home_subpath(const char *subpath)
{
        return strncmp(subpath, DSH_SHIELD_HOME_PREFIX, strlen(DSH_SHIELD_HOME_PREFIX)) == 0;
}

/*
 * Keeps `path` (absolute, beneath `holder`; missing now) absent.  Nothing
 * can be bound over a name that does not exist without creating it on the
 * host, so bwrap checks after the command that it is still missing
 * (dsh_shield_audit()), and the file guard refuses to create it.  The audit
 * walks the path by fds and follows no symlink, moving aside the first one
 * it meets: sound only because the path holds no symlink now (its base, a
 * root or a home, is canonical, and protect_entry() found no symlink after
 * it), so that any symlink met later is one the command planted.
 */
static int keep_absent(struct subpath_plan *plan, const char *holder, const char *path)
{
        if (!plan->with_subpaths)
                return 0;  /* a missing one is no gap to report (shield.h): Landlock keeps nothing */
        if (!dsh_path_is_beneath(path, holder))
                return -EXDEV;
        if (strv_contains(plan->shield->kept_absent, path))
                return 0;
        return dsh_strv_append(&plan->shield->kept_absent, path);
}

/*
 * A protected subpath that is not git's (the agent's launch config, a
 * home's startup files): `name` in canonical directory `base` (a writable
 * root, or a home that `holder` holds).  Held back when it exists, kept
 * absent when it does not; reached through a symlink the command could
 * repoint, it is a gap like any other.  A single name missing in `base`
 * needs no walk of its route: `base` is canonical (the cost matters here:
 * two dozen names per root, at every call).
 */
static int protect_entry(struct subpath_plan *plan, const char *holder, const char *base, const char *name)
{
        dsh_autofree char *path = NULL;
        dsh_autofree char *symlink = NULL;
        struct stat status;

        if (asprintf(&path, "%s/%s", strcmp(base, "/") == 0 ? "" : base, name) < 0)
                return -ENOMEM;
        if (lstat(path, &status) == 0 || (errno != ENOENT && errno != ENOTDIR))
                return protect_candidate(plan, holder, path, false);
        if (!strchr(name, '/'))
                return keep_absent(plan, holder, path);
        symlink = repointable_symlink_on_route(plan->roots, path);
        if (symlink)
                return note_unprotected(plan, path, "is reached through a symlink the command could repoint: ",
                                        symlink);
        if (errno != 0)
                return note_unprotected(plan, path, "cannot be examined: ", strerror(errno));
        return keep_absent(plan, holder, path);
}

char **dsh_shield_user_homes(void)
{
        dsh_autofree char *listed = dsh_passwd_home();
        const char *candidates[] = { getenv("HOME"), listed };
        char **homes = NULL;

        for (size_t i = 0; i < sizeof(candidates) / sizeof(*candidates); i++) {
                dsh_autofree char *canonical = NULL;
                struct stat status;

                if (!candidates[i] || candidates[i][0] != '/' || stat(candidates[i], &status) < 0 ||
                    !S_ISDIR(status.st_mode))
                        continue;
                canonical = dsh_path_canonical(candidates[i]);
                if (canonical && !strv_contains(homes, canonical) && dsh_strv_append(&homes, canonical) < 0) {
                        dsh_strv_free(homes);
                        return NULL;
                }
        }
        return homes;
}

/*
 * The startup files of a home that a writable root holds (the root is the
 * home or an ancestor): a shell, git, npm or pip run by the user later, out
 * of any sandbox, reads them.  The "~/" subpaths apply there, and only there.
 */
static int protect_homes(struct subpath_plan *plan)
{
        char **homes = dsh_shield_user_homes();
        int result = 0;

        for (char **home = homes; result == 0 && home && *home; home++) {
                const char *holder = root_holding(plan->roots, *home);

                for (char **subpath = plan->protections->subpaths; holder && result == 0 && subpath && *subpath;
                     subpath++) {
                        if (is_home_subpath(*subpath))
                                result = protect_entry(plan, holder, *home,
                                                       *subpath + strlen(DSH_SHIELD_HOME_PREFIX));
                }
        }
        dsh_strv_free(homes);
        return result;
}

static int protect_root(struct subpath_plan *plan, const char *root)
{
        dsh_autofree char *dotgit = NULL;
        struct stat status;
        int result = 0;

        for (char **subpath = plan->protections->subpaths; result == 0 && subpath && *subpath; subpath++) {
                if (strncmp(*subpath, ".git/", 5) == 0 || is_home_subpath(*subpath))
                        continue;  /* mapped to the real git directories below; a home's in protect_homes() */
                result = protect_entry(plan, root, root, *subpath);
        }
        if (result < 0 || asprintf(&dotgit, "%s/.git", strcmp(root, "/") == 0 ? "" : root) < 0)
                return result < 0 ? result : -ENOMEM;
        if (lstat(dotgit, &status) < 0)
                return 0;
        if (S_ISLNK(status.st_mode))
                return note_unprotected(plan, dotgit, "is a symlink the command could repoint", "");
        if (S_ISREG(status.st_mode))
                return protect_linked_git_directory(plan, root, dotgit);
        if (S_ISDIR(status.st_mode))
                return protect_git_directory(plan, dotgit, true);
        return 0;
}

static int plan_subpaths(struct subpath_plan *plan, const dsh_policy *policy)
{
        int result;

        if (policy->mode != DSH_MODE_WORKSPACE_WRITE || dsh_strv_length(plan->protections->subpaths) == 0)
                return 0;
        result = protect_root(plan, policy->workspace_root);
        for (char **root = policy->additional_writable_roots; result == 0 && root && *root; root++)
                result = protect_root(plan, *root);
        return result < 0 ? result : protect_homes(plan);
}

static int compare_paths(const void *left, const void *right)
{
        return strcmp(*(char *const *) left, *(char *const *) right);
}

int dsh_shield_plan(const dsh_policy *policy, const dsh_protections *protections, char *const *runners,
                    const char *host_temp_area, bool with_subpaths, dsh_shield *shield, dsh_error *error)
{
        struct root_identities identities = { NULL, 0, 0, false };
        struct writable_roots roots = { policy, host_temp_area, NULL, &identities };
        struct subpath_plan plan = { protections, &roots, shield, with_subpaths, 0 };
        int result;

        *shield = (dsh_shield) DSH_SHIELD_INIT;
        if (policy->mode != DSH_MODE_WORKSPACE_WRITE)
                return 0;  /* read-only grants no root at all: nothing can be planted or replaced */
        /*
         * The subpaths first: a linked worktree's common directory they make
         * writable is a writable root for every check after them.
         */
        result = plan_subpaths(&plan, policy);
        if (result < 0)
                result = dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, -result,
                                       "cannot plan the protected subpaths: %s", strerror(-result));
        if (result == 0)
                result = check_runners(protections, runners, &roots, error);
        for (char **given = protections->paths; result == 0 && given && *given; given++)
                result = shield_own_file(&roots, *given, shield, error);
        free(identities.list);
        if (result < 0) {
                dsh_shield_clear(shield);
                return result;
        }
        /* Parents sort before their children: each pin is made before anything beneath it. */
        if (shield->pins)
                qsort(shield->pins, dsh_strv_length(shield->pins), sizeof(char *), compare_paths);
        if (shield->read_only)
                qsort(shield->read_only, dsh_strv_length(shield->read_only), sizeof(char *), compare_paths);
        return 0;
}

/*
 * Renames `name` in `directory` to NAME.dsh-sandbox-quarantine-PID-RANDOM,
 * never over an existing entry.  The name is unpredictable and a few are
 * tried: the command, which knows the pattern, could otherwise plant a
 * non-empty directory under the one name tried and make the move fail,
 * keeping its entry in place.  0, or the errno of the last attempt.
 */
static int rename_aside(int directory, const char *name, char **aside)
{
        int last_errno = EEXIST;

        for (int attempt = 0; attempt < 8 && (last_errno == EEXIST || last_errno == ENOTEMPTY); attempt++) {
                unsigned int random_part = 0;

                free(*aside);
                *aside = NULL;
                if (getrandom(&random_part, sizeof(random_part), 0) != (ssize_t) sizeof(random_part) ||
                    asprintf(aside, "%s.dsh-sandbox-quarantine-%ld-%08x", name, (long) getpid(), random_part) < 0) {
                        *aside = NULL;
                        return ENOMEM;
                }
                if (renameat2(directory, name, directory, *aside, RENAME_NOREPLACE) == 0)
                        return 0;
                last_errno = errno;
                /* A file system without RENAME_NOREPLACE: the random name is as good as free there. */
                if (last_errno == EINVAL && renameat(directory, name, directory, *aside) == 0)
                        return 0;
        }
        return last_errno;
}

/*
 * Moves `name` in `directory` aside and says so in `*warnings`; `shown` is
 * its whole path, appended to `*moved_paths` (when not NULL) once moved.
 * 1 when it was moved.
 */
static int move_aside(int directory, const char *name, const char *shown, char ***warnings, char ***moved_paths)
{
        dsh_autofree char *aside = NULL;
        dsh_autofree char *sentence = NULL;
        int failure = rename_aside(directory, name, &aside);

        if (failure != 0) {
                if (asprintf(&sentence, "the command created %s, which something outside the sandbox would trust "
                                        "later (git's hooks and config, the agent's launch config, a startup file), "
                                        "and it could not be moved aside (%s): remove it",
                             shown, strerror(failure)) >= 0)
                        (void) dsh_strv_append(warnings, sentence);
                return 0;
        }
        if (asprintf(&sentence, "the command created %s, which something outside the sandbox would trust later "
                                "(git's hooks and config, the agent's launch config, a startup file); moved aside "
                                "to %.*s%s",
                     shown, (int) (strlen(shown) - strlen(name)), shown, aside) >= 0)
                (void) dsh_strv_append(warnings, sentence);
        if (moved_paths)
                (void) dsh_strv_append(moved_paths, shown);  /* out of memory: still counted, still in the warning */
        return 1;
}

/*
 * One step of walk_to_directory(): the component at `*cursor` in `path`,
 * looked up in `directory` without following it.  The directory to go on in
 * (a new fd), or -1 where the walk ends: the component is missing (nothing
 * appeared beneath it), is not a directory, or is a symlink, which is moved
 * aside (setting `*moved`).
 */
static int audit_component(int directory, const char *path, const char **cursor, char ***warnings,
                           char ***moved_paths, int *moved)
{
        dsh_autofree char *name = NULL;
        dsh_autofree char *shown = NULL;
        struct stat status;
        size_t length = strcspn(*cursor, "/");

        name = strndup(*cursor, length);
        if (!name || fstatat(directory, name, &status, AT_SYMLINK_NOFOLLOW) < 0)
                return -1;
        *cursor += length;
        if (S_ISLNK(status.st_mode)) {
                shown = strndup(path, (size_t) (*cursor - path));
                if (shown)
                        *moved += move_aside(directory, name, shown, warnings, moved_paths);
                return -1;
        }
        if (!S_ISDIR(status.st_mode))
                return -1;
        return openat(directory, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * Opens canonical directory `path`, walked from "/" by fds, following no
 * symlink: what was a directory when the call was planned and is a symlink
 * now was replaced by the command (it could change only its writable roots;
 * every path audited held no symlink when planned: keep_absent()), and a
 * symlink leads the user's next reader wherever the command chose, so the
 * first one met is moved aside.  The fd, or -1 when the walk ended early.
 */
static int walk_to_directory(const char *path, char ***warnings, char ***moved_paths, int *moved)
{
        int directory = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        const char *cursor = path;

        while (directory >= 0) {
                int next;

                while (*cursor == '/')
                        cursor++;
                if (!*cursor)
                        return directory;
                next = audit_component(directory, path, &cursor, warnings, moved_paths, moved);
                close(directory);
                directory = next;
        }
        return -1;
}

/*
 * The paths come in runs of one directory (a root's or a home's names), so
 * the directory walked to for one is kept for the next one in it: one walk
 * per directory, one fstatat() per name.
 */
int dsh_shield_audit(char *const *must_stay_absent, char ***warnings, char ***moved_paths)
{
        char *walked = NULL;
        int directory = -1, moved = 0;

        for (char *const *path = must_stay_absent; path && *path; path++) {
                const char *slash = strrchr(*path, '/');
                dsh_autofree char *parent = slash ? strndup(*path, slash == *path ? 1 : (size_t) (slash - *path)) : NULL;
                struct stat status;

                if (!parent || !slash[1])
                        continue;
                if (!walked || strcmp(walked, parent) != 0) {
                        if (directory >= 0)
                                close(directory);
                        directory = walk_to_directory(parent, warnings, moved_paths, &moved);
                        free(walked);
                        walked = dsh_steal_pointer(&parent);
                }
                if (directory >= 0 && fstatat(directory, slash + 1, &status, AT_SYMLINK_NOFOLLOW) == 0)
                        moved += move_aside(directory, slash + 1, *path, warnings, moved_paths);
        }
        free(walked);
        if (directory >= 0)
                close(directory);
        return moved;
}
