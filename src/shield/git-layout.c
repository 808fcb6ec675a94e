/* SPDX-License-Identifier: MIT */
/* Git-layout discovery: see git-layout.h for what it finds and why it trusts nothing it reads. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dsh-sandbox/sandbox.h"
#include "base/path.h"
#include "shield/git-layout.h"

/*
 * Up to `size` - 1 bytes of small file `path`, NUL-terminated, never
 * following a symlink at the last component nor blocking on a FIFO: these
 * are files a command of an earlier call may have written.  Returns the
 * length read, or -1.
 */
static ssize_t read_small_file(const char *path, char *buffer, size_t size)
{
        ssize_t length;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

        if (fd < 0)
                return -1;
        length = read(fd, buffer, size - 1);
        close(fd);
        if (length < 0)
                return -1;
        buffer[length] = '\0';
        return length;
}

/* The first line of small file `path` (see read_small_file()), new string; NULL when absent or empty. */
static char *read_first_line(const char *path)
{
        char buffer[PATH_MAX + 16];

        if (read_small_file(path, buffer, sizeof(buffer)) <= 0)
                return NULL;
        buffer[strcspn(buffer, "\r\n")] = '\0';
        return strdup(buffer);
}

/* `text` taken relative to `directory` unless absolute, canonical; new string or NULL. */
static char *canonical_relative_to(const char *directory, const char *text)
{
        dsh_autofree char *path = NULL;

        if (text[0] == '/')
                return dsh_path_canonical(text);
        if (asprintf(&path, "%s/%s", directory, text) < 0)
                return NULL;
        return dsh_path_canonical(path);
}

/* The directory a ".git" file names ("gitdir: X", X relative to the file's directory); new string or NULL. */
char *dsh_git_layout_gitdir_of_file(const char *directory, const char *dotgit)
{
        dsh_autofree char *line = read_first_line(dotgit);

        if (!line || strncmp(line, "gitdir: ", 8) != 0)
                return NULL;
        return canonical_relative_to(directory, line + 8);
}

/* The common directory of git directory `gitdir` (its "commondir" file), or NULL when it is its own. */
char *dsh_git_layout_commondir(const char *gitdir)
{
        dsh_autofree char *file = NULL;
        dsh_autofree char *line = NULL;

        if (asprintf(&file, "%s/commondir", gitdir) < 0)
                return NULL;
        line = read_first_line(file);
        return line ? canonical_relative_to(gitdir, line) : NULL;
}

/* A submodule name as git stores its git directory beneath modules/: relative, real components only. */
static bool submodule_name_is_plain(const char *name, size_t length)
{
        const char *component = name, *end = name + length;

        if (length == 0 || name[0] == '/')
                return false;
        while (component < end) {
                const char *slash = memchr(component, '/', (size_t) (end - component));
                size_t part = (size_t) ((slash ? slash : end) - component);

                if (part == 0 || (part == 1 && component[0] == '.') ||
                    (part == 2 && component[0] == '.' && component[1] == '.'))
                        return false;
                component += part + 1;
        }
        return true;
}

/*
 * The git directories of the submodules of `gitdir`: modules/NAME for each
 * [submodule "NAME"] its config declares.  Found from the config, which is
 * held back, not by listing modules/, which the command can fill with
 * thousands of decoys to push the real ones past any bound.
 */
int dsh_git_layout_submodule_directories(const char *gitdir, char ***directories_out)
{
        dsh_autofree char *config = NULL;
        char buffer[65536];
        const char *cursor;

        *directories_out = NULL;
        if (asprintf(&config, "%s/config", gitdir) < 0)
                return -ENOMEM;
        if (read_small_file(config, buffer, sizeof(buffer)) <= 0)
                return 0;
        for (cursor = buffer; (cursor = strstr(cursor, "[submodule \"")); ) {
                const char *name = cursor + strlen("[submodule \"");
                const char *quote = strchr(name, '"');
                dsh_autofree char *module = NULL;
                struct stat status;

                cursor = name;
                if (!quote || !submodule_name_is_plain(name, (size_t) (quote - name)))
                        continue;
                if (asprintf(&module, "%s/modules/%.*s", gitdir, (int) (quote - name), name) < 0 ||
                    (lstat(module, &status) == 0 && S_ISDIR(status.st_mode) &&
                     dsh_strv_append(directories_out, module) < 0)) {
                        dsh_strv_free(*directories_out);
                        *directories_out = NULL;
                        return -ENOMEM;
                }
        }
        return 0;
}

/*
 * True when the repository of git directory `gitdir` (or of its common
 * directory) sets extensions.worktreeConfig: then git reads
 * config.worktree.  A plain text search of the config file, erring towards
 * "set" (a false "set" only reports a missing file as a gap).
 */
bool dsh_git_layout_worktree_config_enabled(const char *gitdir)
{
        dsh_autofree char *common = NULL;
        dsh_autofree char *config = NULL;
        char buffer[65536];

        common = dsh_git_layout_commondir(gitdir);
        if (asprintf(&config, "%s/config", common ? common : gitdir) < 0)
                return true;
        return read_small_file(config, buffer, sizeof(buffer)) > 0 && strcasestr(buffer, "worktreeconfig") != NULL;
}



bool dsh_git_layout_is_common_directory(const char *directory)
{
        static const char *const entries[] = { "HEAD", "objects", "refs", NULL };

        for (const char *const *entry = entries; *entry; entry++) {
                dsh_autofree char *path = NULL;
                struct stat status;

                if (asprintf(&path, "%s/%s", directory, *entry) < 0 || lstat(path, &status) < 0)
                        return false;
        }
        return true;
}

/*
 * The common directory a linked worktree at `root` really belongs to, when
 * everything agrees the way `git worktree add` leaves it: `gitdir` is
 * COMMON/worktrees/NAME, its `commondir` leads to COMMON, its own `gitdir`
 * file points back at ROOT/.git, and COMMON is a git directory.  Anything
 * else is not made writable: `.git`, `commondir` and `gitdir` are files a
 * command of an earlier call may have written, and a bind that trusted them
 * would make any directory on the host writable ("gitdir: /").  Returns the
 * canonical common directory (caller frees), or NULL.
 */
char *dsh_git_layout_worktree_common(const char *dotgit, const char *gitdir)
{
        dsh_autofree char *common = dsh_git_layout_commondir(gitdir);
        dsh_autofree char *back_file = NULL;
        dsh_autofree char *back = NULL;
        dsh_autofree char *back_canonical = NULL;
        dsh_autofree char *dotgit_canonical = dsh_path_canonical(dotgit);
        dsh_autofree char *expected_parent = NULL;
        const char *slash = strrchr(gitdir, '/');

        if (!common || !slash || !dotgit_canonical || asprintf(&expected_parent, "%s/worktrees", common) < 0)
                return NULL;
        if ((size_t) (slash - gitdir) != strlen(expected_parent) ||
            strncmp(gitdir, expected_parent, (size_t) (slash - gitdir)) != 0 || !slash[1])
                return NULL;
        if (asprintf(&back_file, "%s/gitdir", gitdir) < 0)
                return NULL;
        back = read_first_line(back_file);
        back_canonical = back && back[0] == '/' ? dsh_path_canonical(back) : NULL;
        if (!back_canonical || strcmp(back_canonical, dotgit_canonical) != 0 ||
            !dsh_git_layout_is_common_directory(common))
                return NULL;
        return dsh_steal_pointer(&common);
}
