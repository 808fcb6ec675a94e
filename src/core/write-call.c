/* SPDX-License-Identifier: MIT */
/*
 * Write-intent calls, decoded: see write-call.h.  Every argument is a
 * hostile command's register, read as the kernel reads it: an int (a
 * dirfd, flags) is the low 32 bits, sign-extended (AT_FDCWD is -100 in any
 * spelling of the upper half); a mode is a umode_t, the low 16 bits; a
 * device number the low 32.  A flag the kernel would refuse before looking
 * at a path is refused here (-EINVAL), so a call the kernel would fail
 * leaves no refusal record and is never performed; an open's flags are
 * normalised as the kernel's own build_open_how() normalises open and
 * openat (unknown bits dropped, O_PATH beating every other flag, no mode
 * unless it creates), so the supervisor can hand them to openat2(), which
 * refuses what openat() ignores.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>

#include "core/kernel-abi.h"
#include "core/write-call.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1U << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1U << 1)
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1U << 2)
#endif

/* The kernel's own O_TMPFILE bit: glibc's O_TMPFILE also holds O_DIRECTORY (metadata-filter.c). */
#define KERNEL_O_TMPFILE_BIT 020000000
/* What the kernel keeps of an open's flags (include/linux/fcntl.h's VALID_OPEN_FLAGS), and of an O_PATH one. */
#define VALID_OPEN_FLAGS                                                                                      \
        (O_RDONLY | O_WRONLY | O_RDWR | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NDELAY | O_DSYNC | \
         O_ASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC | O_PATH |        \
         KERNEL_O_TMPFILE_BIT | O_SYNC)
#define O_PATH_FLAGS (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)
/* A permission mode and its set-id and sticky bits (S_IALLUGO): an open's mode keeps no file type. */
#define ALL_PERMISSION_BITS 07777
/* What creat(2) is: open(path, O_CREAT | O_WRONLY | O_TRUNC, mode). */
#define CREAT_FLAGS (O_CREAT | O_WRONLY | O_TRUNC)

static int int_argument(uint64_t value)
{
        return (int) (int32_t) (uint32_t) value;
}

static mode_t mode_argument(uint64_t value)
{
        return (mode_t) (uint16_t) value;
}

bool dsh_write_call_is_ours(int nr)
{
        switch (nr) {
#ifdef __NR_open
        case __NR_open:
#endif
#ifdef __NR_creat
        case __NR_creat:
#endif
#ifdef __NR_mkdir
        case __NR_mkdir:
#endif
#ifdef __NR_mknod
        case __NR_mknod:
#endif
#ifdef __NR_unlink
        case __NR_unlink:
#endif
#ifdef __NR_rmdir
        case __NR_rmdir:
#endif
#ifdef __NR_rename
        case __NR_rename:
#endif
#ifdef __NR_renameat
        case __NR_renameat:
#endif
#ifdef __NR_link
        case __NR_link:
#endif
#ifdef __NR_symlink
        case __NR_symlink:
#endif
        case __NR_openat:
        case __NR_mkdirat:
        case __NR_mknodat:
        case __NR_unlinkat:
        case __NR_renameat2:
        case __NR_linkat:
        case __NR_symlinkat:
        case __NR_truncate:
                return true;
        default:
                return false;
        }
}

/*
 * An open's flags and mode as the kernel keeps them (build_open_how()), then
 * checked as it checks them (build_open_flags()) before any lookup: O_CREAT
 * with O_DIRECTORY, and O_TMPFILE with O_CREAT, without O_DIRECTORY or
 * without a writing access mode, are EINVAL.  O_LARGEFILE as the kernel
 * spells it is dropped on a 64-bit build (glibc's is 0 there): the kernel
 * adds it to every open, openat2's included.
 */
