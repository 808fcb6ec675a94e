/* SPDX-License-Identifier: MIT */
/*
 * The escape matrix (see escape-matrix.h): the table, and the machinery that
 * runs one case per forked process and judges it on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/landlock.h"
#include "core/private-dev.h"
#include "dsh-sandbox/provider.h"
#include "escape-matrix.h"
#include "test-support.h"

/* A supplementary group the case process joins, so that a chown to it needs no capability. */
#define ESCAPE_GROUP 4242
#define ESCAPE_GROUP_TEXT "4242"

/* What a case must come to, by outcome and (for a denial) the errno the backend answers with. */
typedef enum escape_outcome {
        ESCAPE_DENIED,           /* the call fails and nothing watched changes on disk */
        ESCAPE_ALLOWED,          /* the call succeeds and the change is on disk */
        ESCAPE_ALLOWED_PRIVATE,  /* the call succeeds in a private area: nothing reaches the host */
        ESCAPE_NOT_GOVERNED,     /* allowed because the backend does not govern the operation: a known gap */
} escape_outcome;

typedef struct escape_expectation {
        escape_outcome outcome;
        const char *errno_names; /* a denial's errno ("EROFS"), or a choice ("EROFS|EACCES"); NULL: any failure */
} escape_expectation;

#define DENY(errno_names) { ESCAPE_DENIED, errno_names }
#define ALLOW { ESCAPE_ALLOWED, NULL }
#define PRIVATE { ESCAPE_ALLOWED_PRIVATE, NULL }
#define NOT_GOVERNED { ESCAPE_NOT_GOVERNED, NULL }

/* Why a row a backend cannot defend is allowed: written once, printed in each note and mismatch. */
#define BACKEND_GAP "not governed by this backend (a known gap, reported as partial enforcement)"

typedef enum escape_observation {
        ESCAPE_OBSERVE_DISK,          /* the watched paths, and the errno */
        ESCAPE_OBSERVE_ERRNO,         /* the errno alone: the effect cannot show (the value written is the same) */
        ESCAPE_OBSERVE_CAPABILITIES,  /* the capability sets: "denied" means all five are empty */
} escape_observation;

/* What a row needs of the host; without it the row is skipped, with the reason printed. */
typedef enum escape_requirement {
        ESCAPE_REQUIRES_NOTHING = 0,
        ESCAPE_REQUIRES_ROOT,          /* a question only root's privileges raise, or root to set it up */
        ESCAPE_REQUIRES_USER_XATTRS,   /* user.* xattrs on the scratch filesystem */
        ESCAPE_REQUIRES_ACLS,          /* POSIX ACLs on the scratch filesystem */
        ESCAPE_REQUIRES_EXT4_VERSION,  /* ext4's EXT4_IOC_SETVERSION on the scratch filesystem */
        ESCAPE_REQUIRES_MOUNT,         /* the caller may mount: Landlock's command gets a /dev/shm of its own */
        ESCAPE_REQUIRES_NO_MOUNT,      /* the caller may not: the host's /dev/shm stays read-only */
} escape_requirement;

/*
 * One row: an operation on a target.  `argv` and the paths take the
 * placeholders {ws} (the workspace), {out} (a directory outside every root),
 * {tmp} and {shm} (fresh names in /tmp and /dev/shm).  Each of {ws} and {out}
 * holds `file` ("original\n", mode 0644, with the xattr user.dsh-existing
 * where the filesystem takes user xattrs), an empty `dir` and `symlink`, a
 * symlink to `file`; {ws} also holds `symlink-out`, a symlink to {out}/file.
 */
typedef struct escape_row {
        const char *operation;
        const char *target;
        const char *argv[5];            /* escape-op's operation and arguments */
        const char *watch[3];           /* paths whose state on disk is compared before and after */
        const char *stdin_path;         /* the command's stdin, opened O_RDONLY (default /dev/null) */
        int inherited_fd;               /* this fd number is open O_WRONLY on {out}/file, without O_CLOEXEC */
        escape_observation observe;
        escape_requirement requires;
        escape_expectation bwrap[2];    /* by mode: read-only, workspace-write */
        escape_expectation landlock[2]; /* every Landlock path: the same ruleset */
} escape_row;

/*
 * A metadata change in the workspace: refused under read-only by both backends (Landlock's metadata
 * filter's EPERM; bwrap's supervisor's EACCES, whose one read-only root is the call's private /tmp),
 * made under workspace-write (by the metadata supervisor, on both).
 */
#define METADATA_INSIDE(operation, target, requirement, watched, ...)                                        \
        { operation, target, __VA_ARGS__, { watched }, .requires = requirement,                                 \
          .bwrap = { DENY("EACCES"), ALLOW }, .landlock = { DENY("EPERM"), ALLOW } }

/* A metadata change of {out}/file, by whatever route: refused under both modes by both backends. */
#define METADATA_OUTSIDE(operation, target, requirement, ...)                                                  \
        { operation, target, __VA_ARGS__, { "{out}/file" }, .requires = requirement,                            \
          .bwrap = { DENY("EACCES"), DENY("EACCES") }, .landlock = { DENY("EPERM"), DENY("EACCES") } }

/*
 * The dialects: bwrap answers a write on a read-only mount with EROFS; a
 * rename between two mounts (the workspace bind and the rest) with EXDEV
 * before it looks at writability, a link with EROFS when its new name is
 * read-only and EXDEV when only the source lies on another mount.  Its
 * /dev is a private tmpfs: /dev/shm, like /tmp in both modes (a tmpfs under
 * read-only; the session's scratch, or a tmpfs, under workspace-write), takes
 * writes that never reach the host's; so does Landlock's under
 * workspace-write when the caller may mount (a tmpfs of the command's own),
 * and refuses them otherwise.  Landlock answers EACCES, and EXDEV where
 * a link would give a file rights it does not have where it lies.  Device
 * nodes are never granted: bwrap has no CAP_MKNOD (EPERM), Landlock never
 * grants MAKE_CHAR (EACCES).
 */
