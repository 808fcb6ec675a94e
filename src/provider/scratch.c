/* SPDX-License-Identifier: MIT */
/* The per-session scratch (scratch.h states the security argument). */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/path-fd.h"
#include "base/path.h"
#include "provider/scratch.h"

#define SCRATCH_TEMP_NAME "tmp"
#define SCRATCH_CACHE_NAME "cache"
#define SCRATCH_OWNER_NAME "owner"
#define SCRATCH_OWNER_MAX 8192

extern char **environ;

char *dsh_scratch_base_in(const char *cache_directory)
{
        char *base = NULL;

        if (!cache_directory || asprintf(&base, "%s/scratch", cache_directory) < 0)
                return NULL;
        return base;
}

void dsh_scratch_clear(dsh_scratch *scratch)
{
        if (!scratch)
                return;
        if (scratch->temp_fd >= 0)
                close(scratch->temp_fd);
        if (scratch->cache_fd >= 0)
                close(scratch->cache_fd);
        free(scratch->base_path);
        free(scratch->temp_path);
        free(scratch->cache_path);
        *scratch = (dsh_scratch) DSH_SCRATCH_INIT;
}

static int invalid(dsh_error *error, int errno_value, const char *path, const char *why)
{
        return dsh_error_set(error, DSH_ERROR_SANDBOX_INVALID_TEMP_ROOT, errno_value,
                             "cannot prepare the session's scratch \"%s\": %s", path, why);
}

/*
 * A directory of the scratch must be the caller's and writable by nobody
 * else: one that another user made (or made writable) could have been
 * filled, or be swapped, by them.
 */
static int check_directory(int fd, const char *path, dsh_error *error)
{
        struct stat status;

        if (fstat(fd, &status) < 0)
                return invalid(error, errno, path, strerror(errno));
        if (!S_ISDIR(status.st_mode))
                return invalid(error, ENOTDIR, path, "it is not a directory");
        if (status.st_uid != geteuid())
                return invalid(error, EPERM, path, "it is not owned by the caller");
        if (status.st_mode & (S_IWGRP | S_IWOTH))
                return invalid(error, EPERM, path, "it is writable by others");
        return 0;
}

/*
 * `name` beneath `parent_fd`, made (0700) when missing and opened with no
 * symlink followed: a symlink planted at that name is never followed, the
 * call ends instead.  `*fd_out` gets an O_RDONLY directory fd.
 */