static int decode_open(dsh_write_request *request, int dirfd, uint64_t path, uint64_t flags, uint64_t mode)
{
        int kept = int_argument(flags) & VALID_OPEN_FLAGS;
        bool creates;

        if (kept & O_PATH)
                kept &= O_PATH_FLAGS;
        creates = (kept & O_CREAT) || (kept & KERNEL_O_TMPFILE_BIT);
        if ((kept & O_CREAT) && (kept & O_DIRECTORY))
                return -EINVAL;
        if ((kept & KERNEL_O_TMPFILE_BIT) &&
            ((kept & (O_CREAT | O_DIRECTORY)) != O_DIRECTORY || (kept & O_ACCMODE) == O_RDONLY))
                return -EINVAL;
        request->op = DSH_WRITE_OPEN;
        request->dirfd = dirfd;
        request->path = path;
        request->open_flags = kept;
        request->mode = creates ? mode_argument(mode) & ALL_PERMISSION_BITS : 0;
        request->follow = !(kept & O_NOFOLLOW);
        return 0;
}

static void decode_named(dsh_write_request *request, dsh_write_op op, int dirfd, uint64_t path)
{
        request->op = op;
        request->dirfd = dirfd;
        request->path = path;
}

static void decode_two_names(dsh_write_request *request, dsh_write_op op, const uint64_t *args)
{
        decode_named(request, op, int_argument(args[0]), args[1]);
        request->new_dirfd = int_argument(args[2]);
        request->new_path = args[3];
}

/* unlinkat(dirfd, path, flags): AT_REMOVEDIR makes it rmdir; any other flag is EINVAL. */
static int decode_unlinkat(dsh_write_request *request, const uint64_t *args)
{
        unsigned int flags = (unsigned int) args[2];

        if (flags & ~(unsigned int) AT_REMOVEDIR)
                return -EINVAL;
        decode_named(request, flags & AT_REMOVEDIR ? DSH_WRITE_RMDIR : DSH_WRITE_UNLINK, int_argument(args[0]),
                     args[1]);
        return 0;
}

/* renameat2's flags: only these three, and RENAME_EXCHANGE with neither of the others (do_renameat2()). */
static int decode_rename_flags(dsh_write_request *request, unsigned int flags)
{
        if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
                return -EINVAL;
        if ((flags & RENAME_EXCHANGE) && (flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)))
                return -EINVAL;
        request->rename_flags = flags;
        return 0;
}

