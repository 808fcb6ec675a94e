/* SPDX-License-Identifier: MIT */
/*
 * The masks under bwrap, and the other mounts made last (bwrap-masks.h).
 * What the command — uid 0 inside,
 * every capability dropped, no_new_privs, the metadata filter installed —
 * could do about a mask, and what answers it (tests/reach/test_bwrap_masks.py
 * tries each on the real bwrap):
 *
 *  - read it: an existing masked file is the mask file bound over it
 *    (`--ro-bind EMPTY PATH`), zero bytes; a masked directory an empty
 *    tmpfs of mode 0700 (`--perms 0700 --tmpfs PATH --remount-ro PATH`).
 *    Made last, after the roots, the pins, the shield's binds and the
 *    hidden directories, so nothing bound later covers a mask again (bwrap
 *    takes a bind's source from the host, where no mask is).
 *  - write it: both mounts are read-only, so open(O_WRONLY|O_TRUNC), a
 *    create or a mkdir inside fail EROFS and the host file is untouched.
 *    Never /dev/null, nor a writable tmpfs: a write there succeeds and
 *    vanishes, and the command (or the agent reading its output) takes the
 *    change for done.  The mask file is checked before every call that
 *    mounts it (a regular file, zero bytes, no group or other write bit,
 *    no symlink): a file that grew would show its contents in place of every
 *    masked file.  It lies beside the launchers, bound by name in spawn and
 *    confine alike (bwrap closes a --ro-bind-fd's fd after one mount, and
 *    there is one mount per masked file), and no writable root may hold the
 *    launchers' directory (the shield refuses it as it refuses the
 *    launchers).
 *  - rename, unlink or link it: a mount point cannot be renamed or removed
 *    (EBUSY), and a link to it crosses mounts (EXDEV); the host inode
 *    beneath has no name in the sandbox, and open_by_handle_at() needs
 *    CAP_DAC_READ_SEARCH, which is gone.  Unmounting or mounting over needs
 *    CAP_SYS_ADMIN.
 *  - move an ancestor with the mask riding on it: a directory holding a
 *    mount point can be renamed, the mount moves with it, and a later call,
 *    which plans its masks by name again, would find nothing at ~/.ssh and
 *    read ~/elsewhere/id_rsa.  So inside a writable directory every
 *    directory between it and an existing mask is bound onto itself, as the
 *    shield's pins are (made before anything beneath them, by fd in a
 *    spawn): each is a mount point now, and its rename is EBUSY.  The
 *    writable directory itself is a mount point already; above it nothing
 *    is writable.
 *  - change it through the metadata supervisor, which performs chmod,
 *    chown, utimes and xattrs beneath the roots: it opens the target in the
 *    command's own view (the mask, never the secret) and acts only where the
 *    same name beneath the root's host fd reaches that very inode, which a
 *    mask's never does (EACCES).  Each existing mask is also held back there
 *    by name (bwrap-supervisor.c): refused before anything is tried, and
 *    recorded as `masked-path`.
 *  - wait for a name to appear (the user writing ~/.aws while the command
 *    runs), or make a wildcard match a new one: absent masks and closed
 *    directories are handed to dsh-sandbox-exec (`--mask PATH`,
 *    `--mask-closed DIR`), whose own Landlock domain then grants read
 *    entry by entry, enumerated inside the sandbox after these mounts
 *    (core/read-mask.h), so a name made later is unreadable.  An existing
 *    mask is not passed: it is the empty mount, readable as empty.  Inside
 *    a writable root such an absent mask or closed directory is not held —
 *    said (partial), or with requireMasks refused: the inner layer could
 *    hold it (REFER keeps a new file from moving to where it is readable),
 *    but every name made during the call in each directory on its way would
 *    be unreadable too, and with the workspace being the home that is every
 *    new file at its top: ordinary work would break.  On a kernel below
 *    Landlock ABI 2 the command gets no domain of its own, and none of them
 *    is held.
 *  - sit above a writable root: a masked directory that holds the
 *    workspace would hide it; it is not mounted, and said.
 * A mask beneath /tmp that no root (nor the start directory) brings back is
 * not in the sandbox's view at all: its /tmp is the call's own.
 *
 * What this cannot see: another name for the same inode made before the
 * call (a hard link, a bind mount of the home elsewhere), and a concurrent
 * process outside this sandbox that can write the root racing bwrap's
 * mounts by name (as for every bind of the shield).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/path.h"
#include "core/landlock.h"
#include "provider/bwrap-masks.h"

#define MASKS_TEMP_AREA "/tmp"

__attribute__((format(printf, 2, 3))) static int add_sentence(char ***strv, const char *format, ...)
{
        dsh_autofree char *sentence = NULL;
        va_list arguments;
        int length;

        va_start(arguments, format);
        length = vasprintf(&sentence, format, arguments);
        va_end(arguments);
        if (length < 0) {
                sentence = NULL;
                return -ENOMEM;
        }
        return dsh_strv_append(strv, sentence);
}

static bool strv_contains(char *const *strv, const char *value)
{
        for (; strv && *strv; strv++)
                if (strcmp(*strv, value) == 0)
                        return true;
        return false;
}

/* The innermost directory bound writable that holds `path`, or NULL (read-only: none). */
static const char *writable_holder(const dsh_policy *policy, char *const *extra_writable, const char *path)
{
        const char *best = NULL;

        if (policy->mode != DSH_MODE_WORKSPACE_WRITE)
                return NULL;
        if (dsh_path_is_beneath(path, policy->workspace_root))
                best = policy->workspace_root;
        for (int group = 0; group < 2; group++)
                for (char *const *root = group ? extra_writable : policy->additional_writable_roots; root && *root;
                     root++)
                        if (dsh_path_is_beneath(path, *root) && (!best || strlen(*root) > strlen(best)))
                                best = *root;
        return best;
}

