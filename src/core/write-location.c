/* SPDX-License-Identifier: MIT */
/*
 * Where a write-intent call's name leads, resolved as the calling thread
 * would resolve it (write-location.h; write-supervisor.c holds the
 * security argument).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "core/write-location.h"

/* The kernel's bound on the symlinks one lookup follows (MAXSYMLINKS). */
#define SYMLINK_HOPS 40

void dsh_write_location_clear(dsh_write_location *where)
{
        if (where->parent >= 0)
                close(where->parent);
        where->parent = -1;
}

/* The name of our fd (d_path, as the command sees it: metadata-supervisor.c says why); a path, or -EACCES. */
int dsh_write_descriptor_name(int fd, char *name, size_t size)
{
        int result = dsh_metadata_descriptor_name(fd, name, size);

        if (result < 0)
                return result;
        return name[0] == '/' ? 0 : -EACCES;
}

/*
 * Splits `path` into the directory part (in `directory`, "" for none) and
 * its last component (in `last`): trailing slashes dropped, and a path that
 * ends in "." or ".." names a directory itself (the whole path, last ".").
 */
static int split_path(const char *path, char *directory, char *last)
{
        size_t length = strlen(path);
        const char *slash;
        size_t start;

        if (length == 0)
                return -ENOENT;
        while (length > 1 && path[length - 1] == '/')
                length--;
        slash = memrchr(path, '/', length);
        start = slash ? (size_t) (slash - path) + 1 : 0;
        if (length - start > NAME_MAX)
                return -ENAMETOOLONG;
        memcpy(last, path + start, length - start);
        last[length - start] = '\0';
        if (start == length || strcmp(last, ".") == 0 || strcmp(last, "..") == 0) {
                memcpy(directory, path, length);
                directory[length] = '\0';
                strcpy(last, ".");
                return 0;
        }
        memcpy(directory, path, start);
        directory[start == 1 ? 1 : (start ? start - 1 : 0)] = '\0';
        return 0;
}

/* The parent of `path` opened from the calling thread's cwd, root, or `dirfd` (or `from`, our fd, when >= 0). */
/*
 * The command's own magic links at the head of a path: /proc/self/root,
 * /proc/self/cwd and /proc/self/fd/N (or thread-self's, or /dev/fd/N),
 * which the kernel would follow to the command's root, cwd or open file,
 * and which this supervisor resolves no magic link to reach (in its own
 * /proc, "self" is itself).  Returns the base they lead to, with `*rest`
 * the path beneath it ("." for none), -ENOENT when `path` starts with none
 * of them, or another negative errno.
 */
static int magic_base(dsh_metadata_call *c, const char *path, const char **rest, uint64_t *resolve)
{
        const char *link = NULL;
        char *end;
        int base;

        if (strncmp(path, "/proc/self/", 11) == 0)
                link = path + 11;
        else if (strncmp(path, "/proc/thread-self/", 18) == 0)
                link = path + 18;
        else if (strncmp(path, "/dev/fd/", 8) == 0)
                link = path + 5;
        if (!link)
                return -ENOENT;
        if (strncmp(link, "root", 4) == 0 && (link[4] == '/' || !link[4])) {
                base = dsh_metadata_open_base(c, "/", AT_FDCWD, resolve);
                *rest = link + 4;
        } else if (strncmp(link, "cwd", 3) == 0 && (link[3] == '/' || !link[3])) {
                base = dsh_metadata_open_base(c, ".", AT_FDCWD, resolve);
                *rest = link + 3;
        } else if (strncmp(link, "fd/", 3) == 0 && link[3] >= '0' && link[3] <= '9') {
                long fd = strtol(link + 3, &end, 10);

                if ((*end != '/' && *end) || fd > INT_MAX)
                        return -ENOENT;
                base = dsh_metadata_acquire_descriptor(c, (int) fd, false);
                *rest = end;
        } else {
                return -ENOENT;
        }
        while (**rest == '/')
                (*rest)++;
        if (!**rest)
                *rest = ".";
        return base;
}

