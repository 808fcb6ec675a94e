/* SPDX-License-Identifier: MIT */
/* The file guard's mechanics: see file-ops.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fd-io.h"
#include "fs/file-ops.h"

/* ---------------------------------------------------------- replacement -- */

/* A random name for a temporary entry beside `name`, hidden and recognisable: ".NAME.dsh-XXXXXXXXXXXXXXXX". */
static int temporary_name(const char *name, char buffer[NAME_MAX + 1])
{
        unsigned char random[8];

        if (getrandom(random, sizeof(random), 0) != (ssize_t) sizeof(random))
                return -EIO;
        snprintf(buffer, NAME_MAX + 1, ".%.200s.dsh-%02x%02x%02x%02x%02x%02x%02x%02x", name, random[0], random[1],
                 random[2], random[3], random[4], random[5], random[6], random[7]);
        return 0;
}

/*
 * Gives the O_TMPFILE `fd` the name `name` in `directory_fd` (never
 * replacing: EEXIST).  By the fd itself when the caller may
 * (CAP_DAC_READ_SEARCH), else through /proc/self/fd, as linkat(2) documents.
 */
static int link_tmpfile(int fd, int directory_fd, const char *name)
{
        char proc_path[64];

        if (linkat(fd, "", directory_fd, name, AT_EMPTY_PATH) == 0)
                return 0;
        if (errno != ENOENT && errno != EPERM)
                return -errno;
        snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", fd);
        return linkat(AT_FDCWD, proc_path, directory_fd, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
}

/*
 * The new inode keeps what the replaced file had: its owner when the caller
 * may set it, then its permission bits — never set-user-ID, set-group-ID or
 * sticky: new content under an old privilege is what the kernel prevents
 * when it clears those bits on a write.
 */
static int keep_attributes(int fd, const struct stat *existing)
{
        if (!existing)
                return 0;
        if (fchown(fd, existing->st_uid, existing->st_gid) < 0 && errno != EPERM)
                return -errno;
        return fchmod(fd, existing->st_mode & 0777) < 0 ? -errno : 0;
}

/* One replacement in progress: the caller's description, the new inode, its temporary name. */
struct replacement {
        int directory_fd;
        const char *name;
        const struct stat *existing;
        bool no_replace;
        const struct stat *must_still_be;
        int fd;
        char temporary[NAME_MAX + 1];           /* the temporary entry, once there is one ("" before) */
};

/* An edit's file replaced by someone else since it was read is not overwritten with a stale edit. */
static int check_unchanged(const struct replacement *replacement)
{
        struct stat now;

        if (!replacement->must_still_be)
                return 0;
        if (fstatat(replacement->directory_fd, replacement->name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
            now.st_dev != replacement->must_still_be->st_dev || now.st_ino != replacement->must_still_be->st_ino)
                return -EAGAIN;
        return 0;
}

/* Opens the new inode: O_TMPFILE (nameless until complete), else a temporary name created O_EXCL. */
static int open_new_inode(struct replacement *replacement)
{
        replacement->fd = openat(replacement->directory_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        if (replacement->fd >= 0)
                return 0;
        if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
                return -errno;
        for (int attempt = 0; attempt < 16; attempt++) {
                int result = temporary_name(replacement->name, replacement->temporary);

                if (result < 0)
                        return result;
                replacement->fd = openat(replacement->directory_fd, replacement->temporary,
                                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
                if (replacement->fd >= 0)
                        return 0;
                replacement->temporary[0] = '\0';
                if (errno != EEXIST)
                        return -errno;
        }
        return -EEXIST;
}

/* Names an O_TMPFILE inode with a temporary name, for the rename over the entry. */
static int name_tmpfile(struct replacement *replacement)
{
        for (int attempt = 0; attempt < 16; attempt++) {
                int result = temporary_name(replacement->name, replacement->temporary);

                if (result == 0)
                        result = link_tmpfile(replacement->fd, replacement->directory_fd, replacement->temporary);
                if (result == 0)
                        return 0;
                replacement->temporary[0] = '\0';
                if (result != -EEXIST)
                        return result;
        }
        return -EEXIST;
}

/* Puts the complete inode at the entry: atomically, replacing or only where nothing is. */
static int publish(struct replacement *replacement)
{
        int result;

        if (replacement->no_replace && !replacement->temporary[0])
                return link_tmpfile(replacement->fd, replacement->directory_fd, replacement->name);
        if (replacement->no_replace) {
                if (renameat2(replacement->directory_fd, replacement->temporary, replacement->directory_fd,
                              replacement->name, RENAME_NOREPLACE) == 0)
                        goto renamed;
                if (errno != EINVAL)
                        return -errno;
                /* A filesystem without RENAME_NOREPLACE: link(2) never replaces either. */
                if (linkat(replacement->directory_fd, replacement->temporary, replacement->directory_fd,
                           replacement->name, 0) < 0)
                        return -errno;
                unlinkat(replacement->directory_fd, replacement->temporary, 0);
                goto renamed;
        }
        if (!replacement->temporary[0]) {
                result = name_tmpfile(replacement);
                if (result < 0)
                        return result;
        }
        result = check_unchanged(replacement);
        if (result < 0)
                return result;
        if (renameat(replacement->directory_fd, replacement->temporary, replacement->directory_fd,
                     replacement->name) < 0)
                return -errno;
renamed:
        replacement->temporary[0] = '\0';
        return 0;
}

int dsh_file_replace(const dsh_file_replacement *description, const void *content, size_t length)
{
        struct replacement state = {
                description->directory_fd, description->name, description->existing, description->no_replace,
                description->must_still_be, -1, "",
        };
        struct replacement *replacement = &state;
        int result = open_new_inode(replacement);

        if (result == 0)
                result = keep_attributes(replacement->fd, replacement->existing);
        if (result == 0)
                result = dsh_write_all(replacement->fd, content, length);
        if (result == 0 && fsync(replacement->fd) < 0)
                result = -errno;
        if (result == 0)
                result = publish(replacement);
        if (replacement->temporary[0])
                unlinkat(replacement->directory_fd, replacement->temporary, 0);
        if (replacement->fd >= 0)
                close(replacement->fd);
        return result;
}

/* -------------------------------------------------------------- removal -- */

/* True when the directory open at `fd` is the root of a mount: a recursive remove does not go in. */
static bool is_mount_root(int fd)
{
        struct statx status;

        return statx(fd, "", AT_EMPTY_PATH, STATX_INO, &status) == 0 &&
               (status.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (status.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

struct removal {
        size_t removed;
};

static int remove_tree(struct removal *removal, int parent_fd, const char *name, const struct stat *expected,
                       size_t depth);

/* Removes every entry of the directory open at `fd` (passes until one finds nothing: entries may be added). */
static int empty_directory(struct removal *removal, int fd, size_t depth)
{
        DIR *directory = fdopendir(fd);
        int result = 0;
        bool again = true;

        if (!directory) {
                close(fd);
                return -errno;
        }
        while (result == 0 && again) {
                struct dirent *entry;

                again = false;
                rewinddir(directory);
                while (result == 0 && (errno = 0, entry = readdir(directory))) {
                        struct stat status;

                        if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
                                continue;
                        if (fstatat(dirfd(directory), entry->d_name, &status, AT_SYMLINK_NOFOLLOW) < 0) {
                                result = errno == ENOENT ? 0 : -errno;
                                continue;
                        }
                        again = true;
                        if (S_ISDIR(status.st_mode))
                                result = remove_tree(removal, dirfd(directory), entry->d_name, &status, depth + 1);
                        else if (unlinkat(dirfd(directory), entry->d_name, 0) == 0)
                                removal->removed++;
                        else if (errno != ENOENT)
                                result = -errno;
                }
                if (result == 0 && errno != 0)
                        result = -errno;
        }
        closedir(directory);
        return result;
}

/*
 * Removes directory `name` of `parent_fd` and everything beneath it, by fd:
 * it is opened O_NOFOLLOW|O_DIRECTORY and must be the inode `expected`
 * (something swapped in since is not descended into), entries are removed
 * relative to it, and symlinks inside are unlinked, never followed.
 */
static int remove_tree(struct removal *removal, int parent_fd, const char *name, const struct stat *expected,
                       size_t depth)
{
        struct stat status;
        int fd, result;

        if (depth > DSH_FILE_REMOVE_MAX_DEPTH)
                return -ELOOP;
        fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOTDIR || errno == ELOOP ? -EAGAIN : -errno;
        if (fstat(fd, &status) < 0 || status.st_dev != expected->st_dev || status.st_ino != expected->st_ino) {
                close(fd);
                return -EAGAIN;
        }
        if (is_mount_root(fd)) {
                close(fd);
                return -EXDEV;
        }
        result = empty_directory(removal, fd, depth);
        if (result < 0)
                return result;
        if (unlinkat(parent_fd, name, AT_REMOVEDIR) < 0)
                return -errno;
        removal->removed++;
        return 0;
}

int dsh_file_remove_tree(int parent_fd, const char *name, const struct stat *expected, size_t *removed)
{
        struct removal removal = { 0 };
        int result = remove_tree(&removal, parent_fd, name, expected, 0);

        *removed = removal.removed;
        return result;
}
