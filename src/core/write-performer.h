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
 * Starts the thread, restricted with `ruleset_fd` (a Landlock ruleset; the
 * caller keeps it).  Waits until the thread is restricted: NULL when it
 * could not be (the caller then refuses every write).  The thread inherits
 * the caller's credentials and signal mask.
 */
dsh_write_performer *dsh_write_performer_start(int ruleset_fd);

/* Performs `call` on the thread and waits for it: the result (an fd, or 0) or a negative errno. */
long dsh_write_performer_perform(dsh_write_performer *performer, const dsh_performed_call *call);

/* Ends the thread and frees it. */
void dsh_write_performer_stop(dsh_write_performer *performer);

#endif
