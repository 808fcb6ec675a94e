/* SPDX-License-Identifier: MIT */
/* Path identity: canonical spelling of paths that may not exist yet, and containment. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"

static int append_component(char **path, const char *component, size_t length)
{
        size_t current = strlen(*path);
        bool at_root = current == 1;
        char *grown = realloc(*path, current + length + 2);

        if (!grown)
                return -ENOMEM;
        if (!at_root)
                grown[current++] = '/';
        memcpy(grown + current, component, length);
        grown[current + length] = '\0';
        *path = grown;
        return 0;
}

static void remove_last_component(char *path)
{
        char *slash = strrchr(path, '/');

        if (slash == path)
                path[1] = '\0';
        else if (slash)
                *slash = '\0';
}

/* Skips the slashes at *cursor; the length of the component that follows (0: none left). */
static size_t next_component(const char **cursor)
{
        while (**cursor == '/')
                (*cursor)++;
        return strcspn(*cursor, "/");
}

char *dsh_path_from_cwd(const char *path)
{
        dsh_autofree char *cwd = NULL;
        char *absolute = NULL;

        if (path[0] == '/')
                return strdup(path);
        cwd = getcwd(NULL, 0);
        if (!cwd)
                return NULL;
        if (asprintf(&absolute, "%s/%s", cwd, path) < 0) {
                errno = ENOMEM;
                return NULL;
        }
        return absolute;
}

/*
 * The canonical spelling of `candidate`, one existing component appended to
 * a canonical prefix: the prefix holds no symlink, so when the component
 * itself is none, `candidate` is already canonical (what realpath would
 * return, with one lstat instead of realpath's readlink of every component
 * of the prefix again).  A symlink is resolved with realpath.  Returns 1
 * (*real_out set, caller frees; NULL: candidate itself), 0 when the
 * component does not exist (ENOENT, ENOTDIR), -1 with errno otherwise.
 */
static int resolve_appended(const char *candidate, char **real_out, bool *met_link)
{
        struct stat status;

        *real_out = NULL;
        if (lstat(candidate, &status) < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
        if (!S_ISLNK(status.st_mode))
                return 1;
        *met_link = true;
        *real_out = realpath(candidate, NULL);
        if (*real_out)
                return 1;
        return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
}

/*
 * Filesystem semantics first, lexical normalization after: each component
 * that exists is resolved (so `link/..` goes where chdir goes, not to the
 * lexical parent of `link`); only once a component does not exist is the
 * rest normalized lexically, since a missing directory has no identity to
 * resolve.  `..` after an existing prefix is its real parent: the prefix is
 * canonical, so it holds no symlink to walk back through.  An absolute path
 * is walked a component at a time (one lstat each, realpath only at a
 * symlink); a relative one, resolved against the cwd, must exist.
 */
char *dsh_path_canonical(const char *path)
{
        bool met_link;

        return dsh_path_canonical_noting_links(path, &met_link);
}

char *dsh_path_canonical_noting_links(const char *path, bool *met_link)
{
        char *resolved;
        size_t lexical_depth = 0, length;
        const char *cursor;

        *met_link = path[0] != '/';   /* realpath's walk: not known, so taken as having met one */
        if (path[0] != '/') {
                resolved = realpath(path, NULL);
                if (!resolved && errno != ENOMEM)
                        errno = EINVAL;
                return resolved;
        }
        resolved = strdup("/");
        if (!resolved)
                return NULL;
        for (cursor = path; (length = next_component(&cursor)) > 0; cursor += length) {
                if (length == 1 && cursor[0] == '.') {
                        /* nothing */
                } else if (length == 2 && cursor[0] == '.' && cursor[1] == '.') {
                        remove_last_component(resolved);
                        if (lexical_depth > 0)
                                lexical_depth--;
                } else if (lexical_depth > 0) {
                        if (append_component(&resolved, cursor, length) < 0)
                                goto out_of_memory;
                        lexical_depth++;
                } else {
                        char *real = NULL;
                        int found;

                        if (append_component(&resolved, cursor, length) < 0)
                                goto out_of_memory;
                        found = resolve_appended(resolved, &real, met_link);
                        if (found < 0) {
                                int saved_errno = errno;

                                free(resolved);
                                errno = saved_errno;
                                return NULL;
                        }
                        if (found == 0) {
                                lexical_depth = 1;
                        } else if (real) {
                                free(resolved);
                                resolved = real;
                        }
                }
        }
        return resolved;
out_of_memory:
        free(resolved);
        errno = ENOMEM;
        return NULL;
}

bool dsh_path_is_beneath(const char *path, const char *directory)
{
        size_t length = strlen(directory);

        if (strcmp(directory, "/") == 0)
                return path[0] == '/';
        return strncmp(path, directory, length) == 0 && (path[length] == '/' || path[length] == '\0');
}

char *dsh_path_normalize_lexically(const char *path)
{
        char *normalized;
        const char *cursor;
        size_t length;

        if (path[0] != '/') {
                errno = EINVAL;
                return NULL;
        }
        normalized = strdup("/");
        if (!normalized)
                return NULL;
        for (cursor = path; (length = next_component(&cursor)) > 0; cursor += length) {
                if (length == 2 && cursor[0] == '.' && cursor[1] == '.') {
                        remove_last_component(normalized);
                } else if (!(length == 1 && cursor[0] == '.') && append_component(&normalized, cursor, length) < 0) {
                        free(normalized);
                        errno = ENOMEM;
                        return NULL;
                }
        }
        return normalized;
}

int dsh_path_make_directories(const char *path, mode_t mode)
{
        char partial[PATH_MAX];
        size_t length = strlen(path);

        if (length == 0 || length >= sizeof(partial))
                return -ENAMETOOLONG;
        memcpy(partial, path, length + 1);
        for (char *slash = strchr(partial + 1, '/');; slash = strchr(slash + 1, '/')) {
                if (slash)
                        *slash = '\0';
                if (mkdir(partial, mode) < 0 && errno != EEXIST)
                        return -errno;
                if (!slash)
                        break;
                *slash = '/';
        }
        {
                struct stat status;

                if (stat(path, &status) < 0)
                        return -errno;
                return S_ISDIR(status.st_mode) ? 0 : -ENOTDIR;
        }
}

bool dsh_path_has_no_symlinks(const char *path)
{
        char *canonical = realpath(path, NULL);
        char *spelled = dsh_path_normalize_lexically(path);
        bool same = canonical && spelled && strcmp(canonical, spelled) == 0;

        free(canonical);
        free(spelled);
        return same;
}

int dsh_path_find_symlink(const char *path, char **link_out)
{
        dsh_autofree char *prefix = strdup(path);
        size_t end = 1;

        *link_out = NULL;
        if (!prefix)
                return -ENOMEM;
        if (path[0] != '/')
                return -EINVAL;
        while (path[end]) {
                struct stat status;

                end += strcspn(path + end, "/");
                prefix[end] = '\0';
                if (lstat(prefix, &status) < 0)
                        return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
                if (S_ISLNK(status.st_mode)) {
                        *link_out = dsh_steal_pointer(&prefix);
                        return 1;
                }
                prefix[end] = path[end];
                end += strspn(path + end, "/");
        }
        return 0;
}
