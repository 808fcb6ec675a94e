/* SPDX-License-Identifier: MIT */
/*
 * Read grants that leave masks out (core/read-mask.h).
 *
 * Why a mask holds, with the command root in its domain and hostile:
 *  - Landlock decides an open on the path it resolved to, walking up from
 *    the file: a mask's inode and every name on the way to it carry no rule
 *    that grants READ_FILE, so however it is named — through a symlink,
 *    /proc/self/root, ".." — the walk meets no grant (EACCES).  (A second
 *    mount of the same directory elsewhere is another path, walked through
 *    its own parents: see "What does not hold" below.)  A symlink
 *    entry is granted nothing: following it is judged on its target.
 *  - A name that appears later in a directory on the way (a credential the
 *    user creates during the call, a new match of a wildcard in a closed
 *    directory) was enumerated by nobody: no rule covers it.  The
 *    directories on the way themselves get READ_DIR only, so they list
 *    (and so does a masked directory beneath them: its names, never its
 *    contents).
 *  - To reach a masked inode under a granted name the command would have
 *    to move or link it: rename and link need REMOVE/MAKE rights and, across
 *    directories, REFER on both sides, which only a writable root has — a
 *    mask inside one is not held, and the backend says so.  Mounting (a
 *    bind of the mask onto a granted name) is refused to any process in a
 *    Landlock domain; open_by_handle_at needs CAP_DAC_READ_SEARCH, dropped,
 *    and is judged on the same walk anyway.
 *  - /proc/PID/{root,cwd,fd,environ,mem} of a process outside the domain
 *    (the supervisor, the caller, bwrap's init) need ptrace access, which
 *    Landlock gives only within the domain; /proc/self/fd holds nothing
 *    opened on a mask (this enumeration never opens one, and what it opens
 *    is O_CLOEXEC and closed before it returns).
 *  - Every entry is opened beneath the directory fd enumerated, with
 *    O_NOFOLLOW: what is granted is the inode that name held then.  A
 *    directory on the way that is a symlink now was canonical when the plan
 *    was made, so something moved in between: the grant fails (ELOOP) and
 *    the ruleset is not enforced.
 * What does not hold, and is said in docs/secrets.md: another name the
 *  credential already had before the call (a hard link made earlier, a bind
 *  mount of the home elsewhere) is a different path with its own grants.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/read-mask.h"

struct enumeration {
        dsh_landlock_ruleset *ruleset;
        uint64_t access;
        const dsh_read_mask *mask;
        size_t rules;
        size_t limit;
};

/*
 * Where the last failure happened, for *failed_path: a thread's own, so the
 * answer outlives the call without an allocation (the launchers call this
 * between fork and exec).
 */
static __thread char failure_path[PATH_MAX];

static int fail_at(const char *path, int result, const char **failed_path)
{
        snprintf(failure_path, sizeof(failure_path), "%s", path);
        if (failed_path)
                *failed_path = failure_path;
        return result;
}

static bool vector_holds(char *const *paths, const char *path)
{
        for (char *const *entry = paths; entry && *entry; entry++)
                if (strcmp(*entry, path) == 0)
                        return true;
        return false;
}

/* Whether some entry of `paths` lies strictly beneath the directory `path`. */
static bool vector_reaches_beneath(char *const *paths, const char *path)
{
        size_t length = strcmp(path, "/") == 0 ? 0 : strlen(path);

        for (char *const *entry = paths; entry && *entry; entry++)
                if (strncmp(*entry, path, length) == 0 && (*entry)[length] == '/' && (*entry)[length + 1] != '\0')
                        return true;
        return false;
}

/* A directory enumerated entry by entry: a closed one, or one with a mask or a closed one beneath it. */
static bool on_the_way(const dsh_read_mask *mask, const char *path)
{
        return vector_holds(mask->closed, path) || vector_reaches_beneath(mask->masked, path) ||
               vector_reaches_beneath(mask->closed, path);
}

/* `directory`: true, false, or -1 when not known (then fstat() says). */
static int add_rule(struct enumeration *enumeration, int fd, uint64_t access, int directory, const char *path,
                    const char **failed_path)
{
        int result;

        if (enumeration->rules >= enumeration->limit)
                return -E2BIG;
        result = directory < 0 ? dsh_landlock_ruleset_grant_access(enumeration->ruleset, fd, access)
                               : dsh_landlock_ruleset_add_rule(enumeration->ruleset, fd, access, directory);
        if (result < 0)
                return fail_at(path, result, failed_path);
        enumeration->rules++;
        return 0;
}

/*
 * Grants `name` beneath `directory_fd` whole; a symlink gets nothing, a name
 * gone since the listing is skipped.  `type` is the listing's d_type: it
 * spares the fstat() of each entry (the enumeration's cost is per entry).
 * An entry swapped since the listing can only get less: a directory now
 * listed as a file gets file rights (nothing beneath it lists), a file
 * listed as a directory fails the grant (EINVAL), a symlink swapped in gets
 * a rule no path resolution ever consults.
 */
