/* SPDX-License-Identifier: MIT */
/*
 * Where a write-intent call's name leads: one open parent directory and one
 * last component in it, resolved as the calling thread would resolve the
 * path — from its cwd, its descriptor or its root (metadata-tracee.h), or
 * one of its own magic links (/proc/self/{root,cwd,fd/N}, /dev/fd/N) —
 * every component but the last by the kernel (openat2, no magic link), a
 * symlink in the last place read and followed here.  The name the command
 * reaches is the parent's own name (d_path: a directory has one) joined
 * with the last component.  libc only.
 */
#ifndef DSH_SANDBOX_WRITE_LOCATION_H
#define DSH_SANDBOX_WRITE_LOCATION_H

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "core/metadata-tracee.h"

/* Where a name leads: one open parent directory and the last component in it. */
typedef struct dsh_write_location {
        int parent;                     /* O_PATH directory (ours), or -1 */
        char last[NAME_MAX + 2];        /* the last component, "." for the directory itself */
        char name[PATH_MAX];            /* the parent's name joined with `last`: what the command reaches */
        bool exists;
        struct stat status;             /* lstat of `last` in `parent`, when it exists */
} dsh_write_location;

#define DSH_WRITE_LOCATION_INIT { .parent = -1 }

/* Closes the parent. */
void dsh_write_location_clear(dsh_write_location *where);

/*
 * `path` resolved from `dirfd` (AT_FDCWD: the cwd; absolute: the root) to
 * `*where`; a symlink in the last place followed when `follow`, and always
 * when the path ends in a slash (which then names a directory or nothing:
 * ENOTDIR).  Beneath /proc nothing is the command's to write (there "self"
 * is the supervisor): EACCES.  Returns 0 or the negative errno to answer.
 */
int dsh_write_locate(dsh_metadata_call *c, int dirfd, const char *path, bool follow, dsh_write_location *where);

/*
 * The command's own descriptor named by a path that is none: /dev/stdin,
 * /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N.
 * True with `*fd` set when `path` is one of them.
 */
bool dsh_write_own_descriptor(const char *path, int *fd);

/* The name of our fd `fd` (d_path, as the command sees it): 0, or a negative errno (-EACCES: no path). */
int dsh_write_descriptor_name(int fd, char *name, size_t size);

/* Whether `path` ends in a slash (and is not "/"). */
bool dsh_write_trailing_slash(const char *path);

#endif
