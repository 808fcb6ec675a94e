/* SPDX-License-Identifier: MIT */
/*
 * The per-user registry of ssh control directories.
 *
 * Why it exists: the control directory comes from the caller's
 * environment ($XDG_RUNTIME_DIR/dsh-sandbox/ssh, else
 * $HOME/.cache/dsh-sandbox/ssh).  A runtime started with another
 * environment (the user's terminal vs. an agent run from a unit, cron or
 * sudo) would protect only the directory *its* environment names, and a
 * confined command whose root holds the other one could connect to that
 * master (an unconfined command on the remote) or endpoint, or replace the
 * endpoint to forge a later call's exit status.  So every directory a call
 * prepares is recorded here first (remote-ssh.c: no master, endpoint or
 * service socket is ever made in a directory that is not recorded), and
 * every runtime protects every recorded directory that exists (runtime.c),
 * whatever its own environment says: read-only, every write and every
 * connect into it refused by the supervisor, on both backends.  (Not
 * hidden behind a tmpfs as the environment's own two are: a recorded
 * directory removed between the plan and bwrap's mounts — a logout, a
 * test's temporary runtime directory — would fail the call, bwrap cannot
 * make the mount point again under a read-only view, and making it again
 * beforehand would bring back a directory its owner removed.  The
 * read-only bind is `--ro-bind-try`, which a removal cannot fail.)
 *
 * Where: <passwd home>/.cache/dsh-sandbox/registry/control-directories —
 * from the passwd entry, not $HOME nor XDG_*: a place no environment can
 * move, the same for every call of this user.
 *
 * Why a hostile confined command cannot edit, empty or race it:
 *  - the registry directory is one of the sandbox's own, protected and
 *    hidden in every sandbox (runtime.c; made before the sandbox starts if
 *    missing: dsh_protections_make_hidden), so the command can neither
 *    write, rename nor unlink the file, nor take its lock;
 *  - the file is replaced whole (written beside it, then renamed over it
 *    under a lock), so a reader sees the old list or the new one, never a
 *    part; it is trusted only if a regular file (never followed through a
 *    symlink), this user's, written by nobody else, and bounded in size;
 *    anything else refuses the sandbox (the reader) and the directory (the
 *    writer): fail closed;
 *  - the set a sandbox protects is read when the sandbox is built: a
 *    directory registered later (a first `--remote` call made with a new
 *    XDG_RUNTIME_DIR while a confined command already runs) is not covered
 *    by that sandbox — the limit docs/remote.md states;
 *  - a name the command adds cannot get in at all; and an entry can only
 *    add protection, never remove one.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/path.h"
#include "base/xdg.h"
#include "dsh-sandbox/sandbox.h"
#include "remote/remote-registry.h"

#define REGISTRY_FILE "control-directories"
#define REGISTRY_NEW "control-directories.new"
#define REGISTRY_LOCK "lock"
/* Enough for every runtime directory and home a user keeps; a full registry refuses new directories. */
#define REGISTRY_ENTRIES_MAX 64
#define REGISTRY_BYTES_MAX (REGISTRY_ENTRIES_MAX * PATH_MAX)
/* The lock is held for a read and a rename; one held longer (a stopped writer) refuses, never hangs. */
#define REGISTRY_LOCK_TRIES 200
#define REGISTRY_LOCK_PAUSE_NS (10 * 1000 * 1000)

char *dsh_remote_registry_directory(void)
{
        dsh_autofree char *home = dsh_passwd_home();
        char *directory = NULL;

        if (!home || home[0] != '/' || asprintf(&directory, "%s/.cache/dsh-sandbox/registry", home) < 0)
                return NULL;
        return directory;
}

