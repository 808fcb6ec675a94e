/* SPDX-License-Identifier: MIT */
/* Landlock: ABI negotiation, ruleset construction and self-restriction. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/kernel-abi.h"
#include "core/landlock.h"

#define LANDLOCK_CREATE_RULESET_VERSION_FLAG (1U << 0)
#define LANDLOCK_RULE_PATH_BENEATH_TYPE 1

struct dsh_landlock_path_beneath_attr {
        uint64_t allowed_access;
        int32_t parent_fd;
} __attribute__((packed));

#define READ_RIGHTS (DSH_LANDLOCK_ACCESS_FS_EXECUTE | DSH_LANDLOCK_ACCESS_FS_READ_FILE | \
                     DSH_LANDLOCK_ACCESS_FS_READ_DIR)

/* The rights that mean anything on a non-directory inode. */
#define FILE_RIGHTS (DSH_LANDLOCK_ACCESS_FS_EXECUTE | DSH_LANDLOCK_ACCESS_FS_WRITE_FILE | \
                     DSH_LANDLOCK_ACCESS_FS_READ_FILE | DSH_LANDLOCK_ACCESS_FS_TRUNCATE | \
                     DSH_LANDLOCK_ACCESS_FS_IOCTL_DEV)

/*
 * Creating character or block devices is never granted, not even in a
 * writable root: root in a container could otherwise mknod the host's disk
 * inside the workspace and write to it raw.
 */
#define NEVER_GRANTED (DSH_LANDLOCK_ACCESS_FS_MAKE_CHAR | DSH_LANDLOCK_ACCESS_FS_MAKE_BLOCK)

static uint64_t handled_rights_for_abi(int abi)
{
        uint64_t rights = (DSH_LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;  /* ABI 1: bits 0..12 */

        if (abi >= 2)
                rights |= DSH_LANDLOCK_ACCESS_FS_REFER;
        if (abi >= 3)
                rights |= DSH_LANDLOCK_ACCESS_FS_TRUNCATE;
        if (abi >= 5)
                rights |= DSH_LANDLOCK_ACCESS_FS_IOCTL_DEV;
        return rights;
}

int dsh_landlock_abi(void)
{
        long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION_FLAG);

        return abi < 0 ? -errno : (int) abi;
}

bool dsh_landlock_abi_usable(int abi)
{
        return abi >= DSH_LANDLOCK_MINIMUM_ABI;
}

dsh_enforcement dsh_landlock_enforcement(int abi)
{
        return abi >= DSH_LANDLOCK_FULL_ABI ? DSH_ENFORCEMENT_FULL : DSH_ENFORCEMENT_PARTIAL;
}

uint64_t dsh_landlock_scopes(int abi)
{
        return abi >= DSH_LANDLOCK_SCOPE_ABI ? DSH_LANDLOCK_SCOPES_ALL : 0;
}

int dsh_landlock_ruleset_open(dsh_landlock_ruleset *ruleset)
{
        struct dsh_landlock_ruleset_attr attr = { 0 };
        int abi = dsh_landlock_abi();
        long fd;

        if (abi < 0)
                return abi;
        if (!dsh_landlock_abi_usable(abi))
                return -EOPNOTSUPP;
        attr.handled_access_fs = handled_rights_for_abi(abi);
        /* Below ABI 6 the field stays zero: older kernels accept the larger attribute only with zeros there. */
        attr.scoped = dsh_landlock_scopes(abi);
        fd = syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
        if (fd < 0)
                return -errno;
        ruleset->fd = (int) fd;
        ruleset->abi = abi;
        ruleset->handled_access = attr.handled_access_fs;
        ruleset->scoped = attr.scoped;
        return 0;
}

int dsh_landlock_ruleset_grant_fd(dsh_landlock_ruleset *ruleset, int fd, bool writable)
{
        struct dsh_landlock_path_beneath_attr rule = { 0 };
        struct stat status;

        rule.parent_fd = fd;
        rule.allowed_access = (writable ? ruleset->handled_access & ~NEVER_GRANTED : READ_RIGHTS) &
                              ruleset->handled_access;
        if (fstat(fd, &status) < 0)
                return -errno;
        if (!S_ISDIR(status.st_mode))
                rule.allowed_access &= FILE_RIGHTS;
        /*
         * A directory every user shares (world-writable and sticky: the
         * host's /tmp) is writable, but nothing may be linked or moved
         * between it and another directory (REFER withheld: EXDEV).  Other
         * programs keep their sockets there — tmux's, an ssh-agent's — and a
         * hard link of one into the workspace would put that inode beneath
         * the command's own root, where the supervisor lets a connect reach
         * it (a link needs REFER on both sides).  mv and shutil.move fall
         * back to a copy.
         */
        if (writable && S_ISDIR(status.st_mode) && (status.st_mode & S_ISVTX) && (status.st_mode & S_IWOTH))
                rule.allowed_access &= ~DSH_LANDLOCK_ACCESS_FS_REFER;
        if (syscall(__NR_landlock_add_rule, ruleset->fd, LANDLOCK_RULE_PATH_BENEATH_TYPE, &rule, 0) < 0)
                return -errno;
        return 0;
}

int dsh_landlock_ruleset_add_rule(dsh_landlock_ruleset *ruleset, int fd, uint64_t access, bool directory)
{
        struct dsh_landlock_path_beneath_attr rule = { 0 };

        rule.parent_fd = fd;
        rule.allowed_access = access & ruleset->handled_access;
        if (!directory)
                rule.allowed_access &= FILE_RIGHTS;
        if (rule.allowed_access == 0)
                return 0;
        if (syscall(__NR_landlock_add_rule, ruleset->fd, LANDLOCK_RULE_PATH_BENEATH_TYPE, &rule, 0) < 0)
                return -errno;
        return 0;
}

int dsh_landlock_ruleset_grant_access(dsh_landlock_ruleset *ruleset, int fd, uint64_t access)
{
        struct stat status;

        if (fstat(fd, &status) < 0)
                return -errno;
        return dsh_landlock_ruleset_add_rule(ruleset, fd, access, S_ISDIR(status.st_mode));
}

int dsh_landlock_ruleset_grant(dsh_landlock_ruleset *ruleset, const char *path, bool writable, bool refuse_symlinks,
                               const char **failed_step)
{
        int fd, result;

        if (refuse_symlinks) {
                struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };

                fd = (int) syscall(__NR_openat2, AT_FDCWD, path, &how, sizeof(how));
        } else {
                fd = open(path, O_PATH | O_CLOEXEC);
        }
        if (fd < 0) {
                *failed_step = "open";
                return -errno;
        }
        result = dsh_landlock_ruleset_grant_fd(ruleset, fd, writable);
        if (result < 0)
                *failed_step = result == -EBADF ? "open" : "add_rule";
        close(fd);
        return result;
}

void dsh_landlock_ruleset_close(dsh_landlock_ruleset *ruleset)
{
        if (ruleset->fd >= 0)
                close(ruleset->fd);
        ruleset->fd = -1;
}

/*
 * no_new_privs first: landlock_restrict_self() demands it of an unprivileged
 * caller, and even as root it keeps a setuid binary run inside the sandbox
 * from gaining privileges it could use to undo the restriction.
 */
int dsh_landlock_enforce(int ruleset_fd)
{
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return -errno;
        if (syscall(__NR_landlock_restrict_self, ruleset_fd, 0) < 0)
                return -errno;
        return 0;
}