static int grant_whole(struct enumeration *enumeration, int directory_fd, const char *name, unsigned char type,
                       const char *path, const char **failed_path)
{
        struct stat status;
        int directory = type == DT_DIR ? 1 : type == DT_UNKNOWN ? -1 : 0;
        int fd, result;

        if (type == DT_LNK)
                return 0;
        fd = openat(directory_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : fail_at(path, -errno, failed_path);
        if (directory < 0) {
                if (fstat(fd, &status) < 0) {
                        result = -errno;
                        close(fd);
                        return fail_at(path, result, failed_path);
                }
                if (S_ISLNK(status.st_mode)) {
                        close(fd);
                        return 0;
                }
                directory = S_ISDIR(status.st_mode);
        }
        result = add_rule(enumeration, fd, enumeration->access, directory, path, failed_path);
        close(fd);
        return result;
}

static int enumerate(struct enumeration *enumeration, int directory_fd, char *path, const char **failed_path);

/*
 * A directory on the way, entered.  Not a directory now: a symlink there is
 * a swap since the plan (refused), anything else holds no mask beneath it
 * and is granted whole.
 */
static int enter(struct enumeration *enumeration, int directory_fd, const char *name, char *path,
                 const char **failed_path)
{
        struct stat status;
        int fd = openat(directory_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int result;

        if (fd >= 0) {
                result = enumerate(enumeration, fd, path, failed_path);
                close(fd);
                return result;
        }
        if (errno == ENOENT)
                return 0;
        if (errno != ENOTDIR && errno != ELOOP)
                return fail_at(path, -errno, failed_path);
        if (fstatat(directory_fd, name, &status, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : fail_at(path, -errno, failed_path);
        if (S_ISLNK(status.st_mode))
                return fail_at(path, -ELOOP, failed_path);
        return grant_whole(enumeration, directory_fd, name, DT_UNKNOWN, path, failed_path);
}

/* Appends "/name" to `path` (PATH_MAX bytes); returns the old length to cut back to, or -ENAMETOOLONG. */
static int path_push(char *path, const char *name)
{
        size_t length = strlen(path);
        size_t needed = length + (length > 1 ? 1 : 0) + strlen(name) + 1;

        if (needed > PATH_MAX)
                return -ENAMETOOLONG;
        snprintf(path + length, PATH_MAX - length, "%s%s", length > 1 ? "/" : "", name);
        return (int) length;
}

static int visit_entry(struct enumeration *enumeration, int directory_fd, const struct dirent *entry, char *path,
                       const char **failed_path)
{
        const char *name = entry->d_name;
        int length = path_push(path, name);
        int result;

        if (length < 0)
                return fail_at(path, length, failed_path);
        if (vector_holds(enumeration->mask->masked, path))
                result = 0;  /* the mask: no rule, whatever it is */
        else if (on_the_way(enumeration->mask, path))
                result = enter(enumeration, directory_fd, name, path, failed_path);
        else
                result = grant_whole(enumeration, directory_fd, name, entry->d_type, path, failed_path);
        path[length] = '\0';
        return result;
}

/*
 * The directory `path` (open as `directory_fd`): READ_DIR beneath it, then
 * each entry.  -E2BIG names this directory: it is the one too large.
 */
static int enumerate(struct enumeration *enumeration, int directory_fd, char *path, const char **failed_path)
{
        DIR *directory;
        struct dirent *entry;
        int listing, result;

        result = add_rule(enumeration, directory_fd, enumeration->access & DSH_LANDLOCK_ACCESS_FS_READ_DIR, 1, path,
                          failed_path);
        if (result < 0)
                return result == -E2BIG ? fail_at(path, result, failed_path) : result;
        listing = openat(directory_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (listing < 0)
                return fail_at(path, -errno, failed_path);
        directory = fdopendir(listing);
        if (!directory) {
                result = -errno;
                close(listing);
                return fail_at(path, result, failed_path);
        }
        for (;;) {
                errno = 0;
                entry = readdir(directory);
                if (!entry) {
                        result = errno ? fail_at(path, -errno, failed_path) : 0;
                        break;
                }
                if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
                        continue;
                result = visit_entry(enumeration, directory_fd, entry, path, failed_path);
                if (result == -E2BIG && !*failure_path)
                        result = fail_at(path, result, failed_path);
                if (result < 0)
                        break;
        }
        closedir(directory);
        return result;
}

bool dsh_read_mask_path_well_formed(const char *path)
{
        const char *component = path;

        if (path[0] != '/' || strlen(path) >= PATH_MAX)
                return false;
        if (path[1] == '\0')
                return true;
        while (*component == '/') {
                const char *end = strchrnul(component + 1, '/');
                size_t length = (size_t) (end - component - 1);

                if (length == 0 || (length == 1 && component[1] == '.') ||
                    (length == 2 && component[1] == '.' && component[2] == '.'))
                        return false;
                component = end;
        }
        return true;
}

int dsh_read_mask_grant(dsh_landlock_ruleset *ruleset, uint64_t access, const dsh_read_mask *mask,
                        const char **failed_path)
{
        struct enumeration enumeration = { ruleset, access, mask, 0, DSH_READ_MASK_DEFAULT_RULE_LIMIT };
        char path[PATH_MAX] = "/";
        int root, result;

        failure_path[0] = '\0';
        if (mask && mask->rule_limit)
                enumeration.limit = mask->rule_limit;
        root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return fail_at("/", -errno, failed_path);
        if (!mask || ((!mask->masked || !*mask->masked) && (!mask->closed || !*mask->closed))) {
                static const dsh_read_mask nothing = { NULL, NULL, 0 };

                enumeration.mask = &nothing;
                result = add_rule(&enumeration, root, access, 1, "/", failed_path);
        } else if (vector_holds(mask->masked, "/")) {
                result = 0;  /* everything masked: nothing granted */
        } else {
                result = enumerate(&enumeration, root, path, failed_path);
        }
        close(root);
        return result < 0 ? result : (int) enumeration.rules;
}
