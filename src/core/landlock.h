/* SPDX-License-Identifier: MIT */
/*
 * The Landlock core shared by the library's in-process spawn path and the
 * `landlock-run` launcher.  libc only (no jansson), so the launcher stays
 * small and starts fast.
 *
 * The kernel's own uapi header on the build machine may predate the ABI the
 * running kernel offers, so the constants and the ruleset attribute are
 * declared here, by value, from the kernel's documented uapi.
 */
#ifndef DSH_SANDBOX_LANDLOCK_H
#define DSH_SANDBOX_LANDLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "dsh-sandbox/sandbox.h"

#define DSH_LANDLOCK_ACCESS_FS_EXECUTE      (1ULL << 0)
#define DSH_LANDLOCK_ACCESS_FS_WRITE_FILE   (1ULL << 1)
#define DSH_LANDLOCK_ACCESS_FS_READ_FILE    (1ULL << 2)
#define DSH_LANDLOCK_ACCESS_FS_READ_DIR     (1ULL << 3)
#define DSH_LANDLOCK_ACCESS_FS_REMOVE_DIR   (1ULL << 4)
#define DSH_LANDLOCK_ACCESS_FS_REMOVE_FILE  (1ULL << 5)
#define DSH_LANDLOCK_ACCESS_FS_MAKE_CHAR    (1ULL << 6)
#define DSH_LANDLOCK_ACCESS_FS_MAKE_DIR     (1ULL << 7)
#define DSH_LANDLOCK_ACCESS_FS_MAKE_REG     (1ULL << 8)
#define DSH_LANDLOCK_ACCESS_FS_MAKE_SOCK    (1ULL << 9)
#define DSH_LANDLOCK_ACCESS_FS_MAKE_FIFO    (1ULL << 10)
#define DSH_LANDLOCK_ACCESS_FS_MAKE_BLOCK   (1ULL << 11)
#define DSH_LANDLOCK_ACCESS_FS_MAKE_SYM     (1ULL << 12)
#define DSH_LANDLOCK_ACCESS_FS_REFER        (1ULL << 13)  /* ABI 2 */
#define DSH_LANDLOCK_ACCESS_FS_TRUNCATE     (1ULL << 14)  /* ABI 3 */
#define DSH_LANDLOCK_ACCESS_FS_IOCTL_DEV    (1ULL << 15)  /* ABI 5 */

/*
 * Scopes (ABI 6): a scoped domain cannot reach out of itself.  With
 * ABSTRACT_UNIX_SOCKET the command cannot connect to (or send datagrams to) an
 * abstract unix socket bound by a process outside its domain; with SIGNAL it
 * cannot signal a process outside its domain (the agent that started it,
 * other host processes).  Signals into the domain (the user's Ctrl-C relayed
 * by the caller), signals between processes of the domain, and the kernel's
 * own (SIGCHLD, SIGPIPE) are unaffected.  Scopes govern no file effect, so
 * they do not change the enforcement verdict: a kernel without them is
 * reported as missing them, not as partial.
 */
#define DSH_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define DSH_LANDLOCK_SCOPE_SIGNAL               (1ULL << 1)
#define DSH_LANDLOCK_SCOPES_ALL (DSH_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | DSH_LANDLOCK_SCOPE_SIGNAL)
#define DSH_LANDLOCK_SCOPE_ABI 6

/*
 * Below ABI 3 a process confined "read-only" can still truncate(2) files
 * outside its grants: that is a write, so such a kernel cannot enforce either
 * confined mode and is treated as not enforcing Landlock at all (refusal).
 * ABI 3 and 4 leave ioctl(2) on device files ungoverned: partial.  From ABI 5
 * every file effect the modes promise is governed: full.
 */
#define DSH_LANDLOCK_MINIMUM_ABI 3
#define DSH_LANDLOCK_FULL_ABI 5

