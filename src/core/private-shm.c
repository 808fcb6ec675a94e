/* SPDX-License-Identifier: MIT */
/* A /dev/shm of the command's own: see private-shm.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "private-shm.h"

#ifndef __NR_move_mount
#define __NR_move_mount 429
#define __NR_fsopen 430
#define __NR_fsconfig 431
#define __NR_fsmount 432
#endif

static int configure(int filesystem_fd, unsigned int command, const char *key, const char *value)
{
        return syscall(__NR_fsconfig, filesystem_fd, command, key, value, 0) < 0 ? -errno : 0;
}

int dsh_private_shm_create(void)
{
        struct stat status;
        long filesystem_fd, mount_fd;
        int result;

        /* The mount point is the host's own directory: a symlink there would be followed nowhere. */
        if (lstat(DSH_PRIVATE_SHM_PATH, &status) < 0)
                return -errno;
        if (!S_ISDIR(status.st_mode))
                return -ENOTDIR;
        filesystem_fd = syscall(__NR_fsopen, "tmpfs", FSOPEN_CLOEXEC);
        if (filesystem_fd < 0)
                return -errno;
        result = configure((int) filesystem_fd, FSCONFIG_SET_STRING, "mode", "1777");
        if (result == 0)
                result = configure((int) filesystem_fd, FSCONFIG_CMD_CREATE, NULL, NULL);
        mount_fd = result == 0 ? syscall(__NR_fsmount, filesystem_fd, FSMOUNT_CLOEXEC,
                                         MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
                               : -1;
        if (result == 0 && mount_fd < 0)
                result = -errno;
        close((int) filesystem_fd);
        return result < 0 ? result : (int) mount_fd;
}

/*
 * Slave before anything is mounted: in a namespace just copied, every mount
 * is still a peer of the host's, and a mount made on a shared /dev/shm would
 * appear on the host's too — the command's tmpfs, writable under its grant,
 * over every other process's shared memory.  The move names its target with
 * no symlink followed (no MOVE_MOUNT_T_SYMLINKS): only the directory
 * dsh_private_shm_create() found.
 */
int dsh_private_shm_enter(int mount_fd)
{
        if (unshare(CLONE_NEWNS) < 0)
                return -errno;
        if (syscall(__NR_mount, NULL, "/", NULL, (unsigned long) (MS_REC | MS_SLAVE), NULL) < 0)
                return -errno;
        if (syscall(__NR_move_mount, mount_fd, "", AT_FDCWD, DSH_PRIVATE_SHM_PATH, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}