static const escape_row rows[] = {
        /* Plain writes. */
        { "create", "workspace", { "create", "{ws}/new" }, { "{ws}/new" }, .bwrap = { DENY("EROFS"), ALLOW },
          .landlock = { DENY("EACCES"), ALLOW } },
        { "create", "outside", { "create", "{out}/new" }, { "{out}/new" }, .bwrap = { DENY("EROFS"), DENY("EROFS") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "create", "/tmp", { "create", "{tmp}" }, { "{tmp}" }, .bwrap = { PRIVATE, PRIVATE },
          .landlock = { DENY("EACCES"), ALLOW } },
        { "create", "/dev/shm", { "create", "{shm}" }, { "{shm}" }, .requires = ESCAPE_REQUIRES_MOUNT,
          .bwrap = { PRIVATE, PRIVATE }, .landlock = { DENY("EACCES"), PRIVATE } },
        { "create", "/dev/shm (no private one)", { "create", "{shm}" }, { "{shm}" },
          .requires = ESCAPE_REQUIRES_NO_MOUNT, .bwrap = { PRIVATE, PRIVATE },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "create-in-grandchild", "workspace", { "in-grandchild", "create", "{ws}/new" }, { "{ws}/new" },
          .bwrap = { DENY("EROFS"), ALLOW }, .landlock = { DENY("EACCES"), ALLOW } },
        { "create-in-grandchild", "outside", { "in-grandchild", "create", "{out}/new" }, { "{out}/new" },
          .bwrap = { DENY("EROFS"), DENY("EROFS") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "write", "workspace", { "write", "{ws}/file" }, { "{ws}/file" }, .bwrap = { DENY("EROFS"), ALLOW },
          .landlock = { DENY("EACCES"), ALLOW } },
        { "write", "outside", { "write", "{out}/file" }, { "{out}/file" }, .bwrap = { DENY("EROFS"), DENY("EROFS") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "append", "workspace", { "append", "{ws}/file" }, { "{ws}/file" }, .bwrap = { DENY("EROFS"), ALLOW },
          .landlock = { DENY("EACCES"), ALLOW } },
        { "append", "outside", { "append", "{out}/file" }, { "{out}/file" },
          .bwrap = { DENY("EROFS"), DENY("EROFS") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "truncate", "workspace", { "truncate", "{ws}/file" }, { "{ws}/file" }, .bwrap = { DENY("EROFS"), ALLOW },
          .landlock = { DENY("EACCES"), ALLOW } },
        { "truncate", "outside", { "truncate", "{out}/file" }, { "{out}/file" },
          .bwrap = { DENY("EROFS"), DENY("EROFS") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "open-truncate", "workspace", { "open-truncate", "{ws}/file" }, { "{ws}/file" },
          .bwrap = { DENY("EROFS"), ALLOW }, .landlock = { DENY("EACCES"), ALLOW } },
        { "open-truncate", "outside", { "open-truncate", "{out}/file" }, { "{out}/file" },
          .bwrap = { DENY("EROFS"), DENY("EROFS") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },

        /* Names moved or added across the workspace boundary. */
        { "rename", "within the workspace", { "rename", "{ws}/file", "{ws}/moved" }, { "{ws}/file", "{ws}/moved" },
          .bwrap = { DENY("EROFS"), ALLOW }, .landlock = { DENY("EACCES"), ALLOW } },
        { "rename", "outside into the workspace", { "rename", "{out}/file", "{ws}/moved" },
          { "{out}/file", "{ws}/moved" }, .bwrap = { DENY("EROFS"), DENY("EXDEV") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "rename", "workspace out to outside", { "rename", "{ws}/file", "{out}/moved" },
          { "{ws}/file", "{out}/moved" }, .bwrap = { DENY("EROFS"), DENY("EXDEV") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "rename-exchange", "within the workspace", { "exchange", "{ws}/file", "{ws}/dir" },
          { "{ws}/file", "{ws}/dir" }, .bwrap = { DENY("EROFS"), ALLOW }, .landlock = { DENY("EACCES"), ALLOW } },
        { "rename-exchange", "workspace with outside", { "exchange", "{ws}/file", "{out}/file" },
          { "{ws}/file", "{out}/file" }, .bwrap = { DENY("EROFS"), DENY("EXDEV") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "link", "within the workspace", { "link", "{ws}/file", "{ws}/link" }, { "{ws}/file", "{ws}/link" },
          .bwrap = { DENY("EROFS"), ALLOW }, .landlock = { DENY("EACCES"), ALLOW } },
        { "link", "outside file into the workspace", { "link", "{out}/file", "{ws}/link" },
          { "{out}/file", "{ws}/link" }, .bwrap = { DENY("EROFS"), DENY("EXDEV") },
          .landlock = { DENY("EACCES"), DENY("EXDEV") } },
        { "link", "workspace file to outside", { "link", "{ws}/file", "{out}/link" }, { "{ws}/file", "{out}/link" },
          .bwrap = { DENY("EROFS"), DENY("EROFS") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "unlink", "workspace", { "unlink", "{ws}/file" }, { "{ws}/file" }, .bwrap = { DENY("EROFS"), ALLOW },
          .landlock = { DENY("EACCES"), ALLOW } },
        { "unlink", "outside", { "unlink", "{out}/file" }, { "{out}/file" },
          .bwrap = { DENY("EROFS"), DENY("EROFS") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "rmdir", "workspace", { "rmdir", "{ws}/dir" }, { "{ws}/dir" }, .bwrap = { DENY("EROFS"), ALLOW },
          .landlock = { DENY("EACCES"), ALLOW } },
        { "rmdir", "outside", { "rmdir", "{out}/dir" }, { "{out}/dir" }, .bwrap = { DENY("EROFS"), DENY("EROFS") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },

        /* Every kind of new inode. */
        { "mkdir", "workspace", { "mkdir", "{ws}/new" }, { "{ws}/new" }, .bwrap = { DENY("EROFS"), ALLOW },
          .landlock = { DENY("EACCES"), ALLOW } },
        { "mkdir", "outside", { "mkdir", "{out}/new" }, { "{out}/new" }, .bwrap = { DENY("EROFS"), DENY("EROFS") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "mkdir", "/tmp", { "mkdir", "{tmp}" }, { "{tmp}" }, .bwrap = { PRIVATE, PRIVATE },
          .landlock = { DENY("EACCES"), ALLOW } },
        { "mkfifo", "workspace", { "mkfifo", "{ws}/new" }, { "{ws}/new" }, .bwrap = { DENY("EROFS"), ALLOW },
          .landlock = { DENY("EACCES"), ALLOW } },
        { "mkfifo", "outside", { "mkfifo", "{out}/new" }, { "{out}/new" },
          .bwrap = { DENY("EROFS"), DENY("EROFS") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "socket", "workspace", { "bind-socket", "{ws}/new" }, { "{ws}/new" }, .bwrap = { DENY("EROFS"), ALLOW },
          .landlock = { DENY("EACCES"), ALLOW } },
        { "socket", "outside", { "bind-socket", "{out}/new" }, { "{out}/new" },
          .bwrap = { DENY("EROFS"), DENY("EROFS") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "symlink", "workspace", { "symlink", "/etc/passwd", "{ws}/new" }, { "{ws}/new" },
          .bwrap = { DENY("EROFS"), ALLOW }, .landlock = { DENY("EACCES"), ALLOW } },
        { "symlink", "outside", { "symlink", "/etc/passwd", "{out}/new" }, { "{out}/new" },
          .bwrap = { DENY("EROFS"), DENY("EROFS") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "mknod-char-device", "workspace", { "mknod-char", "{ws}/new" }, { "{ws}/new" },
          .bwrap = { DENY("EROFS"), DENY("EPERM") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "mknod-char-device", "outside", { "mknod-char", "{out}/new" }, { "{out}/new" },
          .bwrap = { DENY("EROFS"), DENY("EROFS") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },

        /*
         * Daemon sockets (docs/security.md, "Unix sockets"): the supervisor performs every connect,
         * on both backends and in both modes. A host daemon listening on a pathname outside every root
         * ({out}/daemon.sock), the same through a symlink in the workspace, or on an abstract name, is
         * refused (EACCES); the command's own socket in the workspace is reached under
         * workspace-write. A unix datagram socket is refused outright: it sends to any pathname
         * without a connect the supervisor would see.
         */
        { "connect-unix", "a host daemon outside every root", { "connect-unix", "{out}/daemon.sock" }, { NULL },
          .observe = ESCAPE_OBSERVE_ERRNO, .bwrap = { DENY("EACCES"), DENY("EACCES") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "connect-unix", "a host daemon through a symlink in the workspace", { "connect-unix", "{ws}/symlink-sock" },
          { NULL }, .observe = ESCAPE_OBSERVE_ERRNO, .bwrap = { DENY("EACCES"), DENY("EACCES") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "connect-unix", "a socket in the workspace", { "connect-unix", "{ws}/daemon.sock" }, { NULL },
          .observe = ESCAPE_OBSERVE_ERRNO, .bwrap = { DENY("EACCES"), ALLOW }, .landlock = { DENY("EACCES"), ALLOW } },
        { "connect-abstract", "a host daemon on an abstract name", { "connect-abstract", "{abstract}" }, { NULL },
          .observe = ESCAPE_OBSERVE_ERRNO, .bwrap = { DENY("EACCES"), DENY("EACCES") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "socket-dgram", "a unix datagram socket", { "socket-dgram" }, { NULL }, .observe = ESCAPE_OBSERVE_ERRNO,
          .bwrap = { DENY("EACCES"), DENY("EACCES") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },

        /*
         * Metadata, the same on both backends (one supervisor, docs/supervisor.md): refused everywhere
         * under read-only (Landlock's filter: EPERM; bwrap's supervisor, whose one root is the call's
         * private /tmp: EACCES), and under workspace-write the metadata
         * supervisor performs it in the writable roots and refuses it elsewhere (EACCES) — whatever
         * the route: a plain path, a symlink in the workspace to the outside file, "..", the file opened
         * read-only and named /proc/self/fd/N, or a descriptor opened read-only.
         */
        METADATA_INSIDE("chmod", "workspace", ESCAPE_REQUIRES_NOTHING, "{ws}/file",
                        { "chmod", "{ws}/file", "600" }),
        METADATA_OUTSIDE("chmod", "outside", ESCAPE_REQUIRES_NOTHING, { "chmod", "{out}/file", "600" }),
        METADATA_OUTSIDE("chmod", "outside through a symlink in the workspace", ESCAPE_REQUIRES_NOTHING,
                         { "chmod", "{ws}/symlink-out", "600" }),
        METADATA_OUTSIDE("chmod", "outside through ..", ESCAPE_REQUIRES_NOTHING,
                         { "chmod", "{ws}/dir/../../out/file", "600" }),
        METADATA_OUTSIDE("chmod", "outside through /proc/self/fd/N", ESCAPE_REQUIRES_NOTHING,
                         { "via-proc-fd", "chmod", "{out}/file", "600" }),
        METADATA_INSIDE("chmod", "workspace through /proc/self/fd/N", ESCAPE_REQUIRES_NOTHING, "{ws}/file",
                        { "via-proc-fd", "chmod", "{ws}/file", "600" }),
        /*
         * The temp area itself (not what lies in it) is the host's under Landlock, the session's scratch
         * under bwrap workspace-write (its mode checked at every call), a private tmpfs under bwrap
         * read-only: its own mode stays on both.
         */
        { "chmod", "the temp area /tmp itself", { "chmod", "/tmp", "1777" }, { NULL }, .observe = ESCAPE_OBSERVE_ERRNO,
          .requires = ESCAPE_REQUIRES_ROOT, .bwrap = { DENY("EACCES"), DENY("EACCES") },
          .landlock = { DENY("EPERM"), DENY("EACCES") } },
        /*
         * The host's device nodes, which bwrap's /dev binds in (and Landlock's grants name): a chmod to the
         * mode they have already changes nothing but the inode's ctime, which the state compares.
         */
        { "chmod", "the host's /dev/null", { "chmod", "/dev/null", "666" }, { "/dev/null" },
          .bwrap = { DENY("EACCES"), DENY("EACCES") }, .landlock = { DENY("EPERM"), DENY("EACCES") } },
        { "chmod", "the host's /dev/zero", { "chmod", "/dev/zero", "666" }, { "/dev/zero" },
          .bwrap = { DENY("EACCES"), DENY("EACCES") }, .landlock = { DENY("EPERM"), DENY("EACCES") } },
        { "touch-d", "the host's /dev/urandom", { "touch-d", "/dev/urandom", "86400" }, { "/dev/urandom" },
          .bwrap = { DENY("EACCES"), DENY("EACCES") }, .landlock = { DENY("EPERM"), DENY("EACCES") } },
        { "chown", "the host's /dev/tty", { "chown", "/dev/tty", "-1", "-1" }, { "/dev/tty" },
          .bwrap = { DENY("EACCES"), DENY("EACCES") }, .landlock = { DENY("EPERM"), DENY("EACCES") } },
        /* Set-user-ID and set-group-ID bits: never, on either backend, through any call (EPERM). */
        { "chmod", "workspace, set-user-ID", { "chmod", "{ws}/file", "4755" }, { "{ws}/file" },
          .bwrap = { DENY("EPERM"), DENY("EPERM") }, .landlock = { DENY("EPERM"), DENY("EPERM") } },
        { "fchmod", "workspace, set-group-ID", { "fchmod", "{ws}/file", "2755" }, { "{ws}/file" },
          .bwrap = { DENY("EPERM"), DENY("EPERM") }, .landlock = { DENY("EPERM"), DENY("EPERM") } },
        { "fchmodat2", "workspace, both", { "fchmodat2", "{ws}/file", "6755" }, { "{ws}/file" },
          .bwrap = { DENY("EPERM"), DENY("EPERM") }, .landlock = { DENY("EPERM"), DENY("EPERM") } },
        { "create-mode", "workspace, set-user-ID", { "create-mode", "{ws}/new", "4755" }, { "{ws}/new" },
          .bwrap = { DENY("EPERM"), DENY("EPERM") }, .landlock = { DENY("EPERM"), DENY("EPERM") } },
        METADATA_INSIDE("fchmod", "workspace, opened read-only", ESCAPE_REQUIRES_NOTHING, "{ws}/file",
                        { "fchmod", "{ws}/file", "600" }),
        METADATA_OUTSIDE("fchmod", "outside, opened read-only", ESCAPE_REQUIRES_NOTHING,
                         { "fchmod", "{out}/file", "600" }),
        METADATA_INSIDE("fchmodat2", "workspace", ESCAPE_REQUIRES_NOTHING, "{ws}/file",
                        { "fchmodat2", "{ws}/file", "600" }),
        METADATA_OUTSIDE("fchmodat2", "outside", ESCAPE_REQUIRES_NOTHING, { "fchmodat2", "{out}/file", "600" }),
        METADATA_OUTSIDE("fchmodat2", "outside through a symlink in the workspace", ESCAPE_REQUIRES_NOTHING,
                         { "fchmodat2", "{ws}/symlink-out", "600" }),
        METADATA_INSIDE("chown", "workspace", ESCAPE_REQUIRES_ROOT, "{ws}/file",
                        { "chown", "{ws}/file", "-1", ESCAPE_GROUP_TEXT }),
        METADATA_OUTSIDE("chown", "outside", ESCAPE_REQUIRES_ROOT, { "chown", "{out}/file", "-1", ESCAPE_GROUP_TEXT }),
        METADATA_OUTSIDE("chown", "outside through a symlink in the workspace", ESCAPE_REQUIRES_ROOT,
                         { "chown", "{ws}/symlink-out", "-1", ESCAPE_GROUP_TEXT }),
        METADATA_OUTSIDE("chown", "outside through ..", ESCAPE_REQUIRES_ROOT,
                         { "chown", "{ws}/dir/../../out/file", "-1", ESCAPE_GROUP_TEXT }),
        METADATA_OUTSIDE("chown", "outside through /proc/self/fd/N", ESCAPE_REQUIRES_ROOT,
                         { "via-proc-fd", "chown", "{out}/file", "-1", ESCAPE_GROUP_TEXT }),
        { "lchown", "a symlink in the workspace", { "lchown", "{ws}/symlink", "-1", ESCAPE_GROUP_TEXT },
          { "{ws}/symlink", "{ws}/file" }, .requires = ESCAPE_REQUIRES_ROOT, .bwrap = { DENY("EACCES"), ALLOW },
          .landlock = { DENY("EPERM"), ALLOW } },
        { "lchown", "a symlink outside", { "lchown", "{out}/symlink", "-1", ESCAPE_GROUP_TEXT },
          { "{out}/symlink", "{out}/file" }, .requires = ESCAPE_REQUIRES_ROOT,
          .bwrap = { DENY("EACCES"), DENY("EACCES") },
          .landlock = { DENY("EPERM"), DENY("EACCES") } },
        METADATA_INSIDE("utimes", "workspace", ESCAPE_REQUIRES_NOTHING, "{ws}/file",
                        { "utimes", "{ws}/file", "86400" }),
        METADATA_OUTSIDE("utimes", "outside", ESCAPE_REQUIRES_NOTHING, { "utimes", "{out}/file", "86400" }),
        METADATA_INSIDE("touch-d", "workspace", ESCAPE_REQUIRES_NOTHING, "{ws}/file",
                        { "touch-d", "{ws}/file", "86400" }),
        METADATA_OUTSIDE("touch-d", "outside", ESCAPE_REQUIRES_NOTHING, { "touch-d", "{out}/file", "86400" }),
        METADATA_OUTSIDE("touch-d", "outside through a symlink in the workspace", ESCAPE_REQUIRES_NOTHING,
                         { "touch-d", "{ws}/symlink-out", "86400" }),
        METADATA_OUTSIDE("touch-d", "outside through ..", ESCAPE_REQUIRES_NOTHING,
                         { "touch-d", "{ws}/dir/../../out/file", "86400" }),
        METADATA_OUTSIDE("touch-d", "outside through /proc/self/fd/N", ESCAPE_REQUIRES_NOTHING,
                         { "via-proc-fd", "touch-d", "{out}/file", "86400" }),
        { "touch-h", "a symlink in the workspace", { "touch-h", "{ws}/symlink", "86400" },
          { "{ws}/symlink", "{ws}/file" },
          .bwrap = { DENY("EACCES"), ALLOW }, .landlock = { DENY("EPERM"), ALLOW } },
        { "touch-h", "a symlink outside", { "touch-h", "{out}/symlink", "86400" }, { "{out}/symlink", "{out}/file" },
          .bwrap = { DENY("EACCES"), DENY("EACCES") }, .landlock = { DENY("EPERM"), DENY("EACCES") } },
        METADATA_INSIDE("futimens", "workspace, opened read-only", ESCAPE_REQUIRES_NOTHING, "{ws}/file",
                        { "futimens", "{ws}/file", "86400" }),
        METADATA_OUTSIDE("futimens", "outside, opened read-only", ESCAPE_REQUIRES_NOTHING,
                         { "futimens", "{out}/file", "86400" }),
        METADATA_INSIDE("setxattr", "workspace", ESCAPE_REQUIRES_USER_XATTRS, "{ws}/file",
                        { "setxattr", "{ws}/file", "user.dsh-escape", "x" }),
        METADATA_OUTSIDE("setxattr", "outside", ESCAPE_REQUIRES_USER_XATTRS,
                         { "setxattr", "{out}/file", "user.dsh-escape", "x" }),
        METADATA_OUTSIDE("setxattr", "outside through a symlink in the workspace", ESCAPE_REQUIRES_USER_XATTRS,
                         { "setxattr", "{ws}/symlink-out", "user.dsh-escape", "x" }),
        METADATA_OUTSIDE("setxattr", "outside through ..", ESCAPE_REQUIRES_USER_XATTRS,
                         { "setxattr", "{ws}/dir/../../out/file", "user.dsh-escape", "x" }),
        METADATA_OUTSIDE("setxattr", "outside through /proc/self/fd/N", ESCAPE_REQUIRES_USER_XATTRS,
                         { "via-proc-fd", "setxattr", "{out}/file", "user.dsh-escape", "x" }),
        /*
         * io_uring sets an xattr inside the kernel, past any seccomp filter: the
         * metadata filter refuses io_uring itself (EPERM), on both backends.
         */
        { "io-uring-fsetxattr", "outside, opened read-only",
          { "io-uring-fsetxattr", "{out}/file", "user.dsh-escape", "x" }, { "{out}/file" },
          .requires = ESCAPE_REQUIRES_USER_XATTRS, .bwrap = { DENY("EPERM"), DENY("EPERM") },
          .landlock = { DENY("EPERM"), DENY("EPERM") } },
        { "io-uring-fsetxattr", "workspace", { "io-uring-fsetxattr", "{ws}/file", "user.dsh-escape", "x" },
          { "{ws}/file" }, .requires = ESCAPE_REQUIRES_USER_XATTRS, .bwrap = { DENY("EPERM"), DENY("EPERM") },
          .landlock = { DENY("EPERM"), DENY("EPERM") } },
        /* ext4's own spelling of "set the inode generation", through a read-only fd: refused like FS_IOC_SETVERSION. */
        { "ext4-setversion", "outside, opened read-only", { "ext4-setversion", "{out}/file" }, { "{out}/file" },
          .requires = ESCAPE_REQUIRES_EXT4_VERSION, .bwrap = { DENY("EPERM"), DENY("EPERM") },
          .landlock = { DENY("EPERM"), DENY("EPERM") } },
        { "ext4-setversion", "workspace, opened read-only", { "ext4-setversion", "{ws}/file" }, { "{ws}/file" },
          .requires = ESCAPE_REQUIRES_EXT4_VERSION, .bwrap = { DENY("EPERM"), DENY("EPERM") },
          .landlock = { DENY("EPERM"), DENY("EPERM") } },
        METADATA_INSIDE("removexattr", "workspace", ESCAPE_REQUIRES_USER_XATTRS, "{ws}/file",
                        { "removexattr", "{ws}/file", "user.dsh-existing" }),
        METADATA_OUTSIDE("removexattr", "outside", ESCAPE_REQUIRES_USER_XATTRS,
                         { "removexattr", "{out}/file", "user.dsh-existing" }),
        METADATA_OUTSIDE("removexattr", "outside through a symlink in the workspace", ESCAPE_REQUIRES_USER_XATTRS,
                         { "removexattr", "{ws}/symlink-out", "user.dsh-existing" }),
        METADATA_OUTSIDE("removexattr", "outside through /proc/self/fd/N", ESCAPE_REQUIRES_USER_XATTRS,
                         { "via-proc-fd", "removexattr", "{out}/file", "user.dsh-existing" }),
        METADATA_INSIDE("posix-acl", "workspace", ESCAPE_REQUIRES_ACLS, "{ws}/file",
                        { "posix-acl", "{ws}/file" }),
        METADATA_OUTSIDE("posix-acl", "outside", ESCAPE_REQUIRES_ACLS, { "posix-acl", "{out}/file" }),
        METADATA_OUTSIDE("posix-acl", "outside through a symlink in the workspace", ESCAPE_REQUIRES_ACLS,
                         { "posix-acl", "{ws}/symlink-out" }),
        METADATA_OUTSIDE("posix-acl", "outside through ..", ESCAPE_REQUIRES_ACLS,
                         { "posix-acl", "{ws}/dir/../../out/file" }),
        METADATA_OUTSIDE("posix-acl", "outside through /proc/self/fd/N", ESCAPE_REQUIRES_ACLS,
                         { "via-proc-fd", "posix-acl", "{out}/file" }),

        /*
         * /proc paths back to an outside file: each resolves to the real file, which stays read-only.  Under
         * bwrap /proc/1 is the sandbox's own init; under Landlock the domain may not even look into pid 1.
         */
        { "proc-self-root", "outside", { "write", "/proc/self/root{out}/file" }, { "{out}/file" },
          .bwrap = { DENY("EROFS"), DENY("EROFS") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "proc-self-cwd", "outside (cwd in the workspace)", { "write", "/proc/self/cwd/../out/file" },
          { "{out}/file" }, .bwrap = { DENY("EROFS"), DENY("EROFS") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        /* bwrap's pid 1 is outside the command's own Landlock domain: its /proc entries need ptrace access. */
        { "proc-1-root", "outside", { "write", "/proc/1/root{out}/file" }, { "{out}/file" },
          .bwrap = { DENY("EACCES"), DENY("EACCES") }, .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "proc-1-stdin", "bwrap's init's stdin, the outside file opened read-only", { "write", "/proc/1/fd/0" },
          { "{out}/file" }, .stdin_path = "{out}/file", .bwrap = { DENY("EACCES"), DENY("EACCES") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },

        /* The caller's stdio, opened read-only outside, reopened for writing through /proc/self/fd. */
        { "stdin-reopen", "outside file as stdin", { "write", "/proc/self/fd/0" }, { "{out}/file" },
          .stdin_path = "{out}/file", .bwrap = { DENY("EROFS|EACCES"), DENY("EROFS|EACCES") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        { "stdin-reopen", "outside directory as stdin", { "create", "/proc/self/fd/0/../dir/new" },
          { "{out}/dir/new" }, .stdin_path = "{out}/dir", .bwrap = { DENY("EROFS|EACCES"), DENY("EROFS|EACCES") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },

        /* A host sysctl, written back with its own value: only the errno can tell. */
        { "proc-sys", "/proc/sys/kernel/domainname", { "rewrite-unchanged", "/proc/sys/kernel/domainname" }, { NULL },
          .observe = ESCAPE_OBSERVE_ERRNO, .bwrap = { DENY("EROFS"), DENY("EROFS") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },
        /* A root-owned 0644 IRQ knob: under bwrap read-only by bwrap's own cover of /proc/irq when run by root. */
        { "proc-irq", "/proc/irq/default_smp_affinity",
          { "rewrite-unchanged", "/proc/irq/default_smp_affinity" }, { NULL },
          .observe = ESCAPE_OBSERVE_ERRNO, .bwrap = { DENY("EROFS"), DENY("EROFS") },
          .landlock = { DENY("EACCES"), DENY("EACCES") } },

        /* Writable fds the caller left open (no O_CLOEXEC) never reach the command. */
        { "inherited-fd", "outside file on fd 5", { "write-fd", "5" }, { "{out}/file" }, .inherited_fd = 5,
          .bwrap = { DENY("EBADF"), DENY("EBADF") }, .landlock = { DENY("EBADF"), DENY("EBADF") } },
        { "inherited-fd", "outside file on fd 100", { "write-fd", "100" }, { "{out}/file" }, .inherited_fd = 100,
          .bwrap = { DENY("EBADF"), DENY("EBADF") }, .landlock = { DENY("EBADF"), DENY("EBADF") } },

        /* Root inside keeps no capability: effective, permitted, inheritable, ambient and bounding all empty. */
        { "capabilities", "the command's own sets", { "capabilities" }, { NULL },
          .observe = ESCAPE_OBSERVE_CAPABILITIES, .requires = ESCAPE_REQUIRES_ROOT, .bwrap = { DENY(NULL), DENY(NULL) },
          .landlock = { DENY(NULL), DENY(NULL) } },
};

#define ROW_COUNT (sizeof(rows) / sizeof(rows[0]))

typedef enum escape_backend {
        ESCAPE_BWRAP_SPAWN,
        ESCAPE_LANDLOCK_SPAWN,
        ESCAPE_LANDLOCK_EXEC,
        ESCAPE_LANDLOCK_RUN,
        ESCAPE_BACKEND_COUNT,
} escape_backend;

static const char *const backend_names[ESCAPE_BACKEND_COUNT] = {
        [ESCAPE_BWRAP_SPAWN] = "bwrap (dsh_provider_spawn)",
        [ESCAPE_LANDLOCK_SPAWN] = "landlock (dsh_provider_spawn)",
        [ESCAPE_LANDLOCK_EXEC] = "landlock (dsh-sandbox run)",
        [ESCAPE_LANDLOCK_RUN] = "landlock-run (launcher, contract grants)",
};

static const dsh_mode modes[] = { DSH_MODE_READ_ONLY, DSH_MODE_WORKSPACE_WRITE };

/* One case being run: the row, where it runs, and its paths with the placeholders filled in. */
typedef struct escape_case {
        const escape_row *row;
        escape_backend backend;
        dsh_mode mode;
        char *directory;     /* scratch of this case: ws/, out/, the CLI's config and cache */
        char *workspace;
        char *outside;
        char *tmp;
        char *shm;
        char *argv[8];       /* escape-op and its arguments */
        char *watch[3];
        char *stdin_path;
        int listeners[3];    /* {ws}/daemon.sock, {out}/daemon.sock, {abstract}: listening in this process */
        char *abstract;      /* the abstract socket's name, without its leading NUL */
} escape_case;

/* What a case did. */
typedef struct escape_result {
        int exit_code;
        char *stdout_text;
        char *stderr_text;
        char *errno_name;         /* NULL: the command never reported */
        char *before[3];          /* the watched paths' state before and after */
        char *after[3];
} escape_result;

/* ------------------------------------------------------------- host features -- */

static bool landlock_works(void)
{
        static int known = -1;

        if (known < 0) {
                int abi = dsh_landlock_abi();

                known = abi >= DSH_LANDLOCK_MINIMUM_ABI;
                if (!known)
                        printf("# SKIP landlock rows: this kernel does not enforce Landlock ABI >= 3 (abi %d)\n", abi);
        }
        return known;
}

static bool backend_available(escape_backend backend)
{
        return backend == ESCAPE_BWRAP_SPAWN ? test_bwrap_works() : landlock_works();
}

/* user.* xattrs on the scratch filesystem: without them the xattr rows would prove nothing. */
static bool user_xattrs_supported(void)
{
        static int known = -1;

        if (known < 0) {
                char *directory = test_make_directory(NULL);
                char *file = test_path_join(directory, "xattr-probe");

                test_write_file(file, "x");
                known = setxattr(file, "user.dsh-probe", "x", 1, 0) == 0;
                if (!known)
                        printf("# SKIP setxattr rows: the scratch filesystem (%s) refuses user.* xattrs: %s\n",
                               directory, strerror(errno));
                free(file);
                test_remove_tree(directory);
        }
        return known;
}

/*
 * Root rows: the chown rows change a file's group to one the command belongs
 * to, which the owner may do without any capability, so that they measure
 * the sandbox and not the command's privileges (joining the group takes
 * root); the capability row asks what root keeps inside.
 */
static bool running_as_root(void)
{
        static int known = -1;

        if (known < 0) {
                known = geteuid() == 0;
                if (!known)
                        printf("# SKIP chown and capability rows: they are about root and need root to set up\n");
        }
        return known;
}

/* Whether this process may make a private /dev/shm and /dev/pts (core/private-dev.h), as the spawn path would. */
static bool may_mount(void)
{
        static int known = -1;

        if (known < 0) {
                dsh_private_devices devices;

                known = dsh_private_devices_create(&devices) == 0;
                dsh_private_devices_close(&devices);
                printf("# SKIP the /dev/shm row %s: this process %s\n", known ? "without a private /dev/shm" : "with one",
                       known ? "may mount" : "may not mount");
        }
        return known;
}

/* POSIX ACLs on the scratch filesystem: the ACL rows set one. */
static bool acls_supported(void)
{
        static int known = -1;

        if (known < 0) {
                char *directory = test_make_directory(NULL);
                char *file = test_path_join(directory, "acl-probe");
                /* version 2; user_obj rw, group_obj r, other r: the file's own mode as an ACL */
                static const unsigned char minimal[] = { 2, 0, 0, 0, 1, 0, 6, 0, 255, 255, 255, 255, 4, 0, 4, 0,
                                                         255, 255, 255, 255, 32, 0, 4, 0, 255, 255, 255, 255 };

                test_write_file(file, "x");
                known = setxattr(file, "system.posix_acl_access", minimal, sizeof(minimal), 0) == 0;
                if (!known)
                        printf("# SKIP posix-acl rows: the scratch filesystem (%s) refuses POSIX ACLs: %s\n",
                               directory, strerror(errno));
                free(file);
                test_remove_tree(directory);
        }
        return known;
}

/* ext4's generation ioctl on the scratch filesystem: elsewhere the ext4-setversion rows would prove nothing. */
static bool ext4_version_supported(void)
{
        static int known = -1;

        if (known < 0) {
                char *directory = test_make_directory(NULL);
                char *file = test_path_join(directory, "version-probe");
                long generation = 1;
                int fd;

                test_write_file(file, "x");
                fd = open(file, O_RDONLY | O_CLOEXEC);
                known = fd >= 0 && ioctl(fd, _IOW('f', 4, long), &generation) == 0;
                if (!known)
                        printf("# SKIP ext4-setversion rows: the scratch filesystem (%s) has no EXT4_IOC_SETVERSION: %s\n",
                               directory, strerror(errno));
                if (fd >= 0)
                        close(fd);
                free(file);
                test_remove_tree(directory);
        }
        return known;
}

static bool row_runs_here(const escape_row *row)
{
        switch (row->requires) {
        case ESCAPE_REQUIRES_NOTHING:
                return true;
        case ESCAPE_REQUIRES_ROOT:
                return running_as_root();
        case ESCAPE_REQUIRES_USER_XATTRS:
                return user_xattrs_supported();
        case ESCAPE_REQUIRES_EXT4_VERSION:
                return ext4_version_supported();
        case ESCAPE_REQUIRES_ACLS:
                return acls_supported();
        case ESCAPE_REQUIRES_MOUNT:
                return may_mount();
        case ESCAPE_REQUIRES_NO_MOUNT:
                return !may_mount();
        }
        return false;
}

/* --------------------------------------------------------------- fixtures -- */

static int remove_entry(const char *path, const struct stat *status, int type, struct FTW *walk)
{
        (void) status;
        (void) type;
        (void) walk;
        remove(path);
        return 0;
}

static void remove_path(const char *path)
{
        nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* `template` with {ws} {out} {tmp} {shm} replaced; caller frees. */
static char *expand(const escape_case *c, const char *template)
{
        const struct {
                const char *name;
                const char *value;
        } places[] = { { "{ws}", c->workspace }, { "{out}", c->outside }, { "{tmp}", c->tmp }, { "{shm}", c->shm },
                       { "{abstract}", c->abstract } };
        char *text = NULL;
        size_t size = 0;
        FILE *buffer = open_memstream(&text, &size);

        assert_non_null(buffer);
        while (*template) {
                size_t i;

                for (i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
                        size_t length = strlen(places[i].name);

                        if (strncmp(template, places[i].name, length) == 0) {
                                fputs(places[i].value, buffer);
                                template += length;
                                break;
                        }
                }
                if (i == sizeof(places) / sizeof(places[0]))
                        fputc(*template++, buffer);
        }
        fclose(buffer);
        return text;
}

/* A unix stream socket bound at `name` (abstract when `abstract`) and listening: a connect succeeds without accept. */
static int listen_unix(const char *name, bool abstract)
{
        struct sockaddr_un address = { .sun_family = AF_UNIX };
        socklen_t length = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + strlen(name) + (abstract ? 1 : 0));
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        assert_true(fd >= 0);
        assert_true(strlen(name) + 1 < sizeof(address.sun_path));
        memcpy(address.sun_path + (abstract ? 1 : 0), name, strlen(name));
        assert_int_equal(bind(fd, (struct sockaddr *) &address, abstract ? length : sizeof(address)), 0);
        assert_int_equal(listen(fd, 16), 0);
        return fd;
}

/* The tree of {ws} or {out}; returns the fd of its listening daemon.sock (the host daemon a command must not reach). */
static int make_tree(const char *directory)
{
        char *socket_path = test_path_join(directory, "daemon.sock");
        int listener;
        char *file = test_path_join(directory, "file");
        char *subdirectory = test_path_join(directory, "dir");
        char *link = test_path_join(directory, "symlink");

        assert_int_equal(mkdir(directory, 0755), 0);
        test_write_file(file, "original\n");
        assert_int_equal(chmod(file, 0644), 0);
        (void) setxattr(file, "user.dsh-existing", "kept", 4, 0);  /* where user xattrs exist (their rows say so) */
        assert_int_equal(mkdir(subdirectory, 0755), 0);
        assert_int_equal(symlink("file", link), 0);
        listener = listen_unix(socket_path, false);
        free(socket_path);
        free(file);
        free(subdirectory);
        free(link);
        return listener;
}

static void case_prepare(escape_case *c, const escape_row *row, escape_backend backend, dsh_mode mode)
{
        static unsigned counter;
        const char *helper = getenv("ESCAPE_OP_BIN");
        size_t count = 0;

        if (!helper || !helper[0])
                fail_msg("ESCAPE_OP_BIN is not set; run the tests through meson");
        memset(c, 0, sizeof(*c));
        c->row = row;
        c->backend = backend;
        c->mode = mode;
        c->directory = test_make_directory(NULL);
        c->workspace = test_path_join(c->directory, "ws");
        c->outside = test_path_join(c->directory, "out");
        counter++;
        assert_true(asprintf(&c->tmp, "/tmp/dsh-escape-matrix-%d-%u", (int) getpid(), counter) > 0);
        assert_true(asprintf(&c->shm, "/dev/shm/dsh-escape-matrix-%d-%u", (int) getpid(), counter) > 0);
        c->listeners[0] = make_tree(c->workspace);
        c->listeners[1] = make_tree(c->outside);
        assert_true(asprintf(&c->abstract, "dsh-escape-matrix-%d-%u", (int) getpid(), counter) > 0);
        c->listeners[2] = listen_unix(c->abstract, true);
        {
                char *link_out = test_path_join(c->workspace, "symlink-out");
                char *socket_link = test_path_join(c->workspace, "symlink-sock");

                assert_int_equal(symlink("../out/file", link_out), 0);
                assert_int_equal(symlink("../out/daemon.sock", socket_link), 0);
                free(link_out);
                free(socket_link);
        }
        c->argv[count++] = strdup(helper);
        for (size_t i = 0; i < 5 && row->argv[i]; i++)
                c->argv[count++] = expand(c, row->argv[i]);
        for (size_t i = 0; i < 3 && row->watch[i]; i++)
                c->watch[i] = expand(c, row->watch[i]);
        if (row->stdin_path)
                c->stdin_path = expand(c, row->stdin_path);
        if (backend == ESCAPE_LANDLOCK_EXEC) {
                char *config = test_path_join(c->directory, "config.json");

                /* A config of the case's own: the user's never leaks into the matrix. */
                test_write_file(config, "{}");
                free(config);
        }
}

static void case_clear(escape_case *c)
{
        for (size_t i = 0; i < 3; i++)
                if (c->listeners[i] > 0)
                        close(c->listeners[i]);
        free(c->abstract);
        remove_path(c->tmp);
        remove_path(c->shm);
        remove_path(c->directory);
        for (size_t i = 0; i < 8; i++)
                free(c->argv[i]);
        for (size_t i = 0; i < 3; i++)
                free(c->watch[i]);
        free(c->stdin_path);
        free(c->workspace);
        free(c->outside);
        free(c->tmp);
        free(c->shm);
        free(c->directory);
        memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------------- disk -- */

static const char *file_type(mode_t mode)
{
        if (S_ISREG(mode))
                return "file";
        if (S_ISDIR(mode))
                return "directory";
        if (S_ISLNK(mode))
                return "symlink";
        if (S_ISFIFO(mode))
                return "fifo";
        if (S_ISSOCK(mode))
                return "socket";
        if (S_ISCHR(mode))
                return "char-device";
        return "other";
}

static void describe_content(FILE *out, const char *path)
{
        char content[64];
        ssize_t length;
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

        if (fd < 0)
                return;
        length = read(fd, content, sizeof(content));
        close(fd);
        fputs(" content=\"", out);
        for (ssize_t i = 0; i < length; i++)
                fprintf(out, content[i] == '\n' ? "\\n" : "%c", content[i]);
        fputc('"', out);
}

/* The inode generation, where the filesystem tells it (FS_IOC_GETVERSION). */
static void describe_generation(FILE *out, const char *path)
{
        long generation = 0;
        int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

        if (fd < 0)
                return;
        if (ioctl(fd, FS_IOC_GETVERSION, &generation) == 0)
                fprintf(out, " generation=%ld", generation);
        close(fd);
}

static void describe_xattrs(FILE *out, const char *path)
{
        char names[1024];
        ssize_t length = llistxattr(path, names, sizeof(names));

        for (ssize_t at = 0; length > 0 && at < length; at += (ssize_t) strlen(names + at) + 1) {
                char value[64];
                ssize_t value_length = lgetxattr(path, names + at, value, sizeof(value) - 1);

                value[value_length > 0 ? value_length : 0] = '\0';
                fprintf(out, " xattr:%s=\"%s\"", names + at, value);
        }
}

/* Everything a write, a rename, a link or a metadata change could alter, in one line; caller frees. */
static char *describe_path(const char *path)
{
        struct stat status;
        char *text = NULL;
        size_t size = 0;
        FILE *out;

        if (lstat(path, &status) < 0)
                return strdup("absent");
        out = open_memstream(&text, &size);
        assert_non_null(out);
        /*
         * A terminal's mtime moves whenever any process writes to it (the
         * tty layer stamps it on I/O): a parallel test printing to /dev/tty is
         * no effect of the case.  What a metadata change would leave on a
         * device — chmod, chown, utimes all set ctime — is kept.
         */
        fprintf(out, "%s mode=%04o uid=%u gid=%u links=%lu size=%lld mtime=%lld ctime=%lld.%09ld",
                file_type(status.st_mode), (unsigned) (status.st_mode & 07777), (unsigned) status.st_uid,
                (unsigned) status.st_gid, (unsigned long) status.st_nlink, (long long) status.st_size,
                S_ISCHR(status.st_mode) ? 0LL : (long long) status.st_mtime, (long long) status.st_ctim.tv_sec,
                status.st_ctim.tv_nsec);
        if (S_ISREG(status.st_mode))
                describe_content(out, path);
        if (S_ISREG(status.st_mode) || S_ISDIR(status.st_mode))
                describe_generation(out, path);
        describe_xattrs(out, path);
        fclose(out);
        return text;
}

/* -------------------------------------------------------------- launching -- */

/* In the case process: the library spawns the command and waits; the exit status is the command's. */
static int spawn_through_library(const escape_case *c, const char *backend)
{
        const char *const sole[] = { backend, NULL };
        dsh_policy policy = DSH_POLICY_INIT;
        dsh_provider *provider = dsh_provider_new();
        dsh_child *child = NULL;
        dsh_error error = DSH_ERROR_INIT;
        int wait_status = 0;

        policy.mode = c->mode;
        policy.workspace_root = strdup(c->workspace);
        if (!provider || !policy.workspace_root || dsh_provider_set_backends(provider, sole, &error) < 0 ||
            dsh_provider_set_landlock_run_path(provider, test_landlock_run_path(), &error) < 0 ||
            dsh_provider_spawn(provider, c->argv, &policy, NULL, &child, &error) < 0) {
                dprintf(2, "escape-matrix: spawn failed: %s\n", error.message ? error.message : "out of memory");
                return 125;
        }
        printf("enforcement=%s\n", dsh_enforcement_name(dsh_child_facts(child)->enforcement));
        fflush(stdout);
        if (dsh_child_wait(child, &wait_status) < 0 || dsh_child_runner_error(child, &error) < 0) {
                dprintf(2, "escape-matrix: runner failed: %s\n", error.message ? error.message : "wait failed");
                return 125;
        }
        return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

static void exec_front_end(const escape_case *c)
{
        const char *mode = dsh_mode_name(c->mode);
        const char *argv[24];
        size_t count = 0;

        if (c->backend == ESCAPE_LANDLOCK_EXEC) {
                char *config = test_path_join(c->directory, "config.json");
                char *cache = test_path_join(c->directory, "cache");

                setenv("DSH_SANDBOX_CONFIG", config, 1);
                setenv("XDG_CACHE_HOME", cache, 1);
                count = test_run_command_prefix(argv, count, "landlock", mode, c->workspace);
        } else {
                argv[count++] = test_landlock_run_path();
                argv[count++] = "--ro";
                argv[count++] = "/";
                argv[count++] = "--rw";
                argv[count++] = "/dev/null";
                if (c->mode == DSH_MODE_WORKSPACE_WRITE) {
                        argv[count++] = "--rw";
                        argv[count++] = "/tmp";
                        argv[count++] = "--rw";
                        argv[count++] = c->workspace;
                }
        }
        argv[count++] = "--";
        for (size_t i = 0; c->argv[i]; i++)
                argv[count++] = c->argv[i];
        argv[count] = NULL;
        execv(argv[0], (char *const *) argv);
        dprintf(2, "escape-matrix: exec %s: %s\n", argv[0], strerror(errno));
}

/* Opens `path` at exactly `number`, without O_CLOEXEC, as a careless caller would leave it. */
static int open_at_number(const char *path, int flags, int number)
{
        int fd = open(path, flags);

        if (fd < 0)
                return -1;
        if (fd != number) {
                if (dup2(fd, number) < 0)
                        return -1;
                close(fd);
        }
        return 0;
}

/*
 * The case process: stdio to the test's pipes, stdin and inherited fds as the
 * row asks, cwd in the workspace (where an agent runs its commands), a
 * supplementary group for the chown rows; then the backend.  Never returns.
 */
static void run_case_process(const escape_case *c, int stdout_fd, int stderr_fd)
{
        char *inherited = test_path_join(c->outside, "file");

        if (dup2(stdout_fd, 1) < 0 || dup2(stderr_fd, 2) < 0)
                _exit(126);
        if (open_at_number(c->stdin_path ? c->stdin_path : "/dev/null", O_RDONLY, 0) < 0 || chdir(c->workspace) < 0) {
                dprintf(2, "escape-matrix: case setup: %s\n", strerror(errno));
                _exit(126);
        }
        if (c->row->inherited_fd > 0 && open_at_number(inherited, O_WRONLY, c->row->inherited_fd) < 0) {
                dprintf(2, "escape-matrix: inherited fd: %s\n", strerror(errno));
                _exit(126);
        }
        if (geteuid() == 0) {
                const gid_t groups[] = { getegid(), ESCAPE_GROUP };

                setgroups(2, groups);
        }
        switch (c->backend) {
        case ESCAPE_BWRAP_SPAWN:
                _exit(spawn_through_library(c, "bwrap"));
        case ESCAPE_LANDLOCK_SPAWN:
                _exit(spawn_through_library(c, "landlock"));
        case ESCAPE_LANDLOCK_EXEC:
        case ESCAPE_LANDLOCK_RUN:
        case ESCAPE_BACKEND_COUNT:
                exec_front_end(c);
                break;
        }
        _exit(126);
}

static void snapshot(const escape_case *c, char **states)
{
        for (size_t i = 0; i < 3; i++)
                states[i] = c->watch[i] ? describe_path(c->watch[i]) : NULL;
}

/* The value of the line "NAME=value" in a report; NULL when there is none.  Caller frees. */
static char *report_value(const char *report, const char *name)
{
        size_t length = strlen(name);
        const char *line = report;

        while (line && *line) {
                if (strncmp(line, name, length) == 0 && line[length] == '=')
                        return strndup(line + length + 1, strcspn(line + length + 1, "\n"));
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        return NULL;
}

static void case_run(const escape_case *c, escape_result *result)
{
        int out_pipe[2], err_pipe[2], status = 0;
        pid_t pid;

        memset(result, 0, sizeof(*result));
        snapshot(c, result->before);
        assert_int_equal(pipe2(out_pipe, O_CLOEXEC), 0);
        assert_int_equal(pipe2(err_pipe, O_CLOEXEC), 0);
        fflush(NULL);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
                run_case_process(c, out_pipe[1], err_pipe[1]);
        close(out_pipe[1]);
        close(err_pipe[1]);
        result->stdout_text = test_read_fd(out_pipe[0]);
        result->stderr_text = test_read_fd(err_pipe[0]);
        close(out_pipe[0]);
        close(err_pipe[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        result->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        snapshot(c, result->after);
        result->errno_name = report_value(result->stdout_text, "errno");
}

static void result_clear(escape_result *result)
{
        free(result->stdout_text);
        free(result->stderr_text);
        free(result->errno_name);
        for (size_t i = 0; i < 3; i++) {
                free(result->before[i]);
                free(result->after[i]);
        }
        memset(result, 0, sizeof(*result));
}

/* ---------------------------------------------------------------- judging -- */

static const char *outcome_words(escape_outcome outcome)
{
        switch (outcome) {
        case ESCAPE_DENIED:
                return "denied";
        case ESCAPE_ALLOWED:
                return "allowed";
        case ESCAPE_ALLOWED_PRIVATE:
                return "allowed in a private area, nothing on the host";
        case ESCAPE_NOT_GOVERNED:
                return "allowed: " BACKEND_GAP;
        }
        return "?";
}

static const char *expected_words(const escape_row *row, const escape_expectation *expected)
{
        if (row->observe == ESCAPE_OBSERVE_CAPABILITIES)
                return expected->outcome == ESCAPE_DENIED ? "all five sets empty" : "capabilities kept";
        return outcome_words(expected->outcome);
}

static bool disk_changed(const escape_result *result)
{
        for (size_t i = 0; i < 3; i++)
                if (result->before[i] && strcmp(result->before[i], result->after[i]) != 0)
                        return true;
        return false;
}

static void describe_disk(FILE *out, const escape_case *c, const escape_result *result)
{
        bool changed = false;

        for (size_t i = 0; i < 3; i++) {
                if (!result->before[i] || strcmp(result->before[i], result->after[i]) == 0)
                        continue;
                fprintf(out, "%s %s: %s -> %s", changed ? ";" : "", c->watch[i], result->before[i], result->after[i]);
                changed = true;
        }
        if (!changed)
                fputs(" unchanged", out);
}

/* The five capability sets from the command's report: all zero, or which are not. */
static bool capabilities_empty(const char *report, FILE *out)
{
        static const char *const sets[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
        bool empty = true;

        for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
                char *value = report_value(report, sets[i]);

                if (!value || !value[0] || value[strspn(value, "0")] != '\0') {
                        fprintf(out, " %s=%s", sets[i], value ? value : "(missing)");
                        empty = false;
                }
                free(value);
        }
        return empty;
}

static bool errno_expected(const escape_expectation *expected, const char *errno_name)
{
        const char *choice = expected->errno_names;
        size_t length = strlen(errno_name);

        if (!choice)
                return true;
        while (choice) {
                if (strncmp(choice, errno_name, length) == 0 && (choice[length] == '|' || choice[length] == '\0'))
                        return true;
                choice = strchr(choice, '|');
                if (choice)
                        choice++;
        }
        return false;
}

/*
 * Judges one case.  Returns NULL when it holds, else a line naming the case,
 * what was expected and what was observed (caller frees).
 */
static char *case_judge(const escape_case *c, const escape_expectation *expected, const escape_result *result)
{
        char *observed_text = NULL, *verdict = NULL;
        size_t size = 0;
        FILE *observed = open_memstream(&observed_text, &size);
        bool holds = false;

        assert_non_null(observed);
        if (!result->errno_name) {
                fprintf(observed, "the command did not report (exit %d, stderr: %s)", result->exit_code,
                        result->stderr_text);
        } else if (c->row->observe == ESCAPE_OBSERVE_CAPABILITIES) {
                fputs("capabilities:", observed);
                holds = capabilities_empty(result->stdout_text, observed) == (expected->outcome == ESCAPE_DENIED);
                if (holds)
                        fputs(" all empty", observed);
        } else {
                bool succeeded = strcmp(result->errno_name, "0") == 0;
                bool changed = disk_changed(result);

                fprintf(observed, "errno=%s", result->errno_name);
                if (c->row->observe == ESCAPE_OBSERVE_DISK) {
                        fputs(", on disk:", observed);
                        describe_disk(observed, c, result);
                } else if (succeeded) {
                        fputs(" (the write was accepted; it carried the host's own value back)", observed);
                }
                switch (expected->outcome) {
                case ESCAPE_DENIED:
                        holds = !succeeded && !changed && errno_expected(expected, result->errno_name);
                        break;
                case ESCAPE_ALLOWED:
                case ESCAPE_NOT_GOVERNED:
                        holds = succeeded && (changed || c->row->observe == ESCAPE_OBSERVE_ERRNO);
                        break;
                case ESCAPE_ALLOWED_PRIVATE:
                        holds = succeeded && !changed;
                        break;
                }
        }
        fclose(observed);
        if (!holds)
                assert_true(asprintf(&verdict, "%s | %s | %s | target %s: expected %s%s%s, observed %s",
                                     c->row->operation, dsh_mode_name(c->mode), backend_names[c->backend],
                                     c->row->target, expected_words(c->row, expected),
                                     expected->errno_names ? " with " : "",
                                     expected->errno_names ? expected->errno_names : "", observed_text) > 0);
        free(observed_text);
        return verdict;
}

static const escape_expectation *expectation_for(const escape_row *row, escape_backend backend, dsh_mode mode)
{
        size_t column = mode == DSH_MODE_WORKSPACE_WRITE ? 1 : 0;

        return backend == ESCAPE_BWRAP_SPAWN ? &row->bwrap[column] : &row->landlock[column];
}

/* The host's value of a sysctl the matrix writes back unchanged: checked after every case that touches it. */
static char *read_domainname(void)
{
        char *value = test_read_file("/proc/sys/kernel/domainname");

        assert_non_null(value);
        return value;
}

/* Runs one case; `enforcement` (may be NULL) receives what the provider reported, the first time. */
static char *run_one(const escape_row *row, escape_backend backend, dsh_mode mode, char **enforcement)
{
        const escape_expectation *expected = expectation_for(row, backend, mode);
        char *domainname = read_domainname();
        char *after_domainname, *verdict;
        escape_case c;
        escape_result result;

        case_prepare(&c, row, backend, mode);
        case_run(&c, &result);
        verdict = case_judge(&c, expected, &result);
        if (enforcement && !*enforcement)
                *enforcement = report_value(result.stdout_text, "enforcement");
        after_domainname = read_domainname();
        /* Never let a failing /proc/sys row go unnoticed as a host change. */
        if (strcmp(domainname, after_domainname) != 0)
                fail_msg("%s | %s | %s changed the host's domainname from \"%s\" to \"%s\"", row->operation,
                         dsh_mode_name(mode), backend_names[backend], domainname, after_domainname);
        free(domainname);
        free(after_domainname);
        result_clear(&result);
        case_clear(&c);
        return verdict;
}

const char *const *escape_matrix_operations(void)
{
        static const char *operations[ROW_COUNT + 1];
        size_t count = 0;

        if (operations[0])
                return operations;
        for (size_t i = 0; i < ROW_COUNT; i++)
                if (count == 0 || strcmp(operations[count - 1], rows[i].operation) != 0)
                        operations[count++] = rows[i].operation;
        operations[count] = NULL;
        return operations;
}

void escape_matrix_check_operation(const char *operation)
{
        /* fail_msg() does not return: the first mismatch waits in static storage, so that nothing leaks. */
        static char first_failure[900];
        char *enforcement = NULL;
        size_t failure_count = 0, case_count = 0;
        bool not_governed = false;

        for (size_t i = 0; i < ROW_COUNT; i++) {
                const escape_row *row = &rows[i];

                if (strcmp(row->operation, operation) != 0 || !row_runs_here(row))
                        continue;
                for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
                        for (escape_backend b = 0; b < ESCAPE_BACKEND_COUNT; b++) {
                                char *verdict;

                                if (!backend_available(b))
                                        continue;
                                if (expectation_for(row, b, modes[m])->outcome == ESCAPE_NOT_GOVERNED)
                                        not_governed = true;
                                verdict = run_one(row, b, modes[m], b == ESCAPE_LANDLOCK_SPAWN ? &enforcement : NULL);
                                case_count++;
                                if (verdict) {
                                        printf("# MISMATCH %s\n", verdict);
                                        if (failure_count++ == 0)
                                                snprintf(first_failure, sizeof(first_failure), "%s", verdict);
                                        free(verdict);
                                }
                        }
                }
        }
        if (not_governed)
                printf("# note: %s under Landlock is allowed: %s; the provider reports enforcement \"%s\" for "
                       "such a run\n",
                       operation, BACKEND_GAP, enforcement ? enforcement : "?");
        free(enforcement);
        /* cmocka cuts a message at 1 KiB: every mismatch is on its own "# MISMATCH" line above, the first one here. */
        if (failure_count > 0)
                fail_msg("%zu of %zu cases of \"%s\" did not hold (each is a # MISMATCH line); the first: %s",
                         failure_count, case_count, operation, first_failure);
}

/* ------------------------------------------------------- the same through why -- */

/* One question a case asks `dsh-sandbox why`: an op and its target template. */
typedef struct why_question {
        const char *op;
        const char *target;
} why_question;

/* Why a row asks why nothing: its refusal is a call's or a privilege's, not the policy's over a path. */
static const char *why_left_out(const char *const *argv)
{
        static const char *const calls[][2] = {
                { "mknod-char", "a device node is never granted, in any mode: no why op names an inode's type" },
                { "io-uring-fsetxattr", "io_uring is refused as a call, whatever it names" },
                { "ext4-setversion", "the ioctl is refused as a call, whatever it names" },
                { "capabilities", "no path: the capability sets" },
                { "write-fd", "no path: an inherited descriptor" },
                { "socket-dgram", "no target: a datagram socket is refused outright" },
                { "connect-abstract", "why takes pathname sockets; an abstract name has no grant" },
        };
        const char *mode = NULL;

        for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
                if (strcmp(argv[0], calls[i][0]) == 0)
                        return calls[i][1];
        if (strcmp(argv[0], "create-mode") == 0 || strcmp(argv[0], "chmod") == 0 || strcmp(argv[0], "fchmod") == 0 ||
            strcmp(argv[0], "fchmodat2") == 0)
                mode = argv[2];
        if (mode && strlen(mode) == 4 && strchr("246", mode[0]))
                return "set-user-ID and set-group-ID bits are refused in every mode, not by a path's rule";
        return NULL;
}

/* The questions of a row's call (at most two: a rename's and a link's both names). */
static size_t why_questions(const char *const *argv, why_question *questions)
{
        static const char *const writes[] = { "create", "write", "append", "truncate", "open-truncate", "mkdir",
                                              "mkfifo", "bind-socket", "unlink", "rmdir", "rewrite-unchanged",
                                              "create-mode", NULL };
        static const char *const two_names[] = { "rename", "exchange", "link", NULL };
        static const char *const metadata[] = { "chmod", "fchmod", "fchmodat2", "chown", "lchown", "utimes",
                                                "touch-d", "touch-h", "futimens", "setxattr", "removexattr",
                                                "posix-acl", NULL };

        if (strcmp(argv[0], "in-grandchild") == 0)
                return why_questions(argv + 1, questions);
        if (strcmp(argv[0], "via-proc-fd") == 0 && argv[1] && argv[2]) {
                questions[0] = (why_question) { "metadata", argv[2] };
                return 1;
        }
        if (strcmp(argv[0], "symlink") == 0) {
                questions[0] = (why_question) { "write", argv[2] };
                return 1;
        }
        if (strcmp(argv[0], "connect-unix") == 0) {
                questions[0] = (why_question) { "connect", argv[1] };
                return 1;
        }
        for (size_t i = 0; writes[i]; i++)
                if (strcmp(argv[0], writes[i]) == 0) {
                        questions[0] = (why_question) { "write", argv[1] };
                        return 1;
                }
        for (size_t i = 0; two_names[i]; i++)
                if (strcmp(argv[0], two_names[i]) == 0) {
                        questions[0] = (why_question) { "write", argv[1] };
                        questions[1] = (why_question) { "write", argv[2] };
                        return 2;
                }
        for (size_t i = 0; metadata[i]; i++)
                if (strcmp(argv[0], metadata[i]) == 0) {
                        questions[0] = (why_question) { "metadata", argv[1] };
                        return 1;
                }
        return 0;
}

/* Asks the CLI; returns its exit status (0 allowed, 1 denied), its output in `*answer` (caller frees). */
static int ask_why(const escape_case *c, const char *op, const char *target, char **answer)
{
        char *config = test_path_join(c->directory, "why-config.json");
        char *cache = test_path_join(c->directory, "why-cache");
        char *config_env = NULL, *cache_env = NULL;
        const char *argv[] = { test_dsh_sandbox_path(), "why", "--backend",
                               c->backend == ESCAPE_BWRAP_SPAWN ? "bwrap" : "landlock",
                               "--mode", dsh_mode_name(c->mode), "--root", c->workspace, "--op", op, target, NULL };
        test_process_result result;
        int status;

        test_write_file(config, "{}");
        assert_true(asprintf(&config_env, "DSH_SANDBOX_CONFIG=%s", config) > 0);
        assert_true(asprintf(&cache_env, "XDG_CACHE_HOME=%s", cache) > 0);
        {
                const char *const environment[] = { config_env, cache_env, NULL };

                test_run(argv, environment, &result);
        }
        status = result.exit_code;
        assert_true(asprintf(answer, "%s%s", result.stdout_text ? result.stdout_text : "",
                             result.stderr_text ? result.stderr_text : "") > 0);
        test_process_result_clear(&result);
        free(config_env);
        free(cache_env);
        free(config);
        free(cache);
        return status;
}

/*
 * One case through why: the answers before it runs (a denial if any of
 * its names is denied), then what the backend did.  Returns NULL when they
 * agree (or the case is not comparable: printed), else the mismatch.
 */
static char *why_one(const escape_row *row, escape_backend backend, dsh_mode mode)
{
        why_question questions[2];
        size_t count = why_questions(row->argv, questions);
        char *answers = NULL, *verdict = NULL;
        bool why_allows = true, backend_allows, succeeded;
        escape_case c;
        escape_result result;

        case_prepare(&c, row, backend, mode);
        for (size_t i = 0; i < count; i++) {
                char *target = expand(&c, questions[i].target);
                char *answer = NULL, *joined = NULL;
                int status = ask_why(&c, questions[i].op, target, &answer);

                if (status != 0 && status != 1)
                        assert_true(asprintf(&verdict, "%s | %s | %s | target %s: why --op %s %s failed (exit %d): %s",
                                             row->operation, dsh_mode_name(mode), backend_names[backend], row->target,
                                             questions[i].op, target, status, answer) > 0);
                why_allows = why_allows && status == 0;
                assert_true(asprintf(&joined, "%s%s", answers ? answers : "", answer) > 0);
                free(answers);
                answers = joined;
                free(answer);
                free(target);
        }
        case_run(&c, &result);
        succeeded = result.errno_name && strcmp(result.errno_name, "0") == 0;
        backend_allows = succeeded && (disk_changed(&result) || row->observe == ESCAPE_OBSERVE_ERRNO);
        if (!verdict && succeeded && !backend_allows)
                printf("# not compared: %s | %s | %s | target %s: the change landed in a private area\n",
                       row->operation, dsh_mode_name(mode), backend_names[backend], row->target);
        else if (!verdict && why_allows != backend_allows)
                assert_true(asprintf(&verdict, "%s | %s | %s | target %s: why says %s, the backend %s (errno=%s): %s",
                                     row->operation, dsh_mode_name(mode), backend_names[backend], row->target,
                                     why_allows ? "allowed" : "denied", backend_allows ? "allowed it" : "refused it",
                                     result.errno_name ? result.errno_name : "?", answers ? answers : "") > 0);
        free(answers);
        result_clear(&result);
        case_clear(&c);
        return verdict;
}

void escape_matrix_check_why(const char *operation)
{
        static char first_failure[900];
        size_t failure_count = 0, case_count = 0;
        why_question questions[2];

        for (size_t i = 0; i < ROW_COUNT; i++) {
                const escape_row *row = &rows[i];
                const char *left_out = why_left_out(row->argv);

                if (strcmp(row->operation, operation) != 0 || !row_runs_here(row))
                        continue;
                if (left_out || why_questions(row->argv, questions) == 0) {
                        printf("# left out: %s | target %s: %s\n", row->operation, row->target,
                               left_out ? left_out : "no why question for this call");
                        continue;
                }
                for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
                        for (escape_backend b = ESCAPE_BWRAP_SPAWN; b <= ESCAPE_LANDLOCK_SPAWN; b++) {
                                char *verdict;

                                if (!backend_available(b))
                                        continue;
                                verdict = why_one(row, b, modes[m]);
                                case_count++;
                                if (verdict) {
                                        printf("# MISMATCH %s\n", verdict);
                                        if (failure_count++ == 0)
                                                snprintf(first_failure, sizeof(first_failure), "%s", verdict);
                                        free(verdict);
                                }
                        }
                }
        }
        if (failure_count > 0)
                fail_msg("%zu of %zu cases of \"%s\" through why did not hold (each is a # MISMATCH line); the first: %s",
                         failure_count, case_count, operation, first_failure);
}

/* ---------------------------------------------------- the test programs -- */

struct operation_test {
        void (*check)(const char *operation);
        const char *operation;
};

static void run_operation_test(void **state)
{
        const struct operation_test *test = *state;

        test->check(test->operation);
}

int escape_matrix_run_group(const char *group, void (*check)(const char *operation))
{
        const char *const *operations = escape_matrix_operations();
        struct operation_test *states;
        struct CMUnitTest *tests;
        size_t count = 0;
        int failures;

        while (operations[count])
                count++;
        tests = calloc(count, sizeof(*tests));
        states = calloc(count, sizeof(*states));
        if (!tests || !states) {
                free(tests);
                free(states);
                return 1;
        }
        for (size_t i = 0; i < count; i++) {
                states[i] = (struct operation_test) { check, operations[i] };
                tests[i].name = operations[i];
                tests[i].test_func = run_operation_test;
                tests[i].initial_state = &states[i];
        }
        failures = _cmocka_run_group_tests(group, tests, count, NULL, NULL);
        free(tests);
        free(states);
        return failures;
}