/* Mirror of struct landlock_ruleset_attr (ABI 6 layout; older kernels accept trailing zeros). */
struct dsh_landlock_ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;
        uint64_t scoped;
};

typedef struct dsh_landlock_ruleset {
        int fd;
        int abi;
        uint64_t handled_access;
        uint64_t scoped;        /* the DSH_LANDLOCK_SCOPE_* bits the ruleset requests */
} dsh_landlock_ruleset;

#define DSH_LANDLOCK_RULESET_INIT { -1, 0, 0, 0 }

/* The running kernel's Landlock ABI (>= 1), or a negative errno (-ENOSYS: not
 * built in; -EOPNOTSUPP: built in but disabled at boot). */
int dsh_landlock_abi(void);

/* What the ABI gives: full, partial, or (below the minimum) nothing usable. */
bool dsh_landlock_abi_usable(int abi);
dsh_enforcement dsh_landlock_enforcement(int abi);

/* The DSH_LANDLOCK_SCOPE_* bits `abi` can request (none below ABI 6 or for a negative errno). */
uint64_t dsh_landlock_scopes(int abi);

/*
 * Creates a ruleset that handles every filesystem right the running ABI knows,
 * so anything not granted afterwards is denied, and requests every scope the
 * ABI has (dsh_landlock_scopes()).  Returns 0 or a negative errno;
 * -EOPNOTSUPP when the ABI is below DSH_LANDLOCK_MINIMUM_ABI.
 */
int dsh_landlock_ruleset_open(dsh_landlock_ruleset *ruleset);

/*
 * Grants read+execute (`writable` false) or every handled right except device
 * creation (`writable` true) beneath `path`.  The path is opened
 * O_PATH|O_CLOEXEC and the rule bound to that fd, so what is granted is the
 * inode opened here, whatever the name points to later.  A non-directory
 * keeps only the rights that apply to files (how "/dev/null" is granted).
 * `refuse_symlinks` resolves with RESOLVE_NO_SYMLINKS: for a canonical path
 * checked earlier, a symlink appearing on the way since is a swap, and the
 * grant fails (ELOOP) instead of following it.
 * Returns 0, or a negative errno; *failed_step is "open" or "add_rule".
 */
int dsh_landlock_ruleset_grant(dsh_landlock_ruleset *ruleset, const char *path, bool writable, bool refuse_symlinks,
                               const char **failed_step);

/*
 * The same grant on an fd the caller opened (O_PATH is enough), e.g. a root
 * opened once right after its check.  Returns 0 or a negative errno.
 */
int dsh_landlock_ruleset_grant_fd(dsh_landlock_ruleset *ruleset, int fd, bool writable);

/*
 * Grants exactly `access` (kept to what the ruleset handles, and on a
 * non-directory to the rights that apply to files) beneath the inode of
 * `fd`.  Nothing to grant (no handled right left) adds no rule and returns 0.
 * Returns 0 or a negative errno.
 */
int dsh_landlock_ruleset_grant_access(dsh_landlock_ruleset *ruleset, int fd, uint64_t access);

/*
 * The same when the caller knows what `fd` is (a directory entry's type):
 * no fstat().  A `directory` false keeps the rights that apply to files; a
 * wrong `directory` true on a file fails (EINVAL), never grants more.
 */
int dsh_landlock_ruleset_add_rule(dsh_landlock_ruleset *ruleset, int fd, uint64_t access, bool directory);

void dsh_landlock_ruleset_close(dsh_landlock_ruleset *ruleset);

/*
 * Sets no_new_privs (again: the caller's pre-exec sequence sets it first, see
 * dsh_set_no_new_privs()), then restricts the calling thread with the ruleset.
 * Only raw system calls: safe between fork() and exec().  Returns 0 or a
 * negative errno.  The ruleset fd stays open (the caller's exec closes it).
 */
int dsh_landlock_enforce(int ruleset_fd);

#endif
