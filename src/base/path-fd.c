/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/path-fd.h"
#include "base/path.h"

#ifndef __NR_openat2
#define __NR_openat2 437
#endif

int dsh_openat2(int directory_fd, const char *path, int flags, uint64_t resolve)
{
        struct open_how how = { .flags = (uint64_t) flags | O_CLOEXEC, .resolve = resolve };
        long fd = syscall(__NR_openat2, directory_fd, path, &how, sizeof(how));

        return fd < 0 ? -errno : (int) fd;
}

int dsh_path_open_canonical(const char *path, bool directory)
{
        if (path[0] != '/')
                return -EINVAL;
        return dsh_openat2(AT_FDCWD, path, O_PATH | (directory ? O_DIRECTORY : 0),
                           RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
}

int dsh_path_open_beneath(int root_fd, const char *relative, bool no_symlinks)
{
        uint64_t resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0);

        return dsh_openat2(root_fd, relative[0] ? relative : ".", O_PATH, resolve);
}

bool dsh_fd_same_file(int first, int second)
{
        struct stat a, b;

        return fstat(first, &a) == 0 && fstat(second, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

const char *dsh_path_relative_to(const char *path, const char *root)
{
        size_t length = strcmp(root, "/") == 0 ? 0 : strlen(root);

        if (!dsh_path_is_beneath(path, root))
                return NULL;
        path += length;
        while (*path == '/')
                path++;
        return path;
}
