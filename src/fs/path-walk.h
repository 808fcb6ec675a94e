/* SPDX-License-Identifier: MIT */
/*
 * The file guard's path walk: resolves an absolute path as the kernel would
 * for open(2), rename(2) and friends, but one component at a time, each step
 * an openat2() of a single name relative to the directory fd reached so far,
 * with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS.  A
 * symlink met on the way is read and spliced into the rest of the path by the
 * walk itself, so that its target is walked with the same care; a symlink of
 * /proc (/proc/self, /proc/self/root, /proc/self/cwd, every magic link) is
 * never followed: what it names depends on the process that looks, not on
 * its text.
 *
 * Which writable root the walk is in is decided by identity, never by
 * spelling: each directory entered is compared (st_dev, st_ino) with the
 * O_PATH fds of the roots, opened once when the policy was prepared.  A
 * root reached by any name — through a symlink outside it, a bind mount, a
 * `..` from elsewhere — is the root; a directory that now has a root's name
 * but is not its inode is not.  From a root on, the walk spells the path
 * from the root's own canonical name, so the spelling it returns is the
 * canonical one the shield's lists use.
 *
 * The result is the directory that holds the entry, as an O_PATH fd, and
 * the entry's name in it: every operation that follows acts relative to
 * that fd (openat, mkdirat, renameat, unlinkat), so the directory decided on
 * is the directory changed, whatever is renamed or repointed meanwhile.
 */
#ifndef DSH_SANDBOX_PATH_WALK_H
#define DSH_SANDBOX_PATH_WALK_H

#include <stdbool.h>
#include <sys/stat.h>

#include "base/util.h"

/* A writable root as the walk recognises it. */
typedef struct dsh_walk_root {
        int fd;                 /* O_PATH directory fd, owned by the caller */
        const char *path;       /* its canonical spelling */
        dev_t device;
        ino_t inode;
} dsh_walk_root;

/* Fills root->device and root->inode from root->fd.  Returns 0 or a negative errno. */
DSH_INTERNAL int dsh_walk_root_identify(dsh_walk_root *root);

enum {
        /* A symlink as the last component is followed, as open(2) without O_NOFOLLOW does (write, edit, read);
         * otherwise the entry is the link itself, as for mkdir, unlink and rename. */
        DSH_WALK_FOLLOW_LAST = 1 << 0,
        /* Missing directories on the way are made (mode 0777 less the umask), each only after `approve`. */
        DSH_WALK_CREATE_PARENTS = 1 << 1,
};

typedef struct dsh_walk_target {
        int directory_fd;       /* O_PATH fd of the directory holding the entry (owned); -1 when the walk failed */
        char *directory;        /* its canonical path ("/" for the root directory) */
        char *name;             /* the entry's name in it: one component, never "." or ".." */
        char *path;             /* the entry's canonical path: directory + "/" + name */
        int root;               /* index of the innermost writable root the directory is in, or -1 */
        bool exists;            /* the entry exists (a dangling symlink too, when not followed) */
        struct stat status;     /* its lstat(2), when it exists */
        /* When the walk failed: the path (canonical) it could not pass, and the root it was in there. */
        char *failed_at;
        bool proc_link;         /* it failed at a symlink of /proc, which is never followed */
} dsh_walk_target;

#define DSH_WALK_TARGET_INIT { -1, NULL, NULL, NULL, -1, false, { 0 }, NULL, false }

DSH_INTERNAL void dsh_walk_target_clear(dsh_walk_target *target);

/*
 * Asked before each directory DSH_WALK_CREATE_PARENTS makes: `root` is the
 * writable root the walk is in (-1: none), `final_path` the canonical path
 * the entry will have once the missing directories exist.  Returns 0 to go
 * on, or a negative errno that ends the walk (the callback says why itself).
 */
typedef int (*dsh_walk_approve_fn)(int root, const char *final_path, void *data);

/*
 * Walks absolute `path` from "/" (its last component must not be "." or
 * ".."; trailing slashes are ignored).  `roots` (count `root_count`, may be
 * 0) are the writable roots, identified.  Returns 0 with `target` filled
 * (the caller clears it), or a negative errno with target->failed_at and
 * target->root saying where the walk stopped:
 *   -ENOENT   a directory on the way does not exist (and was not to be made);
 *   -ENOTDIR  a component on the way is not a directory;
 *   -EISDIR   the path ends, after a symlink, in a directory named "." or "..", or in "/";
 *   -ELOOP    more than 40 symlinks, or a symlink of /proc (target->proc_link);
 *   -EAGAIN   a directory moved while `..` was walked out of it;
 *   the error of `approve`, or of openat2(), mkdirat(), readlinkat().
 * The entry itself may be missing: target->exists says.
 */
DSH_INTERNAL int dsh_walk(const dsh_walk_root *roots, size_t root_count, const char *path, unsigned flags,
                          dsh_walk_approve_fn approve, void *data, dsh_walk_target *target);

#endif
