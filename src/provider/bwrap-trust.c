/* SPDX-License-Identifier: MIT */
/*
 * bwrap-trust: which bwrap binary the bwrap backend may run, and every
 * program a later call could start through it (the shield refuses a
 * writable root holding one).  The argument is in bwrap-trust.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "provider/backend.h"
#include "provider/bwrap-trust.h"
#include "shield/protections.h"

/* Where a distribution installs bwrap, in order of preference.  Root-owned
 * system directories: an unprivileged command cannot plant a binary there. */
static const char *const trusted_bwrap_paths[] = {
        "/usr/bin/bwrap",
        "/usr/local/bin/bwrap",
        "/bin/bwrap",
        NULL,
};

/* Owned by root and writable by nobody else: what no confined command can replace. */
static bool owned_by_root_only(const struct stat *status)
{
        return status->st_uid == 0 && !(status->st_mode & (S_IWGRP | S_IWOTH));
}

static bool ancestors_owned_by_root_only(const char *canonical)
{
        char directory[PATH_MAX];
        struct stat status;
        char *slash;

        if (strlen(canonical) >= sizeof(directory))
                return false;
        strcpy(directory, canonical);
        while ((slash = strrchr(directory, '/'))) {
                if (slash == directory)
                        return stat("/", &status) == 0 && owned_by_root_only(&status);
                *slash = '\0';
                if (stat(directory, &status) < 0 || !owned_by_root_only(&status))
                        return false;
        }
        return false;
}

/*
 * The runner must be a file that no confined command could have written:
 * the canonical binary and every directory above it are owned by root and
 * writable by root alone (so /tmp, ~/.local/bin or a checkout never
 * qualify).  Otherwise a workspace-write call covering that directory could
 * replace it, and the next call — read-only or not — would run the
 * replacement unconfined.  Returns the canonical path, or NULL.
 */
char *dsh_bwrap_trusted_binary(const char *path)
{
        char *canonical = realpath(path, NULL);
        struct stat status;

        if (!canonical)
                return NULL;
        if (stat(canonical, &status) == 0 && S_ISREG(status.st_mode) && owned_by_root_only(&status) &&
            access(canonical, X_OK) == 0 && ancestors_owned_by_root_only(canonical))
                return canonical;
        free(canonical);
        return NULL;
}

/*
 * PATH is not searched: ownership alone cannot tell a system directory from
 * root's own ~/.local/bin (root owns both), and a bwrap planted there by a
 * confined command would become the runner of every later call.  The fixed
 * locations are refused as writable roots by every backend (shield.c).
 */
char *dsh_bwrap_find(const dsh_provider *provider, char **reason)
{
        *reason = NULL;
        if (provider->bwrap_path) {
                /* Named explicitly by the caller (the harness's own environment): its word is taken. */
                if (access(provider->bwrap_path, X_OK) == 0)
                        return strdup(provider->bwrap_path);
                if (asprintf(reason, "the configured bwrap %s is not executable: %s", provider->bwrap_path,
                             strerror(errno)) < 0)
                        *reason = NULL;
                return NULL;
        }
        for (const char *const *path = trusted_bwrap_paths; *path; path++) {
                char *found = dsh_bwrap_trusted_binary(*path);

                if (found)
                        return found;
        }
        *reason = strdup("bubblewrap is not installed where it can be trusted (no root-owned bwrap in /usr/bin, "
                         "/usr/local/bin or /bin): install the bubblewrap package, or name the binary with "
                         "$DSH_SANDBOX_BWRAP");
        return NULL;
}

/* bwrap wherever the lookup could find it (or the configured one), and the last step it runs inside. */
char **dsh_bwrap_runner_candidates(const dsh_provider *provider)
{
        dsh_autofree char *exec_helper =
                dsh_protections_launcher_path(&provider->protections, DSH_BWRAP_EXEC_HELPER_NAME);
        char **candidates = dsh_strv_copy((char *const *) trusted_bwrap_paths);

        if (candidates && provider->bwrap_path && dsh_strv_append(&candidates, provider->bwrap_path) < 0)
                goto out_of_memory;
        if (candidates && exec_helper && dsh_strv_append(&candidates, exec_helper) < 0)
                goto out_of_memory;
        return candidates;
out_of_memory:
        dsh_strv_free(candidates);
        return NULL;
}
