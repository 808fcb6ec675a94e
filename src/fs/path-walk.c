/* SPDX-License-Identifier: MIT */
/* The file guard's path walk: see path-walk.h for what it decides and why. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "base/path-fd.h"
#include "fs/path-walk.h"

/* Symlinks followed on one walk before it is called a loop, as the kernel counts them. */
#define MAX_SYMLINKS 40

/* One step of one name: never through a symlink (the walk splices links itself), never out of `directory_fd`. */
#define STEP_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* A directory the walk passed through, to return to on "..". */
struct frame {
        dev_t device;
        ino_t inode;
        char *spelling;
        int root;
};

struct walk {
        const dsh_walk_root *roots;
        size_t root_count;
        unsigned flags;
        dsh_walk_approve_fn approve;
        void *data;
        int fd;                 /* the directory reached so far (O_PATH) */
        char *spelling;         /* its canonical path; "" for "/" */
        int root;               /* the innermost writable root it is in, or -1 */
        struct frame *frames;   /* the directories above it, outermost first */
        size_t depth, capacity;
        char *pending;          /* what is left to walk */
        unsigned symlinks;
        dsh_walk_target *target;
};

int dsh_walk_root_identify(dsh_walk_root *root)
{
        struct stat status;

        if (fstat(root->fd, &status) < 0)
                return -errno;
        root->device = status.st_dev;
        root->inode = status.st_ino;
        return 0;
}

void dsh_walk_target_clear(dsh_walk_target *target)
{
        if (!target)
                return;
        if (target->directory_fd >= 0)
                close(target->directory_fd);
        free(target->directory);
        free(target->name);
        free(target->path);
        free(target->failed_at);
        *target = (dsh_walk_target) DSH_WALK_TARGET_INIT;
}

/* The root whose inode `status` is, or -1. */
static int root_of(const struct walk *walk, const struct stat *status)
{
        for (size_t i = 0; i < walk->root_count; i++)
                if (walk->roots[i].device == status->st_dev && walk->roots[i].inode == status->st_ino)
                        return (int) i;
        return -1;
}

/* "<spelling>/<name>" (the root directory spells as ""), a new string or NULL. */
static char *spell_child(const char *spelling, const char *name)
{
        char *child = NULL;

        if (asprintf(&child, "%s/%s", spelling, name) < 0)
                return NULL;
        return child;
}

/* Records where the walk stopped and returns `result`. */
static int stop_at(struct walk *walk, const char *name, int result)
{
        free(walk->target->failed_at);
        walk->target->failed_at = name ? spell_child(walk->spelling, name)
                                       : strdup(walk->spelling[0] ? walk->spelling : "/");
        walk->target->root = walk->root;
        return result;
}

static void drop_frames(struct walk *walk)
{
        for (size_t i = 0; i < walk->depth; i++)
                free(walk->frames[i].spelling);
        walk->depth = 0;
}

/* Back at "/" (the start, or an absolute symlink's target). */
static int walk_from_slash(struct walk *walk)
{
        struct stat status;
        int fd = dsh_openat2(AT_FDCWD, "/", O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);

        if (fd < 0)
                return fd;
        if (fstat(fd, &status) < 0) {
                int result = -errno;

                close(fd);
                return result;
        }
        if (walk->fd >= 0)
                close(walk->fd);
        walk->fd = fd;
        drop_frames(walk);
        walk->spelling[0] = '\0';
        walk->root = root_of(walk, &status);
        if (walk->root >= 0) {
                free(walk->spelling);
                walk->spelling = strdup(walk->roots[walk->root].path);
                if (!walk->spelling)
                        return -ENOMEM;
        }
        return 0;
}

/* Enters directory `fd` (status `status`) named `name` in the current one; takes `fd`. */
static int enter(struct walk *walk, int fd, const struct stat *status, const char *name)
{
        struct stat here;
        char *child;
        int root;

        if (fstat(walk->fd, &here) < 0) {
                close(fd);
                return -errno;
        }
        if (walk->depth == walk->capacity) {
                size_t capacity = walk->capacity ? walk->capacity * 2 : 16;
                struct frame *frames = realloc(walk->frames, capacity * sizeof(*frames));

                if (!frames) {
                        close(fd);
                        return -ENOMEM;
                }
                walk->frames = frames;
                walk->capacity = capacity;
        }
        root = root_of(walk, status);
        child = root >= 0 ? strdup(walk->roots[root].path) : spell_child(walk->spelling, name);
        if (!child) {
                close(fd);
                return -ENOMEM;
        }
        walk->frames[walk->depth++] = (struct frame) { here.st_dev, here.st_ino, walk->spelling, walk->root };
        walk->spelling = child;
        if (root >= 0)
                walk->root = root;
        close(walk->fd);
        walk->fd = fd;
        return 0;
}

