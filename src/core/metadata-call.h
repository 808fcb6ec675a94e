/* SPDX-License-Identifier: MIT */
/*
 * One metadata call as the metadata supervisor receives it — a system call
 * number and six raw arguments from a hostile command — decoded into what it
 * asks for, with its flags checked as the kernel checks them before it looks
 * at any path.  Pure functions of their input (no memory of the command is
 * read here: the supervisor copies what the request points at), so that a
 * fuzz target can drive them alone.  libc only.
 */
#ifndef DSH_SANDBOX_METADATA_CALL_H
#define DSH_SANDBOX_METADATA_CALL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What one notification asks for, decoded from the system call number and its six raw arguments. */
typedef enum dsh_metadata_change {
        DSH_METADATA_CHMOD,
        DSH_METADATA_CHOWN,
        DSH_METADATA_TIMES,
        DSH_METADATA_SETXATTR,
        DSH_METADATA_REMOVEXATTR,
        DSH_METADATA_FILE_SETATTR,
        DSH_METADATA_IOCTL,
        DSH_METADATA_PTY_PEER,             /* TIOCGPTPEER: not a change, a pty's slave opened for the command */
} dsh_metadata_change;

/* How the call names its target. */
typedef enum dsh_metadata_target {
        DSH_METADATA_TARGET_PATH,          /* a path (relative to a dirfd, the cwd or the root) */
        DSH_METADATA_TARGET_DESCRIPTOR,    /* a descriptor alone: fchmod, fchown, fsetxattr, futimens... */
        DSH_METADATA_TARGET_EMPTY_PATH,    /* a descriptor through an *at call's AT_EMPTY_PATH */
} dsh_metadata_target;

typedef enum dsh_metadata_times {
        DSH_METADATA_TIMES_UTIMBUF,        /* utime(): struct utimbuf */
        DSH_METADATA_TIMES_TIMEVAL,        /* utimes(), futimesat(): struct timeval[2] */
        DSH_METADATA_TIMES_TIMESPEC,       /* utimensat(): struct timespec[2] */
} dsh_metadata_times;

typedef struct dsh_metadata_request {
        dsh_metadata_change kind;
        dsh_metadata_target form;
        int dirfd;                      /* AT_FDCWD or the command's descriptor */
        uint64_t path;                  /* DSH_METADATA_TARGET_PATH: the address of the path */
        bool follow;                    /* follow a trailing symlink */
        bool empty_path_allowed;        /* AT_EMPTY_PATH: an empty path names `dirfd` itself */
        bool null_path_empty;           /* and so does a NULL one (the *xattrat calls, file_setattr) */
        mode_t mode;
        uid_t uid;
        gid_t gid;
        dsh_metadata_times times_format;
        uint64_t times;                 /* address; 0: now */
        uint64_t name;                  /* xattr name address */
        uint64_t value;                 /* xattr value address */
        uint64_t size;                  /* xattr value size */
        int xattr_flags;
        bool xattr_args;                /* setxattrat(): value, size and flags in a struct xattr_args */
        uint64_t struct_argument;       /* setxattrat's xattr_args, file_setattr's file_attr */
        uint64_t struct_size;
        unsigned int ioctl_command;
        uint64_t ioctl_argument;
        int pty_peer_flags;             /* DSH_METADATA_PTY_PEER: the open flags asked for the slave */
} dsh_metadata_request;

/*
 * Decodes the call `nr` with `args` into `request`.  Returns 0, or the
 * negative errno to answer at once (-EINVAL for flags the kernel refuses,
 * -E2BIG / -EINVAL for a struct size it refuses, -EACCES for a call the
 * filter should not have sent: what cannot be decided is refused).
 */
int dsh_metadata_request_decode(int nr, const uint64_t *args, dsh_metadata_request *request);

/* The change's name in a refusal record: "chmod", "chown", "utimes", "setxattr", "removexattr", "setattr". */
const char *dsh_metadata_change_name(dsh_metadata_change kind);

/*
 * True when `path` is exactly "/proc/self/fd/N" or "/proc/thread-self/fd/N"
 * with N as procfs reads a number (digits only, no leading zero, at most
 * INT_MAX): `*fd` is N.
 */
bool dsh_metadata_own_descriptor_path(const char *path, int *fd);

#endif