/* linkat's flags: AT_SYMLINK_FOLLOW (follow the source), AT_EMPTY_PATH (the source is the dirfd); nothing else. */
static int decode_link_flags(dsh_write_request *request, unsigned int flags)
{
        if (flags & ~(unsigned int) (AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
                return -EINVAL;
        request->follow = flags & AT_SYMLINK_FOLLOW;
        request->empty_path = flags & AT_EMPTY_PATH;
        return 0;
}

static void decode_creation(dsh_write_request *request, dsh_write_op op, int dirfd, const uint64_t *args)
{
        decode_named(request, op, dirfd, args[0]);
        request->mode = mode_argument(args[1]);
        if (op == DSH_WRITE_MKNOD)
                request->device = (dev_t) (uint32_t) args[2];
}

/* The calls of the older numbers (absent on aarch64): each is its *at form from the cwd. */
static int decode_legacy(int nr, const uint64_t *args, dsh_write_request *request)
{
        (void) args;            /* unused where the architecture has none of these (aarch64) */
        (void) request;
        switch (nr) {
#ifdef __NR_open
        case __NR_open:
                return decode_open(request, AT_FDCWD, args[0], args[1], args[2]);
#endif
#ifdef __NR_creat
        case __NR_creat:
                return decode_open(request, AT_FDCWD, args[0], CREAT_FLAGS, args[1]);
#endif
#ifdef __NR_mkdir
        case __NR_mkdir:
                decode_creation(request, DSH_WRITE_MKDIR, AT_FDCWD, args);
                return 0;
#endif
#ifdef __NR_mknod
        case __NR_mknod:
                decode_creation(request, DSH_WRITE_MKNOD, AT_FDCWD, args);
                return 0;
#endif
#ifdef __NR_unlink
        case __NR_unlink:
                decode_named(request, DSH_WRITE_UNLINK, AT_FDCWD, args[0]);
                return 0;
#endif
#ifdef __NR_rmdir
        case __NR_rmdir:
                decode_named(request, DSH_WRITE_RMDIR, AT_FDCWD, args[0]);
                return 0;
#endif
#ifdef __NR_rename
        case __NR_rename:
                decode_two_names(request, DSH_WRITE_RENAME, (const uint64_t[]) { (uint64_t) AT_FDCWD, args[0],
                                                                                 (uint64_t) AT_FDCWD, args[1] });
                return 0;
#endif
#ifdef __NR_link
        case __NR_link:
                /* link(2) follows no symlink: linkat without AT_SYMLINK_FOLLOW. */
                decode_two_names(request, DSH_WRITE_LINK, (const uint64_t[]) { (uint64_t) AT_FDCWD, args[0],
                                                                               (uint64_t) AT_FDCWD, args[1] });
                return 0;
#endif
#ifdef __NR_symlink
        case __NR_symlink:
                decode_named(request, DSH_WRITE_SYMLINK, AT_FDCWD, args[1]);
                request->symlink_target = args[0];
                return 0;
#endif
        default:
                return -EACCES;  /* the filter sends no other: refuse what cannot be decided */
        }
}

int dsh_write_request_decode(int nr, const uint64_t *args, dsh_write_request *request)
{
        memset(request, 0, sizeof(*request));
        request->dirfd = AT_FDCWD;
        request->new_dirfd = AT_FDCWD;
        switch (nr) {
        case __NR_openat:
                return decode_open(request, int_argument(args[0]), args[1], args[2], args[3]);
        case __NR_mkdirat:
                decode_creation(request, DSH_WRITE_MKDIR, int_argument(args[0]), args + 1);
                return 0;
        case __NR_mknodat:
                decode_creation(request, DSH_WRITE_MKNOD, int_argument(args[0]), args + 1);
                return 0;
        case __NR_unlinkat:
                return decode_unlinkat(request, args);
#ifdef __NR_renameat
        case __NR_renameat:
                decode_two_names(request, DSH_WRITE_RENAME, args);
                return 0;
#endif
        case __NR_renameat2:
                decode_two_names(request, DSH_WRITE_RENAME, args);
                return decode_rename_flags(request, (unsigned int) args[4]);
        case __NR_linkat:
                decode_two_names(request, DSH_WRITE_LINK, args);
                return decode_link_flags(request, (unsigned int) args[4]);
        case __NR_symlinkat:
                decode_named(request, DSH_WRITE_SYMLINK, int_argument(args[1]), args[2]);
                request->symlink_target = args[0];
                return 0;
        case __NR_truncate:
                decode_named(request, DSH_WRITE_TRUNCATE, AT_FDCWD, args[0]);
                request->length = (int64_t) args[1];
                request->follow = true;
                return request->length < 0 ? -EINVAL : 0;
        default:
                return decode_legacy(nr, args, request);
        }
}

const char *dsh_write_op_name(dsh_write_op op)
{
        switch (op) {
        case DSH_WRITE_OPEN:
                return "open";
        case DSH_WRITE_MKDIR:
                return "mkdir";
        case DSH_WRITE_MKNOD:
                return "mknod";
        case DSH_WRITE_UNLINK:
                return "unlink";
        case DSH_WRITE_RMDIR:
                return "rmdir";
        case DSH_WRITE_RENAME:
                return "rename";
        case DSH_WRITE_LINK:
                return "link";
        case DSH_WRITE_SYMLINK:
                return "symlink";
        case DSH_WRITE_TRUNCATE:
                return "truncate";
        }
        return "write";
}