/*
 * "..": the physical parent, as the kernel takes it — which must be the
 * directory the walk came from.  If it is not, a directory on the way was
 * moved meanwhile, and where the walk now is cannot be spelled or placed
 * in a root with certainty: the walk fails rather than guess.
 */
static int leave(struct walk *walk)
{
        struct frame *frame;
        struct stat status;
        int fd;

        if (walk->depth == 0)
                return 0;  /* "/.." is "/" */
        frame = &walk->frames[walk->depth - 1];
        fd = dsh_openat2(walk->fd, "..", O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (fd < 0)
                return stop_at(walk, "..", fd);
        if (fstat(fd, &status) < 0 || status.st_dev != frame->device || status.st_ino != frame->inode) {
                close(fd);
                return stop_at(walk, "..", -EAGAIN);
        }
        close(walk->fd);
        walk->fd = fd;
        free(walk->spelling);
        walk->spelling = frame->spelling;
        walk->root = frame->root;
        walk->depth--;
        return 0;
}

/* Replaces the pending path with `link`'s target followed by `rest`, and restarts at "/" for an absolute one. */
static int splice_symlink(struct walk *walk, int link_fd, const char *name, const char *rest)
{
        char target[PATH_MAX];
        struct statfs filesystem;
        char *pending = NULL;
        ssize_t length;

        if (fstatfs(link_fd, &filesystem) == 0 && filesystem.f_type == PROC_SUPER_MAGIC) {
                walk->target->proc_link = true;
                return stop_at(walk, name, -ELOOP);
        }
        if (++walk->symlinks > MAX_SYMLINKS)
                return stop_at(walk, name, -ELOOP);
        length = readlinkat(link_fd, "", target, sizeof(target));
        if (length < 0)
                return stop_at(walk, name, -errno);
        if ((size_t) length >= sizeof(target))
                return stop_at(walk, name, -ENAMETOOLONG);
        target[length] = '\0';
        if (asprintf(&pending, "%s/%s", target, rest) < 0)
                return -ENOMEM;
        free(walk->pending);
        walk->pending = pending;
        return target[0] == '/' ? walk_from_slash(walk) : 0;
}

/*
 * The canonical path the entry will have once the missing directory `name`
 * and the rest of the walk exist: nothing of it exists yet, so it is
 * spelled as written, except that ".." — which would climb back out of
 * directories made a moment ago — is refused, as a missing directory's ".."
 * is by the kernel.
 */
static char *future_path(const struct walk *walk, const char *name, const char *rest)
{
        char *path = spell_child(walk->spelling, name);

        for (const char *component = rest; path && *component;) {
                size_t length = strcspn(component, "/");
                char *longer = NULL;

                if (length == 2 && component[0] == '.' && component[1] == '.') {
                        free(path);
                        errno = ENOENT;
                        return NULL;
                }
                if (length > 0 && !(length == 1 && component[0] == '.')) {
                        if (asprintf(&longer, "%s/%.*s", path, (int) length, component) < 0)
                                longer = NULL;
                        free(path);
                        path = longer;
                }
                component += length;
                while (*component == '/')
                        component++;
        }
        if (!path && errno != ENOENT)
                errno = ENOMEM;
        return path;
}

/* Makes the missing directory `name` beneath the current one, once `approve` agrees. */
static int make_directory(struct walk *walk, const char *name, const char *rest)
{
        dsh_autofree char *final_path = future_path(walk, name, rest);
        int result;

        if (!final_path)
                return stop_at(walk, name, -errno);
        if (walk->approve) {
                result = walk->approve(walk->root, final_path, walk->data);
                if (result < 0)
                        return stop_at(walk, name, result);
        }
        if (mkdirat(walk->fd, name, 0777) < 0 && errno != EEXIST)
                return stop_at(walk, name, -errno);
        return 0;
}

/* One component `name` that is not the last: ".", "..", a directory, or a symlink to splice. */
static int step(struct walk *walk, const char *name, const char *rest)
{
        struct stat status;
        int fd, result;

        if (strcmp(name, ".") == 0)
                return 0;
        if (strcmp(name, "..") == 0)
                return leave(walk);
        fd = dsh_openat2(walk->fd, name, O_PATH | O_NOFOLLOW, STEP_RESOLVE);
        if (fd == -ENOENT && (walk->flags & DSH_WALK_CREATE_PARENTS)) {
                result = make_directory(walk, name, rest);
                if (result < 0)
                        return result;
                fd = dsh_openat2(walk->fd, name, O_PATH | O_NOFOLLOW, STEP_RESOLVE);
        }
        if (fd < 0)
                return stop_at(walk, name, fd);
        if (fstat(fd, &status) < 0) {
                result = -errno;
                close(fd);
                return stop_at(walk, name, result);
        }
        if (S_ISLNK(status.st_mode)) {
                result = splice_symlink(walk, fd, name, rest);
                close(fd);
                return result;
        }
        if (!S_ISDIR(status.st_mode)) {
                close(fd);
                return stop_at(walk, name, -ENOTDIR);
        }
        return enter(walk, fd, &status, name);
}

/* The last component `name`: a symlink to follow (then the walk goes on), or the entry. */
static int arrive(struct walk *walk, const char *name, bool *done)
{
        dsh_walk_target *target = walk->target;
        int result;

        *done = false;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
                /* Only a symlink's target ends so (the caller's own path may not): it names a directory. */
                result = step(walk, name, "");
                return result < 0 ? result : stop_at(walk, NULL, -EISDIR);
        }
        if (walk->flags & DSH_WALK_FOLLOW_LAST) {
                int fd = dsh_openat2(walk->fd, name, O_PATH | O_NOFOLLOW, STEP_RESOLVE);
                struct stat status;

                if (fd < 0 && fd != -ENOENT)
                        return stop_at(walk, name, fd);
                if (fd >= 0 && fstat(fd, &status) == 0 && S_ISLNK(status.st_mode)) {
                        result = splice_symlink(walk, fd, name, "");
                        close(fd);
                        return result;
                }
                if (fd >= 0)
                        close(fd);
        }
        target->exists = fstatat(walk->fd, name, &target->status, AT_SYMLINK_NOFOLLOW) == 0;
        if (!target->exists && errno != ENOENT)
                return stop_at(walk, name, -errno);
        target->name = strdup(name);
        target->path = spell_child(walk->spelling, name);
        target->directory = strdup(walk->spelling[0] ? walk->spelling : "/");
        if (!target->name || !target->path || !target->directory)
                return -ENOMEM;
        target->root = walk->root;
        target->directory_fd = walk->fd;
        walk->fd = -1;
        *done = true;
        return 0;
}

