/* SPDX-License-Identifier: MIT */
/*
 * Write intent, decided by the supervisor (write-supervisor.c holds the
 * security argument; docs/supervisor.md, "Write intent").  Landlock grants
 * a root whole: inside it, nothing can be held back by the kernel.  So the
 * filter sends every write-intent call (write-call.h) to the supervisor,
 * which refuses one that would touch a held-back path (a protected subpath,
 * the sandbox's own files) and performs every other itself, on a thread
 * restricted by the command's own Landlock ruleset.  Under bwrap the mounts
 * decide; the supervisor only writes down what they will refuse.
 * libc only, like the rest of core/.
 */
#ifndef DSH_SANDBOX_WRITE_SUPERVISOR_H
#define DSH_SANDBOX_WRITE_SUPERVISOR_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/seccomp.h>
#include <sys/stat.h>

#include "core/metadata-tracee.h"
#include "core/refusals.h"

/* A canonical path held back inside the roots, and why (dsh_metadata_supervisor_hold_back()). */
typedef struct dsh_held_back {
        char *path;
        size_t length;
        dsh_refusal_rule rule;
        bool exists;                    /* it existed when the call began: its inode is below */
        dev_t dev;
        ino_t ino;
} dsh_held_back;

/* What the metadata supervisor lends the write supervisor for one call. */
typedef struct dsh_write_scope {
        const dsh_held_back *held_back;
        size_t held_back_count;
        /*
         * Whether the open directory (or file) `fd`, fstat in `target`, lies
         * beneath a writable root of the call, by the metadata supervisor's
         * own test (check_target()): 0, or -EACCES.
         */
        int (*in_root)(void *data, int fd, const struct stat *target);
        /*
         * Whether the open directory `fd` (fstat in `directory`, its name in
         * `name`) is a writable root or lies beneath one (what is made in it
         * is beneath the root: a contents-only root's own directory counts):
         * the index of that root (>= 0), or -EACCES.
         */
        int (*directory_in_root)(void *data, int fd, const struct stat *directory, const char *name);
        /* Whether root `index` (directory_in_root()'s) is shared by every user: Landlock grants it without REFER. */
        bool (*root_is_shared)(void *data, int index);
        bool own_umask;                 /* the serving thread has a umask of its own (CLONE_FS unshared) */
        /* Writes one refusal record (the supervisor keeps them, locked). */
        void (*record)(void *data, const char *op, const char *path, dsh_refusal_rule rule);
        void *data;
} dsh_write_scope;

typedef struct dsh_write_supervisor dsh_write_supervisor;

/*
 * A write supervisor that performs (`ruleset_fd` >= 0: Landlock's ruleset,
 * duplicated here; its performing thread is started by
 * dsh_write_supervisor_prepare(), or else at the first call) or only
 * watches (`ruleset_fd` -1: bwrap).  NULL when out of memory.
 */
dsh_write_supervisor *dsh_write_supervisor_new(int ruleset_fd);

/*
 * Starts the performing thread now, from the calling (serving) thread,
 * which it inherits its capabilities and signal mask from: called as
 * serving begins, while the command is still being exec'd, so that the
 * first call performed (bash opens /dev/tty for reading and writing as it
 * starts) does not wait for a thread to be made and restricted.  Nothing
 * when it only watches, or when the thread is started already.
 */
void dsh_write_supervisor_prepare(dsh_write_supervisor *supervisor);

/* Its copy of the ruleset (-1: it only watches). */
int dsh_write_supervisor_ruleset_fd(const dsh_write_supervisor *supervisor);

/* Stops its performing thread, if any, and frees it. */
void dsh_write_supervisor_free(dsh_write_supervisor *supervisor);

/*
 * Decides one write-intent notification and answers it.  Returns true when
 * it was refused because the command's memory or descriptors could not be
 * read (the caller counts those).
 */
bool dsh_write_call_handle(dsh_write_supervisor *supervisor, dsh_metadata_call *c,
                           const struct seccomp_notif *request, const dsh_write_scope *scope);

/* The held-back path that `path` lies in (or is, with `or_above`: or holds), or NULL. */
const dsh_held_back *dsh_write_held_back_at(const dsh_write_scope *scope, const char *path, bool or_above);

#endif
