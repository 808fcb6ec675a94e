/* SPDX-License-Identifier: MIT */
/* A /dev/shm and a /dev/pts of the command's own: see private-dev.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/kernel-abi.h"
#include "core/private-dev.h"

struct mount_option {
        const char *key;
        const char *value;
};

/* A new mount of `type` with `options`, detached; its O_CLOEXEC fd or a negative errno. */
static int detached_mount(const char *type, const struct mount_option *options, size_t option_count,
                          unsigned int attributes)
{
        long filesystem_fd = syscall(__NR_fsopen, type, FSOPEN_CLOEXEC), mount_fd = -1;
        int result = 0;

        if (filesystem_fd < 0)
                return -errno;
        for (size_t i = 0; result == 0 && i < option_count; i++)
                if (syscall(__NR_fsconfig, filesystem_fd, FSCONFIG_SET_STRING, options[i].key, options[i].value,
                            0) < 0)
                        result = -errno;
        if (result == 0 && syscall(__NR_fsconfig, filesystem_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                result = -errno;
        if (result == 0) {
                mount_fd = syscall(__NR_fsmount, filesystem_fd, FSMOUNT_CLOEXEC, attributes);
                if (mount_fd < 0)
                        result = -errno;
        }
        close((int) filesystem_fd);
        return result < 0 ? result : (int) mount_fd;
}

/* The mount points are the host's own directories: a symlink there would be followed nowhere. */
static int check_mount_point(const char *path, dev_t *device_out)
{
        struct stat status;

        if (lstat(path, &status) < 0)
                return -errno;
        *device_out = status.st_dev;
        return S_ISDIR(status.st_mode) ? 0 : -ENOTDIR;
}

int dsh_private_devices_create(dsh_private_devices *devices)
{
        static const struct mount_option shm_options[] = { { "mode", "1777" } };
        /* Every devpts mount is an instance of its own (Linux 4.7); 0666 so the command opens its ptmx. */
        static const struct mount_option pts_options[] = { { "ptmxmode", "0666" }, { "mode", "0620" } };
        dev_t shm_device = 0, pts_device = 0;
        int result = check_mount_point(DSH_PRIVATE_SHM_PATH, &shm_device);

        *devices = (dsh_private_devices) DSH_PRIVATE_DEVICES_INIT;
        devices->host_shm_device = shm_device;
        if (result == 0)
                result = check_mount_point(DSH_PRIVATE_PTS_PATH, &pts_device);
        devices->host_pts_device = pts_device;
        if (result == 0)
                result = devices->shm = detached_mount("tmpfs", shm_options, 1, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (result >= 0)
                result = devices->pts = detached_mount("devpts", pts_options, 2,
                                                       MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (result < 0) {
                dsh_private_devices_close(devices);
                return result;
        }
        return 0;
}

void dsh_private_devices_close(dsh_private_devices *devices)
{
        if (devices->shm >= 0)
                close(devices->shm);
        if (devices->pts >= 0)
                close(devices->pts);
        *devices = (dsh_private_devices) DSH_PRIVATE_DEVICES_INIT;
}

/*
 * Slave before anything is mounted: in a namespace just copied, every mount
 * is still a peer of the host's, and a mount made on a shared /dev/shm would
 * appear on the host's too — the command's tmpfs, writable under its grant,
 * over every other process's shared memory.  Each move names its target
 * with no symlink followed (no MOVE_MOUNT_T_SYMLINKS): only the directories
 * dsh_private_devices_create() found.
 */
/*
 * A working directory entered before the moves (the caller's, or the bash
 * tool's cwd, which a model chooses) stays on the host's /dev/shm or
 * /dev/pts underneath the command's own: "./0" would then open the user's
 * terminal, "." list every process's shared memory.  The call is refused
 * (EACCES) rather than started there.
 */
static int refuse_covered_cwd(const dsh_private_devices *devices)
{
        struct stat cwd;

        if (stat(".", &cwd) < 0)
                return -errno;
        if (cwd.st_dev == devices->host_shm_device || cwd.st_dev == devices->host_pts_device)
                return -EACCES;
        return 0;
}

int dsh_private_devices_enter(const dsh_private_devices *devices)
{
        if (devices->shm < 0 || devices->pts < 0)
                return -EBADF;
        if (unshare(CLONE_NEWNS) < 0)
                return 1;  /* nothing changed: the host's, read-only (private-dev.h) */
        if (syscall(__NR_mount, NULL, "/", NULL, (unsigned long) (MS_REC | MS_SLAVE), NULL) < 0)
                return -errno;
        if (syscall(__NR_move_mount, devices->shm, "", AT_FDCWD, DSH_PRIVATE_SHM_PATH, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        if (syscall(__NR_move_mount, devices->pts, "", AT_FDCWD, DSH_PRIVATE_PTS_PATH, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        return refuse_covered_cwd(devices);
}
