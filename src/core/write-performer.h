/* SPDX-License-Identifier: MIT */
/*
 * The thread that performs the command's writes under Landlock
 * (write-supervisor.c says why it exists).  It is restricted with the
 * command's own ruleset before it performs anything, so every write it
 * makes for the command is checked by the kernel against the very grants
 * the command has: the supervisor decides only what Landlock cannot (a
 * held-back path inside a root), never what lies outside the roots.  It
 * has its own umask (CLONE_FS unshared), set to the command's before each
 * creation.  It never reads the command: what it is handed is already
 * copied and opened by the serving thread.  libc and pthread only.
 */
#ifndef DSH_SANDBOX_WRITE_PERFORMER_H
#define DSH_SANDBOX_WRITE_PERFORMER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum dsh_performed_kind {
        DSH_PERFORM_OPENAT,     /* openat(dirfd, name, flags, mode): the result is the fd */
        DSH_PERFORM_MKDIRAT,
        DSH_PERFORM_MKNODAT,
        DSH_PERFORM_SYMLINKAT,  /* symlinkat(text, dirfd, name) */
        DSH_PERFORM_UNLINKAT,   /* unlinkat(dirfd, name, flags) */
        DSH_PERFORM_RENAMEAT2,  /* renameat2(dirfd, name, new_dirfd, new_name, flags) */
        DSH_PERFORM_LINKAT,     /* linkat(dirfd, name, new_dirfd, new_name, flags) */
        DSH_PERFORM_TRUNCATE,   /* truncate(name, length) */
} dsh_performed_kind;

typedef struct dsh_performed_call {
        dsh_performed_kind kind;
        int dirfd;
        const char *name;
        int new_dirfd;
        const char *new_name;
        const char *text;
        int flags;
        mode_t mode;
        dev_t device;
        int64_t length;
        bool creates;           /* set the umask below first */
        mode_t umask;
} dsh_performed_call;

typedef struct dsh_write_performer dsh_write_performer;

/*
 * Starts the thread, which restricts itself with `ruleset_fd` (a Landlock
 * ruleset; the caller keeps it) and inherits the caller's credentials and
 * signal mask.  Does not wait for it to be restricted (NULL: it could not
 * be made): dsh_write_performer_confirm() must say it is before it is asked
 * anything.  So a caller starts it early and waits only when a call needs it.
 */
dsh_write_performer *dsh_write_performer_launch(int ruleset_fd);

/*
 * Waits, once, until a launched thread is restricted: true when it is,
 * false when it could not be (the caller then stops it and refuses every
 * write).  Nothing to wait for, the second time.
 */
bool dsh_write_performer_confirm(dsh_write_performer *performer);

/* Performs `call` on the thread and waits for it: the result (an fd, or 0) or a negative errno. */
long dsh_write_performer_perform(dsh_write_performer *performer, const dsh_performed_call *call);

/*
 * Performs `call` in the calling thread itself, with no restriction of its
 * own: only for what the supervisor proved lies in a writable root, where
 * Landlock grants every right the call needs (write-supervisor.c says
 * which).  The caller's thread must have a umask of its own (CLONE_FS
 * unshared) when `call->creates`.  The result or a negative errno.
 */
long dsh_write_perform_now(const dsh_performed_call *call);

/* Ends the thread and frees it. */
void dsh_write_performer_stop(dsh_write_performer *performer);

#endif