/* Splits the next component off the pending path: `name` (a new string) and where the rest starts. */
static int next_component(struct walk *walk, char **name, const char **rest)
{
        const char *start = walk->pending;
        size_t length;

        while (*start == '/')
                start++;
        length = strcspn(start, "/");
        *name = strndup(start, length);
        if (!*name)
                return -ENOMEM;
        *rest = start + length;
        while (**rest == '/')
                (*rest)++;
        return 0;
}

static int run(struct walk *walk)
{
        int result = walk_from_slash(walk);

        while (result == 0) {
                dsh_autofree char *name = NULL;
                dsh_autofree char *rest = NULL;
                const char *after;
                bool done;

                result = next_component(walk, &name, &after);
                if (result < 0)
                        break;
                if (!name[0])
                        return stop_at(walk, NULL, -EISDIR);  /* the path, or a link's target, is "/" */
                /* The rest is copied out: a step may replace the pending path it points into. */
                rest = strdup(after);
                if (!rest)
                        return -ENOMEM;
                if (rest[0]) {
                        char *pending = strdup(rest);

                        if (!pending)
                                return -ENOMEM;
                        free(walk->pending);
                        walk->pending = pending;
                        result = step(walk, name, rest);
                        continue;
                }
                result = arrive(walk, name, &done);
                if (result == 0 && done)
                        return 0;
        }
        return result;
}

int dsh_walk(const dsh_walk_root *roots, size_t root_count, const char *path, unsigned flags,
             dsh_walk_approve_fn approve, void *data, dsh_walk_target *target)
{
        struct walk walk = {
                .roots = roots, .root_count = root_count, .flags = flags, .approve = approve, .data = data,
                .fd = -1, .root = -1, .target = target,
        };
        int result;

        *target = (dsh_walk_target) DSH_WALK_TARGET_INIT;
        if (path[0] != '/')
                return -EINVAL;
        walk.spelling = strdup("");
        walk.pending = strdup(path);
        result = walk.spelling && walk.pending ? run(&walk) : -ENOMEM;
        if (result < 0) {
                if (target->directory_fd >= 0)
                        close(target->directory_fd);
                target->directory_fd = -1;
        }
        if (walk.fd >= 0)
                close(walk.fd);
        drop_frames(&walk);
        free(walk.frames);
        free(walk.spelling);
        free(walk.pending);
        return result;
}