/* The registry directory, opened without following a symlink: -ENOENT when missing, -EPERM when not ours alone. */
static int open_registry_directory(bool create)
{
        dsh_autofree char *directory = dsh_remote_registry_directory();
        struct stat status;
        int fd;

        if (!directory)
                return -ENOENT;
        if (create && dsh_path_make_directories(directory, 0700) < 0)
                return -errno;
        fd = open(directory, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ENOENT : -EPERM;
        if (fstat(fd, &status) < 0 || status.st_uid != geteuid() || (status.st_mode & (S_IWGRP | S_IWOTH))) {
                close(fd);
                return -EPERM;
        }
        return fd;
}

/* The file's lines in *lines (NULL-ended).  0 (a missing file: none), or -EPERM when it is not trusted. */
static int read_registry(int directory_fd, char ***lines)
{
        dsh_autoclose int fd = openat(directory_fd, REGISTRY_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        dsh_autofree char *text = NULL;
        struct stat status;
        size_t used = 0;

        *lines = NULL;
        if (fd < 0)
                return errno == ENOENT ? 0 : -EPERM;
        if (fstat(fd, &status) < 0 || !S_ISREG(status.st_mode) || status.st_uid != geteuid() ||
            (status.st_mode & (S_IWGRP | S_IWOTH)) || status.st_size > REGISTRY_BYTES_MAX)
                return -EPERM;
        text = malloc((size_t) status.st_size + 1);
        if (!text)
                return -ENOMEM;
        while (used < (size_t) status.st_size) {
                ssize_t got = read(fd, text + used, (size_t) status.st_size - used);

                if (got < 0 && errno == EINTR)
                        continue;
                if (got <= 0)
                        break;
                used += (size_t) got;
        }
        text[used] = '\0';
        for (char *line = text, *end; *line; line = end + 1) {
                end = strchr(line, '\n');
                if (!end)
                        break;   /* only whole lines: the file is written whole, so there is none other */
                *end = '\0';
                if (line[0] == '/' && dsh_strv_append(lines, line) < 0) {
                        dsh_strv_free(*lines);
                        *lines = NULL;
                        return -ENOMEM;
                }
        }
        return 0;
}

static bool is_directory(const char *path)
{
        struct stat status;

        return lstat(path, &status) == 0 && S_ISDIR(status.st_mode);
}

static bool listed(char *const *lines, const char *path)
{
        for (size_t i = 0; lines && lines[i]; i++)
                if (strcmp(lines[i], path) == 0)
                        return true;
        return false;
}

int dsh_remote_registry_list(char ***directories)
{
        dsh_autoclose int directory_fd = open_registry_directory(false);
        char **lines = NULL;
        int result;

        *directories = NULL;
        if (directory_fd == -ENOENT)
                return 0;
        if (directory_fd < 0)
                return directory_fd;
        result = read_registry(directory_fd, &lines);
        for (size_t i = 0; result == 0 && lines && lines[i]; i++)
                if (is_directory(lines[i]) && dsh_strv_append(directories, lines[i]) < 0)
                        result = -ENOMEM;
        dsh_strv_free(lines);
        if (result < 0) {
                dsh_strv_free(*directories);
                *directories = NULL;
        }
        return result;
}

/* The lock beside the file, tried until REGISTRY_LOCK_TRIES pass: the fd, or -1. */
static int lock_registry(int directory_fd)
{
        int fd = openat(directory_fd, REGISTRY_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        const struct timespec pause = { 0, REGISTRY_LOCK_PAUSE_NS };

        for (int tries = 0; fd >= 0 && tries < REGISTRY_LOCK_TRIES; tries++) {
                if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                        return fd;
                if (errno != EWOULDBLOCK && errno != EINTR)
                        break;
                nanosleep(&pause, NULL);
        }
        if (fd >= 0)
                close(fd);
        return -1;
}

/* Writes `lines` (the directories that still exist) and `added` beside the file, then renames it over it. */
static int rewrite_registry(int directory_fd, char *const *lines, const char *added)
{
        dsh_autoclose int fd = openat(directory_fd, REGISTRY_NEW, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                                      0600);
        FILE *out;
        size_t count = 1;
        int failed;

        if (fd < 0)
                return -errno;
        out = fdopen(dup(fd), "w");
        if (!out)
                return -errno;
        for (size_t i = 0; lines && lines[i]; i++)
                if (strcmp(lines[i], added) != 0 && is_directory(lines[i]) && count++ < REGISTRY_ENTRIES_MAX)
                        fprintf(out, "%s\n", lines[i]);
        fprintf(out, "%s\n", added);
        failed = fclose(out) != 0 || count > REGISTRY_ENTRIES_MAX || fsync(fd) < 0;
        if (failed || renameat(directory_fd, REGISTRY_NEW, directory_fd, REGISTRY_FILE) < 0) {
                unlinkat(directory_fd, REGISTRY_NEW, 0);
                return -EIO;
        }
        return 0;
}

int dsh_remote_registry_add(const char *directory)
{
        dsh_autofree char *canonical = realpath(directory, NULL);
        dsh_autoclose int directory_fd = -1, lock_fd = -1;
        char **lines = NULL;
        int result;

        if (!canonical || strchr(canonical, '\n'))
                return -EINVAL;
        directory_fd = open_registry_directory(true);
        if (directory_fd < 0)
                return directory_fd;
        /* Already there (every call after the first): a read, no write. */
        result = read_registry(directory_fd, &lines);
        if (result == 0 && listed(lines, canonical)) {
                dsh_strv_free(lines);
                return 0;
        }
        dsh_strv_free(lines);
        lines = NULL;
        lock_fd = result == 0 ? lock_registry(directory_fd) : -1;
        if (lock_fd < 0)
                return result < 0 ? result : -EAGAIN;
        /* Under the lock, read again: another caller may have rewritten it meanwhile. */
        result = read_registry(directory_fd, &lines);
        if (result == 0 && !listed(lines, canonical))
                result = rewrite_registry(directory_fd, lines, canonical);
        dsh_strv_free(lines);
        return result;
}
