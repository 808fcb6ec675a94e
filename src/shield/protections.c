/* SPDX-License-Identifier: MIT */
/* The protections: see protections.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
