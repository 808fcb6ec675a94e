/* SPDX-License-Identifier: MIT */
/* One metadata call, decoded: see metadata-call.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/syscall.h>

#include "core/metadata-call.h"
#include "core/metadata-filter.h"

/* The struct arguments' bounds, as the kernel's copy_struct_from_user() callers check them. */
#define FILE_ATTR_SIZE_VER0 24
#define STRUCT_ARGUMENT_LIMIT 4096

static int decode_at_flags(unsigned int flags, dsh_metadata_request *op)
{
        if (flags & ~(unsigned int) (AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
                return -EINVAL;
        op->follow = !(flags & AT_SYMLINK_NOFOLLOW);
        op->empty_path_allowed = flags & AT_EMPTY_PATH;
        return 0;
}

static void target_path(dsh_metadata_request *op, int dirfd, uint64_t path, bool follow)
{
        op->form = DSH_METADATA_TARGET_PATH;
        op->dirfd = dirfd;
        op->path = path;
        op->follow = follow;
}

static void target_descriptor(dsh_metadata_request *op, uint64_t fd)
{
        op->form = DSH_METADATA_TARGET_DESCRIPTOR;
        /* The kernel takes these as unsigned int: a value beyond INT_MAX is no descriptor (EBADF below). */
        op->dirfd = fd > INT_MAX ? -1 : (int) fd;
        op->follow = true;
}

/* The open flags a slave may be asked with (the kernel takes the argument as an int). */
#define PTY_PEER_FLAGS (O_ACCMODE | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)

/*
 * TIOCGPTPEER's argument is the slave's open flags.  The kernel passes any
 * through to the open; here only an access mode and the flags a terminal
 * open means something with are accepted: what cannot be decided is refused.
 */
static int decode_pty_peer(dsh_metadata_request *op)
{
        int flags = (int) op->ioctl_argument;

        op->kind = DSH_METADATA_PTY_PEER;
        if ((flags & ~PTY_PEER_FLAGS) || (flags & O_ACCMODE) == O_ACCMODE)
                return -EINVAL;
        op->pty_peer_flags = flags;
        return 0;
}

/*
 * Decodes one call into `op`, checking its flags as the kernel does before
 * it looks at any path.  Returns 0, or the negative errno to answer at once.
 */
int dsh_metadata_request_decode(int nr, const uint64_t *args, dsh_metadata_request *op)
{
        memset(op, 0, sizeof(*op));
        switch (nr) {
#ifdef __NR_chmod
        case __NR_chmod:
                op->kind = DSH_METADATA_CHMOD;
                target_path(op, AT_FDCWD, args[0], true);
                op->mode = (mode_t) (uint16_t) args[1];
                return 0;
#endif
        case __NR_fchmod:
                op->kind = DSH_METADATA_CHMOD;
                target_descriptor(op, (uint32_t) args[0]);
                op->mode = (mode_t) (uint16_t) args[1];
                return 0;
        case __NR_fchmodat:
                op->kind = DSH_METADATA_CHMOD;
                target_path(op, (int) args[0], args[1], true);
                op->mode = (mode_t) (uint16_t) args[2];
                return 0;
        case __NR_fchmodat2:
                op->kind = DSH_METADATA_CHMOD;
                target_path(op, (int) args[0], args[1], true);
                op->mode = (mode_t) (uint16_t) args[2];
                return decode_at_flags((unsigned int) args[3], op);
#ifdef __NR_chown
        case __NR_chown:
#endif
#ifdef __NR_lchown
        case __NR_lchown:
#endif
        case __NR_fchown:
        case __NR_fchownat:
                op->kind = DSH_METADATA_CHOWN;
                if (nr == __NR_fchown) {
                        target_descriptor(op, (uint32_t) args[0]);
                } else if (nr == __NR_fchownat) {
                        target_path(op, (int) args[0], args[1], true);
                        op->uid = (uid_t) args[2];
                        op->gid = (gid_t) args[3];
                        return decode_at_flags((unsigned int) args[4], op);
                } else {
#ifdef __NR_lchown
                        target_path(op, AT_FDCWD, args[0], nr != __NR_lchown);
#else
                        target_path(op, AT_FDCWD, args[0], true);
#endif
                }
                op->uid = (uid_t) args[1];
                op->gid = (gid_t) args[2];
                return 0;
#ifdef __NR_utime
        case __NR_utime:
                op->kind = DSH_METADATA_TIMES;
                target_path(op, AT_FDCWD, args[0], true);
                op->times_format = DSH_METADATA_TIMES_UTIMBUF;
                op->times = args[1];
                return 0;
#endif
#ifdef __NR_utimes
        case __NR_utimes:
                op->kind = DSH_METADATA_TIMES;
                target_path(op, AT_FDCWD, args[0], true);
                op->times_format = DSH_METADATA_TIMES_TIMEVAL;
                op->times = args[1];
                return 0;
#endif
#ifdef __NR_futimesat
        case __NR_futimesat:
                op->kind = DSH_METADATA_TIMES;
                /* No path: the descriptor itself (do_utimes() with a NULL name and a real dirfd). */
                if (args[1] == 0 && (int) args[0] != AT_FDCWD)
                        target_descriptor(op, (uint32_t) args[0]);
                else
                        target_path(op, (int) args[0], args[1], true);
                op->times_format = DSH_METADATA_TIMES_TIMEVAL;
                op->times = args[2];
                return 0;
#endif
        case __NR_utimensat:
                op->kind = DSH_METADATA_TIMES;
                op->times_format = DSH_METADATA_TIMES_TIMESPEC;
                op->times = args[2];
                if (decode_at_flags((unsigned int) args[3], op) < 0)
                        return -EINVAL;
                if (args[1] == 0 && (int) args[0] != AT_FDCWD) {
                        /* futimens(): flags must be 0 (do_utimes_fd()). */
                        if (args[3] != 0)
                                return -EINVAL;
                        target_descriptor(op, (uint32_t) args[0]);
                        return 0;
                }
                op->form = DSH_METADATA_TARGET_PATH;
                op->dirfd = (int) args[0];
                op->path = args[1];
                return 0;
        case __NR_setxattr:
        case __NR_lsetxattr:
        case __NR_fsetxattr:
                op->kind = DSH_METADATA_SETXATTR;
                if (nr == __NR_fsetxattr)
                        target_descriptor(op, (uint32_t) args[0]);
                else
                        target_path(op, AT_FDCWD, args[0], nr == __NR_setxattr);
                op->name = args[1];
                op->value = args[2];
                op->size = args[3];
                op->xattr_flags = (int) args[4];
                return 0;
        case __NR_removexattr:
        case __NR_lremovexattr:
        case __NR_fremovexattr:
                op->kind = DSH_METADATA_REMOVEXATTR;
                if (nr == __NR_fremovexattr)
                        target_descriptor(op, (uint32_t) args[0]);
                else
                        target_path(op, AT_FDCWD, args[0], nr == __NR_removexattr);
                op->name = args[1];
                return 0;
        case __NR_setxattrat:
        case __NR_removexattrat:
                op->kind = nr == __NR_setxattrat ? DSH_METADATA_SETXATTR : DSH_METADATA_REMOVEXATTR;
                target_path(op, (int) args[0], args[1], true);
                if (decode_at_flags((unsigned int) args[2], op) < 0)
                        return -EINVAL;
                op->name = args[3];
                op->null_path_empty = op->empty_path_allowed;
                op->xattr_args = nr == __NR_setxattrat;
                op->struct_argument = args[4];
                op->struct_size = args[5];
                return 0;
        case __NR_file_setattr:
                op->kind = DSH_METADATA_FILE_SETATTR;
                target_path(op, (int) args[0], args[1], true);
                op->struct_argument = args[2];
                op->struct_size = args[3];
                if (op->struct_size > STRUCT_ARGUMENT_LIMIT)
                        return -E2BIG;
                if (op->struct_size < FILE_ATTR_SIZE_VER0)
                        return -EINVAL;
                if (decode_at_flags((unsigned int) args[4], op) < 0)
                        return -EINVAL;
                op->null_path_empty = op->empty_path_allowed;
                return 0;
        case __NR_ioctl:
                op->kind = DSH_METADATA_IOCTL;
                target_descriptor(op, (uint32_t) args[0]);
                op->ioctl_command = (unsigned int) args[1];
                op->ioctl_argument = args[2];
                if (op->ioctl_command == DSH_TIOCGPTPEER)
                        return decode_pty_peer(op);
                if (op->ioctl_command != DSH_FS_IOC_SETFLAGS && op->ioctl_command != DSH_FS_IOC32_SETFLAGS &&
                    op->ioctl_command != DSH_FS_IOC_FSSETXATTR)
                        return -EACCES;  /* the filter sends no other: refuse what cannot be decided */
                return 0;
        default:
                return -EACCES;
        }
}

/* "/proc/self/fd/N" or "/proc/thread-self/fd/N" exactly: `*fd` is N. */
bool dsh_metadata_own_descriptor_path(const char *path, int *fd)
{
        static const char *const prefixes[] = { "/proc/self/fd/", "/proc/thread-self/fd/" };

        for (size_t i = 0; i < 2; i++) {
                size_t length = strlen(prefixes[i]);
                const char *digits = path + length;
                long value = 0;

                /* As procfs reads a number: digits only, no leading zero. */
                if (strncmp(path, prefixes[i], length) != 0 || !digits[0] || strlen(digits) > 10 ||
                    strspn(digits, "0123456789") != strlen(digits) || (digits[0] == '0' && digits[1]))
                        continue;
                for (const char *digit = digits; *digit; digit++)
                        value = value * 10 + (*digit - '0');
                if (value > INT_MAX)
                        return false;
                *fd = (int) value;
                return true;
        }
        return false;
}

const char *dsh_metadata_change_name(dsh_metadata_change kind)
{
        switch (kind) {
        case DSH_METADATA_CHMOD:
                return "chmod";
        case DSH_METADATA_CHOWN:
                return "chown";
        case DSH_METADATA_TIMES:
                return "utimes";
        case DSH_METADATA_SETXATTR:
                return "setxattr";
        case DSH_METADATA_REMOVEXATTR:
                return "removexattr";
        case DSH_METADATA_FILE_SETATTR:
        case DSH_METADATA_IOCTL:
                return "setattr";
        case DSH_METADATA_PTY_PEER:
                break;
        }
        return "ioctl";
}