/*
 * `directory` (relative) opened beneath `base`, as the calling thread would
 * reach it.  An absolute symlink on the way is followed by openat2() from
 * our root, not the thread's: under bwrap (another root, whose mounts
 * differ: a directory read-only there is writable here) the name would
 * lead elsewhere, and bwrap's refusal would go unwritten.  So a directory
 * that holds a symlink (RESOLVE_NO_SYMLINKS says so: ELOOP) is opened
 * again, when the thread's root is not ours, as the absolute name it has
 * beneath the thread's root (its base's name, as the thread sees it, and
 * `directory`), RESOLVE_IN_ROOT: the kernel's own walk from the thread's
 * root.  With one root, the first walk is already the thread's.  A root is
 * ours only on our mount as well as our inode: bwrap's root is a bind of
 * the host's "/", the same inode on a mount of its own.
 */
static bool root_is_ours(int root)
{
        struct statx ours, theirs;

        if (statx(root, "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID, &theirs) < 0 ||
            statx(AT_FDCWD, "/", 0, STATX_INO | STATX_MNT_ID, &ours) < 0 ||
            !(theirs.stx_mask & ours.stx_mask & STATX_MNT_ID))
                return false;  /* not known to be ours: the thread's own walk is taken */
        return theirs.stx_mnt_id == ours.stx_mnt_id && theirs.stx_ino == ours.stx_ino &&
               theirs.stx_dev_major == ours.stx_dev_major && theirs.stx_dev_minor == ours.stx_dev_minor;
}

static int open_relative_directory(dsh_metadata_call *c, int base, const char *directory, uint64_t resolve)
{
        char absolute[PATH_MAX], base_name[PATH_MAX];
        uint64_t root_resolve;
        int root, result = dsh_metadata_open_resolved(base, directory, O_PATH | O_DIRECTORY,
                                                      resolve | RESOLVE_NO_SYMLINKS);

        if (result != -ELOOP)
                return result;
        root = dsh_metadata_open_base(c, "/", AT_FDCWD, &root_resolve);
        if (root < 0)
                return root;
        if (root_is_ours(root) || dsh_write_descriptor_name(base, base_name, sizeof(base_name)) < 0 ||
            (size_t) snprintf(absolute, sizeof(absolute), "%s/%s", base_name, directory) >= sizeof(absolute)) {
                close(root);
                return dsh_metadata_open_resolved(base, directory, O_PATH | O_DIRECTORY, resolve);
        }
        result = dsh_metadata_open_resolved(root, absolute, O_PATH | O_DIRECTORY, root_resolve);
        close(root);
        return result;
}

/*
 * The parent of `path` opened as the calling thread would reach it: from
 * its cwd, its root or its descriptor `dirfd`, or from `from` (our fd, when
 * >= 0: a relative symlink's directory), or from one of its own magic links.
 */
static int open_parent(dsh_metadata_call *c, int from, int dirfd, const char *path, dsh_write_location *where)
{
        char directory[PATH_MAX];
        uint64_t resolve = RESOLVE_NO_MAGICLINKS;
        const char *rest = path;
        int base = path[0] == '/' ? magic_base(c, path, &rest, &resolve) : -ENOENT, result;

        if (base == -ENOENT && (path[0] == '/' || from < 0))
                base = dsh_metadata_open_base(c, path, path[0] == '/' ? AT_FDCWD : dirfd, &resolve);
        else if (base == -ENOENT && (base = fcntl(from, F_DUPFD_CLOEXEC, 3)) < 0)
                base = -errno;
        if (base < 0)
                return base;
        result = split_path(rest, directory, where->last);
        if (result < 0) {
                close(base);
                return result;
        }
        if (!directory[0])
                where->parent = base;
        else if (resolve & RESOLVE_IN_ROOT)
                where->parent = dsh_metadata_open_resolved(base, directory, O_PATH | O_DIRECTORY, resolve);
        else
                where->parent = open_relative_directory(c, base, directory, resolve);
        if (directory[0])
                close(base);
        return where->parent < 0 ? where->parent : 0;
}

/* Learns whether the last component exists (lstat) and what the command reaches by it. */
static int describe(dsh_write_location *where)
{
        char parent_name[PATH_MAX];
        struct statfs filesystem;
        int result = dsh_write_descriptor_name(where->parent, parent_name, sizeof(parent_name));

        if (result < 0)
                return result;
        if (fstat(where->parent, &where->parent_status) < 0)
                return -errno;
        /*
         * Beneath /proc "self" would be the supervisor: no write there is the
         * command's to make.  Only a file system with no device of its own
         * (major 0: procfs, tmpfs...) can be procfs; asked then alone.
         */
        if (major(where->parent_status.st_dev) == 0 && fstatfs(where->parent, &filesystem) == 0 &&
            filesystem.f_type == PROC_SUPER_MAGIC)
                return -EACCES;
        where->parent_length = strlen(parent_name);
        if (strcmp(where->last, ".") == 0)
                result = snprintf(where->name, sizeof(where->name), "%s", parent_name);
        else
                result = snprintf(where->name, sizeof(where->name), "%s%s%s", parent_name,
                                  strcmp(parent_name, "/") == 0 ? "" : "/", where->last);
        if (result < 0 || (size_t) result >= sizeof(where->name))
                return -ENAMETOOLONG;
        where->exists = fstatat(where->parent, where->last, &where->status, AT_SYMLINK_NOFOLLOW) == 0;
        return 0;
}

bool dsh_write_trailing_slash(const char *path)
{
        size_t length = strlen(path);

        return length > 1 && path[length - 1] == '/';
}

/*
 * `path` resolved as the calling thread would, to one parent and one last
 * component; a symlink in that last place is followed when `follow` (a
 * relative one from its own directory, an absolute one from the thread's
 * root), and always when the path ends in a slash, which then names a
 * directory or nothing (ENOTDIR, as in the kernel).  Returns 0 or the
 * negative errno to answer.
 */
int dsh_write_locate(dsh_metadata_call *c, int dirfd, const char *path, bool follow, dsh_write_location *where)
{
        char text[PATH_MAX];
        bool directory = dsh_write_trailing_slash(path);
        int result = open_parent(c, -1, dirfd, path, where);

        follow = follow || directory;

        for (int hop = 0; result == 0; hop++) {
                ssize_t length;
                int parent;

                result = describe(where);
                if (result < 0 || !follow || !where->exists || !S_ISLNK(where->status.st_mode))
                        break;
                if (hop == SYMLINK_HOPS)
                        return -ELOOP;
                length = readlinkat(where->parent, where->last, text, sizeof(text));
                if (length < 0 || (size_t) length >= sizeof(text))
                        return length < 0 ? -errno : -ENAMETOOLONG;
                text[length] = '\0';
                parent = where->parent;
                where->parent = -1;
                result = open_parent(c, parent, AT_FDCWD, text, where);
                close(parent);
        }
        if (result == 0 && directory && where->exists && !S_ISDIR(where->status.st_mode))
                return -ENOTDIR;
        return result;
}

/*
 * The command's own descriptor named by a path that is none: /dev/stdin,
 * /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N and
 * /proc/thread-self/fd/N (what bash's `> /dev/stderr` and `>(...)` open).
 * True with `*fd` set when `path` is one of them.
 */
bool dsh_write_own_descriptor(const char *path, int *fd)
{
        static const char *const standard[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
        char proc_form[PATH_MAX];

        for (int i = 0; i < 3; i++)
                if (strcmp(path, standard[i]) == 0) {
                        *fd = i;
                        return true;
                }
        if (strncmp(path, "/dev/fd/", 8) == 0) {
                snprintf(proc_form, sizeof(proc_form), "/proc/self/fd/%s", path + 8);
                return dsh_metadata_own_descriptor_path(proc_form, fd);
        }
        return dsh_metadata_own_descriptor_path(path, fd);
}