/* A root of the policy at or beneath masked directory `path`: a tmpfs there would hide it. */
static const char *root_beneath(const dsh_policy *policy, const char *path)
{
        if (dsh_path_is_beneath(policy->workspace_root, path))
                return policy->workspace_root;
        for (char **root = policy->additional_writable_roots; root && *root; root++)
                if (dsh_path_is_beneath(*root, path))
                        return *root;
        return NULL;
}

/* Adds every directory strictly between `holder` and `path` (canonical, beneath it) to *pins. */
static int pin_between(char ***pins, const char *holder, const char *path)
{
        const char *cursor = path + (strcmp(holder, "/") == 0 ? 0 : strlen(holder));

        while ((cursor = strchr(cursor + 1, '/'))) {
                dsh_autofree char *directory = strndup(path, (size_t) (cursor - path));

                if (!directory)
                        return -ENOMEM;
                if (!strv_contains(*pins, directory) && dsh_strv_append(pins, directory) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int compare_paths(const void *left, const void *right)
{
        return strcmp(*(char *const *) left, *(char *const *) right);
}

/* An existing mask: mounted empty, its ancestors inside a writable directory pinned. */
static int plan_existing(dsh_bwrap_masks *masks, const dsh_mask *mask, const char *holder, char ***pins)
{
        const char *hidden_root = mask->kind == DSH_MASK_DIRECTORY ? root_beneath(masks->policy, mask->path) : NULL;

        if (hidden_root)
                return add_sentence(&masks->not_held,
                                    "the mask %s holds the root %s: bwrap cannot present it empty without hiding the "
                                    "root, so it is not masked", mask->path, hidden_root);
        if (holder && pin_between(pins, holder, mask->path) < 0)
                return -ENOMEM;
        return dsh_strv_append(mask->kind == DSH_MASK_FILE ? &masks->files : &masks->directories, mask->path);
}

/*
 * A name that must stay unreadable if it appears (an absent mask, or a new
 * match in a closed directory): the inner layer's, when the command gets a
 * domain of its own and no writable root holds it.
 */
static int plan_later_name(dsh_bwrap_masks *masks, char ***inner, const char *path, const char *holder,
                           bool absent)
{
        if (holder && absent)
                return add_sentence(&masks->not_held, "the mask %s does not exist and lies inside the writable root "
                                    "%s: a file created there during the call would be readable", path, holder);
        if (holder)
                return add_sentence(&masks->not_held, "the names the masks of %s match lie inside the writable root "
                                    "%s: a file created there during the call would be readable", path, holder);
        if (dsh_landlock_abi() >= 2)
                return dsh_strv_append(inner, path);
        if (absent)
                return add_sentence(&masks->not_held, "the mask %s does not exist, and this kernel gives the "
                                    "command no Landlock domain of its own (ABI below 2): a file created there "
                                    "during the call would be readable", path);
        return add_sentence(&masks->not_held, "the names the masks of %s match would be readable if they "
                            "appeared during the call: this kernel gives the command no Landlock domain of its "
                            "own (ABI below 2)", path);
}

/*
 * A regular file, zero bytes, that no group or other user may write,
 * reached with no symlink at its last component.  Anything else (missing,
 * grown, replaced) would put its contents, or nothing at all, where a
 * secret was: the call is refused rather than mount it.
 */
static int check_mask_file(const char *path, dsh_mode mode, dsh_error *error)
{
        struct stat status;
        dsh_autofree char *detail = NULL;

        if (lstat(path, &status) == 0 && S_ISREG(status.st_mode) && status.st_size == 0 &&
            !(status.st_mode & (S_IWGRP | S_IWOTH)))
                return 0;
        if (asprintf(&detail, "the mask file %s is missing or not an empty read-only file", path) < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return dsh_error_set_unavailable(error, mode, detail);
}

/* The facts: every path of the plan but the masks and closed directories not held. */
static int plan_facts(dsh_bwrap_masks *masks, const dsh_mask_plan *plan, char *const *unheld)
{
        char **paths = dsh_mask_plan_paths(plan);

        if (!paths)
                return plan->count || plan->closed_directories ? -ENOMEM : 0;
        for (char **path = paths; *path; path++) {
                dsh_autofree char *parent = strdup(*path);
                char *slash = parent ? strrchr(parent, '/') : NULL;
                bool is_mask = false;

                if (!parent) {
                        dsh_strv_free(paths);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < plan->count; i++)
                        is_mask = is_mask || strcmp(plan->masks[i].path, *path) == 0;
                if (slash)
                        *slash = '\0';
                /* A closed directory's "DIR/PATTERN" goes with its directory; a mask's own path with itself. */
                if (strv_contains(unheld, *path) || (!is_mask && slash && strv_contains(unheld, parent)))
                        continue;
                if (dsh_strv_append(&masks->masked, *path) < 0) {
                        dsh_strv_free(paths);
                        return -ENOMEM;
                }
        }
        dsh_strv_free(paths);
        return 0;
}

static int plan_all(dsh_bwrap_masks *masks, const dsh_mask_plan *plan, char *const *extra_writable, char ***pins,
                    char ***unheld)
{
        for (size_t i = 0; i < plan->count; i++) {
                const dsh_mask *mask = &plan->masks[i];
                const char *holder = writable_holder(masks->policy, extra_writable, mask->path);
                size_t before = dsh_strv_length(masks->not_held);
                int result = mask->kind == DSH_MASK_ABSENT
                                     ? plan_later_name(masks, &masks->inner_masked, mask->path, holder, true)
                                     : plan_existing(masks, mask, holder, pins);

                if (result == 0 && dsh_strv_length(masks->not_held) > before)
                        result = dsh_strv_append(unheld, mask->path);
                if (result < 0)
                        return result;
        }
        for (char **directory = plan->closed_directories; directory && *directory; directory++) {
                const char *holder = writable_holder(masks->policy, extra_writable, *directory);
                size_t before = dsh_strv_length(masks->not_held);
                int result = plan_later_name(masks, &masks->inner_closed, *directory, holder, false);

                if (result == 0 && dsh_strv_length(masks->not_held) > before)
                        result = dsh_strv_append(unheld, *directory);
                if (result < 0)
                        return result;
        }
        if (*pins)
                qsort(*pins, dsh_strv_length(*pins), sizeof(char *), compare_paths);
        return 0;
}

int dsh_bwrap_masks_plan(dsh_bwrap_masks *masks, const dsh_protections *protections,
                         const dsh_prepared_policy *prepared, char *const *extra_writable, char ***pins,
                         dsh_error *error)
{
        const dsh_mask_plan *plan = &prepared->masks;
        char **unheld = NULL;
        int result;

        masks->policy = &prepared->policy;
        result = plan_all(masks, plan, extra_writable, pins, &unheld);
        /* What the plan knows no backend holds (masks.h: a route a later call would follow elsewhere). */
        for (char **sentence = plan->unheld; result == 0 && sentence && *sentence; sentence++)
                result = dsh_strv_append(&masks->not_held, *sentence) < 0 ? -ENOMEM : 0;
        if (result == 0)
                result = plan_facts(masks, plan, unheld);
        dsh_strv_free(unheld);
        if (result < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, -result, "out of memory");
        if (masks->not_held && protections->require_masks)
                return dsh_error_set(error, DSH_ERROR_SANDBOX_PREPARATION_FAILED, EPERM,
                                     "a mask cannot be held and requireMasks is set: %s", masks->not_held[0]);
        if (!masks->files)
                return 0;
        masks->empty_file = dsh_protections_launcher_path(protections, DSH_BWRAP_MASK_FILE_NAME);
        if (!masks->empty_file)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        return check_mask_file(masks->empty_file, prepared->policy.mode, error);
}

/*
 * Whether the command sees `path` at all: everything but the host's /tmp,
 * which the call's own /tmp replaces, except what is bound back over it:
 * the roots, and the directory the command starts in (the caller's cwd,
 * `start_directory` when the caller named one).  Both are taken as seen, so
 * a mask is mounted wherever it might be visible.
 */
static bool beneath_start(const char *path, const char *directory)
{
        return directory && strcmp(directory, MASKS_TEMP_AREA) != 0 && dsh_path_is_beneath(path, directory);
}

static bool in_view(const dsh_bwrap_masks *masks, const char *path, const char *start_directory)
{
        const dsh_policy *policy = masks->policy;
        dsh_autofree char *cwd = NULL;

        if (!dsh_path_is_beneath(path, MASKS_TEMP_AREA) || dsh_path_is_beneath(path, policy->workspace_root))
                return true;
        for (char **root = policy->additional_writable_roots; root && *root; root++)
                if (dsh_path_is_beneath(path, *root))
                        return true;
        cwd = getcwd(NULL, 0);
        return beneath_start(path, start_directory) || beneath_start(path, cwd);
}

static int append_words(char ***argv, const char *const *words)
{
        for (; *words; words++)
                if (dsh_strv_append(argv, *words) < 0)
                        return -ENOMEM;
        return 0;
}

/*
 * An empty read-only tmpfs over each hidden directory (the remote's ssh
 * control directories, protections.h).  Read-only is not enough for them:
 * connect() to a socket needs no write access to its mount, and the master
 * behind it does what any client asks.  Each was made beforehand when
 * missing (dsh_protections_make_hidden()), so a master started while the
 * command runs is hidden too: the host's new directory would otherwise
 * appear through the read-only view of "/".
 */
/*
 * Each is mounted at its canonical spelling: the list is spelled under
 * $HOME as given, and bwrap resolves a destination's symlinks beneath its
 * new root, where an absolute link (a HOME that is a symlink to the real
 * home) leads nowhere: the mount failed and every call was refused.
 */
static int append_hidden(char ***argv, char *const *hidden)
{
        for (char *const *path = hidden; path && *path; path++) {
                dsh_autofree char *canonical = access(*path, F_OK) == 0 ? dsh_path_canonical(*path) : NULL;
                const char *words[] = { "--tmpfs", canonical, "--remount-ro", canonical, NULL };

                if (!canonical && errno == ENOMEM)
                        return -ENOMEM;
                if (canonical && append_words(argv, words) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int dsh_bwrap_append_last_mounts(char ***argv, char *const *hidden, const dsh_bwrap_masks *masks,
                                 const char *start_directory)
{
        if (append_hidden(argv, hidden) < 0)
                return -ENOMEM;
        for (char **path = masks->files; path && *path; path++) {
                const char *words[] = { "--ro-bind", masks->empty_file, *path, NULL };

                if (in_view(masks, *path, start_directory) && append_words(argv, words) < 0)
                        return -ENOMEM;
        }
        for (char **path = masks->directories; path && *path; path++) {
                const char *words[] = { "--perms", "0700", "--tmpfs", *path, "--remount-ro", *path, NULL };

                if (in_view(masks, *path, start_directory) && append_words(argv, words) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int dsh_bwrap_masks_append_exec_options(char ***argv, const dsh_bwrap_masks *masks, const char *start_directory)
{
        for (int group = 0; group < 2; group++)
                for (char **path = group ? masks->inner_closed : masks->inner_masked; path && *path; path++) {
                        const char *words[] = { group ? "--mask-closed" : "--mask", *path, NULL };

                        if (in_view(masks, *path, start_directory) && append_words(argv, words) < 0)
                                return -ENOMEM;
                }
        return 0;
}

int dsh_bwrap_masks_report(dsh_confined_argv *out, const dsh_bwrap_masks *masks)
{
        for (char **reason = masks->not_held; reason && *reason; reason++)
                if (dsh_confined_argv_add_partial_reason(out, *reason) < 0)
                        return -ENOMEM;
        dsh_strv_free(out->masked);
        out->masked = NULL;
        if (masks->masked && !(out->masked = dsh_strv_copy(masks->masked)))
                return -ENOMEM;
        return 0;
}

void dsh_bwrap_masks_clear(dsh_bwrap_masks *masks)
{
        free(masks->empty_file);
        dsh_strv_free(masks->files);
        dsh_strv_free(masks->directories);
        dsh_strv_free(masks->inner_masked);
        dsh_strv_free(masks->inner_closed);
        dsh_strv_free(masks->not_held);
        dsh_strv_free(masks->masked);
        *masks = (dsh_bwrap_masks) DSH_BWRAP_MASKS_INIT;
}
