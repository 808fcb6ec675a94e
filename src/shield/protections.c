/* SPDX-License-Identifier: MIT */
/* The protections: see protections.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"
#include "config.h"
#include "dsh-sandbox/sandbox.h"
#include "shield/protections.h"

void dsh_protections_clear(dsh_protections *protections)
{
        if (!protections)
                return;
        dsh_strv_free(protections->paths);
        dsh_strv_free(protections->executables);
        dsh_strv_free(protections->subpaths);
        free(protections->launcher_directory);
        dsh_strv_free(protections->hidden);
        dsh_strv_free(protections->masks);
        dsh_strv_free(protections->environment_deny);
        dsh_strv_free(protections->environment_allow);
        *protections = (dsh_protections) DSH_PROTECTIONS_INIT;
}

int dsh_protections_set_launcher_directory(dsh_protections *protections, const char *landlock_run_path)
{
        const char *slash = strrchr(landlock_run_path, '/');
        char *directory = slash ? strndup(landlock_run_path, (size_t) (slash - landlock_run_path)) : NULL;

        if (slash && !directory)
                return -ENOMEM;
        free(protections->launcher_directory);
        protections->launcher_directory = directory;
        return 0;
}

/*
 * The launcher `name` beside landlock-run when it is there (a build tree, a
 * relocated install, a launcher directory the caller named), else the
 * installed copy in the libexec directory: an installed landlock-run is a
 * user command in the bin directory, and the helpers beside it would not be.
 * Both places are as trusted as landlock-run's own directory and the install
 * location, and neither is ever searched for on PATH; a command could switch
 * one for the other only by changing landlock-run's directory, which the
 * shield refuses as it refuses landlock-run itself.
 */
char *dsh_protections_launcher_path(const dsh_protections *protections, const char *name)
{
        char *path = NULL;

        if (protections->launcher_directory &&
            asprintf(&path, "%s/%s", protections->launcher_directory, name) < 0)
                return NULL;
        if (path && access(path, F_OK) == 0)
                return path;
        free(path);
        if (asprintf(&path, "%s/%s", DSH_SANDBOX_LIBEXECDIR, name) < 0)
                return NULL;
        return path;
}

/*
 * Whether what is missing of `path` may be made below its nearest existing
 * ancestor: one this user or root owns, that nobody else can write in (or
 * sticky), as the remote requires of the places it keeps its sockets
 * (src/remote/remote-ssh.c).  Elsewhere — an XDG_RUNTIME_DIR of another
 * user, kept across sudo — the remote keeps no master, so there is nothing
 * to hide, and nothing of ours is left in another user's directory.
 */
static bool may_create_below_ancestor(const char *path)
{
        char ancestor[PATH_MAX];
        struct stat status;
        char *slash;

        if (snprintf(ancestor, sizeof(ancestor), "%s", path) >= (int) sizeof(ancestor))
                return false;
        while (lstat(ancestor, &status) < 0) {
                slash = strrchr(ancestor, '/');
                if (errno != ENOENT || !slash || slash == ancestor)
                        return false;
                *slash = '\0';
        }
        return S_ISDIR(status.st_mode) && (status.st_uid == geteuid() || status.st_uid == 0) &&
               (!(status.st_mode & (S_IWGRP | S_IWOTH)) || (status.st_mode & S_ISVTX));
}

/*
 * A hidden directory that does not exist yet is made now (0700, as the
 * remote makes it), so that the tmpfs covers it for the whole call: a
 * master started meanwhile is hidden too.  One that may not or cannot be
 * made cannot hold a master's socket either (the remote makes it as this
 * same user, under the same rule): it is then left alone.
 */
void dsh_protections_make_hidden(const dsh_protections *protections)
{
        for (char *const *path = protections->hidden; path && *path; path++)
                if (access(*path, F_OK) < 0 && errno == ENOENT && may_create_below_ancestor(*path))
                        (void) dsh_path_make_directories(*path, 0700);
}
