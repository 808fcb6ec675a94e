/* SPDX-License-Identifier: MIT */
/*
 * One write-intent call as the supervisor receives it — a system call number
 * and six raw arguments from a hostile command — decoded into what it asks
 * for, its flags checked as the kernel checks them before it looks at any
 * path.  Pure functions of their input (no memory of the command is read
 * here), so that a fuzz target can drive them alone.  libc only.
 *
 * Write intent: an open with O_WRONLY, O_RDWR, O_CREAT, O_TRUNC or
 * O_TMPFILE (the filter sends no other open: a plain read never reaches
 * the supervisor), creat, mkdir, mknod, unlink, rmdir, the rename family,
 * link, symlink and truncate — every call that makes, removes, renames or
 * writes through a name (write-supervisor.c decides them).  openat2 is not
 * among them: the filter refuses it (metadata-filter.h).
 */
#ifndef DSH_SANDBOX_WRITE_CALL_H
#define DSH_SANDBOX_WRITE_CALL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum dsh_write_op {
        DSH_WRITE_OPEN,         /* open, openat (with write intent), creat */
        DSH_WRITE_MKDIR,        /* mkdir, mkdirat */
        DSH_WRITE_MKNOD,        /* mknod, mknodat */
        DSH_WRITE_UNLINK,       /* unlink, unlinkat without AT_REMOVEDIR */
        DSH_WRITE_RMDIR,        /* rmdir, unlinkat with AT_REMOVEDIR */
        DSH_WRITE_RENAME,       /* rename, renameat, renameat2 */
        DSH_WRITE_LINK,         /* link, linkat */
        DSH_WRITE_SYMLINK,      /* symlink, symlinkat */
        DSH_WRITE_TRUNCATE,     /* truncate */
} dsh_write_op;

typedef struct dsh_write_request {
        dsh_write_op op;
        /*
         * The name the call acts on, resolved from `dirfd` (AT_FDCWD: the
         * cwd; an absolute path: the root): the file opened, made or
         * removed, the source of a rename or a link, the link a symlink
         * makes.
         */
        int dirfd;
        uint64_t path;
        /* The destination of a rename or a link, resolved from `new_dirfd`; unused otherwise. */
        int new_dirfd;
        uint64_t new_path;
        uint64_t symlink_target;        /* DSH_WRITE_SYMLINK: the address of the text the link holds */
        int open_flags;                 /* DSH_WRITE_OPEN: as given (creat: O_CREAT|O_WRONLY|O_TRUNC) */
        unsigned int rename_flags;      /* DSH_WRITE_RENAME: RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT */
        mode_t mode;                    /* OPEN (when it creates), MKDIR, MKNOD: as given, before the umask */
        dev_t device;                   /* DSH_WRITE_MKNOD */
        int64_t length;                 /* DSH_WRITE_TRUNCATE */
        bool follow;                    /* OPEN: no O_NOFOLLOW; LINK: AT_SYMLINK_FOLLOW (follow the source) */
        bool empty_path;                /* LINK: AT_EMPTY_PATH, the source is `dirfd` itself (path ignored) */
} dsh_write_request;

/* Whether `nr` is one of the write-intent calls above (the filter sends an open only with write intent). */
bool dsh_write_call_is_ours(int nr);

/*
 * Decodes the call `nr` with `args` into `request`.  Returns 0, or the
 * negative errno to answer at once: -EINVAL for flags the kernel refuses
 * (unknown unlinkat, renameat2 or linkat flags, RENAME_EXCHANGE with
 * another flag, a negative truncate length; an open's O_CREAT with
 * O_DIRECTORY, its O_TMPFILE with O_CREAT or without a writing access
 * mode), -EACCES for a call that is not a write-intent call (the filter
 * should not have sent it: what cannot be decided is refused).  An open's
 * flags come out as the kernel keeps them (unknown bits dropped, O_PATH
 * beating the others, `mode` 0 unless it creates), ready for openat2().
 */
int dsh_write_request_decode(int nr, const uint64_t *args, dsh_write_request *request);

/* The op's name in a refusal record: "open", "mkdir", "mknod", "unlink", "rmdir", "rename", "link", ... */
const char *dsh_write_op_name(dsh_write_op op);

#endif