static int open_or_make(int parent_fd, const char *name, const char *path, int *fd_out, dsh_error *error)
{
        int fd;

        *fd_out = -1;
        if (mkdirat(parent_fd, name, 0700) < 0 && errno != EEXIST)
                return invalid(error, errno, path, strerror(errno));
        fd = dsh_openat2(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
                         RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (fd < 0)
                return invalid(error, -fd, path, fd == -ELOOP || fd == -ENOTDIR ? "it is not a directory (a symlink?)"
                                                                                 : strerror(-fd));
        *fd_out = fd;
        return check_directory(fd, path, error);
}

/*
 * The two directories a call is granted.  Their mode is set back to 0700:
 * the command owns what it may write, so it could have chmod'ed its own
 * /tmp — that must not make the next call refuse, nor open it to others.
 */
static int open_granted(int key_fd, const char *name, const char *key_path, char **path_out, int *fd_out,
                        dsh_error *error)
{
        dsh_autofree char *path = NULL;
        struct stat status;
        int result;

        if (asprintf(&path, "%s/%s", key_path, name) < 0)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        if (mkdirat(key_fd, name, 0700) < 0 && errno != EEXIST)
                return invalid(error, errno, path, strerror(errno));
        *fd_out = dsh_openat2(key_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
                              RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
        if (*fd_out < 0) {
                result = -*fd_out;
                *fd_out = -1;
                return invalid(error, result, path, strerror(result));
        }
        if (fstat(*fd_out, &status) < 0)
                return invalid(error, errno, path, strerror(errno));
        /* Only when it changed: a nested sandbox reading its parent's scratch may not chmod it. */
        if (S_ISDIR(status.st_mode) && (status.st_mode & 07777) != 0700 && fchmod(*fd_out, 0700) < 0)
                return invalid(error, errno, path, strerror(errno));
        result = check_directory(*fd_out, path, error);
        if (result == 0)
                *path_out = dsh_steal_pointer(&path);
        return result;
}

static uint64_t fnv1a(const char *text)
{
        uint64_t hash = 0xcbf29ce484222325ULL;

        for (; *text; text++) {
                hash ^= (unsigned char) *text;
                hash *= 0x100000001b3ULL;
        }
        return hash;
}

/* Reads the owner record (at most SCRATCH_OWNER_MAX bytes) into a new string, or NULL with errno set. */
static char *read_owner(int key_fd)
{
        dsh_autoclose int fd = openat(key_fd, SCRATCH_OWNER_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        char *text;
        ssize_t length;

        if (fd < 0)
                return NULL;
        text = calloc(1, SCRATCH_OWNER_MAX + 1);
        if (!text)
                return NULL;
        length = read(fd, text, SCRATCH_OWNER_MAX);
        if (length < 0) {
                free(text);
                return NULL;
        }
        return text;
}

/* The record read against this call's owner: a key recorded for another is refused, never shared. */
static int compare_owner(const char *recorded, const char *owner, const char *key_path, dsh_error *error)
{
        if (strcmp(recorded, owner) != 0)
                return invalid(error, EEXIST, key_path, "its key is recorded for another session or workspace");
        return 0;
}

/*
 * The key's owner record: written whole under a temporary name of this
 * thread's and renamed into place without replacing, so a concurrent first
 * call (another process, or another thread of a serve) finds either no
 * record or all of it, and every call reads it only after its own rename has
 * put one there; then compared.  A key recorded for another owner
 * (a hash collision) is refused, never shared.
 *
 * A record already there is read first and the write skipped (issue 24:
 * every call but a key's first used to create, write, fail to rename and
 * unlink a file on the disk): a record is only ever put in place whole, by
 * the rename, so one that can be opened is complete, and it is the same
 * record the rename's EEXIST would have sent this call to read.  The key's
 * directory is this user's, beneath the scratch base that every sandbox
 * hides (a tmpfs over it) and outside every writable root, so no command
 * can have put or changed a record there.
 */
static int claim_key(int key_fd, const char *key_path, const char *owner, dsh_error *error)
{
        char temporary[64];
        dsh_autofree char *recorded = read_owner(key_fd);
        size_t length = strlen(owner);
        int fd;

        if (recorded)
                return compare_owner(recorded, owner, key_path, error);
        if (errno != ENOENT)
                return invalid(error, errno ? errno : EIO, key_path, "cannot read its owner record");
        /* One temporary name per thread: a serve's concurrent first calls are threads of one process, and
         * the one whose O_EXCL failed on a shared name would read the record before the other renamed it. */
        snprintf(temporary, sizeof(temporary), "%s.%ld.%ld", SCRATCH_OWNER_NAME, (long) getpid(), (long) gettid());
        fd = openat(key_fd, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
                bool written = write(fd, owner, length) == (ssize_t) length;

                close(fd);
                if (!written || (renameat2(key_fd, temporary, key_fd, SCRATCH_OWNER_NAME, RENAME_NOREPLACE) < 0 &&
                                 errno != EEXIST)) {
                        int failure = errno ? errno : EIO;

                        unlinkat(key_fd, temporary, 0);
                        return invalid(error, failure, key_path, "cannot record its owner");
                }
                unlinkat(key_fd, temporary, 0);  /* still there when another call recorded first */
        }
        recorded = read_owner(key_fd);
        if (!recorded)
                return invalid(error, errno ? errno : EIO, key_path, "cannot read its owner record");
        return compare_owner(recorded, owner, key_path, error);
}

/* "session ID" or "workspace ROOT": whom the calls that share a scratch have in common. */
static char *owner_of(const dsh_policy *policy)
{
        char *owner = NULL;

        if (policy->session_id && policy->session_id[0])
                return asprintf(&owner, "session %s\n", policy->session_id) < 0 ? NULL : owner;
        return asprintf(&owner, "workspace %s\n", policy->workspace_root) < 0 ? NULL : owner;
}

static int open_base(const char *base, char **canonical_out, int *fd_out, dsh_error *error)
{
        int result = dsh_path_make_directories(base, 0700);

        *fd_out = -1;
        if (result < 0)
                return invalid(error, -result, base, strerror(-result));
        *canonical_out = dsh_path_canonical(base);
        if (!*canonical_out)
                return invalid(error, errno, base, strerror(errno));
        /* Canonical now: a symlink put on the way since is refused, not followed. */
        *fd_out = dsh_path_open_canonical(*canonical_out, true);
        if (*fd_out < 0) {
                result = -*fd_out;
                *fd_out = -1;
                return invalid(error, result, base, strerror(result));
        }
        return check_directory(*fd_out, *canonical_out, error);
}

int dsh_scratch_open(const char *base, const dsh_policy *policy, dsh_scratch *scratch, dsh_error *error)
{
        dsh_autofree char *canonical_base = NULL, *owner = NULL, *key_path = NULL;
        dsh_autoclose int base_fd = -1;
        dsh_autoclose int key_fd = -1;
        char key[32];
        int result;

        *scratch = (dsh_scratch) DSH_SCRATCH_INIT;
        if (!base || base[0] != '/')
                return invalid(error, EINVAL, base ? base : "", "the scratch base must be an absolute path");
        owner = owner_of(policy);
        if (!owner)
                return dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        snprintf(key, sizeof(key), "%016llx", (unsigned long long) fnv1a(owner));
        result = open_base(base, &canonical_base, &base_fd, error);
        if (result == 0 && asprintf(&key_path, "%s/%s", canonical_base, key) < 0) {
                key_path = NULL;
                result = dsh_error_set(error, DSH_ERROR_SYSTEM, ENOMEM, "out of memory");
        }
        if (result == 0)
                result = open_or_make(base_fd, key, key_path, &key_fd, error);
        if (result == 0)
                result = claim_key(key_fd, key_path, owner, error);
        if (result == 0)
                result = open_granted(key_fd, SCRATCH_TEMP_NAME, key_path, &scratch->temp_path, &scratch->temp_fd,
                                      error);
        if (result == 0)
                result = open_granted(key_fd, SCRATCH_CACHE_NAME, key_path, &scratch->cache_path,
                                      &scratch->cache_fd, error);
        if (result == 0)
                scratch->base_path = dsh_steal_pointer(&canonical_base);
        if (result < 0)
                dsh_scratch_clear(scratch);
        return result;
}

/* ------------------------------------------------------- environment -- */

/*
 * Each package manager's cache, as a directory of the scratch's cache.
 * `alias` is another spelling the tool reads for the same setting (npm
 * reads its variables in either case): a caller who set either keeps it.
 * CARGO_HOME moves cargo's registry and its .package-cache lock (a cargo
 * build takes the lock even without dependencies); the user's
 * ~/.cargo/config.toml is then read only where cargo's directory walk
 * finds it (a workspace beneath $HOME).  XDG_CACHE_HOME catches the tools
 * that follow the XDG spec (pip and go's defaults among them, pnpm's cache).
 */
static const struct {
        const char *name;
        const char *alias;
        const char *subdirectory;
} cache_variables[] = {
        { "npm_config_cache", "NPM_CONFIG_CACHE", "npm" },
        { "PIP_CACHE_DIR", NULL, "pip" },
        { "YARN_CACHE_FOLDER", NULL, "yarn" },
        { "GOCACHE", NULL, "go-build" },
        { "GOMODCACHE", NULL, "go-mod" },
        { "CARGO_HOME", NULL, "cargo" },
        { "XDG_CACHE_HOME", NULL, "xdg" },
};

static bool caller_set(const char *name, const char *alias)
{
        return getenv(name) || (alias && getenv(alias));
}

static int append_pair(char ***pairs, const char *name, const char *value)
{
        return dsh_strv_append(pairs, name) < 0 || dsh_strv_append(pairs, value) < 0 ? -ENOMEM : 0;
}

char **dsh_scratch_variables(const dsh_scratch *scratch, dsh_mode mode)
{
        char **pairs = calloc(1, sizeof(char *));
        int result = pairs ? 0 : -ENOMEM;

        /* danger-full-access is never confined: its environment is the caller's. */
        if (result == 0 && dsh_mode_is_confined(mode))
                result = append_pair(&pairs, "TMPDIR", "/tmp");
        for (size_t i = 0; result == 0 && mode == DSH_MODE_WORKSPACE_WRITE && dsh_scratch_present(scratch) &&
                           i < sizeof(cache_variables) / sizeof(cache_variables[0]);
             i++) {
                dsh_autofree char *value = NULL;

                if (caller_set(cache_variables[i].name, cache_variables[i].alias))
                        continue;
                if (asprintf(&value, "%s/%s", scratch->cache_path, cache_variables[i].subdirectory) < 0) {
                        value = NULL;
                        result = -ENOMEM;
                } else {
                        result = append_pair(&pairs, cache_variables[i].name, value);
                }
        }
        if (result < 0) {
                dsh_strv_free(pairs);
                return NULL;
        }
        return pairs;
}
