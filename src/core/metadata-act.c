/* SPDX-License-Identifier: MIT */
/*
 * The metadata supervisor's acting half: the change made on the target it
 * decided on (metadata-act.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "core/kernel-abi.h"
#include "core/metadata-act.h"


static int result_of(long value)
{
        return value < 0 ? -errno : 0;
}

/* "/proc/thread-self/fd/N" for our fd: a path that leads to exactly the open file. */
static void own_descriptor_path(int fd, char *path, size_t size)
{
        snprintf(path, size, "/proc/thread-self/fd/%d", fd);
}

static int act_chmod(int fd, dsh_metadata_target form, const dsh_metadata_request *op, const struct stat *target)
{
        char path[64];
        long result;

        if (form == DSH_METADATA_TARGET_DESCRIPTOR)
                return result_of(fchmod(fd, op->mode));
        result = syscall(__NR_fchmodat2, fd, "", op->mode, AT_EMPTY_PATH | (op->follow ? 0 : AT_SYMLINK_NOFOLLOW));
        if (result == 0 || errno != ENOSYS)
                return result_of(result);
        /* A kernel before fchmodat2 (6.6): a symlink's mode cannot change, and any other file through /proc. */
        if (S_ISLNK(target->st_mode))
                return -EOPNOTSUPP;
        own_descriptor_path(fd, path, sizeof(path));
        return result_of(chmod(path, op->mode));
}

static int act_chown(int fd, dsh_metadata_target form, const dsh_metadata_request *op)
{
        if (form == DSH_METADATA_TARGET_DESCRIPTOR)
                return result_of(fchown(fd, op->uid, op->gid));
        return result_of(fchownat(fd, "", op->uid, op->gid, AT_EMPTY_PATH | (op->follow ? 0 : AT_SYMLINK_NOFOLLOW)));
}

static int act_times(int fd, dsh_metadata_target form, const dsh_metadata_request *op,
                     const dsh_metadata_payload *p)
{
        const struct timespec *times = p->times_now ? NULL : p->times;

        if (form == DSH_METADATA_TARGET_DESCRIPTOR)
                return result_of(futimens(fd, times));
        return result_of(utimensat(fd, "", times, AT_EMPTY_PATH | (op->follow ? 0 : AT_SYMLINK_NOFOLLOW)));
}

/*
 * Extended attributes and file attributes: the f* calls for a descriptor,
 * the *at calls with AT_EMPTY_PATH for an AT_EMPTY_PATH call (both refuse an
 * O_PATH descriptor as the kernel would have), and our own
 * /proc/thread-self/fd/N for a path — the one way to reach an O_PATH file
 * with them.  A symlink cannot carry them for a process without capability
 * (user.* is refused on symlinks): answered without acting.
 */
static int act_setxattr(const dsh_metadata_tracee *tracee, int fd, dsh_metadata_target form,
                        const dsh_metadata_request *op, const dsh_metadata_payload *p, const struct stat *target)
{
        const void *value = p->value_size ? tracee->value_buffer : NULL;
        char path[64];

        if (form == DSH_METADATA_TARGET_DESCRIPTOR)
                return result_of(fsetxattr(fd, p->name, value, p->value_size, op->xattr_flags));
        if (form == DSH_METADATA_TARGET_EMPTY_PATH) {
                struct command_xattr_args args = { (uint64_t) (uintptr_t) value, (uint32_t) p->value_size,
                                                   (uint32_t) op->xattr_flags };

                if (!op->xattr_args)  /* the setxattr() family has no AT_EMPTY_PATH: cannot be here */
                        return -ENOENT;
                return result_of(syscall(__NR_setxattrat, fd, "",
                                         AT_EMPTY_PATH | (op->follow ? 0 : AT_SYMLINK_NOFOLLOW), p->name, &args,
                                         sizeof(args)));
        }
        if (S_ISLNK(target->st_mode))
                return -EPERM;
        own_descriptor_path(fd, path, sizeof(path));
        return result_of(setxattr(path, p->name, value, p->value_size, op->xattr_flags));
}

static int act_removexattr(int fd, dsh_metadata_target form, const dsh_metadata_request *op,
                           const dsh_metadata_payload *p, const struct stat *target)
{
        char path[64];

        if (form == DSH_METADATA_TARGET_DESCRIPTOR)
                return result_of(fremovexattr(fd, p->name));
        if (form == DSH_METADATA_TARGET_EMPTY_PATH)
                return result_of(syscall(__NR_removexattrat, fd, "",
                                         AT_EMPTY_PATH | (op->follow ? 0 : AT_SYMLINK_NOFOLLOW), p->name));
        if (S_ISLNK(target->st_mode))
                return -EPERM;
        own_descriptor_path(fd, path, sizeof(path));
        return result_of(removexattr(path, p->name));
}

static int act_file_setattr(int fd, dsh_metadata_target form, const dsh_metadata_request *op,
                            const dsh_metadata_payload *p, const struct stat *target)
{
        char path[64];

        if (form == DSH_METADATA_TARGET_EMPTY_PATH)
                return result_of(syscall(__NR_file_setattr, fd, "", &p->file_attr, sizeof(p->file_attr),
                                         AT_EMPTY_PATH | (op->follow ? 0 : AT_SYMLINK_NOFOLLOW)));
        if (S_ISLNK(target->st_mode))
                return -EOPNOTSUPP;
        own_descriptor_path(fd, path, sizeof(path));
        return result_of(syscall(__NR_file_setattr, AT_FDCWD, path, &p->file_attr, sizeof(p->file_attr), 0));
}

int dsh_metadata_act(const dsh_metadata_tracee *tracee, int fd, dsh_metadata_target form,
                     const dsh_metadata_request *op, dsh_metadata_payload *p, const struct stat *target)
{
        switch (op->kind) {
        case DSH_METADATA_CHMOD:
                return act_chmod(fd, form, op, target);
        case DSH_METADATA_CHOWN:
                return act_chown(fd, form, op);
        case DSH_METADATA_TIMES:
                return act_times(fd, form, op, p);
        case DSH_METADATA_SETXATTR:
                return act_setxattr(tracee, fd, form, op, p, target);
        case DSH_METADATA_REMOVEXATTR:
                return act_removexattr(fd, form, op, p, target);
        case DSH_METADATA_FILE_SETATTR:
                return act_file_setattr(fd, form, op, p, target);
        case DSH_METADATA_IOCTL:
                return result_of(ioctl(fd, (unsigned long) op->ioctl_command, &p->ioctl_buffer));
        case DSH_METADATA_PTY_PEER:
                break;  /* answered by handle_pty_peer(), never here */
        }
        return -EACCES;
}

